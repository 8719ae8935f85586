"""A fake OpenAI Responses endpoint (``POST .../responses``), streamed or not.

Requests: ``input`` (a list of items: ``message``, ``function_call``, ``function_call_output``,
``custom_tool_call``, ``custom_tool_call_output``, ...; or a plain string), ``tools`` (``function``
tools with JSON parameters, ``custom`` tools with a freeform input, as Codex offers ``apply_patch``),
``stream``. A tool result is a ``function_call_output`` or ``custom_tool_call_output`` item whose
``call_id`` is the call's. Answers are built with the ``openai`` package's models (``Response``,
``ResponseFunctionToolCall``, ``ResponseCustomToolCall``, ``ResponseOutputMessage`` and the stream
events) and serialised from them. Streamed: ``response.created``, ``response.in_progress``,
``response.output_item.added``, the item's delta and done events, ``response.output_item.done``,
``response.completed``, each a named SSE event with a rising ``sequence_number``.
"""

from __future__ import annotations

from typing import Any, Literal

from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseCustomToolCall,
    ResponseCustomToolCallInputDeltaEvent,
    ResponseCustomToolCallInputDoneEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from harness.targets.model_api.base import Reply, ToolCall, ToolResult, content_text, model_of
from harness.targets.model_api.openai_base import OpenAIDialect

_USAGE = ResponseUsage(input_tokens=1, output_tokens=1, total_tokens=2,
                       input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                       output_tokens_details=OutputTokensDetails(reasoning_tokens=0))
_OUTPUT_TYPES = {"function_call_output": "function", "custom_tool_call_output": "custom"}


def sse(event: Any) -> bytes:
    """Returns one server-sent event named after the model's ``type``."""
    return f"event: {event.type}\ndata: {event.model_dump_json(exclude_none=True)}\n\n".encode()


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    value = body.get("input")
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [item for item in value or [] if isinstance(item, dict)]


class OpenAIResponses(OpenAIDialect):
    """The Responses API."""

    name = "openai-responses"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/responses")

    def first_user_text(self, body: dict[str, Any]) -> str:
        # An agent may put instructions and context in user messages before the prompt: all user
        # texts up to the first tool call count as the conversation's opening.
        texts = []
        for item in _items(body):
            if item.get("type", "message") == "message" and item.get("role") == "user":
                texts.append(content_text(item.get("content")))
            elif item.get("type") not in (None, "message"):
                break
        return "\n".join(texts)

    def find_result(self, body: dict[str, Any], call: ToolCall) -> ToolResult | None:
        items = _items(body)
        for index, item in enumerate(items):
            if item.get("type") in _OUTPUT_TYPES and item.get("call_id") == call.call_id:
                following = items[index + 1:]
                output = item.get("output", "")
                return ToolResult(call.call_id, output, extra={"following": following} if following else {})
        return None

    def last_sent(self, body: dict[str, Any]) -> Any:
        items = _items(body)
        return items[-1] if items else None

    def streamed(self, body: dict[str, Any]) -> bool:
        return bool(body.get("stream"))

    def _response(self, seq: int, body: dict[str, Any], output: list[Any],
                  status: Literal["completed", "in_progress"]) -> Response:
        return Response(id=f"resp_fake{seq:04d}", object="response", created_at=0, model=model_of(body), output=output,
                        parallel_tool_calls=False, tool_choice="auto", tools=[], status=status,
                        usage=_USAGE if status == "completed" else None)

    def tool_call(self, call: ToolCall, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        item_id = f"fc_fake{seq:04d}"
        added: ResponseCustomToolCall | ResponseFunctionToolCall
        if call.kind == "custom":
            item: Any = ResponseCustomToolCall(type="custom_tool_call", id=item_id, call_id=call.call_id, name=call.name,
                                               input=call.custom_input)
            deltas = [ResponseCustomToolCallInputDeltaEvent(type="response.custom_tool_call_input.delta", item_id=item_id,
                                                            output_index=0, delta=call.custom_input, sequence_number=0),
                      ResponseCustomToolCallInputDoneEvent(type="response.custom_tool_call_input.done", item_id=item_id,
                                                           output_index=0, input=call.custom_input, sequence_number=0)]
            added = ResponseCustomToolCall(type="custom_tool_call", id=item_id, call_id=call.call_id, name=call.name, input="")
        else:
            item = ResponseFunctionToolCall(type="function_call", id=item_id, call_id=call.call_id, name=call.name,
                                            arguments=call.arguments_json, status="completed")
            deltas = [ResponseFunctionCallArgumentsDeltaEvent(type="response.function_call_arguments.delta", item_id=item_id,
                                                              output_index=0, delta=call.arguments_json, sequence_number=0),
                      # With the call's name, as the API sends it (a field the SDK's model does not declare).
                      ResponseFunctionCallArgumentsDoneEvent.model_validate({
                          "type": "response.function_call_arguments.done", "item_id": item_id, "output_index": 0,
                          "name": call.name, "arguments": call.arguments_json, "sequence_number": 0})]
            added = ResponseFunctionToolCall(type="function_call", id=item_id, call_id=call.call_id, name=call.name,
                                             arguments="", status="in_progress")
        return self._reply(seq, body, item, added, deltas, stream)

    def text(self, text: str, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        item_id = f"msg_fake{seq:04d}"
        part = ResponseOutputText(type="output_text", text=text, annotations=[])
        item = ResponseOutputMessage(type="message", id=item_id, role="assistant", status="completed", content=[part])
        added = ResponseOutputMessage(type="message", id=item_id, role="assistant", status="in_progress", content=[])
        deltas = [ResponseTextDeltaEvent(type="response.output_text.delta", item_id=item_id, output_index=0, content_index=0,
                                         delta=text, logprobs=[], sequence_number=0),
                  ResponseTextDoneEvent(type="response.output_text.done", item_id=item_id, output_index=0, content_index=0,
                                        text=text, logprobs=[], sequence_number=0)]
        return self._reply(seq, body, item, added, deltas, stream)

    def _reply(self, seq: int, body: dict[str, Any], item: Any, added: Any, deltas: list[Any], stream: bool) -> Reply:
        done = self._response(seq, body, [item], "completed")
        if not stream:
            return Reply(200, "application/json", done.model_dump_json(exclude_none=True).encode())
        events: list[Any] = [
            ResponseCreatedEvent(type="response.created", response=self._response(seq, body, [], "in_progress"), sequence_number=0),
            ResponseInProgressEvent(type="response.in_progress", response=self._response(seq, body, [], "in_progress"),
                                    sequence_number=0),
            ResponseOutputItemAddedEvent(type="response.output_item.added", output_index=0, item=added, sequence_number=0),
            *deltas,
            ResponseOutputItemDoneEvent(type="response.output_item.done", output_index=0, item=item, sequence_number=0),
            ResponseCompletedEvent(type="response.completed", response=done, sequence_number=0),
        ]
        for number, event in enumerate(events):
            event.sequence_number = number
        return Reply(200, "text/event-stream", b"".join(sse(event) for event in events))
