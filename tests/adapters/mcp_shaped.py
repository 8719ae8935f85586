"""Example: an MCP server whose write tool is shaped nothing like seed 003's, for the binding tests.

Speaks just enough JSON-RPC by hand (initialize, tools/list, tools/call, ping) to start in a few
milliseconds. Its one tool, ``save_files``, takes ``{"files": [{"file_path", "text"}], "mode":
"rewrite" | "append"}`` (a strict inputSchema: every key required, no others), and answers
every outcome as a plain text result, never ``isError``:

- success: ``{"result": {"written": [{"path", "bytes", "new"}]}}`` as JSON text;
- failure: ``Error: <what>`` (``path must be absolute``, ``ENOENT parent missing``, ``EISDIR``).

It does not check its own inputSchema: a call it cannot read is answered ``Error: bad call``.
"""

from __future__ import annotations

import json
import os
import sys

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["files", "mode"],
    "properties": {
        "files": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object", "additionalProperties": False, "required": ["file_path", "text"],
                "properties": {"file_path": {"type": "string"}, "text": {"type": "string"}},
            },
        },
        "mode": {"enum": ["rewrite", "append"]},
    },
}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(request_id, value: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": value}]}})


def save(arguments: dict) -> str:
    files, mode = arguments.get("files"), arguments.get("mode")
    if not isinstance(files, list) or mode not in ("rewrite", "append"):
        return "Error: bad call"
    written = []
    for entry in files:
        path, content = entry.get("file_path"), entry.get("text")
        if not isinstance(path, str) or not isinstance(content, str):
            return "Error: bad call"
        if not os.path.isabs(path):
            return f"Error: path must be absolute: {path}"
        if os.path.isdir(path):
            return f"Error: EISDIR {path}"
        if not os.path.isdir(os.path.dirname(path)):
            return f"Error: ENOENT parent missing: {os.path.dirname(path)}"
        new = not os.path.exists(path)
        with open(path, "w" if mode == "rewrite" else "a", encoding="utf-8") as handle:
            handle.write(content)
        written.append({"path": path, "bytes": len(content.encode()), "new": new})
    return json.dumps({"result": {"written": written}})


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp-shaped", "version": "1.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
                {"name": "save_files", "description": "Saves files.", "inputSchema": SCHEMA}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/call" and message["params"].get("name") == "save_files":
            text(request_id, save(message["params"].get("arguments") or {}))
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
