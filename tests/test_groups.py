"""Failures grouped by cause (harness/report/groups.py), and text fitted to 80 columns (harness/report/wrap.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.cli import main
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
    assert [group.count for group in found] == [18, 9, 3]
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
    assert any("did not start" in line for line in lines)


def test_ids_wrap_at_slashes_and_payloads_are_cut_in_the_middle():
    assert wrap.wrap_id("claude-code/edit/replace-all-new-string-contains-old", 24) == [
        "claude-code/edit/", "replace-all-new-string-c", "ontains-old"]
    assert wrap.wrap_id("claude-code/edit/replace-all", 20) == ["claude-code/edit/", "replace-all"]
    payload = "A" * 5000 + "END"
    cut = wrap.cut_middle(payload, 200)
    assert len(cut) <= 200 and cut.endswith("END") and cut.startswith("AAAA")
    assert f"of 5,003 characters cut, sha256 {wrap.digest(payload)}" in cut
    assert wrap.cut_middle("short", 200) == "short"
