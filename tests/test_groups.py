"""Failures grouped by cause (harness/report/groups.py), and text fitted to 80 columns (harness/report/wrap.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.cli.main import main
from harness.report import groups, wrap

ROOT = Path(__file__).resolve().parents[1]
PLANTED = f"cmd:{sys.executable} {ROOT / 'tests' / 'adapters' / 'planted_cmd.py'}"


def test_three_planted_bugs_make_three_groups(tmp_path):
    report = tmp_path / "r.json"
    assert main(["run", "-q", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--json", str(report),
                 "--target", f"{PLANTED} tab-numbers no-trailing-newline replace-first"]) == 1
    results = json.loads(report.read_text())["results"]
    failing = [result["id"] for result in results if result["verdict"] in ("fail", "error")]
    found = groups.group(results)
    assert [group.count for group in found] == [29, 9, 3]
    assert sum(group.count for group in found) == len(failing)
    tab, newline, replace = found
    assert "'→' → '\\t'" in tab.title and tab.title.startswith("Read output")
    assert "'\\n' missing at the end" in newline.title
    assert replace.title.startswith("Edit output: expected the call to succeed; the call failed")
    assert "claude-code/read/arrow-not-tab" in [member.id for member in tab.members]


def _failing(scenario_id, expected, observed, why="", path="output", where="step 1 (Read)"):
    return {"id": scenario_id, "verdict": "fail", "reason": "x", "steps": [],
            "then": {"failures": [{"path": path, "expected": expected, "observed": observed, "why": why}]}}


def test_different_differences_are_different_groups():
    items = [_failing("a", "'x\\n'", "x", path="then.files[a.txt].content"),
             _failing("b", "'yy\\n'", "yy", path="then.files[b.txt].content"),
             _failing("c", "'x\\n'", "x\r\n", path="then.files[c.txt].content"),
             {"id": "d", "verdict": "error", "reason": "the target crashed (exit 7)", "steps": []},
             {"id": "e", "verdict": "error", "reason": "the target crashed (exit 9)", "steps": []},
             {"id": "f", "verdict": "pass", "reason": "", "steps": []}]
    found = groups.group(items)
    assert [[member.id for member in group.members] for group in found] == [["d", "e"], ["a", "b"], ["c"]]
    assert found[0].title == "error: the target crashed (exit N)"


def test_a_target_that_does_not_start_prints_at_most_ten_lines(tmp_path):
    import subprocess
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--target", "cmd:/nonexistent", "--no-snapshots",
                           "--color", "never"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", "HOME": str(tmp_path)})
    assert done.returncode == 1
    lines = (done.stdout + done.stderr).splitlines()
    assert len(lines) <= 10, "\n".join(lines)
    assert lines[0].startswith("TARGET DID NOT START: ") and lines[0].endswith(" scenarios did not run")
    assert int(lines[0].split(": ")[1].split()[0]) > 500  # the whole catalog, counted on one line


def test_ids_wrap_at_slashes_and_payloads_are_cut_in_the_middle():
    assert wrap.wrap_id("claude-code/edit/replace-all-new-string-contains-old", 24) == [
        "claude-code/edit/", "replace-all-new-string-c", "ontains-old"]
    assert wrap.wrap_id("claude-code/edit/replace-all", 20) == ["claude-code/edit/", "replace-all"]
    payload = "A" * 5000 + "END"
    cut = wrap.cut_middle(payload, 200)
    assert len(cut) <= 200 and cut.endswith("END") and cut.startswith("AAAA")
    assert f"of 5,003 characters cut, sha256 {wrap.digest(payload)}" in cut
    assert wrap.cut_middle("short", 200) == "short"


def test_the_terminal_shows_the_matrix_and_three_groups_first_and_q_one_line_each(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    target = f"{PLANTED} tab-numbers no-trailing-newline replace-first"
    assert main(["run", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--color", "never",
                 "--target", target]) == 1
    lines = capsys.readouterr().out.splitlines()
    heading = lines.index("FAILURES BY CAUSE: 41 scenarios in 3 groups")
    first_detail = next(number for number, line in enumerate(lines) if line.startswith("FAIL "))
    table = next(number for number, line in enumerate(lines) if "claude-code │" in line)
    assert table < heading < first_detail
    assert all(len(line) <= 80 for line in lines[table - 3:table + 4] + lines[heading:first_detail])
    causes = [line for line in lines[heading:first_detail] if line[:1].isdigit()]
    assert [line.split(" × ")[0] for line in causes] == ["1. 29", "2. 9", "3. 3"]
    assert sum(1 for line in lines if line.startswith("FAIL ") and line.endswith(")")) == 41 - 3  # one line each
    assert main(["run", "-q", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--color", "never",
                 "--target", target]) == 1
    quiet = capsys.readouterr().out.splitlines()
    failing = [line for line in quiet if line.startswith("FAIL ")]
    assert len(failing) == 41 and all(len(line) <= 80 for line in failing)
    assert any(line.startswith("FAIL claude-code/read/arrow-not-tab  step 1 (Read)") for line in failing)


def test_markdown_html_and_step_summary_show_the_groups_and_new_failures_first(tmp_path, monkeypatch):
    target = f"{PLANTED} tab-numbers no-trailing-newline replace-first"
    baseline = tmp_path / "baseline.yaml"
    common = ["run", "-q", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--target", target]
    assert main(common + ["--write-baseline", str(baseline)]) == 1
    text = baseline.read_text()
    assert "claude-code/read/arrow-not-tab:" in text
    baseline.write_text("\n".join(line for line in text.splitlines()
                                  if not line.startswith("claude-code/read/arrow-not-tab:")) + "\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert main(common + ["--baseline", str(baseline), "--markdown", str(tmp_path / "r.md"),
                          "--html", str(tmp_path / "r.html")]) == 1
    for name in ("r.md", "summary.md"):
        markdown = (tmp_path / name).read_text()
        assert "### Failures by cause on " in markdown and ": 1 in 1 group" in markdown
        details = markdown[markdown.index("### Failures and differences"):]
        first = details[details.index("<summary>"):details.index("</summary>")]
        assert "claude-code/read/arrow-not-tab" in first and "fail" in first  # the new one, before 29 known
    html = (tmp_path / "r.html").read_text()
    assert "Failures by cause on " in html and "<b>1</b> ×" in html


def test_harness_report_shows_the_groups_after_the_matrix_and_q_one_line_each(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    report = tmp_path / "r.json"
    assert main(["run", "-q", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--json", str(report),
                 "--target", f"{PLANTED} tab-numbers no-trailing-newline replace-first"]) == 1
    capsys.readouterr()
    assert main(["report", str(report), "--profile", "claude-code", "--color", "never"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heading = next(n for n, line in enumerate(lines) if line.startswith("FAILURES BY CAUSE on "))
    assert lines[heading].endswith(": 41 in 3 groups")
    first_detail = next(n for n, line in enumerate(lines) if line.endswith(": fail") and " on " in line)
    assert heading < first_detail
    assert sum(1 for line in lines if line.startswith(("fail (cause 1): ", "fail (cause 2): ", "fail (cause 3): "))) == 38
    assert main(["report", "-q", str(report), "--profile", "claude-code", "--color", "never"]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert len([line for line in quiet if line.startswith("FAIL ")]) == 41 and all(len(line) <= 80 for line in quiet[1:])


def test_harness_report_matrix_prints_only_the_matrix_and_its_legend(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["run", "-q", "--profile", "claude-code", "--no-snapshots", "--jobs", "1", "--json", str(report),
                 "--target", f"{PLANTED} tab-numbers"]) == 1
    capsys.readouterr()
    assert main(["report", "--matrix", str(report), "--profile", "claude-code", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "legend" in out and "arrow-not-tab" in out
    assert "FAILURES BY CAUSE" not in out and "reason:" not in out and "planted 0.1.0: " not in out
