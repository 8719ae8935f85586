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
- any read or listing outside the enclosure but Python's own files: anything under the
  interpreter's prefixes (its library, the venv), and code only (``.py``, ``.pyc``, ``.so``...)
  in the other folders on ``sys.path``, which may be a user's home under ``python -m`` (a call may
  import a module the first time it needs it, and write its bytecode cache).

A path is judged as written, made absolute and normalised: every link in the enclosure leads
inside it (those a scenario lays out are held to that by harness/containment/paths.py, those made during a
call by this hook), so a path that only goes down from the enclosure stays in it. A path with
``..`` after a name (which the kernel applies after following a link, not before) is resolved
with ``realpath`` first.

The refused operation raises ``PermissionError`` in the reference, and the session reports what
was refused, which the runner shows as an ``escape`` failure. The hook cannot be removed once
added (Python's rule), so it is added once, and outside a confined call it returns at once.
A name relative to a directory descriptor is taken from that folder where the event carries the
descriptor; ``os.open`` does not pass it on, so a relative name opened for reading is let through
(``shutil.rmtree`` walks that way) and one opened for writing is taken from the working folder.
Operations on an open descriptor are not seen. CPython 3.11 raises no audit event for
``os.mkfifo``, ``os.mknod`` and the looks at a path (``os.stat``, ``os.lstat``, ``os.access``,
``os.readlink``, ``os.statvfs``, ``os.pathconf``, and so ``os.path.exists``, ``Path.is_file``...):
while a call is confined, wrappers stand in their place in ``os`` and raise one (the originals are
put back when no call is confined, so the harness's own walks do not pay for them). A look is held
to the rule of a read, and may also reach the folders above the enclosure and Python's (a
``realpath`` looks at each). What calls ``posix`` directly, or names the function it took from
``os`` before the call began (``from os import stat``), is not seen. Starting a process or a
thread, changing the working folder and opening a database by name are refused outright while a
call is confined.
"""

from __future__ import annotations

import errno
import functools
import operator
import os
import sys
import threading
from typing import Any, NoReturn

from harness.containment import fake_records

#: Audit events that change what a path names (their first argument is the path; ``os.rename``,
#: ``os.link`` and ``shutil.*`` name a second one; ``os.symlink`` is checked on its own).
CHANGES = frozenset({
    "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.utime", "os.truncate",
    "os.link", "os.chflags", "os.lchflags", "os.lchmod", "os.lchown", "os.setxattr",
    "os.removexattr", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "shutil.rmtree", "shutil.move", "shutil.chown", "tempfile.mkstemp", "tempfile.mkdtemp",
    "os.mkfifo", "os.mknod",
})
#: Functions of ``os`` that act on a path with no audit event of CPython's (3.11): while a call is
#: confined each is wrapped to raise ``os.<name>`` with its path and ``dir_fd``.
UNAUDITED = ("mkfifo", "mknod", "stat", "lstat", "access", "readlink", "statvfs", "pathconf")
#: The events of the wrapped functions that look at what a path names (its kind, size, times, a link's text).
LOOKS = frozenset({"os.stat", "os.lstat", "os.access", "os.readlink", "os.statvfs", "os.pathconf"})
#: Events with two paths that both change (a rename's source leaves, its destination appears).
TWO_PATHS = frozenset({"os.rename", "os.link", "shutil.copyfile", "shutil.copytree", "shutil.move"})
#: Audit events that read what a path names.
READS = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr", "glob.glob"})
#: Events that move a name (a link moved keeps its target's text: where it leads is checked again).
MOVES = frozenset({"os.rename", "os.link", "shutil.move"})
#: What a confined call may not do at all: start processes or threads (which the hook would not
#: follow), change the process's working folder, open a database file by name.
REFUSED = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                     "os.forkpty", "pty.spawn", "_thread.start_new_thread", "os.chdir", "os.fchdir",
                     "sqlite3.connect"})
#: Where an event carries directory descriptors: name index -> descriptor index.
_DIR_FDS = {"os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),), "os.chmod": ((0, 2),),
            "os.chown": ((0, 3),), "os.utime": ((0, 3),), "os.rename": ((0, 2), (1, 3)),
            "os.link": ((0, 2), (1, 3)), "os.mkfifo": ((0, 1),), "os.mknod": ((0, 1),)}

_READ_ONLY = frozenset("rbt")  # an open mode with only these letters reads
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_local = threading.local()
_active = 0  # confined calls under way, in any thread: the hook returns at once when there are none
_installed = False
_lock = threading.Lock()


@functools.cache
def _python_roots() -> tuple[str, ...]:
    """The interpreter's own folders (its library, the venv): anything there may be read."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return tuple(sorted({os.path.realpath(root) for root in roots if os.path.isabs(root)}))


@functools.cache
def _code_roots() -> tuple[str, ...]:
    """The other folders on ``sys.path`` (the project, the working folder under ``python -m``):
    only Python's code may be read there, and listed (a folder on it may be a user's home)."""
    return tuple(sorted({os.path.realpath(entry) for entry in sys.path if entry and os.path.isabs(entry)}))


_CODE = (".py", ".pyc", ".so", ".pth", ".zip")


@functools.lru_cache(maxsize=64)
def _bounds_of(enclosure: str) -> tuple[str, ...]:
    return tuple({enclosure.rstrip("/"), os.path.realpath(enclosure).rstrip("/")})


def _bounds(enclosure: str) -> tuple[str, ...]:
    """The enclosure as given and where it really is (:func:`_bounds_of`). On pyfakefs (a new enclosure
    for each scenario), one with no link on the way in pyfakefs' records is where it is: its
    ``realpath`` through the fake ``os.path`` would look up each folder to tell so."""
    fs = fake_records.filesystem()
    if fs is not None and fake_records.no_link_on_the_way(fs, enclosure):
        return (enclosure.rstrip("/"),)
    return _bounds_of(enclosure)


class Confinement:
    """One session's bounds, and what was refused in it."""

    def __init__(self, enclosure: str) -> None:
        self.bounds = _bounds(enclosure)
        self._inside = _prefixes(self.bounds)
        self.refused: list[str] = []
        self.python = _python_roots()
        self.code = _code_roots()
        # The folders above the enclosure and above Python's: a path resolved there looks at each.
        # (Python's are the same for every session: worked out once.)
        self.above = _ancestors(self.bounds) | _ancestors(self.python + self.code)

    def where(self, raw: str, dir_fd: object = None) -> str:
        """Returns where ``raw`` leads: absolute (from ``dir_fd`` when given one) and normalised,
        through ``realpath`` when ``..`` follows a name."""
        if raw.startswith("/"):
            path = raw
        elif isinstance(dir_fd, int) and dir_fd >= 0:
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), raw)
        else:
            path = os.path.join(os.getcwd(), raw)
        if "/.." in path:
            return os.path.normpath(os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)))
        return os.path.normpath(path)

    def check(self, event: str, args: tuple) -> None:
        """Raises PermissionError (and keeps what it refused) when ``event`` reaches outside."""
        if event == "open" or event in LOOKS:
            path = args[0] if args else None
            if type(path) is str and path.startswith(self._inside) and "/.." not in path:
                return  # an absolute path going only down from the enclosure stays in it, whatever the mode
        if event in REFUSED:
            self._refuse(f"refused: the in-process reference tried {event}, which a call confined to its "
                         "workspace may not do (it would escape the confinement)", event, "")
        dir_fds = _DIR_FDS.get(event, ())
        if event == "open":
            path, mode, flags = args if len(args) == 3 else (tuple(args) + (None, None, None))[:3]
            changes = (not _READ_ONLY.issuperset(mode) if isinstance(mode, str)
                       else isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
            if not changes and isinstance(path, (str, bytes)) and not os.fsdecode(path).startswith("/"):
                return  # a relative name read (os.open gives no dir_fd to the event: shutil.rmtree's walk)
            paths = [(path, None)]
        elif event == "os.symlink":  # (target, link, dir_fd): the link is made, and must lead inside
            changes, paths = True, [(args[1], args[2] if len(args) > 2 else None)]
            if isinstance(args[0], (str, bytes)) and isinstance(args[1], (str, bytes)):
                link = self.where(os.fsdecode(args[1]), paths[0][1])
                paths.append((os.path.join(os.path.dirname(link), os.fsdecode(args[0])), None))
        elif event in CHANGES:
            count = 2 if event in TWO_PATHS else 1
            fds = dict(dir_fds)
            paths = [(args[i], args[fds[i]] if i in fds and len(args) > fds[i] else None)
                     for i in range(min(count, len(args)))]
            changes = True
            if event in MOVES and len(paths) == 2:
                paths.append(self._moved_link(paths[0], paths[1]))
        elif event in READS:
            changes, paths = False, [(args[0], None)] if args else []
        elif event in LOOKS:  # (path, dir_fd), raised by the wrappers of UNAUDITED
            changes, paths = False, [(args[0], args[1] if len(args) > 1 else None)] if args else []
        else:
            return
        for raw, dir_fd in paths:
            if isinstance(raw, int) or raw is None:
                continue  # an open descriptor: what it names was checked when it was opened
            try:
                place = self.where(os.fsdecode(raw), dir_fd)
            except (TypeError, ValueError):
                continue  # not a path: the system call refuses it itself
            except OSError:  # where it leads cannot be told (a bad descriptor, no working folder): refused
                self._refuse(f"refused: the in-process reference tried {event} on {os.fsdecode(raw)!r}, "
                             "whose place cannot be told", event, os.fsdecode(raw))
            if _under(place, self.bounds) or (event in LOOKS and place in self.above):
                continue
            if not changes and (_under(place, self.python)
                                or (_under(place, self.code) and (event != "open" or place.endswith(_CODE)))):
                continue
            if changes and "/__pycache__" in place and _under(place, self.python + self.code):
                continue  # an import writing its bytecode cache
            verb = "change" if changes else "read"
            self._refuse(f"refused: the in-process reference tried to {verb} {place} ({event}), outside the workspace",
                         event, place)

    def _moved_link(self, source: tuple, destination: tuple) -> tuple:
        """A link moved or linked keeps its target's text, which a new place reads otherwise: where it
        will lead from there (or nothing to check)."""
        try:
            old = self.where(os.fsdecode(source[0]), source[1])
            new = self.where(os.fsdecode(destination[0]), destination[1])
            if not os.path.islink(old):
                return (None, None)
            return (os.path.join(os.path.dirname(new), os.readlink(old)), None)
        except (TypeError, ValueError, OSError):
            return (None, None)

    def _refuse(self, what: str, event: str, path: str) -> NoReturn:
        self.refused.append(what)
        raise PermissionError(errno.EACCES, "outside the workspace: refused by the harness", path or event)


@functools.lru_cache(maxsize=64)
def _ancestors(roots: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for root in roots:
        while root not in ("/", ""):
            root = _dirname(root)
            out.add(root)
    return frozenset(out)


def _dirname(path: str) -> str:
    """``posixpath.dirname`` of a text path, worked out on the text alone: under pyfakefs this module's
    ``os.path`` is a fake one, whose every call sets up a path lookup (a session's bounds cost 40)."""
    head = path[:path.rfind("/") + 1]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


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


#: The names of UNAUDITED this ``os`` has, and a getter of what stands under them (one C call).
_NAMES = tuple(name for name in UNAUDITED if hasattr(os, name))
_standing = operator.itemgetter(*_NAMES)
#: What stood in ``os`` when the wrappers were made, and the wrappers, in the order of _NAMES.
_found: tuple[Any, ...] = ()
_wrappers: tuple[Any, ...] = ()
_found_by_name: dict[str, Any] = {}
_wrappers_by_name: dict[str, Any] = {}
_wrapped = False  # the wrappers stand in ``os`` now


def _wrapper(name: str, original: Any) -> Any:
    event = "os." + name

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _active and getattr(_local, "current", None) is not None:
            sys.audit(event, args[0] if args else kwargs.get("path"), kwargs.get("dir_fd"))
        return original(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    return wrapper


def _wrap_unaudited() -> None:
    """Puts the wrappers of UNAUDITED in ``os`` (the first confined call begins); under ``_lock``.
    Entered around every call of the reference, so it is a comparison and one update when what
    stands there is what was wrapped last time; other functions there are wrapped anew."""
    global _found, _wrappers, _found_by_name, _wrappers_by_name, _wrapped
    namespace = sys.modules["os"].__dict__  # the module itself: pyfakefs puts a fake one in modules' `os`
    try:
        current = _standing(namespace)
    except KeyError:  # not the module wrapped before (nothing real to guard under a fake file system)
        return
    if current != _found:  # the first call (compared by identity)
        _found = current
        _wrappers = tuple(_wrapper(name, function) for name, function in zip(_NAMES, current))
        _found_by_name, _wrappers_by_name = dict(zip(_NAMES, _found)), dict(zip(_NAMES, _wrappers))
    namespace.update(_wrappers_by_name)
    _wrapped = True


def _unwrap_unaudited() -> None:
    """Puts the functions found back (the last confined call ended); under ``_lock``. One replaced
    meanwhile by someone else is left as it is."""
    global _wrapped
    if not _wrapped:
        return
    _wrapped = False
    namespace = sys.modules["os"].__dict__
    if _standing(namespace) == _wrappers:
        namespace.update(_found_by_name)
        return
    for name, wrapper in _wrappers_by_name.items():
        if namespace.get(name) is wrapper:
            namespace[name] = _found_by_name[name]


def install() -> None:
    """Adds the audit hook (once per process; it stays, idle outside a confined call)."""
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


class confined:
    """Confines this thread's file operations to the bounds' enclosure (and Python's own files, read) while inside.

    A class rather than a generator: it is entered around every call of the in-process reference.
    """

    __slots__ = ("_bounds", "_outer")

    def __init__(self, bounds: Confinement) -> None:
        self._bounds = bounds
        self._outer: Confinement | None = None

    def __enter__(self) -> Confinement:
        global _active
        if not _installed:
            install()
        self._outer = getattr(_local, "current", None)
        _local.current = self._bounds
        with _lock:
            if not _active:
                _wrap_unaudited()
            _active += 1
        return self._bounds

    def __exit__(self, *exc: object) -> None:
        global _active
        _local.current = self._outer
        with _lock:
            _active -= 1
            if not _active:
                _unwrap_unaudited()
