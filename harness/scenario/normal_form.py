"""The normal form of what a call returns about the files: the ``content`` aspect's view of an output.

A profile's tool says in ``content:`` which parts of its output are data about the files (a Read's
lines with their numbers, a listing's names, a hash, a size) rather than wording:

``fields``
    output fields, at any depth of a mapping output, that are content (seed 004's ``content`` and
    ``sha256``, Aptix's ``hash`` and ``sizeBytes``). An expectation of such a field is judged as
    ``content``; nothing is rewritten.
``lines``
    the output's text is numbered lines. ``prefix`` is a pattern matching a line's number prefix
    (its first group the number); ``canonical`` is how the profile's contract writes that prefix
    (``{number}`` the number, ``{number:>6}`` right-justified to six). The prefix is wording: the
    normal form rewrites every numbered line's prefix into the canonical one, so two tools that
    return the same lines with the same numbers have the same normal form however they format
    them (a tab instead of an arrow, another width). The lines' text and their numbers are content.
``entries``
    the output's text is a report whose lines matching a pattern are its entries about the files
    (Codex apply_patch's ``A <path>`` / ``M <path>`` / ``D <path>`` summary), and every other line
    is wording (its ``Success. Updated the following files:`` header). The normal form is the
    entries alone, in their order. A text expectation is reduced the same way before it is matched,
    so two tools that report the same files with the same letters agree on content however they
    word the rest; an expectation that is no plain text (a ``$contains``, a ``$type``) is wording.

A numbered output (and an entries report) is judged twice: its expectation is matched against the normal form (the
``content`` aspect: the right lines, cut where the contract cuts them, nothing but the lines), and,
only when that holds, against the output as returned (the ``output`` aspect: the wording).

The prefix pattern comes from a profile file, which may be a user's: it runs on google-re2 (linear
time), on at most :data:`MAX_LINES` lines of at most :data:`MAX_TEXT` characters in all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2 as _regex  # linear-time matching: a profile's pattern cannot backtrack without end

#: The default number prefix: spaces, the number, then an arrow (U+2192) or a tab.
DEFAULT_PREFIX = r"^ *([0-9]+)(?:→|\t)"
#: Seed 001's ``cat -n`` prefix: the number right-justified to six, then the arrow.
DEFAULT_CANONICAL = "{number:>6}→"
#: Outputs longer than this (in characters) are left as they are: no normal form is built.
MAX_TEXT = 16 * 1024 * 1024
#: Outputs with more lines than this are left as they are.
MAX_LINES = 1_000_000


class FormError(ValueError):
    """A ``content:`` declaration that cannot be used (its message names the field)."""


@dataclass(frozen=True)
class Lines:
    """A numbered-lines normal form: the prefix as found, and as the contract writes it."""

    prefix: str = DEFAULT_PREFIX
    canonical: str = DEFAULT_CANONICAL

    def compiled(self) -> Any:
        """Returns the compiled prefix pattern."""
        return _compiled(self.prefix)


@dataclass(frozen=True)
class Entries:
    """An entries report: the lines that match ``pattern`` (google-re2, at the line's start) are content."""

    pattern: str

    def compiled(self) -> Any:
        """Returns the compiled pattern."""
        return _compiled(self.pattern)


@dataclass(frozen=True)
class ContentSpec:
    """A tool's ``content:`` declaration."""

    fields: tuple[str, ...] = ()
    lines: Lines | None = None
    entries: Entries | None = None


def parse(raw: Any, where: str = "content") -> ContentSpec:
    """Returns the ContentSpec of a profile tool's ``content:`` mapping; raises FormError."""
    if raw is None:
        return ContentSpec()
    if not isinstance(raw, dict):
        raise FormError(f"{where}: a mapping with `fields`, `lines` and/or `entries`")
    fields = raw.get("fields") or []
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise FormError(f"{where}.fields: a list of output field names")
    lines = raw.get("lines")
    spec_lines = None
    if lines is not None:
        if lines is True:
            lines = {}
        if not isinstance(lines, dict):
            raise FormError(f"{where}.lines: true, or a mapping with `prefix` and `canonical`")
        prefix = lines.get("prefix", DEFAULT_PREFIX)
        canonical = lines.get("canonical", DEFAULT_CANONICAL)
        if not isinstance(prefix, str) or not isinstance(canonical, str):
            raise FormError(f"{where}.lines: `prefix` and `canonical` are strings")
        try:
            pattern = _compiled(prefix)
        except Exception as exc:  # re2.error: the engine's own message
            raise FormError(f"{where}.lines.prefix: not a pattern google-re2 accepts: {exc}") from None
        if pattern.groups < 1:
            raise FormError(f"{where}.lines.prefix: the pattern needs a group for the line number")
        try:
            canonical.format(number=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise FormError(f"{where}.lines.canonical: a format with {{number}} only ({exc})") from None
        spec_lines = Lines(prefix, canonical)
    entries = raw.get("entries")
    spec_entries = None
    if entries is not None:
        if not isinstance(entries, str) or not entries:
            raise FormError(f"{where}.entries: a pattern (a string) matching an entry line")
        try:
            _compiled(entries)
        except Exception as exc:  # re2.error: the engine's own message
            raise FormError(f"{where}.entries: not a pattern google-re2 accepts: {exc}") from None
        if spec_lines is not None:
            raise FormError(f"{where}: `lines` or `entries`, not both (each is a normal form of the whole text)")
        spec_entries = Entries(entries)
    return ContentSpec(tuple(fields), spec_lines, spec_entries)


_PATTERNS: dict[str, Any] = {}


def _compiled(prefix: str) -> Any:
    found = _PATTERNS.get(prefix)
    if found is None:
        if len(_PATTERNS) > 256:
            _PATTERNS.clear()
        found = _PATTERNS[prefix] = _regex.compile(prefix)
    return found


#: Characters at the start of a line the prefix pattern is matched against.
PREFIX_SPAN = 256


def _head(line: str) -> str:
    """Returns the start of a line as re2 can take it: a lone surrogate (a JSON string can carry one)
    becomes ``?``, one character for one, so positions hold for the line itself."""
    return line[:PREFIX_SPAN].encode("utf-8", "replace").decode("utf-8")


#: What in a prefix pattern means something else once the pattern runs over a whole text at once
#: than over one line: the text's own start and end, and inline flags (``(?-m)``, ``(?s)``).
_LINE_BOUND = re.compile(r"\\[Az]|\(\?[a-zA-Z-]")


def _rewrite_text(text: str, lines: Lines) -> str:
    """Returns ``text`` with each line's numbered prefix written the canonical way."""
    at_once = _rewrite_at_once(text, lines)
    return at_once if at_once is not None else _rewrite_by_line(text, lines)


def _rewrite_at_once(text: str, lines: Lines) -> str | None:
    """:func:`_rewrite_by_line`'s answer from one search over the whole text (one call of the engine
    instead of one a line, most of a long Read's normal form), or None where that answer could
    differ: a prefix with inline flags or ``\\A``/``\\z``, a line longer than the span a prefix is
    looked for in, a match running into the next line."""
    if _LINE_BOUND.search(lines.prefix) or max(map(len, text.split("\n"))) > PREFIX_SPAN:
        return None
    pattern = _compiled(f"(?m)^(?:{lines.prefix})")
    subject = text.encode("utf-8", "replace").decode("utf-8")  # as _head: one character for one
    out, done = [], 0
    for found in pattern.finditer(subject):
        start, end = found.span()
        if "\n" in subject[start:end]:
            return None
        try:
            number = int(found.group(1))
        except (TypeError, ValueError):
            continue
        out += [text[done:start], lines.canonical.format(number=number)]
        done = end
    out.append(text[done:])
    return "".join(out)


def _rewrite_by_line(text: str, lines: Lines) -> str:
    pattern = lines.compiled()
    out = []
    for line in text.split("\n"):
        found = pattern.match(_head(line))
        if found is None:
            out.append(line)
            continue
        try:
            number = int(found.group(1))
        except (TypeError, ValueError):
            out.append(line)
            continue
        out.append(lines.canonical.format(number=number) + line[found.end():])
    return "\n".join(out)


def normal_form(output: Any, lines: Lines) -> Any:
    """Returns ``output`` with every numbered line's prefix written the canonical way.

    A text is rewritten line by line; a list of content blocks has the ``text`` of each text block
    rewritten (other blocks, such as images and documents, are kept as they are); any other value,
    and an output too large to rewrite, is returned unchanged.
    """
    if isinstance(output, str):
        if len(output) > MAX_TEXT or output.count("\n") >= MAX_LINES:
            return output
        return _rewrite_text(output, lines)
    if isinstance(output, list):
        total = sum(len(b.get("text", "")) for b in output if isinstance(b, dict) and isinstance(b.get("text"), str))
        if total > MAX_TEXT:
            return output
        out = []
        for block in output:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                block = dict(block, text=_rewrite_text(block["text"], lines))
            out.append(block)
        return out
    return output


def entries_form(output: Any, entries: Entries) -> Any:
    """Returns the entries of a text output (its lines that match the pattern, joined by line
    breaks, in their order); any other value, and a text too large to reduce, as it is."""
    if not isinstance(output, str) or len(output) > MAX_TEXT or output.count("\n") >= MAX_LINES:
        return output
    pattern = entries.compiled()
    return "\n".join(line for line in output.split("\n") if pattern.match(_head(line)) is not None)


def numbered_lines(output: Any, lines: Lines) -> list[list[Any]]:
    """Returns the numbered lines of an output as ``[number, text]`` pairs (for reports and diffs)."""
    texts: list[str] = []
    if isinstance(output, str):
        texts = [output]
    elif isinstance(output, list):
        texts = [b["text"] for b in output if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    pattern = lines.compiled()
    found: list[list[Any]] = []
    for text in texts:
        if len(text) > MAX_TEXT:
            continue
        for line in text.split("\n")[:MAX_LINES]:
            match = pattern.match(_head(line))
            if match is not None and match.group(1) and match.group(1).isdigit():
                found.append([int(match.group(1)), line[match.end():]])
    return found


def has_field(expected: Any, fields: tuple[str, ...], depth: int = 0) -> bool:
    """Returns True when an expectation names one of ``fields`` as a mapping key, at any depth."""
    if not fields or depth > 64:
        return False
    if isinstance(expected, dict):
        return any((key in fields and not str(key).startswith("$")) or has_field(value, fields, depth + 1)
                   for key, value in expected.items())
    if isinstance(expected, list):
        return any(has_field(item, fields, depth + 1) for item in expected)
    return False


def path_names_field(path: str, fields: tuple[str, ...]) -> bool:
    """Returns True when a mismatch path (``output.latest_file_state.sha256``, ``output[0].content``)
    passes through one of ``fields``."""
    if not fields:
        return False
    names = [part for part in re.split(r"[.\[\]]+", path) if part and not part.isdigit()]
    return any(name in fields for name in names[1:])
