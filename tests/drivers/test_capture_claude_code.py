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


def _slow_read(scenario_id: str) -> str:
    # The stub CLI (tests/adapters/misbehaving.py --mode slow) answers a call naming MISBEHAVE after a
    # pause, so two sessions are surely open at once; the Write leaves a file in each workspace.
    return (f"id: {scenario_id}\nprofile: claude-code\ntitle: t\nsource: test\n"
            'given:\n  files:\n    MISBEHAVE.txt: "x\\n"\nsteps:\n'
            '  - tool: Write\n    args: {file_path: "${workspace}/mine.txt", content: "' + scenario_id + '"}\n'
            '  - tool: Read\n    args: {file_path: "${workspace}/MISBEHAVE.txt"}\n    expect:\n      output: "x\\n"\n')


def test_parallel_capture_sessions_never_share_a_workspace(tmp_path: Path, scenario_from) -> None:
    # Two sessions at a time, each with its own runner: neither sees the other's workspace (a shared
    # runner put both in one enclosure, and each reported the other's files as an escape).
    import sys
    stub = Path(__file__).resolve().parents[1] / "adapters" / "misbehaving.py"
    scenarios = [scenario_from(_slow_read(f"claude-code/parallel/s{n}")) for n in range(4)]
    slug, results = capture.capture(f"cmd:{sys.executable} {stub} --mode slow --sleep 1", scenarios,
                                    [s.id for s in scenarios], jobs=2, snapshots=tmp_path / "snapshots",
                                    json_dir=None, out=io.StringIO())
    assert [(r.verdict.value, r.reason) for r in results] == [("pass", "")] * 4
    for result in results:
        assert sorted(result.workspace) == ["MISBEHAVE.txt", "mine.txt"], result.workspace


def test_a_cli_run_as_another_user_gets_a_keeper_that_user_can_run(tmp_path: Path, monkeypatch) -> None:
    # --run-as nobody: the keeper's interpreter must be one nobody can reach (the harness's own may
    # sit under a private folder such as /root); the permission scenarios failed to start otherwise.
    import os
    import pwd

    import pytest

    from harness.targets.base import TargetError
    from harness.targets.claude_code.session import ClaudeCodeSession
    from harness.util import processes
    if os.geteuid() != 0:
        pytest.skip("handing folders over to another user needs root")
    asked = []
    real_kept = processes.kept

    def kept(argv, **kwargs):
        asked.append(kwargs.get("for_others", False))
        return real_kept(argv, **kwargs)
    monkeypatch.setattr(processes, "kept", kept)
    nobody = pwd.getpwnam("nobody")
    import shutil
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="harness-test-run-as-"))  # pytest's own is private to root
    workspace = folder / "ws"
    workspace.mkdir()
    os.chmod(folder, 0o755)
    try:
        ClaudeCodeSession(cli=folder / "missing-claude", workspace=workspace,
                          user=(nobody.pw_uid, nobody.pw_gid)).close()
    except TargetError as exc:
        assert "cannot start Claude Code" in str(exc), exc  # the stub CLI is missing: only the keeper's choice counts
    finally:
        shutil.rmtree(folder)
    assert asked == [True]


def test_the_cli_project_folder_named_after_the_workspace_is_masked() -> None:
    # Seen through the ACP agent: a large result is saved under the project folder of its working
    # directory, whose name holds the workspace's random folder and its number in the run.
    for home, project in (("/tmp/harness-claude-home-ab12cd34", "-tmp-harness-is936joq-ws-73"),
                          ("/dev/shm/harness-claude-home-zz12cd34", "-dev-shm-harness-worker-mg66m1v4-harness-mh0vv0-x-ws")):
        text = f"Output too large (49.6KB). Full output saved to: {home}/.claude/projects/{project}/abc/tool-results/t.json"
        assert snap.mask_text(text, ClaudeCodeTarget.snapshot_masks) == ("Output too large (49.6KB). Full output saved to: "
                                        "${cli-home}/.claude/projects/${cli-project}/abc/tool-results/t.json")
