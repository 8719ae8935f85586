"""Target kinds by name: how a ``--target`` spec is recognised, and which factory makes its target.

:data:`KINDS` is the one table. A new target kind is one module (its :class:`~harness.targets.base.Target`
subclass) plus one entry here: its name, how a spec of it is written (the help text is made from
these), how a spec is recognised, and ``module:factory``, imported only when such a target is made
(some kinds bring slow or optional modules). The first kind whose ``matches`` accepts a spec makes it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.targets.base import Target


@dataclass(frozen=True)
class Kind:
    """One kind of target."""

    name: str
    #: How a spec of this kind is written, as the help text shows it.
    syntax: str
    #: Whether ``spec`` names a target of this kind.
    matches: Callable[[str], bool]
    #: ``module:attribute`` of the factory, called as ``factory(spec, **options)``.
    factory: str

    def make(self, spec: str, **options: Any) -> Target:
        """Returns the target ``spec`` names (``options``: run-wide settings, each target takes those it needs)."""
        module, _, attribute = self.factory.partition(":")
        made: Target = getattr(importlib.import_module(module), attribute)(spec, **options)
        return made


def _named(name: str) -> Callable[[str], bool]:
    """Returns the test for a kind written ``name`` or ``name:<options>``."""
    return lambda spec: spec == name or spec.startswith(name + ":")


def _prefixed(*prefixes: str) -> Callable[[str], bool]:
    return lambda spec: spec.startswith(prefixes)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("reference", "reference", lambda spec: spec == "reference", "harness.targets.reference:ReferenceTarget"),
    Kind("cmd", "cmd:<command line>", _prefixed("cmd:"), "harness.targets.cmd.target:CmdTarget"),
    Kind("mcp", "mcp:<command line> | mcp+http://<url>", _prefixed("mcp:", "mcp+http://", "mcp+https://"),
         "harness.targets.mcp.target:McpTarget"),
    Kind("claude-code", "claude-code[:opt=val,...]", _named("claude-code"), "harness.targets.claude_code:ClaudeCodeTarget"),
    Kind("acp", "acp:[opt=val ...] <command line>|claude-code", _prefixed("acp:"), "harness.targets.acp:make_target"),
    Kind("gemini-cli", "gemini-cli[:node=PATH]", _named("gemini-cli"), "harness.targets.gemini_cli:GeminiCliTarget"),
)}

#: Every kind's syntax, for ``--target``'s help and the error on an unknown spec.
TARGET_HELP = " | ".join(kind.syntax for kind in KINDS.values())


def kind_of(spec: str) -> Kind:
    """Returns the kind of target ``spec`` names; ValueError for an unknown kind."""
    for kind in KINDS.values():
        if kind.matches(spec):
            return kind
    raise ValueError(f"unknown target {spec!r}; expected {TARGET_HELP}")


def make_target(spec: str, **options: Any) -> Target:
    """Returns the target named by ``spec``; raises ValueError for an unknown kind.

    ``options`` carries run-wide settings (e.g. ``timeout``, ``run_as``); a target ignores those
    that do not concern it.
    """
    return kind_of(spec).make(spec, **options)
