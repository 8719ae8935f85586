"""The fake model endpoints (harness/targets/model_api/): one recorded request/response pair per API and
agent (tests/data/model_api/, captured from real sessions: streamed), and round trips through the
``openai`` SDK's own client, streamed and not (the SDK parses and validates every answer)."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from harness.targets.model_api import FakeModelServer, ToolCall, dialect
from harness.targets.model_api.base import FINISH_TEXT, SIDE_TEXT

DATA = Path(__file__).resolve().parents[1] / "data" / "model_api"
RECORDED = sorted(path.stem for path in DATA.glob("*.json"))
PROMPT = "Run the file tool calls of this conformance scenario."


def load(agent: str) -> dict[str, Any]:
    return json.loads((DATA / f"{agent}.json").read_text(encoding="utf-8"))


def echoed_call(api: str, request: dict[str, Any]) -> ToolCall:
    """Returns the tool call the agent's history says the model made (the fake's first answer)."""
    if api == "anthropic-messages":
        for message in request["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if message["role"] == "assistant" and block.get("type") == "tool_use":
                    return ToolCall(block["id"], block["name"], block["input"])
    if api == "openai-chat":
        for message in request["messages"]:
            for call in message.get("tool_calls") or []:
                return ToolCall(call["id"], call["function"]["name"], json.loads(call["function"]["arguments"]))
    if api == "openai-responses":
        for item in request["input"]:
            if item.get("type") == "custom_tool_call":
                return ToolCall(item["call_id"], item["name"], {"input": item["input"]}, "custom")
            if item.get("type") == "function_call":
                return ToolCall(item["call_id"], item["name"], json.loads(item["arguments"]))
    raise AssertionError("the recorded request holds no tool call")


def recorded_output(api: str, request: dict[str, Any], call_id: str) -> Any:
    """Returns the tool result content the recorded request carries for ``call_id``, as sent."""
    if api == "anthropic-messages":
        return next(block["content"] for message in request["messages"] if isinstance(message["content"], list)
                    for block in message["content"] if block.get("type") == "tool_result" and block["tool_use_id"] == call_id)
    if api == "openai-chat":
        return next(m["content"] for m in request["messages"] if m["role"] == "tool" and m["tool_call_id"] == call_id)
    return next(item["output"] for item in request["input"] if item.get("call_id") == call_id and item["type"].endswith("_output"))


@pytest.mark.parametrize("agent", RECORDED)
def test_the_recorded_answer_is_what_the_fake_sends(agent: str) -> None:
    """The answer the real agent accepted (recorded) is byte for byte what the dialect makes for that call."""
    data = load(agent)
    api = dialect(data["api"])
    call = echoed_call(data["api"], data["request"])
    reply = api.tool_call(call, data["first_request"], stream=data["stream"], seq=data["seq"])
    assert reply.status == 200
    assert reply.content_type == ("text/event-stream" if data["stream"] else "application/json")
    assert reply.body.decode() == data["first_answer"]


@pytest.mark.parametrize("agent", RECORDED)
def test_the_tool_result_of_a_recorded_request_is_found(agent: str) -> None:
    data = load(agent)
    api = dialect(data["api"])
    call = echoed_call(data["api"], data["request"])
    found = api.find_result(data["request"], call)
    assert found is not None and found.call_id == call.call_id
    assert found.content == recorded_output(data["api"], data["request"], call.call_id)
    assert found.text.strip()  # every recorded result is a non-empty text
    other = ToolCall("call_other", call.name, call.arguments, call.kind)
    assert api.find_result(data["request"], other) is None


@pytest.mark.parametrize("agent", RECORDED)
def test_a_recorded_request_is_the_main_loop_only_with_the_sessions_prompt(agent: str) -> None:
    data = load(agent)
    server = FakeModelServer(dialect(data["api"]), prompt=PROMPT)
    assert server.is_main(data["request"])
    assert not FakeModelServer(dialect(data["api"]), prompt="another conversation").is_main(data["request"])
    without_tools = {k: v for k, v in data["request"].items() if k != "tools"}
    assert not server.is_main(without_tools)


# --------------------------------------------------------------------------- round trips through the openai SDK

TOOL = {"type": "function", "function": {"name": "read", "description": "Reads a file.",
                                         "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}}}}


@pytest.fixture
def chat_server():
    with FakeModelServer(dialect("openai-chat"), prompt=PROMPT, hold_timeout=10) as server:
        yield server


@pytest.fixture
def responses_server():
    with FakeModelServer(dialect("openai-responses"), prompt=PROMPT, hold_timeout=10) as server:
        yield server


def client(server: FakeModelServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="sk-fake", max_retries=0, timeout=10)


def in_thread(fn: Any) -> dict[str, Any]:
    """Runs ``fn`` in a thread (the request is held until the test queues a turn); returns its box."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", fn()), daemon=True)
    thread.start()
    box["thread"] = thread
    return box


def joined(box: dict[str, Any]) -> Any:
    box["thread"].join(10)
    assert not box["thread"].is_alive(), "the request was not answered"
    return box["value"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_completions_round_trip(chat_server: FakeModelServer, stream: bool) -> None:
    sdk = client(chat_server)
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]

    def ask() -> tuple[str | None, list[dict[str, Any]]]:
        if not stream:
            answer = sdk.chat.completions.create(model="fake-model", messages=messages, tools=[TOOL])
            message = answer.choices[0].message
            calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]
            return message.content, calls
        text, calls = "", []
        for chunk in sdk.chat.completions.create(model="fake-model", messages=messages, tools=[TOOL], stream=True,
                                                 stream_options={"include_usage": True}):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for c in choice.delta.tool_calls or []:
                    calls.append({"id": c.id, "name": c.function.name, "arguments": c.function.arguments})
        return text or None, calls

    box = in_thread(ask)
    call_id = chat_server.script.call("read", {"filePath": "/w/a.txt"})
    text, calls = joined(box)
    assert calls == [{"id": call_id, "name": "read", "arguments": '{"filePath": "/w/a.txt"}'}]
    messages += [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "read", "arguments": calls[0]["arguments"]}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "1: hello"}]
    box = in_thread(ask)
    result = chat_server.script.result(call_id, timeout=10)
    assert result is not None and result.found and result.text == "1: hello"
    chat_server.script.finish()
    assert joined(box) == (FINISH_TEXT, [])
    assert [r.kind for r in chat_server.requests] == ["main", "main"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kind", ["function", "custom"])
def test_responses_round_trip(responses_server: FakeModelServer, stream: bool, kind: str) -> None:
    sdk = client(responses_server)
    tools: list[dict[str, Any]] = ([{"type": "function", "name": "read", "parameters": TOOL["function"]["parameters"]}]
                                   if kind == "function" else [{"type": "custom", "name": "apply_patch"}])
    items: list[Any] = [{"type": "message", "role": "user", "content": PROMPT}]

    def ask() -> list[Any]:
        if not stream:
            return list(sdk.responses.create(model="gpt-5.5", input=items, tools=tools).output)
        done = [event.response for event in sdk.responses.create(model="gpt-5.5", input=items, tools=tools, stream=True)
                if event.type == "response.completed"]
        assert len(done) == 1
        return list(done[0].output)

    box = in_thread(ask)
    if kind == "function":
        call_id = responses_server.script.call("read", {"filePath": "/w/a.txt"})
    else:
        call_id = responses_server.script.call("apply_patch", {"input": "*** Begin Patch\n*** End Patch\n"}, kind="custom")
    [item] = joined(box)
    assert item.call_id == call_id
    if kind == "function":
        assert (item.type, item.name, json.loads(item.arguments)) == ("function_call", "read", {"filePath": "/w/a.txt"})
        items += [item.model_dump(exclude_none=True), {"type": "function_call_output", "call_id": call_id, "output": "ok"}]
    else:
        assert (item.type, item.name, item.input) == ("custom_tool_call", "apply_patch", "*** Begin Patch\n*** End Patch\n")
        items += [item.model_dump(exclude_none=True), {"type": "custom_tool_call_output", "call_id": call_id, "output": "ok"}]
    box = in_thread(ask)
    result = responses_server.script.result(call_id, timeout=10)
    assert result is not None and result.found and result.text == "ok"
    responses_server.script.finish()
    [message] = joined(box)
    assert message.type == "message" and message.content[0].text == FINISH_TEXT


def test_side_requests_are_answered_at_once_and_recorded(chat_server: FakeModelServer) -> None:
    sdk = client(chat_server)
    title = sdk.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "Generate a title"}])
    assert title.choices[0].message.content == SIDE_TEXT
    other = sdk.chat.completions.create(model="fake-model", tools=[TOOL],
                                        messages=[{"role": "user", "content": "a background conversation"}])
    assert other.choices[0].message.content == SIDE_TEXT
    assert [r.kind for r in chat_server.requests] == ["side", "side"]


def test_after_the_final_turn_every_request_is_a_side_request(chat_server: FakeModelServer) -> None:
    """As Qwen Code's background request with tools after the answer: never held, never taken for a call."""
    sdk = client(chat_server)
    chat_server.script.finish()
    messages = [{"role": "user", "content": PROMPT}]
    first = sdk.chat.completions.create(model="fake-model", messages=messages, tools=[TOOL])
    second = sdk.chat.completions.create(model="fake-model", messages=messages, tools=[TOOL])
    assert first.choices[0].message.content == FINISH_TEXT and second.choices[0].message.content == SIDE_TEXT
    assert [r.kind for r in chat_server.requests] == ["main", "side"]


def test_a_request_without_the_awaited_result_is_reported_not_waited_for(chat_server: FakeModelServer) -> None:
    sdk = client(chat_server)
    messages = [{"role": "user", "content": PROMPT}]
    box = in_thread(lambda: sdk.chat.completions.create(model="fake-model", messages=messages, tools=[TOOL]))
    call_id = chat_server.script.call("read", {"filePath": "/w/a.txt"})
    joined(box)
    box = in_thread(lambda: sdk.chat.completions.create(model="fake-model", messages=messages + [
        {"role": "user", "content": "no result here"}], tools=[TOOL]))
    result = chat_server.script.result(call_id, timeout=10)
    assert result is not None and not result.found and result.content == {"role": "user", "content": "no result here"}
    chat_server.script.finish()
    joined(box)


def test_unknown_paths_are_recorded_and_answered_404(chat_server: FakeModelServer) -> None:
    request = urllib.request.Request(chat_server.base_url + "/v1/embeddings", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == 404
    assert [(r.path, r.kind) for r in chat_server.requests] == [("/v1/embeddings", "unknown")]


def test_anthropic_messages_whole_answer_is_a_tool_use_message() -> None:
    with FakeModelServer(dialect("anthropic-messages"), prompt=PROMPT, hold_timeout=10) as server:
        body = json.dumps({"model": "m", "max_tokens": 10, "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
                           "messages": [{"role": "user", "content": PROMPT}]}).encode()
        request = urllib.request.Request(server.base_url + "/v1/messages", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        box = in_thread(lambda: json.loads(urllib.request.urlopen(request, timeout=10).read()))
        call_id = server.script.call("Read", {"file_path": "/w/a.txt"})
        message = joined(box)
    assert message["stop_reason"] == "tool_use"
    assert message["content"] == [{"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": "/w/a.txt"}}]


def test_the_hold_is_bounded() -> None:
    with FakeModelServer(dialect("openai-chat"), prompt=PROMPT, hold_timeout=0.3) as server:
        answer = client(server).chat.completions.create(model="fake-model", tools=[TOOL],
                                                        messages=[{"role": "user", "content": PROMPT}])
    assert answer.choices[0].message.content == FINISH_TEXT


def test_an_unknown_api_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown model API 'gemini'"):
        dialect("gemini")
