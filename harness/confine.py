"""The in-process reference, confined to the folder around its workspace by an audit hook.

The reference runs inside the harness's own process, so what it does to files the harness does.
A scenario file names the paths it is called with (``/etc/x``, ``~/.ssh/id_rsa``, ``../../x``),
and a reference that follows them, as the reference of seed 001 and 003 may (absolute paths
anywhere), or a mutant of it under ``make mutation``, would otherwise write, read or list
anything the harness's user may. While a call runs, Python's audit hook (:func:`sys.addaudithook`,
raised by ``open``, ``os.mkdir``, ``os.rename``... before the system call) refuses, on that thread
only:

- any change (open for writing, create, rename, remove, mode, times, links) to a path outside the
  enclosure: the workspace and the harness's folder around it, where a write is still seen as an
  escape by the canaries; a link made must lead inside it too;
- any read or listing outside the enclosure but Python's own files (the folders on ``sys.path``
  and the interpreter's prefixes: a call may import a module the first time it needs it).

A path is judged as written, made absolute and normalised: every link in the enclosure leads
inside it (those a scenario lays out are held to that by harness/safepath.py, those made during a
call by this hook), so a path that only goes down from the enclosure stays in it. A path with
``..`` after a name (which the kernel applies after following a link, not before) is resolved
with ``realpath`` first.

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
    "os.link", "os.chflags", "os.lchflags", "os.lchmod", "os.lchown", "os.setxattr",
    "os.removexattr", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "shutil.rmtree", "shutil.move", "shutil.chown", "tempfile.mkstemp", "tempfile.mkdtemp",
})
#: Events with two paths that both change (a rename's source leaves, its destination appears).
TWO_PATHS = frozenset({"os.rename", "os.link", "shutil.copyfile", "shutil.copytree", "shutil.move"})
#: Audit events that read what a path names.
READS = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr", "os.chdir", "glob.glob"})

_READ_ONLY = frozenset("rbt")  # an open mode with only these letters reads
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_local = threading.local()
_active = 0  # confined calls under way, in any thread: the hook returns at once when there are none
_installed = False
_lock = threading.Lock()


@functools.cache
def _python_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.update(entry for entry in sys.path if entry)
    return tuple(sorted({os.path.realpath(root) for root in roots if os.path.isabs(root)}))


@functools.lru_cache(maxsize=64)
def _bounds_of(enclosure: str) -> tuple[str, ...]:
    return tuple({enclosure.rstrip("/"), os.path.realpath(enclosure).rstrip("/")})


class Confinement:
    """One session's bounds, and what was refused in it."""

    def __init__(self, enclosure: str) -> None:
        self.bounds = _bounds_of(enclosure)
        self.refused: list[str] = []
        self.python = _python_roots()

    def where(self, raw: str) -> str:
        """Returns where ``raw`` leads: absolute and normalised, through ``realpath`` when ``..`` follows a name."""
        path = raw if raw.startswith("/") else os.path.join(os.getcwd(), raw)
        if "/.." in path:
            return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        return os.path.normpath(path)

    def check(self, event: str, args: tuple) -> None:
        """Raises PermissionError (and keeps what it refused) when ``event`` reaches outside."""
        if event == "open":
            path, mode, flags = args if len(args) == 3 else (tuple(args) + (None, None, None))[:3]
            changes = (not _READ_ONLY.issuperset(mode) if isinstance(mode, str)
                       else isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
            paths = (path,)
        elif event == "os.symlink":  # (target, link, dir_fd): the link is made, and must lead inside
            changes, paths = True, [args[1]]
            if isinstance(args[0], (str, bytes)) and isinstance(args[1], (str, bytes)):
                link = self.where(os.fsdecode(args[1]))
                paths.append(os.path.join(os.path.dirname(link), os.fsdecode(args[0])))
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
                path = self.where(os.fsdecode(raw))
            except (TypeError, ValueError):
                continue
            if _under(path, self.bounds):
                continue
            if not changes and _under(path, self.python):
                continue
            verb = "change" if changes else "read"
            self.refused.append(f"refused: the in-process reference tried to {verb} {path} ({event}), "
                                "outside the workspace")
            raise PermissionError(errno.EACCES, "outside the workspace: refused by the harness", path)


@functools.lru_cache(maxsize=64)
def _prefixes(roots: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(root + "/" for root in roots)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return path.startswith(_prefixes(roots)) or path in roots


def _hook(event: str, args: tuple) -> None:
    if not _active:
        return
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
    global _active
    install()
    outer = getattr(_local, "current", None)
    _local.current = bounds
    with _lock:
        _active += 1
    try:
        yield bounds
    finally:
        _local.current = outer
        with _lock:
            _active -= 1
