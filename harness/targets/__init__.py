"""Targets by name: ``reference``, ``cmd:<command line>``, ``mcp:<command line>``, ``claude-code[:options]``,
``acp:[options] <command line>``,
``gemini-cli[:options]`` (a cmd: command line: gemini-cli's real tools behind the project's adapter).

The kinds and their factories are one table, harness/targets/registry.py."""

from harness.targets.registry import KINDS, TARGET_HELP, make_target, target_kind

__all__ = ["KINDS", "TARGET_HELP", "make_target", "target_kind"]
