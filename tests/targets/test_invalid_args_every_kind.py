"""A step whose ``invalid_args: true`` says its arguments break the tool's schema on purpose is sent
through a binding on every kind of target, and the tool's answer is recorded: never blamed on the
binding (an ``error`` verdict naming it). The catalog's own such steps (seed 003: a missing
``content``, a ``content`` or ``path`` that is not a string) run through the reference served as a
cmd: adapter, an MCP server and an ACP agent, each behind a binding that builds every argument. (gemini-cli is a cmd: command line, and an agent
target checks what a binding builds as the acp: target does; claude-code takes no binding.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.options import TargetOptions

#: A binding that maps every argument itself (so the targets check what it builds), renaming nothing.
BINDING = """\
binding: 1
profile: mcp-write-text-file
tools:
  write_text_file:
    tool: write_text_file
    args: {path: path, content: content}
"""

KINDS = {
    "cmd": "cmd:python -m reference_impl.serve",
    "mcp": "mcp:python -m reference_impl.mcp_server",
    "acp": "acp:python -m reference_impl.acp_agent",
}


@pytest.fixture(scope="module")
def deliberate():
    found = [s for s in catalog.load().scenarios if s.profile == "mcp-write-text-file"
             and any(getattr(step, "invalid_args", False) for step in s.calls)]
    assert len(found) >= 3, [s.id for s in found]
    return found


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client (and the ACP package) is imported already
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_step_broken_on_purpose_is_sent_and_its_answer_recorded_on_every_kind(kind, deliberate, tmp_path: Path) -> None:
    binding = tmp_path / "binding.yaml"
    binding.write_text(BINDING, "utf-8")
    target = make_target(KINDS[kind], TargetOptions(timeout=60, binding=binding))
    with Runner(target) as runner:
        results = [runner.run(scenario) for scenario in deliberate]
    for result in results:
        assert result.verdict is not Verdict.ERROR, (kind, result.scenario.id, result.reason)
        assert "binding" not in result.reason, (kind, result.scenario.id, result.reason)
        (step,) = result.steps
        assert step.error is not None or step.output is not None, (kind, result.scenario.id)  # the tool's own answer
        assert result.verdict in (Verdict.PASS, Verdict.RECORDED), (kind, result.scenario.id, result.reason)
