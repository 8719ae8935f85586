"""Plausible wrong implementations, planted to show that the catalog (and ``harness fuzz``) catch them.

Each candidate is the reference with one small, realistic bug: a session class of one profile
replaced by a subclass. ``PlantedTarget({"claude-code": RawPdfRead})`` runs the reference
everywhere else. The bugs are the kinds real implementations have: a JavaScript-style replace that
expands ``$&``, an mtime check at one-second resolution, a content hash cached by size and mtime,
a write through a temporary file that replaces a symlink, and so on.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any
from unittest import mock

import reference_impl
from harness.targets.base import Session, TargetInfo
from harness.targets.reference import ReferenceSession, ReferenceTarget
from reference_impl import anthropic_text_editor, claude_code, codex_apply_patch, gemini_safe_patch, mcp_write_text_file


class PlantedTarget(ReferenceTarget):
    """The in-process reference with some profiles' sessions replaced by buggy subclasses."""

    def __init__(self, sessions: dict[str, type]) -> None:
        super().__init__("planted")
        self.sessions = sessions

    def start(self) -> TargetInfo:
        """Names the target after its bugs."""
        names = ",".join(cls.__name__ for cls in self.sessions.values())
        return TargetInfo(f"planted[{names}]", reference_impl.__version__, tuple(reference_impl.PROFILES))

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens the planted session of ``profile``, or the reference's."""
        if profile in self.sessions:
            return ReferenceSession.opened(self.sessions[profile], workspace, options)
        return super().open(profile, workspace, options)


# --- claude-code ----------------------------------------------------------------------------------


class RawPdfRead(claude_code.Session):
    """Read shows a PDF's raw bytes as numbered text lines instead of processing its pages."""

    def read(self, file_path: str, offset: Any = None, limit: Any = None) -> Any:
        if file_path.endswith(".pdf"):
            with open(file_path, "rb") as handle:
                text = handle.read().decode("latin-1")
            self.read_files.add(file_path)
            self.file_mtimes[file_path] = os.stat(file_path).st_mtime_ns
            return claude_code.format_with_line_numbers(text, offset, limit)
        return super().read(file_path, offset, limit)


class RawImageRead(claude_code.Session):
    """Read returns an image's bytes as a text block instead of visual content."""

    def read(self, file_path: str, offset: Any = None, limit: Any = None) -> Any:
        if file_path.endswith(".png"):
            with open(file_path, "rb") as handle:
                text = handle.read().decode("latin-1")
            self.read_files.add(file_path)
            self.file_mtimes[file_path] = os.stat(file_path).st_mtime_ns
            return [{"type": "text", "text": text}]
        return super().read(file_path, offset, limit)


class RawNotebookRead(claude_code.Session):
    """Read shows a notebook's JSON, line-numbered, instead of its cells."""

    def read(self, file_path: str, offset: Any = None, limit: Any = None) -> Any:
        if file_path.endswith(".ipynb"):
            with open(file_path, encoding="utf-8") as handle:
                text = handle.read()
            self.read_files.add(file_path)
            self.file_mtimes[file_path] = os.stat(file_path).st_mtime_ns
            return claude_code.format_with_line_numbers(text, offset, limit)
        return super().read(file_path, offset, limit)


class _Reformatted(claude_code.Session):
    """Base: Read's text lines rewritten by ``_line`` (number, text); the reference's lines otherwise."""

    def _line(self, number: int, text: str) -> str:
        raise NotImplementedError

    def read(self, file_path: str, offset: Any = None, limit: Any = None) -> Any:
        return self._reformat(super().read(file_path, offset, limit))

    def _reformat(self, shown: Any) -> Any:
        if not isinstance(shown, str):
            return shown
        out = []
        for line in shown.split("\n"):
            found = re.match(r"^ *([0-9]+)→", line)
            out.append(self._line(int(found.group(1)), line[found.end():]) if found else line)
        return "\n".join(out)


class TabSeparatorRead(_Reformatted):
    """Read numbers its lines ``cat -n`` style with a tab, as older documentation said: wording only."""

    def _line(self, number: int, text: str) -> str:
        return f"{number:>6}\t{text}"


class UnpaddedNumberRead(_Reformatted):
    """Read writes ``12<tab>text``: no padding, a tab; wording only."""

    def _line(self, number: int, text: str) -> str:
        return f"{number}\t{text}"


class NoLineCutRead(_Reformatted):
    """Read shows every line whole: lines longer than 2,000 characters are not cut."""

    def read(self, file_path: str, offset: Any = None, limit: Any = None) -> Any:
        shown = claude_code.Session.read(self, file_path, offset, limit)  # the reference's checks first
        self._whole = None
        if isinstance(shown, str):
            with open(file_path, encoding="utf-8", errors="replace", newline="") as handle:
                self._whole = claude_code.split_lines(handle.read())
        return self._reformat(shown)

    def _line(self, number: int, text: str) -> str:
        whole = self._whole[number - 1] if self._whole and number <= len(self._whole) else text
        return f"{number:>6}→{whole}"


class _MtimeRewrite(claude_code.Session):
    """Base: the mtime check is done by ``_changed`` (the reference compares for inequality)."""

    def _changed(self, path: str) -> bool:
        raise NotImplementedError

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        path = os.path.normpath(file_path)
        if path in self.file_mtimes and os.path.exists(path) and not self._changed(path):
            self.file_mtimes[path] = os.stat(path).st_mtime_ns  # the reference's own check then passes
        return super().edit(file_path, old_string, new_string, replace_all)

    def write(self, file_path: str, content: str) -> str:
        path = os.path.normpath(file_path)
        if path in self.file_mtimes and os.path.exists(path) and not self._changed(path):
            self.file_mtimes[path] = os.stat(path).st_mtime_ns
        return super().write(file_path, content)


class NewerThanMtimeCheck(_MtimeRewrite):
    """Counts a file as modified only when its mtime is later than at the read."""

    def _changed(self, path: str) -> bool:
        return os.stat(path).st_mtime_ns > self.file_mtimes[path]


class SecondsMtimeCheck(_MtimeRewrite):
    """Compares mtimes in whole seconds."""

    def _changed(self, path: str) -> bool:
        return os.stat(path).st_mtime_ns // 10**9 != self.file_mtimes[path] // 10**9


def _js_replace(text: str, old: str, new: str, count: int) -> str:
    """JavaScript's String.prototype.replace with a string pattern: expands $$, $&, $`, $'."""
    out, start, done = [], 0, 0
    while count < 0 or done < count:
        index = text.find(old, start)
        if index < 0:
            break
        expanded = re.sub(r"\$([$&`'])", lambda m, index=index: {"$": "$", "&": old, "`": text[:index],
                                                     "'": text[index + len(old):]}[m.group(1)], new)
        out += [text[start:index], expanded]
        start, done = index + len(old), done + 1
    return "".join(out) + text[start:]


class DollarExpandingEdit(claude_code.Session):
    """Edit replaces like JavaScript's String.replace, so $& and $$ in new_string are patterns."""

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        path = os.path.normpath(file_path)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        result = super().edit(file_path, old_string, new_string, replace_all)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(_js_replace(text, old_string, new_string, -1 if replace_all else 1))
        self.file_mtimes[path] = os.stat(path).st_mtime_ns
        return result


class LastOccurrenceEdit(claude_code.Session):
    """Edit without replace_all replaces the last occurrence, even when there are several."""

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        path = os.path.normpath(file_path)
        if replace_all or not old_string or old_string == new_string or path not in self.read_files:
            return super().edit(file_path, old_string, new_string, replace_all)
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        if text.count(old_string) < 2 or os.stat(path).st_mtime_ns != self.file_mtimes.get(path):
            return super().edit(file_path, old_string, new_string, replace_all)
        index = text.rfind(old_string)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text[:index] + new_string + text[index + len(old_string):])
        self.file_mtimes[path] = os.stat(path).st_mtime_ns
        return claude_code.EDIT_DONE.format(path=path)


# --- gemini-safe-patch ------------------------------------------------------------------------------


class StatCachedHash(gemini_safe_patch.Session):
    """read_file caches the content by (size, mtime): a same-size change with the mtime kept is missed."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        super().__init__(workspace, options)
        self._cache: dict[tuple[str, int, int], bytes] = {}

    def read_file(self, args: dict[str, Any]) -> dict[str, Any]:
        path = self._path(args.get("file_path") or "")
        try:
            info = os.stat(path)
        except OSError:
            return super().read_file(args)
        key = (path, info.st_size, info.st_mtime_ns)
        if key in self._cache:
            return self._file_state(path, self._cache[key])
        state = super().read_file(args)
        self._cache[key] = state["content"].encode("utf-8")
        return state


class SkipVersionAfterError(gemini_safe_patch.Session):
    """The version counter takes an extra step after every failed safe_patch."""

    def safe_patch(self, args: dict[str, Any]) -> dict[str, Any]:
        result = super().safe_patch(args)
        if not result["success"]:
            self.state.next_version()
        return result


class FirstOccurrenceHunks(gemini_safe_patch.Session):
    """Fix the Diff puts every hunk at the first place its lines occur after the previous hunk."""

    def safe_patch(self, args: dict[str, Any]) -> dict[str, Any]:
        original = gemini_safe_patch._locate
        gemini_safe_patch._locate = lambda lines, hunk, expected, floor: original(lines, hunk, floor, floor)
        try:
            return super().safe_patch(args)
        finally:
            gemini_safe_patch._locate = original


# --- mcp-write-text-file ----------------------------------------------------------------------------


class RenameOverSymlink(mcp_write_text_file.Session):
    """Writes through a temporary file renamed over the path: a symlink is replaced, not followed."""

    def call(self, tool: str, args: dict) -> dict:
        path = args.get("path") if isinstance(args, dict) else None
        if isinstance(path, str) and os.path.islink(path):
            os.unlink(path)
        return super().call(tool, args)


def sha256(data: bytes) -> str:
    """Lower-case hex SHA-256 (for tests that build expectations)."""
    return hashlib.sha256(data).hexdigest()


# --- anthropic-text-editor ----------------------------------------------------------------------------


class WhitespaceTolerantReplace(anthropic_text_editor.Session):
    """str_replace matches line by line ignoring surrounding whitespace, as fuzzy editors do."""

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        target = self._resolve(path)
        text = self._read(target).decode("utf-8")
        lines = text.splitlines(keepends=True)
        wanted = [line.strip() for line in old_str.splitlines()]
        for start in range(len(lines) - len(wanted) + 1):
            if [line.strip() for line in lines[start:start + len(wanted)]] == wanted:
                lines[start:start + len(wanted)] = [new_str if new_str.endswith("\n") or not new_str else new_str + "\n"]
                self._write(target, "".join(lines).encode("utf-8"), before=text.encode("utf-8"))
                return anthropic_text_editor.REPLACED
        return super().str_replace(path, old_str, new_str)


class CaseInsensitiveReplace(anthropic_text_editor.Session):
    """str_replace finds old_str ignoring case."""

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        target = self._resolve(path)
        text = self._read(target).decode("utf-8")
        found = re.search(re.escape(old_str), text, flags=re.IGNORECASE)
        if found and len(re.findall(re.escape(old_str), text, flags=re.IGNORECASE)) == 1:
            self._write(target, (text[:found.start()] + new_str + text[found.end():]).encode("utf-8"), before=None)
            return anthropic_text_editor.REPLACED
        return super().str_replace(path, old_str, new_str)


class FirstMatchReplace(anthropic_text_editor.Session):
    """str_replace replaces the first occurrence without checking that it is the only one."""

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        target = self._resolve(path)
        text = self._read(target).decode("utf-8")
        if text.count(old_str) > 1:
            self._write(target, text.replace(old_str, new_str, 1).encode("utf-8"), before=text.encode("utf-8"))
            return anthropic_text_editor.REPLACED
        return super().str_replace(path, old_str, new_str)


class ConstantMatchCount(anthropic_text_editor.Session):
    """The multiple-matches error copies the page's example, 3, whatever the count."""

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        try:
            return super().str_replace(path, old_str, new_str)
        except anthropic_text_editor.ToolError as exc:
            if "matches for replacement text" in str(exc):
                raise anthropic_text_editor.ToolError(anthropic_text_editor.MULTIPLE_MATCHES.format(count=3)) from exc
            raise


class InsertBeforeTheLine(anthropic_text_editor.Session):
    """insert puts the text before line insert_line instead of after it."""

    def insert(self, path: str, insert_line: Any, text: str) -> str:
        return super().insert(path, max(insert_line - 1, 0) if isinstance(insert_line, int) else insert_line, text)


class UnlimitedView(anthropic_text_editor.Session):
    """view ignores the tool's max_characters."""

    def view(self, path: str, view_range: Any = None) -> str:
        limit, self.max_characters = self.max_characters, None
        try:
            return super().view(path, view_range)
        finally:
            self.max_characters = limit


class UndoInEveryVersion(anthropic_text_editor.Session):
    """undo_edit is offered in text_editor_20250728 too."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        super().__init__(workspace, options)
        self.version = "text_editor_20250124"


class TabNumberedView(anthropic_text_editor.Session):
    """view numbers the lines ``cat -n`` style (six wide, a tab) instead of ``1: ``: wording only."""

    def view(self, path: str, view_range: Any = None) -> str:
        shown = super().view(path, view_range)
        if os.path.isdir(self._resolve(path)):
            return shown
        return re.sub(r"(?m)^([0-9]+): ", lambda m: f"{int(m.group(1)):>6}\t", shown)


class ShiftedRangeView(anthropic_text_editor.Session):
    """view_range is read 0-indexed: [2, 3] shows lines 3 and 4 (the right numbers, the wrong lines)."""

    def view(self, path: str, view_range: Any = None) -> str:
        if isinstance(view_range, list) and len(view_range) == 2 and all(isinstance(n, int) for n in view_range):
            first, last = view_range
            view_range = [first + 1, last if last == -1 else last + 1]
            try:
                return super().view(path, view_range)
            except anthropic_text_editor.ToolError:
                return super().view(path, [first + 1, -1])
        return super().view(path, view_range)


class GlobalUndo(anthropic_text_editor.Session):
    """undo_edit reverts the session's last edit, whichever file it changed."""

    def undo_edit(self, path: str) -> str:
        last = max(self.history, key=lambda target: self._order.index(target)) if self.history else None
        if last is None or not self.history[last]:
            return super().undo_edit(path)
        return super().undo_edit(os.path.relpath(last, self.workspace))

    def _write(self, target: str, data: bytes, before: bytes | None) -> None:
        self._order = [t for t in getattr(self, "_order", []) if t != target] + [target]
        super()._write(target, data, before)


# --- codex-apply-patch --------------------------------------------------------------------------------


class IgnoresEndOfFile(codex_apply_patch.Session):
    """*** End of File is parsed and then ignored: the hunk applies at its first match."""

    def apply_hunks_to_files(self, hunks):
        for hunk in hunks:
            for chunk in hunk.chunks:
                chunk.is_end_of_file = False
        return super().apply_hunks_to_files(hunks)


def _loosest_first(lines, pattern, start, eof):
    """seek_sequence trying its most tolerant level first (a whitespace-blind search)."""
    search_start = len(lines) - len(pattern) if eof and len(lines) >= len(pattern) else start
    for i in range(search_start, len(lines) - len(pattern) + 1):
        if [line.strip() for line in lines[i:i + len(pattern)]] == [p.strip() for p in pattern]:
            return i
    return None


class LoosestMatchFirst(codex_apply_patch.Session):
    """Context lines are compared with their whitespace stripped before an exact match is tried."""

    def apply_patch(self, patch: str) -> str:
        with mock.patch.object(codex_apply_patch, "seek_sequence", _loosest_first):
            return super().apply_patch(patch)


def _exact_only(lines, pattern, start, eof):
    """seek_sequence without its tolerant levels."""
    search_start = len(lines) - len(pattern) if eof and len(lines) >= len(pattern) else start
    for i in range(search_start, len(lines) - len(pattern) + 1):
        if lines[i:i + len(pattern)] == pattern:
            return i
    return None


class ExactContextOnly(codex_apply_patch.Session):
    """Context must match byte for byte: no trailing-whitespace or punctuation tolerance."""

    def apply_patch(self, patch: str) -> str:
        with mock.patch.object(codex_apply_patch, "seek_sequence", _exact_only):
            return super().apply_patch(patch)


class HunksFromTheTop(codex_apply_patch.Session):
    """Every hunk is searched from the start of the file, not after the previous hunk."""

    def apply_patch(self, patch: str) -> str:
        real = codex_apply_patch.seek_sequence
        with mock.patch.object(codex_apply_patch, "seek_sequence", lambda lines, pattern, start, eof: real(lines, pattern, 0, eof)):
            return super().apply_patch(patch)


class TransactionalPatch(codex_apply_patch.Session):
    """A failing operation rolls back the ones before it (apply-patch keeps them)."""

    def apply_hunks_to_files(self, hunks):
        saved = {}
        for hunk in hunks:
            for path in (hunk.path, hunk.move_path):
                if path is not None:
                    target = self._resolve(path)
                    saved[target] = open(target, "rb").read() if os.path.isfile(target) else None
        try:
            return super().apply_hunks_to_files(hunks)
        except codex_apply_patch.PatchError:
            for target, data in saved.items():
                if data is None:
                    if os.path.isfile(target):
                        os.remove(target)
                else:
                    with open(target, "wb") as handle:
                        handle.write(data)
            raise


class AppliesWhileParsing(codex_apply_patch.Session):
    """Add File sections are written as soon as they are parsed, before the end marker is checked."""

    def apply_patch(self, patch: str) -> str:
        lines = patch.strip().splitlines()
        if lines and lines[-1].strip() != codex_apply_patch.END_PATCH_MARKER:
            try:
                self.apply_hunks_to_files(codex_apply_patch.parse_patch(patch.rstrip() + "\n*** End Patch"))
            except codex_apply_patch.PatchError:
                pass
        return super().apply_patch(patch)


class NoFinalNewline(codex_apply_patch.Session):
    """An updated file is written without the final line break apply-patch adds."""

    def apply_patch(self, patch: str) -> str:
        real = codex_apply_patch.derive_new_contents
        with mock.patch.object(codex_apply_patch, "derive_new_contents",
                               lambda *args: real(*args).removesuffix("\n")):
            return super().apply_patch(patch)


class MoveKeepsSource(codex_apply_patch.Session):
    """Move to writes the destination but leaves the source in place."""

    def apply_patch(self, patch: str) -> str:
        with mock.patch.object(codex_apply_patch.os, "remove", lambda path: None):
            return super().apply_patch(patch)


class ReworderSummary(codex_apply_patch.Session):
    """The success summary has another header: the A/M/D lines are the same (wording only)."""

    def apply_patch(self, patch: str) -> str:
        return super().apply_patch(patch).replace(codex_apply_patch.SUMMARY, "Done. Files changed:", 1)


class ModifiedForAddedSummary(codex_apply_patch.Session):
    """The summary reports an added file as modified (``M`` for ``A``): what it says about the files is wrong."""

    def apply_patch(self, patch: str) -> str:
        return re.sub(r"(?m)^A ", "M ", super().apply_patch(patch))
