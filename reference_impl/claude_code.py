"""Claude Code's Read, Write and Edit, as ``shared/seeds/001-claude-code-read-write-edit.md`` describes them.

The module follows the seed section by section: Tool Schemas, Read Tool Behavior, Write Tool
Behavior, Edit Tool Behavior, Path Resolution and the Session State Model. Where the seed fixes a
text, the text here is the seed's; where it says "TBD", "likely" or gives no text at all, the text
is the one Claude Code 2.1.330 was captured saying (docs/claude-code-findings.md), marked
``captured``; behaviour the seed leaves open is marked ``Open question N`` or ``seed-derived``, and
the catalog only records it. The captured texts are the CLI's without its ``<tool_use_error>``
wrapper: the normal form's ``error`` already says the call failed.

A call's normal form is ``{"output": <tool_result>}`` on success and
``{"error": {"code": None, "message": <tool_result text>}}`` on failure (Claude Code's tool results
carry no error code). The tool result is text, except for images and PDFs, whose result is a list
of content blocks (the seed: "returned as visual content to the model").

Choices for the seed's open questions (the catalog records them, it does not assert them):

1. Messages the seed leaves TBD ("File not found", "likely No match found", "likely Multiple
   matches found", "likely rejected") are the texts captured from Claude Code 2.1.330: "File does
   not exist. ...", "String to replace not found in file. ...", "Found N matches of the string to
   replace, ...", "No changes to make: ..."; so are the success texts the seed does not give.
2. The line number is right-justified to width 6 and simply grows past 999,999 (``str.rjust``).
3. A file with a NUL byte in its first 8 KiB (and no UTF-16 byte-order mark) is binary: Read
   fails (with the CLI's "This tool cannot read binary files" text) and does not add it to the read set.
4. Write creates missing parent directories (the seed's unconfirmed statement).
5. Symlinks are followed for content; the read set holds the path as given, normalised lexically
   (``os.path.normpath``), so a link and its target are two entries.
6. Text is UTF-8; a UTF-8 or UTF-16 byte-order mark is honoured; undecodable bytes show as U+FFFD
   in Read; undecodable UTF-8 bytes survive an Edit unchanged. Write always writes UTF-8.
7. Read shows ``\\r\\n`` as a line break (the ``\\r`` is not content); Write writes the content's
   line endings exactly; Edit matches the raw text, so ``\\n`` does not match ``\\r\\n``.
8. An empty ``old_string`` is rejected.
9. ``~`` is not expanded: ``~/file.txt`` is relative and rejected.
10. Write writes the content exactly; no trailing newline is added.

Beyond the seed: an offset past the end of the file returns a warning instead of lines; offsets
below 1 read from line 1; unknown or mistyped arguments are input-validation errors.
"""

from __future__ import annotations

import base64
import errno
import json
import os
from typing import Any

from reference_impl import UnknownTool

#: The profile's tools, in the seed's order.
TOOLS = ("Read", "Write", "Edit")


# --- Tool Schemas -------------------------------------------------------------------------------

#: tool -> parameter -> (JSON type, required). The seed's schemas, verbatim.
SCHEMAS: dict[str, dict[str, tuple[str, bool]]] = {
    "Read": {"file_path": ("string", True), "offset": ("number", False), "limit": ("number", False)},
    "Write": {"file_path": ("string", True), "content": ("string", True)},
    "Edit": {
        "file_path": ("string", True),
        "old_string": ("string", True),
        "new_string": ("string", True),
        "replace_all": ("boolean", False),
    },
}


# --- Read Tool Behavior -------------------------------------------------------------------------

#: §Default Limits.
DEFAULT_LIMIT = 2000
DEFAULT_OFFSET = 1
MAX_LINE_LENGTH = 2000

#: §Output Format: "observed: 6 characters total for number + spaces".
LINE_NUMBER_WIDTH = 6
#: §Output Format: U+2192 RIGHTWARDS ARROW, "NOT a tab character".
ARROW = "\u2192"

#: §Special File Handling. Seed-derived wording: "empty string + system warning about empty file".
EMPTY_FILE_WARNING = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
#: Beyond the seed: an offset past the last line.
SHORT_FILE_WARNING = (
    "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). "
    "The file has {count} lines.</system-reminder>"
)

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
PDF_TYPE = "application/pdf"
NOTEBOOK_SUFFIX = ".ipynb"
#: Open question 3: how much of the file is searched for a NUL byte.
BINARY_SNIFF_BYTES = 8192

# --- Write / Edit Tool Behavior: the seed's messages ---------------------------------------------

# §Write Tool Behavior / State Requirements, verbatim.
NOT_READ_WRITE = "File has not been read yet. Read it first before writing to it."
# §Edit Tool Behavior / State Requirements, verbatim.
NOT_READ_EDIT = "File has not been read yet. Read it first before editing it."
# §Edit Tool Behavior / Modification Detection, verbatim.
MODIFIED_EDIT = "File has been unexpectedly modified. Read it again before attempting to edit it."
# §Write Tool Behavior / Error Conditions gives only "File has been unexpectedly modified"; the
# rest follows the Edit message.
MODIFIED_WRITE = "File has been unexpectedly modified. Read it again before attempting to write it."
# §Read / Error Conditions: "File not found error (exact message TBD)". Captured; the CLI names its
# working directory, which for the reference is the session's workspace.
NOT_FOUND = "File does not exist. Note: your current working directory is {cwd}."
# §Path Resolution: "All three tools require absolute paths"; the wording is seed-derived.
NOT_ABSOLUTE = "File path must be absolute, not relative: {path}"
# §Edit / Error Conditions: "needs exact message — likely 'No match found' or similar". Captured.
NO_MATCH = "String to replace not found in file.\nString: {old}"
# §Edit / Error Conditions: "needs exact message — likely 'Multiple matches found' or similar". Captured.
MULTIPLE_MATCHES = (
    "Found {count} matches of the string to replace, but replace_all is false. To replace all "
    "occurrences, set replace_all to true. To replace only one occurrence, please provide more "
    "context to uniquely identify the instance.\nString: {old}"
)
# §Edit / Error Conditions: "old_string == new_string: Likely rejected — schema says 'must differ'".
# Captured (the words of the #1986 report too).
NO_CHANGES = "No changes to make: old_string and new_string are exactly the same."
# Open question 8.
EMPTY_OLD_STRING = "old_string must not be empty."
# Open question 3 ("Unclear — likely returns raw bytes or errors"): the text is captured; the CLI
# names the extension (``a binary .bin file``).
BINARY = (
    "This tool cannot read binary files. The file appears to be a binary {kind}file. Use a skill for "
    "this file type if one is available, or a shell command or script that can read the format."
)

# Success texts: the seed gives none. Captured (Write and Edit with the file in the model's context).
IN_CONTEXT = " (file state is current in your context — no need to Read it back)"
WRITE_CREATED = "File created successfully at: {path}" + IN_CONTEXT
WRITE_UPDATED = "The file {path} has been updated successfully." + IN_CONTEXT
EDIT_DONE = "The file {path} has been updated successfully." + IN_CONTEXT
EDIT_ALL_DONE = "The file {path} has been updated. All occurrences were successfully replaced." + IN_CONTEXT

# §Tool Schemas: how an argument that does not fit is refused. Captured for a missing and an
# unexpected parameter; the type mismatch text is the reference's own.
MISSING_PARAMETER = "InputValidationError: {tool} failed due to the following issue:\nThe required parameter `{name}` is missing"
UNEXPECTED_PARAMETER = "InputValidationError: {tool} failed due to the following issue:\nAn unexpected parameter `{name}` was provided"


class ToolError(Exception):
    """A tool failed; the message is the tool result the model sees."""


class FileMissing(ToolError):
    """The file does not exist; the session words it (`NOT_FOUND` names the working directory)."""


# --- Session State Model ------------------------------------------------------------------------


class Session:
    """One agent session: the read set and the mtimes recorded at read (and write) time."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        self.workspace = workspace  # the profile defines no options
        # SessionState { read_files: Set<AbsolutePath>; file_mtimes: Map<AbsolutePath, Timestamp> }
        self.read_files: set[str] = set()
        self.file_mtimes: dict[str, int] = {}

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Runs one tool call and returns its normal form; raises UnknownTool for other tools."""
        handlers = {"Read": self.read, "Write": self.write, "Edit": self.edit}
        if tool not in handlers:
            raise UnknownTool(tool)
        try:
            _validate(tool, args)
            return {"output": handlers[tool](**args)}
        except FileMissing:
            return {"error": {"code": None, "message": NOT_FOUND.format(cwd=self.workspace)}}
        except ToolError as exc:
            return {"error": {"code": None, "message": str(exc)}}

    # on Read(path)
    def read(self, file_path: str, offset: int | float | None = None, limit: int | float | None = None) -> Any:
        """Returns the file in ``cat -n`` style, lines ``offset`` .. ``offset + limit - 1``."""
        path = _absolute(file_path)
        if limit is not None and limit < 1:
            raise ToolError("InputValidationError: Read: `limit` must be at least 1")
        data, mtime = _read_bytes(path)  # content = read_file(path)
        shown = _format_for_model(path, data, offset, limit)  # raises for a binary file
        self.read_files.add(path)  # state.read_files.add(path)
        self.file_mtimes[path] = mtime  # state.file_mtimes[path] = get_mtime(path)
        return shown  # return format_with_line_numbers(content)

    # on Write(path, content)
    def write(self, file_path: str, content: str) -> str:
        """Creates or completely overwrites the file; an existing file must have been read first."""
        path = _absolute(file_path)
        mtime = _mtime(path)
        existed = mtime is not None
        if existed:  # if file_exists(path):
            if path not in self.read_files:
                raise ToolError(NOT_READ_WRITE)
            if mtime != self.file_mtimes.get(path):
                raise ToolError(MODIFIED_WRITE)
        # Open question 4: parents are created, as §Write / Semantics says (unconfirmed there).
        _write_bytes(path, _encode(content, "content"), make_parents=True)
        self.file_mtimes[path] = _mtime(path)  # state.file_mtimes[path] = get_mtime(path)
        return (WRITE_UPDATED if existed else WRITE_CREATED).format(path=path)

    # on Edit(path, old_string, new_string, replace_all)
    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        """Replaces the one exact occurrence of ``old_string`` (or all of them with ``replace_all``)."""
        path = _absolute(file_path)
        if old_string == "":
            raise ToolError(EMPTY_OLD_STRING)
        if old_string == new_string:
            raise ToolError(NO_CHANGES)
        if path not in self.read_files:
            raise ToolError(NOT_READ_EDIT)
        data, mtime = _read_bytes(path)  # one open: the bytes, and the mtime of exactly those bytes
        if mtime != self.file_mtimes.get(path):
            raise ToolError(MODIFIED_EDIT)
        text, encoding = _decode(data)
        # Exact matching (§Matching Semantics): plain substring search on the decoded text, which
        # for UTF-8 is the same as byte-for-byte search; occurrences do not overlap.
        count = text.count(old_string)
        if count == 0:
            raise ToolError(NO_MATCH.format(old=old_string))
        if count > 1 and not replace_all:
            raise ToolError(MULTIPLE_MATCHES.format(count=count, old=old_string))

        new_text = text.replace(old_string, new_string, -1 if replace_all else 1)
        _write_bytes(path, _encode_as(new_text, encoding), make_parents=False)
        self.file_mtimes[path] = _mtime(path)
        return (EDIT_ALL_DONE if replace_all else EDIT_DONE).format(path=path)


# --- Tool Schemas: argument checks --------------------------------------------------------------

_JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _validate(tool: str, args: Any) -> None:
    """Raises ToolError unless ``args`` fits the tool's schema (required, types, no extras)."""
    schema = SCHEMAS[tool]
    if not isinstance(args, dict):
        raise ToolError(f"InputValidationError: {tool} expects an object of parameters")
    for name in args:
        if name not in schema:
            raise ToolError(UNEXPECTED_PARAMETER.format(tool=tool, name=name))
    for name, (kind, required) in schema.items():
        if name not in args or args[name] is None:
            if required:
                raise ToolError(MISSING_PARAMETER.format(tool=tool, name=name))
            continue
        if not _JSON_TYPES[kind](args[name]):
            raise ToolError(f"InputValidationError: {tool}: the parameter `{name}` must be a {kind}")


# --- Path Resolution ----------------------------------------------------------------------------


def _absolute(file_path: str) -> str:
    """Returns the lexically normalised path; rejects relative paths (no ``~`` expansion)."""
    # os.path.isabs follows the host: ``C:/...`` is absolute on Windows only.
    if not os.path.isabs(file_path):
        raise ToolError(NOT_ABSOLUTE.format(path=file_path))
    return os.path.normpath(file_path)


# --- File system --------------------------------------------------------------------------------


def _os_error(exc: OSError, operation: str, path: str) -> ToolError:
    """Returns the tool error for an OS-level failure, carrying the OS error (``EACCES: ...``)."""
    if isinstance(exc, FileNotFoundError) and operation == "open":
        return FileMissing(path)
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    return ToolError(f"{code}: {exc.strerror or exc}, {operation} '{path}'")


def _read_bytes(path: str) -> tuple[bytes, int]:
    """Returns the file's bytes and the st_mtime_ns of the file that was read."""
    try:
        with open(path, "rb") as handle:
            mtime = os.fstat(handle.fileno()).st_mtime_ns
            return handle.read(), mtime
    except OSError as exc:
        raise _os_error(exc, "open", path) from exc


def _mtime(path: str) -> int | None:
    """Returns get_mtime(path): st_mtime_ns, or None when the file is gone."""
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_error(exc, "stat", path) from exc


def _write_bytes(path: str, data: bytes, *, make_parents: bool) -> None:
    """Writes ``data`` to ``path`` in place (an existing file keeps its mode)."""
    try:
        if make_parents:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise _os_error(exc, "open", path) from exc


# --- Encodings (open question 6) ------------------------------------------------------------------

# The byte order is named explicitly, so an Edit writes a big-endian file back big-endian.
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_UTF16_BOMS = {codec: bom for bom, codec in _BOMS if codec.startswith("utf-16")}


def _detect(data: bytes) -> str:
    """Returns the codec for ``data``: the one its byte-order mark names, else UTF-8."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec
    return "utf-8"


def _decode(data: bytes) -> tuple[str, str]:
    """Returns the text (without its byte-order mark) and its codec.

    Undecodable UTF-8 bytes become surrogates, so they survive an Edit unchanged; undecodable UTF-16
    becomes U+FFFD.
    """
    codec = _detect(data)
    if codec in _UTF16_BOMS:
        return data[2:].decode(codec, errors="replace"), codec
    return data.decode(codec, errors="surrogateescape"), codec


def _encode(text: str, what: str) -> bytes:
    """Returns ``text`` as UTF-8; a lone surrogate is an input error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"InputValidationError: `{what}` is not valid Unicode text ({exc.reason})") from exc


def _encode_as(text: str, codec: str) -> bytes:
    """Returns ``text`` in ``codec`` (with its byte-order mark), keeping escaped bytes as they were."""
    try:
        if codec in _UTF16_BOMS:
            return _UTF16_BOMS[codec] + text.encode(codec)
        return text.encode(codec, errors="surrogateescape")
    except UnicodeEncodeError as exc:
        raise ToolError(f"InputValidationError: the new text is not valid Unicode ({exc.reason})") from exc


def _is_binary(data: bytes) -> bool:
    """Returns True for a file Read will not show as text (open question 3)."""
    return _detect(data) == "utf-8" and b"\x00" in data[:BINARY_SNIFF_BYTES]


# --- Read: Output Format and Special File Handling ------------------------------------------------


def _format_for_model(path: str, data: bytes, offset: int | float | None, limit: int | float | None) -> Any:
    """Returns what Read shows the model for ``data``."""
    if not data:
        return EMPTY_FILE_WARNING  # "Returns empty string + system warning about empty file"
    suffix = os.path.splitext(path)[1].lower()
    if suffix in IMAGE_TYPES:
        return [_base64_block("image", IMAGE_TYPES[suffix], data)]
    if suffix == ".pdf":
        # "Processed page-by-page, text + visual extraction": the document goes to the model whole.
        return [_base64_block("document", PDF_TYPE, data)]
    if _is_binary(data):
        raise ToolError(BINARY.format(kind=f"{suffix} " if suffix else ""))
    text, _ = _decode(data)
    if not text:  # a file holding only a byte-order mark is empty too
        return EMPTY_FILE_WARNING
    if suffix == NOTEBOOK_SUFFIX:
        cells = _notebook_cells(text)
        if cells is not None:
            return cells
    return format_with_line_numbers(_displayable(text), offset, limit)


def format_with_line_numbers(text: str, offset: int | float | None = None, limit: int | float | None = None) -> str:
    """Returns ``text`` as ``{number right-justified to 6}→{content}`` lines, ``cat -n`` style."""
    lines = split_lines(text)
    start = max(int(offset if offset is not None else DEFAULT_OFFSET), 1)  # 1-based
    count = max(int(limit if limit is not None else DEFAULT_LIMIT), 1)
    if start > len(lines):
        return SHORT_FILE_WARNING.format(offset=start, count=len(lines))
    chosen = lines[start - 1 : start - 1 + count]
    return "\n".join(
        f"{str(number).rjust(LINE_NUMBER_WIDTH)}{ARROW}{line[:MAX_LINE_LENGTH]}"
        for number, line in enumerate(chosen, start=start)
    )


def split_lines(text: str) -> list[str]:
    """Returns the lines of ``text``: split at ``\\n`` (``\\r\\n`` counts as one break), no final empty line."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _displayable(text: str) -> str:
    """Returns ``text`` with undecodable bytes shown as U+FFFD."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _base64_block(kind: str, media_type: str, data: bytes) -> dict[str, Any]:
    """Returns one content block carrying ``data`` (the Messages API shape)."""
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}}


def _notebook_cells(text: str) -> str | None:
    """Returns every cell of a Jupyter notebook with its outputs, or None when it is not one."""
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    parts = []
    for index, cell in enumerate(cells):
        source = _joined(cell.get("source", ""))
        kind = cell.get("cell_type", "code")
        block = [f'<cell id="{cell.get("id", index)}" type="{kind}">{source}</cell>']
        for output in cell.get("outputs", []) or []:
            block.append(f"<output>{_output_text(output)}</output>")
        parts.append("\n".join(block))
    return "\n".join(parts)


def _joined(value: Any) -> str:
    """Returns a notebook multi-line string (a string or a list of strings) as one string."""
    return "".join(value) if isinstance(value, list) else str(value)


def _output_text(output: dict[str, Any]) -> str:
    """Returns the text of one notebook cell output."""
    if "text" in output:
        return _joined(output["text"])
    data = output.get("data") or {}
    if "text/plain" in data:
        return _joined(data["text/plain"])
    if output.get("output_type") == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    return ", ".join(sorted(data)) or str(output.get("output_type", ""))
