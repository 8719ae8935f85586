"""``harness report``: the matrix in the terminal, Markdown, HTML and JSON, and the open questions."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest

from harness.cli.main import main
from harness.record.observations import Observation
from harness.report import grid as matrix_mod
from harness.scenario import catalog


@pytest.fixture(scope="module")
def run(catalog_run, tmp_path_factory) -> SimpleNamespace:
    """One run of the whole catalog on the reference (``catalog_run``): JSON, snapshots, Markdown and
    HTML; and a copy of its snapshots with one scenario's altered."""
    assert catalog_run.code in (0, 1)
    altered = tmp_path_factory.mktemp("report") / "altered"
    shutil.copytree(catalog_run.snapshots / "reference", altered)
    changed = sorted(altered.rglob("*.yaml"))[0]
    changed.write_text(changed.read_text("utf-8").replace("- step: 1", "- step: 1\n    name: altered", 1), "utf-8")
    scenarios = catalog.load([catalog.builtin_dir()]).scenarios
    questions = {s.id: s.open_question for s in scenarios if s.open_question}
    # Open questions about an ACP client's behaviour skip on the reference: it is no ACP client.
    answerable = {s.id for s in scenarios if s.open_question and "acp" not in s.requires}
    return SimpleNamespace(dir=catalog_run.dir, json=catalog_run.json, altered=altered,
                           changed=changed.relative_to(altered).as_posix()[:-5], questions=questions,
                           answerable=answerable)


@pytest.fixture(scope="module")
def reported(run, tmp_path_factory) -> SimpleNamespace:
    """One ``harness report`` of the run and its altered copy: the terminal matrix, and the Markdown,
    HTML and JSON files (each test reads its own)."""
    out = tmp_path_factory.mktemp("reported")
    files = {"md": out / "r.md", "html": out / "r.html", "json": out / "r.json"}
    with contextlib.redirect_stdout(io.StringIO()) as terminal:
        assert main(["report", str(run.json), str(run.altered), "--markdown", str(files["md"]),
                     "--html", str(files["html"]), "--json", str(files["json"])]) == 0
    return SimpleNamespace(out=terminal.getvalue(), **files)


def test_terminal_matrix_groups_by_profile_and_tool_and_marks_differences(reported):
    out = reported.out
    assert "conformance matrix" in out and "claude-code · Edit" in out and "aptix-tul-004 · workspace_create_file" in out
    # columns are named by the target's name and version; a legend names the sources in full
    assert re.search(r"^reference 0\.1\.0: \d+ pass", out, re.M)
    assert re.search(r"^altered: \d+ observed, (\d+ absent, )?1 differ from reference 0\.1\.0", out, re.M)
    assert "1 cell(s) of altered behave unlike reference 0.1.0" in out  # counted; harness diff shows it
    assert "legend" in out and "ref.json" in out


def test_markdown_has_summary_differences_matrix_and_every_open_question(run, reported):
    text = reported.md.read_text("utf-8")
    assert "| target |" in text and "| reference |" in text and "| altered |" in text
    assert f"<code>{run.changed}</code> on <b>altered</b>: observed, differs" in text
    section = text.split(f"### Open questions ({len(run.questions)})", 1)[1]
    for scenario_id in run.questions:
        assert f"`{scenario_id}`" in section, scenario_id


class Page(HTMLParser):
    """Collects what the checks need from the HTML report."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def having(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def test_html_is_self_contained_with_matrix_filters_details_and_open_questions(run, reported):
    text = reported.html.read_text("utf-8")
    page = Page()
    page.feed(text)
    assert not [a for t, a in page.tags if a.get("src") or (a.get("href") or "#").split(":")[0] in ("http", "https")]
    assert not page.having("link")
    assert page.having("table", id="matrix") and page.having("select", id="profile")
    assert {a["value"] for a in page.having("input", type="checkbox")} >= {"pass", "fail", "recorded", "skip", "error"}
    rows = [a for a in page.having("tr") if (a.get("class") or "") == "row"]
    assert len(rows) == len(json.loads(run.json.read_text("utf-8"))["results"])
    details = [a for a in page.having("details") if a.get("class") == "item"]
    verdicts = json.loads(run.json.read_text("utf-8"))["summary"]
    assert len(details) == 1 + verdicts["fail"] + verdicts["error"]  # the reference's failures, the altered cell
    assert len([a for a in details if "differs" in (a["data-verdicts"] or "")]) == 1
    assert text.count("<tr><td>") >= len(run.questions)  # one row per open question
    for question in run.questions.values():
        assert question.strip()[:40].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
            .replace('"', "&quot;").replace("'", "&#x27;") in text


def test_json_combines_the_sources_with_answers_to_every_open_question(run, reported):
    data = json.loads(reported.json.read_text("utf-8"))
    assert [t["label"] for t in data["targets"]] == ["reference", "altered"]
    by_id = {s["id"]: s for s in data["scenarios"]}
    assert by_id[run.changed]["results"]["altered"]["differs"] is True
    assert sum(s["results"]["altered"]["differs"] for s in data["scenarios"]) == 1
    assert run.answerable
    for scenario_id in run.answerable:
        assert by_id[scenario_id]["results"]["reference"]["verdict"] == "recorded"
        assert by_id[scenario_id]["results"]["reference"]["answer"], scenario_id
        assert by_id[scenario_id]["results"]["altered"]["answer"] == by_id[scenario_id]["results"]["reference"]["answer"]
    assert data["summary"]["altered"]["differs"] == 1


def test_harness_run_writes_markdown_and_html_too(run):
    markdown = (run.dir / "run.md").read_text("utf-8")
    html = (run.dir / "run.html").read_text("utf-8")
    assert f"### Open questions ({len(run.questions)})" in markdown
    assert '<table id="matrix">' in html and "<script>" in html


def test_a_snapshot_folder_alone_reports_observations_and_answers(run, tmp_path):
    assert main(["report", str(run.altered), "-q", "--markdown", str(tmp_path / "r.md")]) == 0
    text = (tmp_path / "r.md").read_text("utf-8")
    # The q04 question's answer comes from the snapshot alone: what Write said and what it left on disk.
    row = next(line for line in text.splitlines() if "<br>`claude-code/open-questions/q04-write-creates" in line)
    assert "File created successfully" in row and "+new/deeper/file.txt (7 B)" in row


def test_the_answer_is_the_call_marked_as_answering_not_the_last():
    text = ("steps:\n  - step: 1\n    tool: Write\n    args: {}\n    output: first\n"
            "  - step: 2\n    tool: Read\n    args: {}\n    error: {code: E1, message: gone}\n")
    obs = Observation(id="x", profile="p", raw=text)
    marked = SimpleNamespace(steps=(SimpleNamespace(answers=True), SimpleNamespace(answers=False)))
    assert matrix_mod.answer(obs, marked) == "first"
    assert matrix_mod.answer(obs, None) == "error: E1: gone"


def test_an_empty_text_output_is_shown_as_an_answer_not_as_none():
    from harness.report import grid as matrix
    for output, shown in (("", '""'), ("\n", '"\\n"')):
        doc = {"steps": [{"step": 1, "tool": "view", "output": output}]}
        assert matrix.answer(SimpleNamespace(document=doc), None) == shown


def test_an_open_questions_answer_says_what_the_call_left_on_disk():
    from types import SimpleNamespace

    from harness.report import grid as matrix
    doc = {"steps": [{"step": 1, "tool": "Write", "output": "done",
                      "workspace": {"new": {"type": "dir"},
                                    "new/a.txt": {"type": "file", "size": 7, "sha256": "x"},
                                    "old.txt": {"type": "file", "size": 3, "sha256": "y"}}}]}
    scenario = SimpleNamespace(steps=(), given={"files": {"old.txt": "abc", "gone.txt": "z"}})
    text = matrix.answer(SimpleNamespace(document=doc), scenario)
    assert text == "done [disk: -gone.txt, +new (dir), +new/a.txt (7 B)]"
