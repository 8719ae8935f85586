"""harness site: a static site from a folder of JSON reports (matrix, per-scenario history, badges).

Its pages are parsed by html5lib in strict mode (every parse error of the HTML standard fails the
test), and every red cell of the matrix must link to the page of its scenario, at its target.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import html5lib
import pytest

from harness.cli.main import main
from harness.report import site

ROOT = Path(__file__).resolve().parents[1]
PLANTED = f"cmd:{sys.executable} {ROOT / 'tests' / 'adapters' / 'planted_cmd.py'}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def parse(path: Path):
    """Returns the page's tree; fails on any parse error."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True)
    try:
        return parser.parse(path.read_bytes())
    except html5lib.html5parser.ParseError as exc:
        pytest.fail(f"{path}: not valid HTML: {exc}")


def _run(tmp_path: Path, name: str, *target: str) -> None:
    argv = ["run", "-q", "--profile", "claude-code", "--no-snapshots", "--json", str(tmp_path / "reports" / name),
            "--jobs", "1"]
    for spec in target:
        argv += ["--target", spec]
    assert main(argv) in (0, 1)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("site")
    (tmp_path / "reports" / "nightly").mkdir(parents=True)
    _run(tmp_path, "reference.json", "reference")
    _run(tmp_path, "nightly/planted-1.json", f"{PLANTED} --version 1.0 no-trailing-newline")
    _run(tmp_path, "nightly/planted-2.json", f"{PLANTED} --version 1.1 tab-numbers")
    # one version run twice, once with a verdict flipped by hand: that scenario is flaky
    _run(tmp_path, "nightly/planted-3.json", f"{PLANTED} --version 1.1 tab-numbers")
    third = tmp_path / "reports" / "nightly" / "planted-3.json"
    data = json.loads(third.read_text())
    flipped = next(result for result in data["results"] if result["id"] == "claude-code/read/arrow-not-tab")
    assert flipped["verdict"] == "fail"
    flipped["verdict"], flipped["reason"] = "pass", ""
    data["started"] = "2999-01-01T00:00:00Z"  # the latest run
    third.write_text(json.dumps(data))
    (tmp_path / "reports" / "not-a-report.json").write_text('{"scenarios": []}')
    assert main(["site", str(tmp_path / "reports"), "-o", str(tmp_path / "site")]) == 0
    return tmp_path / "site"


def test_every_page_is_valid_html(built, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html lang=en><head><title>x</title></head><body><table><p>x</table>")
    with pytest.raises(pytest.fail.Exception):
        parse(broken)  # the check can fail
    pages = sorted(built.rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        parse(page)
    for badge in built.glob("badge/*.svg"):
        assert ElementTree.parse(badge).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_every_red_cell_links_to_its_scenario_at_its_target(built):
    tree = parse(built / "index.html")
    matrix = next(table for table in tree.iter(f"{XHTML}table") if table.get("id") == "matrix")
    red = [cell for cell in matrix.iter(f"{XHTML}td") if cell.find(f"{XHTML}span[@class='v v-fail']") is not None
           or cell.find(f"{XHTML}span[@class='v v-error']") is not None]
    assert red == [], "a red cell without a link"
    links = [a for a in matrix.iter(f"{XHTML}a") if "red" in (a.get("class") or "").split()]
    assert len(links) >= 9  # planted 1.1's failures (tab-numbers), less the flipped one
    for link in links:
        page, _, anchor = link.get("href").partition("#")
        target = parse(built / page)
        section = next((s for s in target.iter(f"{XHTML}section") if s.get("id") == anchor), None)
        assert section is not None, link.get("href")
        text = "".join(section.itertext())
        assert "harness run --target" in text and "expected" in text


def test_history_marks_flaky_and_the_run_since_which_it_fails(built):
    page = built / "scenario" / f"{site.slug('claude-code/read/arrow-not-tab')}.html"
    text = "".join(parse(page).itertext())
    assert "~ flaky" in text
    page = built / "scenario" / f"{site.slug('claude-code/read/line-number-width-six')}.html"
    text = "".join(parse(page).itertext())
    assert "Failing since the run of" in text and "~ flaky" not in text
    badges = sorted(path.name for path in built.glob("badge/*.svg"))
    assert badges == ["planted.svg", "reference.svg"]
    assert "100% (104/104)" in (built / "badge" / "reference.svg").read_text()
    assert site.badge_files(["a b", "a/b", "c"]) == {"a b": site.slug("a b") + ".svg", "a/b": site.slug("a/b") + ".svg",
                                                     "c": "c.svg"}


def test_what_a_report_says_is_text_not_markup(tmp_path):
    hostile = "<script>alert(1)</script>\x1b[31m"
    report = {"format": 1, "harness": {"version": "0"}, "target": {"name": hostile, "version": "1", "spec": hostile},
              "results": [{"id": "p/" + hostile, "profile": "p", "verdict": "fail", "reason": hostile,
                           "title": hostile, "steps": []}],
              "summary": {"pass": 0, "fail": 1, "recorded": 0, "skip": 0, "error": 0, "known": 0}}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "r.json").write_text(json.dumps(report))
    (tmp_path / "in" / "link.json").symlink_to(tmp_path / "in" / "r.json")
    built = site.build(tmp_path / "in", tmp_path / "out")
    assert built.runs == 1  # the link is not followed
    for page in (tmp_path / "out").rglob("*.html"):
        text = page.read_text()
        assert "<script>" not in text and "\x1b" not in text
        parse(page)
    assert main(["site", str(tmp_path / "nowhere"), "-o", str(tmp_path / "o2")]) == 2
