"""Compares an observed value with an expectation written in the scenario format's matcher language.

A plain value matches exactly; mappings and lists compare recursively and may hold matchers at any
depth; a mapping with a single ``$``-key is a matcher (docs/scenario-format.md, "Matchers").
The result is a list of :class:`Mismatch`, empty when everything matched.

``$same_as`` and ``$differs_from`` compare with a value observed earlier in the scenario (or in
another field of the same response); the runner resolves their path to a :class:`Reference` before
matching (harness/scenario/placeholders.py, ``resolve_references``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# `regex` (pinned in pyproject.toml): the syntax and meaning of Python's `re`, which the scenario
# format promises ("a string that re.search matches"), plus a time bound on each search, so a
# catastrophic pattern against a candidate's output is an error verdict, not a hang. A linear-time
# engine (google-re2) was the other choice; it cannot run the lookarounds the catalog relies on and
# reads `$`, `\d`, `\s` and `\w` differently, so it would change what existing scenarios mean.
# Imported with the first pattern compiled (about a fifth of the harness's imports): a run whose
# scenarios hold no `$regex` does without it.
from harness.scenario.content_spec import to_bytes
from harness.util import limits
from harness.util import textdiff as difference

#: Seconds one ``$regex`` search may take.
REGEX_TIMEOUT = 2.0


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"

    def __reduce__(self) -> str:
        return "MISSING"  # unpickled (from a worker process) as the same sentinel


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    """One unmet expectation: where, what was expected, what was observed."""

    path: str
    expected: str
    observed: Any
    why: str = ""
    expected_value: Any = MISSING  # the plain expected value, when there is one (for a diff)
    detail: str = ""  # how far a pattern or a piece got in the observed text (harness/util/textdiff.py)

    def render(self) -> str:
        """Returns the mismatch as readable lines, showing where it differs (harness/util/textdiff.py):
        two texts as a window around their first difference, or a unified diff when they have several
        lines; a long observed text by its head and its tail; how far a pattern got."""
        head = f"{self.path}: {self.why}" if self.why else f"{self.path}:"
        if isinstance(self.expected_value, str) and isinstance(self.observed, str):
            return head + "\n" + _indent(difference.texts(self.expected_value, self.observed))
        observed = difference.long_text(self.observed) if isinstance(self.observed, str) else _show(self.observed)
        out = f"{head}\n  expected: {self.expected}\n  observed: {observed}"
        return out + (f"\n  {self.detail}" if self.detail else "")

    def as_dict(self) -> dict[str, Any]:
        """Returns a JSON-ready form; ``explanation`` is ``render()``, for the reports to show as is."""
        observed = None if self.observed is MISSING else self.observed
        return {"path": self.path, "expected": self.expected, "observed": observed, "why": self.why,
                "explanation": self.render()}


@dataclass(frozen=True)
class Reference:
    """An earlier observation a ``$same_as``/``$differs_from`` points at: the path as written, its value."""

    text: str
    value: Any = MISSING  # MISSING when the path leads nowhere (a failed call, an absent field)


def is_matcher(value: Any) -> bool:
    """Returns True when ``value`` is a single-``$``-key matcher mapping."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _MATCHERS


#: Above 0 while a matcher only asks whether a value matches (``$not``, ``$any_of``, finding an item
#: of a subsequence): the mismatches found then are dropped, so how far a pattern got is not worked out.
_quiet = 0


def _fails(expected: Any, observed: Any, path: str, *, subset: bool = False) -> bool:
    """Returns whether ``observed`` fails ``expected``, without working out what no one will read."""
    global _quiet
    _quiet += 1
    try:
        return bool(match(expected, observed, path, subset=subset))
    finally:
        _quiet -= 1


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
        while position < len(observed) and _fails(want, observed[position], path, subset=True):
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
    return [Mismatch(path, _show(arg), observed, expected_value=arg)]


def _deep_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    return _scalar_equal(a, b)


class PatternError(Exception):
    """A ``$regex`` could not be run safely (it timed out, or does not compile): an ``error`` verdict."""


def regex_problem(pattern: str) -> str | None:
    """Returns why ``pattern`` cannot be used as a ``$regex`` (placeholders count as plain text), or None."""
    probe = re.sub(r"\$\$?\{[^}]*\}", "x", pattern)
    try:
        _compiled(probe)
    except (_engine().error, re.error, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        return str(exc) or type(exc).__name__
    return None


def _engine() -> Any:
    """Returns the ``regex`` module, imported at the first call."""
    import regex
    return regex


def load_engine() -> None:
    """Imports the ``$regex`` engine now: before worker processes are forked, which would each
    import it for the catalog's patterns (about 8 ms of processor time each)."""
    _engine()


def _compiled(pattern: str) -> Any:
    found = _COMPILED.get(pattern)
    if found is None:
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        size = expanded_size(pattern)
        if size > limits.MAX_REGEX_SIZE:
            raise ValueError(f"it expands to {size} parts when compiled (counted repeats multiply what they "
                             f"repeat), more than the cap of {limits.MAX_REGEX_SIZE} (HARNESS_MAX_REGEX_SIZE)")
        small = size <= _CACHED_SIZE
        try:  # a large pattern is not kept (here or in the engine's own cache): many would fill memory
            found = _engine().compile(pattern, cache_pattern=small)
        except MemoryError:
            raise ValueError(f"it did not fit in memory when compiled ({size} parts)") from None
        if small:
            _COMPILED[pattern] = found
    return found


#: Patterns compiled to at most this many parts are kept for the next use (the catalog's are all).
_CACHED_SIZE = 20_000


def expanded_size(pattern: str) -> int:
    """Returns how many parts ``pattern`` compiles to, each counted repeat multiplying what it repeats.

    Read with the standard library's own parser of the ``re`` syntax (which the ``regex`` engine
    shares); a pattern it cannot read (syntax of ``regex`` alone) is sized as if its counted repeats
    were all nested, which can only overestimate.
    """
    try:
        _parser: Any = importlib.import_module("re._parser")
        _constants: Any = importlib.import_module("re._constants")
        # \p{L} (a Unicode property, the regex engine's alone) is one character, as x is.
        return _parsed_size(_parser.parse(re.sub(r"\\[pP]\{[^}]*\}", "x", pattern)), _constants)
    except (re.error, RecursionError, ImportError, AttributeError, ValueError, OverflowError):
        size = max(len(pattern), 1)
        for low, comma, high in re.findall(r"\{(\d+)(,?)(\d*)\}", pattern):
            size *= max(int(high or low) if comma else int(low), 1)
            if size > limits.MAX_REGEX_SIZE:
                break
        return size


def _parsed_size(items: Any, c: Any) -> int:
    total = 0
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    for op, av in items:
        if op in repeats:
            low, high, sub = av
            total += max(high if high != c.MAXREPEAT else low, 1) * _parsed_size(sub, c)
        elif op is c.SUBPATTERN:
            total += _parsed_size(av[-1], c)
        elif op is c.BRANCH:
            total += sum(_parsed_size(branch, c) for branch in av[1])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            total += _parsed_size(av[1], c)
        elif op is getattr(c, "ATOMIC_GROUP", None):
            total += _parsed_size(av, c)
        elif op is c.GROUPREF_EXISTS:
            total += _parsed_size(av[1], c) + (_parsed_size(av[2], c) if av[2] else 0)
        else:
            total += 1
        if total > limits.MAX_REGEX_SIZE:
            break  # enough to refuse it
    return total


_COMPILED: dict[str, Any] = {}


def _regex(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str):
        try:
            found = _compiled(arg).search(observed, timeout=REGEX_TIMEOUT)
        except TimeoutError:
            raise PatternError(f"{path}: the $regex {_show(arg, 120)} did not finish within {REGEX_TIMEOUT:g} s "
                               f"on {len(observed)} characters (catastrophic backtracking?)") from None
        except (_engine().error, ValueError, OverflowError, RecursionError) as exc:
            raise PatternError(f"{path}: the $regex {_show(arg, 120)} cannot run: {exc}") from None
        if found:
            return []
    detail = difference.regex_progress(arg, observed) if isinstance(observed, str) and not _quiet else ""
    return [Mismatch(path, f"text matching /{arg}/", observed, detail=detail)]


def _contains(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str) and arg in observed:
        return []
    detail = difference.contains_progress(arg, observed) if isinstance(observed, str) and not _quiet else ""
    return [Mismatch(path, f"text containing {arg!r}", observed, detail=detail)]


def _not_contains(arg: str, observed: Any, path: str) -> list[Mismatch]:
    if isinstance(observed, str) and arg not in observed:
        return []
    detail = f"found at {difference.where(observed, observed.index(arg))}" if isinstance(observed, str) else ""
    return [Mismatch(path, f"text not containing {arg!r}", observed, detail=detail)]


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


def _reference(arg: Any) -> Reference:
    # An unresolved path (a matcher used outside a call's expectation) refers to nothing.
    return arg if isinstance(arg, Reference) else Reference(str(arg))


def _same_as(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    ref = _reference(arg)
    if ref.value is MISSING:
        return [Mismatch(path, f"the value of {ref.text}", observed, f"{ref.text} was not observed")]
    if observed is not MISSING and _deep_equal(ref.value, observed):
        return []
    return [Mismatch(path, f"the value of {ref.text}: {_show(ref.value)}", observed, expected_value=ref.value)]


def _differs_from(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    ref = _reference(arg)
    if ref.value is MISSING:
        return [Mismatch(path, f"a value other than {ref.text}", observed, f"{ref.text} was not observed")]
    if observed is MISSING:
        return [Mismatch(path, f"a value other than {ref.text}", observed, "missing")]
    if not _deep_equal(ref.value, observed):
        return []
    return [Mismatch(path, f"a value other than {ref.text} ({_show(ref.value)})", observed, "the same value")]


def _not(arg: Any, observed: Any, path: str) -> list[Mismatch]:
    if observed is not MISSING and _fails(arg, observed, path):
        return []
    return [Mismatch(path, f"a value not matching {_show(arg)}", observed, "matches")]


def _any_of(arg: list[Any], observed: Any, path: str) -> list[Mismatch]:
    if any(not _fails(want, observed, path) for want in arg):
        return []
    return [Mismatch(path, f"a value matching one of {_show(arg)}", observed, "matches none")]


def _all_of(arg: list[Any], observed: Any, path: str) -> list[Mismatch]:
    out: list[Mismatch] = []
    for want in arg:
        out += match(want, observed, path)
    return out


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
    except RecursionError:  # a candidate's text nested past the parser's stack
        return [Mismatch(path, "a JSON text", observed, "nests too deep to parse")]
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
    "$same_as": _same_as,
    "$differs_from": _differs_from,
    "$not": _not,
    "$any_of": _any_of,
    "$all_of": _all_of,
}

MATCHER_NAMES = frozenset(_MATCHERS)


def text_diff(expected: str, observed: str) -> str:
    """Returns a unified diff from expected to observed, line ends made visible, indented by two."""
    return _indent(difference.unified(expected, observed))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _type_name(value: Any) -> str:
    if value is MISSING:
        return "missing"
    for name, check in _JSON_TYPES.items():
        if check(value):
            return f"a{'n' if name[0] in 'aeiou' else ''} {name}"
    return type(value).__name__


def _plain(value: Any) -> Any:
    return value.text if isinstance(value, Reference) else repr(value)


def _show(value: Any, limit: int = 400) -> str:
    if value is MISSING:
        return "<missing>"
    text = json.dumps(value, ensure_ascii=False, default=_plain)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
