"""Files the harness writes where a checkout may already hold something: its state folder
(``./.harness``) and the report files a CI job names.

A pull request can commit ``.harness/last.json`` as a link to a file elsewhere, or ``.harness``
as a link to a folder; the harness writes its state after every run, as root in CI. A report file
(``--json out.json``) and its ``.partial`` can be links too. None is written through: a link is
replaced by the file, a linked state folder is not used, and reading the state never blocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.hostile.conftest import ROOT, write_scenarios

SCENARIO = """
id: hostile/state
profile: claude-code
title: a run in a checkout whose state folder came with a pull request
source: test
given:
  files: {a.txt: "x\\n"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect: {output: "nothing like this"}
"""
VICTIM = "precious\n"


def run(cwd, *extra: str, command: str = "run", timeout: float = 60) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "HARNESS_STATE_DIR"}
    argv = [sys.executable, "-m", "harness", command, *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def scenario_args(tmp_path) -> list[str]:
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    return ["--no-builtin", "--scenarios", str(tmp_path / "scenarios"), "--no-snapshots"]


def test_state_files_that_are_links_are_replaced_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM, "utf-8")
    state = tmp_path / ".harness"
    state.mkdir()
    names = ("last.json", "last-reference.json", "last-reference.json.partial", "lastfailed-reference.json")
    for name in names:
        (state / name).symlink_to(victim)
    done = run(tmp_path, *scenario_args(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr  # the scenario fails: its expectation is wrong
    assert victim.read_text("utf-8") == VICTIM
    assert not any((state / name).is_symlink() for name in names)
    assert json.loads((state / "lastfailed-reference.json").read_text("utf-8")) == ["hostile/state"]
    assert json.loads((state / "last.json").read_text("utf-8"))["results"][0]["id"] == "hostile/state"
    shown = run(tmp_path, "hostile/state", "--no-builtin", "--scenarios", str(tmp_path / "scenarios"), command="show")
    assert "last observation" in shown.stdout


def test_a_state_folder_that_is_a_link_is_not_used(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / ".harness").symlink_to(elsewhere)
    run(tmp_path, *scenario_args(tmp_path))
    assert list(elsewhere.iterdir()) == []
    assert run(tmp_path, *scenario_args(tmp_path), "--lf").returncode == 1


def test_a_fifo_or_a_broken_file_as_state_neither_hangs_nor_crashes(tmp_path):
    state = tmp_path / ".harness"
    state.mkdir()
    os.mkfifo(state / "lastfailed-reference.json")
    (state / "last.json").write_text('{"results": [{"no id": 1}], "target": 7}', "utf-8")
    done = run(tmp_path, *scenario_args(tmp_path), "--lf", timeout=30)
    assert done.returncode == 1
    (state / "last.json").unlink()
    (state / "last.json").write_text('{"results": [{"id": "hostile/state"}], "target": 7}', "utf-8")
    shown = run(tmp_path, "hostile/state", "--no-builtin", "--scenarios", str(tmp_path / "scenarios"), command="show")
    assert shown.returncode == 0 and "last observation" in shown.stdout


def test_report_files_that_are_links_are_replaced_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM, "utf-8")
    out = tmp_path / "out"
    out.mkdir()
    names = ("r.json", "r.json.partial", "r.xml", "r.xml.partial", "r.md", "r.html")
    for name in names:
        (out / name).symlink_to(victim)
    done = run(tmp_path, *scenario_args(tmp_path), "--json", str(out / "r.json"), "--junit", str(out / "r.xml"),
               "--markdown", str(out / "r.md"), "--html", str(out / "r.html"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert victim.read_text("utf-8") == VICTIM
    assert not any((out / name).is_symlink() for name in names)
    assert json.loads((out / "r.json").read_text("utf-8"))["results"][0]["verdict"] == "fail"
    for name in ("r.md", "r.html"):
        (out / name).unlink()
        (out / name).symlink_to(victim)
    reported = run(tmp_path, str(out / "r.json"), "--no-builtin", "--markdown", str(out / "r.md"),
                   "--html", str(out / "r.html"), command="report")
    assert reported.returncode in (0, 1) and victim.read_text("utf-8") == VICTIM
    assert not (out / "r.md").is_symlink() and not (out / "r.html").is_symlink()


def test_a_file_copied_over_a_name_is_copied_in_pieces_not_held_whole(tmp_path):
    # The end of a run copies its state file (the whole run's JSON report, tens of megabytes for a
    # large catalog) to last.json: held whole, it made memory grow with the catalog.
    import tracemalloc

    from harness.util.fileio import write_replacing
    source, copy = tmp_path / "last-reference.json", tmp_path / "last.json"
    source.write_bytes(os.urandom(1024) * 8192)  # 8 MiB
    os.symlink(tmp_path / "elsewhere", copy)
    tracemalloc.start()
    with open(source, "rb") as written:
        write_replacing(copy, written)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert copy.read_bytes() == source.read_bytes() and not copy.is_symlink()
    assert not (tmp_path / "elsewhere").exists()
    assert peak < 2**20, peak
