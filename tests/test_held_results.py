"""What a run holds of its results until it ends is bounded: per failing result, and per scenario.

A failing result is kept for the end-of-run details and the GitHub annotations; it is kept without
the observed values those do not show (a 15 MB answer once cost about 45 MB per failing scenario,
the whole catalog tens of GB). A scenario's recorded outputs are bounded while it runs.
"""

from __future__ import annotations

import pickle

from fakes import ScriptedTarget, read_scenario

from harness.report import github
from harness.report.tally import Tally
from harness.report.terminal import explain
from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets.base import CallResult
from harness.util import limits

READ = read_scenario("claude-code/held/t", '{$contains: "     1→x"}', '"     1→x"')


def run(scenario, output):
    with Runner(ScriptedTarget({"Read": CallResult(output=output)})) as runner:
        return runner.run(scenario)


def test_a_failing_result_is_kept_without_its_observed_values_and_shows_the_same(scenario_from):
    result = run(scenario_from(READ), "B" * 5_000_000)
    assert result.verdict is Verdict.FAIL and len(pickle.dumps(result)) > 5_000_000  # the output, in records and mismatches
    before = explain(result), github.annotations([result], "cmd:x")
    tally = Tally()
    tally.add(result)
    kept, = tally.failures
    assert len(pickle.dumps(kept)) < 100_000
    assert (explain(kept), github.annotations([kept], "cmd:x")) == before
    assert kept.verdict is Verdict.FAIL and kept.id == result.id and kept.reason == result.reason


def test_a_kept_reason_past_its_bound_says_how_much_was_left_out(scenario_from):
    result = run(scenario_from(READ), "x")
    result.verdict, result.reason = Verdict.ERROR, "step 1 (Read): the adapter failed: " + "R" * 1_000_000
    tally = Tally()
    tally.add(result)
    kept, = tally.failures
    assert len(kept.reason) < 70_000 and kept.reason.startswith("step 1 (Read): the adapter failed: RRR")
    assert kept.reason.endswith(f"[{len(result.reason) - 64 * 1024:,} more characters not kept]")
    assert result.reason.endswith("R")  # the result itself (streamed to the reports) is untouched


MANY = """\
id: claude-code/held/many
profile: claude-code
title: many reads
source: test
given:
  files:
    a.txt: "x\\n"
steps:
""" + """  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
""" * 6


def test_a_scenario_whose_outputs_pass_their_cap_ends_as_an_error_naming_the_step(scenario_from, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SCENARIO_OUTPUT", 1_000_000)
    result = run(scenario_from(MANY), {"text": "C" * 300_000, "lines": [1, 2]})
    assert result.verdict is Verdict.ERROR
    assert result.reason.startswith("step 4 (Read): the outputs of the steps so far hold more than")
    assert "1,000,000 characters (HARNESS_MAX_SCENARIO_OUTPUT)" in result.reason
    assert len(result.steps) == 4  # the steps after it are not taken


def test_what_a_target_keeps_beside_an_answer_counts_toward_the_cap(scenario_from, monkeypatch):
    # An MCP error's `data` is kept whole in the step's extra: it is held as an output is.
    monkeypatch.setattr(limits, "MAX_SCENARIO_OUTPUT", 1_000_000)
    answer = CallResult(error={"kind": "refused", "message": "no"}, extra={"data": "D" * 300_000})
    with Runner(ScriptedTarget({"Read": answer})) as runner:
        result = runner.run(scenario_from(MANY))
    assert result.verdict is Verdict.ERROR and len(result.steps) == 4
    assert result.reason.startswith("step 4 (Read): the outputs of the steps so far hold more than")


def test_outputs_within_the_cap_are_recorded_whole(scenario_from, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SCENARIO_OUTPUT", 2_000_000)
    result = run(scenario_from(MANY), "C" * 300_000)
    assert result.verdict is Verdict.PASS and all(len(step.output) == 300_000 for step in result.steps)


def test_the_markdown_and_html_columns_keep_a_failure_as_explained_without_its_observed_value(scenario_from):
    from types import SimpleNamespace

    from harness.record.observations import Collector
    result = run(scenario_from(READ), "B" * 5_000_000)
    collector = Collector(several=False)
    target_run = SimpleNamespace(spec="cmd:x", info=SimpleNamespace(name="x", version="1"))
    collector.add(target_run, result.as_dict())
    kept = collector.columns[id(target_run)].observations[result.id]
    assert len(pickle.dumps(kept)) < 100_000
    assert [f["explanation"] for f in kept.failures] == [f.render() for _, f in result.failures]
