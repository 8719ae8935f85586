"""Reference implementation of seed 004, "A Robust, State-Verified File Modification Toolchain".

The module follows the seed section by section: the session version counter (§4.1, §5.1),
the versioned ``read_file`` (§4.1, §5.2) and ``read_many_files`` (§4.1, §5.3), ``write_file``
(named in §1 and §4.1, otherwise unspecified) and ``safe_patch`` with its four exit points
(§4.2, §5.4). The CLI's ``@`` operator (§5.5), the confirmation UI (§5.6), tool registration
(§5.7) and the tool descriptions (§6) belong to the CLI, not to the tools, and are not modelled.

Where the seed leaves a choice open, this module decides as follows (the catalog records each of
these as an open question rather than asserting it):

* Paths: an absolute path is used as given; a relative one is resolved against the workspace.
  ``file_path`` in every returned state is the absolute path.
* Content is the file's bytes decoded as UTF-8, nothing normalised (CRLF stays CRLF); ``sha256``
  is the lower-case hex SHA-256 of the bytes on disk. A file that is not UTF-8 is an error.
* ``read_many_files`` takes ``paths`` (a list of file paths, no globs). All files are read before
  any version is taken, so a failing call consumes no version.
* ``write_file(file_path, content)`` writes unconditionally (no hash lock), creates missing parent
  directories, consumes one version and returns the unified shape of §4.2:
  ``{"success": true, "message": "File written successfully.", "latest_file_state": {...}}``.
* Every ``safe_patch`` response carries a ``latest_file_state`` and consumes exactly one version,
  failures included: §4.2 gives every response "the new version number from the in-memory
  counter". A successful patch takes one version for its read-and-write, not two.
* ``safe_patch`` on a missing file treats the live content as empty (its hash is the hash of the
  empty string, §7.4 "File Creation Case"); success creates the file and its parents.
* Hunks are relocated in file order: each one is searched at or after the end of the one before
  it, nearest to where its header (moved by the previous hunk's correction) points. Header line
  counts are not corrected: counts that disagree with the hunk's body make the diff unparseable.
* A diff the library cannot parse, a diff with no hunks, or a diff with more than one file section
  fails at the "fix the diff" stage with the Invalid Diff message. File names in the diff's
  headers are ignored: ``file_path`` names the file. A diff may omit the ``---``/``+++`` headers.
  Lines are compared exactly, EOLs included: an LF diff does not match CRLF lines.
* The hash comparison ignores surrounding blanks and letter case of ``base_content_sha256``.

Tool errors (``{"error": {"code", "message"}}``) use errno names as codes: ``EINVAL`` for a
missing or mistyped argument, ``ENOENT`` for a missing file (read_file, read_many_files),
``EISDIR`` for a directory, ``EILSEQ`` for a file that is not UTF-8 text, and the errno name of
any other OS error (``EACCES``, ``ENOSPC``, ...).
"""

from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import dataclass
from typing import Any

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from reference_impl import UnknownTool

TOOLS = ("read_file", "read_many_files", "write_file", "safe_patch")

#: The exact messages of §5 step 4.
PATCH_APPLIED = "Patch applied successfully."
STATE_MISMATCH = "State Mismatch: File has changed on disk since it was last read."
INVALID_DIFF = (
    "Invalid Diff: The provided diff content does not match the file's content. "
    "The context or lines to be removed may be incorrect."
)
INTERNAL_ERROR = (
    "Internal Error: The corrected patch failed to apply. Please review the diff for subtle errors."
)
#: write_file's message; the seed names none.
FILE_WRITTEN = "File written successfully."

#: §7.4: the base hash that stands for a file that does not exist yet.
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

NO_NEWLINE_MARKER = "\\ No newline at end of file\n"


class ToolError(Exception):
    """A tool failed; becomes the call's ``error`` normal form."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# §4.1 Versioning, §5.1 Introduce Session State Service


class SessionStateService:
    """The session-scoped version counter: starts at 0, so the first version handed out is 1."""

    def __init__(self) -> None:
        self.version_counter = 0

    def next_version(self) -> int:
        """Increments the counter and returns its new value."""
        self.version_counter += 1
        return self.version_counter


class Session:
    """One gemini-cli session rooted at ``workspace``, with its own version counter."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        self.workspace = os.path.abspath(workspace)  # the profile defines no options
        self.state = SessionStateService()

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Runs one tool call and returns its normal form; raises UnknownTool for other names."""
        handlers = {
            "read_file": self.read_file,
            "read_many_files": self.read_many_files,
            "write_file": self.write_file,
            "safe_patch": self.safe_patch,
        }
        if tool not in handlers:
            raise UnknownTool(tool)
        try:
            return {"output": handlers[tool](args if isinstance(args, dict) else {})}
        except ToolError as exc:
            return {"error": {"code": exc.code, "message": exc.message}}

    # §4.1 read_file Logic, §5.2 Upgrade ReadFileTool

    def read_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """Reads a file and returns it with a new version number and its SHA-256."""
        path = self._path(_string_arg(args, "file_path"))
        return self._file_state(path, _read_text_file(path))

    # §4.1 read_many_files Logic, §5.3 Upgrade ReadManyFilesTool

    def read_many_files(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Reads every path in ``paths`` and returns one versioned state per file, in order."""
        paths = args.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise ToolError("EINVAL", "Argument 'paths' must be a list of non-empty strings.")
        resolved = [self._path(p) for p in paths]
        contents = [_read_text_file(p) for p in resolved]  # read all first: failure takes no version
        return [self._file_state(p, data) for p, data in zip(resolved, contents)]

    # §1 / §4.1 write_file: a file-write operation that takes a version

    def write_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """Writes ``content`` to ``file_path`` and returns the written state."""
        path = self._path(_string_arg(args, "file_path"))
        content = args.get("content")
        if not isinstance(content, str):
            raise ToolError("EINVAL", "Argument 'content' must be a string.")
        data = _utf8(content, "content")
        _write_file(path, data)
        return {"success": True, "message": FILE_WRITTEN, "latest_file_state": self._file_state(path, data)}

    # §4.2 The safe_patch Tool, §5.4 Implement SafePatchTool

    def safe_patch(self, args: dict[str, Any]) -> dict[str, Any]:
        """Verifies the base hash, fixes the diff's line numbers, applies it strictly and writes."""
        path = self._path(_string_arg(args, "file_path"))
        unified_diff = _string_arg(args, "unified_diff", allow_empty=True)
        base_sha256 = _string_arg(args, "base_content_sha256", allow_empty=True)

        # 1. State Verification (Hash Check)
        live = _read_live_file(path)
        if _sha256(live) != base_sha256.strip().lower():
            return self._patch_result(False, STATE_MISMATCH, path, live)
        original = live.decode("utf-8")

        # 2. "Fix the Diff" Stage
        corrected_diff = fix_diff(unified_diff, original)
        if corrected_diff is None:
            return self._patch_result(False, INVALID_DIFF, path, live)

        # 3. "Apply Strict Patch" Stage (looked up at call time so tests can force a failure)
        patched = apply_patch(original, corrected_diff)
        if patched is None:
            return self._patch_result(False, INTERNAL_ERROR, path, live)

        # 4. Success
        data = _utf8(patched, "unified_diff")
        _write_file(path, data)
        return self._patch_result(True, PATCH_APPLIED, path, data)

    # shared helpers

    def _path(self, path: str) -> str:
        """Returns the absolute path; a relative one is taken from the workspace root."""
        return os.path.normpath(path if os.path.isabs(path) else os.path.join(self.workspace, path))

    def _file_state(self, path: str, data: bytes) -> dict[str, Any]:
        """The versioned file object of §4.1; takes the next version number."""
        return {
            "file_path": path,
            "version": self.state.next_version(),
            "sha256": _sha256(data),
            "content": data.decode("utf-8"),
        }

    def _patch_result(self, success: bool, message: str, path: str, data: bytes) -> dict[str, Any]:
        """The unified return signature of §4.2."""
        return {"success": success, "message": message, "latest_file_state": self._file_state(path, data)}


# §5.4 step 2: the "Fix the Diff" utility


@dataclass
class Hunk:
    """One hunk: its header's old-side start and the lines of each side, with their EOLs."""

    old_start: int
    lines: list[tuple[str, str]]  # (" " | "-" | "+", line text including its EOL, if any)

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects in the original: context and removals."""
        return [text for kind, text in self.lines if kind in " -"]

    @property
    def new(self) -> list[str]:
        """The lines the hunk leaves behind: context and additions."""
        return [text for kind, text in self.lines if kind in " +"]

    @property
    def old_index(self) -> int:
        """The 0-based index of the hunk's first old line, as its header says."""
        # An old side of length 0 names the line *after* which the new lines go.
        return max(self.old_start if not self.old else self.old_start - 1, 0)


def parse_hunks(unified_diff: str) -> list[Hunk] | None:
    """Parses a one-file unified diff with unidiff; returns None when it is unusable."""
    text = unified_diff if unified_diff.endswith("\n") else unified_diff + "\n"
    lines = split_lines(text)
    first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
    if first_hunk is None:
        return None
    if not any(line.startswith("--- ") for line in lines[:first_hunk]):
        lines = ["--- a\n", "+++ b\n"] + lines  # a bare hunk list: unidiff wants file headers
    try:
        patch = PatchSet(lines)
    except UnidiffParseError:
        return None
    if len(patch) != 1 or len(patch[0]) == 0:
        return None
    hunks = []
    for parsed in patch[0]:
        entries: list[tuple[str, str]] = []
        for line in parsed:
            if line.line_type == "\\":
                # "\ No newline at end of file": the line before it has no EOL on its side.
                if entries and entries[-1][1].endswith("\n"):
                    kind, value = entries[-1]
                    entries[-1] = (kind, value[:-1])
            elif line.line_type in (" ", "-", "+"):
                entries.append((line.line_type, line.value))
        hunks.append(Hunk(parsed.source_start, entries))
    return hunks


def fix_diff(unified_diff: str, original: str) -> str | None:
    """Returns ``unified_diff`` with every hunk's line numbers corrected against ``original``.

    Each hunk is located by its context and removal lines, at or after the end of the hunk before
    it; among several matches the one nearest to where its header (shifted by the previous hunk's
    correction) points wins. Returns None when a hunk's lines are not in the original.
    """
    hunks = parse_hunks(unified_diff)
    if hunks is None:
        return None
    lines = split_lines(original)
    located: list[tuple[int, Hunk]] = []
    floor = 0
    shift = 0
    for hunk in hunks:
        index = _locate(lines, hunk, hunk.old_index + shift, floor)
        if index is None:
            return None
        located.append((index, hunk))
        shift = index - hunk.old_index
        floor = index + len(hunk.old)
    return format_diff(located)


def _locate(lines: list[str], hunk: Hunk, expected: int, floor: int) -> int | None:
    """The index where ``hunk.old`` occurs in ``lines`` nearest to ``expected``, not before ``floor``."""
    old = hunk.old
    if not old:
        index = min(max(expected, floor), len(lines))
        # New lines cannot follow a last line that has no EOL; the diff must replace that line.
        if index == len(lines) and lines and not lines[-1].endswith("\n") and hunk.new:
            return None
        return index
    first = old[0]
    candidates = [
        i
        for i in range(floor, len(lines) - len(old) + 1)
        if lines[i] == first and lines[i : i + len(old)] == old
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda i: (abs(i - expected), i))


def format_diff(located: list[tuple[int, Hunk]]) -> str:
    """Writes hunks placed at 0-based old-side indexes as unified diff text."""
    out = ["--- a\n", "+++ b\n"]
    delta = 0
    for index, hunk in located:
        old_len, new_len = len(hunk.old), len(hunk.new)
        old_start = index + 1 if old_len else index
        new_start = index + delta + 1 if new_len else index + delta
        out.append(f"@@ -{old_start},{old_len} +{new_start},{new_len} @@\n")
        for kind, text in hunk.lines:
            out.append(kind + text if text.endswith("\n") else kind + text + "\n" + NO_NEWLINE_MARKER)
        delta += new_len - old_len
    return "".join(out)


# §5.4 step 3: the strict apply (the seed's `diff` library `applyPatch`)


def apply_patch(original: str, unified_diff: str) -> str | None:
    """Applies ``unified_diff`` exactly where its headers say; returns None if any hunk does not fit.

    All or nothing: the result is computed in memory, and nothing is returned unless every hunk
    applied. This is the seam a test replaces to force the Internal Error exit.
    """
    hunks = parse_hunks(unified_diff)
    if hunks is None:
        return None
    lines = split_lines(original)
    out: list[str] = []
    position = 0
    for hunk in hunks:
        index = hunk.old_index
        if index < position or lines[index : index + len(hunk.old)] != hunk.old:
            return None
        out.extend(lines[position:index])
        out.extend(hunk.new)
        position = index + len(hunk.old)
    out.extend(lines[position:])
    return "".join(out)


# file system and hashing


def split_lines(text: str) -> list[str]:
    """Splits at ``\\n`` only, keeping each line's EOL (``str.splitlines`` also splits at ``\\r``)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _sha256(data: bytes) -> str:
    """Lower-case hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _string_arg(args: dict[str, Any], name: str, *, allow_empty: bool = False) -> str:
    """The string argument ``name``; a tool error when it is missing or not a string."""
    value = args.get(name)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ToolError("EINVAL", f"Argument '{name}' must be a non-empty string.")
    return value


def _os_error(exc: OSError, path: str) -> ToolError:
    """Turns an OS error into a tool error named after its errno."""
    if isinstance(exc, FileNotFoundError):
        return ToolError("ENOENT", f"File not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return ToolError("EISDIR", f"Path is a directory, not a file: {path}")
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    return ToolError(code, f"{exc.strerror or exc}: {path}")


def _read_text_file(path: str) -> bytes:
    """The bytes of an existing UTF-8 text file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _os_error(exc, path) from exc
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("EILSEQ", f"File is not UTF-8 text: {path}") from exc
    return data


def _read_live_file(path: str) -> bytes:
    """safe_patch's view of the file: its bytes, or nothing at all when it does not exist.

    A dangling symbolic link counts as a missing file too: writing through it creates its target.
    """
    try:
        return _read_text_file(path)
    except ToolError as exc:
        if exc.code == "ENOENT":
            return b""
        raise


def _utf8(text: str, argument: str) -> bytes:
    """Encodes text for the disk; a lone surrogate (valid JSON, not Unicode) is a bad argument."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("EINVAL", f"Argument '{argument}' is not valid Unicode text.") from None


def _write_file(path: str, data: bytes) -> None:
    """Writes ``data`` to ``path``, creating missing parent directories."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise _os_error(exc, path) from exc
