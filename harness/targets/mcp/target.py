"""The ``mcp:`` target: an MCP server as it is, over stdio, with the official Python SDK.

``mcp:<command line>`` is split like a shell would (``python`` means this interpreter). How the
workspace reaches the server decides how often it is started:

- ``${workspace}`` (or ``{workspace}``) in the command line: the server takes its root on the
  command line (the official filesystem server's allowed directories). The client offers MCP roots
  too; a server that asks for them while initialising is started once, on a folder of its own, and
  given each scenario's workspace as its one root (``notifications/roots/list_changed``). Any
  other is started afresh for every scenario with that scenario's workspace;
- ``${parent}`` (or ``{parent}``): the server is started once per run with the directory that holds
  every scenario's workspace (``harness run --tmp``, else ``/dev/shm`` or the system temporary
  directory, as the runner chose), each scenario working in its own subfolder of it;
- neither: the server is started once per run as it is.

``mcp+http://host:port/path`` (or ``mcp+https://``) connects to a running Streamable HTTP server
instead, once per run (reconnecting after a failure); it takes its workspace from the session entry
below, since nothing can be passed to it per scenario.

A server started once is restarted after it broke. Before the first scenario the server is
started once (with an empty temporary directory for ``${workspace}``) to learn its name and tools.

Every ``tools/call`` carries ``_meta["file-tool-conformance/session"]``
(``{"id", "profile", "workspace", "options"}``): a server that keeps per-session state can key it
by that entry (``reference_impl.mcp_server`` does); any other server ignores it.

Results -> normal forms (``CallResult``), with ``extra["channel"]`` naming the channel used:

- a JSON-RPC error -> ``error: {"code": <its code>, "message": ...}``, channel ``jsonrpc-error``;
- a result with ``isError`` -> ``error: {"code": null, "message": <its text>}``, channel ``isError``
  (when its ``structuredContent`` is an object with ``code`` and ``message``, those are taken);
- any other result -> ``output``: its ``structuredContent`` when present, else its one text block,
  parsed as JSON when it is JSON (several or non-text blocks: the blocks as a list), channel ``result``.

A binding (harness/targets/bindings/) maps the profile's tools onto the server's: the mapped arguments
are checked against the tool's ``inputSchema`` before the call (a mapping the server would reject
is a :class:`TargetError` of kind ``binding``: an ``error`` verdict, never a result), and the
normal form is then read the binding's way (failure signals, codes, JMESPath projection).

Events travel in ``_meta["file-tool-conformance/events"]`` (of the result, or of the error's
``data``). A hang (per-call timeout), a crash, an exit before initialising, or a line on stdout
that is not JSON-RPC is a :class:`TargetError` with the tail of the server's stderr; stderr itself
is the server's to use. Escapes are the runner's (canaries around each workspace).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.containment.sandbox import SandboxError
from harness.targets import bindings, launch
from harness.targets.base import (
    DELIBERATE_ARGS,
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
from harness.util import schemas

PREFIX = "mcp:"
#: ``mcp+http://host:port/mcp``: a running Streamable HTTP server, connected to once per run.
HTTP_PREFIXES = ("mcp+http://", "mcp+https://")
DEFAULT_TIMEOUT = 10.0
#: The start-up budget: spawning, initialize and tools/list (a cold Python or node start is slow).
#: HARNESS_MCP_START_TIMEOUT (seconds) changes it: more for a server fetched on first use, less for a CI
#: job that would rather learn soon that a server hangs.
def _start_timeout(default: float = 30.0) -> float:
    try:
        chosen = float(os.environ.get("HARNESS_MCP_START_TIMEOUT", default))
    except ValueError:
        return default
    return chosen if 0 < chosen < float("inf") else default


START_TIMEOUT = _start_timeout()
SESSION_KEY = "file-tool-conformance/session"
EVENTS_KEY = "file-tool-conformance/events"
_WORKSPACE = ("${workspace}", "{workspace}")
_PARENT = ("${parent}", "{parent}")
#: A tool that lists a server's allowed directories: asked after a change of roots until it names the new one.
ROOTS_PROBE = "list_allowed_directories"
#: Seconds between two notifications of the same new root while the probe does not list it.
ROOTS_RETELL = 1.0


def parse_spec(spec: str) -> list[str]:
    """Returns the argv of an ``mcp:<command line>`` spec, placeholders untouched."""
    if spec.startswith(HTTP_PREFIXES):
        return []
    return split_command_line(spec, PREFIX, "python -m reference_impl.mcp_server")


def _substitute(argv: list[str], placeholders: tuple[str, ...], value: str) -> list[str]:
    out = []
    for arg in argv:
        for placeholder in placeholders:
            arg = arg.replace(placeholder, value)
        out.append(arg)
    return out


def workspace_parent(chosen: str | None = None) -> str:
    """Returns the directory that holds every scenario's workspace: the run's choice, else the system's temporary folder."""
    return os.path.realpath(chosen or tempfile.gettempdir())


class McpSession(Session):
    """One scenario's calls on a server."""

    def __init__(self, target: McpTarget, connection: Any, entry: dict[str, Any]) -> None:
        self._target = target
        self._connection = connection
        self._entry = entry

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Calls the tool as the binding maps it, checked against its inputSchema; returns the normal form."""
        from harness.targets.mcp.connection import ConnectionBroken, RpcError
        binding = self._target.binding
        name = binding.tool(tool)
        offered = self._connection.tools.get(name)
        if offered is None:
            raise Unsupported(self._target.missing_reason(tool))
        schema = getattr(offered, "input_schema", None)
        deliberate: str | None = None
        # Arguments passed on as they are and valid for the tool break no rule a binding could be
        # blamed for: the full check (which traces each broken rule) is for the others.
        if tool in binding.tools or not _valid(self._connection, name, schema, args):
            try:
                if self._entry.get("workspace"):  # what a binding builds, held to the path rule
                    binding.check_paths(tool, args, self._entry["workspace"])
            except bindings.ArgumentMismatch as exc:
                raise TargetError(str(exc), kind="binding") from None
            try:
                binding.check(tool, args, schema)
            except bindings.ArgumentMismatch as exc:
                if not DELIBERATE_ARGS.get():
                    raise TargetError(str(exc), kind="binding") from None
                # The step breaks the schema on purpose: sent as built, the tool's answer is the
                # observation and the rule it broke is kept with it.
                deliberate = str(exc)
        try:
            result = self._connection.call_tool(name, binding.arguments(tool, args), {SESSION_KEY: self._entry},
                                                self._target.timeout)
        except RpcError as exc:
            data = exc.data
            events = data.get(EVENTS_KEY) if isinstance(data, dict) else None
            extra: dict[str, Any] = {"channel": "jsonrpc-error"}
            rest = {k: v for k, v in data.items() if k != EVENTS_KEY} if isinstance(data, dict) else data
            if rest not in (None, {}, ""):
                extra["data"] = rest
            observed = CallResult(error={"code": exc.code, "message": exc.message}, events=events, extra=extra)
            return _marked(_bound(binding, tool, observed, exc.message), deliberate)
        except ConnectionBroken as exc:
            raise TargetError(f"the server {exc} ({tool})", detail=self._connection.tail(), kind=exc.kind) from None
        return _marked(_bound(binding, tool, normal_form(result), _plain_text(result.content)), deliberate)

    def close(self) -> None:
        """Per-scenario servers stop with their scenario; a shared one carries on."""
        if self._target.per_scenario:
            self._target._retire()


def _marked(observed: CallResult, deliberate: str | None) -> CallResult:
    """Records, on a call sent with arguments that break the tool's schema on purpose, which rule they broke."""
    if deliberate:
        observed.extra = {**observed.extra, "invalid_args": deliberate}
    return observed


def _valid(connection: Any, name: str, schema: Any, args: dict[str, Any]) -> bool:
    """Returns whether ``args`` satisfy the tool's inputSchema (False for a schema that cannot be
    compiled); the schema is compiled once per connection (it was listed once)."""
    if not isinstance(schema, dict) or not schema:
        return True
    validators = connection.validators
    if name not in validators:
        try:
            validators[name] = schemas.validator(schema)
        except schemas.SchemaInvalid:
            validators[name] = None
    compiled = validators[name]
    return compiled is not None and compiled.is_valid(args)


def normal_form(result: Any) -> CallResult:
    """Returns the normal form of a CallToolResult (see the module docstring)."""
    meta = result.meta or {}
    events = meta.get(EVENTS_KEY) if isinstance(meta, dict) else None
    structured = result.structured_content
    text = _text(result.content)
    if result.is_error:
        message = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
        error: dict[str, Any] = {"code": None, "message": message}
        if isinstance(structured, dict) and "message" in structured and "code" in structured:
            error = {"code": structured["code"], "message": structured["message"]}
        return CallResult(error=error, events=events, extra={"channel": "isError"})
    output = structured if structured is not None else _parsed(text)
    return CallResult(output=output, events=events, extra={"channel": "result"})


def _bound(binding: bindings.Binding, tool: str, observed: CallResult, text: str | None) -> CallResult:
    """Returns ``observed`` read the binding's way (failure signals, codes, output projection)."""
    if tool not in binding.tools:
        return observed
    try:
        output, error, extra = binding.result(tool, observed.output, observed.error, observed.extra.get("channel", ""),
                                              text)
    except bindings.ResultTooLarge as exc:  # the binding's fault, shown as this call's error
        raise TargetError(str(exc)) from None
    return CallResult(output=output, error=error, events=observed.events,
                      extra={**observed.extra, **({"binding": extra} if extra else {})})


def _plain_text(content: list[Any]) -> str | None:
    """Returns the text of a result's text blocks, joined (None when it has none)."""
    texts = [block.text for block in content if getattr(block, "type", None) == "text"]
    return "\n".join(texts) if texts else None


def _text(content: list[Any]) -> Any:
    """Returns the one text block's text, or every block as a JSON object."""
    if len(content) == 1 and getattr(content[0], "type", None) == "text":
        return content[0].text
    return [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in content]


def _parsed(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


class McpTarget(ProcessTarget):
    """A server reached over MCP stdio."""

    starts_on_workspace = True  # in the sandbox: started once, on the run's workspace folder
    lone_surrogates_refused = ("the mcp SDK writes its requests through pydantic, whose JSON encoder refuses a "
                               "lone surrogate")

    honours = frozenset({"sandbox"})

    @classmethod
    def from_options(cls, spec: str, options: TargetOptions) -> McpTarget:
        """Returns the target built with the run's timeout, binding, workspace folder and sandbox (a
        server over HTTP is not started by the harness: ``--sandbox`` named for it is refused)."""
        if spec.startswith(HTTP_PREFIXES) and options.sandbox_asked:
            raise ValueError("--sandbox: the mcp+http target connects to a server the harness does not start, "
                             "so it cannot confine it; leave --sandbox out")
        return cls(spec, timeout=options.timeout, binding=options.binding, tool_map=options.tool_map,
                   tool_map_file=options.tool_map_file, workspace_parent=options.workspace_parent,
                   sandbox=options.sandbox)

    def __init__(self, spec: str, *, timeout: float | None = None, binding: str | Path | None = None,
                 tool_map: Any = (), tool_map_file: str | Path | None = None, env: dict[str, str] | None = None,
                 cwd: str | None = None, workspace_parent: str | None = None, sandbox: bool = False) -> None:
        super().__init__(spec)
        self.argv = parse_spec(spec)
        self.workspace_parent = workspace_parent  # where the runner makes workspaces (None: $TMPDIR)
        self.url = spec[len("mcp+"):] if spec.startswith(HTTP_PREFIXES) else None
        # The server in the sandbox (harness/targets/launch.py): one per run, on the run's one workspace folder.
        self.sandbox = bool(sandbox) and self.url is None
        self._named_env = dict(env or {})  # what a sandboxed server gets besides the allowlist
        self._slot: launch.Slot | None = None  # the workspace folder the sandboxed server was started with
        self.timeout = float(timeout) if timeout else DEFAULT_TIMEOUT
        # The profile's tools as this server names and shapes them (harness/targets/bindings/); raises BindingError.
        self.binding = bindings.from_options(binding, tool_map, tool_map_file)
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        joined = " ".join(self.argv)
        self.needs_workspace = any(p in joined for p in _WORKSPACE)
        self.per_scenario = self.needs_workspace  # until the server shows it follows roots (see start)
        self.uses_roots = False  # the server asked for the client's roots: each workspace goes that way
        self._home: str | None = None  # the folder a roots-following server starts on
        self.info: TargetInfo | None = None
        self.tools: frozenset[str] = frozenset()
        self.offered: dict[str, Any] = {}
        self._loop: Any = None
        self._connection: Any = None
        self._failure: TargetError | None = None
        self._sessions = 0

    # -- the Target interface ------------------------------------------------------------------

    def use_cwd(self, folder: str) -> bool:
        """Starts the server in ``folder`` (the run's working folder), its relative words made
        absolute first; a working folder chosen for it, or a server reached over HTTP, keeps its own."""
        return self.url is None and super().use_cwd(folder)

    def start(self) -> TargetInfo:
        """Starts the server once to learn its name and tools; raises TargetError when it cannot."""
        if self._failure is not None:
            raise self._failure
        if self.info is not None:
            return self.info
        try:
            if self.needs_workspace and self.url is None:
                # Started on a folder of its own; it stays up for the run if it asks for the roots.
                self._home = tempfile.mkdtemp(prefix="harness-mcp-home-", dir=self.workspace_parent)
                connection = self._connect(Path(self._home), bound=self._fixed)
                self.uses_roots = connection.roots_asked > 0
                self.per_scenario = not self.uses_roots
                if self.per_scenario:
                    self._retire()
            else:
                connection = self._connect(None, bound=self._fixed)
        except TargetError as exc:
            self._failure = exc  # a server that cannot even initialise will not do better later
            raise
        info = connection.server_info
        self.tools = frozenset(connection.tools)
        self.offered = dict(connection.tools)  # name -> the listed Tool (its inputSchema): harness discover
        # A server offers tools, not profiles: skip_reason names a missing tool. A server that says
        # which profiles it implements (experimental capability "file-tool-conformance") is taken
        # at its word, so the others are skipped rather than failed.
        self.info = TargetInfo(name=bounded_name(getattr(info, "name", "") or Path(self.argv[-1] if self.argv else "http").name),
                               version=bounded_name(getattr(info, "version", "") or ""),
                               profiles=getattr(connection, "profiles", ()))
        return self.info

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens a session on ``workspace``: a fresh server per scenario, or the shared one (restarted if it died)."""
        self.start()
        workspace = Path(workspace).absolute()
        if self.per_scenario:
            self._retire()
            connection = self._connect(workspace, bound=workspace)
        elif self._connection is None or not self._connection.alive or (
                self.sandbox and (self._slot is None or not self._slot.fits(workspace))):
            # Its sandbox binds the workspace folder it was started with: a new folder needs a new one.
            self._retire()
            connection = self._connect(Path(self._home) if self.uses_roots and self._home else None, bound=workspace)
        else:
            connection = self._connection
        if self.uses_roots:
            self._move_root(connection, workspace)
        self._sessions += 1
        entry = {"id": f"s{self._sessions}", "profile": profile, "workspace": str(workspace), "options": options or {}}
        return McpSession(self, connection, entry)

    def skip_reason(self, scenario: Any) -> str | None:
        """Returns why the server cannot run ``scenario``: a tool it calls is not offered."""
        reason = self.binding.skip_reason(getattr(scenario, "profile", None))
        if reason or self.info is None:
            return reason
        for call in scenario.calls:
            if self.binding.tool(call.tool) not in self.tools:
                return self.missing_reason(call.tool)
        return None

    def missing_reason(self, tool: str) -> str:
        """Returns the skip reason for a contract tool the server does not offer."""
        offered = ", ".join(sorted(self.tools)) or "none"
        return (f"the server does not offer tool {self.binding.describe(tool)} (it offers: {offered}); "
                "map it with --binding or --tool-map")

    def stop(self) -> None:
        """Stops the server and the client's event loop."""
        self._retire()
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    @property
    def slug(self) -> str:
        """Returns ``mcp-<server name>`` (the command line is no file name)."""
        name = self.info.name if self.info and self.info.name else Path(self.argv[-1] if self.argv else "http").name
        return name_slug("mcp", name)  # bounded: the name is the server's, of any length

    # -- the server process -------------------------------------------------------------------

    def _connect(self, workspace: Path | None, bound: Path | None = None) -> Any:
        """Starts the server (``workspace``: its ``${workspace}``; ``bound``: the scenario's workspace
        folder, writable in its sandbox) and initialises it; TargetError when it cannot."""
        from harness.targets.mcp.connection import Connection, ConnectionBroken, LoopHere
        self._loop = self._loop or LoopHere()  # also after stop(): a stopped target may be used again
        argv = _substitute(self.argv, _PARENT, workspace_parent(self.workspace_parent))
        roots = None
        if workspace is not None:
            argv = _substitute(argv, _WORKSPACE, str(workspace))
            roots = [str(workspace)]  # the client offers its workspace as its one root too
        box = None
        if self.sandbox:
            try:
                box = launch.confine(True, argv, workspace=bound, tmp=self._tmp, env=self._named_env, cwd=self.cwd,
                                     writable=[path for path in (self.cwd, self._home) if path])
            except SandboxError as exc:
                raise TargetError(f"the server cannot be sandboxed: {exc}") from None
        self._slot = launch.Slot.of(bound) if self.sandbox else None
        connection = Connection(self._loop, argv, url=self.url, env=self.env, cwd=self.cwd, roots=roots, box=box)
        try:
            connection.open(max(START_TIMEOUT, self.timeout))
        except ConnectionBroken as exc:
            where = f"connect: {self.url}" if self.url else f"start: {shlex.join(argv)}"
            raise TargetError(f"the server {exc} ({where})", detail=connection.tail(), kind=exc.kind) from None
        self._connection = connection
        return connection

    def _move_root(self, connection: Any, workspace: Path) -> None:
        """Makes ``workspace`` the server's one root: notifies it, and waits until it has taken it.

        A server updates its roots after it answers roots/list; one that offers
        ``list_allowed_directories`` (the official filesystem server) is asked until it names the
        new root, so no call of the scenario can reach the server before its new root. Such a server
        may apply an older answer after ours (the filesystem server checks each answer's folders on
        its own, so the roots it asked for on start can land after the first change's): while the
        probe names another root, the change is told again every ROOTS_RETELL seconds.
        """
        from harness.targets.mcp.connection import ConnectionBroken, RpcError
        real = os.path.realpath(workspace)
        try:
            connection.change_roots([str(workspace)], self.timeout)
            if ROOTS_PROBE not in connection.tools:
                return
            deadline = time.monotonic() + self.timeout
            told = time.monotonic()
            while time.monotonic() < deadline:
                listed = _text(connection.call_tool(ROOTS_PROBE, {}, None, self.timeout).content)
                if real in str(listed).splitlines():
                    return
                if time.monotonic() - told >= ROOTS_RETELL:
                    connection.change_roots([str(workspace)], max(deadline - time.monotonic(), 0.1))
                    told = time.monotonic()
                else:
                    time.sleep(0.01)
            raise TargetError(f"the server did not take its new root {workspace} within {self.timeout:g} s",
                              detail=connection.tail())
        except RpcError as exc:
            raise TargetError(f"the server answered {ROOTS_PROBE} with an error: {exc.message}",
                              detail=connection.tail()) from None
        except ConnectionBroken as exc:
            raise TargetError(f"the server {exc} (roots)", detail=connection.tail(), kind=exc.kind) from None

    def _retire(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
