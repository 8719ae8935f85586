"""The candidate's working folder (harness/run/working_folder.py): laid out as each scenario's given."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run import working_folder
from harness.run.working_folder import MIRRORED_BYTES, WorkingFolder
from harness.scenario.content_spec import to_bytes


def test_generated_lines_past_the_mirror_limit_are_laid_out_empty_without_being_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []

    def counting(spec):
        made.append(spec)
        return to_bytes(spec)
    monkeypatch.setattr(working_folder, "to_bytes", counting)
    huge = {"lines": {"count": MIRRORED_BYTES, "template": "x"}}  # two bytes a line: twice the limit
    small = {"lines": 3}
    folder = WorkingFolder(str(tmp_path))
    try:
        folder.reset({"files": {"huge.txt": huge, "small.txt": small, "plain.txt": "text"}})
        assert (Path(folder.path) / "huge.txt").read_bytes() == b""  # its name is what a relative path reaches
        assert (Path(folder.path) / "small.txt").read_bytes() == b"line 1\nline 2\nline 3\n"
        assert (Path(folder.path) / "plain.txt").read_bytes() == b"text"
        assert huge not in made and small in made
        assert folder.changes() == []
    finally:
        folder.remove()


def test_content_just_within_the_limit_is_mirrored(tmp_path: Path) -> None:
    folder = WorkingFolder(str(tmp_path))
    try:
        folder.reset({"files": {"edge.txt": {"pattern": "ab", "size": MIRRORED_BYTES},
                                "over.txt": {"pattern": "ab", "size": MIRRORED_BYTES + 1}}})
        assert (Path(folder.path) / "edge.txt").stat().st_size == MIRRORED_BYTES
        assert (Path(folder.path) / "over.txt").stat().st_size == 0
    finally:
        folder.remove()
