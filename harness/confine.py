"""The in-process reference, confined to the folder around its workspace by an audit hook.

The reference runs inside the harness's own process, so what it does to files the harness does.
A scenario file names the paths it is called with (``/etc/x``, ``~/.ssh/id_rsa``, ``../../x``),
and a reference that follows them, as the reference of seed 001 and 003 may (absolute paths
anywhere), or a mutant of it under ``make mutation``, would otherwise write, read or list
anything the harness's user may. While a call runs, Python's audit hook (:func:`sys.addaudithook`,
raised by ``open``, ``os.mkdir``, ``os.rename``... before the system call) refuses, on that thread
only:

- any change (open for writing, create, rename, remove, mode, times, links) to a path whose real
  folder is not inside the enclosure: the workspace and the harness's folder around it, where a
  write is still seen as an escape by the canaries;
- any read or listing outside the enclosure but Python's own files (the folders on ``sys.path``
  and the interpreter's prefixes: a call may import a module the first time it needs it).

The refused operation raises ``PermissionError`` in the reference, and the session reports what
was refused, which the runner shows as an ``escape`` failure. The hook cannot be removed once
added (Python's rule), so it is added once, and outside a confined call it returns at once.
Operations on an open descriptor (``fd``-based ones, and ``dir_fd`` names, which the audit events
do not resolve) are not seen; the reference uses paths.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import threading
from typing import Iterator

#: Audit events that change what a path names (their first argument is the path; ``os.rename``,
#: ``os.link``, ``os.symlink`` and ``shutil.*`` name a second one).
CHANGES = frozenset({
    "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.utime", "os.truncate",
    "os.link", "os.symlink", "os.chflags", "os.lchflags", "os.lchmod", "os.lchown", "os.setxattr",
    "os.removexattr", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "shutil.rmtree", "shutil.move", "shutil.chown", "tempfile.mkstemp", "tempfile.mkdtemp",
})
#: Events with two paths that both change (a rename's source leaves, its destination appears).
TWO_PATHS = frozenset({"os.rename", "os.link", "shutil.copyfile", "shutil.copytree", "shutil.move"})
#: Audit events that read what a path names.
READS = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr", "os.chdir", "glob.glob"})

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_local = threading.local()
_installed = False
_lock = threading.Lock()


@functools.cache
def _python_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.update(entry for entry in sys.path if entry)
    return tuple(sorted({os.path.realpath(root) for root in roots if os.path.isabs(root)}))


class Confinement:
    """One confined call's bounds, and what it refused."""

    def __init__(self, enclosure: str) -> None:
        self.bounds = tuple({enclosure.rstrip("/"), os.path.realpath(enclosure).rstrip("/")})
        self.refused: list[str] = []
        self.python = _python_roots()

    def inside(self, path: str, *, real: bool) -> bool:
        """Returns whether ``path`` (absolute, normalised) lies in the enclosure (its real folder too)."""
        if not _under(path, self.bounds):
            return False
        if not real:
            return True
        folder = os.path.realpath(os.path.dirname(path))
        return _under(os.path.join(folder, os.path.basename(path)), self.bounds)

    def check(self, event: str, args: tuple) -> None:
        """Raises PermissionError (and keeps what it refused) when ``event`` reaches outside."""
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            changes = (any(c in mode for c in "wax+") if isinstance(mode, str)
                       else isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
            paths = [path]
        elif event in CHANGES:
            changes, paths = True, list(args[:2] if event in TWO_PATHS else args[:1])
        elif event in READS:
            changes, paths = False, list(args[:1])
        else:
            return
        for raw in paths:
            if isinstance(raw, int) or raw is None:
                continue  # an open descriptor: what it names was checked when it was opened
            try:
                path = os.path.abspath(os.fsdecode(raw))
            except (TypeError, ValueError):
                continue
            if self.inside(path, real=True):
                continue
            if not changes and _under(path, self.python):
                continue
            verb = "change" if changes else "read"
            self.refused.append(f"refused: the in-process reference tried to {verb} {path} ({event}), "
                                "outside the workspace")
            raise PermissionError(errno.EACCES, "outside the workspace: refused by the harness", path)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def _hook(event: str, args: tuple) -> None:
    current = getattr(_local, "current", None)
    if current is None:
        return
    _local.current = None  # what the check itself does (realpath) is not checked again
    try:
        current.check(event, args)
    finally:
        _local.current = current


def install() -> None:
    """Adds the audit hook (once per process; it stays, idle outside a confined call)."""
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextlib.contextmanager
def confined(bounds: Confinement) -> Iterator[Confinement]:
    """Confines this thread's file operations to the bounds' enclosure (and Python's own files, read) while inside."""
    install()
    outer = getattr(_local, "current", None)
    _local.current = bounds
    try:
        yield bounds
    finally:
        _local.current = outer
