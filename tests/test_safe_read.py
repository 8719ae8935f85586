"""fileio.read_regular: reads what a file holds, within its cap, without reserving the cap."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from harness.util.fileio import read_regular


def test_a_small_file_read_with_a_huge_cap_does_not_reserve_the_cap(tmp_path):
    # Under an address-space limit far below the cap, a 28-byte file still reads (read(cap + 1)
    # reserved the whole cap first: MemoryError).
    path = tmp_path / "state.json"
    path.write_bytes(b'{"format": 1, "results": []}')
    code = textwrap.dedent(f"""
        import resource, sys
        from harness.util.fileio import read_regular
        resource.setrlimit(resource.RLIMIT_AS, (900 * 1024 * 1024, resource.RLIM_INFINITY))
        sys.stdout.write(read_regular({str(path)!r}, 4 * 1024 ** 3).decode())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"format": 1, "results": []}'


def test_a_file_larger_than_its_size_said_is_read_whole_and_still_capped():
    # /proc files say size 0 and hold more: what the file holds is read, in chunks, up to the cap.
    text = read_regular("/proc/self/status", 1024 * 1024, follow_link=True)
    assert b"Name:" in text and len(text) > 0
    with pytest.raises(OSError, match="more than 10 bytes"):
        read_regular("/proc/self/status", 10, follow_link=True)


def test_a_file_over_the_cap_is_refused(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(OSError, match="more than 100 bytes"):
        read_regular(path, 100)
    assert read_regular(path, 101) == b"x" * 101
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        read_regular(tmp_path / "fifo", 100)


def test_a_snapshot_is_read_without_reserving_the_snapshot_cap(tmp_path):
    # Each snapshot read reserved HARNESS_MAX_SCENARIO_FILE (16 MiB) first; under a cap of 1 GiB set
    # for the run and an address-space limit below it, a small snapshot still reads.
    store = tmp_path / "snaps" / "reference" / "claude-code"
    store.mkdir(parents=True)
    (store / "a.yaml").write_text("scenario: claude-code/a\\nsteps: []\\n", "utf-8")
    code = textwrap.dedent(f"""
        import resource, sys
        from harness.record.snapshot import SnapshotStore
        resource.setrlimit(resource.RLIMIT_AS, (900 * 1024 * 1024, resource.RLIM_INFINITY))
        sys.stdout.write(SnapshotStore({str(tmp_path / "snaps")!r}, "reference").read("claude-code/a"))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HARNESS_MAX_SCENARIO_FILE": str(4 * 1024 ** 3)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("scenario: claude-code/a")


def test_a_descriptor_is_read_whole_within_its_cap_as_a_file_object_is(tmp_path):
    from harness.util.fileio import read_capped, read_fd_capped
    path = tmp_path / "f"
    path.write_bytes(b"x" * 101)
    for size, cap in ((101, 200), (101, 101), (101, 100), (0, 200), (10, 200), (500, 50)):
        with open(path, "rb") as handle:
            expected = read_capped(handle, size, cap)
        fd = os.open(path, os.O_RDONLY)
        try:
            assert read_fd_capped(fd, size, cap) == expected, (size, cap)
        finally:
            os.close(fd)
    # /proc files say size 0 and hold more: read in chunks, up to one byte past the cap.
    fd = os.open("/proc/self/status", os.O_RDONLY)
    try:
        assert b"Name:" in read_fd_capped(fd, 0, 1024 * 1024)
    finally:
        os.close(fd)
    fd = os.open("/proc/self/status", os.O_RDONLY)
    try:
        assert len(read_fd_capped(fd, 0, 10)) == 11
    finally:
        os.close(fd)


def test_a_file_given_a_second_name_is_the_same_bytes_and_replaces_a_link_there(tmp_path, monkeypatch):
    from harness.util import fileio
    source = tmp_path / "last-reference.json"
    source.write_bytes(b'{"results": []}')
    outside = tmp_path / "outside"
    outside.write_bytes(b"not to be written")
    (tmp_path / "last.json").symlink_to(outside)  # a link there is replaced, never written through
    fileio.link_replacing(source, tmp_path / "last.json")
    assert (tmp_path / "last.json").read_bytes() == b'{"results": []}' and outside.read_bytes() == b"not to be written"
    assert (tmp_path / "last.json").stat().st_ino == source.stat().st_ino  # no byte copied
    # The source replaced afterwards (the next run's state, renamed over it) leaves the other name alone.
    fileio.write_replacing(source, b"next")
    assert (tmp_path / "last.json").read_bytes() == b'{"results": []}'

    def no_hard_links(*args, **kwargs):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(fileio.os, "link", no_hard_links)
    fileio.link_replacing(source, tmp_path / "last.json")  # copied instead
    assert (tmp_path / "last.json").read_bytes() == b"next"
    assert (tmp_path / "last.json").stat().st_ino != source.stat().st_ino
    assert sorted(path.name for path in tmp_path.iterdir()) == ["last-reference.json", "last.json", "outside"]
