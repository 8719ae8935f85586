"""What the two OpenAI APIs (Chat Completions, Responses) answer alike: the model list, and tools
offered as a non-empty ``tools`` list."""

from __future__ import annotations

import json
from typing import Any

from harness.targets.model_api.base import Dialect, Reply


class OpenAIDialect(Dialect):
    """An OpenAI API: answers ``GET .../models`` with one model, ``fake``."""

    def answer_other(self, method: str, path: str, body: Any) -> Reply | None:
        if method == "GET" and path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "harness"}]}
            return Reply(200, "application/json", json.dumps(data).encode())
        return None

    def offers_tools(self, body: dict[str, Any]) -> bool:
        tools = body.get("tools")
        return isinstance(tools, list) and len(tools) > 0
