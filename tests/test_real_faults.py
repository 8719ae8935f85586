"""Faults realised by the kernel for an in-process target: modes that bite root for a block
(harness/util/capabilities.py), read-only folders as mounts of the thread's own
(harness/containment/mounts.py), and the runner choosing them over pyfakefs (harness/targets/faults.py)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from fakes import ScriptedTarget, fault_scenario

from harness.containment import mounts
from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets import faults
from harness.targets.base import CallResult
from harness.util import capabilities

FAULTS = frozenset({"read-only-fs", "permissions", "disk-full"})

root_only = pytest.mark.skipif(
    os.geteuid() != 0 or not capabilities.effective_past_modes(), reason="needs root with its capabilities")
mounting = pytest.mark.skipif(
    not faults.real_conditions() >= {"read-only-fs"}, reason="this machine gives no mount namespace of a thread's own")
full_disk = pytest.mark.skipif(
    not faults.real_conditions() >= {"disk-full"}, reason="this machine mounts no file system of a thread's own")


class _OtherThread:
    """A thread started before the block under test (one started inside it inherits the calling
    thread's capabilities and mount namespace, as a candidate's own thread should), running one
    action at a time: ``run(action)`` returns what it returned, or the OSError it raised."""

    def __enter__(self) -> _OtherThread:
        import queue
        self._todo: queue.Queue = queue.Queue()
        self._done: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()
        return self

    def _serve(self) -> None:
        while (action := self._todo.get()) is not None:
            try:
                self._done.put(action())
            except (OSError, AssertionError) as exc:
                self._done.put(exc)

    def run(self, action):
        self._todo.put(action)
        return self._done.get(timeout=30)

    def __exit__(self, *exc: object) -> None:
        self._todo.put(None)
        self._thread.join()


def _in_other_thread(action):
    with _OtherThread() as other:
        return other.run(action)


def _read(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


@root_only
def test_modes_bite_root_in_the_block_only_and_in_this_thread_only(tmp_path):
    closed = tmp_path / "closed.txt"
    closed.write_bytes(b"secret")
    closed.chmod(0)
    with _OtherThread() as other, capabilities.modes_bite():
        assert capabilities.effective_past_modes() == 0
        with pytest.raises(PermissionError):
            _read(closed)
        assert other.run(lambda: _read(closed)) == b"secret"  # the harness's other threads keep theirs
    assert _read(closed) == b"secret"
    assert capabilities.effective_past_modes() == capabilities.PAST_MODES


@root_only
def test_modes_bite_gives_back_the_capabilities_when_the_block_raises(tmp_path):
    with pytest.raises(KeyError), capabilities.modes_bite():
        raise KeyError("x")
    assert capabilities.effective_past_modes() == capabilities.PAST_MODES


@mounting
def test_a_read_only_folder_refuses_writes_in_its_thread_only_until_the_block_ends(tmp_path):
    (tmp_path / "ro").mkdir()

    def block(other: _OtherThread) -> None:  # in a new thread: its first mount gives it a namespace of its own
        with mounts.read_only(str(tmp_path), ["ro"]):
            with pytest.raises(OSError) as raised:
                (tmp_path / "ro" / "a.txt").write_bytes(b"x")
            assert raised.value.errno == errno.EROFS
            assert other.run(lambda: (tmp_path / "ro" / "b.txt").write_bytes(b"y")) == 1
            (tmp_path / "beside.txt").write_bytes(b"z")  # the rest of the folder is writable
        (tmp_path / "ro" / "a.txt").write_bytes(b"x")

    with _OtherThread() as other:  # a thread of the harness's, started before
        assert _in_other_thread(lambda: block(other)) is None
    assert sorted(p.name for p in (tmp_path / "ro").iterdir()) == ["a.txt", "b.txt"]


@mounting
@pytest.mark.parametrize("named", ["link", "link/inner", "file.txt", "missing"])
def test_a_read_only_folder_is_never_reached_through_a_link_and_must_be_a_folder(tmp_path, named):
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "link").symlink_to(outside)
    (root / "file.txt").write_bytes(b"f")
    with pytest.raises(OSError), mounts.read_only(str(root), [named]):
        pass
    (outside / "inner" / "still-writable.txt").write_bytes(b"w")  # nothing was mounted there
    assert b"/outside" not in Path("/proc/thread-self/mountinfo").read_bytes()


@full_disk
def test_a_full_disk_takes_no_byte_more_in_its_thread_only_and_keeps_the_folders_owner_and_mode(tmp_path):
    root = tmp_path / "workspace"
    root.mkdir()
    os.chmod(root, 0o751)
    os.chown(root, 1234, 5678)

    def block(other: _OtherThread) -> None:
        with mounts.full_disk(str(root)) as fill:
            (root / "given").mkdir()
            (root / "given" / "f.txt").write_bytes(b"")
            fill()
            info = os.stat(root)
            assert (oct(info.st_mode & 0o7777), info.st_uid, info.st_gid) == ("0o751", 1234, 5678)
            assert sorted(os.listdir(root)) == ["given"]  # the block that keeps it full is out of sight
            with pytest.raises(OSError) as raised, open(root / "given" / "f.txt", "ab", buffering=0) as handle:
                handle.write(b"x")
            assert raised.value.errno == errno.ENOSPC
            (root / "new").mkdir()  # a folder, an empty file: no block needed, as on pyfakefs
            (root / "new" / "empty.txt").write_bytes(b"")
            assert other.run(lambda: os.listdir(root)) == []  # the harness's other threads see the folder itself
        assert os.listdir(root) == []
        (root / "a.txt").write_bytes(b"x" * 10000)  # the folder's own disk again

    with _OtherThread() as other:
        assert _in_other_thread(lambda: block(other)) is None
    assert b"harness-full-disk" not in Path("/proc/self/mountinfo").read_bytes()


@full_disk
def test_a_full_disk_whose_top_mount_went_before_the_end_leaves_nothing_mounted(tmp_path):
    # The folder bound on top taken down already (as a process in the thread's namespace may): its
    # own take-down is refused (EINVAL), and the file system below is still taken down, the refusal
    # raised afterwards; before, the first refusal left the full disk mounted on the workspace.
    from harness.util import syscalls
    root = tmp_path / "workspace"
    root.mkdir()

    def block() -> int | None:
        try:
            with mounts.full_disk(str(root)) as fill:
                fill()
                syscalls.check(syscalls.libc().umount2(str(root).encode(), 2), "umount")  # (MNT_DETACH)
        except OSError as exc:
            refused = exc.errno
        else:
            refused = None
        assert b"harness-full-disk" not in Path("/proc/thread-self/mountinfo").read_bytes()
        (root / "a.txt").write_bytes(b"x" * 10000)  # the folder's own disk again
        return refused

    assert _in_other_thread(block) == errno.EINVAL


def test_a_namespace_whose_mounts_cannot_be_kept_in_is_never_taken_for_the_threads_own(monkeypatch):
    # unshare done, but the mounts not made slaves of the machine's (mount refused, as where "/" is
    # no mount point): every call is refused alike, none goes on to mount where the machine would see it.
    import ctypes

    from harness.util import syscalls

    class Refusing:
        def unshare(self, flags):
            return 0  # (nothing left for real)

        def mount(self, *args):
            ctypes.set_errno(errno.EINVAL)
            return -1

    monkeypatch.setattr(syscalls, "libc", Refusing)

    def twice() -> list[int | None]:
        found: list[int | None] = []
        for _ in range(2):
            try:
                mounts.own_namespace()
                found.append(None)
            except OSError as exc:
                found.append(exc.errno)
        return found

    assert _in_other_thread(twice) == [errno.EINVAL, errno.EINVAL]


@pytest.mark.parametrize(("given", "real"), [
    ({"disk_free": 0}, True),
    ({"disk_free": 0, "dirs": ["d"], "files": {"e.txt": "", "h.txt": {"hex": ""}}, "symlinks": {"l": "e.txt"}}, True),
    ({}, True),  # no limit at all
    ({"disk_free": 0, "files": {"a.txt": "x"}}, False),  # its block has room left on a real disk
    ({"disk_free": 0, "files": {"a.txt": {"content": {"base64": "AA=="}, "mode": "0644"}}}, False),
    ({"disk_free": 1000}, False),  # bytes: a real disk counts whole blocks
    ({"disk_free": 4096}, False),
])
def test_a_full_disk_is_real_only_where_a_real_one_gives_what_pyfakefs_does(monkeypatch, given, real):
    monkeypatch.setattr(faults, "_real", frozenset({"permissions", "disk-full"}))
    assert faults.on_real_fs(["disk-full"], given) is real
    assert faults.on_real_fs(["disk-full", "permissions"], given) is real
    monkeypatch.setattr(faults, "_real", frozenset({"permissions"}))
    assert not faults.on_real_fs(["disk-full"], given)


_scenario = fault_scenario


def _writing(rel: str, seen: list[object]):
    def write(workspace: Path, args):
        from pyfakefs.fake_filesystem_unittest import Patcher
        seen.append(("pyfakefs", Patcher.PATCHER is not None))
        seen.append(("seen by another thread", _in_other_thread(lambda: os.path.isdir(workspace))))
        try:
            (workspace / rel).write_bytes(b"x")
            seen.append("written")
        except OSError as exc:
            seen.append(errno.errorcode[exc.errno])
        return CallResult(output={})
    return write


@root_only
@mounting
@pytest.mark.parametrize(("requires", "given", "rel", "outcome"), [
    ("permissions", '  dirs: [{path: closed, mode: "0555"}]', "closed/a.txt", "EACCES"),
    ("read-only-fs", "  dirs: [ro]\n  read_only: [ro]", "ro/a.txt", "EROFS"),
    ("read-only-fs", "  dirs: [ro]\n  read_only: [ro]", "a.txt", "written"),
    ("read-only-fs", "  dirs: [ro]\n  read_only: [.]", "ro/a.txt", "EROFS"),
    ("read-only-fs", "  dirs: [ro]\n  read_only: [./ro/.]", "a.txt", "written"),
    pytest.param("disk-full", "  dirs: [d]\n  disk_free: 0", "d/a.txt", "ENOSPC", marks=full_disk),
    pytest.param("disk-full", '  files: {e.txt: ""}\n  disk_free: 0', "e.txt", "ENOSPC", marks=full_disk),
    pytest.param("disk-full", "  dirs: [d]", "d/a.txt", "written", marks=full_disk),  # no disk_free: no limit
])
def test_the_runner_realises_permissions_read_only_folders_and_full_disks_on_the_real_file_system(
        scenario_from, requires, given, rel, outcome):
    seen: list[object] = []
    target = ScriptedTarget({"write_text_file": _writing(rel, seen)}, realises=FAULTS, in_process=True)
    with Runner(target) as runner:
        result = runner.run(_scenario(scenario_from, "real", requires, given))
        assert result.verdict is Verdict.PASS, result.reason
        assert capabilities.effective_past_modes() == capabilities.PAST_MODES  # given back after the scenario
    assert seen == [("pyfakefs", False), ("seen by another thread", True), outcome]
    assert not target.workspaces[0].exists()  # unmounted and removed with the run


@root_only
@mounting
def test_a_read_only_entry_that_is_a_link_is_an_error_and_nothing_is_mounted_or_changed(scenario_from):
    target = ScriptedTarget({"write_text_file": CallResult(output={})}, realises=FAULTS, in_process=True)
    given = "  files: {sub/f.txt: mine}\n  symlinks: {ro: sub}\n  read_only: [ro]"
    with Runner(target, record_states=True) as runner:
        result = runner.run(_scenario(scenario_from, "link", "read-only-fs", given))
    assert result.verdict is Verdict.ERROR and "could not lay out `given`" in (result.reason or ""), result.reason
    assert target.calls == []
    assert b"/ws" not in Path("/proc/thread-self/mountinfo").read_bytes()


def test_harness_faults_fake_puts_every_fault_scenario_on_pyfakefs(monkeypatch):
    monkeypatch.setattr(faults, "_real", None)
    monkeypatch.setenv(faults.FAULTS_VARIABLE, "fake")
    assert faults.real_conditions() == frozenset()
    assert not faults.on_real_fs(["permissions"])
    assert faults.on_real_fs([])


@root_only
@full_disk
def test_a_full_disk_that_cannot_be_mounted_makes_the_scenario_an_error_with_nothing_run(scenario_from, monkeypatch):
    def refused(root):
        raise OSError(errno.EPERM, "mount -t tmpfs: Operation not permitted", root)
    monkeypatch.setattr(mounts, "full_disk", refused)
    target = ScriptedTarget({"write_text_file": CallResult(output={})}, realises=FAULTS, in_process=True)
    with Runner(target) as runner:
        result = runner.run(_scenario(scenario_from, "refused", "disk-full", "  disk_free: 0"))
        assert capabilities.effective_past_modes() == capabilities.PAST_MODES
    assert result.verdict is Verdict.ERROR and "cannot be realised" in (result.reason or ""), result.reason
    assert target.calls == []


@root_only
def test_capabilities_the_kernel_refuses_make_the_scenario_an_error_with_nothing_run(scenario_from, monkeypatch):
    def refused(header, data):
        raise OSError(errno.EPERM, "capset: Operation not permitted")
    monkeypatch.setattr(faults, "_real", frozenset({"permissions"}))
    monkeypatch.setattr(capabilities, "_set", refused)
    target = ScriptedTarget({"write_text_file": CallResult(output={})}, realises=FAULTS, in_process=True)
    with Runner(target) as runner:
        result = runner.run(_scenario(scenario_from, "refused", "permissions", "  files: {b.txt: b}"))
    assert result.verdict is Verdict.ERROR and "cannot be realised" in (result.reason or ""), result.reason
    assert target.calls == []
