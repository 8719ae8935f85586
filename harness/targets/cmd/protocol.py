"""The ``cmd:`` protocol's answers: its JSON Schema and the checker that holds responses to it.

Apart from the ``cmd:`` target (harness/targets/cmd/target.py) so that the in-process reference,
whose answers are held to the same normal form, does not import the target and its bindings.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from harness.util import schemas


def protocol_schema() -> dict[str, Any]:
    """Returns the protocol's JSON Schema as shipped in the package (read once: ``schemas.packaged``)."""
    return schemas.packaged("cmd-protocol.schema.json")


#: The schema of the answers to each operation.
_ANSWERS = {"hello": "hello-response", "call": "call-response", "open": "ack-response", "close": "ack-response",
            "bye": "ack-response"}


class ResponseChecker:
    """Validates responses against the protocol's JSON Schema, cheaply.

    The schema constrains a response only down to the members of ``error``: ``output`` and the
    items of ``events`` are ``true`` (any JSON). So whether a call, open, close or bye response is
    valid depends only on its *skeleton* (its keys, the value of ``ok``, the JSON type of each
    member and of each member of ``error``), and a verdict is remembered per skeleton: a run pays
    for a full validation once per shape of response, not once per call. ``hello`` responses,
    whose ``profiles`` items are constrained, are always validated in full.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self._defs = schema["$defs"]
        self._validators: dict[str, Any] = {}  # compiled at each operation's first answer
        self._valid: set[tuple] = set()

    def validator(self, op: str) -> Any:
        """Returns the compiled validator of the answers to ``op`` (the in-process reference answers
        only calls: the others are never compiled there)."""
        found = self._validators.get(op)
        if found is None:
            answer = _ANSWERS[op]
            found = self._validators[op] = schemas.validator(
                {"$defs": self._defs, "anyOf": [{"$ref": f"#/$defs/{answer}"}, {"$ref": "#/$defs/failure-response"}]})
        return found

    def problem(self, op: str, response: Any) -> str | None:
        """Returns what is wrong with ``response`` as an answer to ``op``, or None when it is valid."""
        key = _skeleton(op, response) if op != "hello" else None
        if key is not None and key in self._valid:
            return None
        found = schemas.errors(self.validator(op), response)
        if not found:
            if key is not None:
                self._valid.add(key)
            return None
        error = found[0]
        where = "/".join(str(p) for p in error.instance_path) or "top level"
        return f"at {where}: {error.message}"


def _type_of(value: Any) -> str:
    if isinstance(value, float):  # JSON Schema counts 1.0 as an integer
        return "integer" if value.is_integer() else "number"
    return type(value).__name__


def _skeleton(op: str, response: Any) -> tuple | None:
    if not isinstance(response, dict):
        return None
    parts: list[Any] = [op]
    for key, value in response.items():
        if key == "ok":
            parts.append((key, value if isinstance(value, bool) else _type_of(value)))
        elif key == "error" and isinstance(value, dict):
            parts.append((key, tuple(sorted((k, _type_of(v)) for k, v in value.items()))))
        else:
            parts.append((key, _type_of(value)))
    return tuple(sorted(parts[1:], key=lambda p: p[0])) + (op,)


@cache
def response_checker() -> ResponseChecker:
    """Returns the process-wide response checker (compiled validators and their memo)."""
    return ResponseChecker(protocol_schema())
