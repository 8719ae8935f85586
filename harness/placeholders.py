"""Substitutes ``${name}`` placeholders (e.g. ``${workspace}``) in call arguments and expectations."""

from __future__ import annotations

import re
from typing import Any, Mapping

_PLACEHOLDER = re.compile(r"\$(\$)?\{([a-z_]+)\}")


class UnknownPlaceholder(KeyError):
    """A ``${name}`` whose name the harness does not know."""


def substitute(value: Any, names: Mapping[str, str], *, in_regex: bool = False) -> Any:
    """Returns ``value`` with every placeholder in every string replaced, recursively.

    Inside a ``$regex`` matcher the substituted text is escaped, so a path with dots stays literal.
    ``$${name}`` stands for a literal ``${name}``.
    """
    if isinstance(value, str):
        return _substitute_text(value, names, in_regex)
    if isinstance(value, list):
        return [substitute(item, names, in_regex=in_regex) for item in value]
    if isinstance(value, dict):
        return {
            substitute(key, names) if isinstance(key, str) else key:
            substitute(item, names, in_regex=in_regex or key == "$regex")
            for key, item in value.items()
        }
    return value


def _substitute_text(text: str, names: Mapping[str, str], in_regex: bool) -> str:
    if "${" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        if match.group(1):  # $${name}: a literal
            return match.group(0)[1:]
        name = match.group(2)
        if name not in names:
            raise UnknownPlaceholder(f"unknown placeholder ${{{name}}} (known: {', '.join(sorted(names))})")
        return re.escape(names[name]) if in_regex else names[name]

    return _PLACEHOLDER.sub(replace, text)


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
