"""--run-as hands the workspace to the candidate's user: never through a folder swapped for a link.

The candidate owns its workspace while the harness gives it the files the harness made there, and
may swap a folder for a link to ``/etc`` between the harness's looking at it and going in: a walk by
path then hands the link's target to the candidate's user, as root.
"""

from __future__ import annotations

import os

import pytest

from harness.targets.cmd.target import CmdTarget

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="changing owners needs root")
def test_a_folder_swapped_for_a_link_during_the_hand_over_is_not_followed(tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "shadow").write_text("root's", "utf-8")
    workspace = tmp_path / "ws"
    (workspace / "a").mkdir(parents=True)
    (workspace / "a" / "x.txt").write_text("x", "utf-8")
    real_chown = os.chown

    def swap_after(path, dir_fd=None):
        if os.path.basename(str(path)) == "a" and not (tmp_path / "a.real").exists():
            base = str(workspace) if dir_fd is None else f"/proc/self/fd/{dir_fd}"
            os.rename(os.path.join(base, "a"), tmp_path / "a.real")
            os.symlink(victim, os.path.join(base, "a"))  # what a racing candidate does

    def chown(path, uid, gid, *, dir_fd=None, follow_symlinks=True):  # a walk by descriptors: looked at, changed
        real_chown(path, uid, gid, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        if dir_fd is not None:
            swap_after(path, dir_fd)

    real_islink = os.path.islink

    def islink(path):  # a walk by path looks, then goes in: the swap lands in between
        answer = real_islink(path)
        swap_after(path)
        return answer

    monkeypatch.setattr(os, "chown", chown)
    monkeypatch.setattr(os.path, "islink", islink)
    target = CmdTarget("cmd:true")
    target._uid, target._gid = NOBODY, NOBODY
    target._hand_over(workspace)
    assert (tmp_path / "a.real").exists(), "the swap was not made: the test did not test"
    assert (victim / "shadow").stat().st_uid == 0 and victim.stat().st_uid == 0
    assert workspace.stat().st_uid == NOBODY


def test_making_a_locked_tree_searchable_never_changes_a_link_s_target(tmp_path, monkeypatch):
    # Removal makes a candidate's mode-000 folders searchable first; a folder swapped for a link to
    # /etc between the look and the chmod had chmod follow it (0700 on root's folder).
    from harness.containment import cleanup
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    os.chmod(victim, 0o755)
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    os.chmod(tree / "a" / "b", 0)
    real_lstat = os.lstat

    def lstat(path, *, dir_fd=None):  # the look, then the swap
        info = real_lstat(path, dir_fd=dir_fd)
        if str(path) == "a" and dir_fd is not None and not (tmp_path / "a.real").exists():
            os.rename(tree / "a", tmp_path / "a.real")
            os.symlink(victim, tree / "a")
        return info

    monkeypatch.setattr(os, "lstat", lstat)
    cleanup.make_searchable(tree)
    monkeypatch.undo()
    assert (tmp_path / "a.real").exists(), "the swap was not made: the test did not test"
    assert victim.stat().st_mode & 0o777 == 0o755
    os.chmod(tmp_path / "a.real" / "b", 0o700)
