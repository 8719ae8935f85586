#!/usr/bin/env python3
"""Example: a complete cmd: adapter in plain Python, standard library only (protocol version 1).

It serves one profile, ``mcp-write-text-file``, with a toy ``write_text_file`` standing in for
your implementation. Replace ``write_text_file`` with a call into your own code and list your
profiles in ``PROFILES``; the protocol loop below stays as it is. Try it:

    harness run --target "cmd:python examples/adapters/minimal_adapter.py" --profile mcp-write-text-file

Rules it follows (docs/cmd-protocol.md): one JSON object per line in, exactly one per line out,
in order; nothing but protocol lines on stdout (diagnostics go to stderr); a tool's failure is
``{"ok": true, "error": ...}``, the adapter's own failure ``{"ok": false, "reason": ...}``.
"""

import json
import os
import sys

PROFILES = ["mcp-write-text-file"]


class ToolError(Exception):
    """A failure the tool reports to its caller (not a failure of the adapter)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def write_text_file(workspace, args):
    """The toy implementation: write the whole content, report what happened."""
    path, content = args["path"], args["content"]
    if not os.path.isabs(path):
        raise ToolError(-32600, f"Path must be absolute: {path}")
    created = not os.path.exists(path)
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(content)
    except PermissionError:
        raise ToolError(-32002, f"Permission denied: {path}") from None
    except FileNotFoundError:
        raise ToolError(-32001, f"Parent directory not found: {os.path.dirname(path)}") from None
    except IsADirectoryError:
        raise ToolError(-32003, f"{path} is a directory") from None
    return {"success": True, "bytes_written": len(content.encode("utf-8")), "created": created}


TOOLS = {"mcp-write-text-file": {"write_text_file": write_text_file}}


def handle(sessions, request):
    """Returns the response to one request."""
    op = request.get("op")
    if op == "hello":
        if request.get("protocol") != 1:
            return {"ok": False, "reason": f"unsupported protocol {request.get('protocol')!r}"}
        return {"ok": True, "name": "minimal-python", "version": "0.1.0", "profiles": PROFILES}
    if op == "open":
        if request["profile"] not in PROFILES:
            return {"ok": False, "reason": f"unknown profile {request['profile']!r}"}
        # All per-session state lives here and starts empty.
        sessions[request["session"]] = {"profile": request["profile"], "workspace": request["workspace"]}
        return {"ok": True}
    if op == "call":
        session = sessions.get(request["session"])
        if session is None:
            return {"ok": False, "reason": f"no open session {request['session']!r}"}
        tool = TOOLS[session["profile"]].get(request["tool"])
        if tool is None:
            return {"ok": False, "reason": f"unknown tool {request['tool']!r}"}
        try:
            return {"ok": True, "output": tool(session["workspace"], request["args"])}
        except ToolError as exc:
            return {"ok": True, "error": {"code": exc.code, "message": exc.message}}
    if op == "close":
        sessions.pop(request["session"], None)
        return {"ok": True}
    if op == "bye":
        return {"ok": True}
    return {"ok": False, "reason": f"unknown op {op!r}"}


def main():
    sessions = {}
    for line in sys.stdin:
        try:
            request = json.loads(line)
            response = handle(sessions, request)
        except Exception as exc:  # the adapter's own failure: say so, keep serving
            print(f"adapter error: {exc!r}", file=sys.stderr)
            request, response = {}, {"ok": False, "reason": f"internal error: {exc!r}"}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()  # one answer per request, sent now
        if request.get("op") == "bye":
            break


if __name__ == "__main__":
    main()
