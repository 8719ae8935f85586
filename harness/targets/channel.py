"""One candidate process and the line-by-line conversation with it.

A :class:`Channel` starts a command, writes request lines to its standard input and reads exactly
one response line back, within a deadline, with a cap on the line's length that holds without
reading an unbounded line into memory. Its standard error is drained by one thread per process
into a bounded :class:`StderrTail`. Anything that goes wrong with the process itself (it died, hung,
wrote too much) is a :class:`ChannelError`, after which the channel is dead and its process gone.

What's left to the targets (``cmd/target.py``, ``mcp/``, ``acp/``) is the protocol: which messages,
what they mean, when to restart. :func:`split_command_line` turns the command line of a ``cmd:`` or
``mcp:`` target spec into an argv.
"""

from __future__ import annotations

import fcntl
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.targets import launch
from harness.util import processes

#: Longest response line accepted, newline excluded.
DEFAULT_LINE_CAP = 16 * 1024 * 1024
#: Bytes read from the candidate's stdout per system call.
_CHUNK = 1024 * 1024
#: Pipe capacity asked of the kernel, so a large response needs few reads and wake-ups.
_PIPE_SIZE = 1024 * 1024
_POLL_IN = select.POLLIN | select.POLLHUP | select.POLLERR
_POLL_OUT = select.POLLOUT | select.POLLHUP | select.POLLERR


class ChannelError(Exception):
    """The process broke the conversation; ``kind`` is one of timeout, exited, oversized, unsolicited, spawn."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class StderrTail:
    """Drains a file descriptor on its own thread, keeping only the last ``limit`` bytes."""

    def __init__(self, fd: int, limit: int = 64 * 1024) -> None:
        self._fd = fd
        self._limit = limit
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name=f"cmd-stderr-{fd}", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                with self._lock:
                    self._data += chunk
                    if len(self._data) > self._limit:
                        del self._data[: len(self._data) - self._limit]
        except OSError:
            pass
        finally:
            try:
                os.close(self._fd)
            except OSError:
                pass

    def wait(self, timeout: float) -> None:
        """Waits up to ``timeout`` seconds for the end of the stream (the process and its children gone)."""
        self._thread.join(timeout)

    def text(self, max_lines: int = 20, max_chars: int = 4000) -> str:
        """Returns the last lines written, decoded leniently, at most ``max_lines`` / ``max_chars``."""
        with self._lock:
            raw = bytes(self._data[-max_chars * 4 :])
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        lines = text.splitlines()[-max_lines:]
        return "\n".join(lines)[-max_chars:]

    def report(self) -> str:
        """Returns the tail formatted for a verdict's reason."""
        text = self.text()
        return f"stderr (last lines):\n{text}" if text else "stderr: (empty)"


class Channel:
    """A running command spoken to one line at a time."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: int | None = None,
        group: int | None = None,
        line_cap: int = DEFAULT_LINE_CAP,
        box: Any = None,
    ) -> None:
        self.argv = list(argv)
        self.box = box  # the sandbox it runs in (harness/targets/launch.py), closed when it ends
        self.line_cap = line_cap
        extra: dict = {}
        if user is not None:
            extra.update(user=user, group=group, extra_groups=[])
        search = (env or os.environ).get("PATH", os.defpath)
        relative = bool(self.argv) and "/" in self.argv[0] and not os.path.isabs(self.argv[0]) and cwd
        if not self.argv or (not relative and shutil.which(self.argv[0], path=search) is None):
            what = "No such file or directory" if not self.argv or not os.path.exists(self.argv[0]) else "Permission denied"
            raise ChannelError("spawn", f"cannot start {self.argv[0] if self.argv else ''!r}: {what}")
        # In its sandbox, under a keeper (harness/targets/launch.py): whatever the command starts,
        # however detached, ends with it.
        command, self.tag = launch.command(self.argv, box, for_others=user is not None)
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                close_fds=True,
                start_new_session=True,  # its own process group: a kill reaches its children too
                **extra,
            )
        except OSError as exc:
            raise ChannelError("spawn", f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        self.pid = self.proc.pid
        # Own the raw descriptors: the Popen file objects would buffer behind our back.
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None, "all three are pipes"
        self._in = os.dup(stdin.fileno())
        self._out = os.dup(stdout.fileno())
        err = os.dup(stderr.fileno())
        for f in (stdin, stdout, stderr):
            f.close()
        for fd in (self._in, self._out):
            os.set_blocking(fd, False)
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:
                pass  # a smaller pipe only means more reads
        self.stderr = StderrTail(err)
        self._reader = select.poll()
        self._reader.register(self._out, _POLL_IN)
        self._writer = select.poll()
        self._writer.register(self._in, _POLL_OUT)
        self._buf = bytearray()
        self._chunk = bytearray(_CHUNK)
        self._chunk_view = memoryview(self._chunk)
        self._family_ended = False
        self.alive = True

    def exchange(self, request: bytes, timeout: float) -> bytes:
        """Writes one request line and returns the one response line (without its newline)."""
        if not self.alive:
            raise ChannelError("exited", "the process is no longer running")
        deadline = time.monotonic() + timeout
        if self._buf or self._reader.poll(0):
            self._check_unsolicited()
        self._write(request, deadline, timeout)
        return self._read_line(deadline, timeout)

    def _check_unsolicited(self) -> None:
        # Output nobody asked for (a second line after an answer, a log line between calls) means
        # the next line read would be taken for the next answer: stop here instead.
        try:
            n = os.readv(self._out, [self._chunk_view])
        except BlockingIOError:
            n = -1
        if n > 0:
            self._buf += self._chunk_view[:n]
        if self._buf:
            shown = excerpt(bytes(self._buf[:200]))
            self.kill()
            raise ChannelError("unsolicited", f"wrote output nobody asked for: {shown}")
        if n == 0:
            self._died("before the request was sent")

    def _write(self, data: bytes, deadline: float, timeout: float) -> None:
        view = memoryview(data)
        while True:
            try:
                written = os.write(self._in, view)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                self._died("while the request was being written")
            if written == len(view):
                return
            view = view[written:]
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._writer.poll(_ms(remaining)):
                self.kill()
                raise ChannelError("timeout", f"did not read its request within {timeout:g} s")

    def _read_line(self, deadline: float, timeout: float) -> bytes:
        buf = self._buf
        scan = 0
        while True:
            i = buf.find(b"\n", scan)
            if i >= 0:
                if i > self.line_cap:
                    self._oversized()
                line = bytes(buf[:i])
                del buf[: i + 1]
                return line
            scan = len(buf)
            if scan > self.line_cap:
                self._oversized()
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._reader.poll(_ms(remaining)):
                self.kill()
                raise ChannelError("timeout", f"did not answer within {timeout:g} s")
            try:
                n = os.readv(self._out, [self._chunk_view])
            except BlockingIOError:
                continue
            if n == 0:
                partial = f" after writing {len(buf)} bytes of an unfinished line" if buf else ""
                self._died(f"before answering{partial}")
            buf += self._chunk_view[:n]

    def _oversized(self) -> None:
        head = excerpt(bytes(self._buf[:120]))
        self.kill()
        mib, rest = divmod(self.line_cap, 1024 * 1024)
        cap = f"{mib} MiB" if mib and not rest else f"{self.line_cap} bytes"
        raise ChannelError("oversized", f"wrote a response line longer than the cap of {cap}, starting {head}")

    def _died(self, when: str) -> None:
        code = self._reap()
        raise ChannelError("exited", f"{describe_exit(code)} {when}")

    def _reap(self, grace: float = 2.0) -> int | None:
        """Marks the channel dead and returns the exit status, killing the process if it lingers."""
        self.alive = False
        try:
            code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            code = None
        # Also after a clean exit: children the candidate left behind would hold its stderr open.
        self._kill_group()
        if code is None:
            code = self.proc.wait()
        self._close_fds()
        self.stderr.wait(0.5)  # let the dying words reach the tail
        if self.box is not None:
            self.box.close()
        return code

    def kill(self) -> None:
        """Ends the process (and its process group) at once; the channel is dead afterwards."""
        self._kill_group()
        self._reap()

    def close(self, farewell: bytes | None, grace: float) -> None:
        """Sends ``farewell`` (best effort), waits up to ``grace`` seconds for an exit, then kills."""
        if self.alive and farewell is not None:
            try:
                self.exchange(farewell, grace)
            except ChannelError:
                pass
        if self.alive:
            try:
                os.close(self._in)  # end of input: a well-behaved loop ends on it
                self._in = -1
            except OSError:
                pass
            self._reap(grace)

    def _kill_group(self) -> None:
        if self.tag is None:  # no keeper (no interpreter the --run-as user can reach): its group only
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return
        if self.proc.poll() is not None:
            # A keeper that exited ended its whole family; one killed by a signal may not have
            # (SIGKILL cannot be caught, and the candidate can send it): its family, re-parented
            # out of reach, is found by the keeper's tag in its environment.
            if self.proc.returncode < 0 and not self._family_ended:
                self._family_ended = True
                processes.end_family(self.tag)
            return
        # The keeper kills the candidate's whole family on SIGTERM; SIGKILL of its group if it cannot.
        processes.end(self.pid, self.proc.wait, tag=self.tag)

    def _close_fds(self) -> None:
        for name in ("_in", "_out"):
            fd = getattr(self, name)
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, -1)

    def tail(self) -> str:
        """Returns the tail of the process's stderr, formatted for a report."""
        return self.stderr.report()


def describe_exit(code: int | None) -> str:
    """Returns 'exited with code 3' / 'was killed by signal SIGSEGV' for a Popen return code."""
    if code is None:
        return "stopped"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"was killed by signal {name}"
    return f"exited with code {code}"


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000) + 1)


def excerpt(data: bytes, limit: int = 200) -> str:
    """Returns the first ``limit`` bytes of ``data`` as a quoted text, with ``...`` when there was more."""
    text = data[:limit].decode("utf-8", errors="replace")
    return repr(text) + ("..." if len(data) > limit else "")


def split_command_line(spec: str, prefix: str, example: str) -> list[str]:
    """Returns the argv after ``prefix``; ``python`` means this interpreter; ValueError names the problem."""
    if not spec.startswith(prefix):
        raise ValueError(f"not a {prefix} target: {spec!r}")
    try:
        argv = shlex.split(spec[len(prefix):])
    except ValueError as exc:
        raise ValueError(f"cannot split the command line of {spec!r}: {exc}") from None
    if not argv:
        raise ValueError(f"{prefix} needs a command line, e.g. {prefix}{example}")
    # Inside a virtualenv that was not activated, `python` on PATH is some other interpreter.
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv
