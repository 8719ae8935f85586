"""The harness as an ACP client (the editor's side), on the ``agent-client-protocol`` package.

:class:`EditorClient` implements the package's ``Client`` protocol: it serves ``fs/read_text_file``
and ``fs/write_text_file`` from the workspace (`acp_fs.WorkspaceFiles`, strictly inside it),
answers ``session/request_permission`` as configured, and records everything. :class:`AgentProcess`
starts one agent process and binds its stdio to a ``ClientSideConnection``; JSON-RPC framing,
requests and replies are the package's.

What is recorded (the :class:`Recorder`, sliced per call by the target):

- ``events``: every ``session/update`` notification, as it came over the wire
  (``{"method": "session/update", "params": {"sessionId", "update"}}``), strings longer than
  `EVENT_TEXT_LIMIT` characters cut with a note; ``available_commands_update`` (`SESSION_LEVEL`)
  is kept apart, since it belongs to no call and arrives whenever the agent sends it;
- ``fs``: every ``fs/*`` request: ``method``, ``path``, ``line``/``limit`` (reads), ``content_bytes``
  (writes), and ``answer`` (``served`` with ``bytes``, or ``refused`` with the ``error`` sent); an
  ``escape: true`` marks a path outside the workspace (refused, never touched);
- ``permissions``: every ``session/request_permission``: the tool call's ``title``/``kind``/
  ``toolCallId``, the option kinds offered and the ``answer`` given;
- ``terminals``: every ``terminal/*`` request (when the client offers the ``terminal`` capability):
  ``method``, its parameters as sent (``command``, ``args``, ``env``, ``cwd``, ``outputByteLimit``;
  ``terminalId``) and the ``answer`` given (`TERMINAL_POLICIES`);
- ``violations``: what the agent got wrong on the wire: a stdout line that is not a JSON-RPC 2.0
  object, a line over `LINE_LIMIT` bytes, a ``session/update`` the ACP schema rejects. A violation
  breaks the session (an ``error`` verdict naming it).

Process lifetime: the agent runs in a process group of its own; closing the session closes its
stdin, waits `EXIT_GRACE` seconds, then kills the whole group, so nothing it started outlives it.
Its stderr goes to a bounded tail for the verdict's reason.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import Agent, Client, RequestError, connect_to_agent
from acp.schema import (
    AllowedOutcome,
    CreateElicitationResponse,
    CreateTerminalResponse,
    DeniedOutcome,
    ElicitationMode,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from harness.targets import launch
from harness.targets.acp.fs import PERMISSION_ANSWERS, TERMINAL_POLICIES, FsRefusal, WorkspaceFiles
from harness.targets.channel import StderrTail
from harness.util import processes

#: The longest line the agent may write on stdout (bytes); one JSON-RPC message is one line.
LINE_LIMIT = 64 * 1024 * 1024
#: Strings in recorded events longer than this (characters) are cut, with a note of the full length.
EVENT_TEXT_LIMIT = 64 * 1024
#: At most this many entries of each kind are recorded per session; more is a violation.
RECORD_LIMIT = 10_000
#: Seconds an agent gets to exit after its stdin closed, before its process group is killed.
EXIT_GRACE = 2.0

#: ``session/update`` kinds about the session rather than a call (recorded apart from the calls' events).
SESSION_LEVEL = frozenset({"available_commands_update"})

#: The code of the reply when the client refuses every write (``writes=refuse``).
REFUSED_WRITE = -32603

#: How the editor answers ``terminal/*`` (the ``terminal`` option, `acp_fs.TERMINAL_POLICIES`; the capability is
#: offered unless ``none``). The harness never runs a command an agent asks for (the agent is a
#: candidate, and candidates are hostile); its terminals run nothing:
#: ``refuse``: every ``terminal/create`` is answered with an error (`REFUSED_TERMINAL`);
#: ``fake``: a terminal has exited at once with code 0, its whole output `FAKE_OUTPUT`;
#: ``running``: a terminal runs until ``terminal/kill`` or ``terminal/release``: its output is empty
#: and without exit status, ``terminal/wait_for_exit`` answers only once it was killed (signal
#: ``SIGKILL``; at most `TERMINAL_WAIT_LIMIT` seconds, then an error).
REFUSED_TERMINAL = -32603
FAKE_OUTPUT = "(the editor ran nothing)\n"
#: At most this many terminals per session (a ``terminal/create`` past it is refused).
TERMINAL_LIMIT = 100
#: At most this many ``args`` and ``env`` entries of a ``terminal/create`` are recorded.
RECORDED_ITEMS = 100
#: The longest ``terminal/wait_for_exit`` of a ``running`` terminal (seconds).
TERMINAL_WAIT_LIMIT = 300.0


class _FakeTerminal:
    """A terminal of the editor's that runs nothing: exited (``fake``) or running until killed."""

    def __init__(self, *, running: bool) -> None:
        self.running = running
        self.killed = False
        self.ended = asyncio.Event()
        if not running:
            self.ended.set()

    def kill(self) -> None:
        """Ends a running terminal by "SIGKILL"; one that has exited is left as it was."""
        if not self.ended.is_set():
            self.killed = True
            self.ended.set()

    def status(self) -> TerminalExitStatus | None:
        """Returns the exit status, or None while it runs."""
        if not self.ended.is_set():
            return None
        return TerminalExitStatus(signal="SIGKILL") if self.killed else TerminalExitStatus(exit_code=0)

    def output(self) -> str:
        """Returns what it printed: `FAKE_OUTPUT` for one that exited by itself, else nothing."""
        return "" if self.running else FAKE_OUTPUT


# The package logs a traceback for every message it cannot handle; the verdict names it instead.
logging.getLogger("acp").addHandler(logging.NullHandler())


class AgentBroken(Exception):
    """The agent process broke the conversation; ``kind``: spawn, exited, timeout, protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Recorder:
    """Everything the agent sent or asked, in order of arrival; the target slices it per call."""

    events: list[dict[str, Any]] = field(default_factory=list)
    session_updates: list[dict[str, Any]] = field(default_factory=list)  # SESSION_LEVEL ones, never per call
    fs: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    terminals: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def mark(self) -> tuple[int, int, int, int]:
        """Returns where each list ends now (the start of a call's window)."""
        return len(self.events), len(self.fs), len(self.permissions), len(self.terminals)

    def since(self, mark: tuple[int, ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """Returns the events, fs requests and permission requests recorded after ``mark``."""
        return self.events[mark[0]:], self.fs[mark[1]:], self.permissions[mark[2]:]

    def terminals_since(self, mark: tuple[int, ...]) -> list[dict[str, Any]]:
        """Returns the ``terminal/*`` requests recorded after ``mark``."""
        return self.terminals[mark[3]:] if len(mark) > 3 else []

    def add(self, kind: str, entry: Any) -> None:
        """Appends ``entry`` to the list ``kind``, up to RECORD_LIMIT entries."""
        bucket = getattr(self, kind)
        if len(bucket) < RECORD_LIMIT:
            bucket.append(entry)
        elif kind != "violations" and len(self.violations) < RECORD_LIMIT:
            self.violations.append(f"more than {RECORD_LIMIT} {kind} records in one session")


@dataclass
class ClientPolicy:
    """How the editor behaves towards one session: its permission answer, and whether it refuses writes."""

    permission: str = "allow"
    refuse_writes: bool = False
    create_parents: bool = False
    terminal: str = "none"
    #: Unsaved editor buffers: relative path -> text (`acp_fs.WorkspaceFiles`).
    buffers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.permission not in PERMISSION_ANSWERS:
            raise ValueError(f"permission answer {self.permission!r}: expected one of {', '.join(PERMISSION_ANSWERS)}")
        if self.terminal not in TERMINAL_POLICIES:
            raise ValueError(f"terminal {self.terminal!r}: expected one of {', '.join(TERMINAL_POLICIES)}")


@dataclass
class _Bound:
    files: WorkspaceFiles
    recorder: Recorder
    policy: ClientPolicy
    terminals: dict[str, _FakeTerminal] = field(default_factory=dict)  # the terminals not released yet
    created: int = 0


class EditorClient(Client):
    """The editor: serves each session's workspace, answers permission requests, records all.

    One client serves one connection; each ACP session is bound to its workspace, recorder and
    policy once ``session/new`` returned (`bind`). A request naming a session that is not bound is
    refused and recorded as a violation of the connection's own recorder.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, _Bound] = {}
        self.recorder = Recorder()  # the connection's: violations, and what belongs to no session

    def bind(self, session_id: str, workspace: Path, recorder: Recorder, policy: ClientPolicy) -> None:
        """Serves ``workspace`` to ``session_id`` from now on, recording into ``recorder``."""
        files = WorkspaceFiles(workspace, create_parents=policy.create_parents, buffers=policy.buffers)
        self.sessions[session_id] = _Bound(files, recorder, policy)

    def unbind(self, session_id: str) -> None:
        """Forgets a session (its scenario is over) and lets go of its workspace."""
        bound = self.sessions.pop(session_id, None)
        if bound is not None:
            bound.files.close()
            for terminal in bound.terminals.values():  # no wait_for_exit outlives its session
                terminal.kill()

    def recorder_of(self, session_id: Any) -> Recorder | None:
        """Returns the recorder of a bound session, or None."""
        bound = self.sessions.get(session_id) if isinstance(session_id, str) else None
        return bound.recorder if bound else None

    def _session(self, session_id: str, method: str) -> _Bound:
        bound = self.sessions.get(session_id)
        if bound is None:
            self.recorder.add("violations", f"{method} for a session the client never opened: {str(session_id)[:100]!r}")
            raise RequestError.invalid_params({"sessionId": "unknown session"})
        return bound

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        """Serves ``fs/read_text_file`` from the session's workspace (see acp_fs for the rules)."""
        bound = self._session(session_id, "fs/read_text_file")
        entry: dict[str, Any] = {"method": "fs/read_text_file", "path": path}
        if line is not None:
            entry["line"] = line
        if limit is not None:
            entry["limit"] = limit
        bound.recorder.add("fs", entry)
        try:
            content = bound.files.read(path, line, limit)
        except FsRefusal as refusal:
            raise _refused(entry, refusal) from None
        entry.update(answer="served", bytes=len(content.encode("utf-8", "surrogatepass")))
        return ReadTextFileResponse(content=content)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        """Serves ``fs/write_text_file`` into the session's workspace (or refuses it, by policy)."""
        bound = self._session(session_id, "fs/write_text_file")
        entry: dict[str, Any] = {"method": "fs/write_text_file", "path": path,
                                 "content_bytes": len(content.encode("utf-8", "surrogatepass"))}
        bound.recorder.add("fs", entry)
        try:
            if bound.policy.refuse_writes:
                bound.files.relative(path)  # an escape attempt is still named as one
                raise FsRefusal(REFUSED_WRITE, f"the client refuses to write: {path}")
            written = bound.files.write(path, content)
        except FsRefusal as refusal:
            raise _refused(entry, refusal) from None
        entry.update(answer="served", bytes=written)
        return WriteTextFileResponse()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        """Answers with the first offered option of the policy's kinds (``cancel``: no option)."""
        bound = self._session(session_id, "session/request_permission")
        offered = [(option.option_id, option.kind) for option in options]
        entry: dict[str, Any] = {"toolCallId": getattr(tool_call, "tool_call_id", None),
                                 "title": getattr(tool_call, "title", None), "kind": getattr(tool_call, "kind", None),
                                 "options": [kind for _, kind in offered]}
        bound.recorder.add("permissions", entry)
        for wanted in PERMISSION_ANSWERS[bound.policy.permission]:
            for option_id, kind in offered:
                if kind == wanted:
                    entry["answer"] = kind
                    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))
        entry["answer"] = "cancelled"
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Updates are recorded from the wire (`AgentProcess._observe`), exactly as sent."""

    # -- terminals (ACP's Terminals section): recorded, answered by policy, never run -------------

    def _terminal_entry(self, bound: _Bound, method: str, params: dict[str, Any]) -> dict[str, Any]:
        entry = _bounded({"method": method, **{key: value for key, value in params.items() if value is not None}})
        bound.recorder.add("terminals", entry)
        return entry

    def _terminal(self, session_id: str, method: str, terminal_id: str) -> tuple[_Bound, dict[str, Any], _FakeTerminal]:
        bound = self._session(session_id, method)
        entry = self._terminal_entry(bound, method, {"terminalId": terminal_id})
        terminal = bound.terminals.get(terminal_id)
        if terminal is None:
            entry.update(answer="refused", error={"code": -32602, "message": "unknown terminal"})
            raise RequestError.invalid_params({"terminalId": "unknown terminal"})
        return bound, entry, terminal

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
                              cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        """Records ``terminal/create``; refuses it, or answers a terminal that runs nothing (`TERMINAL_POLICIES`)."""
        bound = self._session(session_id, "terminal/create")
        entry = self._terminal_entry(bound, "terminal/create", {
            "command": command, "cwd": cwd, "outputByteLimit": output_byte_limit,
            "args": list(args)[:RECORDED_ITEMS] if args else None,
            "env": [{"name": getattr(v, "name", None), "value": getattr(v, "value", None)} for v in env[:RECORDED_ITEMS]]
            if env else None})
        if bound.policy.terminal not in ("fake", "running") or bound.created >= TERMINAL_LIMIT:
            entry.update(answer="refused", error={"code": REFUSED_TERMINAL, "message": "the client runs no commands"})
            raise RequestError(REFUSED_TERMINAL, "the client runs no commands", {"command": str(command)[:200]})
        bound.created += 1
        terminal_id = f"term-{bound.created}"
        bound.terminals[terminal_id] = _FakeTerminal(running=bound.policy.terminal == "running")
        entry.update(answer="created", terminalId=terminal_id)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """Answers the terminal's output so far, and its exit status once it has one."""
        _bound, entry, terminal = self._terminal(session_id, "terminal/output", terminal_id)
        status = terminal.status()
        entry.update(answer="output", output=terminal.output())
        if status is not None:
            entry["exitStatus"] = status.model_dump(by_alias=True, exclude_none=True)
        return TerminalOutputResponse(output=terminal.output(), truncated=False, exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> WaitForTerminalExitResponse:
        """Answers when the terminal has exited: at once (``fake``), or once it was killed (``running``; bounded)."""
        bound, entry, terminal = self._terminal(session_id, "terminal/wait_for_exit", terminal_id)
        if not terminal.ended.is_set():
            # The answer comes later, maybe during another call: the request says it waits, and the
            # answer is a record of its own, in the window of the call it came in.
            entry["answer"] = "waiting"
            entry = _bounded({"method": "terminal/wait_for_exit", "terminalId": terminal_id, "answered_after_waiting": True})
            try:
                await asyncio.wait_for(terminal.ended.wait(), TERMINAL_WAIT_LIMIT)
            except TimeoutError:
                entry.update(answer="refused", error={"code": REFUSED_TERMINAL, "message": "still running"})
                bound.recorder.add("terminals", entry)
                raise RequestError(REFUSED_TERMINAL, f"the terminal did not exit within {TERMINAL_WAIT_LIMIT:g} s",
                                   None) from None
            bound.recorder.add("terminals", entry)
        status = terminal.status() or TerminalExitStatus()
        entry.update(answer="exited", **status.model_dump(by_alias=True, exclude_none=True))
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """Kills a ``running`` terminal (it exits by SIGKILL); a terminal that has exited stays as it was."""
        _bound, entry, terminal = self._terminal(session_id, "terminal/kill", terminal_id)
        terminal.kill()
        entry["answer"] = "killed"
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """Kills the terminal if it still runs and forgets it: its id is unknown from then on."""
        bound, entry, terminal = self._terminal(session_id, "terminal/release", terminal_id)
        terminal.kill()
        bound.terminals.pop(terminal_id, None)
        entry["answer"] = "released"
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods: the agent gets "method not found"."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    # Elicitation is an unstable part of the protocol, which the connection does not enable: the SDK
    # answers its requests "method not found" without calling these.
    async def create_elicitation(self, message: str, mode: ElicitationMode, **kwargs: Any) -> CreateElicitationResponse:
        """No elicitation: the agent gets "method not found"."""
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """No elicitation: its notifications are ignored."""

    def on_connect(self, conn: Agent) -> None:
        """Nothing is done when the connection is made (the harness drives it through AgentProcess)."""


def _refused(entry: dict[str, Any], refusal: FsRefusal) -> RequestError:
    entry.update(answer="refused", error={"code": refusal.code, "message": refusal.message})
    if refusal.escape:
        entry["escape"] = True
    return RequestError(refusal.code, refusal.message, {"path": entry["path"]})


class AgentProcess:
    """One agent process, its stdio bound to a ClientSideConnection; all methods run on one event loop."""

    def __init__(self, argv: Sequence[str], client: EditorClient, *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, box: Any = None) -> None:
        self.argv = list(argv)
        self.box = box  # the sandbox the agent runs in (harness/targets/launch.py), closed when it is ended
        self.client = client
        self.recorder = client.recorder  # the connection's own (violations)
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.tag: str | None = None  # the keeper's tag, once started
        self.conn: Any = None
        self.stderr: StderrTail | None = None
        self.broken: asyncio.Event | None = None
        self.ended = False
        self._pump: asyncio.Task[None] | None = None
        self._exit: asyncio.Task[int] | None = None

    async def start(self) -> None:
        """Spawns the agent under a keeper and connects to it; raises AgentBroken(spawn)."""
        search = self.env.get("PATH", os.defpath)
        if not self.argv or ("/" not in self.argv[0] or os.path.isabs(self.argv[0]) or not self.cwd) and \
                shutil.which(self.argv[0], path=search) is None:
            raise AgentBroken("spawn", f"cannot start {self.argv[0] if self.argv else ''!r}: No such file or directory")
        self.broken = asyncio.Event()
        # In its sandbox, under a keeper (harness/targets/launch.py): whatever the agent starts, however
        # detached, ends with it.
        try:
            command, self.tag = launch.command(self.argv, self.box)
        except launch.SandboxError as exc:
            raise AgentBroken("spawn", f"cannot sandbox {self.argv[0]}: {exc}") from None
        read_fd, write_fd = os.pipe()
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=write_fd,
                env=self.env, cwd=str(self.cwd) if self.cwd else None, start_new_session=True, limit=LINE_LIMIT)
        except OSError as exc:
            os.close(read_fd)
            raise AgentBroken("spawn", f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        finally:
            os.close(write_fd)
        self.stderr = StderrTail(read_fd)
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None, "both are pipes"
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        self._pump = asyncio.create_task(self._tap(stdout, reader))
        self._exit = asyncio.create_task(self.proc.wait())
        self.conn = connect_to_agent(self.client, stdin, reader, observers=[self._observe])

    async def request(self, coro: Any, timeout: float, what: str) -> Any:
        """Awaits ``coro`` (a request to the agent) unless the agent breaks, exits or exceeds ``timeout``."""
        assert self.broken is not None and self._exit is not None, "the agent was not started"
        exit_ = self._exit
        task = asyncio.ensure_future(coro)
        broken = asyncio.ensure_future(self.broken.wait())
        try:
            done, _ = await asyncio.wait({task, broken, exit_}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                try:
                    return task.result()
                except ConnectionError:
                    pass  # the connection closed under it: say why below
            self.check()
            if exit_ in done or task in done:
                # stdout closed first: give the exit status (and a last violation) a moment to arrive
                try:
                    await asyncio.wait_for(asyncio.shield(exit_), 1.0)
                except TimeoutError:
                    pass
                self.check()
                raise AgentBroken("exited", f"the agent {self.exit_text()} during {what}")
            raise AgentBroken("timeout", f"the agent did not answer {what} within {timeout:g} s")
        finally:
            broken.cancel()
            if not task.done():
                task.cancel()

    def check(self) -> None:
        """Raises AgentBroken(protocol) when the agent broke the protocol."""
        if self.recorder.violations:
            raise AgentBroken("protocol", "the agent broke the protocol: " + "; ".join(self.recorder.violations[:3]))

    def exit_text(self) -> str:
        """Returns 'exited with code 3' / 'was killed by SIGKILL' / 'is running'."""
        code = self.proc.returncode if self.proc else None
        if code is None:
            return "closed its stdout" if self.ended else "is running"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def tail(self) -> str:
        """Returns the tail of the agent's stderr, for a verdict's reason."""
        if self.stderr is None:
            return ""
        text = self.stderr.text()
        return f"stderr of the agent (last lines):\n{text}" if text else ""

    async def close(self) -> None:
        """Closes stdin, waits EXIT_GRACE s for an exit, then kills the whole process group."""
        if self.proc is None:
            return
        if self.conn is not None:
            try:
                await asyncio.wait_for(self.conn.close(), EXIT_GRACE)
            except (TimeoutError, Exception):  # noqa: BLE001 - closing must not fail the run
                pass
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except Exception:  # noqa: BLE001
                pass
        exit_ = self._exit
        assert exit_ is not None, "made with the process"
        try:
            await asyncio.wait_for(asyncio.shield(exit_), EXIT_GRACE)
        except TimeoutError:
            pass
        self.kill_group()
        try:
            await asyncio.wait_for(asyncio.shield(exit_), EXIT_GRACE)
        except TimeoutError:
            pass
        if self._pump is not None:
            self._pump.cancel()
        if self.stderr is not None:
            self.stderr.wait(1.0)

    def kill_group(self) -> None:
        """Ends the agent and everything it started: its keeper kills the whole family, then its group is killed."""
        if self.proc is None:
            return
        if self.tag is not None:
            processes.end_tagged(self.tag)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.box is not None:
            self.box.close()

    # -- the wire --------------------------------------------------------------------------------

    async def _tap(self, stdout: asyncio.StreamReader, reader: asyncio.StreamReader) -> None:
        """Passes each well-formed JSON-RPC line on to the package; records anything else as a violation."""
        try:
            while True:
                try:
                    line = await stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    line = exc.partial
                    if not line.strip():
                        break
                except asyncio.LimitOverrunError:
                    self._violation(f"a stdout line longer than {LINE_LIMIT} bytes")
                    break
                if not line.strip():
                    continue
                problem = _malformed(line)
                if problem:
                    self._violation(problem)
                    continue
                reader.feed_data(line if line.endswith(b"\n") else line + b"\n")
        finally:
            self.ended = True
            reader.feed_eof()

    def _observe(self, event: Any) -> None:
        """Records every incoming session/update as sent; a malformed one is a violation."""
        if getattr(event, "direction", None) is None or event.direction.value != "incoming":
            return
        message = event.message
        if message.get("method") != "session/update":
            return
        params = message.get("params")
        try:
            SessionNotification.model_validate(params)
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(part) for part in errors[0]["loc"]) if errors else ""
            self._violation(f"a session/update the ACP schema rejects ({where}: {errors[0]['msg'] if errors else exc})")
        session = self.client.recorder_of(params.get("sessionId") if isinstance(params, dict) else None)
        if session is None:  # updates before session/new returned belong to no call
            return
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        # An announcement about the session, sent whenever the agent gets round to it: in a call's
        # window it would land in one run's first call and not in the next's.
        bucket = "session_updates" if kind in SESSION_LEVEL else "events"
        session.add(bucket, {"method": "session/update", "params": _bounded(params)})

    def _violation(self, text: str) -> None:
        self.recorder.add("violations", text)
        if self.broken is not None:
            self.broken.set()


def _malformed(line: bytes) -> str | None:
    """Returns what is wrong with one stdout line, or None for a JSON-RPC 2.0 object."""
    shown = line.strip()[:200].decode("utf-8", "replace")
    try:
        message = json.loads(line)
    except ValueError:
        return f"a stdout line that is not JSON: {shown!r}"
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return f"a stdout line that is not a JSON-RPC 2.0 object: {shown!r}"
    if "method" not in message and "id" not in message:
        return f"a JSON-RPC message with neither method nor id: {shown!r}"
    return None


def _bounded(value: Any, depth: int = 0) -> Any:
    """Returns ``value`` with strings over EVENT_TEXT_LIMIT characters cut and nesting bounded."""
    if depth > 64:
        return "[nested too deep: cut by the harness]"
    if isinstance(value, str):
        if len(value) <= EVENT_TEXT_LIMIT:
            return value
        return value[:EVENT_TEXT_LIMIT] + f"[... cut by the harness: {len(value)} characters in all]"
    if isinstance(value, dict):
        return {key: _bounded(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_bounded(item, depth + 1) for item in value]
    return value
