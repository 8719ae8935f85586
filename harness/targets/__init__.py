"""Targets by name: ``reference``, ``cmd:<command line>``, ``mcp:<command line>``, ``claude-code[:options]``,
``acp:[options] <command line>``,
``gemini-cli[:options]`` (a cmd: command line: gemini-cli's real tools behind the project's adapter)."""

from __future__ import annotations

from harness.targets.base import Target
from harness.targets.options import TargetOptions, refusal

TARGET_HELP = "reference | cmd:<command line> | mcp:<command line> | mcp+http://<url> | claude-code[:opt=val,...] | acp:[opt=val ...] <command line>|claude-code | gemini-cli[:node=PATH] | codex|opencode|kilo|pi|qwen-code[:cli=PATH,timeout=S]"


def target_kind(spec: str) -> type[Target]:
    """Returns the class of the target named by ``spec``; raises ValueError for an unknown kind."""
    if spec == "reference":
        from harness.targets.reference import ReferenceTarget
        return ReferenceTarget
    if spec.startswith("cmd:"):
        from harness.targets.cmd.target import CmdTarget
        return CmdTarget
    if spec.startswith(("mcp:", "mcp+http://", "mcp+https://")):
        from harness.targets.mcp.target import McpTarget
        return McpTarget
    if spec == "claude-code" or spec.startswith("claude-code:"):
        from harness.targets.claude_code import ClaudeCodeTarget
        return ClaudeCodeTarget
    if spec.startswith("acp:"):
        from harness.targets.acp.target import AcpTarget, parse_spec
        if parse_spec(spec)[1] == ["claude-code"]:
            from harness.targets.acp.claude_code import ClaudeCodeAcpTarget
            return ClaudeCodeAcpTarget
        return AcpTarget
    if spec == "gemini-cli" or spec.startswith("gemini-cli:"):
        from harness.targets.gemini_cli import GeminiCliTarget
        return GeminiCliTarget
    from harness.targets.agents import agent_target_class, is_agent_spec
    if is_agent_spec(spec):
        return agent_target_class(spec)
    raise ValueError(f"unknown target {spec!r}; expected {TARGET_HELP}")


def make_target(spec: str, options: TargetOptions | None = None) -> Target:
    """Returns the target named by ``spec``, built with the run-wide ``options``.

    Raises ValueError for an unknown kind, a bad binding, or isolation the kind cannot apply
    (``--sandbox``/``--run-as`` on a kind that does not honour them: one line saying so).
    """
    options = options or TargetOptions()
    kind = target_kind(spec)
    reason = refusal(_kind_name(spec), kind.honours, options)
    if reason is not None:
        raise ValueError(reason)
    return kind.from_options(spec, options)


def _kind_name(spec: str) -> str:
    """Returns the kind as a spec spells it: ``mcp:``, ``acp:``, ``claude-code``, ``reference``."""
    if spec.startswith("mcp+"):
        return "mcp:"
    for prefix in ("cmd:", "mcp:", "acp:"):
        if spec.startswith(prefix):
            return prefix
    return spec.partition(":")[0]
