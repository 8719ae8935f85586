"""The ``acp:`` target: an agent driven over the Agent Client Protocol, the harness as its client."""

from __future__ import annotations

from typing import Any

from harness.targets.base import Target


def make_target(spec: str, **options: Any) -> Target:
    """Returns the ``acp:`` target of ``spec``: the Claude Code agent's own target for ``acp:... claude-code``."""
    from harness.targets.acp.target import AcpTarget, parse_spec
    if parse_spec(spec)[1] == ["claude-code"]:
        from harness.targets.acp.claude_code import ClaudeCodeAcpTarget
        return ClaudeCodeAcpTarget(spec, **options)
    return AcpTarget(spec, **options)
