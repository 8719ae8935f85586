"""Verdicts by aspect: how expectations are classified (effects, outcome, output), the per-aspect
verdicts of a result, and what judging only some aspects (--aspects) does to the verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fakes import ScriptedTarget

from harness.cli.main import main
from harness.run.runner import Runner
from harness.scenario import aspects
from harness.scenario.loader import ScenarioError
from harness.scenario.model import Verdict
from harness.targets.base import CallResult

APTIX = """\
id: aptix-tul-004/write/exists
profile: aptix-tul-004
title: an existing file is refused
source: 002-aptix-tul-004-create-file.md §5.1 step 3
given: {files: {a.txt: "old\\n"}}
steps:
  - tool: workspace_create_file
    args: {path: a.txt, content: "new\\n"}
    expect:
      output: {success: false, errorCode: FileExists, message: {$regex: "\\\\S"}, created: false}
      events: [{$subset: {name: Tool.CreateFile.Executed}}]
then:
  files: {a.txt: "old\\n"}
"""

MCP = """\
id: mcp-write-text-file/tc/tc5
profile: mcp-write-text-file
title: a relative path is refused
source: 003-mcp-write-text-file.md TC5
steps:
  - tool: write_text_file
    args: {path: relative/path.txt, content: data}
    expect:
      error: {code: -32600, message: "Path must be absolute: relative/path.txt"}
then:
  absent: [relative]
"""


def run(scenario, answer: CallResult, tool: str):
    with Runner(ScriptedTarget({tool: answer})) as runner:
        return runner.run(scenario)


def test_each_expectation_key_has_a_documented_default_aspect(scenario_from):
    aptix = scenario_from(APTIX)
    assert aspects.classify_step(aptix, aptix.calls[0]) == {
        "succeeds": "outcome", "output.success": "outcome", "output.errorCode": "outcome",
        "output.message": "output", "output.created": "output", "events": "output"}
    mcp = scenario_from(MCP)
    assert aspects.classify_step(mcp, mcp.calls[0]) == {
        "fails": "outcome", "error.code": "outcome", "error.message": "output"}
    assert aspects.expected_aspects(mcp) == {"effects", "outcome", "output"}
    read = scenario_from(MCP.replace("error: {code: -32600, message: \"Path must be absolute: relative/path.txt\"}",
                                     "output: {$subset: {success: true, bytes_written: 4}}"))
    assert aspects.classify_step(read, read.calls[0]) == {  # bytes_written: a content field of the profile
        "succeeds": "outcome", "output.success": "outcome", "output.bytes_written": "content", "content": "content"}
    for key in ("succeeds", "fails", "error.code", "error.message", "events", "then", "escape", "content"):
        assert key in aspects.DEFAULTS


def test_a_step_aspect_override_reclassifies_a_key_and_lint_refuses_a_key_the_step_lacks(scenario_from):
    overridden = MCP.replace("    expect:\n", "    aspect: {error.message: outcome}\n    expect:\n")
    scenario = scenario_from(overridden)
    assert aspects.classify_step(scenario, scenario.calls[0])["error.message"] == "outcome"
    with pytest.raises(ScenarioError) as info:
        scenario_from(MCP.replace("    expect:\n", "    aspect: {events: effects}\n    expect:\n"))
    (problem,) = info.value.problems
    assert (problem.line, problem.field) == (8, "steps[0].aspect") and "'events'" in problem.message
    with pytest.raises(ScenarioError) as info:
        scenario_from(MCP.replace("    expect:\n", "    aspect: {error.message: wording}\n    expect:\n"))
    assert info.value.problems[0].field == "steps[0].aspect.error.message"


def test_a_differently_worded_error_fails_only_the_output_aspect(scenario_from):
    result = run(scenario_from(MCP), CallResult(error={"code": -32600, "message": "relative paths are refused"}),
                 "write_text_file")
    assert result.verdict is Verdict.FAIL
    assert result.aspects == {"effects": "pass", "outcome": "pass", "content": "n/a", "output": "fail"}


def test_the_wrong_failure_fails_outcome_and_a_success_fails_outcome_and_effects(scenario_from, tmp_path):
    wrong_code = run(scenario_from(MCP), CallResult(error={"code": -32001, "message": "Path must be absolute: "
                                                                                    "relative/path.txt"}), "write_text_file")
    assert wrong_code.aspects == {"effects": "pass", "outcome": "fail", "content": "n/a", "output": "pass"}

    def writes(workspace: Path, args: dict) -> CallResult:
        (workspace / "relative").mkdir()
        (workspace / "relative" / "path.txt").write_text("data")
        return CallResult(output={"success": True, "bytes_written": 4, "created": True})
    succeeded = run(scenario_from(MCP), writes, "write_text_file")
    assert succeeded.aspects["outcome"] == "fail" and succeeded.aspects["effects"] == "fail"


def test_outcome_fields_of_a_payload_are_outcome_and_other_fields_output(scenario_from):
    payload = {"success": False, "errorCode": "FileExists", "message": "exists", "created": True}
    result = run(scenario_from(APTIX), CallResult(output=payload, events=[{"name": "Tool.CreateFile.Executed"}]),
                 "workspace_create_file")
    assert result.aspects == {"effects": "pass", "outcome": "pass", "content": "n/a", "output": "fail"}
    wrong = run(scenario_from(APTIX), CallResult(output={**payload, "created": False, "errorCode": "WriteFailed"},
                                                 events=[{"name": "Tool.CreateFile.Executed"}]), "workspace_create_file")
    assert wrong.aspects == {"effects": "pass", "outcome": "fail", "content": "n/a", "output": "pass"}


def test_judging_some_aspects_records_the_others_and_only_they_decide_the_verdict(scenario_from):
    result = run(scenario_from(MCP), CallResult(error={"code": -32600, "message": "nope"}), "write_text_file")
    aspects.apply(result, ("effects", "outcome"))
    assert result.verdict is Verdict.PASS and result.reason.startswith("not judged (output): ")
    assert result.aspects == {"effects": "pass", "outcome": "pass", "content": "n/a", "output": "recorded"}
    assert result.observed_aspects == {"effects": "pass", "outcome": "pass", "content": "n/a", "output": "fail"}
    data = result.as_dict()
    assert data["aspects"]["output"] == "recorded" and data["aspects_observed"]["output"] == "fail"
    outcome = run(scenario_from(MCP), CallResult(error={"code": 1, "message": "nope"}), "write_text_file")
    aspects.apply(outcome, ("effects", "outcome"))
    assert outcome.verdict is Verdict.FAIL


def test_skipped_and_errored_results_have_no_aspect_verdicts(scenario_from):
    with Runner(ScriptedTarget(crash_on="write_text_file")) as runner:
        result = runner.run(scenario_from(MCP))
    assert result.verdict is Verdict.ERROR and set(result.aspects.values()) == {"n/a"}


def test_an_open_question_records_every_aspect(scenario_from):
    text = MCP.replace("title: a relative path is refused", "title: t\nopen_question: what happens?")
    text = text.replace("    expect:\n      error: {code: -32600, message: \"Path must be absolute: relative/path.txt\"}\n", "")
    result = run(scenario_from(text), CallResult(error={"code": 1, "message": "x"}), "write_text_file")
    assert result.verdict is Verdict.RECORDED and set(result.aspects.values()) == {"recorded"}


def test_the_rate_line_counts_pass_and_fail_per_aspect(scenario_from):
    ok = run(scenario_from(MCP), CallResult(error={"code": -32600, "message": "Path must be absolute: relative/path.txt"}),
             "write_text_file")
    worded = run(scenario_from(MCP), CallResult(error={"code": -32600, "message": "no"}), "write_text_file")
    counts = aspects.summary([ok, worded])["mcp-write-text-file"]
    assert aspects.rate_line(counts) == "effects 100% · outcome 100% · content – · output 50%"


def test_harness_run_aspects_makes_an_output_only_difference_visible_without_failing(folder, tmp_path, capsys):
    (folder / "worded.yaml").write_text(MCP.replace("tc5", "tc5-worded").replace(
        "Path must be absolute: relative/path.txt", "Paths must be absolute"), "utf-8")
    report = tmp_path / "r.json"
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--jobs", "1", "--json", str(report)]) == 1
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--jobs", "1", "--json", str(report),
                 "--aspects", "effects,outcome"]) == 0
    out = capsys.readouterr().out
    assert "mcp-write-text-file: effects 100% · outcome 100% · content – · output 0%" in out
    assert "1 result(s) differ only in aspects not judged: output 1" in out
    (result,) = json.loads(report.read_text("utf-8"))["results"]
    assert result["verdict"] == "pass" and result["aspects"]["output"] == "recorded"
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--aspects", "effect"]) == 2


def test_harness_diff_compares_by_aspect(tmp_path, capsys):
    root = tmp_path / "snaps"
    assert main(["run", "-q", "--jobs", "1", "--profile", "mcp-write-text-file", "-k", "tc5",
                 "--snapshot-update", "--snapshots", str(root)]) == 0
    base = root / "reference"
    (path,) = base.rglob("*.yaml")
    worded = tmp_path / "worded"
    shutil.copytree(base, worded)
    target = worded / path.relative_to(base)
    target.write_text(path.read_text("utf-8").replace("message: 'Path must be absolute: relative/path.txt'",
                                                      "message: 'relative paths are refused'", 1), "utf-8")
    assert main(["diff", str(base), str(worded), "--aspects", "effects,outcome"]) == 0
    capsys.readouterr()
    assert main(["diff", str(base), str(worded)]) == 1
    assert "(output)" in capsys.readouterr().out
    assert main(["diff", str(base), str(worded), "--aspects", "output"]) == 1
    out = capsys.readouterr().out
    assert "+      message: relative paths are refused" in out and "bytes" not in out.split("DIFFERS")[1].split("vs")[0]
    target.write_text(path.read_text("utf-8").replace("code: -32600", "code: -32602", 1), "utf-8")
    assert main(["diff", str(base), str(worded), "--aspects", "outcome"]) == 1
    assert "(outcome, output)" not in capsys.readouterr().out  # only the judged aspect is named
    assert main(["diff", str(base), str(worded), "--aspects", "outcome,nope"]) == 2


def test_the_matrices_show_aspect_marks_and_a_rate_line_per_profile(folder, tmp_path, capsys):
    (folder / "worded.yaml").write_text(MCP.replace("tc5", "tc5-worded").replace(
        "Path must be absolute: relative/path.txt", "Paths must be absolute"), "utf-8")
    (folder / "ok.yaml").write_text(MCP, "utf-8")
    report = tmp_path / "r.json"
    main(["run", "--no-builtin", "--scenarios", str(folder), "--jobs", "1", "--json", str(report), "-q",
          "--aspects", "effects,outcome"])
    markdown, html = tmp_path / "r.md", tmp_path / "r.html"
    capsys.readouterr()
    assert main(["report", str(report), "--no-builtin", "--scenarios", str(folder),
                 "--markdown", str(markdown), "--html", str(html)]) == 0
    line = "reference · mcp-write-text-file: effects 100% · outcome 100% · content – · output 50%"
    out = capsys.readouterr().out
    assert line in " ".join(out.split()) and "pass ✓✓·✗" in out and "pass ✓✓·✓" in out
    text = markdown.read_text("utf-8")
    assert f"- {line}" in text and "| `mcp-write-text-file/tc/tc5-worded` | ✅ pass ✓✓·✗ |" in text
    page = html.read_text("utf-8")
    assert f"<li>{line}</li>" in page and '<span class="marks" title="effects, outcome, content, output">✓✓·✗</span>' in page
