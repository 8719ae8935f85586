"""Trees of any depth: a candidate may leave a folder chain deeper than the harness could remove.

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
import os
import stat
from typing import Callable, Iterator

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
                walk(first, lambda fd, child, info, level: visit(fd, child, info, level, limit))
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
