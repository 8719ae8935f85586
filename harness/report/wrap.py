"""Text made to fit a narrow terminal: ids wrapped at ``/``, long payloads cut in the middle.

A scenario id breaks only after a ``/`` (``claude-code/edit/`` + ``replace-all-multiple``), never
inside a word; a payload (a PDF's base64, a 2,000-line output) longer than its room keeps its
start and its end, with what was left out named by its size and digest in between, so two long
payloads can still be told apart and the full text found in the JSON report.
"""

from __future__ import annotations

import hashlib

#: A payload is cut when longer than this many characters (about 12 lines at 80 columns).
PAYLOAD = 960


def wrap_id(text: str, width: int) -> list[str]:
    """Returns ``text`` in lines of at most ``width`` characters, broken after ``/`` where it must
    break (a part longer than the width alone is broken at the width)."""
    width = max(width, 8)
    if len(text) <= width:
        return [text]
    parts = [part + "/" for part in text.split("/")]
    parts[-1] = parts[-1][:-1]
    lines, line = [], ""
    for part in parts:
        while len(part) > width:  # one segment wider than the line: no better place to break
            if line:
                lines.append(line)
                line = ""
            lines.append(part[:width])
            part = part[width:]
        if len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    if line:
        lines.append(line)
    return lines


def digest(text: str) -> str:
    """Returns the short digest a cut payload is named by (sha256 of its UTF-8, 12 hex digits)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def cut_middle(text: str, limit: int = PAYLOAD) -> str:
    """Returns ``text`` when it is at most ``limit`` characters, else its start and end with
    ``[… N characters cut, sha256 D …]`` between (the whole text's size and digest)."""
    if len(text) <= limit:
        return text
    note = f" [… {len(text) - limit:,} of {len(text):,} characters cut, sha256 {digest(text)} …] "
    keep = max(limit - len(note), 20)
    head = keep // 2
    return text[:head] + note + text[len(text) - (keep - head):]


def cut(line: str, width: int) -> str:
    """Returns one line cut to ``width`` at its end with ``…``."""
    return line if len(line) <= width else line[: max(width - 1, 1)] + "…"
