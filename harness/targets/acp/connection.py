"""One ACP agent process, driven synchronously from the harness.

The ``agent-client-protocol`` package is asynchronous; the harness's Session interface is not. A
:class:`Connection` runs one :class:`~harness.targets.acp.client.AgentProcess` on a
:class:`~harness.targets.mcp.connection.LoopThread` and offers blocking, bounded calls: ``open``
(spawn, ``initialize``), ``new_session``, ``prompt``, ``close``. Every wait has a deadline; an agent
that hangs, exits or breaks the protocol raises :class:`~harness.targets.acp.client.AgentBroken`.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.targets.acp.client import AgentBroken, AgentProcess, ClientPolicy, EditorClient, Recorder

#: What the harness calls itself in ``initialize``.
CLIENT_NAME = "file-tool-conformance"
#: Extra seconds the loop gets beyond an agent-side deadline before the harness gives up on it.
LOOP_SLACK = 5.0


class Connection:
    """One agent process with its client; every method blocks the caller, never the loop."""

    def __init__(self, loop: Any, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, fs_read: bool = True, fs_write: bool = True, box: Any = None,
                 slot: Any = None, terminal: bool = False) -> None:
        self.loop = loop
        self.client = EditorClient()
        self.process = AgentProcess(argv, self.client, env=env, cwd=cwd, box=box)
        self.slot = slot  # the workspace folder its sandbox binds (harness/targets/launch.py Slot), or None
        self.fs_read = fs_read
        self.fs_write = fs_write
        self.terminal = terminal
        self.agent_info: dict[str, Any] = {}
        self.initialize_result: dict[str, Any] = {}
        self.closed = False

    @property
    def alive(self) -> bool:
        """Returns True while the agent runs and has broken nothing."""
        proc = self.process.proc
        return (not self.closed and proc is not None and proc.returncode is None and not self.process.ended
                and not self.process.recorder.violations)

    def open(self, timeout: float) -> None:
        """Spawns the agent and sends ``initialize`` with the fs and terminal capabilities; raises AgentBroken."""
        self._run(self._open(timeout), timeout)

    async def _open(self, timeout: float) -> None:
        from acp import PROTOCOL_VERSION
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        from harness import __version__
        await self.process.start()
        capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=self.fs_read,
                                                                     write_text_file=self.fs_write),
                                          terminal=self.terminal)
        response = await self.process.request(
            self.process.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities,
                                         client_info=Implementation(name=CLIENT_NAME, version=__version__)),
            timeout, "initialize")
        self.initialize_result = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.agent_info = self.initialize_result.get("agentInfo") or {}

    def new_session(self, workspace: Path, recorder: Recorder, policy: ClientPolicy, mode: str | None,
                    timeout: float) -> str:
        """Opens an ACP session rooted at ``workspace`` and binds it; returns its id."""
        return self._run(self._new_session(workspace, recorder, policy, mode, timeout), timeout)

    async def _new_session(self, workspace: Path, recorder: Recorder, policy: ClientPolicy, mode: str | None,
                           timeout: float) -> str:
        response = await self.process.request(self.process.conn.new_session(cwd=str(workspace), mcp_servers=[]),
                                              timeout, "session/new")
        session_id = response.session_id
        self.client.bind(session_id, workspace, recorder, policy)
        if mode:
            await self.process.request(self.process.conn.set_session_mode(session_id=session_id, mode_id=mode),
                                       timeout, "session/set_mode")
        return session_id

    def prompt(self, session_id: str, text: str, timeout: float) -> Any:
        """Sends one text prompt and waits (bounded) for the end of the turn; returns the response."""
        return self._run(self._prompt(session_id, text, timeout), timeout)

    async def _prompt(self, session_id: str, text: str, timeout: float) -> Any:
        from acp import text_block
        response = await self.process.request(
            self.process.conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout, "session/prompt")
        self.process.check()
        return response

    def start_prompt(self, session_id: str, text: str, timeout: float) -> concurrent.futures.Future:
        """Sends one text prompt without waiting; the future ends with the turn (or AgentBroken)."""
        import asyncio
        return asyncio.run_coroutine_threadsafe(self._prompt(session_id, text, timeout), self.loop.loop)

    def check(self) -> None:
        """Raises AgentBroken when the agent broke the protocol or is gone."""
        self.process.check()
        if self.process.proc is not None and self.process.proc.returncode is not None:
            raise AgentBroken("exited", f"the agent {self.process.exit_text()}")

    def tail(self) -> str:
        """Returns the agent's stderr tail."""
        return self.process.tail()

    def close(self, *, force: bool = False) -> None:
        """Ends the agent (stdin closed, then its process group killed; ``force``: killed at once); never raises."""
        if self.closed:
            return
        self.closed = True
        if force:  # a hanging or broken agent gets no grace: nothing it does now is worth waiting for
            self.process.kill_group()
        try:
            self.loop.run(self.process.close(), 3 * 2.0 + LOOP_SLACK)
        except Exception:  # noqa: BLE001 - the group kill below is what matters
            pass
        self.process.kill_group()

    def _run(self, coro: Any, timeout: float) -> Any:
        try:
            return self.loop.run(coro, timeout + LOOP_SLACK)
        except TimeoutError:
            raise AgentBroken("timeout", f"the agent did not answer within {timeout:g} s") from None
