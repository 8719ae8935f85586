"""The in-process reference is confined to the folder around its workspace (harness/containment/audit_hook.py).

A scenario file names the paths a tool is called with; the reference runs inside the harness's
process, so a call naming ``/home/user/.ssh/authorized_keys`` would otherwise be the harness
writing there, and a Read of a secret would put it into every report.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.containment import audit_hook
from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.model import Verdict
from reference_impl import mcp_write_text_file
from tests import planted
from tests.hostile.conftest import SECRET, harness_run, no_secret, write_scenarios

AIMED = """
id: hostile/aimed-{n}
profile: {profile}
title: a call aimed at a file outside the workspace
source: test
steps:
  - tool: {tool}
    args: {args}
"""


def test_calls_aimed_outside_the_workspace_are_invalid_scenarios(tmp_path, victim):
    cases = [
        ("claude-code", "Write", f'{{file_path: "{victim}/new/planted.txt", content: "pwned"}}', "file_path"),
        ("claude-code", "Read", f'{{file_path: "{victim}/secret.txt"}}', "file_path"),
        ("mcp-write-text-file", "write_text_file", '{path: "${workspace}/../../outside.txt", content: "x"}', "path"),
        ("aptix-tul-004", "workspace_create_file", '{path: "../../../x", content: "x"}', "path"),
    ]
    folder = tmp_path / "scenarios"
    for n, (profile, tool, args, _) in enumerate(cases):
        write_scenarios(folder, AIMED.format(n=n, profile=profile, tool=tool, args=args), f"s{n}.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2
    for n, (_, _, _, field) in enumerate(cases):
        reason = next(r["reason"] for r in outcome.report["results"] if f"s{n}.yaml:" in r["reason"])
        assert f"[steps[0].args.{field}] path argument outside the harness's folder" in reason, reason
    no_secret(outcome)
    assert not (victim / "new").exists()


class WrongFolderWrite(mcp_write_text_file.Session):
    """Resolves a path against the folder two levels above the workspace: a plausible bug that
    passes every lint, since the scenario's path is fine."""

    def call(self, tool, args):
        args = dict(args)
        args["path"] = os.path.join(self.workspace, "..", "..", os.path.basename(args["path"]))
        return super().call(tool, args)


def test_a_reference_that_writes_outside_on_its_own_is_refused_and_shown_as_an_escape(tmp_path):
    source = tmp_path / "scenarios" / "mcp-write-text-file"
    write_scenarios(source, AIMED.format(n=0, profile="mcp-write-text-file", tool="write_text_file",
                                         args='{path: "${workspace}/wrong-folder.txt", content: "x"}'))
    scenario = catalog.load([tmp_path / "scenarios"]).by_id("hostile/aimed-0")
    work = tmp_path / "work"
    work.mkdir()
    target = planted.PlantedTarget({"mcp-write-text-file": WrongFolderWrite})
    with Runner(target, tmp=str(work)) as runner:
        result = runner.run(scenario)
    assert result.verdict is Verdict.FAIL, (result.verdict, result.reason)
    # It looks first (os.stat, refused and taken as "not there"), then writes: both are refused.
    assert result.reason.startswith("escape: tried to act outside the workspace: refused: the in-process reference "
                                    f"tried to read {work}/wrong-folder.txt (os.stat)"), result.reason
    assert f"tried to change {work}/wrong-folder.txt (open)" in result.reason
    assert not (work / "wrong-folder.txt").exists()


def _bounds(tmp_path):
    enclosure = tmp_path / "enclosure"
    (enclosure / "ws").mkdir(parents=True)
    return enclosure, audit_hook.Confinement(str(enclosure))


def test_inside_the_enclosure_everything_goes_and_python_may_still_import(tmp_path):
    enclosure, bounds = _bounds(tmp_path)
    sys.modules.pop("colorsys", None)
    with audit_hook.confined(bounds):
        (enclosure / "ws" / "a.txt").write_text("a")
        os.rename(enclosure / "ws" / "a.txt", enclosure / "ws" / "b.txt")
        os.mkdir(enclosure / "ws" / "d")
        os.chmod(enclosure / "ws" / "b.txt", 0o600)
        (enclosure / "beside.txt").write_text("seen by the canary check, not refused here")
        assert sorted(os.listdir(enclosure / "ws")) == ["b.txt", "d"]
        importlib.import_module("colorsys")  # a first import reads Python's own files
        (enclosure / "ws" / "tree" / "deep").mkdir(parents=True)
        (enclosure / "ws" / "tree" / "deep" / "f").write_text("f")
        shutil.rmtree(enclosure / "ws" / "tree")  # names relative to its folders' descriptors
    assert bounds.refused == []


@pytest.mark.parametrize("operation", ["write", "append", "read", "listdir", "rename-out", "mkdir", "chmod",
                                       "remove", "relative", "link-out", "dotdot-after-link", "link-to-dotdot-dotdot",
                                       "link-moved-up", "subprocess", "chdir", "listdir-dotdot", "unknown-folder",
                                       "mkfifo", "mkfifo-beside-a-descriptor", "mknod", "stat", "lstat", "exists",
                                       "access", "readlink", "statvfs", "pathconf"])
def test_outside_the_enclosure_each_kind_of_operation_is_refused(tmp_path, operation, monkeypatch):
    enclosure, bounds = _bounds(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)  # a relative name is taken from the working folder, as the kernel takes it
    (outside / "f.txt").write_text(SECRET)
    (enclosure / "ws" / "in.txt").write_text("in")
    os.symlink("..", enclosure / "ws" / "up")  # leads to the folder around the workspace: inside
    closed = _closed_descriptor(tmp_path)  # taken before the confinement, which would refuse reading tmp_path
    outside_fd = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    os.symlink(SECRET[:20], tmp_path / "outside-link")  # a link's text is what readlink tells
    actions = {
        "write": lambda: (outside / "f.txt").write_text("pwned"),
        "append": lambda: open(outside / "f.txt", "a").close(),
        "read": lambda: (outside / "f.txt").read_text(),
        "listdir": lambda: os.listdir(outside),
        "rename-out": lambda: os.rename(enclosure / "ws" / "in.txt", outside / "moved.txt"),
        "mkdir": lambda: os.mkdir(outside / "made"),
        "chmod": lambda: os.chmod(outside / "f.txt", 0o777),
        "remove": lambda: os.remove(outside / "f.txt"),
        "relative": lambda: open("relative.txt", "w").close(),
        "link-out": lambda: os.symlink(outside / "f.txt", enclosure / "ws" / "out"),
        # Written, it reads as ws/x; the kernel follows `up` first, and `..` from there leaves.
        "dotdot-after-link": lambda: open(f"{enclosure}/ws/up/../f.txt", "a").close(),
        "link-to-dotdot-dotdot": lambda: os.symlink("../..", enclosure / "ws" / "high"),
        # Made in a/b it leads to the folder around the workspace; moved up a level it would lead out.
        "link-moved-up": lambda: (os.makedirs(enclosure / "ws" / "a" / "b"),
                                  os.symlink("../../../x", enclosure / "ws" / "a" / "b" / "l"),
                                  os.rename(enclosure / "ws" / "a" / "b" / "l", enclosure / "ws" / "a" / "l")),
        "subprocess": lambda: subprocess.run(["true"], check=False),
        "chdir": lambda: os.chdir(enclosure / "ws"),
        "listdir-dotdot": lambda: os.listdir(f"{enclosure}/ws/../.."),
        "unknown-folder": lambda: os.mkdir("made", dir_fd=closed),
        # No audit event of CPython's: the confinement wraps them while a call runs.
        "mkfifo": lambda: os.mkfifo(outside / "fifo"),
        "mkfifo-beside-a-descriptor": lambda: os.mkfifo("fifo", dir_fd=outside_fd),
        "mknod": lambda: os.mknod(outside / "node"),
        "stat": lambda: os.stat(outside / "f.txt"),
        "lstat": lambda: os.lstat(outside / "f.txt"),
        "exists": lambda: (outside / "f.txt").exists(),
        "access": lambda: os.access(outside / "f.txt", os.R_OK),
        "readlink": lambda: os.readlink(tmp_path / "outside-link"),
        "statvfs": lambda: os.statvfs(outside),
        "pathconf": lambda: os.pathconf(outside / "f.txt", "PC_NAME_MAX"),
    }
    try:
        with audit_hook.confined(bounds), pytest.raises(PermissionError):
            actions[operation]()
    finally:
        os.close(outside_fd)
    assert len(bounds.refused) == 1 and bounds.refused[0].startswith("refused: the in-process reference tried")
    assert (outside / "f.txt").read_text() == SECRET and sorted(os.listdir(outside)) == ["f.txt"]
    assert (enclosure / "ws" / "in.txt").exists()


def test_what_no_audit_event_shows_is_wrapped_only_while_a_call_runs_and_works_inside(tmp_path):
    """``os.mkfifo``, ``os.mknod`` and the looks at a path (``os.stat`` and its kin) raise no audit
    event of CPython's: the confinement puts wrappers in their place while a call is confined, and
    the originals back after. Inside the enclosure they work, and so does resolving a path there
    (``realpath`` looks at every folder above it)."""
    enclosure, bounds = _bounds(tmp_path)
    originals = {name: getattr(os, name) for name in audit_hook.UNAUDITED}
    with audit_hook.confined(bounds):
        assert all(getattr(os, name) is not originals[name] for name in audit_hook.UNAUDITED)
        os.mkfifo(enclosure / "ws" / "fifo")
        assert os.stat(enclosure / "ws" / "fifo").st_mode and os.lstat(enclosure / "ws").st_mode
        assert os.path.realpath(enclosure / "ws" / "fifo") == str((enclosure / "ws" / "fifo").resolve())
        assert os.access(enclosure / "ws" / "fifo", os.F_OK) and (enclosure / "beside").exists() is False
        assert os.stat(os.__file__).st_size > 0  # Python's own files may be looked at, as read
    assert bounds.refused == []
    assert all(getattr(os, name) is originals[name] for name in audit_hook.UNAUDITED)


def _closed_descriptor(tmp_path) -> int:
    """A descriptor number that names nothing (opened, then closed): where a name under it leads cannot be told."""
    fd = os.open(tmp_path, os.O_RDONLY)
    os.close(fd)
    return fd


def test_the_confinement_holds_for_the_confined_thread_only(tmp_path):
    enclosure, bounds = _bounds(tmp_path)
    elsewhere = tmp_path / "elsewhere.txt"
    done = threading.Event()
    started = threading.Event()

    def other() -> None:
        started.wait(10)
        elsewhere.write_text("another thread's own work")
        done.set()

    worker = threading.Thread(target=other)
    worker.start()
    with audit_hook.confined(bounds):
        started.set()
        assert done.wait(10)
    worker.join(10)
    assert elsewhere.read_text() == "another thread's own work" and bounds.refused == []
    elsewhere.write_text("after the call")  # and nothing is refused once the call is over


@settings(deadline=None)
@given(st.text(alphabet="/a.", max_size=12))
def test_the_folders_above_the_bounds_are_told_from_the_text_as_posixpath_tells_them(path):
    # Worked out on the text alone: under pyfakefs this module's os.path is a fake one.
    import posixpath

    assert audit_hook._dirname(path) == posixpath.dirname(path)


def test_the_folders_above_a_sessions_bounds_are_those_above_the_enclosure_and_pythons(tmp_path):
    import posixpath

    bounds = audit_hook.Confinement(str(tmp_path))
    expected, roots = set(), bounds.bounds + bounds.python + bounds.code
    for root in roots:
        while root not in ("/", ""):
            root = posixpath.dirname(root)
            expected.add(root)
    assert bounds.above == expected and str(tmp_path.parent) in bounds.above


def test_on_pyfakefs_a_sessions_bounds_are_where_the_fake_realpath_says():
    # Told from pyfakefs' records where no link is on the way; else by realpath itself.
    from harness.targets import faults

    with faults.fake_filesystem():
        os.makedirs("/tmp/a/b")
        os.symlink("/tmp/a", "/tmp/link")
        with open("/tmp/file", "w"):
            pass
        for enclosure in ("/tmp/a/b", "/tmp/a/b/", "/tmp/link/b", "/tmp/a/missing", "/tmp/file", "/tmp//a",
                          "/tmp/a/./b", "/tmp/a/../a", "/", "/tmp"):
            expected = tuple({enclosure.rstrip("/"), os.path.realpath(enclosure).rstrip("/")})
            assert audit_hook._bounds(enclosure) == expected, enclosure
        assert audit_hook._bounds("/tmp/link/b") == tuple({"/tmp/link/b", "/tmp/a/b"})
