"""Targets by name: ``reference``, ``cmd:<command line>``, ``mcp:<command line>``, ``claude-code[:options]``,
``acp:[options] <command line>``,
``gemini-cli[:options]`` (a cmd: command line: gemini-cli's real tools behind the project's adapter)."""

from __future__ import annotations

from typing import Any

from harness.targets.base import Target

TARGET_HELP = "reference | cmd:<command line> | mcp:<command line> | mcp+http://<url> | claude-code[:opt=val,...] | acp:[opt=val ...] <command line>|claude-code | gemini-cli[:node=PATH]"


def make_target(spec: str, **options: Any) -> Target:
    """Returns the target named by ``spec``; raises ValueError for an unknown kind.

    ``options`` carries run-wide settings (e.g. ``timeout``, ``run_as``); a target ignores those
    that do not concern it.
    """
    if spec == "reference":
        from harness.targets.reference import ReferenceTarget
        return ReferenceTarget(spec, **options)
    if spec.startswith("cmd:"):
        from harness.targets.cmd.target import CmdTarget
        return CmdTarget(spec, **options)
    if spec.startswith(("mcp:", "mcp+http://", "mcp+https://")):
        from harness.targets.mcp.target import McpTarget
        return McpTarget(spec, **options)
    if spec == "claude-code" or spec.startswith("claude-code:"):
        from harness.targets.claude_code import ClaudeCodeTarget
        return ClaudeCodeTarget(spec, **options)
    if spec.startswith("acp:"):
        from harness.targets.acp.target import AcpTarget, parse_spec
        if parse_spec(spec)[1] == ["claude-code"]:
            from harness.targets.acp.claude_code import ClaudeCodeAcpTarget
            return ClaudeCodeAcpTarget(spec, **options)
        return AcpTarget(spec, **options)
    if spec == "gemini-cli" or spec.startswith("gemini-cli:"):
        from harness.targets.gemini_cli import GeminiCliTarget
        return GeminiCliTarget(spec, **options)
    raise ValueError(f"unknown target {spec!r}; expected {TARGET_HELP}")
