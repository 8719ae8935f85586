"""An mcp: call's arguments are held to the tool's inputSchema before they are sent (harness/targets/mcp/target.py).

Arguments passed on as they are and valid for the tool are sent without the binding's full check;
any others get it, so a rule the binding is to blame for is still named (and the call not sent).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from harness.targets.base import TargetError
from harness.targets.mcp import target as mcp

SCHEMA = {"type": "object", "required": ["path", "options"],
          "properties": {"path": {"type": "string"},
                         "options": {"type": "object", "required": ["mode"], "properties": {"mode": {"type": "string"}}}}}


class _Connection:
    """Stands in for a connection to a server offering one tool with SCHEMA; records what it is sent."""

    def __init__(self, schema: Any = SCHEMA) -> None:
        self.tools = {"write": SimpleNamespace(input_schema=schema)}
        self.validators: dict[str, Any] = {}
        self.sent: list[dict[str, Any]] = []

    def call_tool(self, name: str, arguments: dict[str, Any], meta: Any, timeout: float) -> Any:
        self.sent.append(arguments)
        return SimpleNamespace(meta=None, is_error=False, structured_content={"ok": True},
                               content=[SimpleNamespace(type="text", text='{"ok": true}')])


def _session(connection: _Connection) -> mcp.McpSession:
    target = mcp.McpTarget("mcp:python -m reference_impl.mcp_server")
    return mcp.McpSession(target, connection, {"id": "s1"})


def test_valid_arguments_are_sent_and_the_schema_compiled_once() -> None:
    connection = _Connection()
    session = _session(connection)
    for _ in range(3):
        assert session.call("write", {"path": "/w/a", "options": {"mode": "x"}}).output == {"ok": True}
    assert len(connection.sent) == 3
    assert list(connection.validators) == ["write"]


def test_a_call_the_scenario_made_wrong_is_still_sent_as_it_is() -> None:
    connection = _Connection()
    _session(connection).call("write", {"path": 5})  # a wrong type, a required argument left out: the scenario's
    assert connection.sent == [{"path": 5}]


def test_a_rule_inside_a_passed_argument_gets_the_full_check_and_is_not_sent() -> None:
    connection = _Connection()
    with pytest.raises(TargetError) as caught:
        _session(connection).call("write", {"path": "/w/a", "options": {}})
    assert caught.value.kind == "binding" and "inputSchema" in str(caught.value)
    assert connection.sent == []


@pytest.mark.parametrize("schema", [None, {}, {"type": "object", "properties": {"path": {"type": "nonsense"}}}])
def test_a_missing_or_broken_schema_is_no_reason_not_to_send(schema: Any) -> None:
    connection = _Connection(schema)
    _session(connection).call("write", {"path": "/w/a"})
    assert connection.sent == [{"path": "/w/a"}]


def test_a_step_marked_invalid_args_is_sent_and_its_answer_recorded_not_blamed_on_the_binding() -> None:
    from harness.targets.base import DELIBERATE_ARGS
    connection = _Connection()
    session = _session(connection)
    with pytest.raises(TargetError):  # unmarked: the binding's rule, not sent
        session.call("write", {"path": "/w/a", "options": {}})
    marked = DELIBERATE_ARGS.set(True)
    try:
        observed = session.call("write", {"path": "/w/a", "options": {}})
    finally:
        DELIBERATE_ARGS.reset(marked)
    assert connection.sent == [{"path": "/w/a", "options": {}}] and observed.output == {"ok": True}
    assert "inputSchema" in observed.extra["invalid_args"]  # which rule it broke stays in the report
