"""A candidate that leaves a mode-000 tree (and an immutable file, where chattr works): still removed."""

from __future__ import annotations

from harness.workspace import Remover, Workspace
from tests.hostile.conftest import CANDIDATES, harness_run, write_scenarios

READ = """
id: hostile/locked
profile: claude-code
title: a candidate that locks its workspace
source: test
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
"""


def test_a_mode_000_tree_left_by_a_candidate_is_removed(tmp_path):
    write_scenarios(tmp_path / "scenarios", READ)
    spaces = tmp_path / "ws"
    spaces.mkdir()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode locked"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces))
    assert outcome.code == 0, outcome.stdout
    assert not list(spaces.iterdir()), "a workspace was left behind"
    assert "could not remove" not in outcome.stderr


def test_what_cannot_be_removed_is_named(tmp_path, monkeypatch):
    workspace = Workspace(parent=str(tmp_path))
    # No immutable flag can be set here (no CAP_LINUX_IMMUTABLE on tmpfs): a removal that leaves all in place.
    monkeypatch.setattr("shutil.rmtree", lambda *args, **kwargs: None)
    remover = Remover()
    remover.remove(workspace)
    remover.drain()
    assert remover.leftovers == [f"could not remove {workspace.base} (4 entries left)"]
