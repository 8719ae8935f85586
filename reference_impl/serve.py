"""The reference implementation over the cmd: protocol, version 1 (``docs/cmd-protocol.md``).

Run ``python -m reference_impl.serve``: it reads one JSON request per line on standard input and
answers each with exactly one JSON line on standard output, using the very same sessions as the
in-process reference (:func:`reference_impl.open_session`). Nothing else is ever written to
standard output; diagnostics go to standard error.

What's left here is only the protocol's envelope: which op, which session, and turning an adapter
failure (unknown op, profile, session or tool, an internal exception) into ``{"ok": false}``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, BinaryIO

from reference_impl import PROFILES, UnknownTool, __version__, open_session

PROTOCOL = 1
NAME = "reference"


class AdapterFailure(Exception):
    """The adapter cannot carry out a request: answered with ``{"ok": false, "reason": ...}``."""


class Server:
    """Holds the open sessions of one protocol conversation and answers its requests."""

    def __init__(self) -> None:
        self.sessions: dict[str, Any] = {}
        self.done = False

    def handle(self, request: Any) -> dict[str, Any]:
        """Returns the response to one decoded request."""
        if not isinstance(request, dict):
            raise AdapterFailure(f"a request must be a JSON object, got {type(request).__name__}")
        op = request.get("op")
        handler = self.OPS.get(op) if isinstance(op, str) else None
        if handler is None:
            raise AdapterFailure(f"unknown op {op!r}")
        return handler(self, request)

    def hello(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answers the handshake: who we are and which profiles we serve."""
        if request.get("protocol") != PROTOCOL:
            raise AdapterFailure(
                f"unsupported protocol version {request.get('protocol')!r}; this adapter speaks {PROTOCOL}"
            )
        return {"ok": True, "name": NAME, "version": __version__, "profiles": list(PROFILES)}

    def open(self, request: dict[str, Any]) -> dict[str, Any]:
        """Opens a session of a profile on a workspace."""
        name = _string(request, "session")
        profile = _string(request, "profile")
        workspace = _string(request, "workspace")
        if name in self.sessions:
            raise AdapterFailure(f"session {name!r} is already open")
        if profile not in PROFILES:
            raise AdapterFailure(f"unknown profile {profile!r}; this adapter serves {', '.join(PROFILES)}")
        if not os.path.isabs(workspace):
            raise AdapterFailure(f"workspace must be an absolute path, got {workspace!r}")
        options = request.get("options") or {}
        if not isinstance(options, dict):
            raise AdapterFailure("options must be a JSON object")
        self.sessions[name] = open_session(profile, workspace, options)
        return {"ok": True}

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Runs one tool call in a session and wraps its normal form."""
        session = self._session(request)
        tool = _string(request, "tool")
        args = request.get("args")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise AdapterFailure("args must be a JSON object")
        try:
            result = session.call(tool, args)
        except UnknownTool as exc:
            raise AdapterFailure(f"unknown tool {tool!r}: {exc}") from None
        response = {"ok": True}
        response.update(result)
        return response

    def close(self, request: dict[str, Any]) -> dict[str, Any]:
        """Ends a session and forgets its state."""
        name = _string(request, "session")
        if self.sessions.pop(name, None) is None:
            raise AdapterFailure(f"no open session {name!r}")
        return {"ok": True}

    def bye(self, request: dict[str, Any]) -> dict[str, Any]:
        """Ends the conversation; the process exits once the answer is written."""
        self.sessions.clear()
        self.done = True
        return {"ok": True}

    def _session(self, request: dict[str, Any]) -> Any:
        name = _string(request, "session")
        try:
            return self.sessions[name]
        except KeyError:
            raise AdapterFailure(f"no open session {name!r}") from None

    OPS = {"hello": hello, "open": open, "call": call, "close": close, "bye": bye}


def _string(request: dict[str, Any], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise AdapterFailure(f"{key!r} must be a string, got {value!r}")
    return value


def answer(server: Server, line: bytes) -> bytes:
    """Returns the encoded response line to one request line; never raises."""
    try:
        try:
            request = json.loads(line)
        except ValueError as exc:
            raise AdapterFailure(f"request is not JSON: {exc}") from None
        response = server.handle(request)
    except AdapterFailure as exc:
        response = {"ok": False, "reason": str(exc)}
    except Exception as exc:  # an internal crash is the adapter's failure, never a dead process
        traceback.print_exc(file=sys.stderr)
        response = {"ok": False, "reason": f"internal error: {type(exc).__name__}: {exc}"}
    try:
        return json.dumps(response).encode("ascii") + b"\n"
    except (TypeError, ValueError) as exc:
        return json.dumps({"ok": False, "reason": f"response is not JSON-serialisable: {exc}"}).encode() + b"\n"


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answers requests from ``stdin`` on ``stdout`` until ``bye`` or end of input."""
    server = Server()
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(answer(server, line))
        stdout.flush()
        if server.done:
            break


def main() -> None:
    """Entry point of ``python -m reference_impl.serve``."""
    # The protocol owns file descriptor 1: anything else that prints (a stray print in a tool, a
    # library's warning) goes to stderr instead of corrupting the stream.
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, protocol_out)


if __name__ == "__main__":
    main()
