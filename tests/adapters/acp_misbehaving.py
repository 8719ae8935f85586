"""Example: an ACP agent that misbehaves on command, for testing the acp: target.

``python tests/adapters/acp_misbehaving.py`` speaks ACP (JSON-RPC 2.0, one message per line on stdin
and stdout). It writes the messages by hand, in the shapes the ``agent-client-protocol`` package's
agent side sends, so that it starts in milliseconds: importing that package costs more than a second
of processor time, and the tests start this agent a dozen times. The client under test (the acp:
target) still reads every message with the package and checks it against the ACP schema. Every
prompt is the scripted-prompt JSON ``{"tool": <what>, "args": {...}}``; ``what`` is:

- ``probe``: sends the ``fs/*`` requests listed in ``args.requests`` (``{"method": "read"|"write",
  "path", "line", "limit", "content"}``) and reports each outcome (``{"ok": ...}`` or
  ``{"error": {code, message}}``) as the completed tool call's ``rawOutput``; with
  ``args.permission`` it first asks ``session/request_permission`` and reports the answer too;
  with ``args.swap`` (``{"workspace", "away", "link_to"}``) it first moves its workspace to
  ``away`` and puts a symbolic link to ``link_to`` (a folder outside) in its place; a request whose
  ``method`` is a ``terminal/*`` method is sent as is, with its ``params`` and the session id (the
  outcome: ``{"ok": <result>}``); with ``args.capabilities`` it reports the ``clientCapabilities``
  the client sent in ``initialize``;
- ``hang``: starts a tool call and never ends the turn;
- ``crash``: exits with code 3 in the middle of the turn;
- ``garbage``: writes a line that is not JSON on stdout, then answers normally;
- ``bad-update``: sends a ``session/update`` the ACP schema rejects, then answers normally;
- ``spawn-and-hang``: starts a child process that sleeps (writing its pid to ``args.pidfile``),
  then hangs: the harness must kill both; with ``args.setsid`` the child leaves the agent's
  process group and session, as a daemonising helper would;
- ``no-tool``: answers with a message and no tool call.
- ``write-relative``: writes ``args.content`` to ``args.path`` itself, a relative path resolved
  against its own working folder (as a careless agent does), and reports the call completed.

The end of its input ends it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

#: The ACP protocol version it speaks (the package's PROTOCOL_VERSION).
PROTOCOL_VERSION = 1

#: What it answers to ``initialize``: what the package's InitializeResponse with default capabilities sends.
INITIALIZED = {"protocolVersion": PROTOCOL_VERSION,
               "agentCapabilities": {"loadSession": False,
                                     "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
                                     "mcpCapabilities": {"http": False, "sse": False, "acp": False},
                                     "sessionCapabilities": {}, "auth": {}},
               "authMethods": [], "agentInfo": {"name": "misbehaving", "version": "1"}}

PERMISSION_OPTIONS = [{"optionId": "a1", "name": "Allow", "kind": "allow_once"},
                      {"optionId": "a2", "name": "Always", "kind": "allow_always"},
                      {"optionId": "r1", "name": "Reject", "kind": "reject_once"}]


class Ended(Exception):
    """The client closed the agent's input."""


class Agent:
    def __init__(self) -> None:
        self.sessions = 0
        self.requests = 0
        self.client_capabilities: Any = None
        self.waiting: list[dict[str, Any]] = []  # messages that came while a request of ours was answered

    # -- the wire ------------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        os.write(1, json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def receive(self) -> dict[str, Any]:
        line = sys.stdin.buffer.readline()
        if not line:
            raise Ended
        return json.loads(line)

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Sends a request to the client and returns its answer (``result`` or ``error``)."""
        self.requests += 1
        number = self.requests
        self.send({"id": number, "method": method, "params": params})
        while True:
            message = self.receive()
            if "method" not in message and message.get("id") == number:
                return message
            self.waiting.append(message)

    # -- the agent ------------------------------------------------------------------------------------

    def serve(self) -> None:
        try:
            while True:
                message = self.waiting.pop(0) if self.waiting else self.receive()
                if "method" in message:
                    self.handle(message)
        except Ended:
            return

    def handle(self, message: dict[str, Any]) -> None:
        method, params, number = message["method"], message.get("params") or {}, message.get("id")
        if method == "initialize":
            self.client_capabilities = params.get("clientCapabilities")
            result: Any = INITIALIZED
        elif method == "session/new":
            self.sessions += 1
            result = {"sessionId": f"s{self.sessions}"}
        elif method == "session/prompt":
            result = self.prompt(params)
            if result is None:  # hangs: the turn never ends
                return
        elif number is None:  # a notification (session/cancel): nothing to answer
            return
        else:
            self.send({"id": number, "error": {"code": -32601, "message": "Method not found",
                                               "data": {"method": method}}})
            return
        self.send({"id": number, "result": result})

    def prompt(self, params: dict[str, Any]) -> dict[str, Any] | None:
        session_id = params["sessionId"]
        request = json.loads(params["prompt"][0]["text"])
        what, args = request["tool"], request.get("args", {})
        if what == "no-tool":
            self.update(session_id, {"content": {"text": "I would rather not.", "type": "text"},
                                     "sessionUpdate": "agent_message_chunk"})
            return {"stopReason": "end_turn"}
        self.update(session_id, {"toolCallId": "t1", "title": what, "kind": "other", "status": "pending",
                                 "sessionUpdate": "tool_call"})
        if what == "hang":
            return None
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
            return None
        output: dict[str, Any] = {}
        if what == "write-relative":
            with open(args["path"], "w", encoding="utf-8") as handle:  # where the process runs
                handle.write(args.get("content", ""))
            output = {"written": os.path.abspath(args["path"])}
        if what == "probe":
            if args.get("permission"):
                answer = self.request("session/request_permission", {
                    "sessionId": session_id, "toolCall": {"toolCallId": "t1", "kind": "edit", "title": "probe"},
                    "options": PERMISSION_OPTIONS})
                output["permission"] = answer["result"]["outcome"]
            swap = args.get("swap")
            if swap:
                os.rename(swap["workspace"], swap["away"])
                os.symlink(swap["link_to"], swap["workspace"])
            output["results"] = [self.fs(session_id, item) for item in args.get("requests", [])]
            if args.get("capabilities"):
                output["capabilities"] = self.client_capabilities
        self.update(session_id, {"toolCallId": "t1", "status": "completed", "rawOutput": output,
                                 "sessionUpdate": "tool_call_update"})
        return {"stopReason": "end_turn"}

    def fs(self, session_id: str, item: dict[str, Any]) -> dict[str, Any]:
        if item["method"].startswith("terminal/"):
            answer = self.request(item["method"], {"sessionId": session_id, **item.get("params", {})})
            if "error" in answer:
                return {"error": {"code": answer["error"].get("code"), "message": answer["error"].get("message")}}
            return {"ok": answer["result"]}
        if item["method"] == "read":
            params = {"sessionId": session_id, "path": item["path"]}
            params.update({key: item[key] for key in ("line", "limit") if item.get(key) is not None})
            answer = self.request("fs/read_text_file", params)
        else:
            answer = self.request("fs/write_text_file", {"sessionId": session_id, "path": item["path"],
                                                         "content": item["content"]})
        if "error" in answer:
            return {"error": {"code": answer["error"].get("code"), "message": answer["error"].get("message")}}
        return {"ok": answer["result"]["content"] if item["method"] == "read" else True}


if __name__ == "__main__":
    Agent().serve()
