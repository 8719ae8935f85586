"""Event shapes: ACP's ``session/update`` as sent on the wire, projected onto a contract's shape.

Seed 003's "ACP Event Mapping" writes a tool call's events as ``{"type": "toolCall", "id": ...}``
and ``{"type": "toolCallUpdate", "id": ..., "fields": {...}}``; ACP's schema, and so every agent
built on an ACP library, sends ``{"sessionUpdate": "tool_call", "toolCallId": ...}`` and
``{"sessionUpdate": "tool_call_update", "toolCallId": ..., <fields inline>}``. The seed's form is
ACP's Rust types before serde flattens them. ``events=seed003`` (an ``acp:`` option) renames the
wire form into the seed's, and nothing else: every value stays as the agent sent it, so where the
two still differ (``kind``, ``rawInput``, ``rawOutput``) the scenario says so.

=============================  ====================================
wire (ACP schema)              seed 003
=============================  ====================================
``sessionUpdate: tool_call``   ``type: toolCall``
``sessionUpdate:``             ``type: toolCallUpdate``
``tool_call_update``
``toolCallId``                 ``id``
a tool_call_update's other     ``fields: {...}``
keys (``status``,
``rawOutput``, ...)
=============================  ====================================

Other updates (agent messages, plans, modes) pass unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def seed003(event: dict[str, Any]) -> dict[str, Any]:
    """Returns one wire ``session/update`` in seed 003's shape (see the table above)."""
    params = event.get("params")
    if not isinstance(params, dict):
        return event
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
        return event
    rest = {key: value for key, value in update.items() if key not in ("sessionUpdate", "toolCallId")}
    if update["sessionUpdate"] == "tool_call":
        shaped = {"type": "toolCall", "id": update.get("toolCallId"), **rest}
    else:
        meta = rest.pop("_meta", None)
        shaped = {"type": "toolCallUpdate", "id": update.get("toolCallId"), "fields": rest}
        if meta is not None:
            shaped["_meta"] = meta
    return {**event, "params": {**params, "update": shaped}}


#: The projections the ``events=`` option names.
PROJECTIONS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"wire": lambda event: event, "seed003": seed003}
