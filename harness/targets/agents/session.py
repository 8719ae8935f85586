"""One scenario = one agent process talking to its own fake model endpoint.

`AgentSession.call` plays a tool call as the model's next tool call and waits (bounded) for the
tool result the agent sends back. The call's output is what the model was told (the text of the
tool result); the call failed when the agent marked it so (the spec's `errored`, from the agent's
own stdout events, or the API's ``is_error`` where it has one). Every wait is bounded: an agent
that exits or stops calling becomes a `TargetError` carrying what it said, never a hang.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from harness.containment.sandbox import Sandbox
from harness.targets import bindings, launch
from harness.targets.agents.spec import PROMPT, AgentSpec
from harness.targets.base import CallResult, TargetError
from harness.targets.model_api import FakeModelServer, dialect
from harness.targets.model_api.base import ToolResult
from harness.targets.model_api.session import AgentProcessSession, JsonLines

#: How long one call may take, from queuing the tool call to receiving its result.
CALL_TIMEOUT = 60.0
#: How long stdout may lag behind the API for the agent's own record of a call.
STDOUT_GRACE = 3.0
#: How long the agent may take to exit after the final text turn.
EXIT_TIMEOUT = 20.0
#: The prefix of a session's scratch HOME (``tempfile.mkdtemp`` adds 8 random characters).
HOME_PREFIX = "harness-agent-home-"


class AgentSession(AgentProcessSession):
    """One agent process and its fake model; the scenario's session state is the agent's own."""

    api: FakeModelServer

    def __init__(self, spec: AgentSpec, *, executable: Path, workspace: Path, call_timeout: float = CALL_TIMEOUT,
                 startup_allowance: float | None = None, binding: bindings.Binding | None = None,
                 sandbox: bool = False) -> None:
        self.spec = spec
        self.title = spec.title
        self.exit_timeout = EXIT_TIMEOUT
        self.binding = binding or bindings.Binding()
        self.workspace = workspace
        self.call_timeout = call_timeout
        self.startup_allowance = spec.startup if startup_allowance is None else startup_allowance
        self.calls = 0
        self._closed = False
        self._stuck = False
        self.home = Path(tempfile.mkdtemp(prefix=HOME_PREFIX))
        (self.home / "tmp").mkdir()
        self.api = FakeModelServer(dialect(spec.api), prompt=PROMPT, hold_timeout=max(300.0, call_timeout * 5)).start()
        self.box: Sandbox | None = None
        try:
            started = spec.launch(spec, executable, self.home, workspace, self.api.base_url)
            # In its sandbox (its workspace and scratch HOME writable, the fake model's port forwarded),
            # under a keeper (harness/targets/launch.py): whatever the agent starts ends with it.
            self.box = launch.confine(sandbox, started.argv, workspace=workspace, env=started.env, cwd=workspace,
                                      forward=[launch.port_of(self.api.base_url)], writable=[self.home])
            self.proc = subprocess.Popen(
                launch.command(started.argv, self.box)[0], cwd=workspace, env=started.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                start_new_session=True)
        except (OSError, launch.SandboxError) as exc:
            self.proc = None
            self._cleanup()
            raise TargetError(f"cannot start {spec.title} at {executable}: {exc}") from exc
        stdout, stderr = self._pipes()
        self.stdout = JsonLines(stdout, f"{spec.name}-stdout")
        self.stderr = JsonLines(stderr, f"{spec.name}-stderr")

    def said(self) -> str:
        """Returns what the agent said so far: stderr tail, stdout tail, its exit code if it ended."""
        parts = []
        rc = self.proc.poll() if self.proc is not None else None
        if rc is not None:
            self.stderr.join(1.0)
            self.stdout.join(1.0)
            parts.append(f"exit code: {rc}")
        if self.stderr.tail:
            parts.append("stderr:\n" + "\n".join(list(self.stderr.tail)[-12:]))
        if self.stdout.tail:
            parts.append("stdout (last lines):\n" + "\n".join(list(self.stdout.tail)[-8:]))
        return "\n".join(parts)

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Plays ``tool(args)`` (through the binding, if any) as the model's next tool call."""
        if tool not in self.binding.tools:
            return self._call(tool, args)
        try:  # what a binding builds is held to the scenario's path rule before it is sent
            self.binding.check_paths(tool, args, str(self.workspace))
        except bindings.ArgumentMismatch as exc:
            raise TargetError(str(exc), kind="binding") from None
        observed = self._call(self.binding.tool(tool), self.binding.arguments(tool, args))
        text = observed.error["message"] if observed.error else observed.output
        try:
            output, error, extra = self.binding.result(tool, observed.output, observed.error, "error", text)
        except bindings.ResultTooLarge as exc:
            raise TargetError(str(exc)) from None
        return CallResult(output=output, error=error, extra={"binding": extra} if extra else {})

    def _call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Plays ``tool(args)`` in the agent's own names as the model's next tool call and returns what it answered."""
        if self._closed:
            raise TargetError(f"the {self.spec.title} session is closed")
        if tool not in self.spec.tools:
            raise TargetError(f"{self.spec.title} has no tool {tool!r} (it has {', '.join(sorted(self.spec.tools))})")
        if self._running().poll() is not None:
            raise TargetError(f"{self.spec.title} exited before the call {tool}", detail=self.said())
        self.calls += 1
        kind = self.spec.tools[tool]
        call_id = self.api.script.call(tool, args, kind=kind)
        result: ToolResult = self._await_result(call_id, tool)
        if not result.found:
            raise TargetError(f"{self.spec.title} asked for the next turn without the result of {tool}",
                              detail=f"it sent: {json.dumps(result.content, default=str)[:2000]}\n{self.said()}")
        text = result.text
        failed: bool | None = result.is_error or None
        if failed is None:
            self.stdout.wait_for(lambda events: self.spec.errored(events, call_id, text) is not None, STDOUT_GRACE)
            failed = self.spec.errored(self.stdout.snapshot(), call_id, text)
        if failed:
            return CallResult(error={"code": None, "message": text})
        return CallResult(output=text)

    def _cleanup(self) -> None:
        self._end()
        if getattr(self, "proc", None) is not None:
            self.stdout.join(2)
            self.stderr.join(2)
        box = getattr(self, "box", None)
        if box is not None:
            box.close()
        shutil.rmtree(self.home, ignore_errors=True)
