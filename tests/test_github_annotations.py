"""GitHub annotations carry a candidate's text shown literally: no raw control character reaches them."""

from __future__ import annotations

import re

from fakes import ScriptedTarget, read_scenario

from harness.report import github
from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets.base import CallResult

READ = read_scenario("claude-code/annotations/t", '"x"')

HOSTILE = "REASON \x1b[31mred\x1b[0m \x00 \x07 \x08 \u009b \r\nnext line %"


def test_an_annotation_shows_the_candidates_control_characters_escaped(scenario_from):
    with Runner(ScriptedTarget({"Read": CallResult(error={"code": None, "message": HOSTILE})})) as runner:
        result = runner.run(scenario_from(READ))
    result.verdict, result.reason = Verdict.ERROR, "step 1 (Read): the adapter failed: " + HOSTILE
    line, = github.annotations([result], "cmd:x \x1b]0;title\x07")
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", line), repr(line)
    assert "REASON \\x1b[31mred\\x1b[0m \\x00 \\x07 \\x08 \\x9b" in line
    assert "%0Anext line %25" in line and "title=error on cmd%3Ax \\x1b]0;title\\x07%3A " in line


def test_an_annotation_points_at_the_scenario_file_in_the_repository_or_names_the_id(scenario_from, tmp_path,
                                                                                     monkeypatch):
    import dataclasses
    with Runner(ScriptedTarget({"Read": CallResult(output="y")})) as runner:
        result = runner.run(scenario_from(READ))
    assert result.verdict is Verdict.FAIL
    checkout = tmp_path / "checkout"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(checkout))
    # the installed catalog's copy (site-packages) of a file the checkout has: the checkout's file
    installed = tmp_path / "venv" / "site-packages" / "harness" / "builtin_scenarios" / "claude-code" / "t.yaml"
    installed.parent.mkdir(parents=True)
    installed.write_text(result.scenario.file.read_text())
    (checkout / "scenarios" / "claude-code").mkdir(parents=True)
    (checkout / "scenarios" / "claude-code" / "t.yaml").write_text(installed.read_text())
    moved = dataclasses.replace(result, scenario=dataclasses.replace(result.scenario, file=installed))
    line, = github.annotations([moved], "cmd:x")
    assert line.startswith("::error file=scenarios/claude-code/t.yaml,line=")
    # a file outside the repository that it does not have: no file, the id in the title
    (checkout / "scenarios" / "claude-code" / "t.yaml").unlink()
    line, = github.annotations([moved], "cmd:x")
    assert line.startswith("::error title=fail on cmd%3Ax%3A claude-code/annotations/t::")
    # inside the checkout: relative to it
    inside = dataclasses.replace(result, scenario=dataclasses.replace(result.scenario, file=checkout / "s.yaml"))
    line, = github.annotations([inside], "cmd:x")
    assert line.startswith("::error file=s.yaml,line=")
