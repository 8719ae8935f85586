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
