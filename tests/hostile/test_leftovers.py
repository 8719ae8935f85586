"""A candidate that leaves a mode-000 tree (and an immutable file, where chattr works): still removed;
a mount point in the workspace: never removed through, and named in every report (the run exits 1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema_rs
import pytest

from harness.containment import sandbox
from harness.containment.cleanup import Leftover, Remover, mounts_below
from harness.containment.enclosure import Enclosure
from harness.run.workspace import Workspace
from tests.hostile.conftest import CANDIDATES, ROOT, harness_run, write_scenarios

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


def test_a_workspace_swapped_for_a_link_to_elsewhere_is_removed_as_the_link_alone(tmp_path):
    """A candidate that replaces its workspace folder by a symbolic link to another folder: the
    clean-up removes the link, and never walks, chmods or removes what it points to."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "kept.txt").write_text("kept", "utf-8")
    os.chmod(victim / "sub", 0o755)
    enclosure = Enclosure(parent=str(tmp_path))
    workspace = Workspace(enclosure=enclosure)
    workspace.root.rmdir()
    workspace.root.symlink_to(victim)
    tree = workspace.retire()
    assert tree is not None and tree.remove() is None
    assert enclosure.remove() is None
    assert (victim / "sub" / "kept.txt").read_text("utf-8") == "kept"
    assert oct(os.stat(victim / "sub").st_mode & 0o777) == oct(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim"]


def test_what_cannot_be_removed_is_named(tmp_path, monkeypatch):
    workspace = Workspace(parent=str(tmp_path))
    # No immutable flag can be set here (no CAP_LINUX_IMMUTABLE on tmpfs): a removal that leaves all in place.
    monkeypatch.setattr("shutil.rmtree", lambda *args, **kwargs: None)
    remover = Remover()
    remover.remove(workspace)
    remover.drain()
    assert remover.leftovers == [Leftover(str(workspace.base), "4 entries left")]
    assert str(remover.leftovers[0]) == f"could not remove {workspace.base} (4 entries left)"


def _mount_works(tmp_path) -> str | None:
    """Returns why a bind mount cannot be made here (not root, no CAP_SYS_ADMIN, no mount), or None."""
    if not shutil.which("mount") or not shutil.which("umount"):
        return "no mount command"
    source, point = tmp_path / "probe-source", tmp_path / "probe-point"
    source.mkdir()
    point.mkdir()
    done = subprocess.run(["mount", "--bind", str(source), str(point)], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        return f"a bind mount cannot be made here: {done.stderr.strip() or done.returncode}"
    subprocess.run(["umount", str(point)], capture_output=True, timeout=30)
    return None


@pytest.fixture
def unmount_after(tmp_path):
    """Unmounts whatever is left mounted below ``tmp_path`` (a test that fails half-way included),
    so that nothing later removes a victim's content through it."""
    yield
    for point in sorted(mounts_below(tmp_path), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)
    assert not mounts_below(tmp_path)


MOUNT = """
id: hostile/mount-{n}
profile: claude-code
title: a candidate that bind-mounts a folder from elsewhere into its workspace
source: test
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_workspace_with_a_mount_point_is_not_removed_through_it_and_every_report_names_it(
        tmp_path, victim, unmount_after, jobs):
    why = _mount_works(tmp_path)
    if why:
        pytest.skip(why)
    scenarios = tmp_path / "scenarios"
    write_scenarios(scenarios, MOUNT.format(n=1), "one.yaml")
    write_scenarios(scenarios, MOUNT.format(n=2), "two.yaml")
    spaces = tmp_path / "ws"
    spaces.mkdir()
    reports = {kind: tmp_path / f"report.{kind}" for kind in ("xml", "md", "html")}
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode mount --arg {victim}"
    # --no-sandbox: the mount needs the capabilities the default sandbox takes away; here it must be made.
    outcome = harness_run(tmp_path, scenarios, "--target", spec, "--tmp", str(spaces), "--jobs", jobs, "--no-sandbox",
                          "--junit", str(reports["xml"]), "--markdown", str(reports["md"]),
                          "--html", str(reports["html"]), timeout=120)
    # Exit 1: the run left something on the machine (docs/security.md, "Leftovers").
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert [r["verdict"] for r in outcome.report["results"]] == ["pass", "pass"]
    # With --jobs each worker's folders are in one of its own: a worker's folder holds what it left.
    left = sorted(inner for base in spaces.iterdir()
                  for inner in (base.iterdir() if base.name.startswith("harness-worker-") else [base]))
    assert len(left) == 2 and all((base / "ws" / "mnt").is_dir() for base in left)
    # Nothing was removed through the mount points: the victim is whole (checked again by the fixture).
    assert (victim / "secret.txt").exists() and (victim / "sub" / "deep.txt").read_text() == "deep\n"
    assert {item["path"] for item in outcome.report["leftovers"]} == {str(base) for base in left}
    jsonschema_rs.validate(json.loads((ROOT / "harness/schema/report.schema.json").read_text()), outcome.report)
    assert all("mount points not entered" in item["reason"] and "ws/mnt" in item["reason"]
               for item in outcome.report["leftovers"])
    # Each workspace is left with just the path to its mount point: everything else was removed.
    assert all("2 entries left" in item["reason"] for item in outcome.report["leftovers"])
    assert "LEFT BEHIND: 2 workspace(s) could not be removed" in outcome.stdout
    for base in left:
        assert str(base) in outcome.stdout
        assert str(base) in reports["md"].read_text("utf-8")
        assert f"<code>{base}</code>" in reports["html"].read_text("utf-8")
    assert "could not remove" not in outcome.stderr  # said in the reports, not as a stray line
    suite = next(s for s in ET.parse(reports["xml"]).getroot() if s.get("name") == f"{spec} harness")
    assert suite.get("errors") == "1"
    error = suite.find("testcase[@name='workspaces removed']/error")
    assert error is not None and error.get("message") == "2 workspace(s) could not be removed"
    assert all(f"could not remove {base} (" in error.text for base in left)
    assert "left 2 workspace(s) that could not be removed" in reports["md"].read_text("utf-8")
    assert 'class="leftovers"' in reports["html"].read_text("utf-8")


def _mount_point(tmp_path) -> tuple[Path, list[str], list[str]]:
    """Skips where no bind mount can be made; returns a folder holding ``point``, and the commands
    mounting a folder on ``point`` and taking it down."""
    why = _mount_works(tmp_path)
    if why:
        pytest.skip(why)
    base = tmp_path / "base"
    (base / "point").mkdir(parents=True)
    return (base, ["mount", "--bind", str(tmp_path / "probe-source"), str(base / "point")],
            ["umount", str(base / "point")])


def test_a_mount_made_after_the_table_was_read_is_seen(tmp_path, unmount_after):
    base, mount, unmount = _mount_point(tmp_path)
    assert mounts_below(base) == set()  # read (or known unchanged) before the mount
    subprocess.run(mount, check=True, timeout=30)
    assert mounts_below(base) == {os.path.realpath(base / "point")}
    subprocess.run(unmount, check=True, timeout=30)
    assert mounts_below(base) == set()


def test_a_mount_made_in_a_threads_own_namespace_after_the_table_was_read_is_seen_there(tmp_path, unmount_after):
    # A read-only folder moves the runner's thread to a mount namespace of its own (harness/containment/mounts.py),
    # and a candidate it starts mounts there: the table read before, in the other namespace, was kept.
    import threading

    from harness.containment import mounts
    base, mount, unmount = _mount_point(tmp_path)
    seen: dict[str, object] = {}

    def in_its_own_namespace() -> None:
        try:
            seen["before"] = mounts_below(base)  # the table of the namespace it started in, read
            mounts.own_namespace()
            subprocess.run(mount, check=True, timeout=30)
            seen["there"] = mounts_below(base)
            seen["elsewhere"] = other.submit(mounts_below, base).result(timeout=30)
            subprocess.run(unmount, check=True, timeout=30)
            seen["after"] = mounts_below(base)
        except Exception as exc:  # said by the assertion below
            seen["error"] = exc

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as other:  # a thread of the namespace the test started in
        other.submit(mounts_below, base).result(timeout=30)
        thread = threading.Thread(target=in_its_own_namespace)
        thread.start()
        thread.join(60)
    point = os.path.realpath(base / "point")
    assert seen == {"before": set(), "there": {point}, "elsewhere": set(), "after": set()}


def test_under_github_actions_each_leftover_is_an_error_annotation_before_the_failures(monkeypatch, tmp_path):
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from harness.report import github
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = io.StringIO()
    left = Leftover("/dev/shm/harness-x", "2 entries left; mount points not entered, unmount them to remove it: ws/mnt")
    github.report(Console(file=out), [SimpleNamespace(results=[], spec="cmd:x", leftovers=[left])])
    assert out.getvalue().splitlines() == [
        "::error title=workspace left behind by cmd%3Ax::could not remove /dev/shm/harness-x (2 entries left; "
        "mount points not entered, unmount them to remove it: ws/mnt)"]


def test_a_tree_nested_past_any_recursive_walk_is_recorded_to_the_cap_and_removed(tmp_path):
    # 3,000 folders: shutil.rmtree and os.walk recurse once per level (Python 3.11); the run ended
    # with a RecursionError traceback and left the workspace behind.
    write_scenarios(tmp_path / "scenarios", READ)
    spaces = tmp_path / "ws"
    spaces.mkdir()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode deep-tree"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces), timeout=120)
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    (result,) = outcome.report["results"]
    assert result["verdict"] == "pass", result
    assert "nested more than 256 deep" in result["workspace"]["<capped>"]["why"]
    assert max(key.count("/") for key in result["workspace"]) == 255
    assert not list(spaces.iterdir()), "a workspace was left behind"
    assert "could not remove" not in outcome.stderr




def test_what_a_candidate_leaves_in_its_temporary_folder_goes_with_the_run(tmp_path):
    write_scenarios(tmp_path / "scenarios", READ)
    candidate = CANDIDATES / "litter_tmp.py"
    spaces = tmp_path / "ws"
    spaces.mkdir()
    for jobs in ("1", "2"):
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", f"cmd:python {candidate}",
                              "--tmp", str(spaces), "--jobs", jobs)
        (result,) = outcome.report["results"]
        left = result["steps"][0]["output"]
        assert left.startswith(str(spaces) + "/harness-tmp-") and "litter-" in left, left
        assert not os.path.exists(left) and not list(spaces.iterdir()), "the temporary folder was left behind"


def test_a_signal_while_the_target_starts_leaves_no_temporary_folder(tmp_path):
    # The signal lands in Runner.__enter__ (the target starting), where __exit__ is not called.
    from fakes import ScriptedTarget

    from harness.run.runner import Runner

    class Interrupted(ScriptedTarget):
        def use_tmp(self, folder: str) -> bool:
            return True

        def start(self):
            raise KeyboardInterrupt

    target = Interrupted(in_process=False)
    with pytest.raises(KeyboardInterrupt):
        with Runner(target, tmp=str(tmp_path)):
            pass
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_under_the_sandbox_the_temporary_folder_is_writable_and_goes_with_the_run(tmp_path):
    write_scenarios(tmp_path / "scenarios", READ)
    candidate = CANDIDATES / "litter_tmp.py"
    spaces = tmp_path / "ws"
    spaces.mkdir()
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", f"cmd:python {candidate}",
                          "--tmp", str(spaces), "--sandbox")
    (result,) = outcome.report["results"]
    assert result["verdict"] == "pass", result["reason"]  # mkstemp failed on the read-only file system
    left = result["steps"][0]["output"]
    assert left.startswith(str(spaces) + "/harness-tmp-") and not list(spaces.iterdir())


def test_a_mount_point_whose_name_holds_a_space_or_a_backslash_is_seen_by_its_name(tmp_path, unmount_after):
    base, mount, unmount = _mount_point(tmp_path)
    point = base / "a b\\c"  # written in the table as a\040b\134c (proc(5))
    point.mkdir()
    subprocess.run([*mount[:-1], str(point)], check=True, timeout=30)
    assert mounts_below(base) == {os.path.realpath(point)}
    subprocess.run(["umount", str(point)], check=True, timeout=30)
    assert mounts_below(base) == set()


def test_the_mount_table_is_read_whole_in_pieces_up_to_its_bound():
    import io

    from harness.containment.cleanup import _read_upto
    table = bytes(range(256)) * 1000  # 256 000 bytes: four pieces
    assert _read_upto(io.BytesIO(table), 1 << 22) == table
    assert _read_upto(io.BytesIO(table), 100_000) == table[:100_000]
    assert _read_upto(io.BytesIO(b""), 10) == b""
