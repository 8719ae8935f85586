"""A candidate whose every string is hostile: markup, escapes, lone surrogates, NaN, deep nesting.

The hello name and version carry Rich markup and terminal escapes, the answers a lone surrogate,
NaN and Infinity, a 900-deep value, a markup key, pipes, newlines, tags, NUL and U+FFFE. The run
must end normally (exit 1 for the failed expectation), print every string literally (no escape
byte reaches the terminal, markup stays text), write a strict JSON report that parses with NaN
refused, well-formed JUnit XML, HTML with no tag of the candidate's and Markdown tables whose rows
stay whole, each showing the values escaped.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from tests.hostile.conftest import CANDIDATES, ROOT, harness_run, write_scenarios

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


#: The bidirectional controls and invisible characters the hostile candidate answers with.
INVISIBLE = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200b", "\ufeff", "\U000e0041")


def test_hostile_strings_are_shown_literally_and_the_json_report_stays_strict(tmp_path):
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode markup"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert "\x1b" not in outcome.stdout and "\x07" not in outcome.stdout
    assert "[bold red]not markup[/bold red]" in outcome.stdout  # printed, not interpreted
    assert "[red]evil[/red]\\x1b[31m" in outcome.stdout  # the hello name, as it was sent
    assert not [c for c in INVISIBLE if c in outcome.stdout]  # a diff cannot be made to look equal
    assert "\\u202eevil\\u202c" in outcome.stdout
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


WRITERS = """
id: hostile/writers/{name}
profile: claude-code
title: "<script>alert('title')</script> | a pipe [bold]markup[/bold]"
source: test
{extra}steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
{expect}"""


class _Tags(HTMLParser):
    """Collects the start tags of a page and its text (entities decoded, as a browser shows it)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _cells(row: str) -> list[str]:
    """Splits a Markdown table row at the pipes that end a cell (not the escaped ``\\|``)."""
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


def _escaped_esc(text: str) -> bool:
    """Returns whether ``text`` shows the candidate's ``ESC [2J`` escaped (``\\x1b`` or JSON's ``\\u001b``)."""
    return "\\x1b[2J" in text or "\\u001b[2J" in text


def test_hostile_strings_reach_the_markdown_html_and_junit_reports_escaped_and_leave_them_well_formed(tmp_path):
    """Markup, terminal escapes, NUL, U+FFFE, pipes, newlines, tags, a code fence, a lone surrogate,
    NaN, 900-deep nesting and a 300-character id, through every report writer; one candidate answers
    with a structure (``markup``), the other with the bare hostile text (``markup-text``)."""
    long_id = "x" * 300
    folder = tmp_path / "scenarios"
    write_scenarios(folder, WRITERS.format(name="fails", extra="", expect="    expect: {output: \"something else\"}\n"),
                    "fails.yaml")
    write_scenarios(folder, WRITERS.format(name="question", expect="",
                                           extra="open_question: \"what | does <b>it</b> say?\"\n"), "question.yaml")
    write_scenarios(folder, WRITERS.format(name=long_id, extra="", expect="    expect: {output: \"other\"}\n"),
                    "long.yaml")
    specs = [f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode {mode}" for mode in ("markup", "markup-text")]
    paths = {kind: tmp_path / f"report.{kind}" for kind in ("xml", "md", "html")}
    outcome = harness_run(tmp_path, folder, "--target", specs[0], "--target", specs[1], "--junit", str(paths["xml"]),
                          "--markdown", str(paths["md"]), "--html", str(paths["html"]), timeout=120)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    raw = {kind: path.read_bytes() for kind, path in paths.items()}
    for kind, data in raw.items():  # no terminal escape, NUL, bell or carriage return reaches a file
        assert not any(byte in data for byte in (b"\x1b", b"\x00", b"\x07", b"\x08", b"\r")), kind
        text = data.decode("utf-8")  # no lone surrogate either (it could not be encoded)
        # Nor a bidirectional override or isolate, nor an invisible character: each shown escaped.
        assert not [c for c in INVISIBLE if c in text], kind
        assert all(shown in text for shown in ("\\u202eevil\\u202c", "\\u2066iso\\u2069", "zero\\u200bwidth",
                                               "\\ufeff", "\\U000e0041")), kind

    # JUnit: well-formed XML 1.0 (ElementTree alone writes ESC and NUL raw, which no parser accepts);
    # what XML forbids is shown escaped, not dropped.
    root = ET.parse(paths["xml"]).getroot()
    cases = [case for case in root.iter("testcase")]
    assert sorted(case.get("name") for case in cases) == sorted(
        2 * ["hostile/writers/fails", "hostile/writers/question", f"hostile/writers/{long_id}"])
    assert all(case.get("classname").startswith("[red]evil[/red]\\x1b[31m") for case in cases)
    failures = [case.find("failure").text for case in cases if case.get("name") == "hostile/writers/fails"]
    assert len(failures) == 2
    for failure in failures:
        assert _escaped_esc(failure) and "[bold red]not markup[/bold red]" in failure
        assert "<script>alert('out')</script>" in failure and "\\ud800" in failure
        assert "\\u0000" in failure or "\\x00" in failure
        assert "\\ufffe" in failure and "\ufffe" not in failure
    assert "NaN" in failures[0] and "nested deeper than 64 levels" in failures[0]

    # HTML: parses; no tag but the page's own (one script: the filters); the values shown as text.
    html = raw["html"].decode("utf-8")
    page = _Tags()
    page.feed(html)
    page.close()
    assert page.tags.count("script") == 1 and html.count("<script>") == 1 and "b" not in page.tags[:5]
    text = "".join(page.text)
    assert "<script>alert('out')</script>" in text and "<script>alert('title')</script>" in html.replace(
        "&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'")
    assert "what | does <b>it</b> say?" in text
    assert _escaped_esc(text) and "\\x1b[2J" in text and "\\x00" in text and "\\ud" in text
    assert "[bold red]not markup[/bold red]" in text and f"hostile/writers/{long_id}" in text

    # Markdown: every table row has as many cells as its header (no pipe or newline broke one).
    markdown = raw["md"].decode("utf-8")
    for title in ("### Matrix", "### Open questions (1)"):
        section = markdown.split(title, 1)[1].split("###", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("|")]
        assert all(len(_cells(row)) == len(_cells(rows[0])) for row in rows), section
        assert len(rows) == (2 + 1 + 3 if title == "### Matrix" else 3), section  # header, rule, rows
    answer = markdown.split("### Open questions (1)", 1)[1].splitlines()[4]
    assert answer.startswith("| what \\| does &lt;b>it&lt;/b> say?")
    assert "\\\\x1b\\[2J" in answer and "\\| a \\| b \\|" in answer and "&lt;script>alert('out')" in answer
    assert "&amp;amp;" in answer  # the candidate's own "&amp;", shown as typed
    details = markdown.split("### Failures and differences", 1)[1].split("### Matrix", 1)[0]
    assert all("<script>" not in line for line in details.splitlines() if line.startswith("<details>"))
    assert _escaped_esc(details)


DEEP = """
id: hostile/deep-{mode}
profile: claude-code
title: an answer nested past any recursive parser's stack
source: test
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
    expect:
      output: {{$json: {{$type: array}}}}
"""


def test_an_answer_nested_past_the_parsers_stack_is_a_verdict_naming_it(tmp_path):
    for mode, verdict, reason in (("deep", "error", "the candidate wrote a line that nests too deep to parse"),
                                  ("deep-text", "fail", "content: expected a JSON text")):
        folder = tmp_path / mode
        write_scenarios(folder, DEEP.format(mode=mode))
        spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode {mode}"
        outcome = harness_run(tmp_path, folder, "--target", spec)
        result = outcome.result(f"hostile/deep-{mode}")
        assert (result["verdict"], outcome.code) == (verdict, 1), result
        assert reason in result["reason"] and "harness error" not in result["reason"], result["reason"]
        assert len(outcome.stdout) < 100_000  # the answer is shown cut


WORKFLOW_COMMANDS = r'''
import json, sys
sys.stderr.write("::stop-commands::hidden\n::error title=Injected::a false annotation\n")
sys.stderr.flush()
if sys.argv[1] == "dies":
    sys.exit(1)
for line in sys.stdin:
    op = json.loads(line)["op"]
    answer = {"ok": True}
    if op == "hello":
        answer.update(name="##[error]Injected-name", version="1", profiles=["claude-code"])
    elif op == "call":
        answer["output"] = "first\n::add-mask::x\n::error title=Injected::in an output\nlast"
    print(json.dumps(answer), flush=True)
'''


def _commands_github_reads(log: str) -> list[str]:
    """The workflow commands the Actions runner would act on in ``log`` (its rules: a line, left-trimmed,
    starting with ``::``; nothing but the resuming token while ``::stop-commands::`` holds)."""
    stopped, commands = None, []
    for line in log.splitlines():
        text = line.lstrip()
        if stopped is not None:
            if text == f"::{stopped}::":
                stopped = None
            continue
        if text.startswith("::stop-commands::"):
            stopped = text[len("::stop-commands::"):]
        elif text.startswith("::") or "##[" in text:  # the legacy form is read anywhere in a line
            commands.append(text)
    assert stopped is None, "the harness left workflow commands stopped for the rest of the step"
    return commands


def test_a_candidates_text_is_never_read_as_a_github_workflow_command(tmp_path):
    # A stderr tail or an observed output reaches the log: "::stop-commands::hidden" there hid every
    # annotation of the run, "::error ...::" made a false one.
    write_scenarios(tmp_path / "scenarios", """
id: hostile/workflow
profile: claude-code
title: a candidate printing workflow commands
source: test
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect: {output: "something else"}
""")
    candidate = tmp_path / "candidate.py"
    candidate.write_text(WORKFLOW_COMMANDS, "utf-8")
    for mode, extra in (("dies", ()), ("answers", ()), ("answers", ("--target", "reference"))):
        # With several targets a table shows what each said of itself (the hello's name).
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", f"cmd:python {candidate} {mode}",
                              *extra, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "", "COLUMNS": "200"})
        assert outcome.code == 1
        log = outcome.stdout + outcome.stderr
        assert "Injected" in log  # shown, literally ...
        commands = _commands_github_reads(outcome.stdout)
        # the harness's own: at the scenario file when the checkout has it, else naming the scenario
        assert commands and all(c.startswith(("::error file=", "::error title=")) and "Injected" not in c
                                for c in commands), commands


def test_under_pytest_a_candidates_text_is_never_read_as_a_github_workflow_command(tmp_path):
    """The pytest route has no stop-commands (other plugins' annotations would stop too), and the
    runner trims the indentation that was meant to defuse a candidate's `::error` line: what the
    plugin prints is defused line by line."""
    project = tmp_path / "project"
    write_scenarios(project / "scenarios", """
id: hostile/workflow-pytest
profile: claude-code
title: a candidate printing workflow commands
source: test
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect: {output: "something else"}
""")
    (project / "pytest.ini").write_text("[pytest]\nharness_scenarios = scenarios\n")
    candidate = tmp_path / "candidate.py"
    candidate.write_text(WORKFLOW_COMMANDS, "utf-8")
    for mode in ("answers", "dies"):
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                               "--target", f"cmd:{sys.executable} {candidate} {mode}"], cwd=project, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "GITHUB_ACTIONS": "true", "PYTHONPATH": str(ROOT)})
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Injected" in done.stdout  # shown, literally ...
        assert _commands_github_reads(done.stdout) == [], done.stdout  # ... and never a command
