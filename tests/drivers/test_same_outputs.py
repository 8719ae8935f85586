"""harness.drivers.same_outputs: what it masks (only what differs between two runs of the same code) and what it compares."""

from __future__ import annotations

from pathlib import Path

from harness.drivers.same_outputs import compare, masked


def test_timings_start_times_and_workspace_names_are_masked_and_nothing_else():
    one = masked('{"seconds": 0.0123, "started": "2026-11-28T04:00:01Z", "reason": "at /dev/shm/harness-ab_1/ws-7/a.txt"}\n'
                 "reference 0.1.0 — 839 scenarios in 3.35s   \n", "/repo")
    two = masked('{"seconds": 1.5, "started": "2026-11-29T05:10:00Z", "reason": "at /tmp/harness-zz9/ws/a.txt"}\n'
                 "reference 0.1.0 — 839 scenarios in 12.1s\n", "/repo")
    assert one == two
    assert masked('"verdict": "pass"', "/repo") != masked('"verdict": "fail"', "/repo")
    assert masked("cmd:/repo/.venv/bin/python", "/repo") == "cmd:<repo>/.venv/bin/python"


def test_compare_names_the_files_that_differ_or_are_missing(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "s").mkdir(parents=True)
        (folder / "s" / "same.yaml").write_text("x\n")
    (a / "s" / "changed.json").write_text("1")
    (b / "s" / "changed.json").write_text("2")
    (a / "only-here.txt").write_text("")
    assert compare(a, b) == ["only-here.txt", "s/changed.json"]
    assert compare(a, a) == []
