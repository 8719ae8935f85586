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
from typing import Iterator

#: Levels a walk below the top of a tree goes down before it moves folders up (see flatten).
FLAT_DEPTH = 64
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def flatten(top: str | os.PathLike[str], depth: int = FLAT_DEPTH) -> int:
    """Moves every folder more than ``depth`` levels below ``top`` up into ``top`` (renamed
    ``.flat-<n>``); returns how many were moved. Errors on the way leave that part as it is."""
    moved = 0
    top_fd = os.open(top, _DIR_FLAGS)
    try:
        device = os.fstat(top_fd).st_dev
        pending: list[str | None] = [None]  # None: the top itself; else a folder moved up into it
        while pending:
            name = pending.pop()
            try:
                first = os.dup(top_fd) if name is None else _open_dir(top_fd, name)
            except OSError:
                continue
            limit = depth if name is None else depth - 1  # a folder moved up is one level below the top
            stack: list[tuple[int, Iterator[str]]] = [(first, iter(_names(first)))]
            try:
                while stack:
                    fd, names = stack[-1]
                    child = next(names, None)
                    if child is None:
                        os.close(stack.pop()[0])
                        continue
                    try:
                        info = os.lstat(child, dir_fd=fd)
                    except OSError:
                        continue
                    if not stat.S_ISDIR(info.st_mode) or info.st_dev != device:
                        continue  # a file, a link, or a mount point: never entered
                    if len(stack) < limit:
                        try:
                            sub = _open_dir(fd, child)
                        except OSError:
                            continue
                        stack.append((sub, iter(_names(sub))))
                        continue
                    new = f".flat-{os.getpid()}-{moved}-{os.urandom(4).hex()}"
                    try:
                        os.rename(child, new, src_dir_fd=fd, dst_dir_fd=top_fd)
                    except OSError:
                        continue
                    moved += 1
                    pending.append(new)
            finally:
                for fd, _ in stack:
                    with contextlib.suppress(OSError):
                        os.close(fd)
    finally:
        os.close(top_fd)
    return moved


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
    stack: list[tuple[int, Iterator[str]]] = [(top_fd, iter(_names(top_fd)))]
    try:
        while stack:
            fd, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(stack.pop()[0])
                continue
            try:
                if not stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode) or len(stack) >= depth:
                    continue
                searchable(name, fd)
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                stack.append((sub, iter(_names(sub))))
            except OSError:
                continue
    finally:
        for fd, _ in stack:
            with contextlib.suppress(OSError):
                os.close(fd)


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
    stack: list[tuple[int, Iterator[str]]] = []
    try:
        os.chown(top_fd, uid, gid)
        stack.append((top_fd, iter(_names(top_fd))))
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
                os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or len(stack) >= depth:
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)  # ELOOP or ENOTDIR if swapped for a link meanwhile
            except OSError:
                continue
            if not os.path.samestat(info, os.fstat(sub)):
                os.close(sub)
                continue
            stack.append((sub, iter(_names(sub))))
    finally:
        for fd, _ in stack:
            if fd != top_fd:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.close(top_fd)
