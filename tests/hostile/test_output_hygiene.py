"""A candidate whose every string is hostile: markup, escapes, lone surrogates, NaN, deep nesting.

The hello name and version carry Rich markup and terminal escapes, the answers a lone surrogate,
NaN and Infinity, a 900-deep value and a markup key. The run must end normally (exit 1 for the
failed expectation), print every string literally (no escape byte reaches the terminal, markup
stays text), and write a strict JSON report that parses with NaN refused.
"""

from __future__ import annotations

import json

from tests.hostile.conftest import CANDIDATES, harness_run, write_scenarios

SCENARIO = """
id: hostile/markup
profile: claude-code
title: "[bold]a title with markup[/bold] and a tab\\there"
source: test
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect: {output: "something else"}
"""


def test_hostile_strings_are_shown_literally_and_the_json_report_stays_strict(tmp_path):
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode markup"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert "\x1b" not in outcome.stdout and "\x07" not in outcome.stdout
    assert "[bold red]not markup[/bold red]" in outcome.stdout  # printed, not interpreted
    assert "[red]evil[/red]\\x1b[31m" in outcome.stdout  # the hello name, as it was sent
    # Strict JSON: NaN and Infinity refused by the parser, so none may be in the file.
    document = json.loads(outcome.report_text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    (result,) = document["results"]
    output = result["steps"][0]["output"]
    assert output["nan"] == "NaN" and output["inf"] == "Infinity"
    assert output["text"].endswith("\\ud800")
    assert "nested deeper than" in json.dumps(output)
    assert document["target"]["name"].startswith("[red]evil[/red]")
    assert outcome.report_text.encode("utf-8")


def test_an_unsupported_protocol_version_is_an_error_for_every_scenario_and_exits_1(tmp_path):
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode protocol-2"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec)
    assert outcome.code == 1
    (result,) = outcome.report["results"]
    assert result["verdict"] == "error"
    assert "protocol version 2" in outcome.stdout
