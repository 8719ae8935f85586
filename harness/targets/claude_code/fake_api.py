"""A fake Anthropic Messages API on loopback that plays a scenario's tool calls as the model.

The real Claude Code CLI talks to this server instead of Anthropic: every main-loop request
(``POST /v1/messages``, always streamed) is *held* until the harness says what the "model" does
next — call tool X with args Y, or finish with a text — and the ``tool_result`` the CLI sends back
for the previous call is handed to the harness. Holding the reply is what lets the harness change
the workspace between two calls while the CLI waits, exactly as a slow model would make it wait.

What this module does not do: start the CLI, read its stdout, or turn results into verdicts
(that is the target's job, in ``session.py``).

Request kinds, as observed with the pinned CLI:
- main loop: ``POST /v1/messages?beta=true`` with a non-empty ``tools`` list — held, then answered
  with one ``tool_use`` or the final text;
- side requests: a ``POST /v1/messages`` without tools (titles, summaries, quota probes), or with
  tools but not in the session's conversation (the "Warmup" conversations older CLIs start) —
  answered at once with a short ``end_turn`` text, recorded, never held;
- ``POST /v1/messages/count_tokens`` — answered with a deterministic count (`TokenPolicy`);
- anything else — recorded and answered 404.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from harness.targets.model_api import base
from harness.targets.model_api.base import FINISH_TEXT, SIDE_TEXT, LoopbackServer, Recorded, ToolCall, TurnScript

# --------------------------------------------------------------------------- SSE encoding


def sse_event(data: dict[str, Any]) -> bytes:
    """Returns one server-sent event whose ``event:`` name is the payload's ``type``."""
    return f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _message_start(message_id: str, model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def tool_use_stream(
    message_id: str, tool_use_id: str, name: str, tool_input: dict[str, Any], *, model: str = "fake", input_tokens: int = 1
) -> bytes:
    """Returns the SSE body of an assistant turn that is one ``tool_use`` block (stop_reason tool_use)."""
    events = [
        _message_start(message_id, model, input_tokens),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}},
        },
        # The whole input in one delta: the CLI concatenates partial_json and parses it at block stop.
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_input, ensure_ascii=False)},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return b"".join(sse_event(e) for e in events)


def text_stream(message_id: str, text: str, *, model: str = "fake", input_tokens: int = 1) -> bytes:
    """Returns the SSE body of an assistant turn that is one ``text`` block (stop_reason end_turn)."""
    events = [
        _message_start(message_id, model, input_tokens),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return b"".join(sse_event(e) for e in events)


def text_message(message_id: str, text: str, *, model: str = "fake") -> dict[str, Any]:
    """Returns a non-streamed assistant message (for a request without ``"stream": true``)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


# --------------------------------------------------------------------------- request parsing


@dataclass
class ToolResult:
    """The CLI's answer to one ``tool_use``, as found in the next request's last user message."""

    tool_use_id: str
    content: Any  # a string, or a list of blocks (text, image) as the CLI sent it
    is_error: bool = False
    #: The other blocks of the same user message (e.g. ``<system-reminder>`` texts), in order.
    siblings: list[Any] = field(default_factory=list)
    #: False when the CLI asked for the next turn without this result (``content`` is then its last user message).
    found: bool = True
    #: The messages that follow the one carrying the result in the same request, in order, as
    #: ``{"role", "content"}`` (e.g. the ``system`` note ``[Truncated: PARTIAL view — ...]`` after a Read
    #: the token cap cut); ``cache_control`` markers, the CLI's caching hints, are left out.
    following: list[dict[str, Any]] = field(default_factory=list)
    #: Where the request put its ``cache_control`` markers among its messages, in order:
    #: ``{"message": <index relative to the message carrying the result: 0 it, 1 the next, -1 the one
    #: before>, "role", "block": <the marked block's type>, "cache_control": <the marker>}``.
    cache_markers: list[dict[str, Any]] = field(default_factory=list)
    #: The names of the tools the request offered the model, sorted.
    tools_offered: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Returns the content as text: the string itself, or the text blocks of a list joined."""
        return content_text(self.content)


def content_text(content: Any) -> str:
    """Returns the text of a message content: a string as is, the ``text`` blocks of a list joined."""
    return base.content_text(content, ("text",))


def last_user_message(body: dict[str, Any]) -> dict[str, Any] | None:
    """Returns the last ``role: user`` message of a Messages request, or None."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def find_tool_result(body: dict[str, Any], tool_use_id: str | None = None) -> ToolResult | None:
    """Returns the ``tool_result`` in the request's last user message (for ``tool_use_id`` if given).

    The messages after that user message (the CLI's notes about the result, such as a ``system``
    message) come with it, as `ToolResult.following`.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    message = last_user_message(body)
    if message is None or not isinstance(message.get("content"), list):
        return None
    at = next(i for i, m in enumerate(messages) if m is message)
    after = messages[at + 1:]
    blocks = message["content"]
    for block in blocks:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        if tool_use_id is not None and block.get("tool_use_id") != tool_use_id:
            continue
        siblings = [b for b in blocks if b is not block]
        return ToolResult(
            tool_use_id=block.get("tool_use_id", ""),
            content=block.get("content", ""),
            is_error=bool(block.get("is_error", False)),
            siblings=siblings,
            following=[_without_cache_control(m) for m in after],
            cache_markers=cache_markers(messages, at),
            tools_offered=tools_offered(body),
        )
    return None


def cache_markers(messages: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """Returns the ``cache_control`` markers of ``messages``, each placed relative to message ``at``."""
    out = []
    for index, message in enumerate(messages):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and "cache_control" in block:
                out.append({"message": index - at, "role": message.get("role"), "block": block.get("type"),
                            "cache_control": block["cache_control"]})
    return out


def tools_offered(body: dict[str, Any]) -> list[str]:
    """Returns the sorted names of the tools a Messages request offers the model."""
    tools = body.get("tools")
    return sorted(str(t.get("name")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else []


def _without_cache_control(message: dict[str, Any]) -> dict[str, Any]:
    """Returns ``{"role", "content"}`` of a message, its blocks without ``cache_control``."""
    content = message.get("content")
    if isinstance(content, list):
        content = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b for b in content]
    return {"role": message.get("role"), "content": content}


def is_main_loop(body: dict[str, Any], prompt: str | None = None) -> bool:
    """Returns True for a request of the agent loop (it offers tools); False for side requests.

    With ``prompt``, the conversation must also be the session's own (its first user message holds
    the prompt): older CLIs send tool-offering "Warmup" conversations of their own at start-up.
    """
    tools = body.get("tools")
    if not (isinstance(tools, list) and len(tools) > 0):
        return False
    if prompt is None:
        return True
    first = next((m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"), None)
    return first is not None and prompt in content_text(first.get("content"))


# --------------------------------------------------------------------------- count_tokens


class TokenPolicy:
    """How ``count_tokens`` is answered; Read's size limit depends on it, so it is deterministic.

    ``chars4`` (default): ceil(characters of the JSON of ``messages`` + ``system`` + ``tools`` / 4),
    a common rule of thumb for English text and code. ``const:N``: always N (``const:0`` never
    trips a token limit; a large N always does). ``bytes``: the UTF-8 byte count of the same JSON.
    ``unavailable``: the endpoint answers 404 ``not_found_error``, as where a gateway does not offer
    it (the CLI then falls back to its own estimate).
    """

    def __init__(self, spec: str = "chars4") -> None:
        spec = (spec or "chars4").strip()
        if spec == "chars4":
            self.kind, self.value = "chars4", 0
        elif spec == "bytes":
            self.kind, self.value = "bytes", 0
        elif spec == "unavailable":
            self.kind, self.value = "unavailable", 0
        elif spec.startswith("const:") and spec[6:].isdigit():
            self.kind, self.value = "const", int(spec[6:])
        elif spec.isdigit():
            self.kind, self.value = "const", int(spec)
        else:
            raise ValueError(f"unknown count_tokens policy {spec!r} (chars4, bytes, const:N, unavailable)")
        self.spec = spec

    @property
    def available(self) -> bool:
        """Returns False when count_tokens is to be answered 404 (policy ``unavailable``)."""
        return self.kind != "unavailable"

    def count(self, body: dict[str, Any]) -> int:
        """Returns the ``input_tokens`` to answer for this count_tokens request body."""
        if self.kind == "const":
            return self.value
        counted = {k: body[k] for k in ("system", "messages", "tools") if k in body}
        text = json.dumps(counted, ensure_ascii=False, separators=(",", ":"))
        if self.kind == "bytes":
            return len(text.encode("utf-8"))
        return math.ceil(len(text) / 4)

    def __repr__(self) -> str:
        return f"TokenPolicy({self.spec!r})"


# --------------------------------------------------------------------------- the server


class FakeMessagesAPI(LoopbackServer):
    """The loopback HTTP server; one per CLI session (its `base_url` goes into ANTHROPIC_BASE_URL)."""

    thread_name = "fake-messages-api"

    def __init__(self, *, tokens: TokenPolicy | str = "chars4", hold_timeout: float = 300.0,
                 prompt: str | None = None) -> None:
        self.prompt = prompt  # when given, only the conversation that starts with it is the main loop
        self.tokens = tokens if isinstance(tokens, TokenPolicy) else TokenPolicy(tokens)
        self.script: TurnScript[ToolResult] = TurnScript(hold_timeout=hold_timeout, id_prefix="toolu_h")
        self.requests: list[Recorded] = []
        self.user_agents: set[str] = set()  # which client (and version) called: e.g. claude-cli/2.1.330
        self._messages = itertools.count(1)
        self._main_lock = threading.Lock()  # main-loop requests are answered one at a time, in order
        self.handler = _Handler

    def release(self) -> None:
        """Releases held requests: they get the final text."""
        self.script.close()

    def record(self, entry: Recorded) -> None:
        """Keeps one request for later inspection."""
        self.requests.append(entry)

    def next_message_id(self) -> str:
        """Returns a fresh, deterministic message id."""
        return f"msg_fake{next(self._messages):04d}"

    def answer_main(self, body: dict[str, Any]) -> bytes:
        """Delivers the tool_result this request carries, holds for the next turn, returns its SSE."""
        with self._main_lock:
            pending = self.script.pending
            if pending is not None:
                self.script.deliver(find_tool_result(body, pending.call_id), lambda call: _not_found(call, body))
            payload: Any  # the turn: a tool call or a text
            if self.script.finished or self.script.closed:
                kind, payload = "text", FINISH_TEXT
            else:
                kind, payload = self.script.next_turn()
            model = str(body.get("model", "fake"))
            if kind == "call":
                return tool_use_stream(self.next_message_id(), payload.call_id, payload.name, payload.arguments,
                                       model=model)
            return text_stream(self.next_message_id(), payload, model=model)


def _not_found(call: ToolCall, body: dict[str, Any]) -> ToolResult:
    """Returns the marker of a request that asks for the next turn without the result of ``call``."""
    message = last_user_message(body) or {}
    return ToolResult(call.call_id, message.get("content"), found=False, tools_offered=tools_offered(body))


class _Handler(BaseHTTPRequestHandler):
    server_api: FakeMessagesAPI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the recorded requests are the log

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.server_api.user_agents.add(str(self.headers.get("User-Agent", ""))[:200])
        path = urlsplit(self.path).path
        body = self._body()
        api = self.server_api
        if path == "/v1/messages/count_tokens" and isinstance(body, dict):
            if not api.tokens.available:
                api.record(Recorded("POST", self.path, "count_tokens", body, answer="404"))
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "count_tokens is not available"}})
                return
            tokens = api.tokens.count(body)
            api.record(Recorded("POST", self.path, "count_tokens", body, answer=str(tokens)))
            self._json(200, {"input_tokens": tokens})
            return
        if path == "/v1/messages" and isinstance(body, dict):
            stream = bool(body.get("stream"))
            if is_main_loop(body, api.prompt):
                entry = Recorded("POST", self.path, "main", body)
                api.record(entry)
                sse = api.answer_main(body)
                entry.answer = sse.decode()
                if stream:
                    self._send(200, sse, "text/event-stream")
                else:  # never observed; answered in kind so the CLI cannot hang on it
                    self._json(200, text_message(api.next_message_id(), FINISH_TEXT))
                return
            api.record(Recorded("POST", self.path, "side", body, answer=SIDE_TEXT))
            message_id = api.next_message_id()
            if stream:
                self._send(200, text_stream(message_id, SIDE_TEXT, model=str(body.get("model", "fake"))), "text/event-stream")
            else:
                self._json(200, text_message(message_id, SIDE_TEXT, model=str(body.get("model", "fake"))))
            return
        self._unknown("POST", body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._unknown("GET", None)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self._unknown("HEAD", None)

    def _unknown(self, method: str, body: Any) -> None:
        self.server_api.record(Recorded(method, self.path, "unknown", body, answer="404"))
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"{method} {self.path} is not faked"}})
