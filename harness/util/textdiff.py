"""Shows where an observation differs from what was expected, so that a failure message shows the bug.

Long texts are never cut from the front only: two texts show a window around their first difference
on both sides (with its character, line and column), texts of several lines a unified diff, bytes a
hex window around the first differing byte. A text that should have matched a regex, or contained a
piece, shows how far the pattern (or the piece) got and where. Everything shown is bounded
(``WINDOW``, ``DIFF_LINES``, ``SEARCH_LIMIT``): a message stays a few lines long whatever the sizes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Protocol

WINDOW = 40  # characters shown on each side of the first difference
HEX_WINDOW = 16  # bytes shown on each side of the first differing byte
DIFF_LINES = 60  # lines of a unified diff shown, at most
SEARCH_LIMIT = 200_000  # characters searched when telling how far a pattern got
PATTERN_TRIES = 200  # prefixes of a pattern tried, at most


def first_difference(a: str | bytes, b: str | bytes) -> int | None:
    """Returns the index of the first differing character (or byte), None when equal."""
    if a == b:
        return None
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def _quote(text: str) -> str:
    """Returns ``text`` as a JSON string: control characters and line ends visible, nothing raw."""
    return json.dumps(text, ensure_ascii=False)


def excerpt(text: str, start: int, end: int) -> str:
    """Returns ``text[start:end]`` quoted, with ``…`` where it was cut and the whole length when it was."""
    start, end = max(0, start), min(len(text), end)
    shown = ("…" if start > 0 else "") + _quote(text[start:end]) + ("…" if end < len(text) else "")
    return shown + (f" ({len(text)} chars)" if start > 0 or end < len(text) else "")


def where(text: str, index: int) -> str:
    """Returns ``char N (line L, column C)`` for an index into ``text``; 1-based line and column."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"char {index} (line {line}, column {column})"


def text_window(expected: str, observed: str, width: int = WINDOW) -> str:
    """Returns expected and observed around their first difference, the same stretch of each."""
    index = first_difference(expected, observed)
    if index is None:
        return f"expected: {excerpt(expected, 0, 2 * width)}\nobserved: the same"
    start = max(0, index - width)
    return (f"first difference at {where(observed if index < len(observed) else expected, index)}\n"
            f"expected: {excerpt(expected, start, index + width)}\n"
            f"observed: {excerpt(observed, start, index + width)}")


def unified(expected: str, observed: str, limit: int = DIFF_LINES) -> str:
    """Returns a unified diff from expected to observed (line ends and control characters visible)."""
    import difflib  # only a run with such a failure shows one
    def lines(text: str) -> list[str]:
        return [_visible(line) for line in text.splitlines(keepends=True)]
    out = []
    for line in difflib.unified_diff(lines(expected), lines(observed), "expected", "observed", lineterm="", n=2):
        body = line.rstrip("\n")
        out.append(body if line.endswith("\n") or line.startswith(("---", "+++", "@@")) else body + "  ⟵ no newline")
    if len(out) > limit:
        out = out[:limit] + [f"… {len(out) - limit} more diff lines"]
    return "\n".join(out)


def _visible(line: str) -> str:
    """Returns a line with its end kept and every other control character escaped (\\r, \\x1b, ...)."""
    end = "\n" if line.endswith("\n") else ""
    body = line[: len(line) - len(end)]
    if any(ord(c) < 32 or ord(c) == 127 for c in body):
        body = "".join(c if (ord(c) >= 32 and ord(c) != 127) or c == "\t" else _quote(c)[1:-1] for c in body)
    return body + end


def hex_window(expected: bytes, observed: bytes, width: int = HEX_WINDOW) -> str:
    """Returns both byte strings in hex around their first differing byte."""
    index = first_difference(expected, observed)
    if index is None:
        return f"expected: {expected[: 2 * width].hex(' ')}\nobserved: the same"
    start = max(0, index - width)

    def show(data: bytes) -> str:
        part = data[start:index + width].hex(" ")
        return ("… " if start else "") + (part or "(nothing)") + (" …" if index + width < len(data) else "") \
            + f" ({len(data)} bytes)"
    return f"first difference at byte {index}\nexpected: {show(expected)}\nobserved: {show(observed)}"


def texts(expected: str, observed: str) -> str:
    """Returns how two texts differ: a unified diff for several lines, else a window around the difference."""
    if ("\n" in expected.rstrip("\n") or "\n" in observed.rstrip("\n")):
        index = first_difference(expected, observed)
        head = f"first difference at {where(observed if (index or 0) < len(observed) else expected, index or 0)}\n"
        return head + unified(expected, observed)
    return text_window(expected, observed)


class _Span(Protocol):
    """What a regex search finds (``re.Match``, ``regex.Match``): where it starts and ends."""

    def start(self) -> int: ...

    def end(self) -> int: ...


def regex_progress(pattern: str, text: str, search: Callable[[str, str], _Span | None] | None = None) -> str:
    """Returns how far ``pattern`` got in ``text``: the longest leading part of it that matches, where,
    and the part that did not; or that not even its start matched.

    ``search(pattern, text)`` is the regex search the matcher uses (``re.search`` by default); a
    leading part that is not a valid pattern on its own is skipped.
    """
    search = search or re.search
    text = text[:SEARCH_LIMIT]
    tries = 0
    for end in range(len(pattern) - 1, 0, -1):
        if tries >= PATTERN_TRIES:
            break
        head = pattern[:end]
        try:
            re.compile(head)
        except re.error:
            continue
        tries += 1
        try:
            found = search(head, text)
        except Exception:  # the matcher's engine refusing a part: no progress to report from it
            continue
        if found is not None and head.strip():
            stop = found.end()
            return (f"/{head}/ matches (up to {where(text, stop)}), then /{pattern[end:]}/ does not: "
                    f"{excerpt(text, max(0, found.start()), stop + WINDOW)}")
    return f"not even the start of /{pattern}/ matches"


def contains_progress(piece: str, text: str) -> str:
    """Returns how much of ``piece`` ``text`` holds: its longest leading part found, where, and what follows there."""
    text = text[:SEARCH_LIMIT]
    low, high = 0, len(piece)  # the longest found prefix, by bisection (a found prefix's prefixes are found)
    while low < high:
        middle = (low + high + 1) // 2
        if piece[:middle] in text:
            low = middle
        else:
            high = middle - 1
    if low == 0:
        return f"not even its first character {_quote(piece[:1])} occurs"
    at = text.index(piece[:low])
    return (f"its first {low} of {len(piece)} chars occur at {where(text, at)}, then expected "
            f"{_quote(piece[low:low + WINDOW])}, observed {excerpt(text, at + low, at + low + WINDOW)}")


def long_text(text: str, width: int = 2 * WINDOW) -> str:
    """Returns a long text as its head and tail (a difference at either end stays visible)."""
    if len(text) <= 2 * width:
        return _quote(text)
    return f"{_quote(text[:width])} … {_quote(text[-width:])} ({len(text)} chars)"
