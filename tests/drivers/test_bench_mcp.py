"""The ``mcp:`` goals' floor (harness/drivers/bench_mcp.py ``sdk_floor``): the reference server's calls
made through the harness's MCP connection alone, with no runner around them."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.drivers import bench_mcp
from harness.scenario import catalog
from harness.targets.mcp.connection import RpcError

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = "gemini-safe-patch/safe_patch/patch-through-spelling-then-plain-read.yaml"


def test_the_floor_makes_each_call_on_the_server_and_hands_its_answer_to_the_next(tmp_path: Path) -> None:
    # Its second call takes the first one's hash (${step1.output.sha256}): an answer not in normal form
    # would leave the placeholder unresolved and the floor would raise.
    profile = tmp_path / "gemini-safe-patch"
    (profile / "safe_patch").mkdir(parents=True)
    shutil.copy(ROOT / "scenarios" / "gemini-safe-patch" / "profile.yaml", profile / "profile.yaml")
    shutil.copy(ROOT / "scenarios" / REFERENCES, profile / "safe_patch")
    scenarios = catalog.load([tmp_path]).scenarios
    assert [s.id for s in scenarios] == [REFERENCES.removesuffix(".yaml")]
    workspaces = tmp_path / "workspaces"
    workspaces.mkdir()
    start, calls, unsent = bench_mcp.sdk_floor(scenarios, str(workspaces))
    assert start > 0 and calls > 0 and unsent == 0
    assert list(workspaces.iterdir()) == []  # each scenario's folder removed after it


class _Connection:
    def __init__(self, error: RpcError | None = None) -> None:
        self.calls: list[tuple[str, dict, dict]] = []
        self.error = error

    def call_tool(self, name, arguments, meta, timeout):
        self.calls.append((name, arguments, meta))
        raise self.error  # type: ignore[misc]


def test_a_call_that_cannot_travel_as_utf8_is_counted_not_sent() -> None:
    unsent: list[str] = []
    connection = _Connection(RpcError(-32602, "bad"))
    session = bench_mcp._FloorSession(connection, {"id": "f0"}, 1.0, unsent)
    assert session.call("write_text_file", {"content": "\ud800"}) == {"error": {"code": None, "message": "not sent"}}
    assert unsent == ["write_text_file"] and connection.calls == []


def test_a_jsonrpc_error_is_the_answers_error_and_the_session_entry_travels_with_each_call() -> None:
    connection = _Connection(RpcError(-32602, "bad"))
    session = bench_mcp._FloorSession(connection, {"id": "f0"}, 1.0, [])
    assert session.call("write_text_file", {"path": "a"}) == {"error": {"code": -32602, "message": "bad"}}
    assert connection.calls == [("write_text_file", {"path": "a"}, {bench_mcp.SESSION_KEY: {"id": "f0"}})]
