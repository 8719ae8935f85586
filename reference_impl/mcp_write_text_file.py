"""Reference implementation of the MCP tool ``write_text_file`` (``shared/seeds/003-mcp-write-text-file.md``).

Reads like the seed's Rust: validate the parameters, note whether the file existed (for
``created``), write the whole content (``fs::write``: create or truncate, then write; the seed asks
for no atomicity), and map an I/O error to the JSON-RPC error of the seed's "Error Handling" table:

====================  ======  ==============================================
errno                 code    message
====================  ======  ==============================================
EACCES, EPERM         -32002  ``Permission denied: {path}``
(relative path)       -32600  ``Path must be absolute: {path}``
ENOENT                -32001  ``Parent directory not found: {parent_path}``
EISDIR                -32003  ``{path} is a directory``
ENOSPC, EDQUOT        -32005  ``Disk full: cannot write {bytes} bytes to {path}``
EROFS                 -32002  ``Read-only filesystem: {path}``
anything else         -32603  the OS error text, as the Rust ``McpError::internal(e.to_string())``
====================  ======  ==============================================

``{path}`` is the path as the caller gave it, ``{parent_path}`` its parent as Rust's
``Path::parent`` gives it, ``{bytes}`` the content's UTF-8 length. ``bytes_written`` is that same
length (the Rust ``content.len()``): bytes, not characters. The content is written exactly as
given: no line-ending or BOM changes.

Where the seed is silent (each an ``open_question`` scenario in the catalog):

- A missing or non-string ``path`` or ``content`` is JSON-RPC's ``-32602`` "Invalid params: ...",
  a code the seed's table does not list.
- ``ENOTDIR`` (a parent component is a file) falls to the Rust ``_`` arm: ``-32603``.

Events: the call also returns the two ACP ``session/update`` notifications of the seed's "ACP Event
Mapping": a ``toolCall`` (``kind: write``, ``status: pending``, ``title: write_text_file``,
``locations``, ``rawInput``) and then a ``toolCallUpdate``. ``rawInput.content`` is truncated when its
UTF-8 form exceeds 10 KB (10,240 bytes): it becomes the longest prefix of whole characters whose
UTF-8 form is at most 10,240 bytes, with no marker. The update's status is ``completed`` with the
result as ``rawOutput`` on success. On failure the seed names no status; the reference sends
``failed`` (ACP's ``ToolCallStatus`` for a failed call) with ``rawOutput: {"error": {...}}``.

Session options: ``session_id`` (the events' ``sessionId``, default ``"session-1"``). Tool call ids
are ``call-1``, ``call-2``, ... in the order of the session's calls.

Only plain ``os``/``open`` calls touch the disk, so the module runs unchanged on pyfakefs.
"""

from __future__ import annotations

import errno
import os
import posixpath

from reference_impl import UnknownTool

TOOLS = ("write_text_file",)

RAW_INPUT_LIMIT = 10 * 1024

# The seed's error table.
PERMISSION_DENIED = -32002
INVALID_PATH = -32600
NOT_FOUND = -32001
IS_DIRECTORY = -32003
DISK_FULL = -32005
READ_ONLY = -32002
# JSON-RPC's own codes for what the table does not cover.
INVALID_PARAMS = -32602
INTERNAL = -32603


class McpError(Exception):
    """A JSON-RPC error: ``code`` and ``message`` as the client sees them."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_dict(self) -> dict:
        """Returns the ``error`` object."""
        return {"code": self.code, "message": self.message}


class Session:
    """One MCP session; its only state is the ACP session id and the tool call counter."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        options = dict(options or {})
        self.session_id = options.pop("session_id", "session-1")
        if options:
            raise ValueError(f"unknown mcp-write-text-file options: {sorted(options)}")
        self.workspace = workspace
        self.calls = 0

    def call(self, tool: str, args: dict) -> dict:
        """Runs one tool call and returns its normal form with the two ACP events."""
        if tool not in TOOLS:
            raise UnknownTool(tool)
        self.calls += 1
        call_id = f"call-{self.calls}"
        args = args if isinstance(args, dict) else {}
        begin = self._update({
            "type": "toolCall",
            "id": call_id,
            "kind": "write",
            "status": "pending",
            "title": "write_text_file",
            "locations": [{"path": args.get("path")}],
            "rawInput": raw_input(args),
        })
        try:
            result = write_text_file(args)
        except McpError as failure:
            end = self._update({"type": "toolCallUpdate", "id": call_id,
                                "fields": {"status": "failed", "rawOutput": {"error": failure.as_dict()}}})
            return {"error": failure.as_dict(), "events": [begin, end]}
        end = self._update({"type": "toolCallUpdate", "id": call_id,
                            "fields": {"status": "completed", "rawOutput": result}})
        return {"output": result, "events": [begin, end]}

    def _update(self, update: dict) -> dict:
        """Returns one ``session/update`` notification."""
        return {"method": "session/update", "params": {"sessionId": self.session_id, "update": update}}


def write_text_file(params: dict) -> dict:
    """Writes ``params["content"]`` to ``params["path"]``; returns the result or raises McpError."""
    # 1. Validate params.
    path, data = validate(params)

    # 2. Check if the file exists (for the ``created`` flag); an error counts as "did not exist".
    file_existed = os.path.exists(path)

    # 3. Write (the local-filesystem path of the seed; there is no ACP client to try first here).
    write_local(path, data)

    return {"success": True, "bytes_written": len(data), "created": not file_existed}


def validate(params: dict) -> tuple[str, bytes]:
    """Returns the path and the content's UTF-8 bytes; raises the seed's McpError for bad params."""
    path, content = params.get("path"), params.get("content")
    if not isinstance(path, str):
        raise McpError(INVALID_PARAMS, "Invalid params: path must be a string")
    if not isinstance(content, str):
        raise McpError(INVALID_PARAMS, "Invalid params: content must be a string")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise McpError(INVALID_PARAMS, "Invalid params: content is not valid Unicode") from None
    if not path.startswith("/"):
        raise McpError(INVALID_PATH, f"Path must be absolute: {path}")
    if "\x00" in path:
        raise McpError(INVALID_PARAMS, "Invalid params: path contains NUL")
    return path, data


def write_local(path: str, data: bytes) -> None:
    """The seed's ``fs::write``: create or truncate ``path``, write ``data``; an OSError becomes McpError."""
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise _map_os_error(exc, path, len(data)) from None


def raw_input(args: dict) -> dict:
    """Returns ``rawInput`` for the toolCall event: the arguments, content cut to 10 KB of UTF-8."""
    shown = dict(args)
    content = shown.get("content")
    if isinstance(content, str):
        shown["content"] = truncate_utf8(content, RAW_INPUT_LIMIT)
    return shown


def truncate_utf8(text: str, limit: int) -> str:
    """Returns ``text`` if its UTF-8 form fits ``limit`` bytes, else its longest prefix that does."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def parent_path(path: str) -> str:
    """Returns the parent of ``path`` as Rust's ``Path::parent`` displays it ("" for the root, which has none)."""
    trimmed = path.rstrip("/")
    if not trimmed:
        return ""
    parent = posixpath.dirname(trimmed)
    if not parent:
        return ""
    return parent.rstrip("/") or "/"


def _map_os_error(exc: OSError, path: str, size: int) -> McpError:
    """Returns the seed table's error for an OS error raised by the write."""
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return McpError(PERMISSION_DENIED, f"Permission denied: {path}")
    if code == errno.EROFS:
        return McpError(READ_ONLY, f"Read-only filesystem: {path}")
    if code == errno.ENOENT:
        return McpError(NOT_FOUND, f"Parent directory not found: {parent_path(path)}")
    if code == errno.EISDIR:
        return McpError(IS_DIRECTORY, f"{path} is a directory")
    if code in (errno.ENOSPC, errno.EDQUOT):
        return McpError(DISK_FULL, f"Disk full: cannot write {size} bytes to {path}")
    return McpError(INTERNAL, f"{exc.strerror or exc} (os error {code})")
