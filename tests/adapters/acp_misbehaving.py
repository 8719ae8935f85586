"""Example: an ACP agent that misbehaves on command, for testing the acp: target.

``python tests/adapters/acp_misbehaving.py`` speaks ACP (the ``agent-client-protocol`` package's agent
side). Every prompt is the scripted-prompt JSON ``{"tool": <what>, "args": {...}}``; ``what`` is:

- ``probe``: sends the ``fs/*`` requests listed in ``args.requests`` (``{"method": "read"|"write",
  "path", "line", "limit", "content"}``) and reports each outcome (``{"ok": ...}`` or
  ``{"error": {code, message}}``) as the completed tool call's ``rawOutput``; with
  ``args.permission`` it first asks ``session/request_permission`` and reports the answer too;
- ``hang``: starts a tool call and never ends the turn;
- ``crash``: exits with code 3 in the middle of the turn;
- ``garbage``: writes a line that is not JSON on stdout, then answers normally;
- ``bad-update``: sends a ``session/update`` the ACP schema rejects, then answers normally;
- ``spawn-and-hang``: starts a child process that sleeps (writing its pid to ``args.pidfile``),
  then hangs: the harness must kill both; with ``args.setsid`` the child leaves the agent's
  process group and session, as a daemonising helper would;
- ``no-tool``: answers with a message and no tool call.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
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
from acp.schema import AgentCapabilities, Implementation, PermissionOption


class Misbehaving(Agent):
    def __init__(self) -> None:
        self.sessions = 0
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="misbehaving", version="1"))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self.sessions += 1
        return NewSessionResponse(session_id=f"s{self.sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        pass

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        request = json.loads(prompt[0].text)
        what, args = request["tool"], request.get("args", {})
        if what == "no-tool":
            await self.conn.session_update(session_id, update_agent_message_text("I would rather not."))
            return PromptResponse(stop_reason="end_turn")
        await self.conn.session_update(session_id, start_tool_call("t1", what, kind="other", status="pending"))
        if what == "hang":
            await asyncio.sleep(3600)
        if what == "crash":
            os._exit(3)
        if what == "garbage":
            os.write(1, b"this is not json-rpc\n")
        if what == "bad-update":
            os.write(1, json.dumps({"jsonrpc": "2.0", "method": "session/update",
                                    "params": {"sessionId": session_id, "update": {"sessionUpdate": "tool_call"}}}).encode() + b"\n")
        if what == "spawn-and-hang":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                     start_new_session=bool(args.get("setsid")))
            with open(args["pidfile"], "w") as handle:
                handle.write(str(child.pid))
            await asyncio.sleep(3600)
        output: dict[str, Any] = {}
        if what == "probe":
            if args.get("permission"):
                answer = await self.conn.request_permission(
                    session_id=session_id, tool_call=update_tool_call("t1", title="probe", kind="edit"),
                    options=[PermissionOption(option_id="a1", name="Allow", kind="allow_once"),
                             PermissionOption(option_id="a2", name="Always", kind="allow_always"),
                             PermissionOption(option_id="r1", name="Reject", kind="reject_once")])
                output["permission"] = answer.outcome.model_dump(mode="json", by_alias=True, exclude_none=True)
            output["results"] = [await self._fs(session_id, item) for item in args.get("requests", [])]
        await self.conn.session_update(session_id, update_tool_call("t1", status="completed", raw_output=output))
        return PromptResponse(stop_reason="end_turn")

    async def _fs(self, session_id: str, item: dict[str, Any]) -> dict[str, Any]:
        try:
            if item["method"] == "read":
                response = await self.conn.read_text_file(session_id=session_id, path=item["path"],
                                                          line=item.get("line"), limit=item.get("limit"))
                return {"ok": response.content}
            await self.conn.write_text_file(session_id=session_id, path=item["path"], content=item["content"])
            return {"ok": True}
        except RequestError as exc:
            return {"error": {"code": exc.code, "message": str(exc)}}


if __name__ == "__main__":
    asyncio.run(run_agent(Misbehaving()))
