"""A target's name as a candidate gives it (hello ``name``) is bounded and made safe wherever it becomes a
file name (snapshot folder, ``--json DIR`` / ``--junit DIR`` files) or is repeated (JUnit classnames),
and two targets never share one report file."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.cli.main import main
from harness.targets.base import MAX_SLUG_BYTES, bounded_name, name_slug

SCENARIO = """\
id: claude-code/names/base
profile: claude-code
title: Read answers hello
source: test (a candidate answering hello)
given:
  files: {a.txt: "hello\\n"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect:
      output: {$contains: "hello"}
"""

CANDIDATE = """\
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    op = request.get("op")
    if op == "hello":
        answer = {"ok": True, "name": sys.argv[1] * int(sys.argv[2]),
                  "version": "1", "profiles": ["claude-code"]}
    elif op == "call":
        answer = {"ok": True, "output": "hello"}
    else:
        answer = {"ok": True}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
    if op == "bye":
        break
"""


def _setup(tmp_path: Path, monkeypatch, text: str, times: int) -> tuple[Path, str]:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "base.yaml").write_text(textwrap.dedent(SCENARIO), "utf-8")
    candidate = tmp_path / "named.py"
    candidate.write_text(CANDIDATE, "utf-8")
    # On its command line: the harness's environment does not reach a candidate in the sandbox.
    return folder, f"cmd:{sys.executable} {candidate} {shlex.quote(text)} {times}"


def test_a_long_hello_name_is_a_bounded_snapshot_folder(tmp_path, monkeypatch):
    folder, spec = _setup(tmp_path, monkeypatch, "N", 300)
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--snapshots", str(snaps), "--jobs", "1",
                 "--snapshot-update", "--target", spec]) == 0
    (made,) = snaps.iterdir()
    assert len(made.name.encode()) <= MAX_SLUG_BYTES
    assert made.name.startswith("cmd-NNNN")
    # and compared against the next run (the folder found again under its bounded name)
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--snapshots", str(snaps), "--jobs", "1",
                 "--target", spec]) == 0


def test_a_long_hello_name_in_a_json_and_junit_folder_is_a_bounded_file_name(tmp_path, monkeypatch):
    folder, spec = _setup(tmp_path, monkeypatch, "é", 300)  # two bytes a letter: 600 bytes
    json_dir, junit_dir = tmp_path / "json", tmp_path / "junit"
    json_dir.mkdir()
    junit_dir.mkdir()
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--jobs", "1",
                 "--json", str(json_dir), "--junit", str(junit_dir), "--target", spec, "--target", "reference"]) == 0
    names = sorted(path.name for path in json_dir.iterdir())
    assert len(names) == 2 and "reference.json" in names
    assert all(len(name.encode()) <= MAX_SLUG_BYTES + len(".json") for name in names)
    long_name = next(name for name in names if name != "reference.json")
    report = json.loads((json_dir / long_name).read_text("utf-8"))
    assert report["target"]["name"].startswith("é" * 200)  # visible, and bounded
    assert "100 more characters" in report["target"]["name"]
    assert len(list(junit_dir.iterdir())) == 2


def test_junit_does_not_repeat_a_huge_hello_name_whole(tmp_path, monkeypatch):
    folder, spec = _setup(tmp_path, monkeypatch, "N", 200_000)
    for number in range(5):
        (folder / f"copy{number}.yaml").write_text(
            textwrap.dedent(SCENARIO).replace("names/base", f"names/copy{number}"), "utf-8")
    junit = tmp_path / "r.xml"
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--jobs", "1", "-q",
                 "--junit", str(junit), "--target", spec]) == 0
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == 6
    assert all(case.get("classname").startswith("N" * 200) for case in cases)
    assert junit.stat().st_size < 20_000


def test_name_slug_keeps_short_names_and_cuts_long_ones_with_a_hash():
    assert name_slug("cmd", "my impl/1") == "cmd-my-impl-1"
    long_a, long_b = name_slug("cmd", "x" * 500 + "a"), name_slug("cmd", "x" * 500 + "b")
    assert long_a != long_b
    assert len(long_a.encode()) <= MAX_SLUG_BYTES and len(name_slug("cmd", "日" * 200).encode()) <= MAX_SLUG_BYTES
    assert bounded_name("short") == "short"


def test_two_targets_with_one_hello_name_keep_a_report_each_in_a_folder(tmp_path, monkeypatch):
    folder, spec = _setup(tmp_path, monkeypatch, "same", 1)
    json_dir, junit_dir = tmp_path / "json", tmp_path / "junit"
    json_dir.mkdir()
    junit_dir.mkdir()
    other = spec + " --other"  # one adapter, two option sets: one hello name
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--jobs", "1", "-q",
                 "--json", str(json_dir), "--junit", str(junit_dir), "--target", spec, "--target", other]) == 0
    assert sorted(path.name for path in json_dir.iterdir()) == ["cmd-same-2.json", "cmd-same.json"]
    assert sorted(path.name for path in junit_dir.iterdir()) == ["cmd-same-2.xml", "cmd-same.xml"]
    specs = {json.loads((json_dir / name).read_text("utf-8"))["target"]["spec"]
             for name in ("cmd-same.json", "cmd-same-2.json")}
    assert specs == {spec, other}
    assert json.loads((json_dir / "cmd-same.json").read_text("utf-8"))["target"]["spec"] == spec


def test_a_second_targets_report_of_an_earlier_run_is_removed_when_the_run_starts(tmp_path):
    # A run interrupted before its second target began must not leave that target's old report
    # (`reference-2.json`) passing for this run's, as the first target's never does.
    from harness.report import stream
    from harness.run.options import RunOptions
    json_dir, junit_dir = tmp_path / "json", tmp_path / "junit"
    json_dir.mkdir()
    junit_dir.mkdir()
    for old in (json_dir / "reference.json", json_dir / "reference-2.json", junit_dir / "reference-2.xml",
                json_dir / "other.json"):
        old.write_text("an earlier run's\n", "utf-8")
    reports = stream.Reports(RunOptions(json=json_dir, junit=junit_dir, no_snapshots=True), [], several=True,
                             slugs=["reference", "reference"])
    reports.close(interrupted=True)
    assert sorted(path.name for path in json_dir.iterdir()) == ["other.json"]
    assert list(junit_dir.iterdir()) == []
