"""The fake Messages API the claude-code target plays scenarios through: no CLI needed.

Example: the harness queues ``Read {file_path}`` while the CLI's request is held; the reply is a
``tool_use`` stream; the CLI's next request carries the ``tool_result``, which the harness receives.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import pytest

from harness.targets.claude_code.fake_api import (
    FINISH_TEXT,
    SIDE_TEXT,
    FakeMessagesAPI,
    TokenPolicy,
    find_tool_result,
    is_main_loop,
    sse_event,
    text_stream,
    tool_use_stream,
)
from harness.targets.model_api.base import TurnScript

TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}]


def parse_sse(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Returns (event name, data) pairs of an SSE body."""
    out = []
    for chunk in body.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def post(api: FakeMessagesAPI, path: str, body: Any, timeout: float = 10) -> tuple[int, bytes, str]:
    """POSTs JSON to the fake server; returns status, body and content type."""
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        conn.request("POST", path, data, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read(), response.getheader("Content-Type", "")
    finally:
        conn.close()


def main_request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "max_tokens": 10, "tools": TOOLS, "messages": messages}


def tool_result_message(tool_use_id: str, content: Any, is_error: bool | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return {"role": "user", "content": [block, {"type": "text", "text": "<system-reminder>r</system-reminder>"}]}


class InThread:
    """Runs a request in a thread so the test can act while the server holds it."""

    def __init__(self, fn: Any, *args: Any) -> None:
        self.value: Any = None
        self.thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self.thread.start()

    def _run(self, fn: Any, *args: Any) -> None:
        self.value = fn(*args)

    def join(self, timeout: float = 10) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "request still held"
        return self.value


@pytest.fixture
def api() -> Any:
    server = FakeMessagesAPI(hold_timeout=20).start()
    yield server
    server.stop()


# --------------------------------------------------------------------------- SSE encoding


def test_sse_event_is_named_after_its_type() -> None:
    assert sse_event({"type": "message_stop"}) == b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def test_tool_use_stream_has_the_shape_the_cli_accepts() -> None:
    events = parse_sse(tool_use_stream("msg_1", "toolu_1", "Edit", {"file_path": "/a", "old_string": "é"}))
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop",
    ]
    assert events[0][1]["message"]["content"] == []
    assert events[1][1]["content_block"] == {"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {}}
    delta = events[2][1]["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {"file_path": "/a", "old_string": "é"}  # the whole input in one delta
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"


def test_text_stream_ends_the_turn() -> None:
    events = parse_sse(text_stream("msg_2", "bye"))
    assert events[1][1]["content_block"]["type"] == "text"
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "bye"}
    assert events[4][1]["delta"]["stop_reason"] == "end_turn"


# --------------------------------------------------------------------------- request parsing


def test_tool_result_with_string_content() -> None:
    body = main_request([{"role": "user", "content": "go"}, tool_result_message("t1", "1\tx")])
    found = find_tool_result(body, "t1")
    assert found is not None and found.text == "1\tx" and not found.is_error
    assert found.siblings == [{"type": "text", "text": "<system-reminder>r</system-reminder>"}]


def test_tool_result_with_list_content_keeps_the_blocks() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    body = main_request([tool_result_message("t1", [image, {"type": "text", "text": "caption"}])])
    found = find_tool_result(body)
    assert found is not None and found.content[0] == image and found.text == "caption"


def test_is_error_is_false_when_absent_and_true_when_sent() -> None:
    assert not find_tool_result(main_request([tool_result_message("t1", "ok")])).is_error  # type: ignore[union-attr]
    assert find_tool_result(main_request([tool_result_message("t1", "bad", True)])).is_error  # type: ignore[union-attr]


def test_only_the_last_user_message_and_the_asked_id_count() -> None:
    body = main_request([tool_result_message("old", "x"), {"role": "assistant", "content": []}, {"role": "user", "content": "plain"}])
    assert find_tool_result(body, "old") is None
    assert find_tool_result(main_request([tool_result_message("t1", "x")]), "t2") is None


def test_main_loop_requests_offer_tools() -> None:
    assert is_main_loop(main_request([]))
    assert not is_main_loop({"model": "m", "messages": []})
    assert not is_main_loop({"model": "m", "messages": [], "tools": []})


# --------------------------------------------------------------------------- count_tokens policy


def test_token_policies_are_deterministic() -> None:
    body = {"messages": [{"role": "user", "content": "é" * 10}]}
    text = json.dumps({"messages": body["messages"]}, ensure_ascii=False, separators=(",", ":"))
    assert TokenPolicy("chars4").count(body) == -(-len(text) // 4)
    assert TokenPolicy("bytes").count(body) == len(text.encode())
    assert TokenPolicy("const:7").count(body) == 7
    assert TokenPolicy("0").count(body) == 0
    with pytest.raises(ValueError):
        TokenPolicy("tiktoken")


def test_count_tokens_endpoint_answers_with_the_policy(api: FakeMessagesAPI) -> None:
    api.tokens = TokenPolicy("const:1234")
    status, body, _ = post(api, "/v1/messages/count_tokens?beta=true", {"messages": [{"role": "user", "content": "x"}]})
    assert status == 200 and json.loads(body) == {"input_tokens": 1234}
    assert api.requests[-1].kind == "count_tokens"


# --------------------------------------------------------------------------- the server and the step script


def test_unknown_requests_are_recorded_and_answered_404(api: FakeMessagesAPI) -> None:
    status, body, _ = post(api, "/v1/complete", {"x": 1})
    assert status == 404 and json.loads(body)["type"] == "error"
    assert (api.requests[-1].kind, api.requests[-1].path) == ("unknown", "/v1/complete")


def test_side_requests_are_answered_at_once(api: FakeMessagesAPI) -> None:
    status, body, ctype = post(api, "/v1/messages?beta=true", {"model": "haiku", "stream": True, "messages": []})
    assert status == 200 and ctype == "text/event-stream"
    assert parse_sse(body)[2][1]["delta"]["text"] == SIDE_TEXT
    status, body, _ = post(api, "/v1/messages", {"model": "haiku", "messages": []})  # not streamed
    assert json.loads(body)["content"][0]["text"] == SIDE_TEXT


def test_a_tool_call_round_trip_holds_until_the_harness_speaks(api: FakeMessagesAPI) -> None:
    first = InThread(post, api, "/v1/messages?beta=true", main_request([{"role": "user", "content": "go"}]))
    time.sleep(0.3)
    assert first.thread.is_alive() and api.script.held.is_set()  # held: no turn queued yet

    tool_use_id = api.script.call("Read", {"file_path": "/w/a.txt"})
    status, body, _ = first.join()
    events = parse_sse(body)
    assert status == 200 and events[1][1]["content_block"]["id"] == tool_use_id
    assert json.loads(events[2][1]["delta"]["partial_json"]) == {"file_path": "/w/a.txt"}

    # The CLI answers with the tool_result; the harness gets it while the request is held again.
    second = InThread(post, api, "/v1/messages?beta=true", main_request([tool_result_message(tool_use_id, "1\thello", False)]))
    result = api.script.result(tool_use_id, timeout=5)
    assert result is not None and result.found and result.text == "1\thello" and not result.is_error
    time.sleep(0.2)
    assert second.thread.is_alive()  # the harness may change the workspace now

    api.script.finish()
    events = parse_sse(second.join()[1])
    assert events[2][1]["delta"]["text"] == FINISH_TEXT and events[4][1]["delta"]["stop_reason"] == "end_turn"


def test_an_error_result_is_handed_over_with_is_error(api: FakeMessagesAPI) -> None:
    first = InThread(post, api, "/v1/messages", main_request([{"role": "user", "content": "go"}]))
    tool_use_id = api.script.call("Edit", {"file_path": "/w/a.txt", "old_string": "x", "new_string": "y"})
    first.join()
    second = InThread(post, api, "/v1/messages", main_request([tool_result_message(tool_use_id, "<tool_use_error>no</tool_use_error>", True)]))
    result = api.script.result(tool_use_id, timeout=5)
    assert result is not None and result.is_error and result.text == "<tool_use_error>no</tool_use_error>"
    api.script.finish()
    second.join()


def test_a_request_without_the_awaited_result_is_reported_not_waited_for(api: FakeMessagesAPI) -> None:
    first = InThread(post, api, "/v1/messages", main_request([{"role": "user", "content": "go"}]))
    tool_use_id = api.script.call("Read", {"file_path": "/w/a.txt"})
    first.join()
    second = InThread(post, api, "/v1/messages", main_request([{"role": "user", "content": "something else"}]))
    result = api.script.result(tool_use_id, timeout=5)
    assert result is not None and not result.found and result.content == "something else"
    api.script.finish()
    second.join()


def test_the_hold_is_bounded() -> None:
    with FakeMessagesAPI(hold_timeout=0.5) as server:
        started = time.monotonic()
        status, body, _ = post(server, "/v1/messages", main_request([{"role": "user", "content": "go"}]))
        assert time.monotonic() - started < 5
        assert parse_sse(body)[4][1]["delta"]["stop_reason"] == "end_turn"


def test_waiting_for_a_result_is_bounded_and_close_releases_it() -> None:
    script: TurnScript[object] = TurnScript(hold_timeout=1)
    started = time.monotonic()
    assert script.result("toolu_none", timeout=0.2) is None
    assert time.monotonic() - started < 2
    waiter = InThread(script.result, "toolu_none", 30)
    script.close()
    assert waiter.join(5) is None


def test_stop_releases_a_held_request() -> None:
    server = FakeMessagesAPI(hold_timeout=60).start()
    held = InThread(post, server, "/v1/messages", main_request([{"role": "user", "content": "go"}]))
    time.sleep(0.2)
    server.script.close()
    status, body, _ = held.join(5)
    server.stop()
    assert status == 200 and parse_sse(body)[4][1]["delta"]["stop_reason"] == "end_turn"


def test_only_the_clis_own_permission_text_counts_as_a_permission_request() -> None:
    from harness.targets.claude_code.session import PERMISSION_PATTERN
    assert PERMISSION_PATTERN.search("Claude requested permissions to read from /w/a.txt, but you haven't granted it yet.")
    echoed = "<tool_use_error>String to replace not found in file.\nString: permission to write</tool_use_error>"
    assert not PERMISSION_PATTERN.search(echoed)


def test_messages_after_the_result_come_with_it_without_cache_hints() -> None:
    note = {"role": "system", "content": [{"type": "text", "text": "[Truncated: PARTIAL view — /w/a.txt: showing lines 1-42 of 2001 total (1000000 tokens, cap 25000).]",
                                           "cache_control": {"type": "ephemeral"}}]}
    body = main_request([{"role": "user", "content": "go"}, tool_result_message("t1", "1\tx"), note])
    found = find_tool_result(body, "t1")
    assert found is not None and found.text == "1\tx"
    assert found.following == [{"role": "system", "content": [{"type": "text", "text": note["content"][0]["text"]}]}]
    assert find_tool_result(main_request([tool_result_message("t1", "x")]), "t1").following == []  # type: ignore[union-attr]


def test_count_tokens_can_be_unavailable(api: FakeMessagesAPI) -> None:
    api.tokens = TokenPolicy("unavailable")
    status, body, _ = post(api, "/v1/messages/count_tokens?beta=true", {"messages": [{"role": "user", "content": "x"}]})
    assert status == 404 and json.loads(body)["error"]["type"] == "not_found_error"
    assert (api.requests[-1].kind, api.requests[-1].answer) == ("count_tokens", "404")
    assert not api.tokens.available and TokenPolicy("chars4").available


def test_a_warmup_conversation_with_tools_is_a_side_request() -> None:
    own = main_request([{"role": "user", "content": [{"type": "text", "text": "Run the scenario."}]}])
    warmup = main_request([{"role": "user", "content": [{"type": "text", "text": "Warmup"}]}])
    assert is_main_loop(own, "Run the scenario.") and is_main_loop(warmup)
    assert not is_main_loop(warmup, "Run the scenario.")
    server = FakeMessagesAPI(hold_timeout=20, prompt="Run the scenario.").start()
    try:
        status, body, _ = post(server, "/v1/messages", warmup)  # answered at once, never held
        assert status == 200 and server.requests[-1].kind == "side"
        assert SIDE_TEXT in body.decode()
    finally:
        server.stop()


def test_the_cache_markers_and_the_offered_tools_are_placed_relative_to_the_result() -> None:
    result = tool_result_message("t1", "1\tx")
    result["content"][0]["cache_control"] = {"type": "ephemeral"}
    earlier = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {},
                                                 "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    note = {"role": "system", "content": [{"type": "text", "text": "The user hasn't heard from you in a while.",
                                           "cache_control": {"type": "ephemeral"}}]}
    body = main_request([{"role": "user", "content": "go"}, earlier, result, note])
    body["tools"] = [{"name": "Write"}, {"name": "Read"}]
    found = find_tool_result(body, "t1")
    assert found is not None
    assert found.cache_markers == [
        {"message": -1, "role": "assistant", "block": "tool_use", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"message": 0, "role": "user", "block": "tool_result", "cache_control": {"type": "ephemeral"}},
        {"message": 1, "role": "system", "block": "text", "cache_control": {"type": "ephemeral"}}]
    assert found.tools_offered == ["Read", "Write"]
    plain = find_tool_result(main_request([tool_result_message("t1", "x")]), "t1")
    assert plain is not None and plain.cache_markers == [] and plain.tools_offered == sorted(
        t["name"] for t in main_request([])["tools"])
