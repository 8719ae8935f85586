"""Anthropic's text editor tool (``str_replace_based_edit_tool``), as its documentation describes it.

Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool. The module
follows the page section by section: Use the text editor tool (``max_characters``), Text editor tool
commands (view, str_replace, create, insert, and undo_edit where the tool version has it), Implement
the text editor tool (validate paths, handle errors gracefully) and Handle errors (the four error
texts, verbatim). The tool is "schema-less": the model knows its input; the application answers each
call with a ``tool_result`` whose content is text and, for a failure, ``is_error: true``.

A call's normal form is ``{"output": <tool_result text>}`` on success and
``{"error": {"code": None, "message": <tool_result text>}}`` for a result with ``is_error`` (the
documented results carry no code).

Tool versions (the session option ``tool_version``):

- ``text_editor_20250728`` (Claude 4, the default): view, str_replace, create, insert; ``insert``
  takes ``insert_text``; ``max_characters`` truncates what ``view`` shows; no ``undo_edit``.
- ``text_editor_20250124`` (Claude Sonnet 3.7): the same commands and ``undo_edit``; ``insert``
  takes ``new_str`` (the page's earlier text).

Choices where the page is silent (the catalog records each as an open question, it does not assert
them):

1. ``view`` numbers lines as the page's example does (``1: def is_prime(n):``), one per line, and
   shows no final newline.
2. A directory is listed like the computer-use tool the text editor grew from: every entry down to
   two levels, hidden ones left out, one relative path per line, folders ending in ``/``.
3. ``view_range`` outside the file, or with ``start > end``, is an error.
4. ``max_characters`` cuts the file's text before it is numbered; nothing marks the cut.
5. ``create`` on an existing file replaces it; missing parent folders are created.
6. ``str_replace`` without ``new_str`` deletes ``old_str``; an empty ``old_str`` is an error.
7. ``insert`` puts the text at the start of line ``insert_line + 1``; a text without a final line
   break gets one; ``insert_line`` past the last line is an error.
8. ``undo_edit`` restores the file as it was before the last str_replace, insert or create of that
   file in this session (a file ``create`` made is removed); without such an edit it is an error.
9. Paths are taken relative to the workspace (the page's examples are relative: ``primes.py``,
   ``src/``); an absolute path inside the workspace works too; a path leading outside it is refused
   (§Implement the text editor tool: "Validate file paths to prevent directory traversal").
10. Text is UTF-8 and is written with the line endings it has; undecodable bytes survive.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from reference_impl import UnknownTool

#: The profile's one tool.
TOOLS = ("str_replace_based_edit_tool",)

TOOL_VERSIONS = ("text_editor_20250728", "text_editor_20250124")
DEFAULT_VERSION = "text_editor_20250728"
#: §Text editor tool commands / undo_edit: "only available in Claude Sonnet 3.7".
UNDO_VERSIONS = ("text_editor_20250124",)

# --- Handle errors: the documented texts, verbatim -------------------------------------------------

FILE_NOT_FOUND = "Error: File not found"
MULTIPLE_MATCHES = "Error: Found {count} matches for replacement text. Please provide more context to make a unique match."
NO_MATCH = "Error: No match found for replacement. Please check your text and try again."
PERMISSION_DENIED = "Error: Permission denied. Cannot write to file."

# §Example: Fixing a syntax error: the application's answer to a successful str_replace.
REPLACED = "Successfully replaced text at exactly one location."
# §Implement the text editor tool, step "Handle editor tool calls" (the page's earlier text).
UNDO_UNSUPPORTED = "Error: undo_edit command is not supported in Claude 4"

# The page gives no text for these; the wording is the reference's own.
CREATED = "File created successfully at: {path}"
INSERTED = "Text inserted after line {line}."
UNDONE = "Last edit to {path} undone."
OUTSIDE = "Error: Path is outside the working directory: {path}"
NOT_A_FILE = "Error: Not a file: {path}"
BAD_RANGE = "Error: Invalid view_range {view_range}: the file has {count} lines."
BAD_INSERT_LINE = "Error: Invalid insert_line {line}: the file has {count} lines."
EMPTY_OLD_STR = "Error: old_str must not be empty."
NO_HISTORY = "Error: No edit history found for {path}."
UNKNOWN_COMMAND = "Error: Unknown command: {command}"
MISSING = "Error: Parameter `{name}` is required for command: {command}"
WRONG_TYPE = "Error: Parameter `{name}` must be {kind}."

#: command -> required parameters beyond ``command`` and ``path`` (§Text editor tool commands).
REQUIRED = {
    "view": (),
    "str_replace": ("old_str",),
    "create": ("file_text",),
    "insert": ("insert_line",),
    "undo_edit": (),
}

#: §Use the text editor tool: view lists a directory; choice 2.
LIST_DEPTH = 2


class ToolError(Exception):
    """A call the application answers with ``is_error: true``; the message is the result's text."""


class Session:
    """One conversation's editor: its tool version, ``max_characters`` and the undo history."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        options = options or {}
        self.workspace = os.path.realpath(workspace)
        self.version = options.get("tool_version", DEFAULT_VERSION)
        self.max_characters = options.get("max_characters")
        # Choice 8: path -> the file's earlier states (None: it did not exist), newest last.
        self.history: dict[str, list[bytes | None]] = {}

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Runs one tool call and returns its normal form; raises UnknownTool for other tools."""
        if tool not in TOOLS:
            raise UnknownTool(tool)
        try:
            return {"output": self.handle(args)}
        except ToolError as exc:
            return {"error": {"code": None, "message": str(exc)}}
        except PermissionError:
            return {"error": {"code": None, "message": PERMISSION_DENIED}}
        except OSError as exc:  # "Handle errors gracefully": any other failure is a tool result too
            return {"error": {"code": None, "message": f"Error: {exc.strerror or exc}"}}

    # §Implement the text editor tool: "Handle editor tool calls", dispatching on `command`.
    def handle(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        if not isinstance(command, str):
            raise ToolError(MISSING.format(name="command", command=command))
        if command not in REQUIRED:
            raise ToolError(UNKNOWN_COMMAND.format(command=command))
        if command == "undo_edit" and self.version not in UNDO_VERSIONS:
            raise ToolError(UNDO_UNSUPPORTED)
        for name in ("path", *REQUIRED[command]):
            if name not in args:
                raise ToolError(MISSING.format(name=name, command=command))
        path = _string(args, "path")
        if command == "view":
            return self.view(path, args.get("view_range"))
        if command == "str_replace":
            new_str = _string(args, "new_str") if "new_str" in args else ""
            return self.str_replace(path, _string(args, "old_str"), new_str)
        if command == "create":
            return self.create(path, _string(args, "file_text"))
        if command == "insert":
            return self.insert(path, args["insert_line"], self._insert_text(args))
        return self.undo_edit(path)

    def _insert_text(self, args: dict[str, Any]) -> str:
        """§insert: ``insert_text`` (text_editor_20250728); ``new_str`` in the earlier version."""
        preferred = "insert_text" if self.version == DEFAULT_VERSION else "new_str"
        for name in (preferred, "insert_text", "new_str"):
            if name in args:
                return _string(args, name)
        raise ToolError(MISSING.format(name=preferred, command="insert"))

    # --- view ------------------------------------------------------------------------------------

    def view(self, path: str, view_range: Any = None) -> str:
        """A file's lines numbered (a range of them with ``view_range``), or a directory's entries."""
        target = self._resolve(path)
        if os.path.isdir(target):
            # "This parameter only applies when viewing files, not directories": ignored here.
            return _listing(target)
        text = _decode(self._read(target))
        if self.max_characters is not None:
            # §Use the text editor tool: "truncate the file contents to that length".
            text = text[: int(self.max_characters)]
        lines = _lines(text)
        first, last = 1, len(lines)
        if view_range is not None:
            first, last = _range(view_range, len(lines))
        return "\n".join(f"{number}: {lines[number - 1]}" for number in range(first, last + 1))

    # --- str_replace -----------------------------------------------------------------------------

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replaces the one exact occurrence of ``old_str`` (whitespace and indentation included)."""
        target = self._resolve(path)
        if old_str == "":
            raise ToolError(EMPTY_OLD_STR)
        data = self._read(target)
        text = _decode(data)
        # §Handle unique text replacement carefully: count = content.count(old_text).
        count = text.count(old_str)
        if count == 0:
            raise ToolError(NO_MATCH)
        if count > 1:
            raise ToolError(MULTIPLE_MATCHES.format(count=count))
        self._write(target, _encode(text.replace(old_str, new_str, 1)), before=data)
        return REPLACED

    # --- create ----------------------------------------------------------------------------------

    def create(self, path: str, file_text: str) -> str:
        """Writes ``file_text`` as the file's whole content (choice 5: replacing one that exists)."""
        target = self._resolve(path)
        if os.path.isdir(target):
            raise ToolError(NOT_A_FILE.format(path=path))
        before = self._read(target) if os.path.lexists(target) else None
        os.makedirs(os.path.dirname(target), exist_ok=True)
        self._write(target, _encode(file_text), before=before)
        return CREATED.format(path=path)

    # --- insert ----------------------------------------------------------------------------------

    def insert(self, path: str, insert_line: Any, text: str) -> str:
        """Inserts ``text`` after line ``insert_line`` (0: at the beginning of the file)."""
        target = self._resolve(path)
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise ToolError(WRONG_TYPE.format(name="insert_line", kind="an integer"))
        data = self._read(target)
        lines = _decode(data).splitlines(keepends=True)
        if not 0 <= insert_line <= len(lines):
            raise ToolError(BAD_INSERT_LINE.format(line=insert_line, count=len(lines)))
        if text and not text.endswith(("\n", "\r")):
            text += "\n"  # choice 7: the inserted text stays lines of its own
        if insert_line == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n"
        lines.insert(insert_line, text)
        self._write(target, _encode("".join(lines)), before=data)
        return INSERTED.format(line=insert_line)

    # --- undo_edit -------------------------------------------------------------------------------

    def undo_edit(self, path: str) -> str:
        """Reverts the last edit made to the file (text_editor_20250124 only)."""
        target = self._resolve(path)
        states = self.history.get(target)
        if not states:
            raise ToolError(NO_HISTORY.format(path=path))
        before = states.pop()
        if before is None:
            os.remove(target)
        else:
            with open(target, "wb") as handle:
                handle.write(before)
        return UNDONE.format(path=path)

    # --- files -----------------------------------------------------------------------------------

    def _resolve(self, path: str) -> str:
        """Returns the absolute path ``path`` names; refuses one outside the workspace (choice 9)."""
        joined = os.path.join(self.workspace, os.path.expanduser(path) if path.startswith("~") else path)
        resolved = os.path.realpath(joined)
        if resolved != self.workspace and not resolved.startswith(self.workspace + os.sep):
            raise ToolError(OUTSIDE.format(path=path))
        return resolved

    def _read(self, target: str) -> bytes:
        """Returns the file's bytes; a missing file is §File not found."""
        try:
            with open(target, "rb") as handle:
                return handle.read()
        except FileNotFoundError as exc:
            raise ToolError(FILE_NOT_FOUND) from exc
        except IsADirectoryError as exc:
            raise ToolError(NOT_A_FILE.format(path=target)) from exc
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise ToolError(FILE_NOT_FOUND) from exc
            raise

    def _write(self, target: str, data: bytes, before: bytes | None) -> None:
        """Writes the file and remembers what it held before, for undo_edit."""
        with open(target, "wb") as handle:
            handle.write(data)
        self.history.setdefault(target, []).append(before)


def _string(args: dict[str, Any], name: str) -> str:
    value = args[name]
    if not isinstance(value, str):
        raise ToolError(WRONG_TYPE.format(name=name, kind="a string"))
    return value


def _decode(data: bytes) -> str:
    """Choice 10: UTF-8, undecodable bytes kept as surrogates so that they are written back unchanged."""
    return data.decode("utf-8", errors="surrogateescape")


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError as exc:
        raise ToolError(f"Error: the text is not valid Unicode ({exc.reason}).") from exc


def _lines(text: str) -> list[str]:
    """The file's lines without their line breaks; a final line break opens no further line."""
    return [line.rstrip("\r\n") for line in text.splitlines(keepends=True)]


def _range(view_range: Any, count: int) -> tuple[int, int]:
    """§view: two 1-indexed line numbers; -1 as the end means the end of the file (choice 3)."""
    if (not isinstance(view_range, list) or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
        raise ToolError(WRONG_TYPE.format(name="view_range", kind="an array of two integers"))
    first, last = view_range
    last = count if last == -1 else last
    if first < 1 or last < first or last > count:
        raise ToolError(BAD_RANGE.format(view_range=view_range, count=count))
    return first, last


def _listing(directory: str) -> str:
    """Choice 2: the entries two levels down, hidden ones left out, one relative path per line."""
    found: list[str] = []

    def walk(folder: str, prefix: str, depth: int) -> None:
        for name in sorted(os.listdir(folder)):
            if name.startswith("."):
                continue
            full = os.path.join(folder, name)
            is_dir = os.path.isdir(full) and not os.path.islink(full)
            found.append(prefix + name + ("/" if is_dir else ""))
            if is_dir and depth < LIST_DEPTH:
                walk(full, prefix + name + "/", depth + 1)

    walk(directory, "", 1)
    return "\n".join(found)
