"""What a session shares whose agent is a process talking to its own fake model endpoint.

Claude Code's target (``claude_code/session.py``) and the agents of ``agents/`` play each call as
the model's next tool call and wait for the result the agent sends back: that wait is bounded (the
call's timeout, plus a start-up allowance on the first call), and an agent that exits or stops
calling becomes a `TargetError` carrying what it said, never a hang. Closing sends the final text
turn, waits (bounded) for the agent to exit, and ends what is left through its keeper.
"""

from __future__ import annotations

import abc
import json
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import IO, Any, Protocol

from harness.targets.base import Session, TargetError
from harness.util import processes

#: How many of a stream's last lines a reader keeps, and how long each may be.
TAIL_LINES = 40
LINE_CHARS = 2000


class LineTail:
    """Reads a text stream (an agent's stderr) in a daemon thread and keeps its last lines."""

    def __init__(self, stream: Iterable[str], name: str, lines: int = TAIL_LINES) -> None:
        self.tail: deque[str] = deque(maxlen=lines)
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), name=name, daemon=True)
        self._thread.start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            self._take(line)
        with self._cond:
            self._cond.notify_all()

    def _take(self, line: str) -> None:
        self.tail.append(line.rstrip("\n")[:LINE_CHARS])

    def text(self) -> str:
        """Returns the kept lines."""
        return "\n".join(self.tail)

    def join(self, timeout: float) -> None:
        """Waits for the stream to close."""
        self._thread.join(timeout)


class JsonLines(LineTail):
    """Reads a text stream of one JSON event a line (an agent's stdout) in a daemon thread: keeps the
    JSON objects as events, and the last non-blank lines, stripped, as text. A line that is no JSON
    object is kept as text only."""

    def __init__(self, stream: Iterable[str], name: str, lines: int = TAIL_LINES) -> None:
        self.events: list[dict[str, Any]] = []
        super().__init__(stream, name, lines)

    def _take(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        self.tail.append(line[:LINE_CHARS])
        try:
            event = json.loads(line)
        except ValueError:
            return
        if isinstance(event, dict):
            with self._cond:
                self.events.append(event)
                self._seen(event)
                self._cond.notify_all()

    def _seen(self, event: dict[str, Any]) -> None:
        """Called for each event as it is kept, under the lock: a subclass indexes it."""

    def snapshot(self) -> list[dict[str, Any]]:
        """Returns the events so far."""
        with self._cond:
            return list(self.events)

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], object], timeout: float) -> None:
        """Waits up to ``timeout`` s until ``predicate(events)`` holds or the stream closed."""
        with self._cond:
            self._cond.wait_for(lambda: predicate(self.events) or not self._thread.is_alive(), timeout=timeout)


class _Script(Protocol):
    def result(self, call_id: str, timeout: float) -> Any: ...

    def finish(self) -> None: ...


class _Endpoint(Protocol):
    @property
    def script(self) -> _Script: ...

    def stop(self) -> None: ...


class AgentProcessSession(Session):
    """The part of a session that waits for an agent process's tool results and ends the process."""

    #: The agent's name in what the session says ("Claude Code").
    title: str
    #: How long the agent may take to exit after the final text turn.
    exit_timeout: float
    proc: subprocess.Popen[str] | None
    api: _Endpoint
    call_timeout: float
    startup_allowance: float
    calls = 0  # calls made so far; the first gets the start-up allowance
    _closed = False
    _stuck = False  # a call timed out: close does not wait for a polite exit

    @abc.abstractmethod
    def said(self) -> str:
        """Returns what the agent said so far (for a TargetError's detail)."""

    def _running(self) -> subprocess.Popen[str]:
        """Returns the agent's process (there is one once the session started)."""
        assert self.proc is not None, "the agent was not started"
        return self.proc

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        """Returns the agent's stdout and stderr (it was started with both piped)."""
        proc = self._running()
        assert proc.stdout is not None and proc.stderr is not None, "the agent's output is not piped"
        return proc.stdout, proc.stderr

    def _await_result(self, call_id: str, tool: str) -> Any:
        """Waits for the result of the call ``call_id`` (of ``tool``), bounded: the call timeout, with
        the start-up allowance on the first call. Raises TargetError when the agent exits without
        sending it or sends nothing in time."""
        proc = self._running()
        bound = self.call_timeout + (self.startup_allowance if self.calls == 1 else 0.0)
        deadline = time.monotonic() + bound
        while True:
            result = self.api.script.result(call_id, timeout=0.2)
            if result is not None:
                return result
            if proc.poll() is not None:
                result = self.api.script.result(call_id, timeout=0.5)  # a delivery racing the exit
                if result is None:
                    raise TargetError(f"{self.title} exited without running {tool}", detail=self.said())
                return result
            if time.monotonic() > deadline:
                self._stuck = True
                raise TargetError(f"{self.title} sent no result for {tool} within {bound:.0f} s", detail=self.said())

    def close(self) -> None:
        """Sends the final text turn, waits (bounded) for the agent to exit, then ends what is left."""
        if self._closed:
            return
        self._closed = True
        self.api.script.finish()
        try:
            self._running().wait(timeout=1.0 if self._stuck else self.exit_timeout)
        except subprocess.TimeoutExpired:
            self._kill()
        self._cleanup()

    @abc.abstractmethod
    def _cleanup(self) -> None:
        """Ends the agent and its endpoint (`_end`) and removes the session's scratch folders."""

    def _kill(self) -> None:
        proc = self._running()
        processes.end(proc.pid, proc.wait)  # the keeper ends the agent and all it started
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def _end(self) -> None:
        """Ends the agent if it still runs, and stops its fake endpoint."""
        if getattr(self, "proc", None) is not None and self._running().poll() is None:
            self._kill()
        self.api.stop()
