"""Actions that set a file's mtime exactly: kept, moved back, moved by less than a second."""

from __future__ import annotations

import os

import pytest

from harness.run.workspace import Workspace, mtime_after


@pytest.fixture
def workspace():
    ws = Workspace()
    yield ws
    ws.remove()


def test_mtime_specs_are_offsets_from_the_mtime_before_the_action():
    assert mtime_after("same", 10**18) == 10**18
    assert mtime_after("-5s", 10**18) == 10**18 - 5 * 10**9
    assert mtime_after("+500ms", 10**18) == 10**18 + 5 * 10**8
    assert mtime_after("+1.5us", 10**18) == 10**18 + 1500
    assert mtime_after("-1ns", 10**18) == 10**18 - 1
    with pytest.raises(ValueError):
        mtime_after("same", None)
    with pytest.raises(ValueError):
        mtime_after("5s", 10**18)


def test_write_with_mtime_same_changes_content_but_not_size_or_mtime(workspace):
    workspace.populate({"files": {"a.txt": "counter = 1\n"}}, {})
    before = os.stat(workspace.path("a.txt"))
    workspace.act("write", "a.txt", content="counter = 7\n", mtime="same")
    after = os.stat(workspace.path("a.txt"))
    assert workspace.path("a.txt").read_text() == "counter = 7\n"
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_touch_moves_the_mtime_back_and_by_fractions_of_a_second(workspace):
    workspace.populate({"files": {"a.txt": "x"}}, {})
    start = os.stat(workspace.path("a.txt")).st_mtime_ns
    workspace.act("touch", "a.txt", mtime="-5s")
    assert os.stat(workspace.path("a.txt")).st_mtime_ns == start - 5 * 10**9
    workspace.act("append", "a.txt", content="y", mtime="+1ms")
    assert os.stat(workspace.path("a.txt")).st_mtime_ns == start - 5 * 10**9 + 10**6


def test_without_mtime_a_write_still_moves_it_a_second_forward(workspace):
    workspace.populate({"files": {"a.txt": "x"}}, {})
    start = os.stat(workspace.path("a.txt")).st_mtime_ns
    workspace.act("write", "a.txt", content="y")
    assert os.stat(workspace.path("a.txt")).st_mtime_ns >= start + 10**9


def test_an_absolute_mtime_is_seconds_since_the_epoch():
    assert mtime_after("@1700000000.25", None) == 1_700_000_000_250_000_000
