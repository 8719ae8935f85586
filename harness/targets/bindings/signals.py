"""Reading a target's result for a binding: bounded JMESPath, and failure signals matched on re2.

A binding's ``output`` and ``failure.message`` are JMESPath expressions, evaluated by an interpreter
that counts what it builds (a 192-character expression once asked for about 130 GB); its ``text``
signals and message codes are regular expressions on google-re2 (linear time: an echoed path
cannot make a pattern backtrack without end).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jmespath
import jmespath.functions
import jmespath.visitor
import re2 as _regex  # linear-time matching (google-re2): a binding's pattern cannot backtrack without end

REGEX_ENGINE = "re2"

#: Failure signals are matched on at most this many characters of a result's text.
TEXT_CAP = 64 * 1024
#: What one JMESPath evaluation may build: values (as the harness walks the result: one reached
#: twice counts twice) and characters made by ``to_string`` or ``join``. Each ``[@, @]`` stage of an
#: expression doubles what it holds, so a 192-character expression asked for about 130 GB.
MAX_RESULT_VALUES = 200_000
MAX_RESULT_TEXT = 16 * TEXT_CAP
#: The failure channels of a protocol, each a signal a binding may list.
CHANNEL_SIGNALS = ("isError", "jsonrpc-error")
DEFAULT_SIGNALS: tuple[Any, ...] = CHANNEL_SIGNALS
_VALUE_KEYS = ("arg", "const", "template")


@dataclass(frozen=True)
class FailureRule:
    """How a target tool signals failure, and what its failures mean."""

    signals: tuple[Any, ...] = DEFAULT_SIGNALS
    message: Any = None  # compiled JMESPath, or None
    codes: tuple[tuple[Any, Any], ...] = ()  # (compiled pattern, code)

    def channel_fails(self, channel: str) -> bool:
        """Returns True when a result on ``channel`` (isError, jsonrpc-error) means failure."""
        return channel in self.signals


def _signal(rule: FailureRule, output: Any, text: str | None) -> str | None:
    """Returns the signal that makes a successful-looking result a failure, or None."""
    for signal in rule.signals:
        if not isinstance(signal, dict):
            continue
        if "field" in signal:
            value = _search(signal["_field"], output)
            hit = value == signal["equals"] if "equals" in signal else bool(value)
            if hit:
                return f"field {signal['field']}"
        elif "text" in signal:
            subject = text if text is not None else (output if isinstance(output, str) else None)
            if subject is not None and signal["_text"].search(subject[:TEXT_CAP]):
                return f"text {signal['text']!r}"
    return None


def _code_of(codes: Iterable[tuple[Any, Any]], message: str) -> Any:
    for pattern, code in codes:
        if pattern.search(message[:TEXT_CAP]):
            return code
    return None


class ResultTooLarge(ValueError):
    """A binding's JMESPath expression built more than the harness takes from one result."""


def _search(expression: Any, data: Any) -> Any:
    try:
        found = _BoundedInterpreter().visit(expression.parsed, data)
    except (jmespath.exceptions.JMESPathError, RecursionError):
        return None  # a projection that does not apply to this result (or nests past the stack): nothing there
    _count_values(found, expression.expression)
    return found


def _count_values(value: Any, expression: str) -> None:
    """Raises ResultTooLarge when walking ``value`` (shared parts once per path) meets too many values."""
    left, stack = MAX_RESULT_VALUES, [value]
    while stack:
        item = stack.pop()
        left -= 1
        if left < 0:
            raise ResultTooLarge(f"the binding's JMESPath {expression[:80]!r} built more than "
                                 f"{MAX_RESULT_VALUES} values from one result")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class _BoundedFunctions(jmespath.functions.Functions):
    """JMESPath's functions, with the two that make text bounded in what they make."""

    @jmespath.functions.signature({"types": []})
    def _func_to_string(self, arg: Any) -> str:
        if isinstance(arg, str):
            return arg
        _count_values(arg, "to_string(...)")
        text = json.dumps(arg, separators=(",", ":"))
        return _bounded_text(text, "to_string")

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["array-string"]})
    def _func_join(self, separator: str, array: list[str]) -> str:
        if len(separator) * len(array) + sum(len(item) for item in array) > MAX_RESULT_TEXT:
            raise ResultTooLarge(f"a binding's JMESPath join(...) would make more than {MAX_RESULT_TEXT} characters")
        return separator.join(array)


def _bounded_text(text: str, name: str) -> str:
    if len(text) > MAX_RESULT_TEXT:
        raise ResultTooLarge(f"a binding's JMESPath {name}(...) made more than {MAX_RESULT_TEXT} characters")
    return text


_OPTIONS = jmespath.Options(custom_functions=_BoundedFunctions())


class _BoundedInterpreter(jmespath.visitor.TreeInterpreter):
    """JMESPath's evaluation, counting the elements the list-making steps build (flatten, projections,
    multi-selects): an expression doubling a list per stage is stopped at about twice the bound."""

    def __init__(self) -> None:
        super().__init__(_OPTIONS)
        self._left = MAX_RESULT_VALUES

    def _spend(self, built: Any) -> Any:
        if isinstance(built, (list, dict)):
            self._left -= len(built)
            if self._left < 0:
                raise ResultTooLarge(f"a binding's JMESPath expression built more than {MAX_RESULT_VALUES} values "
                                     "from one result")
        return built

    def visit_flatten(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_flatten(node, value))

    def visit_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_projection(node, value))

    def visit_value_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_value_projection(node, value))

    def visit_filter_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_filter_projection(node, value))

    def visit_multi_select_list(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_multi_select_list(node, value))

    def visit_multi_select_dict(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_multi_select_dict(node, value))


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- loading ------------------------------------------------------------------------------------


@functools.cache


def _pattern_problem(pattern: str) -> str | None:
    try:
        _regex.compile(pattern)
    except Exception as exc:  # re.error, re2.error: the engine's own message
        return f"invalid regular expression {pattern!r}: {exc}"
    return None
