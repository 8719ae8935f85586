"""The capture driver and the claude-code snapshot masks, without the CLI.

Example: the CLI's note "your current working directory is /tmp/harness-claude-cwd-k3j2h1g0." is
stored as "your current working directory is ${cli-cwd}." so two captures give the same files.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from harness.drivers.capture_claude_code import main as capture
from harness.record import snapshot as snap
from harness.scenario import catalog
from harness.targets.claude_code import NOT_INSTALLED, ClaudeCodeTarget


def test_the_cli_scratch_folders_are_masked() -> None:
    text = ("Claude requested permissions to read from /tmp/harness-claude-home-ab_12cde/x.txt, but you "
            "haven't granted it yet. Note: your current working directory is /var/tmp/harness-claude-cwd-0123abcd.")
    masks = ClaudeCodeTarget.snapshot_masks
    assert snap.mask_text(text, masks) == ("Claude requested permissions to read from ${cli-home}/x.txt, but you "
                                    "haven't granted it yet. Note: your current working directory is ${cli-cwd}.")
    assert snap.mask_text("/tmp/harness-abcdefgh/ws/a.txt", masks) == "${workspace}/a.txt"


def test_a_target_s_masks_apply_to_its_own_snapshots_only(tmp_path: Path) -> None:
    """Masks come from the target handed to the checker, not from a registry filled when a target
    module is imported: another target's snapshot keeps such a path as it is."""
    text = "working directory is /var/tmp/harness-claude-cwd-0123abcd."
    assert snap.mask_text(text) == text
    result = {"id": "a/b", "profile": "p", "verdict": "pass", "steps": [{"tool": "Read", "args": {}, "output": text}]}
    mine = snap.Checker(snap.SnapshotStore(tmp_path, "claude"), update=True, masks=ClaudeCodeTarget.snapshot_masks)
    other = snap.Checker(snap.SnapshotStore(tmp_path, "reference"), update=True)
    mine.add(result)
    other.add(result)
    assert "${cli-cwd}" in (tmp_path / "claude" / "a" / "b.yaml").read_text()
    assert "harness-claude-cwd-0123abcd" in (tmp_path / "reference" / "a" / "b.yaml").read_text()


def test_a_capture_keeps_the_catalog_order_and_prints_every_scenario(tmp_path: Path) -> None:
    cat = catalog.load([catalog.builtin_dir()])
    # acp, and conditions such as permissions (the harness runs as root here), give reasons of their own
    scenarios = [s for s in cat.select(profiles=["claude-code"], keyword="open and not acp") if not s.requires]
    out = io.StringIO()
    slug, results = capture.capture("claude-code:cli=/nonexistent/claude", scenarios, [s.id for s in cat.scenarios],
                                    jobs=3, snapshots=tmp_path / "snapshots", json_dir=tmp_path, out=out)
    assert [r.scenario.id for r in results] == [s.id for s in scenarios]
    assert {r.reason for r in results} == {NOT_INSTALLED}
    assert out.getvalue().count(" skip ") == len(scenarios)
    report = json.loads((tmp_path / f"{slug}.json").read_text())
    assert report["summary"]["skip"] == len(scenarios)
    assert not (tmp_path / "snapshots").exists()  # skips record nothing
