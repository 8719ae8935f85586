"""Tiny purpose-built targets for testing the harness itself.

Example: ``ScriptedTarget({"Read": CallResult(output="x")})`` answers every Read with "x";
``ScriptedTarget(crash_on="Edit")`` breaks like a crashing candidate on Edit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.targets.base import CallResult, Session, Target, TargetError, TargetInfo

Answer = CallResult | Callable[[Path, dict[str, Any]], CallResult]


class ScriptedSession(Session):
    """Answers each tool with a canned result, or a function of (workspace, args)."""

    def __init__(self, target: ScriptedTarget, workspace: Path) -> None:
        self.target = target
        self.workspace = workspace

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        self.target.calls.append((tool, args))
        if tool == self.target.crash_on:
            raise TargetError(f"candidate crashed in {tool}", detail="stderr: boom")
        answer = self.target.answers.get(tool, CallResult(output="ok"))
        return answer(self.workspace, args) if callable(answer) else answer

    def close(self) -> None:
        self.target.closed += 1


class ScriptedTarget(Target):
    """A target whose tools answer from a script; records the calls it got."""

    def __init__(self, answers: dict[str, Answer] | None = None, *, crash_on: str | None = None,
                 profiles: tuple[str, ...] = ("claude-code", "aptix-tul-004", "mcp-write-text-file",
                                              "gemini-safe-patch"),
                 realises: frozenset[str] = frozenset(), in_process: bool = False) -> None:
        super().__init__("scripted")
        self.answers = answers or {}
        self.crash_on = crash_on
        self.profiles = profiles
        self.realises = realises
        self.in_process = in_process
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.workspaces: list[Path] = []
        self.closed = 0

    def start(self) -> TargetInfo:
        return TargetInfo("scripted", "1", self.profiles)

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        self.workspaces.append(workspace)
        return ScriptedSession(self, workspace)


def read_scenario(scenario_id: str, *outputs: str) -> str:
    """Returns the YAML of a claude-code scenario that reads ``a.txt`` (``x`` and a newline): one Read
    per expected output (a YAML value, such as ``'"     1→x"'``), or one Read expecting nothing."""
    reads = "".join('  - tool: Read\n    args: {file_path: "${workspace}/a.txt"}\n'
                    + (f"    expect:\n      output: {output}\n" if output is not None else "")
                    for output in (outputs or (None,)))
    return (f"id: {scenario_id}\nprofile: claude-code\ntitle: t\nsource: test\n"
            'given:\n  files:\n    a.txt: "x\\n"\nsteps:\n' + reads)


FAULT_SCENARIO = """\
id: mcp-write-text-file/faults/{name}
profile: mcp-write-text-file
title: t
source: test
requires: [{requires}]
given:
{given}
steps:
  - tool: write_text_file
    args: {{path: "${{workspace}}/a.txt", content: "x"}}
"""


def fault_scenario(scenario_from: Any, name: str, requires: str, given: str) -> Any:
    """Returns a scenario requiring ``requires`` with ``given`` (YAML lines, indented by two), whose
    one step writes ``a.txt`` through ``write_text_file``."""
    return scenario_from(FAULT_SCENARIO.format(name=name, requires=requires, given=given), name=f"{name}.yaml")
