"""The ``acp:`` target: an agent driven over the Agent Client Protocol, the harness as its client."""

from __future__ import annotations

from harness.targets.base import Target


def target_class(spec: str) -> type[Target]:
    """Returns the class of the ``acp:`` target of ``spec``: the Claude Code agent's own for ``acp:... claude-code``."""
    from harness.targets.acp.target import AcpTarget, parse_spec
    if parse_spec(spec)[1] == ["claude-code"]:
        from harness.targets.acp.claude_code import ClaudeCodeAcpTarget
        return ClaudeCodeAcpTarget
    return AcpTarget
