"""harness/containment/cleanup.py: a folder chain deeper than any recursive walk is made shallow, same content."""

from __future__ import annotations

import os

from harness.containment import cleanup


def _chain(top, levels: int) -> None:
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(levels):
            os.mkdir("d", dir_fd=fd)
            if level == levels // 2:
                with open(os.open("f.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as handle:
                    handle.write("mid")
            sub = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        os.symlink("/etc", "out", dir_fd=fd)  # never followed
    finally:
        os.close(fd)


def _depth_and_count(top) -> tuple[int, int, int]:
    deepest = files = links = 0
    for dirpath, dirnames, filenames in os.walk(top):
        deepest = max(deepest, os.path.relpath(dirpath, top).count(os.sep) + 1)
        files += sum(1 for name in filenames if not os.path.islink(os.path.join(dirpath, name)))
        links += sum(1 for name in filenames + dirnames if os.path.islink(os.path.join(dirpath, name)))
    return deepest, files, links


def test_a_chain_of_3000_folders_is_moved_up_until_no_branch_is_deeper_than_the_bound(tmp_path):
    top = tmp_path / "top"
    top.mkdir()
    _chain(top, 3000)
    moved = cleanup.flatten(top, depth=64)
    deepest, files, links = _depth_and_count(top)
    assert moved >= 3000 // 64 and deepest <= 65
    assert (files, links) == (1, 1)  # the same content: the file half-way down and the link at the bottom
    assert len([name for name in os.listdir(top) if name.startswith(".flat-")]) == moved
    assert cleanup.flatten(top, depth=64) == 0  # already shallow


def test_folders_below_a_mode_000_folder_are_reached(tmp_path):
    top = tmp_path / "top"
    top.mkdir()
    _chain(top, 200)
    locked = top / "d" / "d"
    os.chmod(locked, 0)
    try:
        cleanup.flatten(top, depth=8)
        assert _depth_and_count(top)[0] <= 9
    finally:
        for dirpath, dirnames, _ in os.walk(top):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o700)
