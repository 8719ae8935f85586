"""Realises the faults a scenario ``requires`` for an in-process target: by the kernel where it can, else on pyfakefs.

The tests run as root, so a mode denies root nothing, and a read-only mount or a full disk cannot
be made for the whole machine. For a target that runs in this process (the reference):

- **permissions**, **read-only-fs** and **disk-full**, where the machine allows
  (:func:`real_conditions`, probed once per process), on the real file system: from the layout of
  ``given`` to the last reading of the workspace, the runner's thread holds no capability that
  passes a mode (harness/util/capabilities.py), so modes bite as they would a user's, and each
  ``given.read_only`` folder is a read-only bind mount in that thread's own mount namespace
  (harness/containment/mounts.py), taken down before the workspace is moved out. The folders' modes are
  set as on pyfakefs (files 0444, folders 0555), so both ways give the same states, answers and
  snapshots. A full disk (``disk_free: 0``) is a file system of the workspace's own, shrunk to
  what ``given`` uses once it is laid out; it is chosen only where no file of ``given`` holds a
  byte (:func:`on_real_fs`), as a real file system counts whole blocks: a file's last block may
  have room left. ``HARNESS_FAULTS=fake`` puts these scenarios on pyfakefs too.
- the others (``disk_free`` above 0, or beside files that hold bytes), where the kernel cannot: the
  whole scenario runs on a pyfakefs file system instead: modes bite (``allow_root_user=False``),
  ``disk_free`` sets the free space in bytes, and writes under ``read_only`` folders fail with
  EROFS. Out-of-process targets realise these conditions their own way or skip the scenario (see
  ``Target.realises``).

The fake file system is set up once per process and emptied for each scenario: pyfakefs' own
set-up (finding the modules to patch, a new file system and fake modules) cost a fault scenario
more than its calls did. Between scenarios the patches are lifted and pyfakefs is left as if
torn down, so another user of pyfakefs in the process (a test's ``fs`` fixture) finds it free;
if it is not free, or a module it patches was replaced or removed since, a scenario gets the full
set-up instead (modules imported since are looked at and patched as the set-up would).

Before a scenario runs on it, the calls a candidate makes (``open``, ``os``) are checked to be the
fake file system's own (:func:`_in_effect`): pyfakefs remembers which modules it has looked at, so a module it
looked at while its functions were replaced (a test's own wrapper of ``open``, another patcher's
fakes left behind) would stay unpatched for the rest of the process, and the scenario would write
to the real disk or to a dead fake one. A check that fails gets a full set-up with pyfakefs' memory
of modules cleared; if that fails too, the scenario is an error (:class:`Unavailable`).
"""

from __future__ import annotations

import contextlib
import errno
import operator
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

FAKEABLE = frozenset({"permissions", "read-only-fs", "disk-full"})

#: Set to ``fake`` to run every fault scenario on pyfakefs, also where the machine realises its faults.
FAULTS_VARIABLE = "HARNESS_FAULTS"


def on_real_fs(requires: Iterable[str], given: dict[str, Any] | None = None) -> bool:
    """Whether a scenario requiring ``requires``, with ``given``, runs on the real file system, its
    faults realised by the kernel (see :func:`real_conditions`), rather than on pyfakefs: a
    ``disk_free`` only where the kernel's full disk is exact (:func:`_full_disk_exact`)."""
    needs = set(requires)
    if not needs <= real_conditions():
        return False
    return "disk-full" not in needs or _full_disk_exact(given or {})


def on_pyfakefs(requires: Iterable[str], given: dict[str, Any] | None = None) -> bool:
    """Whether a scenario requiring ``requires``, with ``given``, runs on pyfakefs when its target is
    in this process: it requires a fault the kernel does not realise here (:func:`on_real_fs`)."""
    return bool(FAKEABLE.intersection(requires)) and not on_real_fs(requires, given)


def _full_disk_exact(given: dict[str, Any]) -> bool:
    """Whether a real full disk gives what pyfakefs' ``disk_free`` does for ``given``: no
    ``disk_free`` (no limit), or none at all (0) where no file holds a byte, so that no block has
    room left either (a real file system counts whole blocks, pyfakefs bytes)."""
    if "disk_free" not in given:
        return True
    if given["disk_free"] != 0:
        return False
    from harness.scenario.content_spec import of_given_file, to_bytes
    return not any(to_bytes(of_given_file(spec)) for spec in given.get("files", {}).values())


_real: frozenset[str] | None = None


def real_conditions() -> frozenset[str]:
    """The conditions this process realises on the real file system, found once per process.

    ``permissions``: a file's mode is enforced, either because the process runs as a user other than
    root, or because root can put down the capabilities that let it past modes
    (:func:`harness.util.capabilities.modes_bite`, entered by the runner from the layout of ``given``
    to the last reading of the workspace, as pyfakefs' user is held to modes for all of it). Probed
    for real: a file of mode 0000 must refuse to be read in that state. ``read-only-fs``: besides,
    a read-only bind mount can be made (:func:`harness.containment.mounts.available`). ``disk-full``:
    besides, a full disk can be mounted (:func:`harness.containment.mounts.full_disk_available`).
    ``HARNESS_FAULTS=fake`` realises none of them here (every fault scenario on pyfakefs)."""
    global _real
    if _real is None:
        _real = frozenset() if os.environ.get(FAULTS_VARIABLE) == "fake" else _probe_real()
    return _real


def _probe_real() -> frozenset[str]:
    import tempfile

    from harness.util import capabilities

    found: set[str] = set()
    try:
        folder = tempfile.mkdtemp(prefix="harness-modes-")
    except OSError:
        return frozenset()
    probe = os.path.join(folder, "closed")
    try:
        with open(probe, "wb"):
            pass
        os.chmod(probe, 0)
        with capabilities.modes_bite():
            try:
                with open(probe, "rb"):
                    pass
            except PermissionError:
                found.add("permissions")
    except OSError:  # the kernel refused to change the capabilities: pyfakefs realises them
        pass
    finally:
        with contextlib.suppress(OSError):
            os.remove(probe)
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    if "permissions" in found:  # the read-only scenarios run where modes bite too, as on pyfakefs
        from harness.containment import mounts
        if mounts.available(tempfile.gettempdir()):
            found.add("read-only-fs")
        if mounts.full_disk_available(tempfile.gettempdir()):
            found.add("disk-full")
    return frozenset(found)


class Unavailable(RuntimeError):
    """The fake file system could not be put in place: the scenario's faults cannot be realised."""


#: The patcher set up by an earlier scenario, paused, and the modules that were loaded when it
#: last looked for the modules to patch (:func:`_modules`).
_held: tuple[Any, dict[str, Any]] | None = None


def _modules() -> dict[str, Any]:
    """The loaded modules, by name (compared by identity, as modules are; held, so no module's
    identity is reused): a module imported while the patcher was paused would go unpatched, also
    when another went meanwhile and their number is the same."""
    import sys
    return dict(sys.modules)


def ready() -> None:
    """Sets up the patcher that the fault scenarios on pyfakefs resume, and holds it paused, if none
    is held: in the parent before ``--jobs`` workers are forked, so that each inherits it and none
    pays pyfakefs' full set-up (a look at every loaded module) again. What this process is left
    with is what a serial run has after its first such scenario."""
    if _held is None:
        with contextlib.suppress(Unavailable), fake_filesystem():
            pass


@contextlib.contextmanager
def fake_filesystem() -> Iterator[Any]:
    """Runs the enclosed code on an empty pyfakefs file system where modes apply; yields it."""
    with _source_readers_kept():
        with _patched() as fs:
            yield fs


@contextlib.contextmanager
def _source_readers_kept() -> Iterator[None]:
    """Puts back, after the block, the ``open`` that linecache and tokenize read source files with.

    pyfakefs' set-up points both at the ``open`` that stood in ``builtins`` when its patcher was made,
    so that a traceback shown while it patches reads the real file, and leaves them so. A patcher
    made while another ``open`` stands there (a patcher's fakes left behind, which makes the scenario
    an error) would leave them reading that other file system: no traceback or ``inspect.getsource``
    of the process would find a source file again."""
    import linecache
    import tokenize
    missing = object()
    kept = [(module.__dict__, name, module.__dict__.get(name, missing))
            for module, name in ((linecache, "open"), (tokenize, "_builtin_open"))]
    try:
        yield
    finally:
        for namespace, name, value in kept:
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


@contextlib.contextmanager
def _patched() -> Iterator[Any]:
    """:func:`fake_filesystem` without putting back the source readers."""
    patcher = _take()
    if not _in_effect(patcher):
        _discard(patcher)
        from pyfakefs.fake_filesystem_unittest import Patcher
        Patcher.clear_fs_cache()  # every module looked at again, as they are now
        patcher = _fresh()
        if not _in_effect(patcher):
            _discard(patcher)
            raise Unavailable("the fake file system is not in effect in this process (pyfakefs could not "
                              "patch open and os): the scenario's faults cannot be realised")
    try:
        yield patcher.fs
    finally:
        _put_back(patcher)


def _take() -> Any:
    """Returns a patcher patching now, on an empty file system: the held one resumed, else a new one."""
    global _held
    import linecache
    import sys
    import tempfile
    import tokenize

    from pyfakefs import helpers
    from pyfakefs.fake_filesystem_unittest import Patcher

    held, _held = _held, None
    if held is not None:
        patcher, modules = held
        # pyfakefs keeps the modules to patch in its class, and its pytest plugin empties that at the
        # end of every pytest session (an in-process pytest run too): resumed then, it patches nothing.
        if Patcher.PATCHER is None and Patcher.REF_COUNT == 0 and Patcher.FS_MODULES is patcher.fs_modules \
                and _only_added(modules):
            if len(sys.modules) != len(modules):  # modules imported since: looked at as a set-up would
                _look_at_new_modules(patcher)
            Patcher.PATCHER, Patcher.REF_COUNT = patcher, 1
            helpers.set_uid(1)  # as Patcher(allow_root_user=False) does, before the root is made
            helpers.set_gid(1)
            patcher.fs.__dict__.pop("raise_os_error", None)  # what _make_read_only put in place
            _reset(patcher.fs)
            patcher.resume()
            # The temporary folder tempfile found on this (then identical) file system: finding it
            # again writes and removes a probe file in each candidate, a third of a workspace's set-up.
            tempfile.tempdir = patcher.fake_tempdir
            linecache.open = patcher.original_open  # type: ignore[attr-defined]  # as Patcher.setUp leaves them
            tokenize._builtin_open = patcher.original_open  # type: ignore[attr-defined]
            return patcher
    return _fresh()


def _reset(fs: Any) -> None:
    """Empties ``fs`` as its ``reset`` does, the temporary folder ``/tmp`` made from its records
    (:func:`fake_records.make_folder`) where that is the folder ``reset`` makes (no ``TMPDIR``,
    ``TEMP`` or ``TMP`` names another): ``reset`` looks its path up thrice in making it, most of the
    cost of a fresh file system."""
    import tempfile

    from harness.containment import fake_records

    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")) or not getattr(fs, "create_temp_dir", False):
        fs.reset()
        return
    fs.create_temp_dir = False
    try:
        fs.reset()
    finally:
        fs.create_temp_dir = True
    tempfile.tempdir = None  # (as reset leaves it: tempfile finds its folder again)
    fake_records.make_folder(fs, fs.root, "tmp", 0o777)


def _only_added(modules: dict[str, Any]) -> bool:
    """Whether every module of ``modules`` is still loaded, as the same object (others may have come)."""
    import sys
    now = sys.modules
    if len(now) == len(modules):  # the common case, none came: compared in C, names and identities in order
        return list(now) == list(modules) and all(map(operator.is_, now.values(), modules.values()))
    return len(now) > len(modules) and all(now.get(name) is module for name, module in modules.items())


def _look_at_new_modules(patcher: Any) -> None:
    """Has pyfakefs look at the modules imported since it last did, as its set-up does (it looks
    only at those it has not seen), so that they are patched too; the patcher then holds them."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore")  # as pyfakefs' set-up looks at them
        patcher._find_modules()
    patcher.modules_seen = _modules()


def _fresh() -> Any:
    """Returns a new patcher patching now (pyfakefs' full set-up)."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    fresh: Any = Patcher(allow_root_user=False)
    fresh.setUp()
    fresh.pause()  # pyfakefs swaps some entries of sys.modules (os, io, ...) while it patches:
    fresh.modules_seen = _modules()  # the modules as they are between scenarios, paused
    fresh.fs_modules = Patcher.FS_MODULES
    fresh.resume()
    return fresh


def _in_effect(patcher: Any) -> bool:
    """Whether ``patcher``'s file system is the one ``open`` and ``os`` reach now: ``builtins.open``
    is its fake ``io`` module's ``open`` and this module's ``os`` (as a candidate's module sees it)
    its fake ``os`` module, both on its file system, and no switch sends the fake modules' calls
    to the real ones (pyfakefs patches a module's functions and its modules apart).

    Asked of the objects that stand there, not by a file made and looked for through them (four
    operations on the fake file system cost a fault scenario a tenth of its time): a wrapper of
    ``open`` or another patcher's fakes left behind are neither. A wrapper is refused even where it
    leads to this file system now, as where it leads cannot be told without calling it."""
    import builtins

    from pyfakefs.fake_os import FakeOsModule

    fakes = getattr(patcher, "fake_modules", None) or {}
    fake_io, fake_os = fakes.get("io"), fakes.get("os")
    fs = getattr(patcher, "fs", None)
    return (fs is not None and fake_io is not None and fake_os is not None
            and getattr(fake_io, "filesystem", None) is fs and getattr(fake_os, "filesystem", None) is fs
            and builtins.open == fake_io.open  # (a bound method: the same function, of this very object)
            and os is fake_os and not FakeOsModule.use_original)


def _discard(patcher: Any) -> None:
    """Lifts ``patcher``'s patches for good and leaves pyfakefs free."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    current: Any = Patcher.PATCHER
    if current is patcher:  # (nested in another user's patcher, only our count goes)
        patcher.tearDown()


def _put_back(patcher: Any) -> None:
    """Lifts the patches and leaves pyfakefs free, as a tear-down does, holding the patcher for the next scenario."""
    global _held
    import tempfile

    from pyfakefs import helpers
    from pyfakefs.fake_filesystem_unittest import Patcher

    current: Any = Patcher.PATCHER
    if current is not patcher or Patcher.REF_COUNT != 1:  # nested in another user's patcher
        patcher.tearDown()
        return
    patcher.fake_tempdir = tempfile.tempdir  # found (or not: None) on the fake file system
    patcher.pause()
    Patcher.PATCHER, Patcher.REF_COUNT = None, 0
    helpers.reset_ids()
    seen = getattr(patcher, "modules_seen", None)
    if seen is not None:  # the next scenario resumes it if none of these was replaced or went meanwhile (_take)
        _held = (patcher, seen)


def apply(fs: Any, given: dict[str, Any], root: Path) -> None:
    """Applies ``given.read_only`` and ``given.disk_free`` to the fake file system ``fs``."""
    read_only = [str(root / rel) for rel in given.get("read_only", ())]
    if read_only:
        _make_read_only(fs, read_only)
    if "disk_free" in given:
        used = _used(fs)
        if used is None:  # pyfakefs reports usage only once a total is set: set a large one, then read it
            fs.set_disk_usage(1 << 40, str(root))
            used = fs.get_disk_usage(str(root)).used
        fs.set_disk_usage(used + given["disk_free"], str(root))


def _used(fs: Any) -> int | None:
    """The bytes used on ``fs``, read from pyfakefs' record of its one mount point (the root: where the
    workspace is), which it keeps with or without a total; None if it has more (ask it: asking
    builds a named tuple's class each time, a tenth of the harness's part of a full-disk scenario)."""
    mounts = list(fs.mount_points.values())
    if len(mounts) != 1:
        return None
    used = mounts[0].get("used_size")
    return used if isinstance(used, int) else None


@contextlib.contextmanager
def realised(given: dict[str, Any], root: Path) -> Iterator[Callable[[], None]]:
    """Realises ``given``'s faults on the real file system (a scenario :func:`on_real_fs`) until the
    block ends, entered on the empty workspace: a full disk (``disk_free``) is mounted on it, then
    the calling thread's capabilities that pass a mode are put down (harness/util/capabilities.py),
    as for the fake file system's user, from the layout to the last reading. Yields the function to
    call once ``given`` is laid out: it fills the disk and applies ``given.read_only`` (the
    folders' modes as on the fake file system, then each made a read-only mount;
    harness/containment/mounts.py). Raises OSError or ValueError if a fault cannot be realised."""
    from harness.containment import mounts
    from harness.util import capabilities

    with contextlib.ExitStack() as stack:
        fill = stack.enter_context(mounts.full_disk(str(root))) if "disk_free" in given else None
        stack.enter_context(capabilities.modes_bite())

        def laid_out() -> None:
            if fill is not None:
                fill()
            folders = list(given.get("read_only", ()))
            if folders:
                for folder in folders:  # reached without a link (ELOOP, ENOTDIR; the mount checks it again)
                    os.close(mounts.open_folder(str(root), folder))
                _read_only_modes([str(root / folder) for folder in folders])
                stack.enter_context(mounts.read_only(str(root), folders))

        yield laid_out


def _read_only_modes(directories: list[str]) -> None:
    """Gives the files under ``directories`` mode 0444 and the folders 0555, deepest first; a link is
    left alone (never followed: os.walk does not go down one)."""
    for top in directories:
        for dirpath, _dirnames, filenames in os.walk(top):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if stat.S_ISREG(os.lstat(path).st_mode):
                    os.chmod(path, 0o444)
        for dirpath, _dirnames, _ in sorted(os.walk(top), key=lambda item: -len(item[0])):
            os.chmod(dirpath, 0o555)


def _make_read_only(fs: Any, directories: list[str]) -> None:
    """Denies writes under ``directories`` and reports them as EROFS, as a read-only mount would."""
    _read_only_modes(directories)
    original = fs.raise_os_error

    def raise_os_error(err_no: int, filename: Any = None, winerror: Any = None) -> Any:
        if err_no in (errno.EACCES, errno.EPERM) and _under(filename, directories):
            err_no = errno.EROFS
        return original(err_no, filename, winerror)

    fs.raise_os_error = raise_os_error


def _under(filename: Any, directories: list[str]) -> bool:
    if filename is None:
        return False
    name = os.fsdecode(filename)
    return any(name == top or name.startswith(top.rstrip("/") + "/") for top in directories)
