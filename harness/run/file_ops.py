"""The workspace's files one at a time: a regular file read within a cap, a new file of the layout
made in the root, a file's modification time moved as an action asks (harness/run/workspace.py).

Never through a link, never opening what is not a regular file (harness/util/fileio.py's flags).
"""

from __future__ import annotations

import os
import re
import stat
import time
from decimal import Decimal
from pathlib import Path

from harness.util.fileio import DIR_FLAGS, READ_FLAGS, type_name


class Read:
    """What reading one entry gave: its type, the bytes read (capped), its size, or why it failed."""

    def __init__(self, kind: str, data: bytes = b"", size: int = 0, *, truncated: bool = False,
                 error: str | None = None) -> None:
        self.kind, self.data, self.size, self.truncated, self.error = kind, data, size, truncated, error


def read_regular(dir_fd: int, name: str, limit: int) -> Read:
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return Read("<missing>")
    except OSError as exc:
        try:
            kind = type_name(os.lstat(name, dir_fd=dir_fd).st_mode)
        except OSError:
            kind = "<missing>"
        return Read(kind, error=exc.strerror if kind == "file" else None)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a FIFO, socket or device is never read
            return Read(type_name(info.st_mode))
        chunks, total = [], 0
        while total < limit:
            wanted = min(1 << 20, limit - total)
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < wanted and total >= info.st_size:
                break  # a regular file read short at its size: its end
        data = b"".join(chunks)
        truncated = info.st_size > total or (total >= limit and os.read(fd, 1) != b"")
        return Read("file", data, max(info.st_size, total), truncated=truncated)
    except OSError as exc:
        return Read("file", error=exc.strerror)
    finally:
        os.close(fd)


#: Making a file of the layout that is not there yet: never an existing one, never through a link.
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def new_in_root(root: str, rel: str) -> int | None:
    """Returns a descriptor of the new file ``rel`` made right in the folder ``root`` (opened as
    :func:`~harness.containment.paths.resolve` opens it, never through a link), when ``rel`` is a
    plain name and nothing is there yet; else None, for the walk to make or find it: the same file a
    walk would make, without the look at the name (one failed ``lstat``) and the walk's own cost."""
    if "/" in rel or rel in ("", ".", ".."):
        return None
    folder = os.open(root, DIR_FLAGS)
    try:
        return os.open(rel, _NEW_FILE_FLAGS, 0o666, dir_fd=folder)
    except FileExistsError:  # (a link there, too): written through the walk, which follows one inside
        return None
    finally:
        os.close(folder)


def advance_mtime_fd(fd: int, before: int) -> None:
    """Moves the mtime of the open file at least one second past ``before`` (any mtime resolution sees it)."""
    now = os.fstat(fd).st_mtime_ns
    wanted = max(now, before + 1_000_000_000, time.time_ns())
    os.utime(fd, ns=(wanted, wanted))


def mtime_ns(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


_MTIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def mtime_after(spec: str, before: int | None) -> int:
    """Returns the mtime (ns) an action's ``mtime: same | [+-]N(s|ms|us|ns) | @<epoch seconds>`` asks for.

    ``before`` is the file's mtime before the action (None for a file that did not exist).
    """
    if spec == "same":
        if before is None:
            raise ValueError("mtime: same needs a file that exists before the action")
        return before
    if spec.startswith("@"):  # absolute: seconds since the epoch, e.g. @1700000000.25
        return int(Decimal(spec[1:]) * _MTIME_UNITS["s"])
    found = re.fullmatch(r"([+-])(\d+(?:\.\d+)?)(s|ms|us|ns)", spec)
    if found is None:
        raise ValueError(f"invalid mtime {spec!r} (same, or e.g. -5s, +500ms, +1ns)")
    sign, amount, unit = found.groups()
    step = int(Decimal(amount) * _MTIME_UNITS[unit])
    base = before if before is not None else time.time_ns()
    return base + step if sign == "+" else base - step


def advance_mtime(path: Path, before: int | None) -> None:
    """Moves the mtime at least one second past ``before``, so any mtime resolution sees a change."""
    if before is None:
        return
    now = os.stat(path).st_mtime_ns
    wanted = max(now, before + 1_000_000_000, time.time_ns())
    os.utime(path, ns=(wanted, wanted))


def kind_of(path: Path) -> str:
    if not os.path.lexists(path):
        return "<missing>"
    if path.is_symlink():
        return "symlink"
    if path.is_dir():
        return "dir"
    return "file" if path.exists() else "<missing>"
