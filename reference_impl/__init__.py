"""Reference implementations of the four file-tool contracts in ``shared/seeds/`` and of two public ones
(Anthropic's text editor tool, Codex's apply_patch).

Each contract lives in its own module and reads like the seed it implements. The package knows
nothing of the harness: it is usable on its own, and the harness drives it in-process, over the
cmd: JSON-lines protocol (``python -m reference_impl.serve``) and over MCP.

Every module exposes the same small surface:

``TOOLS``
    The tool names of the profile, in the seed's order.
``Session(workspace, options=None)``
    One agent session rooted at ``workspace`` (an absolute directory that already exists). All
    per-session state (read set, mtimes, version counter) lives on the instance and starts empty.
``Session.call(tool, args) -> dict``
    Runs one tool call and returns its normal form, exactly what the cmd: protocol carries:
    ``{"output": <JSON value>}`` when the tool succeeded or returned a payload, or
    ``{"error": {"code": <int | str | None>, "message": str}}`` when it failed; either may also
    carry ``"events": [...]``. An unknown tool raises :class:`UnknownTool`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"

#: profile name -> module name: the seeds in their order, then the public contracts.
PROFILES: dict[str, str] = {
    "claude-code": "reference_impl.claude_code",
    "aptix-tul-004": "reference_impl.aptix_tul_004",
    "mcp-write-text-file": "reference_impl.mcp_write_text_file",
    "gemini-safe-patch": "reference_impl.gemini_safe_patch",
    "anthropic-text-editor": "reference_impl.anthropic_text_editor",
    "codex-apply-patch": "reference_impl.codex_apply_patch",
}


class UnknownTool(LookupError):
    """The profile has no tool of that name."""


def profile_module(profile: str) -> ModuleType:
    """Returns the module implementing ``profile``; raises KeyError for an unknown profile."""
    return importlib.import_module(PROFILES[profile])


def open_session(profile: str, workspace: str, options: dict | None = None):
    """Opens a new session of ``profile`` on ``workspace``."""
    return profile_module(profile).Session(workspace, options or {})
