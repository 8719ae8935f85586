"""On a file system whose time stamps come from the kernel's coarse clock (a tick of some
milliseconds), two writes in one tick leave the same ctime: a file rewritten with as many bytes in
the tick the harness last read it keeps its inode, size, mode, mtime and ctime. The state read after
each step then took the old record from its cache, and a canary rewritten and restored in the tick
it was made went unseen.

Kernels since 6.13 give tmpfs, ext4, xfs and btrfs a fine ctime once it was looked at; ramfs keeps
the coarse one, so the tests mount one (root only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.containment.enclosure import Enclosure
from harness.run.judge import check_then
from harness.run.workspace import Workspace

COARSE = 5  # CLOCK_REALTIME_COARSE (Linux): the clock file time stamps are taken from


@pytest.fixture
def coarse_folder(tmp_path):
    """A ramfs mounted in ``tmp_path`` (unmounted after), or a skip when none can be mounted."""
    point = tmp_path / "ramfs"
    point.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a ramfs needs root")
    done = subprocess.run(["mount", "-t", "ramfs", "ramfs", str(point)], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"no ramfs can be mounted here: {done.stderr.strip()}")
    try:
        probe = point / "probe"
        probe.write_text("1")
        first = probe.stat().st_ctime_ns
        probe.write_text("2")
        if probe.stat().st_ctime_ns != first and (probe.write_text("3"), probe.stat().st_ctime_ns)[1] != first:
            pytest.skip("this ramfs has fine time stamps")
        probe.unlink()
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=30)


def _next_tick() -> None:
    start = __import__("time").clock_gettime_ns(COARSE)
    while __import__("time").clock_gettime_ns(COARSE) == start:
        pass


def test_a_file_rewritten_with_as_many_bytes_in_the_tick_it_was_read_is_read_again(coarse_folder):
    ws = Workspace(parent=str(coarse_folder))
    try:
        tried = 0
        while tried < 20:
            tried += 1
            _next_tick()  # a whole tick ahead: the reading and the rewrite fall in it
            (ws.root / "a.txt").write_text("aaa\n")
            before = ws.state()
            ctime = os.stat(ws.root / "a.txt").st_ctime_ns
            (ws.root / "a.txt").write_text("bbb\n")
            if os.stat(ws.root / "a.txt").st_ctime_ns == ctime:
                break  # the same tick: same inode, size, mode, mtime and ctime
        else:
            pytest.skip("the rewrite never fell in the tick of the reading (a loaded machine)")
        assert before["a.txt"]["text"] == "aaa\n"
        assert ws.state()["a.txt"]["text"] == "bbb\n"
    finally:
        ws.remove()


def test_a_file_laid_out_and_rewritten_in_the_same_tick_is_read_again(coarse_folder):
    for _ in range(20):
        ws = Workspace(parent=str(coarse_folder))
        try:
            _next_tick()
            ws.populate({"files": {"a.txt": "aaa\n"}}, {"workspace": str(ws.root)}, record_initial=True)
            ctime = os.stat(ws.root / "a.txt").st_ctime_ns
            (ws.root / "a.txt").write_text("bbb\n")
            if os.stat(ws.root / "a.txt").st_ctime_ns != ctime:
                continue
            assert ws.state()["a.txt"]["text"] == "bbb\n"
            assert [f.path for f in check_then(ws, {"others_unchanged": True}, {})] == ["then.others_unchanged[a.txt]"]
            return
        finally:
            ws.remove()
    pytest.skip("the rewrite never fell in the tick of the laying out (a loaded machine)")


def test_a_canary_rewritten_and_restored_in_the_tick_it_was_made_is_an_escape(coarse_folder):
    for _ in range(5):
        _next_tick()
        enclosure = Enclosure(parent=str(coarse_folder))
        try:
            enclosure.place()
            canary = Path(enclosure.base) / "canary.txt"
            info = os.stat(canary)
            original = canary.read_bytes()
            canary.write_bytes(b"rewritten")
            canary.write_bytes(original)
            os.utime(canary, ns=(info.st_atime_ns, info.st_mtime_ns))
            assert enclosure.escapes() == [f"changed {canary} (rewritten: inode or ctime differs)"]
        finally:
            enclosure.remove()


def test_coarse_time_stamps_are_told_when_a_tick_passes_between_the_probe_s_two_changes(coarse_folder, monkeypatch):
    # Each write of the probe lands in a tick of its own, as on a loaded machine: the two changes of
    # each canary never share a ctime. Taken for fine time stamps, the records of files rewritten in
    # the tick they were read would be reused (the test above, read stale).
    real = Path.write_bytes

    def in_a_tick_of_its_own(self: Path, data: bytes) -> int:
        _next_tick()
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", in_a_tick_of_its_own)
    enclosure = Enclosure(parent=str(coarse_folder))
    try:
        assert enclosure.coarse_times
    finally:
        monkeypatch.undo()
        enclosure.remove()


def test_fine_time_stamps_are_not_taken_for_coarse_ones(tmp_path):
    # tmpfs and disks of kernels since 6.13 give a change whose ctime was looked at a fine ctime: the
    # records of unchanged files are reused at once there. (A machine whose file system here is
    # coarse skips.)
    probe = tmp_path / "probe"
    probe.write_text("1")
    first = probe.stat().st_ctime_ns
    probe.write_text("2")
    if probe.stat().st_ctime_ns == first:
        pytest.skip("time stamps here come from the coarse clock")
    enclosure = Enclosure(parent=str(tmp_path))
    try:
        assert not enclosure.coarse_times
    finally:
        enclosure.remove()
