"""The escape check around a workspace never lists a folder through a link the candidate put there."""

from __future__ import annotations

import shutil

from harness.containment.enclosure import Enclosure
from harness.run.judge import check_then


def test_a_sibling_folder_replaced_by_a_link_is_reported_and_not_listed_through(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_rsa_of_root").write_text("k", "utf-8")
    enclosure = Enclosure(parent=str(tmp_path))
    try:
        sibling = enclosure.base / "sibling"
        shutil.rmtree(sibling)
        sibling.symlink_to(private)
        found = enclosure.escapes()
        assert any("replaced by a symbolic link" in line and str(private) in line for line in found), found
        assert not any("id_rsa_of_root" in line for line in found), found
    finally:
        (enclosure.base / "sibling").unlink()
        (enclosure.base / "sibling").mkdir()
        enclosure.remove()


def test_others_unchanged_cannot_pass_when_both_states_were_cut_short(tmp_path, monkeypatch):
    # A change past the recording's cut is not seen: with both states cut short, the check fails
    # saying it cannot be decided instead of passing.
    from harness.run.workspace import Workspace
    from harness.util import limits
    monkeypatch.setattr(limits, "MAX_ENTRIES", 5)
    workspace = Workspace(parent=str(tmp_path))
    try:
        for n in range(8):
            (workspace.root / f"f{n}.txt").write_text("x", "utf-8")
        workspace.initial = workspace.state(with_text=False)
        assert "<capped>" in workspace.initial
        (workspace.root / "f7.txt").write_text("changed past the cut", "utf-8")
        failures = check_then(workspace, {"others_unchanged": True}, {"workspace": str(workspace.root)})
        assert any("cannot be decided" in str(failure.why) for failure in failures), failures
    finally:
        workspace.remove()
