"""The Markdown report shows what a candidate answered and what a scenario says literally.

It goes to pull-request comments and job summaries, where GitHub renders it: an answer or a
scenario's ``source`` holding ``![x](https://...)`` showed a remote image, ``[click](...)`` a link
as if the report said it, ``**x**`` bold. Rendered here with markdown-it (CommonMark and tables,
as GitHub reads them), no such element may appear, and the text must read as it was given.
"""

from __future__ import annotations

import html

from fakes import ScriptedTarget
from markdown_it import MarkdownIt

from harness.record.observations import from_results
from harness.report import grid as matrix_mod
from harness.report import markdown
from harness.run.runner import Runner
from harness.targets.base import CallResult

HOSTILE = ("![p](https://e.example/p.png) **B** _e_ [c](https://e.example/c) <https://e.example/a> `x` "
           "~~g~~ www.e.example u@e.example # h \\*")

QUESTION = """\
id: claude-code/literal/q
profile: claude-code
title: "[t](https://evil.example/t)"
source: "[the seed](https://evil.example/seed) ![s](https://evil.example/s.png)"
open_question: "what does **it** say? ![q](https://evil.example/q.png)"
given:
  files:
    a.txt: "x\\n"
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
"""


def _report(scenario_from) -> str:
    scenario = scenario_from(QUESTION)
    with Runner(ScriptedTarget({"Read": CallResult(output=HOSTILE)})) as runner:
        result = runner.run(scenario)
    grid = matrix_mod.build([from_results("cmd:x", [result])], {scenario.id: scenario})
    return markdown.render(grid)


def test_answers_and_scenario_text_in_the_markdown_report_are_shown_literally(scenario_from):
    report = _report(scenario_from)
    render = MarkdownIt("commonmark").enable("table").enable("strikethrough").render
    page = render(report)
    assert "<img" not in page and "<a " not in page
    questions = render(report.split("### Open questions (1)", 1)[1])  # the report's own bold is elsewhere
    for element in ("<strong>", "<em>", "<s>", "<h1>", "<del>"):
        assert element not in questions, element
    text = html.unescape(page)
    assert HOSTILE in text  # the answer, character for character
    assert "[the seed](https://evil.example/seed) ![s](https://evil.example/s.png)" in text
    assert "what does **it** say? ![q](https://evil.example/q.png)" in text


def test_no_bare_web_address_is_left_for_githubs_autolinks(scenario_from):
    # GitHub also links https://... and www.... written bare (an extension markdown-it leaves out here).
    question = _report(scenario_from).split("### Open questions", 1)[1]
    assert "https://" not in question and "www." not in question and "u@e.example" not in question
