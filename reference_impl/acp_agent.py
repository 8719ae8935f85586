"""Seed 003's ``write_text_file`` as an ACP agent: ``python -m reference_impl.acp_agent``.

Seed 003 (``shared/seeds/003-mcp-write-text-file.md``) has two halves: the tool, and how its calls
travel over the Agent Client Protocol. This module is the second half, built on the
``agent-client-protocol`` package's agent side (it speaks ACP on stdin/stdout). It reads like the
seed's "Implementation Contract" and "ACP Event Mapping":

1. ``session/update`` with a ``tool_call``: ``toolCallId`` ``call-N``, ``title`` ``write_text_file``,
   ``status`` ``pending``, ``locations`` ``[{path}]``, ``rawInput`` (``content`` cut to 10 KB of
   UTF-8, as `mcp_write_text_file.raw_input` does);
2. validate the parameters (the seed's table: a relative path is ``-32600``);
3. ``file_existed``: ask the client, ``fs/read_text_file`` (line 1, limit 1); an error counts as
   "did not exist" (the Rust ``unwrap_or(false)``). A client without ``fs.readTextFile`` cannot be
   asked: the local file system answers;
4. write through the client, ``fs/write_text_file``; when the client refuses (an error reply) or
   lacks ``fs.writeTextFile``, fall back to the local file system, as the seed's Rust does;
5. ``session/update`` with a ``tool_call_update``: ``status`` ``completed`` and the result as
   ``rawOutput``, or ``failed`` with ``rawOutput: {"error": {code, message}}``.

Where ACP and the seed disagree, ACP's schema wins, because the package validates every message:
the update is ``{"sessionUpdate": "tool_call", "toolCallId": ...}`` (the seed writes
``{"type": "toolCall", "id": ...}``), the completion's fields sit in the update itself (the seed nests
them under ``fields``), and ``kind`` is ``edit``: ACP's ``ToolKind`` has no ``write``.

How a client asks for a call (the *scripted prompt*, this agent's own convention, since a real
agent takes its calls from a model): every ``session/prompt`` carries one text block whose text is
a JSON object ``{"tool": "write_text_file", "args": {"path": ..., "content": ...}}``. The agent runs
that one call and ends the turn (``end_turn``). A prompt that is not such an object is answered
with an agent message saying so, and ``end_turn``; an unknown tool likewise.

``--ask-permission``: before writing, ask ``session/request_permission`` (options ``allow_once``,
``reject_once``); a rejection or a cancelled request fails the call with the table's "Permission
denied" row (``-32002``). The seed does not ask; ACP lets an agent ask, so this is an option.

Session ids are ``session-1``, ``session-2``, ...; tool call ids count per session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    start_tool_call,
    update_agent_message_text,
    update_tool_call,
)
from acp.schema import AgentCapabilities, ClientCapabilities, Implementation, PermissionOption, ToolCallLocation

from reference_impl import __version__
from reference_impl.mcp_write_text_file import (
    PERMISSION_DENIED,
    McpError,
    raw_input,
    validate,
    write_local,
)

TOOL = "write_text_file"
USAGE = 'one text block holding {"tool": "write_text_file", "args": {"path": "/abs/file", "content": "..."}}'


class _Session:
    """One ACP session: its id and its tool-call counter."""

    def __init__(self, session_id: str, cwd: str) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.calls = 0


class WriteTextFileAgent(Agent):
    """The seed's agent side: one ``write_text_file`` per prompt, through the client's ``fs/*``."""

    def __init__(self, *, ask_permission: bool = False) -> None:
        self.ask_permission = ask_permission
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, _Session] = {}
        self._conn: Any = None

    def on_connect(self, conn: Any) -> None:
        """Keeps the connection to the client (the package calls this once)."""
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        """Remembers what the client can do (``fs.readTextFile``, ``fs.writeTextFile``)."""
        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="reference-acp-agent", title="Seed 003 write_text_file",
                                                            version=__version__))

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        """Opens a session rooted at ``cwd``."""
        session_id = f"session-{len(self.sessions) + 1}"
        self.sessions[session_id] = _Session(session_id, cwd)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Runs the one tool call the prompt carries (see the module docstring) and ends the turn."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        request = _scripted_call(prompt)
        if isinstance(request, str):
            await self._conn.session_update(session_id, update_agent_message_text(request))
        else:
            await self._write_text_file(session, request)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Nothing runs in the background, so there is nothing to cancel."""

    # -- the seed's Implementation Contract -----------------------------------------------------

    async def _write_text_file(self, session: _Session, args: dict[str, Any]) -> None:
        session.calls += 1
        call_id = f"call-{session.calls}"
        path = args.get("path")
        await self._conn.session_update(session.session_id, start_tool_call(
            call_id, TOOL, kind="edit", status="pending",
            locations=[ToolCallLocation(path=path)] if isinstance(path, str) else [],
            raw_input=raw_input(args)))
        try:
            result = await self._run(session, call_id, args)
        except McpError as failure:
            update = update_tool_call(call_id, status="failed", raw_output={"error": failure.as_dict()})
        else:
            update = update_tool_call(call_id, status="completed", raw_output=result)
        await self._conn.session_update(session.session_id, update)

    async def _run(self, session: _Session, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
        # 1. Validate params.
        path, data = validate(args)
        content = data.decode("utf-8")
        if self.ask_permission and not await self._permitted(session, call_id, path):
            raise McpError(PERMISSION_DENIED, f"Permission denied: {path}")
        # 2. Check if the file exists (for the ``created`` flag).
        file_existed = await self._exists(session, path)
        # 3. Try the ACP client first; 4. fall back to the local file system.
        fs = self.capabilities.fs
        written = False
        if fs is not None and fs.write_text_file:
            try:
                await self._conn.write_text_file(session_id=session.session_id, path=path, content=content)
                written = True
            except (RequestError, ConnectionError):
                written = False
        if not written:
            write_local(path, data)
        return {"success": True, "bytes_written": len(data), "created": not file_existed}

    async def _exists(self, session: _Session, path: str) -> bool:
        fs = self.capabilities.fs
        if fs is None or not fs.read_text_file:
            return os.path.exists(path)
        try:
            await self._conn.read_text_file(session_id=session.session_id, path=path, line=1, limit=1)
        except (RequestError, ConnectionError):
            return False
        return True

    async def _permitted(self, session: _Session, call_id: str, path: str) -> bool:
        options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                   PermissionOption(option_id="reject", name="Reject", kind="reject_once")]
        answer = await self._conn.request_permission(
            session_id=session.session_id, options=options,
            tool_call=update_tool_call(call_id, title=TOOL, kind="edit", status="pending",
                                       locations=[ToolCallLocation(path=path)]))
        outcome = answer.outcome
        return getattr(outcome, "outcome", "") == "selected" and getattr(outcome, "option_id", "") == "allow"


def _scripted_call(prompt: list[Any]) -> dict[str, Any] | str:
    """Returns the call's ``args`` from a scripted prompt, or the text explaining why there is none."""
    texts = [block.text for block in prompt if getattr(block, "type", "") == "text"]
    if len(texts) != 1:
        return f"expected {USAGE}; got {len(texts)} text blocks"
    try:
        request = json.loads(texts[0])
    except ValueError:
        return f"expected {USAGE}; the text is not JSON"
    if not isinstance(request, dict) or not isinstance(request.get("args", {}), dict):
        return f"expected {USAGE}"
    if request.get("tool") != TOOL:
        return f"unknown tool {request.get('tool')!r}: this agent offers only {TOOL}"
    return request.get("args", {})


def main(argv: list[str] | None = None) -> int:
    """Runs the agent on stdin/stdout until the client closes stdin."""
    parser = argparse.ArgumentParser(prog="python -m reference_impl.acp_agent", description=__doc__.splitlines()[0])
    parser.add_argument("--ask-permission", action="store_true",
                        help="ask session/request_permission before every write (the seed does not)")
    args = parser.parse_args(argv)
    asyncio.run(run_agent(WriteTextFileAgent(ask_permission=args.ask_permission)))
    return 0


__all__ = ["WriteTextFileAgent", "main"]

if __name__ == "__main__":
    sys.exit(main())
