"""Expands placeholders in call arguments and expectations.

- ``${workspace}``: the absolute workspace root.
- ``${stepN.output.a.b}`` / ``${stepN.error.message}`` / ``${stepN.events[0].id}``: a value an
  earlier call (step N, 1-based) returned, e.g. the hash a read returned, fed to the next patch. A
  string that is exactly one placeholder becomes the value itself (a number stays a number).
- ``{$content: <content spec>}`` in ``args``: the spec's bytes as text, so a 1 MiB argument needs no
  1 MiB of YAML.
- ``{$code_points: ["text", 0xD800, ...]}`` in ``args``: the strings (placeholders expanded) and
  single code points joined, so an argument can hold a lone surrogate, which no YAML file can.

Inside a ``$regex`` matcher the substituted text is escaped; ``$${name}`` is a literal ``${name}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from harness.scenario.content_spec import code_points_text, to_bytes
from harness.scenario.matchers import MISSING, Reference
from harness.util.memo import by_identity

_PLACEHOLDER = re.compile(r"\$(\$)?\{([a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_-]+|\[\d+\])*)\}")
_STEP = re.compile(r"^step(\d+)\.(output|error|events)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)$")

Lookup = Callable[[int, str], Any]  # (1-based step number, "output" | "error" | "events") -> value


class UnknownPlaceholder(KeyError):
    """A placeholder whose name the harness does not know, or that cannot be resolved now."""

    def __str__(self) -> str:
        return str(self.args[0])


def substitute(value: Any, names: Mapping[str, str], *, steps: Lookup | None = None, in_regex: bool = False,
               in_args: bool = False) -> Any:
    """Returns ``value`` with every placeholder replaced, recursively (see the module docstring)."""
    if isinstance(value, str):
        return _substitute_text(value, names, steps, in_regex)
    if isinstance(value, list):
        return [substitute(item, names, steps=steps, in_regex=in_regex, in_args=in_args) for item in value]
    if isinstance(value, dict):
        if in_args and len(value) == 1 and "$content" in value:
            return to_bytes(value["$content"]).decode("utf-8")
        if in_args and len(value) == 1 and "$code_points" in value:
            items = value["$code_points"]
            return code_points_text([_piece(substitute(item, names, steps=steps)) if isinstance(item, str) else item
                                     for item in items] if isinstance(items, list) else items)
        return {
            substitute(key, names, steps=steps) if isinstance(key, str) else key:
            substitute(item, names, steps=steps, in_regex=in_regex or key == "$regex", in_args=in_args)
            for key, item in value.items()
        }
    return value


def constant(value: Any) -> bool:
    """Returns whether no string in ``value`` (a key or a value, at any depth) holds ``${``: then
    :func:`substitute` (outside call arguments, where ``$content`` counts too) gives an equal value.
    """
    return not holds(value, "${")


@by_identity
def holds(value: Any, needle: str) -> bool:
    """Returns whether a string in ``value`` (a key or a value, at any depth) holds ``needle``
    (remembered per object and needle: the runner asks about the same expectations and arguments
    every time it runs a scenario)."""
    return _holds(value, needle)


def _holds(value: Any, needle: str) -> bool:
    if isinstance(value, str):
        return needle in value
    if isinstance(value, list):
        return any(_holds(item, needle) for item in value)
    if isinstance(value, dict):
        return any((isinstance(key, str) and needle in key) or _holds(item, needle) for key, item in value.items())
    return False


def _substitute_text(text: str, names: Mapping[str, str], steps: Lookup | None, in_regex: bool) -> Any:
    if "${" not in text:
        return text
    whole = _PLACEHOLDER.fullmatch(text)
    if whole and not whole.group(1) and not in_regex:
        return _resolve(whole.group(2), names, steps)

    def replace(match: re.Match[str]) -> str:
        if match.group(1):  # $${name}: a literal
            return match.group(0)[1:]
        value = _resolve(match.group(2), names, steps)
        value = value if isinstance(value, str) else _json(value)
        return re.escape(value) if in_regex else value

    return _PLACEHOLDER.sub(replace, text)


def _resolve(name: str, names: Mapping[str, str], steps: Lookup | None) -> Any:
    if name in names:
        return names[name]
    step = _STEP.match(name)
    if step is None:
        raise UnknownPlaceholder(f"unknown placeholder ${{{name}}} (known: {', '.join(sorted(names))}, stepN.output...)")
    if steps is None:
        raise UnknownPlaceholder(f"${{{name}}} refers to a step result, which is not available here")
    value = steps(int(step.group(1)), step.group(2))
    for part in re.findall(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]", step.group(3)):
        key, index = part
        try:
            value = value[int(index)] if index else value[key]
        except (KeyError, IndexError, TypeError):
            raise UnknownPlaceholder(f"${{{name}}}: step {step.group(1)}'s {step.group(2)} has no "
                                     f"{key or '[' + index + ']'}") from None
    return value


def _piece(value: Any) -> str:
    """A ``$code_points`` string whose placeholder gave another value (a number) stays text: its JSON form."""
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def placeholders_in(value: Any) -> set[str]:
    """Returns the names of all placeholders used in ``value`` (for validation)."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(m.group(2) for m in _PLACEHOLDER.finditer(value) if not m.group(1))
    elif isinstance(value, list):
        for item in value:
            found |= placeholders_in(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            found |= placeholders_in(key) | placeholders_in(item)
    return found


def step_reference(name: str) -> int | None:
    """Returns the step number a ``stepN.…`` placeholder refers to, or None for other names."""
    match = _STEP.match(name)
    return int(match.group(1)) if match else None


# --- references to earlier observations: $same_as / $differs_from --------------------------------

REFERENCE_MATCHERS = ("$same_as", "$differs_from")
_REFERENCE = re.compile(r"^(?:steps\[(\d+)\]\.)?(args|output|error|events)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)$")

ReferenceLookup = Callable[[int | None, str], Any]  # (1-based step or None for this call, field) -> value


def parse_reference(text: str) -> tuple[int | None, str, list[str | int]] | None:
    """Splits ``steps[2].output.latest_file_state.sha256`` into (2, "output", [...]); None if malformed.

    Without ``steps[N].`` the path names a field of the call whose expectation holds it. ``N`` is
    1-based, as in ``${stepN...}`` and in reports.
    """
    found = _REFERENCE.match(text) if isinstance(text, str) else None
    if found is None:
        return None
    parts: list[str | int] = [int(index) if index else key
                              for key, index in re.findall(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]", found.group(3))]
    return (int(found.group(1)) if found.group(1) else None), found.group(2), parts


@by_identity
def has_references(value: Any) -> bool:
    """Returns whether an expectation holds a ``$same_as``/``$differs_from`` (remembered per object,
    as :func:`holds`); without one :func:`resolve_references` gives an equal value."""
    return bool(references_in(value))



def references_in(value: Any) -> list[str]:
    """Returns every ``$same_as``/``$differs_from`` path in an expectation (for validation)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in REFERENCE_MATCHERS and len(value) == 1:
                found.append(item)
            else:
                found += references_in(item)
    elif isinstance(value, list):
        for item in value:
            found += references_in(item)
    return found


def resolve_references(value: Any, lookup: ReferenceLookup) -> Any:
    """Returns ``value`` with each ``$same_as``/``$differs_from`` path replaced by a resolved Reference.

    ``lookup(step, field)`` returns a call's ``args``/``output``/``error``/``events`` (raising
    LookupError when there is none, e.g. the output of a failed call); a path that leads nowhere
    resolves to a Reference without value, which the matcher reports as a mismatch.
    """
    if isinstance(value, list):
        return [resolve_references(item, lookup) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and next(iter(value)) in REFERENCE_MATCHERS:
        (name, text), = value.items()
        parsed = parse_reference(text)
        resolved: Any = MISSING
        if parsed is not None:
            step, field, parts = parsed
            try:
                resolved = lookup(step, field)
                for part in parts:
                    resolved = resolved[part]
            except (LookupError, TypeError):
                resolved = MISSING
        return {name: Reference(text, resolved)}
    return {key: resolve_references(item, lookup) for key, item in value.items()}
