"""Expands placeholders in call arguments and expectations.

- ``${workspace}``: the absolute workspace root.
- ``${stepN.output.a.b}`` / ``${stepN.error.message}`` / ``${stepN.events[0].id}``: a value an
  earlier call (step N, 1-based) returned, e.g. the hash a read returned, fed to the next patch. A
  string that is exactly one placeholder becomes the value itself (a number stays a number).
- ``{$content: <content spec>}`` in ``args``: the spec's bytes as text, so a 1 MiB argument needs no
  1 MiB of YAML.

Inside a ``$regex`` matcher the substituted text is escaped; ``$${name}`` is a literal ``${name}``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from harness.content import to_bytes

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
        return {
            substitute(key, names, steps=steps) if isinstance(key, str) else key:
            substitute(item, names, steps=steps, in_regex=in_regex or key == "$regex", in_args=in_args)
            for key, item in value.items()
        }
    return value


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
