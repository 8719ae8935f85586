"""Fault scenarios on pyfakefs: one fake file system per process, nothing of a scenario carried to
the next, also with another user of pyfakefs in between (harness/targets/faults.py)."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest
from fakes import ScriptedTarget, fault_scenario

from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets import faults
from harness.targets.base import CallResult

FAULTS = frozenset({"read-only-fs", "permissions", "disk-full"})


@pytest.fixture(autouse=True)
def on_pyfakefs(monkeypatch):
    """Every fault scenario of these tests on pyfakefs, also where the machine realises its faults
    (as HARNESS_FAULTS=fake has it): tests/test_real_faults.py tests the kernel's."""
    monkeypatch.setattr(faults, "_real", frozenset())

_scenario = fault_scenario


def _writer(outcomes: list[str], files: list[tuple[str, int]]):
    def write(workspace: Path, args):
        for name, size in files:
            try:
                (workspace / name).write_bytes(b"x" * size)
                outcomes.append("written")
            except OSError as exc:
                outcomes.append(errno.errorcode[exc.errno])
        return CallResult(output={})
    return write


def _held_fs():
    held = faults._held
    assert held is not None, "the patcher was not kept for the next scenario"
    return held[0].fs


def test_the_free_space_of_one_scenario_is_not_left_to_the_next(scenario_from):
    outcomes, target, full = _disk_full(scenario_from)
    free = _scenario(scenario_from, "free", "permissions", "  files: {b.txt: b}")
    with Runner(target) as runner:
        for scenario in (full, free, full):
            assert runner.run(scenario).verdict is Verdict.PASS
    assert outcomes == ["ENOSPC", "written", "ENOSPC"]


def test_read_only_folders_of_one_scenario_are_not_left_to_the_next(scenario_from):
    outcomes: list[str] = []
    target = ScriptedTarget({"write_text_file": _writer(outcomes, [("ro/a.txt", 1)])}, realises=FAULTS,
                            in_process=True)
    read_only = _scenario(scenario_from, "ro", "read-only-fs", "  dirs: [ro]\n  read_only: [ro]")
    writable = _scenario(scenario_from, "rw", "permissions", "  dirs: [ro]")
    with Runner(target) as runner:
        for scenario in (read_only, writable):
            assert runner.run(scenario).verdict is Verdict.PASS
    assert outcomes == ["EROFS", "written"]


def test_an_escape_on_the_fake_file_system_gives_the_next_scenario_a_new_enclosure(scenario_from):
    def escape(workspace: Path, args):
        (workspace.parent / "canary.txt").write_bytes(b"changed")
        return CallResult(output={})

    target = ScriptedTarget({"write_text_file": escape}, realises=FAULTS, in_process=True)
    scenario = _scenario(scenario_from, "escape", "permissions", "  files: {b.txt: b}")
    with Runner(target) as runner:
        first = runner.run(scenario)
        target.answers["write_text_file"] = CallResult(output={})
        second = runner.run(scenario)
    assert first.verdict is Verdict.FAIL and "canary" in str(first.then_failures)
    assert second.verdict is Verdict.PASS, second.reason  # not blamed for the first one's escape
    assert target.workspaces[0].parent != target.workspaces[1].parent


def test_a_tests_own_pyfakefs_between_fault_scenarios_sees_none_of_them_and_they_still_pass(scenario_from):
    # The order that broke when a test's own pyfakefs (tests/reference/, or a `harness run` in the
    # same process) came between the runner's fault scenarios: run here in one process, in that order.
    from pyfakefs.fake_filesystem_unittest import Patcher

    outcomes: list[str] = []
    target = ScriptedTarget({"write_text_file": _writer(outcomes, [("a.txt", 1)])}, realises=FAULTS, in_process=True)
    scenario = _scenario(scenario_from, "between", "permissions", "  dirs: [{path: closed, mode: \"0555\"}]")
    with Runner(target) as runner:
        assert runner.run(scenario).verdict is Verdict.PASS
        with Patcher(allow_root_user=False) as patcher:
            assert not patcher.fs.exists(str(target.workspaces[0].parent))
            patcher.fs.create_file("/mine.txt", contents="m")
        assert runner.run(scenario).verdict is Verdict.PASS
        assert not _held_fs().exists("/mine.txt")
    assert outcomes == ["written", "written"]
    assert not target.workspaces[1].parent.exists()  # nothing on the real file system


def _writer_module(scenario_from, tmp_path, monkeypatch, name: str):
    """A module ``name``, importable but not imported, whose ``write`` makes a file with ``os.open``;
    what it met; an answer writing ``ro/a.txt`` through it; a target; a read-only scenario."""
    import sys

    (tmp_path / f"{name}.py").write_text(
        "import os\n"
        "def write(path):\n"
        "    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "    os.close(fd)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    outcomes: list[str] = []

    def write(workspace: Path, args):
        try:
            sys.modules[name].write(str(workspace / "ro" / "a.txt"))
            outcomes.append("written")
        except OSError as exc:
            outcomes.append(errno.errorcode[exc.errno])
        return CallResult(output={})

    target = ScriptedTarget({"write_text_file": CallResult(output={})}, realises=FAULTS, in_process=True)
    read_only = _scenario(scenario_from, "ro", "read-only-fs", "  dirs: [ro]\n  read_only: [ro]")
    return outcomes, write, target, read_only


def test_a_module_swapped_in_while_the_fake_file_system_waits_is_patched_too(scenario_from, tmp_path, monkeypatch):
    # The order that let fault scenarios write to the real file system in the full suite: between
    # two fault scenarios, one module came in (its `os` the real one) and another went (a test's
    # package removed from sys.modules), so the count of modules was the same and the held patcher
    # was resumed without patching the newcomer.
    import importlib
    import sys

    (tmp_path / "faultfiller.py").write_text("")
    outcomes, write, target, read_only = _writer_module(scenario_from, tmp_path, monkeypatch, "faultwriter")
    importlib.import_module("faultfiller")
    try:
        with Runner(target) as runner:
            assert runner.run(read_only).verdict is Verdict.PASS  # the patcher is held from here
            target.answers["write_text_file"] = write
            del sys.modules["faultfiller"]
            importlib.import_module("faultwriter")
            runner.run(read_only)
    finally:
        sys.modules.pop("faultwriter", None)
        sys.modules.pop("faultfiller", None)
    assert outcomes == ["EROFS"]


def _disk_full(scenario_from):
    """A target writing 100 bytes, what it met, and a scenario leaving 4 bytes free."""
    outcomes: list[str] = []
    target = ScriptedTarget({"write_text_file": _writer(outcomes, [("big.txt", 100)])}, realises=FAULTS,
                            in_process=True)
    return outcomes, target, _scenario(scenario_from, "full", "disk-full", "  files: {b.txt: b}\n  disk_free: 4")


@contextlib.contextmanager
def _open_wrapped_and_pyfakefs_forgetful(monkeypatch, replacement=None):
    """Runs the block with ``open`` replaced by a wrapper of the real one (as a test's or a tool's own
    wrapper would), or by ``replacement``, and pyfakefs' memory of the modules it looked at cleared,
    no patcher held; puts ``open`` back (also where the block did) and clears that memory again at the end."""
    import builtins

    from pyfakefs.fake_filesystem_unittest import Patcher
    faults._held = None
    Patcher.clear_fs_cache()
    real = builtins.open
    monkeypatch.setattr(builtins, "open", replacement or (lambda *args, **kwargs: real(*args, **kwargs)))
    try:
        yield
    finally:
        monkeypatch.undo()
        Patcher.clear_fs_cache()


def test_fault_scenarios_run_on_the_fake_file_system_after_pyfakefs_looked_at_a_wrapped_open(
        scenario_from, monkeypatch):
    # The order that let the catalog's fault scenarios pass their writes to a file system without
    # the fault: pyfakefs remembers the modules it has looked at, and `builtins` looked at while
    # `open` was someone's wrapper is never patched again in the process.
    from pyfakefs.fake_filesystem_unittest import Patcher

    outcomes, target, full = _disk_full(scenario_from)
    with _open_wrapped_and_pyfakefs_forgetful(monkeypatch):
        with Patcher(allow_root_user=False):
            pass
        monkeypatch.undo()
        with Runner(target) as runner:
            assert runner.run(full).verdict is Verdict.PASS
            assert runner.run(full).verdict is Verdict.PASS
    assert outcomes == ["ENOSPC", "ENOSPC"]
    assert not target.workspaces[0].parent.exists()  # nothing on the real file system


def test_a_fault_scenario_that_cannot_have_the_fake_file_system_is_an_error_and_writes_nothing(
        scenario_from, monkeypatch):
    from pyfakefs.fake_filesystem_unittest import Patcher

    outcomes, target, full = _disk_full(scenario_from)
    with _open_wrapped_and_pyfakefs_forgetful(monkeypatch), Runner(target) as runner:  # still wrapped: out of reach
        result = runner.run(full)
    assert result.verdict is Verdict.ERROR
    assert "fake file system is not in effect" in result.reason
    assert outcomes == [] and target.workspaces == []
    assert Patcher.PATCHER is None and Patcher.REF_COUNT == 0  # pyfakefs left free for the next user


def test_fault_scenarios_stay_on_the_fake_file_system_when_pyfakefs_forgets_its_modules(scenario_from):
    # What pyfakefs' pytest plugin does at the end of every pytest session, an in-process one (a
    # test's pytester run) too: the held patcher, resumed afterwards, patched nothing, and the
    # catalog's fault scenarios wrote to the real disk.
    from pyfakefs.fake_filesystem_unittest import Patcher

    outcomes, target, full = _disk_full(scenario_from)
    with Runner(target) as runner:
        assert runner.run(full).verdict is Verdict.PASS
        Patcher.clear_fs_cache()
        assert runner.run(full).verdict is Verdict.PASS
    assert outcomes == ["ENOSPC", "ENOSPC"]
    assert not target.workspaces[1].parent.exists()  # nothing on the real file system


def test_a_fault_scenario_reports_what_it_made_changed_or_removed_anywhere_outside_its_workspace(scenario_from):
    # On the fake file system the whole file system is the scenario's: no canary, everything outside
    # the workspace is listed before and after.
    def escape(workspace: Path, args):
        (workspace.parent / "sibling.txt").write_bytes(b"x")
        deep = workspace.parent / "deep"
        deep.mkdir()
        (deep / "passwd").write_bytes(b"root::0:0")
        workspace.parent.chmod(0o777)
        return CallResult(output={})

    target = ScriptedTarget({"write_text_file": escape}, realises=FAULTS, in_process=True)
    scenario = _scenario(scenario_from, "escape", "permissions", "  files: {b.txt: b}")
    with Runner(target) as runner:
        result = runner.run(scenario)
    base = str(target.workspaces[0].parent)
    found = "\n".join(str(failure) for failure in result.then_failures)
    assert result.verdict is Verdict.FAIL
    deep = f"{base}/deep"
    for said in (f"created {base}/sibling.txt", f"created {deep}", f"created {deep}/passwd", f"changed {base}"):
        assert said in found, found
    assert f"changed {base}/" not in found  # the workspace's own changes are not escapes


def test_a_serial_run_imports_the_reference_before_its_fault_scenarios_share_the_fake_file_system(tmp_path):
    # A module imported between two fault scenarios costs the next one pyfakefs' whole set-up: the
    # reference's modules, imported by each profile's first scenario, cost a run four of them.
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from harness.cli.main import main\n"
        "from harness.targets import faults\n"
        "take, why = faults._take, []\n"
        "def counted():\n"
        "    held = faults._held\n"
        "    patcher = take()\n"
        "    if held is not None and patcher is not held[0]:\n"
        "        why.extend(sorted(set(faults._modules()) - set(held[1])))\n"
        "    return patcher\n"
        "faults._take = counted\n"
        "code = main(['run', '-q', '--jobs', '1', '--profile', 'aptix-tul-004', '--profile', 'mcp-write-text-file',\n"
        f"             '--snapshots', {str(tmp_path / 'snaps')!r}, '--snapshot-update'])\n"
        "print('IMPORTED-BETWEEN', [m for m in why if m.startswith('reference_impl')])\n"
        "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "IMPORTED-BETWEEN []" in done.stdout, done.stdout[-2000:]


def test_a_module_imported_between_fault_scenarios_is_patched_without_a_new_set_up(scenario_from, tmp_path,
                                                                                    monkeypatch):
    # A codec or a candidate's module imported between two fault scenarios cost the next one pyfakefs'
    # whole set-up; now it is looked at and patched as the set-up would, and still writes nothing real.
    import importlib
    import sys

    outcomes, write, target, read_only = _writer_module(scenario_from, tmp_path, monkeypatch, "laterwriter")
    fresh_set_ups: list[int] = []
    fresh = faults._fresh

    def counted():
        fresh_set_ups.append(1)
        return fresh()

    monkeypatch.setattr(faults, "_fresh", counted)
    try:
        with Runner(target) as runner:
            assert runner.run(read_only).verdict is Verdict.PASS  # the patcher is held from here
            set_up = len(fresh_set_ups)
            target.answers["write_text_file"] = write
            importlib.import_module("laterwriter")
            runner.run(read_only)
            assert len(fresh_set_ups) == set_up  # the held one, with the newcomer patched
    finally:
        sys.modules.pop("laterwriter", None)
    assert outcomes == ["EROFS"]
    assert not (target.workspaces[1] / "ro" / "a.txt").exists()


def test_the_check_that_the_fake_file_system_is_in_effect_makes_nothing_on_it():
    # A scenario's file system is as pyfakefs empties it: nothing made (no inode taken) by the check.
    from pyfakefs.fake_filesystem_unittest import Patcher

    with faults.fake_filesystem() as fs:
        patcher = Patcher.PATCHER
        inodes, entries, root = fs.last_ino, dict(fs.root.entries), fs.root.st_mtime
        assert faults._in_effect(patcher)
        assert (fs.last_ino, dict(fs.root.entries), fs.root.st_mtime) == (inodes, entries, root)


def test_a_fault_scenario_with_another_patchers_open_left_behind_is_an_error_and_writes_nothing(
        scenario_from, monkeypatch):
    # Another file system's `open` standing in `builtins` (a patcher's fakes left behind): pyfakefs,
    # looking at `builtins` then, never patches it again, and a candidate would write there.
    from pyfakefs.fake_filesystem import FakeFilesystem
    from pyfakefs.fake_io import FakeIoModule

    other = FakeFilesystem()
    outcomes, target, full = _disk_full(scenario_from)
    with _open_wrapped_and_pyfakefs_forgetful(monkeypatch, FakeIoModule(other).open), Runner(target) as runner:
        result = runner.run(full)
    assert result.verdict is Verdict.ERROR
    assert "fake file system is not in effect" in result.reason
    assert outcomes == [] and target.workspaces == []
    assert other.listdir("/") == []  # (its own temporary folder is not made: nothing at all)


@pytest.mark.parametrize("astray", ["wrapped open", "another file system's open", "the real os",
                                    "another file system's os", "the fake os sent to the real one"])
def test_the_fake_file_system_is_not_in_effect_when_open_or_os_lead_elsewhere(monkeypatch, astray):
    import builtins
    import os

    from pyfakefs.fake_filesystem import FakeFilesystem
    from pyfakefs.fake_filesystem_unittest import Patcher
    from pyfakefs.fake_io import FakeIoModule
    from pyfakefs.fake_os import FakeOsModule

    with faults.fake_filesystem():
        patcher = Patcher.PATCHER
        assert faults._in_effect(patcher)
        with monkeypatch.context() as patch:
            if astray == "wrapped open":  # (even one leading to this very file system: where a wrapper
                fake = builtins.open     # leads cannot be told without a call, nor whether it will stay so)
                patch.setattr(builtins, "open", lambda *args, **kwargs: fake(*args, **kwargs))
            elif astray == "another file system's open":
                patch.setattr(builtins, "open", FakeIoModule(FakeFilesystem()).open)
            elif astray == "the real os":
                patch.setattr(faults, "os", faults.os.os_module)  # (the module the fake one stands for)
            elif astray == "another file system's os":
                patch.setattr(faults, "os", FakeOsModule(FakeFilesystem()))
            else:  # (pyfakefs' own switch, for its use_original_os)
                patch.setattr(FakeOsModule, "use_original", True)
            assert not faults._in_effect(patcher)
        assert faults._in_effect(patcher) and faults.os is not os  # (put back: the fake one again)


def test_what_is_outside_a_fake_workspace_when_it_is_placed_is_what_the_fake_os_lists():
    # The listing taken when the workspace is placed is read from pyfakefs' records; one after the
    # scenario that finds them changed, through the fake os: the two must agree on every entry and
    # signature, or every fault scenario would name escapes. Here with more than the harness makes:
    # files, a link, a folder of another mode, as a later pyfakefs might lay out on its own.
    from harness.containment import enclosure, fake_records
    from harness.run.workspace import Workspace

    with faults.fake_filesystem() as fs:
        os.makedirs("/var/lib/x")
        with open("/var/lib/x/f.txt", "w") as handle:
            handle.write("f")
        os.symlink("/var/lib", "/var/to-lib")
        os.chmod("/var/lib", 0o711)
        workspace = Workspace(contained=False)
        placed = f"{workspace.base}/{workspace.enclosure.current}"
        listed, cut = enclosure._listing(placed)
        _who, records = fake_records.outside(fs, placed)
        assert cut is None and {path: record[:7] for path, record in records.items()} == listed
        assert {"/tmp", str(workspace.base), "/var/lib/x/f.txt", "/var/to-lib"} <= set(listed)
        assert workspace.escapes() == []


def _helpers_uid(uid: int) -> None:
    from pyfakefs import helpers
    helpers.set_uid(uid)


@pytest.mark.parametrize(("outside", "named"), [
    (lambda base: os.chmod("/", 0), True),  # nothing can be listed any more: all of it gone, as the harness sees it
    (lambda base: os.chmod(base, 0o300), True),
    (lambda base: os.chmod("/tmp", 0o700), True),
    (lambda base: os.chown(base, 2, 2), False),  # (hides nothing from the harness: only the workspace is there)
    (lambda base: _helpers_uid(2), False),  # the harness itself another user there: the same
    (lambda base: os.utime("/tmp", ns=(1, 1)), False),  # a folder's times alone
    (lambda base: os.mkdir(f"{base}/sibling"), True),
    (lambda base: (os.mkdir("/tmp/made"), os.rmdir("/tmp/made")), False),  # made and gone
], ids=["root-closed", "enclosure-unreadable", "tmp-private", "enclosure-given-away", "another-user",
        "times", "made", "made-and-gone"])
def test_what_a_fake_scenario_changed_outside_its_workspace_is_named_as_the_fake_os_lists_it(outside, named):
    # When pyfakefs' records outside the workspace are no longer as they were, the file system is
    # listed through the fake os and named as before: the same names as a listing through the fake
    # os alone (records not kept), whatever the change (modes and owners that hide entries, who asks).
    import copy

    from harness.run.workspace import Workspace

    with faults.fake_filesystem():
        workspace = Workspace(contained=False)
        base = str(workspace.base)
        by_os = copy.copy(workspace.enclosure)
        by_os._records = None
        (workspace.root / "inside.txt").write_text("the workspace's own")
        outside(base)
        try:
            found = workspace.enclosure.escapes()
            assert found == by_os.escapes()
        finally:
            _helpers_uid(1)
            os.chmod("/", 0o755)
    assert bool(found) is named, found


def test_a_fake_scenario_run_as_another_user_names_what_that_user_cannot_list_as_the_fake_os_does():
    # Who the harness is there is part of the records compared: another user (pyfakefs' own ids
    # changed) lists less, and what it cannot list any more is named as a listing through the fake
    # os names it, as for the changes above.
    import copy

    from harness.run.workspace import Workspace

    with faults.fake_filesystem():
        os.makedirs("/var/closed/inner")
        os.chmod("/var/closed", 0o700)
        workspace = Workspace(contained=False)
        by_os = copy.copy(workspace.enclosure)
        by_os._records = None
        _helpers_uid(2)
        try:
            found = workspace.enclosure.escapes()
            assert found == by_os.escapes()
        finally:
            _helpers_uid(1)
    assert found == ["removed /var/closed/inner"]


@pytest.mark.parametrize("mounts", [1, 2])
@pytest.mark.parametrize("free", [0, 1, 1000])
def test_a_fake_disk_has_exactly_the_free_bytes_given_beside_what_given_uses(mounts, free):
    from harness.run.workspace import Workspace

    with faults.fake_filesystem() as fs:
        if mounts == 2:  # the usage asked of pyfakefs, as where more than one device is mounted
            fs.add_mount_point("/elsewhere")
        ws = Workspace(contained=False)
        ws.populate({"files": {"a.txt": "abc", "d/b.bin": {"hex": "00ff00ff"}}}, {"workspace": str(ws.root)})
        faults.apply(fs, {"disk_free": free}, ws.root)
        total, used, left = fs.get_disk_usage(str(ws.root))
        assert (used, left, total) == (7, free, 7 + free)
        (ws.root / "fits").write_bytes(b"x" * free)
        with pytest.raises(OSError) as raised:
            (ws.root / "no-room").write_bytes(b"y")
        assert raised.value.errno == errno.ENOSPC


def _fake_shape(fs, base: str) -> tuple:
    """Every entry of the fake file system as ``os.lstat`` gives it but its times, the base's random name
    put aside, with the disk's usage and the next inode number."""
    from harness.containment import fake_records

    _who, records = fake_records.outside(fs, "/nothing-left-out")
    shape = {path.replace(base, "<base>"): (record[0], record[2], *record[4:]) for path, record in records.items()}
    return shape, fs.get_disk_usage("/").used, fs.last_ino


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_fake_enclosure_made_from_the_records_is_what_mkdtemp_and_mkdir_make(monkeypatch, umask):
    import tempfile

    from harness.containment import fake_records
    from harness.run.workspace import Workspace

    shapes, names = [], []
    for route in ("records", "fake os"):
        with faults.fake_filesystem() as fs, monkeypatch.context() as patch:
            old = os.umask(umask)
            try:
                if route == "records":
                    patch.setattr(tempfile, "mkdtemp", lambda **_: pytest.fail("made through the fake os"))
                else:  # every folder asked of the fake os, as before
                    patch.setattr(fake_records, "entry", lambda fs, path: None)
                workspace = Workspace(contained=False)
            finally:
                os.umask(old)
            # (right in the root of the fake file system: the fewest names for pyfakefs to look up)
            assert workspace.root == workspace.base / "ws" and workspace.base.parent == Path("/")
            names.append(workspace.base.name)
            shapes.append(_fake_shape(fs, str(workspace.base)))
            assert workspace.escapes() == []
    assert shapes[0] == shapes[1]
    assert all(name.startswith("harness-") and len(name) == len("harness-") + 8 for name in names)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
@pytest.mark.parametrize("variable", [None, "TMPDIR", "TMP"])
def test_a_fake_file_system_emptied_for_the_next_scenario_is_what_its_own_reset_leaves(monkeypatch, umask, variable):
    # The next scenario's file system is emptied with its temporary folder made from the records
    # (faults._reset): the same entries, modes, owners, usage and inode numbers as pyfakefs' reset,
    # also where the temporary folder is another (then reset makes it, and /tmp a link to it).
    import tempfile

    from harness.containment import fake_records

    if variable is not None:
        monkeypatch.setenv(variable, "/var/scratch")
    shapes = []
    with faults.fake_filesystem() as fs:
        old = os.umask(umask)
        try:
            for empty in (faults._reset, type(fs).reset):
                os.makedirs("/tmp/left/over")
                with open("/tmp/left/over/f.txt", "wb") as handle:
                    handle.write(b"from the scenario before")
                tempfile.tempdir = "/tmp/left"
                empty(fs)
                who, _records = fake_records.outside(fs, "/nothing-left-out")
                shapes.append((who, _fake_shape(fs, "<none>"), tempfile.tempdir, len(fs.open_files)))
        finally:
            os.umask(old)
    assert shapes[0] == shapes[1]
    assert ("/tmp" in shapes[0][1][0]) and not any("left" in path for path in shapes[0][1][0])


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0o277])
@pytest.mark.parametrize("given", [
    {"dirs": ["out", "a/b/c"], "files": {"top.txt": "the old content\n", "a/b/c/deep.bin": {"hex": "00ff"},
                                         "new/x/y.txt": "", "out/z.txt": "z"}},
    {"dirs": [{"path": "closed", "mode": "0500"}], "files": {"closed/later.txt": "x"}},
    {"files": {"same": "a"}, "dirs": ["same"]},
    {"files": {"top.txt": "in a root the umask may close"}},
], ids=["folders-and-files", "a-mode-that-keeps-out", "a-file-where-a-folder-is", "a-file-alone"])
def test_a_fake_layout_made_from_the_records_is_what_the_fake_os_makes(monkeypatch, umask, given):
    # `given` is laid out on pyfakefs from its records (fake_records.lay_out) where it can be, else
    # through its os: the same entries, modes, owners, sizes, bytes, usage and inode numbers as
    # through its os alone, or the same error.
    from harness.containment import fake_records
    from harness.run.workspace import Workspace

    with faults.fake_filesystem():  # (tempfile's folder found: the probe it writes takes an inode number)
        Workspace(contained=False)
    shapes = []
    for route in ("records", "fake os"):
        with faults.fake_filesystem() as fs, monkeypatch.context() as patch:
            if route == "fake os":
                patch.setattr(fake_records, "lay_out", lambda *_args, **_kwargs: False)
            workspace = Workspace(contained=False)
            old = os.umask(umask)
            try:
                workspace.populate(given, {"workspace": str(workspace.root)})
                error = None
            except OSError as exc:
                error = (type(exc), exc.errno, str(exc.filename).replace(str(workspace.base), "<base>"))
            finally:
                os.umask(old)
            shape = _fake_shape(fs, str(workspace.base))
            base = str(workspace.base)
            texts = {path: fs.get_object(path.replace("<base>", base)).byte_contents for path in shape[0]
                     if path.startswith("<base>") and os.path.isfile(path.replace("<base>", base))}
            shapes.append((shape, texts, error))
    assert shapes[0] == shapes[1]


def test_a_fake_enclosure_is_not_made_where_a_folder_of_its_name_is():
    from harness.containment import enclosure
    from harness.run.workspace import Workspace

    with faults.fake_filesystem():
        taken = enclosure._names.getstate()
        name = "harness-" + "".join(enclosure._names.choices(enclosure._NAME_LETTERS, k=8))
        os.mkdir(f"/{name}")
        enclosure._names.setstate(taken)  # the next name picked is the one just made
        workspace = Workspace(contained=False)
        assert workspace.base.parent == Path("/") and workspace.base.name != name and os.listdir(f"/{name}") == []


def test_a_scenario_on_pyfakefs_is_judged_by_its_profile_as_the_disk_has_it():
    # The profile of a scenario's folder is read from the disk, never from the fake file system the
    # scenario runs on: looked up there first, it was not found, and the stand-in (no content
    # declared: Read's numbered lines judged as wording) was kept for the rest of the process.
    from harness.run.assemble import target
    from harness.scenario import aspects, catalog
    scenario = next(s for s in catalog.load([catalog.builtin_dir()]).scenarios if s.id == "claude-code/read/permission-denied")
    aspects._content_spec_of.cache_clear()
    with Runner(target("reference")) as runner:
        result = runner.run(scenario)
    assert result.verdict is Verdict.PASS, result.reason
    assert aspects.content_spec(scenario, "Read").lines  # as the run looked it up: Read's lines are content


def test_a_fault_scenario_beside_another_patchers_open_leaves_the_process_reading_its_source_files(
        scenario_from, monkeypatch):
    # pyfakefs' set-up points linecache and tokenize at the `open` it finds in builtins: made beside
    # another file system's `open`, its patcher left them reading there, and no traceback or
    # inspect.getsource of the process found a source file again (pytest-xdist's start among them).
    import inspect
    import linecache
    import tokenize

    from pyfakefs.fake_filesystem import FakeFilesystem
    from pyfakefs.fake_io import FakeIoModule

    before = linecache.__dict__.get("open"), tokenize._builtin_open
    _, target, full = _disk_full(scenario_from)
    with _open_wrapped_and_pyfakefs_forgetful(monkeypatch, FakeIoModule(FakeFilesystem()).open), \
            Runner(target) as runner:
        assert runner.run(full).verdict is Verdict.ERROR
    assert (linecache.__dict__.get("open"), tokenize._builtin_open) == before
    linecache.checkcache(__file__)
    assert "def test_a_fault_scenario_beside_another_patchers_open" in inspect.getsource(
        test_a_fault_scenario_beside_another_patchers_open_leaves_the_process_reading_its_source_files)


def test_the_fake_file_system_made_ready_before_a_fork_is_resumed_not_set_up_again(monkeypatch):
    monkeypatch.setattr(faults, "_held", None)
    faults.ready()
    held = faults._held
    assert held is not None
    patcher = held[0]

    def no_fresh_set_up():
        raise AssertionError("pyfakefs was set up again")
    monkeypatch.setattr(faults, "_fresh", no_fresh_set_up)
    with faults.fake_filesystem() as fs:
        assert fs is patcher.fs and os.path.isdir("/tmp") and not os.path.exists(__file__)
    faults.ready()  # one held already: left as it is
    assert faults._held is not None and faults._held[0] is patcher
