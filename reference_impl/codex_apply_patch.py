"""Codex's ``apply_patch`` tool, as openai/codex's ``codex-rs/apply-patch`` defines it.

Sources, in the order this module follows them: ``apply_patch_tool_instructions.md`` (the envelope,
the three file operations, hunks and the grammar), ``src/parser.rs`` (the Lark grammar, the lenient
parser and its error texts), ``src/lib.rs`` (applying the hunks: ``apply_hunks_to_files``,
``derive_new_contents_from_chunks``, ``compute_replacements``, ``print_summary``),
``src/seek_sequence.rs`` (finding context lines at four levels of fuzziness) and
``tests/fixtures/scenarios/`` (what the tool does to files, case by case).

The tool takes one argument, ``input``: the patch text (Codex's ``apply_patch`` function tool).
Paths in the patch are taken relative to the working folder (the session's workspace).

A call's normal form is ``{"output": <stdout>}`` on success and
``{"error": {"code": None, "message": <stderr>}}`` on failure: the summary
``Success. Updated the following files:`` with ``A``/``M``/``D`` lines, or the parser's
``Invalid patch: ...`` / ``Invalid patch hunk on line N: ...`` or the applier's message.

Choices where the source leaves room (the catalog records each as an open question):

1. The file is read as UTF-8 and split at ``\\n``; a ``\\r`` stays part of its line (and so matches
   only at the "trailing whitespace" level); the new content is joined with ``\\n`` (lib.rs on
   Unix: ``build_contents_from_lines``).
2. An I/O failure is worded like Rust's ``io::Error``: ``<context>: <reason> (os error <n>)``.
3. A path that leads outside the working folder (``..``, a link out) is refused before anything is
   written, with the reference's own text. Codex itself leaves that to its sandbox.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from reference_impl import UnknownTool

TOOLS = ("apply_patch",)

# --- src/parser.rs: markers -------------------------------------------------------------------------

BEGIN_PATCH_MARKER = "*** Begin Patch"
END_PATCH_MARKER = "*** End Patch"
ADD_FILE_MARKER = "*** Add File: "
DELETE_FILE_MARKER = "*** Delete File: "
UPDATE_FILE_MARKER = "*** Update File: "
MOVE_TO_MARKER = "*** Move to: "
EOF_MARKER = "*** End of File"
CHANGE_CONTEXT_MARKER = "@@ "
EMPTY_CHANGE_CONTEXT_MARKER = "@@"
#: ParseMode::Lenient: a heredoc wrapper the model put around the patch.
HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')

# --- src/parser.rs and src/lib.rs: messages ----------------------------------------------------------

FIRST_LINE = "The first line of the patch must be '*** Begin Patch'"
LAST_LINE = "The last line of the patch must be '*** End Patch'"
EMPTY_UPDATE = "Update file hunk for path '{path}' is empty"
BAD_HEADER = ("'{line}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', "
              "'*** Delete File: {{path}}', '*** Update File: {{path}}'")
NO_CONTEXT_MARKER = "Expected update hunk to start with a @@ context marker, got: '{line}'"
NO_LINES = "Update hunk does not contain any lines"
BAD_LINE = ("Unexpected line found in update hunk: '{line}'. Every line should start with ' ' "
            "(context line), '+' (added line), or '-' (removed line)")
INVALID_PATCH = "Invalid patch: {message}"
INVALID_HUNK = "Invalid patch hunk on line {line}: {message}"
NOTHING = "No files were modified."
CONTEXT_NOT_FOUND = "Failed to find context '{context}' in {path}"
LINES_NOT_FOUND = "Failed to find expected lines in {path}:\n{lines}"
SUMMARY = "Success. Updated the following files:"
# Choice 3.
OUTSIDE = "Refusing to touch {path}: it is outside the working folder"


class PatchError(Exception):
    """The patch could not be parsed or applied; the message is what the tool prints to stderr."""


@dataclass
class Chunk:
    """UpdateFileChunk: an optional ``@@`` context line, the old and new lines, the EOF flag."""

    change_context: str | None
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    is_end_of_file: bool = False


@dataclass
class Hunk:
    """One file operation: ``add`` (contents), ``delete``, or ``update`` (chunks, move_path)."""

    kind: str
    path: str
    contents: str = ""
    move_path: str | None = None
    chunks: list[Chunk] = field(default_factory=list)


class Session:
    """One working folder; apply_patch keeps no state between calls."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        self.workspace = os.path.realpath(workspace)

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Runs one tool call and returns its normal form; raises UnknownTool for other tools."""
        if tool not in TOOLS:
            raise UnknownTool(tool)
        patch = args.get("input")
        if not isinstance(patch, str):
            return {"error": {"code": None, "message": "apply_patch needs `input`: the patch text"}}
        try:
            return {"output": self.apply_patch(patch)}
        except PatchError as exc:
            return {"error": {"code": None, "message": str(exc)}}

    # lib.rs: apply_patch(patch, stdout, stderr)
    def apply_patch(self, patch: str) -> str:
        hunks = parse_patch(patch)
        for hunk in hunks:  # choice 3, checked before anything is written
            for path in (hunk.path, hunk.move_path):
                if path is not None:
                    self._resolve(path)
        added, modified, deleted = self.apply_hunks_to_files(hunks)
        lines = [SUMMARY] + [f"A {p}" for p in added] + [f"M {p}" for p in modified] + [f"D {p}" for p in deleted]
        return "\n".join(lines) + "\n"

    def apply_hunks_to_files(self, hunks: list[Hunk]) -> tuple[list[str], list[str], list[str]]:
        """Applies the hunks one after the other; a failure leaves the earlier ones applied
        (tests/fixtures/scenarios/015_failure_after_partial_success_leaves_changes)."""
        if not hunks:
            raise PatchError(NOTHING)
        added: list[str] = []
        modified: list[str] = []
        deleted: list[str] = []
        for hunk in hunks:
            target = self._resolve(hunk.path)
            if hunk.kind == "add":
                _make_parents(target, hunk.path)
                _io(f"Failed to write file {hunk.path}", _write, target, hunk.contents)
                added.append(hunk.path)
            elif hunk.kind == "delete":
                _io(f"Failed to delete file {hunk.path}", os.remove, target)
                deleted.append(hunk.path)
            else:
                new_contents = derive_new_contents(target, hunk.path, hunk.chunks)
                if hunk.move_path is not None:
                    dest = self._resolve(hunk.move_path)
                    _make_parents(dest, hunk.move_path)
                    _io(f"Failed to write file {hunk.move_path}", _write, dest, new_contents)
                    _io(f"Failed to remove original {hunk.path}", os.remove, target)
                    modified.append(hunk.move_path)
                else:
                    _io(f"Failed to write file {hunk.path}", _write, target, new_contents)
                    modified.append(hunk.path)
        return added, modified, deleted

    def _resolve(self, path: str) -> str:
        """Hunk::resolve_path: relative to the working folder, an absolute path as it is (choice 3)."""
        resolved = os.path.realpath(os.path.join(self.workspace, path))
        if not resolved.startswith(self.workspace + os.sep):
            raise PatchError(OUTSIDE.format(path=path))
        return resolved


# --- src/parser.rs ----------------------------------------------------------------------------------


def parse_patch(patch: str) -> list[Hunk]:
    """parse_patch_text(patch, ParseMode::Lenient): the envelope, then one hunk after another."""
    lines = patch.strip().splitlines()
    body = _check_boundaries_lenient(lines)
    hunks: list[Hunk] = []
    line_number = 2  # the line after "*** Begin Patch", 1-based
    while body:
        hunk, used = _parse_one_hunk(body, line_number)
        hunks.append(hunk)
        line_number += used
        body = body[used:]
    return hunks


def _check_boundaries_strict(lines: list[str]) -> list[str]:
    """The first line (trimmed) must be the begin marker and the last (trimmed) the end marker."""
    first = lines[0].strip() if lines else None
    last = lines[-1].strip() if lines else None
    if first == BEGIN_PATCH_MARKER and last == END_PATCH_MARKER and len(lines) >= 2:
        return lines[1:-1]
    if first != BEGIN_PATCH_MARKER:
        raise PatchError(INVALID_PATCH.format(message=FIRST_LINE))
    raise PatchError(INVALID_PATCH.format(message=LAST_LINE))


def _check_boundaries_lenient(lines: list[str]) -> list[str]:
    """As strict, else a ``<<EOF`` ... ``EOF`` heredoc of at least four lines around the patch."""
    try:
        return _check_boundaries_strict(lines)
    except PatchError as original:
        if len(lines) >= 4 and lines[0] in HEREDOC_STARTS and lines[-1].endswith("EOF"):
            return _check_boundaries_strict(lines[1:-1])
        raise original


def _parse_one_hunk(lines: list[str], line_number: int) -> tuple[Hunk, int]:
    """One file operation from the start of ``lines``; returns it and the number of lines used."""
    first = lines[0].strip()  # "tolerant of ... extra padding around marker strings"
    if first.startswith(ADD_FILE_MARKER):
        contents, used = [], 1
        for line in lines[1:]:
            if not line.startswith("+"):
                break
            contents.append(line[1:] + "\n")
            used += 1
        return Hunk("add", first[len(ADD_FILE_MARKER):], contents="".join(contents)), used
    if first.startswith(DELETE_FILE_MARKER):
        return Hunk("delete", first[len(DELETE_FILE_MARKER):]), 1
    if first.startswith(UPDATE_FILE_MARKER):
        path = first[len(UPDATE_FILE_MARKER):]
        remaining, used = lines[1:], 1
        move_path = None
        if remaining and remaining[0].startswith(MOVE_TO_MARKER):
            move_path = remaining[0][len(MOVE_TO_MARKER):]
            remaining, used = remaining[1:], used + 1
        chunks: list[Chunk] = []
        while remaining:
            if remaining[0].strip() == "":  # blank lines between chunks
                remaining, used = remaining[1:], used + 1
                continue
            if remaining[0].startswith("*"):  # the next file operation, or the end
                break
            chunk, chunk_lines = _parse_update_chunk(remaining, line_number + used, not chunks)
            chunks.append(chunk)
            remaining, used = remaining[chunk_lines:], used + chunk_lines
        if not chunks:
            raise PatchError(INVALID_HUNK.format(line=line_number, message=EMPTY_UPDATE.format(path=path)))
        return Hunk("update", path, move_path=move_path, chunks=chunks), used
    raise PatchError(INVALID_HUNK.format(line=line_number, message=BAD_HEADER.format(line=first)))


def _parse_update_chunk(lines: list[str], line_number: int, allow_missing_context: bool) -> tuple[Chunk, int]:
    """One ``@@`` chunk: its context line, then ' ', '-', '+' lines, then maybe ``*** End of File``."""
    if lines[0] == EMPTY_CHANGE_CONTEXT_MARKER:
        chunk, start = Chunk(None), 1
    elif lines[0].startswith(CHANGE_CONTEXT_MARKER):
        chunk, start = Chunk(lines[0][len(CHANGE_CONTEXT_MARKER):]), 1
    elif allow_missing_context:  # the first chunk may start with its diff lines
        chunk, start = Chunk(None), 0
    else:
        raise PatchError(INVALID_HUNK.format(line=line_number, message=NO_CONTEXT_MARKER.format(line=lines[0])))
    if start >= len(lines):
        raise PatchError(INVALID_HUNK.format(line=line_number + 1, message=NO_LINES))
    parsed = 0
    for line in lines[start:]:
        if line == EOF_MARKER:
            if parsed == 0:
                raise PatchError(INVALID_HUNK.format(line=line_number + 1, message=NO_LINES))
            chunk.is_end_of_file = True
            parsed += 1
            break
        if line == "":  # an empty line is an empty context line
            chunk.old_lines.append("")
            chunk.new_lines.append("")
        elif line[0] == " ":
            chunk.old_lines.append(line[1:])
            chunk.new_lines.append(line[1:])
        elif line[0] == "+":
            chunk.new_lines.append(line[1:])
        elif line[0] == "-":
            chunk.old_lines.append(line[1:])
        else:
            if parsed == 0:
                raise PatchError(INVALID_HUNK.format(line=line_number + 1, message=BAD_LINE.format(line=line)))
            break  # the start of the next chunk or file operation
        parsed += 1
    return chunk, parsed + start


# --- src/lib.rs: applying an update ---------------------------------------------------------------


def derive_new_contents(target: str, shown: str, chunks: list[Chunk]) -> str:
    """The file's new text: the chunks' replacements applied, ending with one line break."""
    data = _io(f"Failed to read file to update {shown}", _read, target)
    original = data.decode("utf-8", errors="surrogateescape")
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final line break opens no line (choice 1)
    replacements = compute_replacements(lines, shown, chunks)
    new_lines = apply_replacements(lines, replacements)
    if not new_lines or new_lines[-1] != "":
        new_lines.append("")  # tests/fixtures/scenarios/014_update_file_appends_trailing_newline
    return "\n".join(new_lines)


def compute_replacements(lines: list[str], shown: str, chunks: list[Chunk]) -> list[tuple[int, int, list[str]]]:
    """Finds each chunk after the previous one: its ``@@`` context line first, then its old lines."""
    replacements: list[tuple[int, int, list[str]]] = []
    line_index = 0
    for chunk in chunks:
        if chunk.change_context is not None:
            found = seek_sequence(lines, [chunk.change_context], line_index, False)
            if found is None:
                raise PatchError(CONTEXT_NOT_FOUND.format(context=chunk.change_context, path=shown))
            line_index = found + 1
        if not chunk.old_lines:
            # A pure addition goes at the end of the file (before a final empty line).
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, list(chunk.new_lines)))
            continue
        pattern, new_slice = chunk.old_lines, chunk.new_lines
        found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file)
        if found is None and pattern[-1] == "":
            # The trailing empty line stands for the file's final line break: retry without it.
            pattern = pattern[:-1]
            if new_slice and new_slice[-1] == "":
                new_slice = new_slice[:-1]
            found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file)
        if found is None:
            raise PatchError(LINES_NOT_FOUND.format(path=shown, lines="\n".join(chunk.old_lines)))
        replacements.append((found, len(pattern), list(new_slice)))
        line_index = found + len(pattern)
    return sorted(replacements, key=lambda r: r[0])


def apply_replacements(lines: list[str], replacements: list[tuple[int, int, list[str]]]) -> list[str]:
    """Applies the replacements from the last to the first, so that earlier indices stay valid."""
    lines = list(lines)
    for start, old_len, new_segment in reversed(replacements):
        del lines[start:start + old_len]
        lines[start:start] = new_segment
    return lines


# --- src/seek_sequence.rs ---------------------------------------------------------------------------

#: The last, most permissive pass: typographic punctuation and odd spaces read as their ASCII forms.
_PUNCTUATION = str.maketrans(
    {**{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
     **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
     **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
     **{c: " " for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"}})

#: The four levels, strictest first: exact, trailing whitespace, surrounding whitespace, punctuation.
_LEVELS = (
    lambda s: s,
    lambda s: s.rstrip(),
    lambda s: s.strip(),
    lambda s: s.strip().translate(_PUNCTUATION),
)


def seek_sequence(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    """The first index at or after ``start`` where ``pattern`` occurs, at the strictest level that
    finds one; with ``eof`` the search starts where the pattern would end the file."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    search_start = len(lines) - len(pattern) if eof else start
    for level in _LEVELS:
        wanted = [level(p) for p in pattern]
        for i in range(search_start, len(lines) - len(pattern) + 1):
            if all(level(lines[i + k]) == wanted[k] for k in range(len(pattern))):
                return i
    return None


# --- files --------------------------------------------------------------------------------------------


def _read(target: str) -> bytes:
    with open(target, "rb") as handle:
        return handle.read()


def _write(target: str, text: str) -> None:
    with open(target, "wb") as handle:
        handle.write(text.encode("utf-8", errors="surrogateescape"))


def _make_parents(target: str, shown: str) -> None:
    parent = os.path.dirname(target)
    _io(f"Failed to create parent directories for {shown}", os.makedirs, parent, exist_ok=True)


def _io(context: str, action, *args, **kwargs):
    """Runs ``action(*args, **kwargs)``; an OSError becomes ``<context>: <reason> (os error <n>)`` (choice 2)."""
    try:
        return action(*args, **kwargs)
    except OSError as exc:
        raise PatchError(f"{context}: {exc.strerror} (os error {exc.errno})") from exc
