"""JSON Schema validation, through one validator: jsonschema-rs.

Every schema the harness checks goes through here: the packaged schemas of scenario, profile and
binding files, the argument, output and options schemas a profile declares, the ``inputSchema`` of an
MCP server's tools and the ``cmd:`` protocol's responses. jsonschema-rs decides, and its errors also
explain: each carries the path in the instance, the path in the schema (with ``$ref`` followed), the
failed keyword with its details (the unexpected keys, the missing property) and, for ``anyOf`` and
``oneOf``, the errors of each branch. Its messages speak JSON (``null``, ``true``, ``"x"``), the
language of the files they are about.

Compiled validators are kept per schema (a profile's schemas are checked for every step of every
scenario).

Nothing is retrieved: a ``$ref`` may point into its own schema only. Left to itself jsonschema-rs
fetches any ``file://`` or ``http(s)://`` URI a schema names, and schemas come from profile files
(a pull request) and from candidates (an MCP server's ``inputSchema``): a reference to a JSON file
on the machine put its values into the reports (``1 is not one of "<secret>"``), one to a FIFO
hung the harness, one to a URL made it send requests. Such a schema is invalid, naming the URI.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# jsonschema-rs (which imports ``email`` and ``socket``) is imported where a validator is compiled:
# a warm start checks nothing before its first scenario (tests/test_start_imports.py).


#: The package's ``schema/`` folder: the JSON Schemas it ships (the package is a folder on the disk, as
#: the catalog's cache, which stats them, has it; importlib.resources would cost a run's start ~2 ms).
PACKAGED = Path(__file__).resolve().parents[1] / "schema"


@functools.cache
def packaged(name: str) -> dict[str, Any]:
    """Returns the JSON Schema ``name`` shipped in the package's ``schema/`` folder."""
    return json.loads((PACKAGED / name).read_text("utf-8"))


class SchemaInvalid(ValueError):
    """The schema is not a JSON Schema; ``path`` locates the problem inside it."""

    def __init__(self, path: list[Any], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def validator(schema: Any, *, formats: dict[str, Callable[[str], bool]] | None = None) -> Any:
    """Returns the compiled validator of ``schema`` (kept per schema); raises SchemaInvalid.

    ``formats`` turns on ``format`` checks, with these checkers replacing the built-in ones.
    """
    if formats is not None:  # the packaged schemas: compiled once by their owners
        return _compile(schema, formats)
    return _cached(_freeze(schema))


@functools.lru_cache(maxsize=256)
def _cached(frozen: Any) -> Any:
    return _compile(_thaw(frozen), None)


def _refuse(uri: str) -> Any:
    """The retriever: a schema may not make the harness read a file or the network."""
    raise ValueError(f"the harness retrieves no schema ({uri}): a $ref may point into its own schema only")


def _outward_ref(schema: Any, message: str) -> list[Any]:
    """Returns where in ``schema`` the reference a refused retrieval came from is (``[...,"$ref"]``)."""
    stack: list[tuple[list[Any], Any]] = [([], schema)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in ("$ref", "$dynamicRef") and isinstance(inner, str) and inner.split("#")[0] \
                        and f"({inner.split('#')[0]}" in message:
                    return where + [key]
                stack.append((where + [key], inner))
        elif isinstance(value, list):
            stack.extend((where + [index], inner) for index, inner in enumerate(value))
    return []


def _compile(schema: Any, formats: dict[str, Callable[[str], bool]] | None) -> Any:
    import jsonschema_rs
    try:
        if formats is None:
            return jsonschema_rs.validator_for(schema, retriever=_refuse)
        return jsonschema_rs.validator_for(schema, validate_formats=True, formats=formats, retriever=_refuse)
    except jsonschema_rs.ValidationError as exc:
        if "retrieves no schema" in exc.message:
            raise SchemaInvalid(_outward_ref(schema, exc.message), exc.message.split("retrieving it failed: ValueError: ")[-1]) from None
        raise SchemaInvalid(list(exc.instance_path), exc.message) from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise SchemaInvalid([], str(exc).split("\n", 1)[0]) from None


def schema_problem(schema: Any) -> tuple[list[Any], str] | None:
    """Returns (path inside the schema, message) when ``schema`` is not a JSON Schema, else None."""
    try:
        validator(schema)
    except SchemaInvalid as exc:
        return exc.path, exc.message
    return None


def errors(schema_validator: Any, instance: Any) -> list[Any]:
    """Returns the errors of ``instance``, each narrowed to the one the author most likely meant."""
    if schema_validator.is_valid(instance):
        return []
    return [most_relevant(error) for error in schema_validator.iter_errors(instance)]


def keyword(error: Any) -> str:
    """Returns the schema keyword ``error`` failed (``required``, ``additionalProperties``, ...)."""
    return error.kind.name


def most_relevant(error: Any) -> Any:
    """For anyOf/oneOf failures, descends into the branch the author most likely meant.

    That is the branch with the fewest errors, not counting branches of the wrong type at all;
    within it, the deepest error (an unknown key first).
    """
    while getattr(error.kind, "context", None):
        here = list(error.instance_path)
        branches = [branch for branch in error.kind.context if branch]
        if not branches:
            break
        chosen = min(branches, key=lambda errs: (
            all(keyword(e) == "type" and list(e.instance_path) == here for e in errs), len(errs),
            not any(keyword(e) == "additionalProperties" for e in errs)))
        error = max(chosen, key=lambda e: (len(e.instance_path), keyword(e) == "additionalProperties"))
    return error


def unexpected(error: Any) -> list[str]:
    """Returns the keys an additionalProperties or unevaluatedProperties error refused."""
    return [str(name) for name in getattr(error.kind, "unexpected", ())]


def missing(error: Any) -> str | None:
    """Returns the property a required error misses."""
    return getattr(error.kind, "property", None)


def schema_at(schema: Any, path: Iterable[Any]) -> Any:
    """Returns the part of ``schema`` at a schema path of an error (None when it cannot be followed)."""
    node = schema
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return None
    return node


def properties_of(schema: Any, error: Any) -> list[str]:
    """Returns the properties the (sub-)schema that raised ``error`` names, sorted."""
    parent = schema_at(schema, list(error.schema_path)[:-1])
    names = parent.get("properties", {}) if isinstance(parent, dict) else {}
    return sorted(names) if isinstance(names, dict) else []


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return ("d", tuple((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("l", tuple(_freeze(v) for v in value))
    return ("v", value)


def _thaw(frozen: Any) -> Any:
    kind, value = frozen
    if kind == "d":
        return {k: _thaw(v) for k, v in value}
    if kind == "l":
        return [_thaw(v) for v in value]
    return value
