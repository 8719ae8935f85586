"""``acp:claude-code``: the pinned Claude Code ACP agent, its model played by the fake Messages API.

The agent is ``@zed-industries/claude-code-acp`` as pinned in ``tools/claude-code-acp/package.json``
(``make claude-code-acp`` installs it). It runs Claude Code through the Claude Agent SDK; with
``cli=pinned`` (default) the SDK is pointed at the pinned Claude Code CLI of the ``claude-code``
target through ``CLAUDE_CODE_EXECUTABLE``, with ``cli=bundled`` it runs the CLI the SDK bundles,
``cli=<path>`` any other. Every scenario gets its own agent process, scratch HOME and fake model
(`harness.targets.claude_code.fake_api`), with the environment the ``claude-code`` target gives the
CLI (offline, a fake key, no telemetry).

How a call runs: the first call sends one prompt (the model ignores it); each call queues the
model's next ``tool_use`` and waits (bounded) for the ``tool_result`` the agent sends back to the
model, then (briefly) for the tool call's final ``tool_call_update``. The tool names are the ones
the agent offers the model: with the client's fs capabilities on, ``Read`` is ``mcp__acp__Read``,
``Write`` and ``Edit`` are ``mcp__acp__Write`` and ``mcp__acp__Edit`` (the built-ins are disallowed
then); with them off, the built-ins; ``Bash``, ``BashOutput`` and ``KillShell`` are ``mcp__acp__Bash``,
``mcp__acp__BashOutput`` and ``mcp__acp__KillShell`` while the client offers terminals
(``terminal=refuse|fake|running``). A scenario's ``acp: {names: builtin}`` sends Claude Code's own names
instead, and with ``names`` given each call records the names of the tools the request that carried
its result offered (``extra.tools_offered``, sorted). The result's normal form is the ``claude-code`` target's:
``output`` is the tool_result's content, ``error`` ``{"code": null, "message": <its text>}``; a
content that is one text block (what an MCP tool such as ``mcp__acp__Read`` returns) is its text,
as the ``mcp:`` target gives it, so that it compares with the built-ins' plain strings.

A turn the agent ends before the tool_result reaches the model (it interrupts the turn when a
permission request is rejected) is the call's observation: an error with code ``turn-ended`` and
the ``stopReason``; the next call starts a new turn.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from harness.targets import launch
from harness.targets.acp.target import _FS, AcpSession, AcpTarget, client_policy, observation, scenario_options
from harness.targets.base import CallResult, TargetError, TargetInfo, Unsupported

#: The version `tools/claude-code-acp/package.json` pins.
PINNED_VERSION = "0.16.2"
#: Where `npm ci --prefix tools/claude-code-acp` puts the agent, relative to the project root.
LOCAL_AGENT = Path("tools/claude-code-acp/node_modules/@zed-industries/claude-code-acp/dist/index.js")
NOT_INSTALLED = "Claude Code ACP agent not installed (make claude-code-acp installs it)"
CLI_NOT_INSTALLED = "the pinned Claude Code CLI is not installed (make claude-code-acp installs it; cli=bundled uses the agent's own)"
#: The profiles whose tools the agent offers (Read, Write, Edit); others need a --tool-map onto them.
PROFILES = ("claude-code", "claude-code-captured")
#: The contract tool -> the name the agent offers the model, when the client serves fs/* (terminal/*).
ACP_TOOLS = {"Read": ("mcp__acp__Read", "read"), "Write": ("mcp__acp__Write", "write"),
             "Edit": ("mcp__acp__Edit", "write"), "Bash": ("mcp__acp__Bash", "terminal"),
             "BashOutput": ("mcp__acp__BashOutput", "terminal"), "KillShell": ("mcp__acp__KillShell", "terminal")}
#: How long the final tool_call_update may lag behind the tool_result.
UPDATE_GRACE = 3.0
#: The bound on one call, and what the first call gets on top (the agent starts Claude Code).
CALL_TIMEOUT = 60.0
STARTUP_ALLOWANCE = 30.0
#: How long the turn may take to end after the final text.
EXIT_TIMEOUT = 15.0
PERMISSION_REQUEST = "permission-request"
TURN_ENDED = "turn-ended"


def project_root() -> Path:
    """Returns the checkout this package lives in (or the current directory)."""
    here = Path(__file__).resolve().parents[3]
    return here if (here / "tools" / "claude-code-acp" / "package.json").exists() else Path.cwd()


def agent_path() -> Path:
    """Returns the pinned agent's entry point (which may not exist yet)."""
    return project_root() / LOCAL_AGENT


class ClaudeCodeAcpSession(AcpSession):
    """One scenario: one agent process, one fake model, one ACP session."""

    def __init__(self, target: ClaudeCodeAcpTarget, connection: Any, session_id: str, recorder: Any, *,
                 api: Any, home: Path, fs_read: bool, fs_write: bool, terminal: bool = False,
                 names: str | None = None) -> None:
        super().__init__(target, connection, session_id, recorder, own_connection=True)
        self.api = api
        self.home = home
        self.fs_read = fs_read
        self.fs_write = fs_write
        self.terminal = terminal
        self.names = names
        self.calls = 0
        self._turn: Any = None

    def tool_name(self, tool: str) -> str:
        """Returns the name the agent offers the model for the contract's (mapped) ``tool``."""
        name = self._target.tool_map.tool(tool)
        if self.names == "builtin":
            return name
        acp_name, capability = ACP_TOOLS.get(name, (name, ""))
        on = {"read": self.fs_read, "write": self.fs_write, "terminal": self.terminal}.get(capability, False)
        return acp_name if on else name

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Plays ``tool(args)`` as the model's next tool_use; returns the tool_result and what the call caused."""
        from harness.targets.acp.client import AgentBroken
        from harness.targets.claude_code.cli import PROMPT
        if self._closed:
            raise TargetError("the ACP session is closed")
        self.calls += 1
        mark = self._recorder.mark()
        timeout = self._target.timeout
        bound = timeout + (STARTUP_ALLOWANCE if self.calls == 1 else 0.0)
        if self._turn is None:
            self._turn = self._connection.start_prompt(self._session_id, PROMPT, 24 * 3600.0)
        tool_use_id = self.api.script.call(self.tool_name(tool), self._target.tool_map.arguments(tool, args))
        deadline = time.monotonic() + bound
        result = None
        try:
            while result is None:
                result = self.api.script.result(tool_use_id, timeout=0.2)
                if result is not None:
                    break
                if self._turn.done():
                    result = self.api.script.result(tool_use_id, timeout=0.5)  # a delivery racing the end
                    if result is None:
                        return self._turn_ended(tool, mark)
                self._connection.check()
                if time.monotonic() > deadline:
                    raise AgentBroken("timeout", f"the agent sent no tool_result for {tool} within {bound:.0f} s")
        except AgentBroken as exc:
            self._target.broke(self._connection)
            raise TargetError(f"{exc} ({tool})", detail=self._connection.tail(), kind=exc.kind) from None
        self._await_final_update(tool_use_id)
        events, fs, permissions = self._recorder.since(mark)
        if not result.found:
            raise TargetError(f"the agent answered the {tool} tool_use without its tool_result",
                              detail=f"last user message: {str(result.content)[:2000]}")
        if result.is_error:
            from harness.targets.claude_code.session import PERMISSION_PATTERN
            code = PERMISSION_REQUEST if PERMISSION_PATTERN.search(result.text) else None
            normal = CallResult(error={"code": code, "message": result.text})
        else:
            normal = CallResult(output=_one_text(result.content))
        if self.names is not None:
            normal.extra["tools_offered"] = result.tools_offered
        return observation(normal, self._target.shaped(events), fs, permissions, self._recorder.terminals_since(mark))

    def _turn_ended(self, tool: str, mark: Any) -> CallResult:
        """The turn ended before the tool_result reached the model: the call's observation (or a break)."""
        from harness.targets.acp.client import AgentBroken
        turn, self._turn = self._turn, None
        try:
            response = turn.result(timeout=0)
        except AgentBroken as exc:
            self._target.broke(self._connection)
            raise TargetError(f"{exc} ({tool})", detail=self._connection.tail(), kind=exc.kind) from None
        except Exception as exc:  # noqa: BLE001 - an error answer to session/prompt
            response = None
            reason = f"the prompt failed: {exc}"
        else:
            reason = f"stopReason {getattr(response, 'stop_reason', None)!r}"
        self.api.script.pending = None  # the next turn's first request carries no result for it
        events, fs, permissions = self._recorder.since(mark)
        message = f"the agent ended the turn ({reason}) before the tool result reached the model"
        return observation(CallResult(error={"code": TURN_ENDED, "message": message}), self._target.shaped(events), fs,
                           permissions, self._recorder.terminals_since(mark))

    def _await_final_update(self, tool_call_id: str) -> None:
        deadline = time.monotonic() + UPDATE_GRACE
        while time.monotonic() < deadline:
            for event in reversed(self._recorder.events):
                update = (event.get("params") or {}).get("update") or {}
                if update.get("toolCallId") == tool_call_id and update.get("status") in ("completed", "failed"):
                    return
            time.sleep(0.05)

    def close(self) -> None:
        """Sends the final text turn, waits (bounded) for the turn to end, then ends the agent."""
        if self._closed:
            return
        try:
            self.api.script.finish()
            if self._turn is not None:
                try:
                    self._turn.result(timeout=EXIT_TIMEOUT)
                except Exception:  # noqa: BLE001 - the agent is killed below either way
                    pass
        finally:
            super().close()
            self.api.stop()
            shutil.rmtree(self.home, ignore_errors=True)


def _one_text(content: Any) -> Any:
    """Returns the text of a content that is one text block (as the mcp: target does), else the content."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and content[0].get("type") == "text" and set(content[0]) <= {"type", "text"}:
        return content[0].get("text", "")
    return content


class ClaudeCodeAcpTarget(AcpTarget):
    """``acp:[options] claude-code``: the pinned agent, one process and fake model per scenario."""

    def __init__(self, spec: str, *, timeout: float | None = None, binding: str | Path | None = None,
                 tool_map: Any = (), tool_map_file: str | Path | None = None, env: dict[str, str] | None = None,
                 sandbox: bool = False) -> None:
        super().__init__(spec, timeout=timeout, binding=binding, tool_map=tool_map, tool_map_file=tool_map_file, env=env,
                         sandbox=sandbox)
        if "timeout" not in self.acp_options:
            self.timeout = max(timeout or 0.0, CALL_TIMEOUT)
        self.agent = agent_path()
        cli = self.acp_options.get("cli", "pinned")
        if cli == "pinned":
            from harness.targets.claude_code.cli import default_cli
            self.cli: Path | None = default_cli()
        else:
            self.cli = None if cli == "bundled" else Path(cli).expanduser()
        self.profiles = self.profiles or PROFILES
        self.cli_version = ""

    @property
    def installed(self) -> str | None:
        """Returns why the agent cannot run here, or None."""
        if not self.agent.is_file():
            return NOT_INSTALLED
        if self.cli is not None and not (self.cli.is_file() and os.access(self.cli, os.X_OK)):
            return CLI_NOT_INSTALLED if self.acp_options.get("cli", "pinned") == "pinned" else f"no executable at {self.cli}"
        return None

    def start(self) -> TargetInfo:
        """Names the agent and the CLI behind it (a missing agent is no error: its scenarios skip)."""
        if self.info is None:
            if self.cli is not None and self.installed is None:
                from harness.targets.claude_code.cli import cli_version
                try:
                    self.cli_version = cli_version(self.cli)
                except (OSError, RuntimeError, TimeoutError) as exc:
                    raise TargetError(f"Claude Code at {self.cli} does not start", detail=str(exc)) from exc
            self.info = TargetInfo(name="claude-code-acp", version=PINNED_VERSION, profiles=self.profiles)
        return self.info

    def skip_reason(self, scenario: Any) -> str | None:
        """Skips other profiles, and everything when the agent is not installed."""
        return super().skip_reason(scenario) or self.installed

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> ClaudeCodeAcpSession:
        """Starts the agent with its own fake model and HOME, and opens a session in ``workspace``."""
        from harness.targets.acp.client import AgentBroken, Recorder
        from harness.targets.acp.connection import Connection
        from harness.targets.claude_code import cli as cli_mod
        from harness.targets.claude_code.fake_api import FakeMessagesAPI
        if self.installed:
            raise Unsupported(self.installed)
        own, _rest = scenario_options(options)
        merged = {**self.acp_options, **own}
        fs_read, fs_write = _FS[merged.get("fs", "read,write")]
        home = cli_mod.scratch_home()
        api = FakeMessagesAPI(tokens=merged.get("tokens", "chars4"), hold_timeout=max(300.0, self.timeout * 5)).start()
        env = cli_mod.clean_env(home, api.base_url, mode="default")
        if self.cli is not None:
            env["CLAUDE_CODE_EXECUTABLE"] = str(self.cli)
        argv = ["node", str(self.agent)]
        # The agent's process runs in the run's working folder (watched, harness/run/working_folder.py);
        # the session's cwd, which the agent hands Claude Code as its working directory, is the workspace.
        cwd = self.cwd or str(workspace)
        try:  # its workspace, working folder and scratch HOME writable, the fake API's port forwarded (harness/targets/launch.py)
            box = launch.confine(self.sandbox, argv, workspace=workspace, env=env, cwd=cwd,
                                 forward=[launch.port_of(api.base_url)], writable=[home, *([self.cwd] if self.cwd else [])])
        except launch.SandboxError as exc:
            api.stop()
            shutil.rmtree(home, ignore_errors=True)
            raise TargetError(f"the agent cannot be sandboxed: {exc}") from None
        terminal = merged.get("terminal", "none") != "none"
        connection = Connection(self.loop(), argv, env=env, cwd=cwd, fs_read=fs_read, fs_write=fs_write, box=box,
                                terminal=terminal)
        recorder = Recorder()
        policy = client_policy(merged)
        try:
            connection.open(self.timeout + STARTUP_ALLOWANCE)
            session_id = connection.new_session(Path(workspace).absolute(), recorder, policy, merged.get("mode"),
                                                self.timeout + STARTUP_ALLOWANCE)
        except AgentBroken as exc:
            connection.close(force=True)
            api.stop()
            shutil.rmtree(home, ignore_errors=True)
            raise TargetError(f"{exc} (start)", detail=connection.tail(), kind=exc.kind) from None
        return ClaudeCodeAcpSession(self, connection, session_id, recorder, api=api, home=home,
                                    fs_read=fs_read, fs_write=fs_write, terminal=terminal, names=merged.get("names"))

    @property
    def slug(self) -> str:
        """Returns e.g. ``acp-claude-code-0.16.2-cli-2.1.330`` plus the client options that differ."""
        from harness.targets.claude_code.cli import PINNED_VERSION as CLI_PINNED
        cli = self.acp_options.get("cli", "pinned")
        behind = f"cli-{self.cli_version or CLI_PINNED}" if cli == "pinned" else ("cli-bundled" if cli == "bundled" else "cli-custom")
        parts = ["acp-claude-code", PINNED_VERSION, behind] + [
            f"{key}-{value.replace(',', '-')}" for key, value in sorted(self.acp_options.items())
            if key in ("fs", "permission", "writes", "parents", "terminal", "mode", "events")]
        return "-".join(parts)
