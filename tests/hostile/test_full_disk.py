"""A full disk under a report's folder: one line naming the file, and every other report still written.

The file system is a tmpfs of 4 KiB mounted for the test (as root) and filled; where no tmpfs can
be mounted the test is skipped, saying why.
"""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest

from tests.hostile.conftest import harness_run, write_scenarios

SCENARIO = """
id: hostile/full-disk-{number}
profile: claude-code
title: a scenario whose report fills a tiny file system
source: test
given:
  files:
    big.txt: {{pattern: "0123456789abcdef", size: 8192}}
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/big.txt"}}
    expect: {{output: "not what it holds"}}
"""


@pytest.fixture
def tiny(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)  # full: not a byte more fits
        try:
            while os.write(fd, b"\0" * 1024):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.mark.parametrize("full", ["json", "junit", "markdown", "html"])
def test_a_full_disk_is_one_line_naming_the_file_and_the_other_reports_are_written(tmp_path, tiny, full):
    for number in range(3):
        write_scenarios(tmp_path / "scenarios", SCENARIO.format(number=number), f"s{number}.yaml")
    suffix = {"json": "json", "junit": "xml", "markdown": "md", "html": "html"}
    paths = {kind: (tiny if kind == full else tmp_path) / f"report-{uuid.uuid4().hex[:6]}.{suffix[kind]}"
             for kind in suffix}
    report = [arg for kind, path in paths.items() if kind != "json" for arg in (f"--{kind}", str(path))]
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", "cmd:python -m reference_impl.serve", *report,
                          *(("--json", str(paths["json"])) if full == "json" else ()))
    said = [line for line in (outcome.stdout + outcome.stderr).splitlines() if str(paths[full]) in line]
    assert len(said) == 1 and "No space left on device" in said[0] and "cannot write" in said[0], outcome.stdout + outcome.stderr
    assert outcome.code == 2
    assert not paths[full].exists() and os.listdir(tiny) == ["filler"]  # nothing half-written left, no .partial
    for kind, path in paths.items():
        if kind not in (full, "json"):
            assert path.stat().st_size > 0, kind
