"""The reference implementation as an MCP server over stdio: ``python -m reference_impl.mcp_server``.

(``--http PORT`` serves the same over Streamable HTTP on ``http://127.0.0.1:PORT/mcp``.)

Serves the tools of the four contracts (``Read``, ``Write``, ``Edit``; ``workspace_create_file``;
``write_text_file``; ``read_file``, ``read_many_files``, ``write_file``, ``safe_patch``) with the
official ``mcp`` SDK's low-level server. Every call runs on the very same reference sessions as the
in-process target (``reference_impl.open_session``): this module only translates normal forms to
MCP and back, it implements no tool.

Normal form -> MCP (the mcp: target of the harness reads them back the same way):

- ``{"output": <object>}`` -> ``structuredContent`` with the object, and its JSON as text content;
- ``{"output": <string>}`` -> the string as text content (Claude Code's tool_result text);
- ``{"output": <other JSON>}`` (a list, a number) -> its JSON as text content (structured content
  must be an object before protocol version 2026-07-28);
- ``{"error": {"code": <int>, ...}}`` -> a JSON-RPC error with that code and message: seed 003's
  ``write_text_file`` failures (``-32002 Permission denied: /x``, ...) travel this way, as the seed asks;
- ``{"error": {"code": null, ...}}`` -> a result with ``isError: true`` and the message as text;
- ``{"error": {"code": "<name>", ...}}`` -> the same, with ``structuredContent`` ``{"code", "message"}``
  so that gemini-safe-patch's errno names survive;
- ``"events"`` -> ``_meta["file-tool-conformance/events"]`` of the result, or the same key in the
  JSON-RPC error's ``data``.

Sessions. A reference session holds per-session state (Claude Code's read set, gemini's version
counter), and each scenario of the harness needs a fresh one on its own workspace. Starting one
server per scenario would cost a Python start-up and the SDK's import each time (about 1.5 s here),
so the server is started once and keys its sessions by the request's ``_meta`` entry
``file-tool-conformance/session``: ``{"id", "profile", "workspace", "options"}``. The harness sends it
with every call; a new key opens a new session on that workspace with those options, and the
least recently used sessions beyond :data:`MAX_SESSIONS` are dropped. A call without that entry
(an agent using the server for real) uses one session per profile for the whole connection,
rooted at ``--root`` (default: the current directory). ``_meta`` is the protocol's place for
out-of-band data; no tool or argument was added to any contract for it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import OrderedDict
from typing import Any

import reference_impl

EVENTS_KEY = "file-tool-conformance/events"
SESSION_KEY = "file-tool-conformance/session"
MAX_SESSIONS = 32

_STRING = {"type": "string"}
_PATH = {"type": "string", "description": "Absolute path of the file"}

#: profile -> tool -> (description, input schema). Names and arguments are the seeds'.
TOOLS: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "claude-code": {
        "Read": ("Reads a file; returns its lines numbered like `cat -n`.",
                 {"type": "object", "required": ["file_path"],
                  "properties": {"file_path": _PATH, "offset": {"type": "number"}, "limit": {"type": "number"}}}),
        "Write": ("Writes a file (an existing file must have been read first).",
                  {"type": "object", "required": ["file_path", "content"],
                   "properties": {"file_path": _PATH, "content": _STRING}}),
        "Edit": ("Replaces an exact string in a file that was read.",
                 {"type": "object", "required": ["file_path", "old_string", "new_string"],
                  "properties": {"file_path": _PATH, "old_string": _STRING, "new_string": _STRING,
                                 "replace_all": {"type": "boolean"}}}),
    },
    "aptix-tul-004": {
        "workspace_create_file": ("Creates a file under the workspace root (TUL-004).",
                                  {"type": "object", "required": ["path", "content"],
                                   "properties": {"path": {"type": "string", "description": "Workspace-relative path"},
                                                  "content": _STRING, "overwrite": {"type": "boolean"}}}),
    },
    "mcp-write-text-file": {
        "write_text_file": ("Write complete content to a text file (creates or overwrites)",
                            {"type": "object", "required": ["path", "content"],
                             "properties": {"path": {"type": "string", "description": "Absolute path to the file"},
                                            "content": {"type": "string", "description": "Complete file content to write"}}}),
    },
    "gemini-safe-patch": {
        "read_file": ("Reads a text file; returns its content, version and SHA-256.",
                      {"type": "object", "required": ["file_path"], "properties": {"file_path": _PATH}}),
        "read_many_files": ("Reads several text files; returns one versioned state per file.",
                            {"type": "object", "required": ["paths"],
                             "properties": {"paths": {"type": "array", "items": _STRING}}}),
        "write_file": ("Writes a text file unconditionally.",
                       {"type": "object", "required": ["file_path", "content"],
                        "properties": {"file_path": _PATH, "content": _STRING}}),
        "safe_patch": ("Applies a unified diff if the file still has the hash it was read with.",
                       {"type": "object", "required": ["file_path", "unified_diff", "base_content_sha256"],
                        "properties": {"file_path": _PATH, "unified_diff": _STRING, "base_content_sha256": _STRING}}),
    },
    "anthropic-text-editor": {
        "str_replace_based_edit_tool": (
            "Anthropic's text editor tool: view, str_replace, create, insert (and undo_edit in text_editor_20250124).",
            {"type": "object", "required": ["command", "path"],
             "properties": {"command": {"type": "string", "enum": ["view", "str_replace", "create", "insert", "undo_edit"]},
                            "path": _STRING, "view_range": {"type": "array", "items": {"type": "integer"}},
                            "old_str": _STRING, "new_str": _STRING, "file_text": _STRING,
                            "insert_line": {"type": "integer"}, "insert_text": _STRING}}),
    },
    "codex-apply-patch": {
        "apply_patch": ("Codex's apply_patch: applies a *** Begin Patch ... *** End Patch patch to the working folder.",
                        {"type": "object", "required": ["input"], "properties": {"input": _STRING}}),
    },
}

#: The experimental capability naming the profiles served (read by the harness's mcp: target).
CAPABILITY_KEY = "file-tool-conformance"
#: tool -> profile (the contracts share no tool name).
PROFILE_OF = {tool: profile for profile, tools in TOOLS.items() for tool in tools}


class Sessions:
    """The reference sessions of one connection, keyed by the harness's session entry."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._open: OrderedDict[str, Any] = OrderedDict()

    def get(self, profile: str, entry: Any) -> Any:
        """Returns the session of ``profile`` for ``entry`` (the ``_meta`` session entry, or None)."""
        workspace, options = self.root, {}
        if isinstance(entry, dict):
            workspace = str(entry.get("workspace") or self.root)
            options = dict(entry.get("options") or {})
        key = json.dumps([profile, entry], sort_keys=True, default=str)
        session = self._open.get(key)
        if session is None:
            session = reference_impl.open_session(profile, workspace, options)
            self._open[key] = session
            while len(self._open) > MAX_SESSIONS:
                self._open.popitem(last=False)
        else:
            self._open.move_to_end(key)
        return session


def _defer_package_inits(*names: str) -> None:
    """Registers each package of ``names`` with its ``__init__`` not yet run, so that importing a
    submodule does not first import the rest of the SDK (the ``mcp`` package's ``__init__`` imports
    its clients and every server, with their HTTP stack); the first use of any other name of the
    package runs its ``__init__`` then. A package already imported is left as it is."""
    import importlib.util

    for name in names:
        spec = importlib.util.find_spec(name) if name not in sys.modules else None
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            continue
        module = importlib.util.module_from_spec(spec)

        def __getattr__(attr: str, module: Any = module, spec: Any = spec) -> Any:
            if attr.startswith("__"):
                raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
            if module.__dict__.pop("__getattr__", None) is not None:
                spec.loader.exec_module(module)
            return getattr(module, attr)
        module.__getattr__ = __getattr__
        sys.modules[name] = module


def build_server(root: str):
    """Returns the low-level MCP server serving every reference tool on sessions rooted at ``root``."""
    _defer_package_inits("mcp", "mcp.server")  # the low-level server's submodules alone
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError

    sessions = Sessions(root)
    listing = [
        types.Tool(name=name, description=description, input_schema=schema)
        for tools in TOOLS.values() for name, (description, schema) in tools.items()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        profile = PROFILE_OF.get(params.name)
        if profile is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        meta = params.meta or {}
        try:
            session = sessions.get(profile, meta.get(SESSION_KEY))
        except ValueError as exc:  # unknown session options
            raise MCPError(types.INVALID_PARAMS, f"Invalid session options: {exc}") from None
        return to_mcp(session.call(params.name, dict(params.arguments or {})), types, MCPError)

    server = Server("file-tool-conformance-reference", version=reference_impl.__version__,
                    on_list_tools=list_tools, on_call_tool=call_tool)
    # The SDK wraps every request in an OpenTelemetry span by default (a no-op without an exporter,
    # yet a tenth of a call here); its documented opt-out is an empty middleware list.
    server.middleware = []
    return server


def to_mcp(normal: dict[str, Any], types: Any, error_class: Any) -> Any:
    """Returns the CallToolResult of a normal form, or raises the JSON-RPC error it stands for."""
    events = normal.get("events")
    meta = {EVENTS_KEY: events} if events is not None else None
    error = normal.get("error")
    if error is not None:
        code, message = error.get("code"), str(error.get("message", ""))
        if isinstance(code, int) and not isinstance(code, bool):
            raise error_class(code, message, meta)
        structured = {"code": code, "message": message} if code is not None else None
        return types.CallToolResult(content=[types.TextContent(text=message)], structured_content=structured,
                                    is_error=True, _meta=meta)
    output = normal.get("output")
    if isinstance(output, str):
        return types.CallToolResult(content=[types.TextContent(text=output)], _meta=meta)
    text = json.dumps(output, ensure_ascii=False)
    structured = output if isinstance(output, dict) else None
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, _meta=meta)


class _PipeLines:
    """This process's stdin as the text lines the SDK's ``stdio_server`` iterates, read on the event loop.

    The SDK's own stdin (``anyio.wrap_file``) reads every line in a worker thread and writes and
    flushes every answer in two more: three thread hand-overs per call, most of a call's cost in this
    server. Given these streams, ``stdio_server`` still parses every line with the SDK's message
    types and serialises every answer itself; only the bytes move without threads.

    The end of input is passed on only once every request read has been answered: the SDK's server
    cancels its in-flight handlers when its input ends, and read on the loop, a call and the end of
    input right behind it arrive together (the SDK's threaded stdin was merely slow enough to hide
    this). Lines are split on ``\n``, ``\r\n`` and a bare ``\r``, as the SDK's text wrapper does.
    """

    def __init__(self, reader: Any, pending: _Pending) -> None:
        self._reader = reader
        self._pending = pending
        self._queued: list[bytes] = []

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        if not self._queued:
            try:
                line = await self._reader.readline()
            except ValueError:  # a line over MAX_LINE: nothing after it can be framed, so the input ends here
                print(f"mcp_server: an input line over {MAX_LINE} bytes; treating it as the end of input",
                      file=sys.stderr)
                line = b""
            if not line:
                await self._pending.answered()
                raise StopAsyncIteration
            if b"\r" in line:
                self._queued = line.replace(b"\r\n", b"\n").replace(b"\r", b"\n").splitlines(keepends=True)[::-1]
            else:
                self._queued = [line]
        line = self._queued.pop()
        self._pending.read(line)
        return line.decode("utf-8", "replace")  # as the SDK's own stdin decodes


_ID = r'(-?[0-9]+|"(?:[^"\\]|\\.)*")'
#: The start of a request line as JSON serialisers usually write it (``jsonrpc``, ``id``, ``method``).
_REQUEST_HEAD = re.compile(rb'\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID.encode() + rb'\s*,\s*"method"\s*:')
#: The start of an answer as the SDK serialises it.
_ANSWER_HEAD = re.compile(r'\{"jsonrpc":"2\.0","id":' + _ID + r',"(?:result|error)"')


class _Pending:
    """The ids of the requests read and not yet answered, so the end of input can wait for them."""

    #: Seconds the loop may sit idle, with requests unanswered and nothing written, before the end of
    #: input is passed on anyway (a request the SDK never answers must not keep the server alive).
    GRACE = 10.0

    def __init__(self) -> None:
        import asyncio
        self._ids: dict[str, int] = {}
        self._changed = asyncio.Event()

    @staticmethod
    def _key(value: Any) -> str:
        return json.dumps(value)

    @classmethod
    def _key_of(cls, text: str) -> str:
        """The key of an id as written: a plain non-negative integer is its own JSON form (the usual
        case, decided without a parse); anything else is parsed and written again."""
        if text.isdigit() and text.isascii() and (text == "0" or text[0] != "0"):
            return text
        return cls._key(json.loads(text))

    def read(self, line: bytes) -> None:
        """Notes a request (or a cancellation) among the lines read."""
        if b'"id"' not in line and b"cancelled" not in line:
            return  # a notification or a blank line: nothing to wait for
        head = _REQUEST_HEAD.match(line, 0, 512)  # the usual order: no second parse of a whole file's content
        if head is not None:
            self._add(self._key_of(head.group(1).decode("utf-8", "replace")))
            return
        try:
            message = json.loads(line)
        except ValueError:
            return  # the SDK answers what it cannot parse with an error of no id
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return
        if "id" in message:
            self._add(self._key(message["id"]))
        elif message["method"] == "notifications/cancelled":  # a cancelled request is not answered
            params = message.get("params")
            if isinstance(params, dict):
                self._done(self._key(params.get("requestId")))

    def wrote(self, text: str) -> None:
        """Notes an answer written (the SDK serialises ``jsonrpc``, ``id``, then ``result`` or ``error``)."""
        if self._ids:
            head = _ANSWER_HEAD.match(text, 0, 512)
            if head is not None:
                self._done(self._key_of(head.group(1)))
        self._changed.set()

    def _add(self, key: str) -> None:
        self._ids[key] = self._ids.get(key, 0) + 1

    def _done(self, key: str) -> None:
        count = self._ids.pop(key, 0)
        if count > 1:
            self._ids[key] = count - 1

    async def answered(self) -> None:
        """Returns once every request read was answered, or the loop sat idle GRACE seconds with none."""
        import asyncio
        import time
        idle, tick = 0.0, 0.25
        while self._ids and idle < self.GRACE:
            self._changed.clear()
            began = time.monotonic()
            try:
                await asyncio.wait_for(self._changed.wait(), tick)
                idle = 0.0
            except TimeoutError:
                if time.monotonic() - began < 2 * tick:  # the loop was free, not busy on a handler
                    idle += tick


class _PipeWriter:
    """This process's stdout as the text file the SDK's ``stdio_server`` writes, without a thread.

    Its write buffer's limits are zero, so ``flush`` returns only once every byte is in the pipe:
    what the SDK flushed is not lost when the process ends right after."""

    def __init__(self, writer: Any, pending: _Pending) -> None:
        self._writer = writer
        self._pending = pending
        writer.transport.set_write_buffer_limits(0, 0)

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))
        self._pending.wrote(text)

    async def flush(self) -> None:
        await self._writer.drain()


#: The longest line the server reads (a tools/call carrying a whole file's content).
MAX_LINE = 256 * 1024 * 1024


async def _pipe_streams() -> tuple[Any, Any] | None:
    """Returns stdin and stdout for ``stdio_server`` when both are pipes or sockets, else None (a file or
    terminal: the SDK's own streams). Stray prints (sys.stdout) then go to stderr, as under the SDK's claim."""
    import asyncio
    import stat
    for fd in (0, 1):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return None
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", closefd=False))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(1, "wb", closefd=False))
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    sys.stdout = sys.stderr
    pending = _Pending()
    return _PipeLines(reader, pending), _PipeWriter(writer, pending)


async def serve(root: str) -> None:
    """Serves one MCP connection on this process's stdin and stdout."""
    _defer_package_inits("mcp", "mcp.server")  # before the first submodule: stdio alone, not the whole SDK
    from mcp.server.stdio import stdio_server
    server = build_server(root)
    streams = await _pipe_streams()
    stdin, stdout = streams if streams is not None else (None, None)
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        # The profiles this server implements, so a harness skips the others instead of failing them.
        options = server.create_initialization_options(
            experimental_capabilities={CAPABILITY_KEY: {"profiles": list(TOOLS)}})
        await server.run(read_stream, write_stream, options)


def serve_http(root: str, port: int) -> None:
    """Serves Streamable HTTP on ``http://127.0.0.1:<port>/mcp`` until interrupted."""
    import uvicorn
    app = build_server(root).streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    """Runs the server until its client closes the connection (stdio) or it is interrupted (HTTP)."""
    import anyio
    parser = argparse.ArgumentParser(prog="python -m reference_impl.mcp_server", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.getcwd(),
                        help="workspace of calls that name no session (default: the current directory)")
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        print(f"--root: not a directory: {root}", file=sys.stderr)
        return 2
    if args.http is not None:
        serve_http(root, args.http)
    else:
        anyio.run(serve, root)
    return 0


if __name__ == "__main__":
    status = main()
    # The interpreter's teardown of what the SDK's import built (its pydantic models: some hundred
    # thousand objects) takes about a quarter of a second, and a client closing the connection waits
    # for this process to end; nothing of ours is left to clean up, so the process ends at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
