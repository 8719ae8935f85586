"""Snapshot files: one per target and scenario, read and written without following a link or opening a FIFO."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.containment.paths import resolve
from harness.record.snapshot.normalise import SUFFIX
from harness.util import limits
from harness.util.fileio import DIR_FLAGS, READ_FLAGS, WRITE_FLAGS, read_fd_capped
from harness.util.places import default_snapshot_root


class SnapshotUnreadable(OSError):
    """A stored snapshot that is not read or written: a link, not a regular file, too big, not UTF-8."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EPERM, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass
class SnapshotStore:
    """One target's snapshot folder: ``<root>/<slug>/<scenario id>.yaml``.

    The root is the user's (``--snapshots``, ``$HARNESS_SNAPSHOTS`` or ``./snapshots``); what lies
    below it comes with a checkout, from anyone who sent a pull request. Files below the root are
    read, written and removed by a walk from the root that follows no link leading out of it
    (harness/containment/paths.py), only a regular file is read or replaced, and no more than the file cap is
    read: a snapshot that is a link to a secret, or a folder that is a link to ``/etc``, is never
    read or written through (:class:`SnapshotUnreadable`, shown as that scenario's snapshot failure).
    """

    root: Path
    slug: str

    @functools.cached_property
    def folder(self) -> Path:
        """Returns the folder holding this target's snapshots (worked out once: asked for every item
        of a pytest session)."""
        return Path(self.root) / self.slug

    def path(self, scenario_id: str) -> Path:
        """Returns the file of one scenario's snapshot."""
        parts = [_bounded(part) for part in scenario_id.split("/")]
        parts[-1] += SUFFIX
        return self.folder.joinpath(*parts)

    def _rel(self, scenario_id: str) -> str:
        if _PLAIN_ID.match(scenario_id):  # as the scenario schema has ids: no empty, `.` or `..` part
            return "/".join([self.slug, *map(_bounded, scenario_id.split("/"))]) + SUFFIX
        return self.path(scenario_id).relative_to(self.root).as_posix()

    def read(self, scenario_id: str) -> str | None:
        """Returns the stored text, or None when there is none; raises SnapshotUnreadable.

        The folder a snapshot lies in is walked to once per store and kept open (:meth:`close`): a
        run reads hundreds of snapshots from a few dozen folders, and the walk from the root, one
        system call per name, was most of a read. A file opened there is never a link
        (``O_NOFOLLOW``); one that is, or a folder the walk refuses, is read as :func:`read_below` does.
        """
        return self.read_stamped(scenario_id)[0]

    def read_stamped(self, scenario_id: str) -> tuple[str | None, Stamp | None]:
        """Returns what :meth:`read` does, with the :func:`stamp` of the file as it was opened for the
        read (None when it was read the slow way, or there is none)."""
        rel = self._rel(scenario_id)
        folder, _, name = rel.rpartition("/")
        fd = self._open_folder(folder)
        if fd is None:
            return read_below(self.root, rel), None
        try:
            file_fd = os.open(name, READ_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            return None, None
        except OSError:  # a link (ELOOP), or anything else: the whole walk decides and explains
            return read_below(self.root, rel), None
        text, info = _read_open(file_fd, self.root, rel)
        return text, stamp(info)

    def stamp(self, scenario_id: str) -> Stamp | None:
        """Returns the :func:`stamp` of the stored snapshot of ``scenario_id`` without reading it, or
        None where it is not a regular file within the cap in a folder :meth:`read` keeps open
        (then read it: the read decides, and says why it refuses one)."""
        rel = self._rel(scenario_id)
        folder, _, name = rel.rpartition("/")
        fd = self._open_folder(folder)
        if fd is None:
            return None
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        return stamp(info) if stat.S_ISREG(info.st_mode) and info.st_size <= limits.MAX_SCENARIO_FILE else None

    def _open_folder(self, folder: str) -> int | None:
        """Returns a descriptor of ``folder`` (below the root), opened by the walk from the root and
        kept; None when it cannot be (missing, a link out, not a folder: the caller reads the slow way)."""
        held: dict[str, int] = self.__dict__.setdefault("_open_folders", {})
        if folder in held:
            return held[folder]
        try:
            _not_a_link(self.root)
            with resolve(os.path.abspath(self.root), folder, follow_last=False, what="the snapshot folder") as at:
                fd = os.open(at.name, DIR_FLAGS, dir_fd=at.dir_fd) if at.name else os.dup(at.dir_fd)
        except (OSError, ValueError):
            return None
        if len(held) >= MAX_HELD_FOLDERS:
            self.close()
            held = self.__dict__.setdefault("_open_folders", {})
        held[folder] = fd
        return fd

    def close(self) -> None:
        """Closes the folders :meth:`read` kept open (a later read opens them again)."""
        for fd in self.__dict__.pop("_open_folders", {}).values():
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        """The store without its open folders (descriptors mean nothing in another process)."""
        return {key: value for key, value in self.__dict__.items() if key != "_open_folders"}

    def write(self, scenario_id: str, text: str) -> bool:
        """Stores ``text``; returns True when the file changed (or is new); raises SnapshotUnreadable."""
        if self.read(scenario_id) == text:
            return False
        rel = self._rel(scenario_id)
        root = Path(self.root)
        _not_a_link(root)
        root.mkdir(parents=True, exist_ok=True)  # the user's folder: made as named
        try:
            with resolve(os.path.abspath(root), rel, follow_last=False, create_parents=True,
                         what="the snapshot folder") as at:
                fd = os.open(at.name, WRITE_FLAGS, 0o666, dir_fd=at.dir_fd)
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise SnapshotUnreadable(f"{root / rel}: not a regular file: not written")
                    os.ftruncate(fd, 0)
                    data = text.encode("utf-8")
                    while data:
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)
        except SnapshotUnreadable:
            raise
        except OSError as exc:
            raise SnapshotUnreadable(f"{root / rel}: not written: {_why(exc)}") from None
        return True

    def ids(self) -> list[str]:
        """Returns the ids of every stored snapshot, sorted."""
        return folder_ids(self.folder)

    def remove(self, scenario_id: str) -> None:
        """Removes one snapshot (a regular file, never through a link), and the folders it leaves empty."""
        root = os.path.abspath(self.root)
        parts = self._rel(scenario_id).split("/")
        try:
            with resolve(root, "/".join(parts), follow_last=False, what="the snapshot folder") as at:
                if at.name and stat.S_ISREG(os.lstat(at.name, dir_fd=at.dir_fd).st_mode):
                    os.unlink(at.name, dir_fd=at.dir_fd)
            for depth in range(len(parts) - 1, 1, -1):  # the folders below <slug>, deepest first
                with resolve(root, "/".join(parts[:depth]), follow_last=False, what="the snapshot folder") as at:
                    os.rmdir(at.name, dir_fd=at.dir_fd)  # refuses a link, and a folder not empty
        except OSError:
            return


#: Longest file or folder name a snapshot path uses; a longer id part keeps its start and a hash.
MAX_NAME = 100
_HASHED = re.compile(r"-[0-9a-f]{12}$")


def _bounded(part: str) -> str:
    """Returns ``part`` when short enough, else its first 80 characters and 12 hex digits of its SHA-256."""
    if len(part.encode("utf-8")) <= MAX_NAME:
        return part
    return part[:80] + "-" + hashlib.sha256(part.encode("utf-8")).hexdigest()[:12]


def folder_ids(folder: Path) -> list[str]:
    """Returns the scenario ids of the snapshot files under ``folder``, sorted.

    A file whose name was shortened (see :func:`_bounded`) names its id in its ``scenario:`` line.
    """
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink() or folder.parent.is_symlink():
        return []  # a linked root or target folder is not walked (see SnapshotStore)
    out = []
    for found in _files_below(str(folder)):
        if any(_HASHED.search(part) for part in found.split("/")):
            try:
                text = read_below(folder, found + SUFFIX) or ""
            except SnapshotUnreadable:
                text = ""
            for line in text.splitlines()[:64]:
                if line.startswith("scenario: "):
                    found = line[len("scenario: "):].strip().strip("'\"")
                    break
        out.append(found)
    return sorted(out)


#: A scenario id whose file path is its parts joined (what pathlib would make of it too, without the objects).
_PLAIN_ID = re.compile(r"[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)*\Z")

#: Folders one store keeps open for its reads (more, and it closes them and starts again).
MAX_HELD_FOLDERS = 256


def _files_below(folder: str) -> Iterator[str]:
    """Yields the paths (relative to ``folder``, without the suffix) of the regular snapshot files
    below it, walked one folder at a time (no recursion) and into no linked folder."""
    todo = [""]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(os.path.join(folder, rel) if rel else folder) as entries:
                for entry in entries:
                    name = f"{rel}/{entry.name}" if rel else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(name)
                    elif entry.name.endswith(SUFFIX) and entry.is_file(follow_symlinks=False):
                        yield name[: -len(SUFFIX)]
        except OSError:
            continue


def read_below(root: Path | str, rel: str) -> str | None:
    """Returns the text of the regular file ``rel`` below ``root`` (walked without leaving it through a
    link), None when it does not exist; raises SnapshotUnreadable for anything else."""
    _not_a_link(root)
    try:
        # The root as named: opened without following a link there either (a checkout's ./snapshots).
        with resolve(os.path.abspath(root), rel, follow_last=False, what="the snapshot folder") as at:
            if not at.name:
                raise SnapshotUnreadable(f"{Path(root) / rel}: not a regular file: not read")
            fd = os.open(at.name, READ_FLAGS, dir_fd=at.dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except SnapshotUnreadable:
        raise
    except OSError as exc:
        raise SnapshotUnreadable(f"{Path(root) / rel}: not read: {_why(exc)}") from None
    return _read_open(fd, root, rel)[0]


#: What tells one version of a stored file from another without reading it: its device, inode,
#: size, and times of modification and of change (the kernel sets the latter at every change).
Stamp = tuple[int, int, int, int, int]


def stamp(info: os.stat_result) -> Stamp:
    """Returns the :data:`Stamp` of a file's ``stat``."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _read_open(fd: int, root: Path | str, rel: str) -> tuple[str, os.stat_result]:
    """Returns the text of the open file ``fd`` (``rel`` below ``root``, named in messages) and its
    ``fstat`` as it was opened; raises SnapshotUnreadable when it is no regular file, holds more than
    the cap or is not UTF-8. Closes ``fd``. The path is made only for a message (a path object cost
    a third of a read that goes well)."""
    where = functools.partial(Path, root, rel)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotUnreadable(f"{where()}: not a regular file: not read")
        data = read_fd_capped(fd, info.st_size, limits.MAX_SCENARIO_FILE)  # never the whole cap reserved
    finally:
        os.close(fd)
    if len(data) > limits.MAX_SCENARIO_FILE:
        raise SnapshotUnreadable(f"{where()}: more than {limits.MAX_SCENARIO_FILE} bytes "
                                 "(HARNESS_MAX_SCENARIO_FILE): not read")
    try:
        return data.decode("utf-8"), info
    except UnicodeDecodeError as exc:
        raise SnapshotUnreadable(f"{where()}: not UTF-8 ({exc.reason} at byte {exc.start}): not read") from None


def _not_a_link(root: Path | str) -> None:
    """Raises SnapshotUnreadable when the snapshot root is a symbolic link (a checkout can bring
    ``./snapshots`` as one): it is not followed, for reading or writing."""
    if os.path.islink(root):
        raise SnapshotUnreadable(f"{root}: the snapshot folder is a symbolic link, not followed "
                                 "(name the folder it leads to with --snapshots)")


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link, not followed"
    if exc.errno == errno.ENXIO:
        return "not a regular file (a FIFO no one reads)"
    return str(exc) if not exc.strerror else exc.strerror


def default_root() -> Path:
    """Returns the snapshot root of the CLI: ``$HARNESS_SNAPSHOTS`` or ``./snapshots``."""
    return default_snapshot_root()
