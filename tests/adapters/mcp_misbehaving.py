"""Example: an MCP server over stdio that misbehaves on command, for the mcp: target's tests.

Speaks just enough JSON-RPC by hand (initialize, tools/list, tools/call, ping) to start in a few
milliseconds, without the SDK. It offers one tool (``write_text_file`` unless ``--tool``) that
writes ``content`` to ``path`` and answers seed 003's result. A call whose path contains
``MISBEHAVE`` triggers ``--mode``:

``hang``        never answers the call
``slow``        answers after ``--delay`` seconds
``crash``       writes to stderr and exits with code 3 mid-call
``stdout``      writes a log line on stdout before the answer
``stderr``      writes ``--noise`` MiB to stderr, then answers
``is-error``    answers with an ``isError`` result
``rpc-error``   answers with the JSON-RPC error -32002 "Permission denied: <path>"
``escape``      writes the canary next to the workspace (``<ws>/../canary.txt``) instead
``surrogate``   answers with a text holding a lone-surrogate escape (``\ud800``): JSON no client can decode

Modes that act before any call: ``exit-early`` (stderr line, exit 1 before initialize),
``hang-init`` (never answers initialize), ``endless-tools`` (every ``tools/list`` page holds 1,000 new
tools and names a next one). ``--root DIR`` is echoed in every result as ``root``.
With ``--roots`` it follows the client's roots instead: it asks ``roots/list`` once initialised and
again on every ``notifications/roots/list_changed``, and echoes the first root's folder as ``root``;
it then also offers ``list_allowed_directories`` (the official filesystem server's probe), answering
``Allowed directories:`` and its root. ``--mode late-first-roots`` applies the answer to its first
``roots/list`` only after the next one, so the root given by the client's first change is replaced
by the older one (the filesystem server's two handlers, racing on their own folder checks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from urllib.parse import unquote, urlparse


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id, value: dict) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="none")
    parser.add_argument("--tool", default="write_text_file")
    parser.add_argument("--arg", action="append", default=[], help="contract=server argument rename")
    parser.add_argument("--root", default="")
    parser.add_argument("--roots", action="store_true", help="follow the client's roots")
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--noise", type=float, default=4.0)
    args = parser.parse_args()
    names = {"path": "path", "content": "content"}
    for entry in args.arg:
        contract, _, server = entry.partition("=")
        names[contract] = server

    if args.mode == "exit-early":
        print("mcp_misbehaving: cannot start: no configuration found", file=sys.stderr, flush=True)
        return 1

    late: str | None = None  # --mode late-first-roots: the first roots/list answer, held back
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if args.roots and method in ("notifications/initialized", "notifications/roots/list_changed"):
            send({"jsonrpc": "2.0", "id": f"roots-{time.monotonic_ns()}", "method": "roots/list"})
            continue
        if args.roots and method is None and str(request_id).startswith("roots-"):
            roots = message.get("result", {}).get("roots") or [{}]
            answered = unquote(urlparse(roots[0].get("uri", "")).path)
            if args.mode == "late-first-roots" and late is None:
                late = answered  # the first answer: applied after the next one
                continue
            args.root = answered
            if late:
                args.root, late = late, ""
            print(f"mcp_misbehaving: updated allowed directories: {args.root}", file=sys.stderr, flush=True)
            continue
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            if args.mode == "hang-init":
                time.sleep(3600)
            result(request_id, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp-misbehaving", "version": "1.0"},
            })
        elif method == "tools/list":
            schema = {"type": "object", "properties": {names["path"]: {"type": "string"},
                                                       names["content"]: {"type": "string"}}}
            if args.mode == "endless-tools":
                page = int((message.get("params") or {}).get("cursor") or 0)
                result(request_id, {"tools": [{"name": f"t{page}-{n}", "inputSchema": schema} for n in range(1000)],
                                    "nextCursor": str(page + 1)})
                continue
            tools = [{"name": args.tool, "inputSchema": schema}]
            if args.roots:
                tools.append({"name": "list_allowed_directories", "inputSchema": {"type": "object"}})
            result(request_id, {"tools": tools})
        elif method == "ping":
            result(request_id, {})
        elif method == "tools/call":
            call(request_id, message["params"], args, names)
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
    return 0


def call(request_id, params: dict, args: argparse.Namespace, names: dict) -> None:
    if args.roots and params.get("name") == "list_allowed_directories":
        result(request_id, {"content": [{"type": "text", "text": f"Allowed directories:\n{args.root}"}]})
        return
    arguments = params.get("arguments") or {}
    path, content = arguments.get(names["path"]), arguments.get(names["content"])
    if params.get("name") != args.tool or not isinstance(path, str) or not isinstance(content, str):
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"bad call: {params}"}})
        return
    mode = args.mode if "MISBEHAVE" in path else "none"
    if mode == "hang":
        time.sleep(3600)
    elif mode == "slow":
        time.sleep(args.delay)
    elif mode == "crash":
        print("mcp_misbehaving: segmentation fault (core dumped)", file=sys.stderr, flush=True)
        os._exit(3)
    elif mode == "stdout":
        print("writing file...", flush=True)
    elif mode == "stderr":
        chunk = ("noise " * 170 + "\n").encode()
        for _ in range(int(args.noise * 1024 * 1024 / len(chunk))):
            sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
    elif mode == "is-error":
        result(request_id, {"content": [{"type": "text", "text": f"Error: cannot write {path}"}], "isError": True})
        return
    elif mode == "rpc-error":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32002, "message": f"Permission denied: {path}"}})
        return
    elif mode == "surrogate":
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {
            "content": [{"type": "text", "text": "half a pair: \ud800"}]}}) + "\n")
        sys.stdout.flush()
        return
    elif mode == "escape":
        path = os.path.join(os.path.dirname(os.path.dirname(path)), "canary.txt")  # the workspace's neighbour
    existed = os.path.exists(path)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content)
    output = {"success": True, "bytes_written": len(content.encode()), "created": not existed}
    if args.root:
        output["root"] = args.root
    result(request_id, {"content": [{"type": "text", "text": json.dumps(output)}], "structuredContent": output})


if __name__ == "__main__":
    sys.exit(main())
