"""Compares an observed value with an expectation written in the scenario format's matcher language.

A plain value matches exactly; mappings and lists compare recursively and may hold matchers at any
depth; a mapping with a single ``$``-key is a matcher (docs/scenario-format.md, "Matchers").
The result is a list of :class:`Mismatch`, empty when everything matched.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from harness.content import to_bytes


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    """One unmet expectation: where, what was expected, what was observed."""

    path: str
    expected: str
    observed: Any
    why: str = ""
    expected_value: Any = MISSING  # the plain expected value, when there is one (for a diff)

    def render(self) -> str:
        """Returns the mismatch as readable lines; two texts of several lines as a unified diff."""
        head = f"{self.path}: {self.why}" if self.why else f"{self.path}:"
        if isinstance(self.expected_value, str) and isinstance(self.observed, str) and (
                "\n" in self.expected_value or "\n" in self.observed):
            return head + "\n" + text_diff(self.expected_value, self.observed)
        return f"{head}\n  expected: {self.expected}\n  observed: {_show(self.observed)}"

    def as_dict(self) -> dict[str, Any]:
        """Returns a JSON-ready form."""
        observed = None if self.observed is MISSING else self.observed
        return {"path": self.path, "expected": self.expected, "observed": observed, "why": self.why}


def is_matcher(value: Any) -> bool:
    """Returns True when ``value`` is a single-``$``-key matcher mapping."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _MATCHERS


def match(expected: Any, observed: Any, path: str = "value", *, subset: bool = False) -> list[Mismatch]:
    """Returns every way ``observed`` fails ``expected``; an empty list means it matches."""
    if is_matcher(expected):
        (name, arg), = expected.items()
        return _MATCHERS[name](arg, observed, path)
    if observed is MISSING:
        return [Mismatch(path, _show(expected), observed, "missing")]
    if isinstance(expected, dict):
        return _match_mapping(expected, observed, path, subset)
    if isinstance(expected, list):
        if subset:
            return _match_subsequence(expected, observed, path)
        return _match_list(expected, observed, path, subset)
    if _scalar_equal(expected, observed):
        return []
    return [Mismatch(path, _show(expected), observed, expected_value=expected)]


def _match_mapping(expected: dict, observed: Any, path: str, subset: bool) -> list[Mismatch]:
    if not isinstance(observed, dict):
        return [Mismatch(path, "a mapping", observed, f"is {_type_name(observed)}")]
    out: list[Mismatch] = []
    for key, want in expected.items():
        out += match(want, observed.get(key, MISSING), f"{path}.{key}", subset=subset)
    if not subset:
        extra = [key for key in observed if key not in expected]
        if extra:
            out.append(Mismatch(path, f"keys {sorted(expected)}", observed, f"unexpected keys {extra}"))
    return out


def _match_list(expected: list, observed: Any, path: str, subset: bool) -> list[Mismatch]:
    if not isinstance(observed, list):
        return [Mismatch(path, "a list", observed, f"is {_type_name(observed)}")]
    if len(expected) != len(observed):
        return [Mismatch(path, f"{len(expected)} items: {_show(expected)}", observed, f"has {len(observed)} items")]
    out: list[Mismatch] = []
    for index, (want, got) in enumerate(zip(expected, observed)):
        out += match(want, got, f"{path}[{index}]", subset=subset)
    return out


def _match_subsequence(expected: list, observed: Any, path: str) -> list[Mismatch]:
    """Each expected item must match a distinct observed item, in order."""
    if not isinstance(observed, list):
        return [Mismatch(path, "a list", observed, f"is {_type_name(observed)}")]
    position = 0
    for index, want in enumerate(expected):
        while position < len(observed) and match(want, observed[position], path, subset=True):
            position += 1
        if position == len(observed):
            return [Mismatch(f"{path}[{index}]", f"an item matching {_show(want)}", observed,
                             "no such item (in order)")]
        position += 1
    return []


def _scalar_equal(expected: Any, observed: Any) -> bool:
    # bool is an int in Python; in JSON true is not 1.
    if isinstance(expected, bool) or isinstance(observed, bool):
        return type(expected) is type(observed) and expected == observed
    return expected == observed


def _eq(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    if observed is not MISSING and _deep_equal(arg, observed):
        return []
    return [Mismatch(path, _show(arg), observed)]


def _deep_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    return _scalar_equal(a, b)


def _regex(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str) and re.search(arg, observed):
        return []
    return [Mismatch(path, f"text matching /{arg}/", observed)]


def _contains(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str) and arg in observed:
        return []
    return [Mismatch(path, f"text containing {arg!r}", observed)]


def _not_contains(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str) and arg not in observed:
        return []
    return [Mismatch(path, f"text not containing {arg!r}", observed)]


def _subset(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    if observed is MISSING:
        return [Mismatch(path, f"a value holding {_show(arg)}", observed, "missing")]
    return match(arg, observed, path, subset=True)


def _sha256(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    digest = hashlib.sha256(to_bytes(arg)).hexdigest()
    if observed == digest:
        return []
    return [Mismatch(path, f"sha256 {digest}", observed)]


def _any(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    return [] if observed is not MISSING else [Mismatch(path, "any value", observed, "missing")]


def _absent(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    return [] if observed is MISSING else [Mismatch(path, "no such key", observed, "present")]


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _type(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if observed is not MISSING and _JSON_TYPES[arg](observed):
        return []
    return [Mismatch(path, f"any {arg}", observed, f"is {_type_name(observed)}")]


def _len(arg: int, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, (str, list, dict)) and len(observed) == arg:
        return []
    size = len(observed) if isinstance(observed, (str, list, dict)) else "no"
    return [Mismatch(path, f"length {arg}", observed, f"has length {size}")]


def _json(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    if not isinstance(observed, str):
        return [Mismatch(path, "a JSON text", observed, f"is {_type_name(observed)}")]
    try:
        parsed = json.loads(observed)
    except ValueError as exc:
        return [Mismatch(path, "a JSON text", observed, f"does not parse: {exc}")]
    return match(arg, parsed, f"{path}(json)")


_MATCHERS: dict[str, Callable[[Any, Any, str], list[Mismatch]]] = {
    "$eq": _eq,
    "$regex": _regex,
    "$contains": _contains,
    "$not_contains": _not_contains,
    "$subset": _subset,
    "$sha256": _sha256,
    "$any": _any,
    "$absent": _absent,
    "$type": _type,
    "$len": _len,
    "$json": _json,
}

MATCHER_NAMES = frozenset(_MATCHERS)


def text_diff(expected: str, observed: str) -> str:
    """Returns a unified diff from expected to observed, line ends made visible."""
    import difflib
    lines = difflib.unified_diff(
        [line.replace("\r", "\\r") for line in expected.splitlines(keepends=True)],
        [line.replace("\r", "\\r") for line in observed.splitlines(keepends=True)],
        "expected", "observed", lineterm="", n=2)
    out = []
    for line in lines:
        body = line.rstrip("\n")
        out.append(body if line.endswith("\n") or line.startswith(("---", "+++", "@@")) else body + "  ⟵ no newline")
    return "\n".join("  " + line for line in out)


def _type_name(value: Any) -> str:
    if value is MISSING:
        return "missing"
    for name, check in _JSON_TYPES.items():
        if check(value):
            return f"a{'n' if name[0] in 'aeiou' else ''} {name}"
    return type(value).__name__


def _show(value: Any, limit: int = 400) -> str:
    if value is MISSING:
        return "<missing>"
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
