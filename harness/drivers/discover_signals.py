"""What a probe's answers say, for ``harness discover`` (harness/drivers/discover_probe.py): where
in an answer a value sits (a JMESPath to it), whether a field says the call failed
(``success: false``, ``status: "failed"``), and what text tells a failed answer from the others."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Words that make a failure field: ``success: false``, ``result: "error"``, ``status: "failed"``.
_FAIL_VALUES = {"error", "failed", "failure", "fail"}
_FAIL_FLAGS = ("success", "ok")
_FAIL_STATES = ("result", "status", "state", "outcome")
_MESSAGE_KEYS = ("reason", "message", "error", "detail", "details", "msg")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- finding things in an answer --------------------------------------------------------------------


def key_expr(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else json.dumps(key)


def locate(value: Any, wanted: Callable[[Any], bool], sent_path: str = "") -> str | None:
    """Returns a JMESPath expression for the shallowest value in ``value`` that ``wanted`` accepts.

    An object keyed by the path that was sent (one key) is entered with ``values(@)[0]``, so the
    expression holds for any path."""
    level: list[tuple[str, Any]] = [("@", value)]
    for _depth in range(7):
        following: list[tuple[str, Any]] = []
        for where, item in level:
            if wanted(item):
                return where
            if isinstance(item, dict):
                keyed_by_path = len(item) == 1 and bool(sent_path) and str(next(iter(item))).endswith(Path(sent_path).name)
                for key, inner in list(item.items())[:50]:
                    step = "values(@)[0]" if keyed_by_path else key_expr(str(key))
                    following.append((step if where == "@" else f"{where}.{step}", inner))
            elif isinstance(item, list):
                for index, inner in enumerate(item[:20]):
                    following.append((f"[{index}]" if where == "@" else f"{where}[{index}]", inner))
        level = following
        if not level:
            break
    return None


def holds(*parts: str) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and all(p in v for p in parts)


def failure_field(output: Any, sent_path: str = "") -> tuple[dict[str, Any], str | None] | None:
    """Returns a failure signal for an answer that is an object saying it failed, and where its
    message is: ``({field: success, equals: false}, "reason")``; None when it says no such thing."""
    def find(value: Any, prefix: str, depth: int) -> tuple[dict[str, Any], str | None] | None:
        if not isinstance(value, dict) or depth > 4:
            return None
        keyed_by_path = len(value) == 1 and sent_path and next(iter(value)).endswith(Path(sent_path).name)
        message = next((k for k in _MESSAGE_KEYS if isinstance(value.get(k), str)), None)
        def at(key: str) -> str:
            return f"{prefix}{key_expr(key)}"
        for key in _FAIL_FLAGS:
            if value.get(key) is False:
                return {"field": at(key), "equals": False}, (at(message) if message else None)
        for key in _FAIL_STATES:
            if isinstance(value.get(key), str) and value[key].lower() in _FAIL_VALUES:
                return {"field": at(key), "equals": value[key]}, (at(message) if message else None)
        if value.get("error") not in (None, False, "", {}):
            inner = value["error"]
            text = at("error") + (".message" if isinstance(inner, dict) and isinstance(inner.get("message"), str) else "")
            return {"field": at("error")}, text
        for key, inner in value.items():
            head = "values(@)[0]." if keyed_by_path else f"{prefix}{key_expr(str(key))}."
            found = find(inner, head, depth + 1)
            if found is not None:
                return found
        return None
    return find(output, "", 0)


def _cut_at_paths(text: str, paths: list[str]) -> str:
    cut = len(text)
    for path in paths:
        if path and path in text:
            cut = min(cut, text.index(path))
    found = re.search(r"(?:^|\s)['\"]?/\S", text)  # any absolute path: it names this call's file
    if found:
        cut = min(cut, found.start())
    return text[:cut]


def _literal(text: str) -> str:
    """Returns ``text`` as a pattern matching it literally (spaces and dashes left readable)."""
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text)


def text_signal(failed: str, succeeded: list[str], paths: Sequence[str] = ()) -> str | None:
    """Returns a pattern matching the start of a failure's text and no success's text, or None:
    the fewest words (before any path the text names) that tell it from every success."""
    first = failed.strip().splitlines()[0] if failed.strip() else ""
    words = re.findall(r"\S+", _cut_at_paths(first, list(paths)))
    for count in range(1, min(len(words), 6) + 1):
        head = " ".join(words[:count]).rstrip(",.;")
        if not head:
            continue
        pattern = "^" + _literal(head)
        if not any(re.search(pattern, text or "") for text in succeeded):
            return pattern
    return None


_GENERIC_HEADS = re.compile(r"^(?:error|mcp error -?\d+|error executing \w+|error processing request)\s*:\s*", re.I)


def code_prefix(message: str, paths: list[str]) -> str:
    """Returns a pattern for the start of a failure message that names its kind: the words before a
    path it names or a colon, after any generic heads (``Error:``, ``MCP error -32602:``)."""
    first = _cut_at_paths(message.strip().splitlines()[0] if message.strip() else "", paths)
    heads = ""
    while True:
        found = _GENERIC_HEADS.match(first[len(heads):])
        if not found or not first[len(heads) + found.end():].strip():
            break
        heads += found.group(0)
    rest = first[len(heads):]
    if ":" in rest[1:]:
        rest = rest[: rest.index(":", 1)]
    rest = rest.strip().rstrip(":,-. ")[:60]
    text = (heads + rest).strip()
    return "^" + _literal(text) if text else ""


# -- the experiments ----------------------------------------------------------------------------------
