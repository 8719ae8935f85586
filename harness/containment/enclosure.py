"""The folder around workspaces, with its canaries: what tells that a candidate wrote outside its workspace.

Each scenario gets a fresh, empty workspace ``<base>/ws``, with canary files around it
(``<base>/canary.txt`` and ``<base>/sibling/canary.txt``). The base and its canaries (an
:class:`Enclosure`) are made once per run; after each scenario the canaries and the set of
entries in ``<base>`` are checked, so a target that writes outside its workspace is caught naming
the path, and the workspace is moved out and removed (harness/containment/cleanup.py). The whole
base is removed at the end. The workspace itself (layout, actions, reading it back) is
harness/run/workspace.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.containment import fake_records
from harness.containment.cleanup import Leftover, Tree, mounts_below, remove_tree, searchable
from harness.util import limits
from harness.util.fileio import READ_FLAGS, WALK_FLAGS, type_name

CANARY = b"canary: nothing may write here\n"


class Enclosure:
    """The folder around workspaces, with its canaries: made once per run, checked by stat after each scenario.

    Laid out as ``<base>/canary.txt``, ``<base>/sibling/canary.txt`` and one workspace at a time:
    ``<base>/ws`` first, then ``<base>/ws-2``, ``<base>/ws-3``... (a fresh path each, so nothing a
    candidate keeps by path carries over). A finished workspace is moved out (one rename) to a
    private trash folder beside the base and removed from there. After each scenario
    :meth:`escapes` compares each canary's ``lstat`` (inode, ctime, mtime, size, mode, links)
    with the one taken when it was made, reads its bytes again (a write through ``mmap`` may move no time
    stamp), compares the sibling
    folder's ``lstat`` (an entry made or removed there moves its mtime) and lists the base. The
    canaries are made, then the harness waits until the kernel's coarse clock has passed their
    ctime (at most one tick, once per run): any later write to them gets a later ctime, so a
    rewrite that restores content and mtime is still caught. Once something is found the
    enclosure is spoiled: the runner retires it (removes it whole) and the next scenario gets a
    fresh one, so each escape is reported once, for the scenario that made it.
    """

    def __init__(self, prefix: str = "harness-", parent: str | None = None, *, fixed: bool = False) -> None:
        self.base = Path(self._make_base(prefix, parent))
        #: One workspace path for the whole enclosure (``<base>/ws``), emptied between scenarios
        #: instead of renamed: a sandbox made once per run binds that one folder writable
        #: (harness/targets/launch.py), the rest of the enclosure staying read-only to its candidate.
        self.fixed = fixed
        self._prefix, self._parent = prefix, parent
        self.trash: Path | None = None  # made when the first workspace is moved out
        self.spoiled = False
        self.replaced = False  # the base itself was removed or replaced (by a link, a file): nothing below is ours
        self.made = 0  # workspaces placed so far
        self._premade = False  # a ``fixed`` enclosure's folder made before its first scenario (``workspace_folder``)
        self.current = "ws"  # the name of the workspace placed last
        # Each canary is held open: while its path still names the same inode (the signature says
        # so, and a held inode's number cannot be reused), its bytes are read through this
        # descriptor, without opening it again. The module that opens them is kept (pyfakefs puts
        # its own in place of ``os``): a descriptor of a fake file system is closed there, never as
        # a real one of the same number.
        self._held: dict[str, int] = {}
        self._os = os
        self._base = str(self.base)  # kept as text: the check after every scenario then builds no path objects
        self._surround()

    def _make_base(self, prefix: str, parent: str | None) -> str:
        """Makes the base, a new folder of mode 0700 with a name of its own; returns its path."""
        return tempfile.mkdtemp(prefix=prefix, dir=parent)

    def _surround(self) -> None:
        """Puts the canaries around the workspace's place."""
        try:
            canaries = (self.base / "canary.txt", self.base / "sibling" / "canary.txt")
            (self.base / "sibling").mkdir()
            #: Whether two changes of a file, its ctime looked at between them, may leave the same
            #: ctime (time stamps from the coarse clock, as before Linux 6.13 or on ramfs): then a
            #: file's record is kept for reuse only once its ctime is a tick old (Workspace.state).
            self.coarse_times = False
            for canary in canaries:
                for _ in range(_PROBES):
                    before = time.clock_gettime_ns(COARSE_CLOCK)
                    canary.write_bytes(CANARY)
                    first = os.lstat(canary).st_ctime_ns
                    canary.write_bytes(CANARY)
                    second = os.lstat(canary).st_ctime_ns
                    after = time.clock_gettime_ns(COARSE_CLOCK)
                    # Coarse: the two changes share a ctime, or the second (its ctime looked at
                    # before it) has one the coarse clock read. Fine: they differ within one tick.
                    # A tick passed between them (a loaded machine) tells neither: tried again.
                    self.coarse_times = self.coarse_times or second == first or second in (before, after)
                    if self.coarse_times or after == before:
                        break
                self._held[str(canary)] = os.open(canary, READ_FLAGS)
            _wait_past(max(os.lstat(canary).st_ctime_ns for canary in canaries))
            self._sibling_path = os.path.join(self._base, "sibling")
            self._canaries = {str(canary): _signature(str(canary)) for canary in canaries}
            self._sibling = _signature(self._sibling_path)
            for held, fd in list(self._held.items()):
                info, signature = os.fstat(fd), self._canaries[held]
                if signature is None or (info.st_ino, info.st_dev) != (signature[0], signature[2]):
                    del self._held[held]  # not the file the signature was taken of: read by its path
                    os.close(fd)
        except BaseException:  # a full disk, or SIGTERM (processes.Terminated) half-way: nothing is left behind
            self.close()
            shutil.rmtree(self.base, ignore_errors=True)
            raise

    def close(self) -> None:
        """Closes the canaries held open (``remove`` does it too)."""
        held, self._held = getattr(self, "_held", {}), {}
        for fd in held.values():
            with contextlib.suppress(Exception):
                self._os.close(fd)

    def __del__(self) -> None:
        self.close()

    def _canary_bytes(self, canary: str) -> bytes | None:
        fd = self._held.get(canary)
        if fd is None:
            return _head(canary, len(CANARY) + 1)
        self._os.lseek(fd, 0, os.SEEK_SET)
        return self._os.read(fd, len(CANARY) + 1)

    def escapes(self) -> list[str]:
        """Returns what was created, changed or removed around the workspace since the enclosure was made."""
        found: list[str] = []
        for canary, signature in self._canaries.items():
            now = _signature(canary)
            if now is None:
                continue  # reported as removed below (or its sibling folder went)
            if now[:2] != signature[:2]:  # type: ignore[index]
                found.append(f"changed {canary} (rewritten: inode or ctime differs)")
            elif now != signature or self._canary_bytes(canary) != CANARY:
                found.append(f"changed {canary}")
        try:
            present: list[str] | None = os.listdir(self._base)
        except OSError as exc:  # removed (``rm -rf ..``), or replaced by a file: that is what is said
            present = None
            found.append(self._base_replaced() or f"changed {self._base} (cannot be listed: {exc.strerror})")
        if present is not None and (len(present) != 3 or not {self.current, "canary.txt", "sibling"}.issuperset(present)):
            replaced = self._base_replaced()  # a link is never listed through: what it leads to is not ours
            if replaced:
                found.append(replaced)
                present = None
        if present is not None and (len(present) != 3 or not {self.current, "canary.txt", "sibling"}.issuperset(present)):
            expected = {self.current, "canary.txt", "sibling"}
            found += [f"created {os.path.join(self._base, name)}" for name in sorted(set(present) - expected)]
            found += [f"removed {os.path.join(self._base, name)}" for name in sorted(expected - set(present))]
        sibling = self._sibling_path
        now = _signature(sibling)
        if now is not None and now != self._sibling:
            if stat.S_ISLNK(now[5]):  # never listed through: the link may lead where the candidate cannot read
                with contextlib.suppress(OSError):
                    found.append(f"changed {sibling} (replaced by a symbolic link to {os.readlink(sibling)!r})")
            with contextlib.suppress(OSError):
                fd = os.open(sibling, WALK_FLAGS)
                try:
                    extra = sorted(set(os.listdir(fd)) - {"canary.txt"})
                finally:
                    os.close(fd)
                found += [f"created {os.path.join(sibling, name)}" for name in extra]
            for canary in self._canaries:
                if os.path.dirname(canary) == sibling and not os.path.lexists(canary):
                    found.append(f"removed {canary}")
            if not any(f.startswith(("created", "removed", f"changed {sibling} (")) and sibling in f for f in found):
                found.append(f"changed {sibling} (entries made or removed there)")
        if found:
            self.spoiled = True
        return found

    def _base_replaced(self) -> str | None:
        """Returns what a candidate put in the base's place (removed it, or a link or a file there, or
        closed a folder above it to the harness), or None while it is a folder."""
        try:
            info = os.lstat(self._base)
        except FileNotFoundError:
            self.replaced = True
            return f"removed {self._base}"
        except OSError as exc:  # a folder above it closed to the harness: nothing below can be told to be ours
            self.replaced = True
            return f"changed {self._base} (cannot be looked at: {exc.strerror})"
        if stat.S_ISDIR(info.st_mode):
            return None
        self.replaced = True
        if stat.S_ISLNK(info.st_mode):
            with contextlib.suppress(OSError):
                return f"changed {self._base} (replaced by a symbolic link to {os.readlink(self._base)!r})"
        return f"changed {self._base} (replaced by a {type_name(info.st_mode)})"

    def place(self) -> Path:
        """Makes the next workspace, empty: ``<base>/ws``, then ``<base>/ws-2``... (``fixed``: ``<base>/ws``
        each time, emptied by :meth:`move_out`; OSError when something was put there since)."""
        self.made += 1
        name = "ws" if self.made == 1 or self.fixed else f"ws-{self.made}"
        path = self.base / name  # one path object, its text worked out once
        if self.fixed and (self.made > 1 or self._premade):
            info = os.lstat(str(path))
            if not stat.S_ISDIR(info.st_mode) or os.listdir(str(path)):
                self.spoiled = True
                raise OSError(errno.ENOTEMPTY, f"the workspace {path} was written between two scenarios")
        else:
            os.mkdir(str(path))
            if self.fixed:
                self._slot_mode = stat.S_IMODE(os.lstat(str(path)).st_mode)
        self.current = name
        return path

    def workspace_folder(self) -> Path:
        """Makes the one workspace folder of a ``fixed`` enclosure now, before its first scenario, and
        returns it: a candidate started once per run in a sandbox binds it at its start, so the first
        scenario needs no second start. :meth:`place` then finds it as it finds it between two
        scenarios (empty, or the enclosure is spoiled)."""
        path = self.base / "ws"
        if self.fixed and self.made == 0 and not self._premade:
            os.mkdir(str(path))
            self._slot_mode = stat.S_IMODE(os.lstat(str(path)).st_mode)
            self._premade = True
        return path

    def move_out(self, root: Path) -> Tree | None:
        """Moves a finished workspace into the trash (one rename); returns it for removal, or None if it is gone.

        A workspace with a mount point below it is not moved (None; the enclosure is then spoiled:
        retire it whole). Raises OSError when it cannot be moved (spoiled as well).
        """
        if self.fixed:
            return self._empty(root)
        try:
            if mounts_below(root):
                # Never moved: the mount table is read again only when a mount changes, not when a folder
                # above one is renamed, so the removal would not know it. The enclosure goes whole.
                self.spoiled = True
                return None
            if self.trash is None:
                self.trash = Path(tempfile.mkdtemp(prefix=self._prefix + "trash-", dir=self._parent))
            place = os.path.join(self.trash, os.path.basename(root))
            os.rename(root, place)
        except FileNotFoundError:
            if not os.path.lexists(root):
                return None  # already gone: nothing to move or remove
            self.spoiled = True
            raise
        except OSError:
            self.spoiled = True
            raise
        return Tree(place)

    def _empty(self, root: Path) -> Tree | None:
        """Moves what a finished workspace holds into the trash, leaving the folder itself in place (``fixed``).

        Its entries are renamed by descriptors of the two folders, never through a path a candidate
        could replace; its mode is set back. Raises OSError (the enclosure spoiled) when the folder
        is no longer a plain folder, holds a mount point, or an entry cannot be moved."""
        try:
            if mounts_below(root):
                raise OSError(errno.EBUSY, f"a mount point below {root}")
            if self.trash is None:
                self.trash = Path(tempfile.mkdtemp(prefix=self._prefix + "trash-", dir=self._parent))
            place = os.path.join(self.trash, f"ws-{self.made}")
            os.mkdir(place, 0o700)
            if not stat.S_ISDIR(os.lstat(str(root)).st_mode):  # a mount point in the sandbox: not replaceable there
                raise OSError(errno.ENOTDIR, f"{root} is no folder")
            os.chmod(str(root), getattr(self, "_slot_mode", 0o755))  # a mode the candidate set is undone
            source = os.open(str(root), WALK_FLAGS)
            try:
                sink = os.open(place, WALK_FLAGS)
                try:
                    for name in os.listdir(source):
                        os.rename(name, name, src_dir_fd=source, dst_dir_fd=sink)
                finally:
                    os.close(sink)
            finally:
                os.close(source)
        except OSError:
            self.spoiled = True
            raise
        return Tree(place)

    def remove(self) -> Leftover | None:
        """Removes the trash and the base (see :func:`remove_tree`); returns what could not be removed, or None."""
        self.close()
        trash = remove_tree(self.trash) if self.trash else None
        base = remove_tree(self.base)
        if base and trash:
            return Leftover(base.path, f"{base.reason}; also {trash}")
        return base or trash


class PrivateEnclosure(Enclosure):
    """The enclosure of a workspace on a file system of its own: made empty for one scenario and dropped
    after it (a fault scenario of an in-process target runs on pyfakefs, harness/targets/faults.py).

    Nothing but the folders above the workspace is there, so no canary is needed (making canaries
    and waiting for the clock cost a third of such a scenario): once the workspace is placed, every
    entry of the file system outside it is listed with its signature, and :meth:`escapes` lists
    them again, naming what was created, removed or changed, as :class:`Enclosure` does.

    On pyfakefs the listings are read from its own records of the file system (a dictionary walk,
    harness/containment/fake_records.py) instead of a path lookup per entry through the fake
    ``os``: the one taken when the workspace is placed is what the fake ``os`` lists then (the
    harness has just laid it all out); after the scenario, when the records outside the workspace
    are still as they were (entries, signatures, owners, the root's, and who the harness is
    there), the fake ``os`` would list what it listed then, so nothing is named; when anything
    there differs the file system is listed through the fake ``os`` as before, and what it shows
    is named.
    """

    def _make_base(self, prefix: str, parent: str | None) -> str:
        """Makes the base as ``tempfile.mkdtemp`` does (a name of the same form, mode 0700), in
        ``parent``; on pyfakefs, without one, right in the root of its file system, which holds
        nothing else of the harness's (in the temporary folder, every path a candidate gives would
        have one name more for pyfakefs to look up, each lookup of a path costing per name: an
        eighth of a fake scenario's calls). Made from pyfakefs' records
        (:func:`fake_records.make_folder`) where they show the folder above as one the harness may
        enter (:func:`fake_records.folder`): each path lookup of its ``os`` costs a tenth of the
        harness's part of a scenario, and ``mkdir`` looks the path up twice, ``mkdtemp`` thrice."""
        fs = fake_records.filesystem()
        folder = parent if parent is not None else "/" if fs is not None else tempfile.gettempdir()
        above = fake_records.folder(fs, folder) if fs is not None else None
        if fs is not None and above is not None:
            for _ in range(100):  # (as many names as mkdtemp tries)
                name = prefix + "".join(_names.choices(_NAME_LETTERS, k=8))
                if name not in above.entries:
                    fake_records.make_folder(fs, above, name, 0o700)
                    return f"{folder.rstrip('/')}/{name}"
        return super()._make_base(prefix, folder)

    def _surround(self) -> None:
        """No canaries: the listing taken by :meth:`place` stands in for them."""
        self.coarse_times = False  # time stamps from the fine clock: two changes never share a ctime
        self._before: dict[str, tuple[int, ...]] = {}
        self._records: tuple[tuple[int, ...], dict[str, tuple[int, ...]]] | None = None

    def place(self) -> Path:
        """Makes the workspace and lists everything outside it."""
        fs = fake_records.filesystem()
        base = fake_records.folder(fs, self._base) if fs is not None and self.made == 0 else None
        if fs is not None and base is not None and "ws" not in base.entries:  # made as os.mkdir makes it (see _make_base)
            self.made, self.current = 1, "ws"
            path = self.base / "ws"
            fake_records.make_folder(fs, base, "ws", 0o777)
        else:
            path = super().place()
        workspace = f"{self._base}/{self.current}"
        self._records = fake_records.outside(fs, workspace) if fs is not None else None
        self._before = ({name: record[:7] for name, record in self._records[1].items()} if self._records is not None
                        else _listing(workspace)[0])
        return path

    def escapes(self) -> list[str]:
        """Returns what was created, changed or removed outside the workspace since it was placed."""
        workspace = f"{self._base}/{self.current}"
        fs = fake_records.filesystem()
        if self._records is not None and fs is not None and fake_records.outside(fs, workspace) == self._records:
            return []  # nothing outside the workspace is otherwise than when it was placed
        now, cut = _listing(workspace)
        found = [f"created {path}" for path in sorted(now.keys() - self._before.keys())]
        found += [f"removed {path}" for path in sorted(self._before.keys() - now.keys())]
        found += [f"changed {path}" for path in sorted(now.keys() & self._before.keys())
                  if _changed(self._before[path], now[path])]
        if cut:
            found.append(cut)
        if found:
            self.spoiled = True
            self._base_replaced()  # (sets ``replaced``)
        return found


#: The letters of a base's name, and what picks them, as ``tempfile.mkdtemp`` names a folder.
_NAME_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_names = random.Random()


def _changed(before: tuple[int, ...], now: tuple[int, ...]) -> bool:
    """Whether an entry outside the workspace changed: a folder whose entries alone changed (named as
    created or removed) did not; one given another mode did."""
    if stat.S_ISDIR(before[5]) and stat.S_ISDIR(now[5]):
        return before[5] != now[5]
    return before != now


def _listing(workspace: str) -> tuple[dict[str, tuple[int, ...]], str | None]:
    """Returns every entry of the file system but ``workspace`` and what lies below it, by path with
    its :func:`_signature` (never through a link), and why the listing stopped short (None when whole)."""
    found: dict[str, tuple[int, ...]] = {}
    folders = ["/"]
    while folders:
        folder = folders.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue  # a mode that keeps the harness out: the folder's own signature still says it changed
        for name in names:
            path = f"{folder}{name}" if folder.endswith("/") else f"{folder}/{name}"  # (os.path.join, without pyfakefs' own)
            if path == workspace:
                continue
            if len(found) >= limits.MAX_ENTRIES:
                return found, f"outside the workspace not checked past {limits.MAX_ENTRIES} entries"
            signature = _signature(path)
            if signature is None:
                continue
            found[path] = signature
            if stat.S_ISDIR(signature[5]):
                folders.append(path)
    return found, None


def _signature(path: str | Path) -> tuple[int, ...] | None:
    """Returns what a write, a replacement or a new entry changes: inode and ctime first, then the rest."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_ctime_ns, info.st_dev, info.st_mtime_ns, info.st_size, info.st_mode, info.st_nlink


def _head(path: str | Path, size: int) -> bytes | None:
    """Returns the first ``size`` bytes of a regular file (never through a link, never a FIFO), or None."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return None
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


#: Tries at telling whether file time stamps are coarse (:meth:`Enclosure._surround`), per canary,
#: while a tick passes between its two changes: a change from the coarse clock in another tick
#: than the first is told by its ctime being a value that clock read around them.
_PROBES = 3

#: The clock the kernel takes file time stamps from: CLOCK_REALTIME_COARSE (5 on Linux; Python's
#: ``time`` does not name it), a tick of some milliseconds behind the fine one.
COARSE_CLOCK = getattr(time, "CLOCK_REALTIME_COARSE", 5 if sys.platform.startswith("linux") else time.CLOCK_REALTIME)


def _wait_past(ctime_ns: int) -> None:
    """Returns once the clock file times are taken from (the coarse one) is past ``ctime_ns``: then any
    later change of the file gets a later ctime, however coarse the file system's time stamps are."""
    deadline = time.monotonic() + 0.1  # a clock set back must not hold the run
    while time.clock_gettime_ns(COARSE_CLOCK) <= ctime_ns and time.monotonic() < deadline:
        time.sleep(0.001)


#: Folders the walk for hard links holds open at once; one above them is opened again through ``..``.
_OPEN_DIRS = 32


def linked_files(root: str) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Returns the regular files below ``root`` with more than one link (``{rel: {links, inode}}``), and
    why the walk stopped short (None when it saw everything).

    One ``lstat`` per entry, no file opened; iterative, through descriptors (never through a link),
    at any depth: at most ``_OPEN_DIRS`` folders are held open, one above them is reached again
    through its child's ``..`` and checked to be the folder left. Bounded by ten times
    ``limits.MAX_ENTRIES`` entries. A folder gone or swapped for a link meanwhile is passed over; one
    whose mode keeps the harness out (a candidate running as the harness's own user can set mode 000
    and hide a link below) is made searchable first, by its descriptor (harness/containment/cleanup.py), so this
    walk changes modes in the workspace and runs only after the scenario's checks. One that still
    cannot be looked into is said (why the walk stopped short).
    """
    found: dict[str, dict[str, Any]] = {}
    try:
        top = _open_searchable(root, None)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # no folder now: nothing linked in it
            return found, None
        raise
    cap, seen = 10 * limits.MAX_ENTRIES, 0
    # Each frame: [descriptor (None while closed), names left, prefix, the folder's stat once closed].
    stack: list[list[Any]] = [[top, iter(os.listdir(top)), "", None]]
    try:
        while stack:
            frame = stack[-1]
            fd = frame[0]
            name = next(frame[1], None)
            if name is None:
                stack.pop()
                if stack and stack[-1][0] is None:
                    above = stack[-1]
                    try:
                        up = os.open("..", WALK_FLAGS, dir_fd=fd)
                    except OSError:
                        up = None
                    if up is not None and not os.path.samestat(os.fstat(up), above[3]):
                        os.close(up)
                        up = None
                    if up is None:
                        os.close(fd)
                        return found, (f"hard links not checked in all of the workspace: "
                                       f"{os.path.join(root, frame[2])} was moved during the check")
                    above[0] = up
                os.close(fd)
                continue
            seen += 1
            if seen > cap:
                return found, f"hard links not checked in all of the workspace: more than {cap} entries"
            try:
                info = os.lstat(name, dir_fd=fd)
            except PermissionError:  # readable but not searchable: made searchable through its descriptor
                try:
                    os.fchmod(fd, 0o700)
                    info = os.lstat(name, dir_fd=fd)
                except OSError as exc:
                    return found, _not_looked_into(root, frame[2] + name, exc)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    found[frame[2] + name] = {"links": info.st_nlink, "inode": info.st_ino}
            elif stat.S_ISDIR(info.st_mode):
                try:
                    sub = _open_searchable(name, fd)
                except PermissionError as exc:
                    return found, _not_looked_into(root, frame[2] + name, exc)
                except OSError:
                    continue  # gone, or swapped for a link meanwhile
                try:
                    names = iter(os.listdir(sub))
                except OSError:
                    os.close(sub)
                    continue
                stack.append([sub, names, frame[2] + name + "/", None])
                if len(stack) > _OPEN_DIRS and stack[-_OPEN_DIRS - 1][0] is not None:
                    far = stack[-_OPEN_DIRS - 1]
                    far[3] = os.fstat(far[0])
                    os.close(far[0])
                    far[0] = None
    finally:
        for frame in stack:
            if frame[0] is not None:
                with contextlib.suppress(OSError):
                    os.close(frame[0])
    return found, None


def _open_searchable(name: str, dir_fd: int | None) -> int:
    """Opens the folder ``name`` (never through a link); one whose mode keeps the harness out is given
    mode 0700 first, pinned by a descriptor (``cleanup.searchable``: a link put in its place meanwhile is
    not followed)."""
    where = {} if dir_fd is None else {"dir_fd": dir_fd}
    try:
        return os.open(name, WALK_FLAGS, **where)
    except PermissionError:
        searchable(name, dir_fd)
        return os.open(name, WALK_FLAGS, **where)


def _not_looked_into(root: str, rel: str, exc: OSError) -> str:
    return f"hard links not checked in all of the workspace: {os.path.join(root, rel)} could not be looked into ({exc.strerror})"
