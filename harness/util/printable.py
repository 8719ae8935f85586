"""Strings and values from scenarios and candidates, made safe to show and to store.

Everything a candidate returns and everything a scenario names is shown literally: no terminal
escape sequence, no Rich markup, no lone surrogate (which no UTF-8 file or terminal accepts), no
NaN or Infinity (which strict JSON has not), no nesting deeper than a report can hold.

- :func:`shown` escapes control characters (all but newline and tab) as ``\\x1b`` / ``\\u009b``,
  lone surrogates as ``\\udc80``, and the characters that change how text looks without being
  seen: the bidirectional controls (U+202A-202E embeddings and overrides, U+2066-2069 isolates,
  U+200E/200F/061C marks), which can make a diff of two different texts look equal or a path read
  backwards, and the invisible ones (zero-width spaces and joiners, word joiner and invisible
  operators, the byte-order mark, soft hyphen, Hangul fillers, variation selectors, tag
  characters, interlinear annotations) as ``\\u202e`` or ``\\U000e0041``. Every report that shows a
  candidate's or a scenario's text (terminal, Markdown, HTML, JUnit, GitHub annotations) passes it
  through here; Rich markup is left as plain text by the callers (they print
  :class:`rich.text.Text` or escape it).
- :func:`defused` keeps a text shown in a CI log from being read as a GitHub Actions workflow
  command: a line that starts with ``::`` once the runner trims its white space (any Unicode
  white space, so indentation defuses nothing) gets its first colon shown as ``\\x3a``, and the
  legacy ``##[`` form, read anywhere in a line, becomes ``\\x23#[``. ``harness run`` stops
  workflow commands around its own output instead (harness/report/github.py); the pytest plugin,
  which shares the log with other plugins, defuses what it prints.
- :func:`json_safe` returns a value that ``json.dumps(..., allow_nan=False)`` and a UTF-8 file
  accept: NaN and the infinities become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
  lone surrogates are escaped as above; a value nested deeper than :data:`MAX_DEPTH` becomes a
  string saying so with its SHA-256; mapping keys become strings.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

#: Containers deeper than this in one observed value are replaced by a summary.
MAX_DEPTH = 64

#: Control characters, lone surrogates, and the bidirectional and invisible characters (see above).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\ud800-\udfff\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str) -> str:
    """Returns ``text`` with control characters (but newline and tab), lone surrogates and the
    bidirectional and invisible characters escaped."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


_COMMAND = re.compile(r"^([^\S\n]*):(?=:)|##\[", re.MULTILINE)


def defused(text: str) -> str:
    """Returns ``text`` with every line GitHub Actions would read as a workflow command defused."""
    if "::" not in text and "##[" not in text:
        return text
    return _COMMAND.sub(lambda m: "\\x23#[" if m.group(0) == "##[" else m.group(1) + "\\x3a", text)


def _text(text: str) -> str:
    # Only what cannot be stored is changed in data: lone surrogates (control characters are
    # valid JSON and YAML, and shown escaped wherever they reach a terminal).
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return re.sub(r"[\ud800-\udfff]", _escape, text)


def json_safe(value: Any, depth: int = 0) -> Any:
    """Returns ``value`` in a form strict JSON and UTF-8 accept (see the module docstring)."""
    if value is None or (type(value) is str and value.isascii()):
        return value  # the commonest answers, decided without a copy of the text
    if depth == 0 and _unchanged(value, 0):
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            try:
                text = repr(value)[:100000]
            except RecursionError:
                text = "<too deep to show>"
            return f"<nested deeper than {MAX_DEPTH} levels; sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}>"
        if isinstance(value, dict):
            return {_text(str(k)) if not isinstance(k, str) else _text(k): json_safe(v, depth + 1) for k, v in value.items()}
        return [json_safe(item, depth + 1) for item in value]
    return value


def json_safe_at(value: Any, depth: int) -> Any:
    """Returns ``value`` made safe as :func:`json_safe` makes it where it sits ``depth`` levels deep in
    a larger document (the JSON report writes each result on its own, as the whole document would)."""
    return value if _unchanged(value, depth) else json_safe(value, depth)


def _unchanged(value: Any, depth: int) -> bool:
    # The common case: a container that strict JSON and UTF-8 take as it is and that stays within
    # MAX_DEPTH where it sits. Plain JSON data is seen by one walk (_plain); anything else (tuples,
    # keys that are not strings, subclasses) is decided by the JSON encoder, in C.
    if not isinstance(value, (dict, list)):
        return False
    if _plain(value, depth):
        return True
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return False
    return text.count("[") + text.count("{") + depth <= MAX_DEPTH


def _plain(value: Any, depth: int) -> bool:
    """Returns whether ``value`` is plain JSON data that :func:`json_safe` would give back as it is
    where it sits ``depth`` levels deep: dicts with string keys, lists, strings without lone
    surrogates, finite floats, ints, booleans, None, no container at MAX_DEPTH or deeper. Exact
    types only (a subclass or a tuple answers False: the caller decides those otherwise)."""
    kind = type(value)
    if kind is str:
        return value.isascii() or _encodes(value)
    if kind is dict:
        if depth >= MAX_DEPTH:
            return False
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or _encodes(key)) or not _plain(item, depth + 1):
                return False
        return True
    if kind is list:
        if depth >= MAX_DEPTH:
            return False
        for item in value:
            if not _plain(item, depth + 1):
                return False
        return True
    if value is None or kind is int or kind is bool:
        return True
    if kind is float:
        return math.isfinite(value)
    return False


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
