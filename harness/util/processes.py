"""Process lifetime: nothing a candidate starts outlives it.

A candidate, an MCP server or the Claude Code CLI may start processes of its own, and some of
them leave its process group (``setsid``) or its family (double fork: the child exits, the
grandchild is re-parented). Killing a process group misses both. So every such command runs under
a small *keeper* (:data:`KEEPER`, a few lines of Python passed with ``-c``, so it needs no file the
candidate's user could not read under ``--run-as``):

- the keeper makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): every process
  that becomes an orphan anywhere below it is re-parented to the keeper, not to init, so the whole
  family stays in its subtree whatever the candidate does;
- it starts the command as its child and waits for it; when the command exits, or when the keeper
  gets SIGTERM, SIGHUP or SIGINT, it kills its whole subtree (a walk of ``/proc`` by parent pid,
  repeated until nothing is left) and ends with the command's own status;
- it asks for SIGTERM when the harness dies (``PR_SET_PDEATHSIG``), so even a harness killed with
  SIGKILL leaves nothing running.

The harness ends a keeper with SIGTERM (:func:`end`), and finds one whose pid it does not hold
(the MCP SDK spawns the server itself) by the tag in its argv (:func:`end_tagged`). A keeper that
was killed before it could clean up (SIGKILL cannot be caught, and a candidate may send it: under
``--run-as`` the keeper is the candidate's user's) leaves its family re-parented elsewhere; the
keeper gives its command the tag in the environment variable :data:`FAMILY_VARIABLE`, which every
process of the family inherits, and :func:`end_family` kills what carries it. What a keeper
cannot catch: a process that escapes to another PID namespace or is started through a service
manager (systemd, at, cron) -- ``--sandbox`` (a PID namespace) covers the first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

#: The keeper, run as ``python -I -S -c KEEPER <tag> <harness pid> -- <argv...>``.
KEEPER = r"""
import ctypes, os, signal, sys
tag, harness_pid, argv = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)                 # PR_SET_CHILD_SUBREAPER: orphans below come to us
libc.prctl(1, signal.SIGTERM, 0, 0, 0)     # PR_SET_PDEATHSIG: the harness died -> clean up
class Stop(Exception):
    pass
def stop(signum, frame):
    raise Stop
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, stop)
def family():
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    parents[int(name)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        todo += kids
    return found
def clean():
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
    for _ in range(200):
        pids = family()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
status = None
try:
    if os.getppid() != harness_pid:
        sys.exit(1)                         # the harness is already gone
    child = os.fork()
    if child == 0:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_DFL)
        os.environ["HARNESS_KEEPER"] = tag   # the family's mark, should the keeper be killed
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, ("cannot start %r: %s\n" % (argv[0], exc.strerror)).encode())
        os._exit(127)
    while True:
        pid, st = os.waitpid(-1, 0)
        if pid == child:
            status = st
            break
except (Stop, ChildProcessError):
    pass
clean()
if status is not None and os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else 137)
"""

#: Seconds a keeper gets to clean up after SIGTERM before it is killed outright.
GRACE = 3.0
#: The environment variable holding the keeper's tag in every process of its family.
FAMILY_VARIABLE = "HARNESS_KEEPER"
#: Bytes of a process's environment looked at for the tag (the kernel's own bound on it is far lower).
_ENVIRON_CAP = 16 * 1024 * 1024


def python(for_others: bool = False) -> str | None:
    """Returns the interpreter for the keeper: this one (the real file, not a venv's link); for
    another user (``--run-as``), the first of this one and the system's that every user can reach."""
    mine = os.path.realpath(sys.executable)
    if not for_others:
        return mine
    for candidate in (mine, "/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"):
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and reachable_by_others(real):
            return real
    return None


def reachable_by_others(path: str) -> bool:
    """Returns True when every folder above ``path`` is searchable, and the file runnable, by others."""
    try:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        while True:
            if not os.stat(parent).st_mode & 0o001:
                return False
            if parent == "/":
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def kept(argv: Iterable[str], *, for_others: bool = False) -> tuple[list[str], str | None]:
    """Returns ``argv`` run under a keeper, and the keeper's tag (found in its argv).

    ``for_others``: the command will run as another user, so the keeper's interpreter must be
    reachable by it; when none is, ``argv`` runs as it is (tag None) and only its process group
    is killed.
    """
    argv = list(argv)
    interpreter = python(for_others)
    if interpreter is None:
        return argv, None
    tag = f"harness-keeper-{os.urandom(6).hex()}"
    return [interpreter, "-I", "-S", "-c", KEEPER, tag, str(os.getpid()), "--", *argv], tag


def end(pid: int, wait, grace: float = GRACE, tag: str | None = None) -> None:
    """Ends the keeper ``pid``: SIGTERM (it kills its family), then SIGKILL of its group after ``grace``.

    ``wait(timeout)`` waits for the keeper's exit (e.g. ``Popen.wait``), raising on timeout. With
    its ``tag``, a keeper killed outright has its family ended too (:func:`end_family`).
    """
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        wait(grace)
        return
    except Exception:  # noqa: BLE001 - a keeper that does not exit in time is killed outright
        pass
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    if tag is not None:
        end_family(tag)


def _carries(pid: str, entry: bytes) -> bool:
    """Returns True when the environment of process ``pid`` holds ``entry`` (``NAME=value``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            data = b""
            while len(data) < _ENVIRON_CAP and (chunk := handle.read(65536)):
                data += chunk
    except OSError:  # gone, or another user's
        return False
    return entry in data.split(b"\0")


def end_family(tag: str, rounds: int = 50) -> None:
    """Kills every process whose environment carries the keeper's ``tag`` (:data:`FAMILY_VARIABLE`).

    For a keeper that died without ending its family (killed by a signal it cannot catch): its
    members were re-parented to the nearest subreaper (this process under ``harness run``, init
    under the pytest plugin), out of any process group the harness knows. Repeated until none is
    left, as the family may still be forking; those re-parented to this process are reaped.
    A process that cleared its environment before starting another is not found by this (under
    ``harness run`` the final sweep still ends it).
    """
    entry = f"{FAMILY_VARIABLE}={tag}".encode()
    me = os.getpid()

    def reap(found: list[int]) -> None:  # only those: other children's statuses belong to their Popen
        for pid in found:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass  # not ours: its own parent (or init) reaps it
    _kill_until_gone(lambda: [int(name) for name in os.listdir("/proc")
                              if name.isdigit() and int(name) != me and _carries(name, entry)], reap, rounds)


def _kill_until_gone(find: Callable[[], list[int]], reap: Callable[[list[int]], None], rounds: int = 50) -> None:
    """Kills what ``find`` returns and reaps it (``reap``), again until nothing is found (what is
    killed may still have been forking), at most ``rounds`` times."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap(found)
        time.sleep(0.01)


def _children() -> list[str] | None:
    """Returns this process's children (every thread's), or None when the kernel does not list them."""
    found: list[str] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as handle:
                found += handle.read().split()
    except OSError:
        return None
    return found


def tagged(tag: str) -> list[int]:
    """Returns the pids of live processes whose argv holds ``tag`` (the keeper, and nothing else)."""
    found = []
    needle = tag.encode()
    children = _children()  # a keeper is a child of the harness: its children are enough to look at
    for name in children if children is not None else os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            pass
    return found


def end_tagged(tag: str, grace: float = GRACE) -> None:
    """Ends the keeper carrying ``tag`` (and so its whole family); when it is gone already or has
    to be killed outright, what is left of its family is ended by :func:`end_family`."""
    pids = tagged(tag)
    cleaned = bool(pids)  # a keeper that ends on our SIGTERM ends its family itself
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = [pid for pid in pids if _alive(pid)]
    for pid in pids:
        cleaned = False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not cleaned:
        end_family(tag)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached the harness: unwind (stopping targets, removing workspaces) as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: Depth of :func:`deferred` blocks (signal handlers run on the main thread only, so one counter).
_deferred = 0
#: A worker holds every signal until a :func:`checkpoint` (:func:`hold`).
_held = False
#: The signal that arrived while deferred or held, raised at the next :func:`checkpoint`.
_pending: int | None = None
#: Cleaning up for good (:func:`shield`): no checkpoint raises any more.
_shielded = False


def _terminated(signum: int, frame: Any) -> None:
    # Once: a second signal must not interrupt the clean-up. The keepers are told first, so that no
    # polite goodbye to a candidate waits for its timeout on the way out.
    global _pending
    for other in _HELD:
        # A handler of ours, not SIG_IGN: a signal that already arrived and waits for the
        # interpreter would otherwise be reported as "ignored due to race condition", a traceback.
        signal.signal(other, _after_first)
    for pid in _children() or ():
        try:
            os.kill(int(pid), signal.SIGTERM)
        except (OSError, ValueError):
            pass
    if _deferred or _held:
        _pending = signum  # raised where the code is ready for it (checkpoint, the end of the block)
        return
    if _drops_exceptions(frame):
        _pending = signum  # raised at the next checkpoint, or when it is sent again just after
        _send_again_soon(signum)
        return
    raise Terminated(signum)


def _after_first(signum: int, frame: Any) -> None:
    """A signal after the first: ignored (the run is ending), unless the first is still to be raised
    (it landed where an exception would have been dropped) and can be now."""
    global _pending
    if _pending is None or _deferred or _held or _shielded:
        return
    if _drops_exceptions(frame):
        _send_again_soon(signum)
        return
    first, _pending = _pending, None
    raise Terminated(first)


def _dropped(unraisable: Any) -> None:
    """``sys.unraisablehook``: a :class:`Terminated` that Python dropped (raised in a weak-reference
    callback, a finaliser or what one calls: "Exception ignored") is not lost, nor printed as a
    traceback: it is raised again a moment later. Everything else goes to the hook that was there."""
    global _pending
    exc = unraisable.exc_value
    if isinstance(exc, Terminated):
        if not _shielded:
            _pending = exc.signum
            _send_again_soon(exc.signum)
        return
    _next_unraisablehook(unraisable)


_next_unraisablehook = sys.unraisablehook


def _catch_dropped() -> None:
    """Installs :func:`_dropped` (once)."""
    global _next_unraisablehook
    if sys.unraisablehook is not _dropped:
        _next_unraisablehook = sys.unraisablehook
        sys.unraisablehook = _dropped


def _ignored(signum: int, frame: Any) -> None:
    """Ignores a signal: a handler of ours rather than SIG_IGN (see :func:`_terminated`)."""


def _drops_exceptions(frame: Any) -> bool:
    """Returns whether an exception raised in ``frame`` would be printed and dropped instead of
    unwinding the harness: the import machinery (its module locks' weak-reference callbacks) and
    finalisers. A signal landing there is raised a moment later instead."""
    for _ in range(64):  # the frames it runs in, outward: an exception raised there unwinds to them
        if frame is None:
            return False
        code = frame.f_code
        # Our own unraisable hook and handlers count too: on a loaded machine, starting the thread
        # that sends the signal again takes longer than that thread's 10 ms.
        if (code.co_filename.startswith("<frozen importlib") or code.co_name == "__del__"
                or code in _HOOK_CODES):
            return True
        frame = frame.f_back
    return False


#: The thread sending a held signal again (one at a time).
_resender: threading.Thread | None = None


def _send_again_soon(signum: int) -> None:
    """Sends ``signum`` to the main thread again every 10 ms while it is held (:data:`_pending`):
    its handler raises what was held as soon as the main thread is where an exception unwinds."""
    global _resender
    if _resender is not None and _resender.is_alive():
        return

    def send() -> None:
        while _pending is not None and not _shielded:
            time.sleep(0.01)
            with contextlib.suppress(OSError, ValueError):
                signal.pthread_kill(threading.main_thread().ident or 0, signum)
    _resender = threading.Thread(target=send, name="harness-signal-again", daemon=True)
    _resender.start()


#: Where a signal handler or our unraisable hook runs: what is raised there is dropped or misplaced.
_HOOK_CODES = frozenset({_dropped.__code__, _send_again_soon.__code__})


class deferred:
    """A block that a SIGTERM or SIGHUP does not cut in two; it is raised as :class:`Terminated` at its end.

    For what must happen whole or not at all: making a folder and recording it for removal,
    handing a workspace to the remover, a thread's join. A signal raised as an exception between
    two bytecodes of such code (inside ``mkdtemp`` before its result is kept, between a rename and
    the queueing of what was renamed, inside ``Thread.join``) would leave a folder nobody removes
    or a lock half-released. The keepers are still told at once; only the exception waits.
    A class, not a generator: its ``__enter__`` and ``__exit__`` leave no bytecode between the
    counter and the block where a signal could land unseen.
    """

    def __enter__(self) -> None:
        global _deferred
        self._counted = threading.current_thread() is threading.main_thread()  # where handlers run
        if self._counted:
            _deferred += 1

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        global _deferred
        if self._counted:
            _deferred -= 1
            if kind is None and not _held:  # a held worker is interrupted between scenarios only
                checkpoint()


def hold() -> None:
    """From now on this process raises SIGTERM, SIGHUP and SIGINT only at a :func:`checkpoint`.

    For a ``--jobs`` worker: it is interrupted between scenarios, never in the middle of its own
    bookkeeping (its keepers are still ended at once, so a scenario waiting on its candidate ends
    quickly). The parent forks it with both signals blocked (:func:`blocked`); holding them first
    and unblocking then means no signal can land in the interpreter's own start-up of the process.
    """
    global _held
    _held = True
    _catch_dropped()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _terminated)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def checkpoint() -> None:
    """Raises :class:`Terminated` for a signal that arrived while deferred or held (once)."""
    global _pending
    if _pending is not None and not _deferred and not _shielded:
        signum, _pending = _pending, None
        raise Terminated(signum)


def pending() -> int | None:
    """Returns the signal that arrived and was not raised yet (a run that ended first), or None."""
    return _pending


_HELD = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class blocked:
    """SIGTERM, SIGHUP and SIGINT blocked (kept pending by the kernel) for the block: around a fork, so
    that the child starts with them blocked and decides itself when it can take them (:func:`hold`)."""

    def __enter__(self) -> None:
        self._before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)

    def __exit__(self, *exc: object) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self._before)


def own_tree() -> None:
    """Makes this process a child subreaper, and SIGTERM, SIGHUP and SIGINT raise :class:`Terminated`
    (a :class:`KeyboardInterrupt`), deferred where the harness's bookkeeping must not be cut in two."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass  # not Linux: keepers still end their families
    _catch_dropped()
    for signum in _HELD:
        signal.signal(signum, _terminated)


def shield() -> None:
    """From now on SIGTERM, SIGHUP and SIGINT do not interrupt this process: it is cleaning up.

    For a worker process of ``--jobs`` stopping its target and removing its workspaces: a signal
    that reached the whole run (the parent passes SIGTERM on; Ctrl-C reaches every process of the
    terminal's group) must not cut that short. The parent kills a worker that takes too long.
    """
    global _pending, _shielded
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _ignored)
    _shielded, _pending = True, None  # nor is a signal that came before raised at a checkpoint now


def sweep() -> None:
    """Kills every process still running below this one (the harness is ending), and reaps them."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _ignored)  # a second signal must not interrupt the clean-up

    def reap(found: list[int]) -> None:  # the harness is ending: every child's status is this one's
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    return
            except ChildProcessError:
                return
    _kill_until_gone(lambda: _descendants(os.getpid()), reap)


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                if fields[0] != b"Z":
                    parents[int(name)] = int(fields[1])
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        todo += kids
    return found
