"""Bounded file I/O for the harness's own files, and the one set of no-follow open flags.

Reports, state files and snapshots the harness writes are made new beside their place and renamed
over it (:func:`write_replacing`, :func:`open_new`): a link there is replaced, never written
through. Files it reads are read only when regular, never through a link unless asked, and never
past a cap (:func:`read_regular`, :func:`read_capped`). Every module that opens a file a candidate
could have touched takes its flags from here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from typing import BinaryIO

#: Reading a regular file: never through a link, never blocking on a FIFO.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Opening a folder to walk it: only a folder (a FIFO is not opened), never through a link.
WALK_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Opening a folder of a path being resolved.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Pinning an entry without reading it (O_PATH where there is one).
PATH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC
#: Writing a file in place: never through a link, never blocking on a FIFO.
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Making a new file: never an existing one, never through a link.
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def type_name(mode: int) -> str:
    """Returns the recorded type of a file mode: file, dir, symlink, fifo, socket, char-device, block-device."""
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "symlink"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "char-device"),
                       (stat.S_ISBLK, "block-device")):
        if test(mode):
            return name
    return "unknown"


def write_replacing(path: str | os.PathLike[str], data: str | bytes | BinaryIO) -> None:
    """Writes a file the harness makes (a report, its state) as a new file beside it, renamed over it.

    A link at ``path`` (one a checkout brought, say) is replaced, never written through; so is a
    stale file. The folder holding ``path`` is taken as given: the user named it. ``data`` may be
    an open binary file, copied in pieces (a whole run's report is not held in memory).
    """
    place = os.fspath(path)
    temporary = _beside(place)
    fd = os.open(temporary, NEW_FLAGS, 0o666)
    with _removed_on_failure(temporary):
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (str, bytes)):
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            else:
                shutil.copyfileobj(data, handle)
        os.replace(temporary, place)


def link_replacing(source: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Makes ``path`` hold what the complete file ``source`` holds, as :func:`write_replacing` does: a
    hard link to it made beside ``path`` and renamed over it (no byte copied: a run's state is
    megabytes), or, where the file system makes no hard link there, a copy."""
    place = os.fspath(path)
    temporary = _beside(place)
    try:
        os.link(source, temporary, follow_symlinks=False)
    except OSError:  # no hard links there (or not across): copied
        with open(source, "rb") as data:
            write_replacing(place, data)
        return
    with _removed_on_failure(temporary):
        os.replace(temporary, place)


def _beside(place: str) -> str:
    """Returns a name for a new file beside ``place``, hidden and unlikely to be taken."""
    folder, name = os.path.split(place)
    return os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


@contextlib.contextmanager
def _removed_on_failure(temporary: str) -> Iterator[None]:
    """Removes ``temporary`` when the block fails, and lets the failure go on."""
    try:
        yield
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def open_new(path: str | os.PathLike[str]) -> int:
    """Returns a descriptor of a new file at ``path`` (whatever was there, a link too, removed first
    and never written through); OSError when it cannot be made."""
    place = os.fspath(path)
    try:
        os.unlink(place)
    except FileNotFoundError:
        pass
    return os.open(place, NEW_FLAGS, 0o666)


_READ_CHUNK = 1024 * 1024  # what read_regular asks for at a time beyond the size the file had


def read_capped(handle: BinaryIO, size: int, cap: int) -> bytes:
    """Returns what the open binary ``handle`` holds up to ``cap + 1`` bytes (more than ``cap``: the
    caller refuses it), ``size`` being what fstat said it holds.

    ``read(n)`` allocates n bytes first: this asks for the size the file has (one more byte tells
    that it grew), never the whole cap (1 GiB for a 28-byte state file); the rest, if any, in chunks.
    """
    want = min(cap, size) + 1
    data = handle.read(want)
    if len(data) < want or want > cap:
        return data
    parts, total = [data], len(data)
    while total <= cap:
        chunk = handle.read(min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def read_fd_capped(fd: int, size: int, cap: int) -> bytes:
    """Returns what the open descriptor ``fd`` holds up to ``cap + 1`` bytes, as :func:`read_capped`
    does for a file object, without one: a snapshot read is a few system calls, and the buffered
    reader made around each one cost about as much as they did."""
    want = min(cap, size) + 1
    parts: list[bytes] = []
    total = 0
    while total <= cap:
        chunk = os.read(fd, want - total if total < want else min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_regular(path: str | os.PathLike[str], cap: int, *, follow_link: bool = False) -> bytes:
    """Returns the bytes of a regular file of at most ``cap`` bytes; OSError otherwise (a link unless
    ``follow_link``, a FIFO or a device, a larger file), without blocking on what it refuses."""
    place = os.fspath(path)
    try:
        fd = os.open(place, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_link else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, f"a symbolic link, not followed: {place}") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file: {place}")
        data = read_capped(handle, info.st_size, cap)
    if len(data) > cap:
        raise OSError(errno.EFBIG, f"more than {cap} bytes: {place}")
    return data
