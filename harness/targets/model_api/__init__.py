"""Fake model endpoints, one module per API, behind one interface (`base.Dialect`, `base.FakeModelServer`).

- ``anthropic``: Anthropic Messages (``POST /v1/messages``), the Claude Code fake's encoding;
- ``openai_chat``: OpenAI Chat Completions (``POST .../chat/completions``);
- ``openai_responses``: OpenAI Responses (``POST .../responses``), function and custom (freeform) calls.

Each answers streamed (SSE) or not, as the request asks. `dialect` returns one by name.
"""

from __future__ import annotations

from harness.targets.model_api.base import Dialect, FakeModelServer, ToolCall, ToolResult, TurnScript

DIALECTS = ("anthropic-messages", "openai-chat", "openai-responses")


def dialect(name: str) -> Dialect:
    """Returns the dialect called ``name`` (one of `DIALECTS`); raises ValueError otherwise."""
    if name == "anthropic-messages":
        from harness.targets.model_api.anthropic import AnthropicMessages
        return AnthropicMessages()
    if name == "openai-chat":
        from harness.targets.model_api.openai_chat import OpenAIChat
        return OpenAIChat()
    if name == "openai-responses":
        from harness.targets.model_api.openai_responses import OpenAIResponses
        return OpenAIResponses()
    raise ValueError(f"unknown model API {name!r}: expected one of {', '.join(DIALECTS)}")


__all__ = ["DIALECTS", "Dialect", "FakeModelServer", "ToolCall", "ToolResult", "TurnScript", "dialect"]
