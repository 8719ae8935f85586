"""Containment on disk: every path the harness acts on stays inside the workspace, checked twice.

A scenario file is untrusted input, and so is whatever a candidate leaves in its workspace. Two
checks keep the harness's own operations (laying out ``given``, actions between calls, reading the
workspace back for ``then`` and snapshots) inside the workspace:

- *lexically*, when a scenario is linted: a workspace-relative path that is absolute or climbs
  above the root with ``..`` is an error naming file, line and field (:func:`lexical_problem`);
- *on disk*, at run time: a path is walked one component at a time from a descriptor of the root,
  each opened with ``O_NOFOLLOW`` relative to its parent's descriptor (:func:`resolve`), so a
  symbolic link is never followed by the kernel on the harness's behalf. A link met on the way is
  followed by this module only when its target, read and resolved lexically, stays inside the
  workspace; otherwise the walk stops with :class:`Outside`, naming the link, and the operation is
  not performed. There is no ``realpath``-then-open window: a component swapped for a link after
  the check is refused by the kernel (``ELOOP``/``ENOTDIR``).

A scenario may still lay out links that point out of the workspace (a real test case for a
candidate), but only into the harness's own folder around it (:func:`check_link_target`, and
:func:`link_target_problem` when linted): a candidate that follows links would otherwise write
wherever a scenario file aimed it. Links a candidate makes may lead anywhere; the harness never
acts through them.
"""
from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from harness.util.fileio import DIR_FLAGS
from harness.util.pathrules import climb_problem

#: Symbolic links followed in one resolution at most (as the kernel's own limit).
MAX_LINKS = 40


class Outside(OSError):
    """An operation would leave the workspace (through ``..`` or a symbolic link); it was not performed."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EXDEV, message)
        self.message = message

    def __str__(self) -> str:
        return self.message

def relative_parts(root: str, rel: str) -> list[str]:
    """Returns the normalised components of ``rel`` below ``root``; raises Outside when it leaves it.

    An absolute ``rel`` (after ``${workspace}`` was substituted) counts when it lies under ``root``.
    """
    if rel.startswith("/"):
        if rel == root or rel.startswith(root.rstrip("/") + "/"):
            rel = rel[len(root):]
        else:
            raise Outside(f"{rel!r} is outside the workspace")
    parts: list[str] = []
    for part in rel.split("/"):
        if part == "..":
            if not parts:
                raise Outside(f"{rel!r} climbs above the workspace")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class Resolved:
    """A resolved path: a descriptor of its parent directory (owned) and the last component's name."""

    def __init__(self, dir_fd: int, name: str, parts: list[str], info: os.stat_result | None = None) -> None:
        self.dir_fd = dir_fd
        self.name = name  # "" when the path is the root itself
        self.parts = parts  # the real components from the root, no link among them
        #: The last component's ``lstat`` taken on the way (None when it does not exist, or for the root):
        #: a caller that needs it spares a second system call.
        self.info = info

    @property
    def rel(self) -> str:
        """Returns the real workspace-relative path."""
        return "/".join(self.parts)

    def close(self) -> None:
        """Closes the parent directory's descriptor."""
        _close(self.dir_fd)


@contextmanager
def resolve(root: str, rel: str, *, follow_last: bool = True, create_parents: bool = False,
            what: str = "the workspace") -> Iterator[Resolved]:
    """Yields ``rel`` resolved below ``root`` without the kernel following any link.

    Links among the components are followed only when they lead back inside the workspace (read
    and resolved here, lexically); the last component's link too when ``follow_last``. With
    ``create_parents``, missing directories on the way are made (mode 0777 minus the umask).
    Raises Outside for anything that would leave the workspace, OSError for the rest. ``what`` names
    the tree below ``root`` in messages (the same walk keeps a snapshot folder's files in it).
    """
    pending = relative_parts(root, rel)
    done: list[str] = []
    fds = [os.open(root, DIR_FLAGS)]  # fds[i] is the directory done[:i]
    hops = 0
    info: os.stat_result | None = None
    try:
        while pending:
            part, last = pending[0], len(pending) == 1
            try:
                info = os.lstat(part, dir_fd=fds[-1])
            except FileNotFoundError:
                info = None
                if last or not create_parents:
                    if last:
                        break
                    raise
                os.mkdir(part, 0o777, dir_fd=fds[-1])
                info = os.lstat(part, dir_fd=fds[-1])
            if stat.S_ISLNK(info.st_mode) and (not last or follow_last):
                hops += 1
                where = "/".join(done + [part])
                if hops > MAX_LINKS:
                    raise Outside(f"{where}: too many levels of symbolic links")
                target = os.readlink(part, dir_fd=fds[-1])
                # The link may lead anywhere in the tree: walk again from the root along its resolution.
                pending = _link_parts(root, done, target, where, what) + pending[1:]
                for fd in fds[1:]:
                    _close(fd)
                del fds[1:]
                done = []
                continue
            if last:
                break
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), "/".join(done + [part]))
            fds.append(os.open(part, DIR_FLAGS, dir_fd=fds[-1]))  # ELOOP if swapped for a link meanwhile
            done.append(part)
            pending.pop(0)
        name = pending[0] if pending else ""
        parent = fds.pop()
        resolved = Resolved(parent, name, done + ([name] if name else []), info if name else None)
        try:
            yield resolved
        finally:
            resolved.close()
    finally:
        for fd in fds:
            _close(fd)

def _link_parts(root: str, done: list[str], target: str, where: str, what: str = "the workspace") -> list[str]:
    """Returns the components (from the root) a link at ``done/<link>`` leads to; Outside if none."""
    if target.startswith("/"):
        normal = posixpath.normpath(target)
        top = root.rstrip("/")
        if normal != top and not normal.startswith(top + "/"):
            raise Outside(f"{where} is a symbolic link to {target!r}, outside {what}: not followed")
        return [p for p in normal[len(top):].split("/") if p]
    parts = list(done)
    for part in target.split("/"):
        if part == "..":
            if not parts:
                raise Outside(f"{where} is a symbolic link to {target!r}, outside {what}: not followed")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts

def check_link_target(root: str, enclosure: str, link: list[str], target: str) -> None:
    """Raises Outside unless a link made at ``link`` (real components below ``root``) to ``target``
    leads into ``enclosure``: the workspace or the harness's own folder around it.

    Scenarios name link targets, and a candidate that follows links writes wherever they lead, so
    a link the harness makes must not lead into the rest of the machine. ``..`` may open a target
    only: after a name it would go up from wherever that name leads, which a link made later can
    move. An absolute target is taken as relative to the root when it starts with the root.
    """
    where = "/".join(link)
    refused = Outside(f"a symbolic link {where} -> {target!r} would lead outside the workspace and the "
                      "harness's folder around it: not made")
    top = root.rstrip("/")
    start = link[:-1]
    rest = target
    if target.startswith("/"):
        if target != top and not target.startswith(top + "/"):
            if ".." in target.split("/"):
                raise refused
            start, rest = [], posixpath.relpath(posixpath.normpath(target), top)
        else:
            start, rest = [], target[len(top):].lstrip("/") or "."
    if climb_problem(rest, len(link) + 1, "after_name"):  # deep enough that only '..' after a name counts
        raise refused
    normal = posixpath.normpath(posixpath.join(top, *start, rest))
    bound = enclosure.rstrip("/")
    if normal != bound and not normal.startswith(bound + "/"):
        raise refused

def entry_lstat(root: str, rel: str) -> os.stat_result | None:
    """Returns the lstat of ``rel`` (links followed only inside the workspace, the last one not); None if missing."""
    with resolve(root, rel, follow_last=False) as at:
        try:
            return os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)
        except FileNotFoundError:
            return None
