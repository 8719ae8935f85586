"""A fake Anthropic Messages endpoint (``POST /v1/messages``) behind the common interface.

The encodings and the request parsing are the Claude Code fake's (harness/targets/claude_code/
fake_api.py: `tool_use_stream`, `text_stream`, `text_message`, `find_tool_result`), reused here so
both speak the same Messages API; this module adds the non-streamed ``tool_use`` message and
answers ``count_tokens`` with that module's default `TokenPolicy`.
"""

from __future__ import annotations

import json
from typing import Any

from harness.targets.claude_code import fake_api
from harness.targets.model_api.base import Dialect, Reply, ToolCall, ToolResult, model_of


class AnthropicMessages(Dialect):
    """Anthropic Messages."""

    name = "anthropic-messages"

    def __init__(self, tokens: str = "chars4") -> None:
        self.tokens = fake_api.TokenPolicy(tokens)

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/v1/messages")

    def answer_other(self, method: str, path: str, body: Any) -> Reply | None:
        if method == "POST" and path.rstrip("/").endswith("/v1/messages/count_tokens") and isinstance(body, dict):
            if not self.tokens.available:
                return None
            return Reply(200, "application/json", json.dumps({"input_tokens": self.tokens.count(body)}).encode())
        return None

    def not_found(self, method: str, path: str) -> Reply:
        data = {"type": "error", "error": {"type": "not_found_error", "message": f"{method} {path} is not faked"}}
        return Reply(404, "application/json", json.dumps(data).encode())

    def offers_tools(self, body: dict[str, Any]) -> bool:
        return fake_api.is_main_loop(body)

    def first_user_text(self, body: dict[str, Any]) -> str:
        first = next((m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"), None)
        return fake_api.content_text(first.get("content")) if first else ""

    def find_result(self, body: dict[str, Any], call: ToolCall) -> ToolResult | None:
        found = fake_api.find_tool_result(body, call.call_id)
        if found is None:
            return None
        extra: dict[str, Any] = {}
        if found.siblings:
            extra["siblings"] = found.siblings
        if found.following:
            extra["following"] = found.following
        return ToolResult(found.tool_use_id, found.content, is_error=found.is_error, extra=extra)

    def last_sent(self, body: dict[str, Any]) -> Any:
        message = fake_api.last_user_message(body) or {}
        return message.get("content")

    def streamed(self, body: dict[str, Any]) -> bool:
        return bool(body.get("stream"))

    def tool_call(self, call: ToolCall, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        message_id, model = f"msg_fake{seq:04d}", model_of(body)
        if stream:
            return Reply(200, "text/event-stream",
                         fake_api.tool_use_stream(message_id, call.call_id, call.name, call.arguments, model=model))
        message = {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return Reply(200, "application/json", json.dumps(message).encode())

    def text(self, text: str, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        message_id, model = f"msg_fake{seq:04d}", model_of(body)
        if stream:
            return Reply(200, "text/event-stream", fake_api.text_stream(message_id, text, model=model))
        return Reply(200, "application/json", json.dumps(fake_api.text_message(message_id, text, model=model)).encode())
