"""A fake OpenAI Chat Completions endpoint (``POST .../chat/completions``), streamed or not.

Requests: ``messages`` (``system``/``user``/``assistant``/``tool``), ``tools`` (``type: function``),
``stream``. A tool result is a ``role: tool`` message whose ``tool_call_id`` is the call's id.
Answers are built with the ``openai`` package's models (``ChatCompletion``, ``ChatCompletionChunk``)
and serialised from them, so every field the SDK requires is present and typed as it says:
a tool call is one assistant message with one ``tool_calls`` entry (``finish_reason: tool_calls``);
streamed, the call comes whole in one chunk's delta, then a chunk with the finish reason and one
with usage (``stream_options.include_usage``), then ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any, Literal

from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_chunk import Choice as ChunkChoice
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall, ChoiceDeltaToolCallFunction
from openai.types.chat.chat_completion_message import ChatCompletionMessage
from openai.types.chat.chat_completion_message_function_tool_call import ChatCompletionMessageFunctionToolCall, Function
from openai.types.completion_usage import CompletionUsage

from harness.targets.model_api.base import Reply, ToolCall, ToolResult, content_text, model_of
from harness.targets.model_api.openai_base import OpenAIDialect

_USAGE = CompletionUsage(prompt_tokens=1, completion_tokens=1, total_tokens=2)


def sse(data: str) -> bytes:
    """Returns one ``data:`` server-sent event."""
    return f"data: {data}\n\n".encode()


#: Why a turn ends: it calls a tool, or it is the final text.
_Finish = Literal["tool_calls", "stop"]


def _dump(model: Any) -> str:
    return model.model_dump_json(exclude_none=True)


class OpenAIChat(OpenAIDialect):
    """Chat Completions."""

    name = "openai-chat"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/chat/completions")

    def first_user_text(self, body: dict[str, Any]) -> str:
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "user":
                return content_text(message.get("content"))
        return ""

    def find_result(self, body: dict[str, Any], call: ToolCall) -> ToolResult | None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        for index, message in enumerate(messages):
            if message.get("role") == "tool" and message.get("tool_call_id") == call.call_id:
                following = [{"role": m.get("role"), "content": m.get("content")} for m in messages[index + 1:]]
                return ToolResult(call.call_id, message.get("content", ""), extra={"following": following} if following else {})
        return None

    def last_sent(self, body: dict[str, Any]) -> Any:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        return messages[-1] if messages else None

    def streamed(self, body: dict[str, Any]) -> bool:
        return bool(body.get("stream"))

    def tool_call(self, call: ToolCall, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        model, completion_id = model_of(body), f"chatcmpl-fake{seq:04d}"
        if not stream:
            message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
                ChatCompletionMessageFunctionToolCall(id=call.call_id, type="function",
                                                      function=Function(name=call.name, arguments=call.arguments_json))])
            return self._whole(completion_id, model, message, "tool_calls")
        delta = ChoiceDelta(role="assistant", tool_calls=[ChoiceDeltaToolCall(
            index=0, id=call.call_id, type="function",
            function=ChoiceDeltaToolCallFunction(name=call.name, arguments=call.arguments_json))])
        return self._chunks(completion_id, model, delta, "tool_calls", body)

    def text(self, text: str, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        model, completion_id = model_of(body), f"chatcmpl-fake{seq:04d}"
        if not stream:
            return self._whole(completion_id, model, ChatCompletionMessage(role="assistant", content=text), "stop")
        return self._chunks(completion_id, model, ChoiceDelta(role="assistant", content=text), "stop", body)

    def _whole(self, completion_id: str, model: str, message: ChatCompletionMessage, finish: _Finish) -> Reply:
        completion = ChatCompletion(id=completion_id, object="chat.completion", created=0, model=model, usage=_USAGE,
                                    choices=[Choice(index=0, finish_reason=finish, message=message)])
        return Reply(200, "application/json", _dump(completion).encode())

    def _chunks(self, completion_id: str, model: str, delta: ChoiceDelta, finish: _Finish, body: dict[str, Any]) -> Reply:
        def chunk(choices: list[ChunkChoice], **more: Any) -> bytes:
            return sse(_dump(ChatCompletionChunk(id=completion_id, object="chat.completion.chunk", created=0,
                                                 model=model, choices=choices, **more)))
        events = [
            chunk([ChunkChoice(index=0, delta=delta)]),
            chunk([ChunkChoice(index=0, delta=ChoiceDelta(), finish_reason=finish)]),
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(chunk([], usage=_USAGE))
        events.append(sse("[DONE]"))
        return Reply(200, "text/event-stream", b"".join(events))
