"""Example: an MCP server that only reads files, for ``harness discover``'s tests.

Its tools are ``read_text_file`` (``{"path"}``, answers the text) and ``get_file_info``
(``{"path"}``, answers the size as JSON). A write profile has nothing to bind here: discover must
say so rather than bind a write onto a read. Speaks JSON-RPC by hand, like ``mcp_shaped.py``; with
``--noisy`` it also writes a debug line on stdout before each answer.
"""

from __future__ import annotations

import json
import os
import sys

NOISY = "--noisy" in sys.argv[1:]
PATH = {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}
TOOLS = [
    {"name": "get_file_info", "description": "Retrieve metadata about a file: its size.", "inputSchema": PATH},
    {"name": "read_text_file", "description": "Read the complete contents of a file as text.", "inputSchema": PATH},
]


def send(message: dict) -> None:
    if NOISY:
        sys.stdout.write("debug: answering\n")
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def call(name: str, arguments: dict) -> dict:
    path = arguments.get("path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return {"content": [{"type": "text", "text": f"Error: no such file: {path}"}], "isError": True}
    if name == "get_file_info":
        return {"content": [{"type": "text", "text": json.dumps({"size": os.path.getsize(path)})}]}
    with open(path, encoding="utf-8") as handle:
        return {"content": [{"type": "text", "text": handle.read()}]}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "mcp-read-only", "version": "1.0"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "ping":
            result = {}
        elif method == "tools/call":
            result = call(message["params"].get("name"), message["params"].get("arguments") or {})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
