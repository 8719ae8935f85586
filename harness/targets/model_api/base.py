"""What every fake model endpoint shares: the step script, the recorded requests, the HTTP server.

A fake endpoint plays a scenario's calls as the model's tool calls. The harness queues the next
turn (`TurnScript.call`: call tool X with arguments Y; `TurnScript.finish`: answer with a text); the
server *holds* each main-loop request until that turn is queued, so the harness can change the
workspace between two calls while the agent waits, as a slow model would make it wait; the tool
result the agent sends back for the previous call is handed to the harness (`TurnScript.result`).

What differs between APIs (paths, how a request carries tool results, how a tool call or a text is
encoded, streamed or not) is a `Dialect`, one module per API. This module knows none of them.

Main loop or side request: a request is the main loop when it offers tools and its first user
message holds the session's prompt, and the script has not finished; everything else (titles,
summaries, background requests after the answer, probes) is a side request, answered at once with
`SIDE_TEXT` and recorded, never held.
"""

from __future__ import annotations

import abc
import itertools
import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar
from urllib.parse import urlsplit

#: The text of the final assistant turn.
FINISH_TEXT = "Done."
#: The text a side request is answered with.
SIDE_TEXT = "File tools conformance session"
#: The largest request body read (an agent's request with a large file in it stays far below).
MAX_BODY = 64 * 1024 * 1024

R = TypeVar("R")


@dataclass
class ToolCall:
    """One turn in which the model calls a tool.

    ``kind`` is ``function`` (JSON arguments) or ``custom`` (a freeform call whose input is one
    string, as the Responses API's custom tools: Codex's ``apply_patch``). ``arguments`` is then
    the dict, or ``{"input": text}`` for a custom call.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    kind: str = "function"

    @property
    def arguments_json(self) -> str:
        """Returns the arguments as the JSON text the API carries."""
        return json.dumps(self.arguments, ensure_ascii=False)

    @property
    def custom_input(self) -> str:
        """Returns the freeform input of a custom call."""
        return str(self.arguments.get("input", ""))


@dataclass
class ToolResult:
    """What the agent sent back for one tool call."""

    call_id: str
    content: Any  # a string, or a list of content parts as the agent sent it
    is_error: bool = False
    #: False when the agent asked for the next turn without this result (``content`` is then what it sent).
    found: bool = True
    #: Whatever else the API carries beside the result (siblings, following messages), by name.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """Returns the content as text: a string as is, the text parts of a list joined."""
        return content_text(self.content)


#: The types of the content parts that carry text, in the APIs the fakes speak.
TEXT_PARTS = ("text", "input_text", "output_text")


def content_text(content: Any, types: tuple[str, ...] = TEXT_PARTS) -> str:
    """Returns the text of a message content: a string as is, the ``text`` of its parts of ``types`` joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content
                       if isinstance(part, dict) and part.get("type") in types)
    return ""


@dataclass
class Recorded:
    """One request the server saw."""

    method: str
    path: str
    kind: str  # main | side | other | count_tokens | unknown
    body: Any
    answer: str = ""


class TurnScript(Generic[R]):
    """The queue of model turns to play, and the tool results coming back; what every fake endpoint holds.

    Harness side: `call` (the next turn is a tool call; returns its id), `finish`, `result` (waits,
    bounded, for the result of an id), `close`. Server side: `next_turn` (blocks, bounded, until the
    harness has said what comes next) and `deliver`. A turn is ``("call", ToolCall)`` or
    ``("text", str)``. ``R`` is what the endpoint makes of a tool result (its API's `ToolResult`).
    Thread-safe; every wait has a timeout.
    """

    def __init__(self, *, hold_timeout: float = 300.0, id_prefix: str = "call_h") -> None:
        self.hold_timeout = hold_timeout
        self._turns: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._results: dict[str, R] = {}
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._id_prefix = id_prefix
        self.pending: ToolCall | None = None  # the call last sent, whose result is awaited
        self.finished = False
        self.closed = False
        self.held = threading.Event()  # set while a main-loop request waits for the next turn

    # harness side
    def call(self, name: str, arguments: dict[str, Any], *, kind: str = "function") -> str:
        """Queues the next turn: a call of ``name``; returns its call id."""
        call_id = f"{self._id_prefix}{next(self._ids):04d}"
        self._turns.put(("call", ToolCall(call_id, name, dict(arguments), kind)))
        return call_id

    def finish(self, text: str = FINISH_TEXT) -> None:
        """Queues the final turn: a text."""
        self._turns.put(("text", text))

    def result(self, call_id: str, timeout: float) -> R | None:
        """Waits up to ``timeout`` s for the result of ``call_id``; None when none came."""
        with self._cond:
            self._cond.wait_for(lambda: call_id in self._results or self.closed, timeout=timeout)
            return self._results.pop(call_id, None)

    def close(self) -> None:
        """Releases every waiter: held requests get the final text, result waits return None."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()
        self._turns.put(("text", FINISH_TEXT))

    # server side
    def deliver(self, found: R | None, missing: Callable[[ToolCall], R]) -> R | None:
        """Hands the result of the pending call to the harness: ``found``, or when the request carries
        none, ``missing(pending call)`` (a not-found marker: the harness must not wait for a result
        that will never come). Returns it; None when no call was pending."""
        pending = self.pending
        if pending is None:
            return None
        delivered = found if found is not None else missing(pending)
        with self._cond:
            self._results[pending.call_id] = delivered
            self.pending = None
            self._cond.notify_all()
        return delivered

    def next_turn(self) -> tuple[str, Any]:
        """Blocks until the harness queued the next turn (or the hold timeout ran out: finish)."""
        self.held.set()
        try:
            kind, payload = self._turns.get(timeout=self.hold_timeout)
        except queue.Empty:
            kind, payload = "text", FINISH_TEXT
        finally:
            self.held.clear()
        if kind == "call":
            self.pending = payload
        else:
            self.finished = True
        return kind, payload


@dataclass
class Reply:
    """An HTTP answer: status, content type, body."""

    status: int
    content_type: str
    body: bytes


class Dialect(abc.ABC):
    """One model API: which requests are its own, how they carry tool results, how turns are encoded."""

    #: The API's name (``anthropic-messages``, ``openai-chat``, ``openai-responses``).
    name: str = ""

    @abc.abstractmethod
    def handles(self, method: str, path: str) -> bool:
        """Returns True for a request of this API that carries a conversation (a model turn is asked)."""

    def answer_other(self, method: str, path: str, body: Any) -> Reply | None:
        """Answers a request of this API that asks no turn (model lists, token counts), or None: unknown."""
        return None

    @abc.abstractmethod
    def offers_tools(self, body: dict[str, Any]) -> bool:
        """Returns True when the request offers the model tools."""

    @abc.abstractmethod
    def first_user_text(self, body: dict[str, Any]) -> str:
        """Returns the text of the conversation's first user message ('' when none)."""

    @abc.abstractmethod
    def find_result(self, body: dict[str, Any], call: ToolCall) -> ToolResult | None:
        """Returns the result of ``call`` this request carries, or None."""

    def last_sent(self, body: dict[str, Any]) -> Any:
        """Returns what the request ended with (shown when it carries no result for the pending call)."""
        return None

    @abc.abstractmethod
    def streamed(self, body: dict[str, Any]) -> bool:
        """Returns True when the request asks for a streamed (SSE) answer."""

    @abc.abstractmethod
    def tool_call(self, call: ToolCall, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        """Returns the answer that is one tool call."""

    @abc.abstractmethod
    def text(self, text: str, body: dict[str, Any], *, stream: bool, seq: int) -> Reply:
        """Returns the answer that is one text (the turn ends)."""

    def not_found(self, method: str, path: str) -> Reply:
        """Returns this API's 404."""
        data = {"error": {"type": "not_found_error", "message": f"{method} {path} is not faked"}}
        return Reply(404, "application/json", json.dumps(data).encode())


def model_of(body: dict[str, Any]) -> str:
    """Returns the model a request names (``fake`` when none)."""
    return str(body.get("model") or "fake")


class LoopbackServer:
    """An HTTP server on 127.0.0.1, on an ephemeral port, served by a daemon thread: what every fake
    endpoint is. A subclass says which request handler answers (its class attribute ``server_api``
    is set to the server) and what ``release`` lets go of before the server stops."""

    #: The request handler class; a subclass is made per server, naming it.
    handler: type[BaseHTTPRequestHandler]
    #: The serving thread's name.
    thread_name = "fake-model-api"

    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """Returns the bound port (after `start`)."""
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """Returns ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Binds 127.0.0.1 on an ephemeral port and serves in a daemon thread."""
        handler = type("Handler", (self.handler,), {"server_api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def release(self) -> None:
        """Lets go of what waits on the server (held requests), before it stops."""

    def stop(self) -> None:
        """Releases held requests and stops serving."""
        self.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class FakeModelServer(LoopbackServer):
    """A loopback HTTP server speaking one `Dialect`; one per agent session."""

    def __init__(self, dialect: Dialect, *, prompt: str | None = None, hold_timeout: float = 300.0,
                 id_prefix: str = "call_h") -> None:
        self.dialect = dialect
        self.prompt = prompt  # when given, only the conversation that starts with it is the main loop
        self.script: TurnScript[ToolResult] = TurnScript(hold_timeout=hold_timeout, id_prefix=id_prefix)
        self.requests: list[Recorded] = []
        self.user_agents: set[str] = set()
        self._seq = itertools.count(1)
        self._main_lock = threading.Lock()  # main-loop requests are answered one at a time, in order
        self.handler = _Handler
        self.thread_name = f"fake-{dialect.name}"

    def release(self) -> None:
        """Releases held requests: they get the final text."""
        self.script.close()

    def is_main(self, body: dict[str, Any]) -> bool:
        """Returns True for a main-loop request (see the module docstring)."""
        if self.script.finished or self.script.closed or not self.dialect.offers_tools(body):
            return False
        return self.prompt is None or self.prompt in self.dialect.first_user_text(body)

    def handle(self, method: str, path: str, body: Any) -> Reply:
        """Answers one request (the HTTP handler's whole job); records it."""
        dialect = self.dialect
        if isinstance(body, dict) and dialect.handles(method, path):
            stream = dialect.streamed(body)
            if self.is_main(body):
                entry = Recorded(method, path, "main", body)
                self.requests.append(entry)
                reply = self._answer_main(body, stream)
            else:
                entry = Recorded(method, path, "side", body)
                self.requests.append(entry)
                reply = dialect.text(SIDE_TEXT, body, stream=stream, seq=next(self._seq))
            entry.answer = reply.body.decode("utf-8", "replace")
            return reply
        other = dialect.answer_other(method, path, body)
        entry = Recorded(method, path, "other" if other else "unknown", body)
        self.requests.append(entry)
        reply = other or dialect.not_found(method, path)
        entry.answer = reply.body.decode("utf-8", "replace")[:2000]
        return reply

    def _answer_main(self, body: dict[str, Any], stream: bool) -> Reply:
        with self._main_lock:
            pending = self.script.pending
            if pending is not None:
                sent = self.dialect.last_sent(body)
                self.script.deliver(self.dialect.find_result(body, pending),
                                    lambda call: ToolResult(call.call_id, sent, found=False))
            payload: Any  # the turn: a tool call or a text
            if self.script.finished or self.script.closed:
                kind, payload = "text", FINISH_TEXT
            else:
                kind, payload = self.script.next_turn()
            seq = next(self._seq)
            if kind == "call":
                return self.dialect.tool_call(payload, body, stream=stream, seq=seq)
            return self.dialect.text(payload, body, stream=stream, seq=seq)


class _Handler(BaseHTTPRequestHandler):
    server_api: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the recorded requests are the log

    def _body(self) -> Any:
        try:
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        except ValueError:
            length = 0
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _serve(self, method: str) -> None:
        self.server_api.user_agents.add(str(self.headers.get("User-Agent", ""))[:200])
        body = self._body() if method == "POST" else None
        path = urlsplit(self.path).path
        try:
            reply = self.server_api.handle(method, path, body)
        except Exception as exc:  # noqa: BLE001 - a fake must answer, never drop the connection silently
            reply = Reply(500, "application/json", json.dumps({"error": {"message": f"fake endpoint: {exc}"}}).encode())
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._serve("POST")

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._serve("GET")

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self._serve("HEAD")
