"""One scenario = one Claude Code process talking to its own fake Messages API.

`ClaudeCodeSession.call` plays a tool call as the model's next ``tool_use`` and waits (bounded)
for the ``tool_result`` the CLI sends back; stdout's stream-json adds the structured
``tool_use_result`` of the same call, and the messages the CLI put after the result in the same
request (a ``system`` note such as ``[Truncated: PARTIAL view — ...]``) are the call's ``events``. Every wait is bounded: a CLI that exits or stops calling
becomes a `TargetError` carrying what it said, never a hang. A permission request is the tool
result the model got, so it is the call's observation: an error with code ``permission-request``
and the CLI's words (tool errors carry no code).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.containment.sandbox import Sandbox
from harness.targets import launch
from harness.targets.base import CallResult, TargetError
from harness.targets.claude_code import cli as cli_mod
from harness.targets.claude_code.fake_api import FakeMessagesAPI, TokenPolicy, ToolResult, content_text
from harness.targets.model_api.session import AgentProcessSession, JsonLines, LineTail

#: How long one call may take, from queuing the tool_use to receiving its tool_result.
CALL_TIMEOUT = 60.0
#: What the first call may take on top of CALL_TIMEOUT: the CLI starts and sends its first request.
STARTUP_ALLOWANCE = 30.0
#: How long stdout may lag behind the API for the structured result of a call.
STDOUT_GRACE = 3.0
#: How long the CLI may take to exit after the final text turn.
EXIT_TIMEOUT = 15.0

#: The error code of a call the CLI did not run because -p mode cannot ask for the permission it needs
#: (the message is the CLI's: "Claude requested permissions to ..., but you haven't granted it yet.").
PERMISSION_REQUEST = "permission-request"
# The text -p mode sends back instead of running a tool the permission mode does not allow.
# Anchored at the start: a tool error that merely echoes an old_string mentioning permissions is no request.
PERMISSION_PATTERN = re.compile(r"^(<tool_use_error>)?Claude requested permissions? to ")


def note_event(message: dict[str, Any]) -> dict[str, Any]:
    """Returns a message that followed a tool result as an event: ``{"role", "text"}`` when it is text only."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else None
    if isinstance(content, str) or (blocks is not None and all(isinstance(b, dict) and b.get("type") == "text" for b in blocks)):
        return {"role": message.get("role"), "text": content_text(content)}
    return {"role": message.get("role"), "content": content}


class StreamJsonLog(JsonLines):
    """Reads the CLI's stdout (one JSON event a line) in a thread and indexes results by tool_use id."""

    def __init__(self, stream: Iterable[str]) -> None:
        self._by_id: dict[str, dict[str, Any]] = {}
        super().__init__(stream, "claude-stdout")

    def _seen(self, event: dict[str, Any]) -> None:
        if event.get("type") == "user":
            content = (event.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._by_id[block.get("tool_use_id", "")] = event

    def user_event(self, tool_use_id: str, timeout: float) -> dict[str, Any] | None:
        """Waits up to ``timeout`` s for the stdout ``user`` event carrying this tool_use's result."""
        with self._cond:
            self._cond.wait_for(lambda: tool_use_id in self._by_id or not self._thread.is_alive(), timeout=timeout)
            return self._by_id.get(tool_use_id)


class ClaudeCodeSession(AgentProcessSession):
    """One CLI process and its fake API; the scenario's session state is the CLI's own."""

    api: FakeMessagesAPI

    def __init__(
        self,
        *,
        cli: Path,
        workspace: Path,
        mode: str = "acceptEdits",
        cwd_outside: bool = False,
        outside: Path | None = None,
        tokens: TokenPolicy | str = "chars4",
        call_timeout: float = CALL_TIMEOUT,
        startup_allowance: float = STARTUP_ALLOWANCE,
        allowed_tools: tuple[str, ...] = (),
        user: tuple[int, int] | None = None,
        turn_reminder: bool = False,
        sandbox: bool = False,
        cache_markers: bool = False,
    ) -> None:
        self.cli = cli
        self.title = "Claude Code"
        self.exit_timeout = EXIT_TIMEOUT
        self.cache_markers = cache_markers
        self.user = user  # (uid, gid) the CLI runs as (--run-as), or None: the harness's own user
        self._workspace_dirty = False
        self.workspace = workspace
        self.mode = mode
        self.call_timeout = call_timeout
        self.startup_allowance = startup_allowance
        self.calls = 0
        self._closed = False
        self._stuck = False  # a call timed out: close does not wait for a polite exit
        self.home = cli_mod.scratch_home()
        # "outside": the CLI runs in a folder other than the workspace, so every workspace file is
        # outside its working directory: the run's watched working folder (``outside``, which the
        # runner lays out and removes), else a folder of its own (not beside the workspace, where
        # the runner keeps its canaries), removed with the session.
        self._own_outside = cwd_outside and outside is None
        self.outside = (Path(tempfile.mkdtemp(prefix=cli_mod.CWD_PREFIX)) if self._own_outside
                        else outside if cwd_outside else None)
        self.cwd = self.outside or workspace
        if user is not None:
            # Its scratch HOME, its working directory and the workspace become the user's, and the
            # harness's folder around the workspace traversable, so that file modes bite as for anyone.
            try:
                for folder in filter(None, (self.home, self.outside, workspace)):
                    cli_mod.hand_over(folder, *user)
                cli_mod.open_for_traversal(workspace.parent)
            except PermissionError as exc:
                self._cleanup_scratch()
                raise TargetError(f"--run-as: {exc}; the CLI cannot reach its workspace (point TMPDIR elsewhere)") from None
        self.api = FakeMessagesAPI(tokens=tokens, hold_timeout=max(300.0, call_timeout * 5), prompt=cli_mod.PROMPT).start()
        uid, gid = user if user is not None else (None, None)
        argv = cli_mod.command(cli, mode=mode, allowed_tools=allowed_tools)
        env = cli_mod.clean_env(self.home, self.api.base_url, mode=mode, turn_reminder=turn_reminder)
        self.box: Sandbox | None = None
        try:
            # In its sandbox (its workspace, scratch HOME and working folder writable, the fake API's port
            # forwarded), under a keeper (harness/targets/launch.py): whatever the CLI starts ends with it.
            self.box = launch.confine(sandbox, argv, workspace=workspace, env=env, cwd=self.cwd,
                                      forward=[launch.port_of(self.api.base_url)], writable=[path for path in (self.home, self.outside) if path is not None])
            self.proc = subprocess.Popen(
                launch.command(argv, self.box, for_others=user is not None)[0],
                cwd=self.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
                user=uid,
                group=gid,
                extra_groups=[] if user is not None else None,
            )
        except (OSError, launch.SandboxError) as exc:
            self._cleanup()
            raise TargetError(f"cannot start Claude Code at {cli}: {exc}") from exc
        stdout, stderr = self._pipes()
        self.stdout = StreamJsonLog(stdout)
        self.stderr = LineTail(stderr, "claude-stderr")

    # ------------------------------------------------------------------ diagnostics
    def said(self) -> str:
        """Returns what the CLI said so far: stderr tail, stdout tail, and its exit code if it ended."""
        parts = []
        rc = self._running().poll()
        if rc is not None:
            # The process is gone; what it wrote last may still be on its way through the reader threads.
            self.stderr.join(1.0)
            self.stdout.join(1.0)
            parts.append(f"exit code: {rc}")
        if self.stderr.tail:
            parts.append("stderr:\n" + self.stderr.text())
        if self.stdout.tail:
            parts.append("stdout (last lines):\n" + "\n".join(list(self.stdout.tail)[-8:]))
        return "\n".join(parts)

    # ------------------------------------------------------------------ Session
    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Plays ``tool(args)`` as the model's next tool_use and returns the CLI's tool_result."""
        if self._closed:
            raise TargetError("the Claude Code session is closed")
        if self._running().poll() is not None:
            raise TargetError(f"Claude Code exited before the call {tool}", detail=self.said())
        if self._workspace_dirty and self.user is not None:
            cli_mod.hand_over(self.workspace, *self.user)  # what the harness just made is root's
        self._workspace_dirty = False
        self.calls += 1
        tool_use_id = self.api.script.call(tool, args)
        result: ToolResult = self._await_result(tool_use_id, tool)
        if not result.found:
            raise TargetError(
                f"Claude Code answered the {tool} tool_use without its tool_result",
                detail=f"last user message: {json.dumps(result.content)[:2000]}\n{self.said()}",
            )
        text = result.text
        extra: dict[str, Any] = {}
        event = self.stdout.user_event(tool_use_id, timeout=STDOUT_GRACE)
        if event is not None and "tool_use_result" in event:
            extra["tool_use_result"] = event["tool_use_result"]
        reminders = [b for b in result.siblings if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        if reminders:
            extra["reminders"] = reminders
        # What the CLI told the model right after the result, in the same request (e.g. the system
        # note after a Read the token cap cut): the call's events, so scenarios can expect them.
        notes = [note_event(message) for message in result.following]
        if self.cache_markers:  # where the request put its caching hints (a scenario's cache_markers option)
            notes = [*result.cache_markers, *notes]
        events = notes or None
        if result.is_error:
            # A permission request is what the model was told instead of a result: an observation
            # (an open question's answer), marked so that it never passes for the tool's own error text.
            code = PERMISSION_REQUEST if PERMISSION_PATTERN.search(text) else None
            return CallResult(error={"code": code, "message": text}, events=events, extra=extra)
        return CallResult(output=result.content, events=events, extra=extra)

    def before_action(self) -> None:
        """Under --run-as, files the harness is about to create are given to the CLI's user before the next call."""
        self._workspace_dirty = True

    def _cleanup(self) -> None:
        self._end()
        if getattr(self, "proc", None) is not None:
            self.stdout.join(2)
        box = getattr(self, "box", None)
        if box is not None:
            box.close()
        self._cleanup_scratch()

    def _cleanup_scratch(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        if self.outside is not None and self._own_outside:
            shutil.rmtree(self.outside, ignore_errors=True)
