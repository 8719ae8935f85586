"""Removing what a scenario leaves: workspaces and enclosures, whatever modes, flags, depth or mounts.

:func:`remove_tree` removes a folder a candidate may have made hostile (mode-000 folders, immutable
flags, mount points below it, chains deeper than a recursion goes); a :class:`Remover` does it on a
background thread (on a disk) or inline (on a memory file system); the mount table is read again
only when the kernel says it changed.

Trees of any depth: a candidate may leave a folder chain deeper than the harness could remove.

``shutil.rmtree`` (Python 3.11) and ``os.walk`` recurse once per level, with a frame and a
descriptor each: a candidate that makes a chain of 3,000 folders in its workspace (``mkdir d; cd
d`` in a loop) made the harness end with a ``RecursionError`` traceback and leave the workspace
behind. :func:`flatten` brings such a tree within reach first: every folder deeper than
:data:`FLAT_DEPTH` is moved up to the top of the tree under a new name, one at a time, walking with
descriptors (at most ``FLAT_DEPTH`` open, no path longer than a name), never through a link and
never into another file system (a mount point a candidate made is left where it is). The tree's
content is the same, only shallower; removing it is then the usual removal.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.util import processes


class Removable(Protocol):
    """What a :class:`Remover` takes: a workspace, a tree in the trash, an enclosure."""

    @property
    def base(self) -> Any: ...

    def remove(self) -> Leftover | None: ...

#: Levels a walk below the top of a tree goes down before it moves folders up (see flatten).
FLAT_DEPTH = 64
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def walk(top_fd: int, visit: Callable[[int, str, os.stat_result, int], bool]) -> None:
    """Calls ``visit(folder_fd, name, lstat, level)`` for every entry below the folder open as
    ``top_fd`` (level 1 for its own entries), going into a folder when ``visit`` says so: only through
    ``O_NOFOLLOW``, and only when it is the folder just looked at (a candidate may swap a folder for
    a link meanwhile); a mode-000 folder is made searchable first. One descriptor per level is held;
    ``top_fd`` stays open. An entry or folder that cannot be looked at is passed over."""
    stack: list[tuple[int, Iterator[str]]] = [(top_fd, iter(_names(top_fd)))]
    try:
        while stack:
            fd, names = stack[-1]
            name = next(names, None)
            if name is None:
                fd, _ = stack.pop()
                if fd != top_fd:
                    os.close(fd)
                continue
            try:
                info = os.lstat(name, dir_fd=fd)
                if not visit(fd, name, info, len(stack)) or not stat.S_ISDIR(info.st_mode):
                    continue
                sub = _open_dir(fd, name)  # ELOOP or ENOTDIR if swapped for a link meanwhile
            except OSError:
                continue
            if os.path.samestat(info, os.fstat(sub)):  # inode and device: a mode made searchable still matches
                stack.append((sub, iter(_names(sub))))
            else:
                os.close(sub)
    finally:
        for fd, _ in stack:
            if fd != top_fd:
                with contextlib.suppress(OSError):
                    os.close(fd)


def flatten(top: str | os.PathLike[str], depth: int = FLAT_DEPTH) -> int:
    """Moves every folder more than ``depth`` levels below ``top`` up into ``top`` (renamed
    ``.flat-<n>``); returns how many were moved. Errors on the way leave that part as it is."""
    moved: list[str] = []
    top_fd = os.open(top, _DIR_FLAGS)
    try:
        device = os.fstat(top_fd).st_dev
        pending: list[str | None] = [None]  # None: the top itself; else a folder moved up into it

        def visit(fd: int, name: str, info: os.stat_result, level: int, limit: int) -> bool:
            if not stat.S_ISDIR(info.st_mode) or info.st_dev != device:
                return False  # a file, a link, or a mount point: never entered
            if level < limit:
                return True
            new = f".flat-{os.getpid()}-{len(moved)}-{os.urandom(4).hex()}"
            with contextlib.suppress(OSError):
                os.rename(name, new, src_dir_fd=fd, dst_dir_fd=top_fd)
                moved.append(new)
                pending.append(new)
            return False

        while pending:
            name = pending.pop()
            limit = depth if name is None else depth - 1  # a folder moved up is one level below the top
            try:
                first = os.dup(top_fd) if name is None else _open_dir(top_fd, name)
            except OSError:
                continue
            try:
                walk(first, functools.partial(visit, limit=limit))
            finally:
                os.close(first)
    finally:
        os.close(top_fd)
    return len(moved)


def _open_dir(parent_fd: int, name: str) -> int:
    """Opens the folder ``name`` (never a link); a mode-000 folder is made searchable first."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        searchable(name, parent_fd)
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)


def searchable(name: str | os.PathLike[str], parent_fd: int | None = None) -> None:
    """Gives the folder ``name`` mode 0700, never through a link: the folder is pinned by an
    ``O_PATH | O_NOFOLLOW`` descriptor and changed through it (``chmod`` itself follows a link that
    a candidate may have put there since it was looked at). Raises OSError when it is no folder."""
    fd = os.open(name, getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC,
                 **({} if parent_fd is None else {"dir_fd": parent_fd}))
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise NotADirectoryError(f"{name}: not a folder")
        os.chmod(f"/proc/self/fd/{fd}", 0o700)  # the pinned inode, whatever its name leads to now
    finally:
        os.close(fd)


def make_searchable(top: str | os.PathLike[str], depth: int = 4096) -> None:
    """Gives every folder of the tree ``top`` mode 0700, by descriptors, never through a link (a
    mode-000 tree a candidate left, before it is removed); errors leave that part as it is."""
    try:
        searchable(top)
        top_fd = os.open(top, _DIR_FLAGS)
    except OSError:
        return

    def visit(fd: int, name: str, info: os.stat_result, level: int) -> bool:
        if not stat.S_ISDIR(info.st_mode) or level >= depth:
            return False
        searchable(name, fd)
        return True

    try:
        walk(top_fd, visit)
    finally:
        os.close(top_fd)


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def chown_tree(top: str | os.PathLike[str], uid: int, gid: int, depth: int = 256) -> None:
    """Gives ``top`` and everything below it (``depth`` levels at most) to ``uid``/``gid``, by
    descriptors: each entry is changed relative to its folder's descriptor without following a
    link, and a folder is entered only through ``O_NOFOLLOW`` when it is the one just looked at.

    A candidate that runs as ``uid`` (``--run-as``) owns its workspace and may swap a folder for a
    link while the harness walks it by path; a path walk would then follow the link and hand the
    link's target (``/etc``) to the candidate's user, as root.
    """
    top_fd = os.open(top, _DIR_FLAGS)

    def visit(fd: int, name: str, info: os.stat_result, level: int) -> bool:
        os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
        return level < depth

    try:
        os.chown(top_fd, uid, gid)
        walk(top_fd, visit)
    finally:
        os.close(top_fd)


@dataclass(frozen=True)
class Leftover:
    """A workspace base that could not be removed, and why (every report names it)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"could not remove {self.path} ({self.reason})"

    #: What the JSON report's ``leftovers`` entry calls it: ``left`` (could not be removed), or ``escape``.
    kind = "left"

    def as_dict(self) -> dict[str, str]:
        """Returns the JSON report's form: ``{"path", "reason", "kind"}``."""
        return {"path": self.path, "reason": self.reason, "kind": self.kind}


@dataclass(frozen=True)
class LateEscape(Leftover):
    """An escape seen after the last scenario (while the candidate answered ``bye`` and ended): no
    scenario's verdict can carry it, so it fails the run as a leftover does (every report names it)."""

    kind = "escape"

    def __str__(self) -> str:
        return f"escaped after the last scenario: {self.path} ({self.reason})"


class Tree:
    """A folder to remove (a finished workspace moved to the trash); what a :class:`Remover` takes."""

    def __init__(self, base: str | Path) -> None:
        self.base = base

    def remove(self) -> Leftover | None:
        """Removes it; returns what could not be removed, or None."""
        return remove_tree(self.base)


def split_leftovers(leftovers: list[Any]) -> tuple[list[Any], list[Any]]:
    """Returns the escapes after the last scenario and the workspaces left behind, apart (as
    objects, or as the JSON report's dicts: by ``kind``, ``left`` when there is none)."""
    def kind(left: Any) -> str:
        return str(left.get("kind", "left")) if isinstance(left, dict) else getattr(left, "kind", "left")
    return [left for left in leftovers if kind(left) == "escape"], [left for left in leftovers if kind(left) != "escape"]


def remove_tree(base: str | Path) -> Leftover | None:
    """Removes ``base`` and everything under it, whatever modes, flags or depth a candidate left.

    Folders are made searchable first (mode 000 trees); what still resists (an immutable flag)
    gets ``chattr -R -i`` and a second try. A mount point below the base (a candidate running as
    root may bind-mount a folder from elsewhere into its workspace) is never entered: removing
    through it would delete what it shows from outside. A tree deeper than the removal's recursion
    can go is made shallow first (harness/containment/cleanup.py). Returns what could not be removed, or None.
    """
    try:
        return _remove_tree(base)
    except RecursionError:
        pass
    if mounts_below(base):  # moving folders up could move a mount point's path out of sight: not done
        return Leftover(str(base), "folders nested too deep to remove around the mount points below them; "
                                   "unmount them to remove it")
    try:
        flatten(base)
        return _remove_tree(base)
    except (OSError, RecursionError) as exc:
        return Leftover(str(base), f"folders nested too deep to remove: {exc}")


def _remove_tree(base: str | Path) -> Leftover | None:
    try:
        info = os.lstat(base)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):  # a link (or file) a candidate put where its folder was: that entry alone
        os.unlink(base)
        return None
    mounts = mounts_below(base)
    if mounts:
        _remove_around(base, mounts)
        if not os.path.lexists(base):
            return None
        names = ", ".join(sorted(os.path.relpath(m, os.path.realpath(base)) for m in mounts))
        return Leftover(str(base), f"{_count(base, mounts)} entries left; mount points not "
                                   f"entered, unmount them to remove it: {names}")
    for attempt in range(2):
        if attempt or not _plain_rmtree(base):
            make_searchable(base)  # by descriptors: a folder swapped for a link is not followed
            shutil.rmtree(base, ignore_errors=True)
        if not os.path.lexists(base):
            return None
        if attempt == 0 and shutil.which("chattr"):
            import subprocess  # here: only a workspace with immutable entries needs it
            subprocess.run(["chattr", "-R", "-i", "-a", str(base)], capture_output=True, timeout=60)
    return Leftover(str(base), f"{_count(base, set())} entries left")


def _plain_rmtree(base: str | Path) -> bool:
    """Tries a plain removal first (what nearly every workspace needs); returns whether it is gone."""
    failed: list[Any] = []
    shutil.rmtree(base, onerror=lambda *error: failed.append(error))
    # Without an error the base itself was removed last: only after one is there anything to look at.
    return not failed or not os.path.lexists(base)


def _remove_around(base: str | Path, mounts: set[str]) -> None:
    """Removes everything below ``base`` that is not a mount point or inside one; never descends into one."""
    real = os.path.realpath(base)
    with contextlib.suppress(OSError):
        os.chmod(real, 0o700)
    files: list[str] = []
    dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(real):
        kept = []
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                files.append(path)
            elif path not in mounts:
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)  # a mode-000 folder is listed next, so searchable first
                kept.append(name)
                dirs.append(path)
        dirnames[:] = kept
        files += [os.path.join(dirpath, name) for name in filenames]
    for path in files:
        with contextlib.suppress(OSError):
            os.unlink(path)
    for path in reversed(dirs):  # deepest first; a folder holding a mount point stays
        with contextlib.suppress(OSError):
            os.rmdir(path)
    with contextlib.suppress(OSError):
        os.rmdir(real)


def _count(base: str | Path, mounts: set[str]) -> int:
    """Returns how many entries are left below ``base``, not counting what is inside a mount point."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(os.path.realpath(base)):
        total += len(dirnames) + len(filenames)
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in mounts]
    return total


class Remover:
    """Removes finished workspaces (and enclosures): on a disk on a background thread, so the next
    scenario need not wait; on a memory file system in the calling thread (``inline``).

    Deleting a tree on a disk is mostly system calls that wait for the disk, which run beside the
    next scenario's work on another core; ``drain`` waits until every workspace handed over is
    gone. Finished workspaces (already moved to the trash, so out of every later scenario's way)
    are handed over ``BATCH`` at a time: waking the thread costs a hand-over of the GIL each time,
    more than removing a small workspace.

    ``inline``: the trees are removed in the calling thread instead (``BATCH`` at a time, as
    above), for workspaces on a memory file system: there removing is a few microseconds of
    system calls per entry and never waits, so a thread would only contend for the GIL with the
    scenarios' own work (each system call of one hands the GIL to the other), which costs more
    than the removal itself.
    """

    #: Finished workspaces handed to the thread at once.
    BATCH = 32

    def __init__(self, *, inline: bool = False) -> None:
        self._queue: queue.Queue[list[Removable] | None] = queue.Queue()
        self._pending: list[Removable] = []
        self.leftovers: list[Leftover] = []  # workspaces that could not be removed: every report names them
        self._thread: threading.Thread | None = None
        self.inline = inline

    def remove(self, workspace: Removable) -> None:
        """Schedules ``workspace`` (anything with ``base`` and ``remove()``) for removal."""
        with processes.deferred():  # a signal must not leave a thread unstarted or a workspace unqueued
            self._pending.append(workspace)
            if isinstance(workspace, Tree) and len(self._pending) < self.BATCH:
                return  # in the trash: nothing waits for it (an enclosure or a whole workspace goes at once)
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._pending:
            return
        if self.inline:
            # One at a time, each dropped from the list once removed: an interruption (Ctrl-C where
            # nothing defers it, as under pytest) leaves the rest pending for ``drain``, never forgotten.
            while self._pending:
                self._remove(self._pending[:1])
                del self._pending[0]
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="workspace-remover", daemon=True)
            self._thread.start()
        batch, self._pending = self._pending, []
        self._queue.put(batch)

    def drain(self) -> None:
        """Returns once every scheduled workspace is removed."""
        with processes.deferred():  # an interrupted join leaves a thread that later work is queued to in vain
            self._hand_over()
            if self._thread is not None:
                self._queue.put(None)
                self._thread.join()
                self._thread = None

    def _work(self) -> None:
        while (batch := self._queue.get()) is not None:
            self._remove(batch)

    def _remove(self, batch: list[Removable]) -> None:
        for workspace in batch:
            try:
                left = workspace.remove()
            except OSError as exc:
                left = Leftover(str(workspace.base), str(exc))
            if left:
                self.leftovers.append(left)


def _unescape_mount(text: str) -> str:
    """Decodes a mount point as /proc/<pid>/mountinfo writes it (space, tab, newline, backslash as \\ooo)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


#: The most of a mount table read (a larger read buffer costs each reading; the table of a machine
#: with thousands of mounts fits).
_MOUNTINFO_MAX = 1 << 22


def _read_upto(file: Any, limit: int) -> bytes:
    """Reads ``file`` to its end or to ``limit`` bytes, in pieces (one buffer of the limit's size
    would be taken, and given back, at each reading)."""
    pieces, held = [], 0
    while held < limit and (piece := file.read(min(1 << 16, limit - held))):
        pieces.append(piece)
        held += len(piece)
    return b"".join(pieces)


class _MountTable:
    """The mount points the calling thread sees, read again only when the kernel says they changed.

    ``/proc/thread-self/mountinfo`` is pollable: a mount or unmount anywhere marks the open file with
    POLLPRI (proc(5)), so removing a workspace costs one ``poll`` instead of reading and parsing
    the table. A forked worker opens its own (the mark is per open file). An open table stays the
    one of the mount namespace it was opened in, and a thread that moved to a namespace of its own
    (harness/containment/mounts.py, for a read-only folder) mounts there, as the processes it starts do:
    a table is kept for each namespace the harness's threads are in.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = -1  # the fork generation (below) the open tables belong to
        self._tables: dict[int, _Table] = {}  # by the mount namespace's inode

    def _table(self) -> _Table | None:
        """The calling thread's namespace's table, read again if it changed; None where none can be read."""
        import select
        try:
            namespace = getattr(_namespace, "inode", None)
            if namespace is None:  # looked up once per thread (each lookup in /proc costs about 7 us)
                namespace = _namespace.inode = os.stat(f"{_PROC}/ns/mnt").st_ino
            if self._pid != _forks[0]:
                self._forget()  # the parent's tables: this process reads its own
                self._pid = _forks[0]
            table = self._tables.get(namespace)
            if table is None:
                if len(self._tables) >= 8:
                    self._forget()
                table = self._tables[namespace] = _Table(open(f"{_PROC}/mountinfo", "rb"), select.poll())
                table.poll.register(table.file, select.POLLPRI | select.POLLERR)
                table.poll.poll(0)  # the first poll reports the table as changed: consumed here
            elif not table.poll.poll(0):
                return table
            table.file.seek(0)
            text = _read_upto(table.file, _MOUNTINFO_MAX).decode("utf-8", "surrogateescape")
        except (OSError, AttributeError):
            return None
        points, types = [], {}
        for line in text.splitlines():
            fields = line.split(" ")
            if len(fields) > 4:
                point = fields[4]
                if "\\" in point:
                    point = _unescape_mount(point)
                points.append(point)
                if "-" in fields[6:-1]:  # after the optional fields, " - " and the file system type (proc(5))
                    types[point] = fields[fields.index("-", 6) + 1]
        table.points, table.types = tuple(points), types
        return table

    def _forget(self) -> None:
        for table in self._tables.values():
            table.file.close()
        self._tables = {}

    def points(self) -> tuple[str, ...]:
        """Returns every mount point (decoded); empty where the table cannot be read (not Linux)."""
        with self._lock:
            table = self._table()
            return table.points if table is not None else ()

    def type_of(self, folder: str) -> str | None:
        """Returns the type of the file system ``folder`` (a resolved path) lies on, or None if unknown."""
        with self._lock:
            table = self._table()
            if table is None:
                return None
            best = max((point for point in table.types
                        if folder == point or folder.startswith(point.rstrip("/") + "/")), key=len, default=None)
            return table.types.get(best) if best is not None else None


@dataclass
class _Table:
    """One mount namespace's table: the open file, its poll, and what was read from it last."""

    file: Any
    poll: Any
    points: tuple[str, ...] = ()
    types: dict[str, str] = field(default_factory=dict)  # mount point -> file system type (the last mount there wins)


#: The calling thread's own entries in /proc (a thread may be in a mount namespace of its own),
#: where the kernel has them (Linux 3.17 on), else the process's.
_PROC = "/proc/thread-self" if os.path.exists("/proc/thread-self") else "/proc/self"


#: The calling thread's mount namespace (``inode``: its inode), looked up at the thread's first look at
#: the mount table: a thread of the harness leaves its namespace only through
#: harness/containment/mounts.py, which says so (:func:`left_namespace`); a forked child keeps the
#: namespace of the thread that forked it.
_namespace = threading.local()


def left_namespace() -> None:
    """Says that the calling thread has just moved to another mount namespace: its table is found again."""
    _namespace.inode = None


#: Forks of this process so far, as seen by the child: a forked worker knows it is one without
#: asking the kernel for its process id at every look at the mount table.
_forks = [0]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _forks.__setitem__(0, _forks[0] + 1))


_MOUNTS = _MountTable()


def mounts_below(base: str | os.PathLike[str]) -> set[str]:
    """Returns the mount points strictly below ``base`` (resolved paths), as the calling thread sees them.

    Empty where that file cannot be read (not Linux): nothing is then known to be mounted there.
    """
    points = _MOUNTS.points()
    parent, name = os.path.split(os.path.abspath(base))
    real = _resolved(parent).rstrip('/')  # the parent resolved once per run, not per workspace
    return {point for point in _below(points, real + "/") if point.startswith(f"{real}/{name}/")}


def _below(points: tuple[str, ...], prefix: str) -> tuple[str, ...]:
    """Returns the mount points under ``prefix`` (usually none): worked out once per mount table and
    folder, as every workspace of a run has the same parent."""
    known = _BELOW.get(prefix)
    if known is None or known[0] is not points:
        if len(_BELOW) >= 64:
            _BELOW.clear()
        known = _BELOW[prefix] = (points, tuple(point for point in points if point.startswith(prefix)))
    return known[1]


_BELOW: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


#: File systems held in memory: removing a tree there is quick and never waits on a disk.
MEMORY_FILE_SYSTEMS = frozenset({"tmpfs", "ramfs"})


def in_memory(folder: str | None) -> bool:
    """Returns whether ``folder`` (None: the system's temporary folder) is on a memory file system."""
    return _MOUNTS.type_of(_resolved(folder or tempfile.gettempdir())) in MEMORY_FILE_SYSTEMS


@functools.lru_cache(maxsize=64)
def _resolved(folder: str) -> str:
    return os.path.realpath(folder)
