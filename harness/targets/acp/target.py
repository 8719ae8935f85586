"""The ``acp:`` target: an agent that speaks the Agent Client Protocol, the harness as its editor.

Spec: ``acp:[option=value ...] <command line>`` (options first, as with ``env``; the first word that
is not a known ``option=value`` starts the command line; ``python`` means this interpreter), or
``acp:[option=value ...] claude-code`` for the pinned Claude Code ACP agent driven by a fake model
(`claude_code.py`). Options:

- ``fs=read,write`` (default), ``fs=read``, ``fs=write``, ``fs=none``: the client capabilities
  ``fs.readTextFile`` / ``fs.writeTextFile`` sent in ``initialize`` (turn them off to see what the
  agent does without them);
- ``permission=allow`` (default; picks ``allow_once``), ``allow_always``, ``reject`` (``reject_once``),
  ``reject_always``, ``cancel``: how ``session/request_permission`` is answered;
- ``writes=serve`` (default) or ``refuse``: answer every ``fs/write_text_file`` with an error;
- ``parents=fail`` (default) or ``create``: whether a write creates missing parent directories;
- ``terminal=none`` (default), ``refuse``, ``fake``, ``running``: the client's ``terminal`` capability
  and how it answers ``terminal/*`` (``client.py``: ``refuse`` answers every ``terminal/create`` with
  an error; ``fake`` creates terminals that ran nothing, exited 0, output ``(the editor ran
  nothing)``; ``running`` terminals run nothing until killed); the harness never runs a command an
  agent asks for;
- ``mode=<id>``: ``session/set_mode`` right after ``session/new``;
- ``events=wire`` (default) or ``seed003``: the shape of the recorded events (`events.py`:
  seed 003 writes ACP's tool-call updates as ``{"type": "toolCall", "id"}`` /
  ``{"type": "toolCallUpdate", "id", "fields"}``);
- ``timeout=<seconds>``: the bound on one call (default: the run's ``--timeout``);
- ``profile=<name>[,<name>]``: the profiles the agent serves (others are skipped);
- for ``claude-code`` only: ``cli=pinned|bundled|<path>``, ``tokens=<policy>`` (see there).

A scenario may set ``permission``, ``writes``, ``parents``, ``fs`` and ``terminal`` for itself in a
top-level ``acp: {...}`` entry, and also ``buffers`` (``{<relative path>: <text>}``: files the
editor has open with unsaved text, served to ``fs/read_text_file`` instead of the disk's; `fs.py`)
and, for ``claude-code``, ``names`` (``offered``, the default: a step's Read, Write, Edit, Bash is
sent under the name the agent offers, ``mcp__acp__*`` while the client serves it; ``builtin``: under
Claude Code's own name, as a model that ignores the offer would; either way each call records the
tools the request carrying its result offered, ``extra.tools_offered``). Such a scenario requires
``acp``, so that targets which are no ACP client skip it, and the runner hands the entry to
``open`` as ``options["acp"]``.

How calls are driven. An ACP client cannot call an agent's tools; it sends prompts. For a generic
agent every call is one ``session/prompt`` whose one text block is the JSON
``{"tool": <name>, "args": {...}}`` (the *scripted prompt*, the convention
``reference_impl.acp_agent`` follows); the call's result is the agent's last ``tool_call_update``
of the turn: ``rawOutput`` when ``completed``, ``rawOutput.error`` (or the update's text) when
``failed``. For ``claude-code`` the fake Messages API plays each call as the model's ``tool_use``
and the result is the ``tool_result`` the agent sent back to the model.

Each call's observation: ``output``/``error`` (the tool result), ``events`` (the ``session/update``
notifications of the call, as sent), ``extra.fs`` (the ``fs/*`` requests: method, path,
line/limit or content bytes, the answer), ``extra.permissions`` (requests and answers). An agent
that hangs, exits, or breaks the protocol is a TargetError (``error`` verdict) and its process
group is killed; ``fs/*`` requests outside the workspace are refused and marked ``escape: true``.

The agent process runs in the run's working folder (harness/run/working_folder.py: laid out as each
scenario's workspace and watched), so a relative path the agent resolves against its own folder
is seen as a write outside the workspace; the ACP session's ``cwd`` is the workspace.

One agent process serves the whole run (a new ACP session per scenario, in its workspace), and is
restarted after it broke; a scenario whose ``fs`` differs from the target's gets its own process,
and ``claude-code`` starts one per scenario (each has its own fake model).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from harness.targets import bindings, launch
from harness.targets.base import (
    CallResult,
    ProcessTarget,
    Session,
    TargetError,
    TargetInfo,
    Unsupported,
    bounded_name,
    name_slug,
)
from harness.targets.channel import split_command_line
from harness.targets.options import TargetOptions

PREFIX = "acp:"
DEFAULT_TIMEOUT = 10.0
#: The start-up budget: spawning, initialize, session/new (a cold Python or Node start is slow).
START_TIMEOUT = 60.0
#: The condition (scenario ``requires``) an ACP client realises: scenario-level client options.
REQUIRES = "acp"

_FS = {"read,write": (True, True), "write,read": (True, True), "read": (True, False), "write": (False, True),
       "none": (False, False)}
_OPTIONS = ("fs", "permission", "writes", "parents", "terminal", "mode", "events", "timeout", "profile", "cli", "tokens")
_SCENARIO_OPTIONS = ("fs", "permission", "writes", "parents", "terminal", "names", "buffers")
#: Which names a claude-code step's tool is sent under (scenario option ``names``).
NAMES = ("offered", "builtin")
#: The most buffers a scenario may give, and the longest text of one (characters).
BUFFER_LIMIT = 100
BUFFER_TEXT_LIMIT = 1024 * 1024


def parse_spec(spec: str) -> tuple[dict[str, str], list[str]]:
    """Returns the options and the argv of ``acp:[option=value ...] <command line>``; ValueError names the problem."""
    argv = split_command_line(spec, PREFIX, "python -m reference_impl.acp_agent")
    options: dict[str, str] = {}
    while argv and "=" in argv[0] and argv[0].split("=", 1)[0] in _OPTIONS:
        key, _, value = argv.pop(0).partition("=")
        options[key] = value
    if not argv:
        raise ValueError(f"{spec!r}: the options need a command line after them, e.g. acp:fs=none python -m reference_impl.acp_agent")
    check_options(options, where=f"target {spec!r}")
    if argv[0] in ("python", "python3"):  # as split_command_line does for a first word
        argv[0] = sys.executable
    return options, argv


def check_options(options: dict[str, Any], where: str) -> None:
    """Raises ValueError when an option's value is not one this target knows."""
    from harness.targets.acp.fs import PERMISSION_ANSWERS
    if "fs" in options and options["fs"] not in _FS:
        raise ValueError(f"{where}: fs={options['fs']!r}: expected read,write | read | write | none")
    if "permission" in options and options["permission"] not in PERMISSION_ANSWERS:
        raise ValueError(f"{where}: permission={options['permission']!r}: expected one of {', '.join(PERMISSION_ANSWERS)}")
    if "writes" in options and options["writes"] not in ("serve", "refuse"):
        raise ValueError(f"{where}: writes={options['writes']!r}: expected serve or refuse")
    if "parents" in options and options["parents"] not in ("fail", "create"):
        raise ValueError(f"{where}: parents={options['parents']!r}: expected fail or create")
    if "terminal" in options:
        from harness.targets.acp.fs import TERMINAL_POLICIES
        if options["terminal"] not in TERMINAL_POLICIES:
            raise ValueError(f"{where}: terminal={options['terminal']!r}: expected one of {', '.join(TERMINAL_POLICIES)}")
    if "names" in options and options["names"] not in NAMES:
        raise ValueError(f"{where}: names={options['names']!r}: expected one of {', '.join(NAMES)}")
    if "events" in options:
        from harness.targets.acp.events import PROJECTIONS
        if options["events"] not in PROJECTIONS:
            raise ValueError(f"{where}: events={options['events']!r}: expected one of {', '.join(PROJECTIONS)}")
    if "timeout" in options:
        try:
            if float(options["timeout"]) <= 0:
                raise ValueError
        except ValueError:
            raise ValueError(f"{where}: timeout={options['timeout']!r}: expected a positive number of seconds") from None


def scenario_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits a scenario's options into its ``acp`` entry (checked) and the rest.

    Every value of the entry is a string, except ``buffers``: a mapping of relative paths to texts.
    """
    rest = dict(options or {})
    own = rest.pop("acp", None) or {}
    if not isinstance(own, dict) or set(own) - set(_SCENARIO_OPTIONS):
        raise Unsupported(f"options.acp: expected a mapping of {', '.join(_SCENARIO_OPTIONS)}")
    buffers = own.get("buffers")
    out: dict[str, Any] = {key: str(value) for key, value in own.items() if key != "buffers"}
    try:
        check_options(out, where="options.acp")
        if buffers is not None:
            out["buffers"] = check_buffers(buffers, where="options.acp.buffers")
    except ValueError as exc:
        raise Unsupported(str(exc)) from None
    return out, rest


def check_buffers(buffers: Any, where: str) -> dict[str, str]:
    """Returns the unsaved buffers of a scenario (relative path -> text); ValueError names what is wrong."""
    import posixpath
    if not isinstance(buffers, dict) or len(buffers) > BUFFER_LIMIT:
        raise ValueError(f"{where}: expected a mapping of at most {BUFFER_LIMIT} relative paths to texts")
    out: dict[str, str] = {}
    for name, text in buffers.items():
        if not isinstance(name, str) or not name or name.startswith("/") or "\x00" in name \
                or posixpath.normpath(name).split("/")[0] in ("..", ".") or name != posixpath.normpath(name):
            raise ValueError(f"{where}: {str(name)[:200]!r}: expected a normal path relative to the workspace")
        if not isinstance(text, str) or len(text) > BUFFER_TEXT_LIMIT:
            raise ValueError(f"{where}.{name}: expected a text of at most {BUFFER_TEXT_LIMIT} characters")
        out[name] = text
    return out


def client_policy(merged: dict[str, Any]) -> Any:
    """Returns the editor's policy for one session from the target's and the scenario's options."""
    from harness.targets.acp.client import ClientPolicy
    return ClientPolicy(permission=merged.get("permission", "allow"), refuse_writes=merged.get("writes") == "refuse",
                        create_parents=merged.get("parents") == "create", terminal=merged.get("terminal", "none"),
                        buffers=dict(merged.get("buffers") or {}))


class AcpSession(Session):
    """One scenario: one ACP session on an agent process."""

    def __init__(self, target: AcpTarget, connection: Any, session_id: str, recorder: Any, *,
                 own_connection: bool) -> None:
        self._target = target
        self._connection = connection
        self._session_id = session_id
        self._recorder = recorder
        self._own = own_connection
        self._closed = False
        self.workspace: str | None = None  # set by open: what a binding builds is checked against it

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Sends the scripted prompt of one call; returns the result with its events and fs requests."""
        from harness.targets.acp.client import AgentBroken
        if self._closed:
            raise TargetError("the ACP session is closed")
        name = self._target.tool_map.tool(tool)
        if self.workspace is not None:
            try:  # what a binding builds is held to the scenario's path rule before it is sent
                self._target.tool_map.check_paths(tool, args, self.workspace)
            except bindings.ArgumentMismatch as exc:
                raise TargetError(str(exc), kind="binding") from None
        mark = self._recorder.mark()
        text = json.dumps({"tool": name, "args": self._target.tool_map.arguments(tool, args)}, ensure_ascii=False)
        try:
            self._connection.prompt(self._session_id, text, self._target.timeout)
        except AgentBroken as exc:
            self._target.broke(self._connection)
            raise TargetError(f"{exc} ({tool})", detail=self._connection.tail(), kind=exc.kind) from None
        events, fs, permissions = self._recorder.since(mark)
        return observation(tool_result(events, tool), self._target.shaped(events), fs, permissions,
                           self._recorder.terminals_since(mark))

    def close(self) -> None:
        """Forgets the session; a connection of its own is closed with it."""
        if self._closed:
            return
        self._closed = True
        self._connection.client.unbind(self._session_id)
        if self._own:
            self._connection.close()


def observation(result: CallResult, events: list[Any], fs: list[Any], permissions: list[Any],
                terminals: list[Any] | None = None) -> CallResult:
    """Returns ``result`` with the call's events, fs, permission and terminal requests attached."""
    result.events = list(events)
    result.extra = {**result.extra, "fs": list(fs)}
    if permissions:
        result.extra["permissions"] = list(permissions)
    if terminals:
        result.extra["terminals"] = list(terminals)
    escapes = [entry["path"] for entry in fs if entry.get("escape")]
    if escapes:
        result.extra["escape_attempts"] = escapes
    return result


def tool_result(events: list[dict[str, Any]], tool: str) -> CallResult:
    """Returns the result a generic agent reported: its last tool call's final ``tool_call_update``."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        update = (event.get("params") or {}).get("update") or {}
        if update.get("sessionUpdate") in ("tool_call", "tool_call_update") and isinstance(update.get("toolCallId"), str):
            calls.setdefault(update["toolCallId"], []).append(update)
    if not calls:
        said = _agent_text(events)
        raise TargetError(f"the agent ran no tool call for {tool}" + (f"; it said: {said}" if said else ""))
    last_id = list(calls)[-1]
    finals = [u for u in calls[last_id] if u.get("status") in ("completed", "failed")]
    if not finals:
        raise TargetError(f"the agent ended the turn without completing tool call {last_id} ({tool})")
    final = finals[-1]
    raw = final.get("rawOutput")
    if final["status"] == "completed":
        return CallResult(output=raw if "rawOutput" in final else _content_text(final))
    if isinstance(raw, dict) and isinstance(raw.get("error"), dict) and "message" in raw["error"]:
        return CallResult(error={"code": raw["error"].get("code"), "message": raw["error"]["message"]})
    message = _content_text(final) or (json.dumps(raw, ensure_ascii=False) if raw is not None else "")
    return CallResult(error={"code": None, "message": message})


def _content_text(update: dict[str, Any]) -> str:
    texts = []
    for item in update.get("content") or []:
        inner = item.get("content") if isinstance(item, dict) else None
        if isinstance(inner, dict) and inner.get("type") == "text":
            texts.append(str(inner.get("text", "")))
    return "".join(texts)


def _agent_text(events: list[dict[str, Any]]) -> str:
    texts = []
    for event in events:
        update = (event.get("params") or {}).get("update") or {}
        content = update.get("content")
        if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
            texts.append(str(content.get("text", "")))
    return "".join(texts)[:500]


class AcpTarget(ProcessTarget):
    """An ACP agent over stdio; the harness is its editor (client)."""

    realises = frozenset({REQUIRES})
    lone_surrogates_refused = ("the ACP SDK writes its prompts through pydantic, whose JSON encoder refuses a "
                               "lone surrogate")

    honours = frozenset({"sandbox"})

    @classmethod
    def from_options(cls, spec: str, options: TargetOptions) -> AcpTarget:
        """Returns the agent built with the run's timeout, tool names and sandbox."""
        return cls(spec, timeout=options.timeout, binding=options.binding, tool_map=options.tool_map,
                   tool_map_file=options.tool_map_file, sandbox=options.sandbox)

    def __init__(self, spec: str, *, timeout: float | None = None, binding: str | Path | None = None,
                 tool_map: Any = (), tool_map_file: str | Path | None = None, env: dict[str, str] | None = None,
                 sandbox: bool = False) -> None:
        super().__init__(spec)
        # Every agent process in the sandbox (harness/targets/launch.py): the shared one once per run,
        # on the run's one workspace folder.
        self.sandbox = bool(sandbox)
        self._named_env = dict(env or {})  # what a sandboxed agent gets besides the allowlist
        self.acp_options, self.argv = parse_spec(spec)
        self.timeout = float(self.acp_options.get("timeout") or timeout or DEFAULT_TIMEOUT)
        # The profile's tools as the agent names them (--binding / --tool-map; harness/targets/bindings/).
        self.tool_map = bindings.from_options(binding, [tool_map] if isinstance(tool_map, str) else tool_map or (),
                                              tool_map_file)
        self.env = dict(os.environ if env is None else env)
        self.profiles = tuple(p for p in self.acp_options.get("profile", "").split(",") if p)
        self.info: TargetInfo | None = None
        self._loop: Any = None
        self._loop_lock = threading.Lock()  # scenarios may open sessions from several threads
        self._shared: Any = None
        self._failure: TargetError | None = None
        # The agent process's working folder: the run's (harness/run/working_folder.py, see use_cwd). The
        # session's ``cwd`` (``session/new``) is still the workspace: what the agent resolves against its own
        # process's folder (a relative path it opens itself) lands in the watched working folder, laid out as
        # the workspace, and is reported as what it is.
        self.cwd: str | None = None

    def start(self) -> TargetInfo:
        """Starts the agent once (initialize) to learn its name; raises TargetError when it cannot."""
        if self._failure is not None:
            raise self._failure
        if self.info is None:
            try:
                connection = self._shared_connection()
            except TargetError as exc:
                self._failure = exc
                raise
            agent = connection.agent_info
            self.info = TargetInfo(name=bounded_name(agent.get("name") or Path(self.argv[0]).name),
                                   version=bounded_name(agent.get("version", "")), profiles=self.profiles)
        return self.info

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens an ACP session in ``workspace`` (on its own process when the scenario's ``fs`` differs)."""
        from harness.targets.acp.client import AgentBroken, Recorder
        own, _rest = scenario_options(options)
        merged = {**self.acp_options, **own}
        capabilities = ("fs", "read,write"), ("terminal", "none")
        own_connection = any(merged.get(key, default) != self.acp_options.get(key, default) for key, default in capabilities)
        connection = self._connect(merged, workspace) if own_connection else self._shared_connection(workspace)
        recorder = Recorder()
        policy = client_policy(merged)
        try:
            session_id = connection.new_session(Path(workspace).absolute(), recorder, policy,
                                                merged.get("mode"), max(START_TIMEOUT, self.timeout))
        except AgentBroken as exc:
            self.broke(connection)
            raise TargetError(f"{exc} (session/new)", detail=connection.tail(), kind=exc.kind) from None
        session = AcpSession(self, connection, session_id, recorder, own_connection=own_connection)
        session.workspace = str(Path(workspace).absolute())
        return session

    def skip_reason(self, scenario: Any) -> str | None:
        """Skips profiles the agent was not said to serve (``profile=``)."""
        profile = getattr(scenario, "profile", None)
        if self.profiles and profile not in self.profiles:
            return f"the ACP agent serves only {', '.join(self.profiles)} (not {profile})"
        return None

    def shaped(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Returns the call's events in the shape ``events=`` names (the wire's, by default)."""
        from harness.targets.acp.events import PROJECTIONS
        project = PROJECTIONS[self.acp_options.get("events", "wire")]
        return [project(event) for event in events]

    def broke(self, connection: Any) -> None:
        """Retires a connection that broke (its process group killed); the next scenario starts afresh."""
        connection.close(force=True)
        if connection is self._shared:
            self._shared = None

    def stop(self) -> None:
        """Stops the agent and the client's event loop."""
        if self._shared is not None:
            self._shared.close()
            self._shared = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    # -- connections -----------------------------------------------------------------------------

    def loop(self) -> Any:
        """Returns the event loop thread every connection of this target runs on (started once)."""
        from harness.targets.mcp.connection import LoopThread
        with self._loop_lock:
            if self._loop is None:
                self._loop = LoopThread()
            return self._loop

    def _shared_connection(self, workspace: Path | None = None) -> Any:
        """Returns the agent shared by the scenarios, started afresh when it died or, sandboxed, when
        ``workspace`` is not the folder its sandbox binds."""
        stale = self._shared is not None and self.sandbox and workspace is not None and (
            self._shared.slot is None or not self._shared.slot.fits(workspace))
        if self._shared is None or not self._shared.alive or stale:
            if self._shared is not None:
                self._shared.close()
            self._shared = None
            self._shared = self._connect(self.acp_options, workspace)
        return self._shared

    def _connect(self, options: dict[str, str], workspace: Path | None = None) -> Any:
        from harness.targets.acp.client import AgentBroken
        from harness.targets.acp.connection import Connection
        read, write = _FS[options.get("fs", "read,write")]
        box = launch.confine(self.sandbox, self.argv, workspace=workspace, tmp=self._tmp, env=self._named_env,
                             cwd=self.cwd, writable=[self.cwd] if self.cwd else [])
        connection = Connection(self.loop(), self.argv, env=self.env, cwd=self.cwd, fs_read=read, fs_write=write, box=box,
                                slot=launch.Slot.of(workspace) if box is not None else None,
                                terminal=options.get("terminal", "none") != "none")
        try:
            connection.open(max(START_TIMEOUT, self.timeout))
        except AgentBroken as exc:
            connection.close()
            raise TargetError(f"{exc} (start: {' '.join(self.argv)})", detail=connection.tail(), kind=exc.kind) from None
        return connection

    @property
    def slug(self) -> str:
        """Returns ``acp-<agent name>`` plus the options that change what the agent sees."""
        name = self.info.name if self.info and self.info.name else Path(self.argv[0]).name
        parts = ["acp", name] + [f"{key}-{value.replace(',', '-')}" for key, value in sorted(self.acp_options.items())
                                 if key in ("fs", "permission", "writes", "parents", "terminal", "mode", "events")]
        return name_slug(*parts)  # bounded: the name is the agent's, of any length
