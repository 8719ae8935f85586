"""One MCP server process over stdio, driven synchronously from the harness.

The official SDK is asynchronous (``stdio_client`` + ``ClientSession`` on anyio); the harness's
Session interface is not. A :class:`LoopHere` runs an asyncio event loop in the harness's own
thread, only while a call waits for its answer (:class:`LoopThread`, a loop on a background thread,
serves the ACP client), and a :class:`Connection` keeps one server's whole lifetime (spawn,
initialise, list tools, ..., shutdown) inside one task on that loop, while each call is a separate
task awaited with a deadline. The server's stderr goes through a pipe into a bounded
:class:`~harness.targets.channel.StderrTail`, so a chatty server neither fills memory nor blocks.

Anything that goes wrong with the process itself (it cannot be spawned, exits, hangs, writes
something on stdout that is not JSON-RPC) is a :class:`ConnectionBroken`, after which the
connection is closed and its process gone. A JSON-RPC error the server answers with is no such
thing: it is returned to the caller as :class:`RpcError`. What the results mean is ``target.py``'s
concern.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from harness.targets import launch
from harness.targets.channel import StderrTail
from harness.util import processes
from harness.util.packages import deferred_init

#: Time given to the SDK's shutdown sequence (close stdin, 2 s, SIGTERM, 2 s, SIGKILL) to finish.
SHUTDOWN_GRACE = 6.0
#: Time given to a cancelled connection's transport, its process already ended, to close its pipes.
LIFE_END = 3.0
# The SDK logs a traceback for every stray stdout line; the verdict already names it.
logging.getLogger("mcp").addHandler(logging.NullHandler())

#: The experimental capability in which a server may list the profiles it implements.
PROFILES_CAPABILITY = "file-tool-conformance"


#: tools/list read at most this far: a server may page forever (each page within the line cap).
MAX_TOOLS = 10_000
MAX_TOOL_PAGES = 1_000


def stray_line(exc: BaseException) -> str:
    """Returns the stdout line a server wrote that was no JSON-RPC message, quoted and bounded.

    The SDK hands over the validation error of the line, whose first line does not show it; the
    line itself is the error's input (pydantic keeps it)."""
    line: Any = None
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
            line = found[0].get("input") if found else None
        except Exception:  # noqa: BLE001 - any failure here only loses the quote
            line = None
    if isinstance(line, (bytes, bytearray)):
        line = bytes(line).decode("utf-8", "replace")
    if not isinstance(line, str):
        if line is not None:
            try:
                line = json.dumps(line, ensure_ascii=False)
            except (TypeError, ValueError):
                line = None
    if line is None:
        text = str(exc)
        return text.splitlines()[0][:300] if text else type(exc).__name__
    shown = line.splitlines()[0] if line.splitlines() else line
    cut = len(shown) > 200
    return repr(shown[:200]) + (f" ... ({len(shown) - 200} more characters)" if cut else "")


class ConnectionBroken(Exception):
    """The server broke the conversation; ``kind`` is one of spawn, exited, timeout, stdout, protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class LoopThread:
    """An asyncio event loop running on its own daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_quiet_about_lost_connections)
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcp-client-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Any, timeout: float | None) -> Any:
        """Runs ``coro`` on the loop and returns its result; raises TimeoutError after ``timeout`` seconds."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def close(self) -> None:
        """Stops the loop and its thread."""
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(2.0)
        if not self.loop.is_running():
            self.loop.close()


def _quiet_about_lost_connections(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's handler of exceptions nobody awaited: a request the SDK left running when the
    harness gave up on its server (a timeout, a connection closed) ends with an exception no one
    retrieves, which asyncio would print as a traceback. The broken server is already the call's
    verdict (a TargetError), so such an ending is dropped; anything else is reported as asyncio does."""
    exception = context.get("exception")
    if isinstance(exception, (TimeoutError, ConnectionError, EOFError, asyncio.CancelledError)) or (
            exception is not None and any(kind.__name__ in ("MCPError", "ClosedResourceError", "BrokenResourceError",
                                                           "EndOfStream") for kind in type(exception).__mro__)):
        return
    loop.default_exception_handler(context)


async def _settle(turns: int = 3) -> None:
    """Lets the tasks the last messages started run a few steps (a loop run only during calls)."""
    for _ in range(turns):
        await asyncio.sleep(0)


def _taken(future: asyncio.Future[Any]) -> None:
    """Takes a finished request's outcome, which no one may wait for any more."""
    if not future.cancelled():
        future.exception()


def _library_name() -> Any:
    """Returns sniffio's context variable naming the running async library, None without sniffio.

    anyio asks sniffio, where it is installed, which library runs at every operation (each
    checkpoint, stream send and receive, cancel scope: a dozen times per MCP call); sniffio takes
    the name from this variable, which the runner of an event loop sets (``anyio.run`` does), and
    without it looks for asyncio's current task: a sixth of the client's processor time per call.
    Without sniffio anyio asks asyncio for the running loop, which costs little."""
    try:
        import sniffio
    except ImportError:
        return None
    return sniffio.current_async_library_cvar


class LoopHere:
    """An asyncio event loop run in the calling thread, only while a call waits for its answer.

    What :class:`LoopThread` offers (``run``, ``close``) without a second thread: a call is one
    ``run_until_complete`` on the caller's thread, so no answer crosses threads (each crossing
    costs a wake-up through the loop's self-pipe and a hand-over of the GIL, about a millisecond
    on a busy 2-core machine, as much as the rest of an MCP call). Between calls the loop is idle:
    what the server sends then waits in the pipe until the next call reads it.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._name = _library_name()

    def _context(self) -> contextvars.Context:
        """Returns the context a task is run in: the caller's, as for any task, with asyncio named
        the running library (:func:`_library_name`)."""
        context = contextvars.copy_context()
        if self._name is not None:
            context.run(self._name.set, "asyncio")
        return context

    def run(self, coro: Any, timeout: float | None) -> Any:
        """Runs ``coro`` here and returns its result; raises TimeoutError after ``timeout`` seconds."""
        if self.loop.is_closed():
            coro.close()
            raise RuntimeError("the event loop is closed")
        # One task with a timer that cancels it, not asyncio.wait_for (a second task and future per call).
        task = self.loop.create_task(coro, context=self._context())
        expired: list[bool] = []

        def expire() -> None:
            expired.append(True)
            task.cancel()

        timer = None if timeout is None else self.loop.call_later(timeout, expire)
        try:
            return self.loop.run_until_complete(task)
        except asyncio.CancelledError:
            if expired:
                raise TimeoutError from None
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def race(self, coro: Any, timeout: float | None, cut: asyncio.Future[Any]) -> asyncio.Task[Any]:
        """Runs ``coro`` as a task here until it ends or ``cut`` is set, and returns the task, ended or
        not (an unfinished one is left running: it is not cancelled); raises TimeoutError after
        ``timeout`` seconds, the task left running too. One task, and no second one waiting on it."""
        if self.loop.is_closed():
            coro.close()
            raise RuntimeError("the event loop is closed")
        task = self.loop.create_task(coro, context=self._context())
        task.add_done_callback(_taken)  # one left running ends later (its server stopped): its outcome is taken

        def ended(_: Any) -> None:
            if not cut.done():
                cut.set_result(None)
        task.add_done_callback(ended)
        timer = None if timeout is None else self.loop.call_later(timeout, cut.cancel)
        try:
            self.loop.run_until_complete(cut)
        except asyncio.CancelledError:
            if timer is not None and cut.cancelled():
                raise TimeoutError from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
            task.remove_done_callback(ended)
        return task

    def close(self) -> None:
        """Closes the loop (every connection on it closed before)."""
        if not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()


class _EndWatch:
    """Wraps the transport's read stream to learn when the server closed its stdout."""

    def __init__(self, inner: Any, connection: Connection) -> None:
        self._inner = inner
        self._connection = connection

    async def receive(self) -> Any:
        import anyio
        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            self._connection.ended = True
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _EndWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class Connection:
    """One server process, initialised, with the tools it listed."""

    def __init__(self, loop: LoopHere, argv: Sequence[str] = (), *, url: str | None = None,
                 env: Mapping[str, str] | None = None, cwd: str | None = None,
                 roots: Sequence[str] | None = None, box: Any = None) -> None:
        self._loop = loop
        self.argv = list(argv)
        self.box = box  # the sandbox the server runs in (harness/targets/launch.py), closed with the connection
        self.tag: str | None = None  # the keeper's tag (harness/util/processes.py), once started
        self.url = url  # a Streamable HTTP endpoint instead of a command
        # The client's roots (folders) when it offers the roots capability, else None.
        self.roots = list(roots) if roots is not None else None
        self.roots_asked = 0  # how many roots/list requests the server sent
        self._roots_waiter: asyncio.Future | None = None
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        self.session: Any = None
        self.server_info: Any = None
        self.profiles: tuple[str, ...] = ()
        self.tools: dict[str, Any] = {}
        self.validators: dict[str, Any] = {}  # each tool's compiled inputSchema (target.py), made on its first call
        self.ended = False  # the server closed its stdout
        self.stray: list[str] = []  # stdout lines that were not JSON-RPC messages
        self._stray_seen: asyncio.Future | None = None  # set when one arrives during a call
        self.stderr: StderrTail | None = None
        self._life: asyncio.Task | None = None
        self._stop: asyncio.Event | None = None
        self.alive = False

    # -- the lifetime --------------------------------------------------------------------------

    def open(self, timeout: float) -> None:
        """Starts the server, initialises and lists its tools; raises ConnectionBroken."""
        if self.url is None:
            search = self.env.get("PATH", os.defpath)
            if not self.argv or ("/" not in self.argv[0] or os.path.isabs(self.argv[0]) or not self.cwd) and \
                    shutil.which(self.argv[0], path=search) is None:
                raise ConnectionBroken("spawn", f"cannot start {self.argv[0] if self.argv else ''!r}: "
                                                "No such file or directory")
            # In its sandbox, under a keeper: whatever the server starts, however detached, ends with it.
            try:
                self._command, self.tag = launch.command(self.argv, self.box)
            except launch.SandboxError as exc:
                raise ConnectionBroken("spawn", f"cannot sandbox {self.argv[0]!r}: {exc}") from None
        try:
            self._loop.run(self._open(), timeout)
            self._loop.run(_settle(), timeout)  # what the server asked meanwhile (roots/list) is answered now
        except TimeoutError:
            # No grace: the life is stuck in the handshake, where the stop event does not reach it, and a
            # server that never initialised has nothing to finish. Its process tree is ended at once.
            self.close(grace=0.0)
            raise ConnectionBroken("timeout", f"did not finish initialising within {timeout:g} s") from None
        except ConnectionBroken:
            self.close()
            raise
        self.alive = True

    async def _open(self) -> None:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._stop = stop = asyncio.Event()
        self._life = asyncio.ensure_future(self._live(ready, stop))
        try:
            await ready
        except asyncio.CancelledError:
            stop.set()
            raise

    async def _live(self, ready: asyncio.Future, stop: asyncio.Event) -> None:
        # The client's submodules alone, not the SDK's servers; the transport first, with the message
        # types' package (both protocol versions' models) deferred too: the server is started, then the
        # session's modules are imported while it starts (two processes' imports side by side).
        deferred_init("mcp", "mcp.client", "mcp_types")
        from mcp.client.stdio import StdioServerParameters, stdio_client

        read_fd, write_fd = os.pipe()
        self.stderr = StderrTail(read_fd)
        errlog = os.fdopen(write_fd, "w")
        if self.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            transport = streamable_http_client(self.url)
        else:
            params = StdioServerParameters(command=self._command[0], args=self._command[1:], env=self.env, cwd=self.cwd)
            transport = stdio_client(params, errlog=errlog)
        try:
            async with transport as (read, write):
                errlog.close()  # the child holds its own copy: the tail ends when the server does
                import mcp_types as types
                from mcp.client.session import ClientSession
                client_info = types.Implementation(name="file-tool-conformance-harness", version="0.1.0")
                list_roots = self._list_roots if self.roots is not None else None
                async with ClientSession(_EndWatch(read, self), write, message_handler=self._on_message,
                                         client_info=client_info, list_roots_callback=list_roots) as session:
                    self.session = session
                    try:
                        result = await session.initialize()
                    except Exception as exc:
                        raise self._broken(exc, "initialize") from None
                    self.server_info = result.server_info
                    experimental = getattr(result.capabilities, "experimental", None) or {}
                    advertised = (experimental.get(PROFILES_CAPABILITY) or {}).get("profiles")
                    self.profiles = tuple(advertised) if isinstance(advertised, list) else ()
                    cursor, pages = None, 0
                    while True:
                        try:
                            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                        except Exception as exc:
                            raise self._broken(exc, "tools/list") from None
                        self.tools.update((tool.name, tool) for tool in page.tools)
                        pages += 1
                        cursor = page.next_cursor
                        if not cursor:
                            break
                        if len(self.tools) > MAX_TOOLS or pages >= MAX_TOOL_PAGES:  # a server paging forever
                            raise ConnectionBroken("protocol", f"listed more than {MAX_TOOLS} tools or "
                                                               f"{MAX_TOOL_PAGES} pages in tools/list, and more "
                                                               "were coming: not read further")
                    if not ready.done():
                        ready.set_result(None)
                    await stop.wait()
        except OSError as exc:
            if not ready.done():
                ready.set_exception(ConnectionBroken("spawn", f"cannot start {self.argv[0]!r}: {exc.strerror or exc}"))
        except BaseException as exc:  # noqa: BLE001 - whatever ended the life is reported to the opener
            if not ready.done():
                broken = exc if isinstance(exc, ConnectionBroken) else self._broken(exc, "initialize")
                ready.set_exception(broken)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.alive = False
            if not errlog.closed:
                errlog.close()

    async def _list_roots(self, context: Any) -> Any:
        """Answers the server's roots/list with the current roots (file: URIs)."""
        from pathlib import Path

        import mcp_types as types
        self.roots_asked += 1
        roots = [types.Root.model_validate({"uri": Path(root).as_uri(), "name": Path(root).name}) for root in self.roots or ()]
        if self._roots_waiter is not None and not self._roots_waiter.done():
            self._roots_waiter.set_result(None)
        return types.ListRootsResult(roots=roots)

    def change_roots(self, roots: Sequence[str], timeout: float) -> None:
        """Makes ``roots`` the client's roots, tells the server, and returns once it has asked for them.

        Raises ConnectionBroken when the server does not ask within ``timeout`` seconds.
        """
        if not self.alive:
            raise ConnectionBroken("exited", "the server is no longer running")
        try:
            self._loop.run(self._change_roots(list(roots)), timeout)
        except TimeoutError:
            self.close()
            raise ConnectionBroken("timeout", f"did not ask for its new roots within {timeout:g} s") from None
        except ConnectionBroken:
            self.close()
            raise

    async def _change_roots(self, roots: list[str]) -> None:
        import mcp_types as types
        self.roots = roots
        self._roots_waiter = asyncio.get_running_loop().create_future()
        try:
            # send_notification, not the SDK's deprecated send_roots_list_changed wrapper (same message).
            await self.session.send_notification(types.RootsListChangedNotification())
        except Exception as exc:
            raise self._broken(exc, "notifications/roots/list_changed") from None
        await self._roots_waiter

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            if len(self.stray) < 20:
                self.stray.append(_stray_line(message))
            if self._stray_seen is not None and not self._stray_seen.done():
                self._stray_seen.set_result(None)  # the call waiting for an answer learns it at once

    def close(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Ends the connection: the SDK closes stdin, then terminates and kills the process tree.

        ``grace`` 0: the process tree is ended at once, then the transport is shut down.
        """
        self.alive = False
        life, stop = self._life, self._stop
        if life is not None and stop is not None and grace > 0:
            try:
                self._loop.run(self._close(life, stop, grace), grace + 1.0)
            except TimeoutError:
                pass
        if self.tag is not None:  # also after a hang in initialize or tools/list: nothing of it stays
            processes.end_tagged(self.tag)
        if self.box is not None:
            self.box.close()
        if life is not None and not life.done():
            # A life left cancelled (or never asked to stop) must still run to its end: the SDK's
            # transport closes the server's pipes in its shutdown, and a loop run only during calls
            # would never get there (two pipe fds left open per failed start). The process is gone
            # by now, so the shutdown's waits for its exit end at once.
            try:
                self._loop.run(self._cancel(life), LIFE_END)
            except TimeoutError:
                pass
        if self.stderr is not None:
            self.stderr.wait(0.5)

    @staticmethod
    async def _cancel(life: asyncio.Task) -> None:
        # Cancelled and awaited within one run of the loop: its end (the pipes closed) is then complete.
        life.cancel()
        await asyncio.wait({life})

    @staticmethod
    async def _close(life: asyncio.Task, stop: asyncio.Event, grace: float) -> None:
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(life), grace)
        except (TimeoutError, asyncio.CancelledError):
            life.cancel()
        except BaseException:  # noqa: BLE001 - the life already reported what ended it
            pass

    # -- requests ------------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None, timeout: float) -> Any:
        """Calls a tool; returns the CallToolResult or raises RpcError / ConnectionBroken."""
        if not self.alive:
            raise ConnectionBroken("exited", "the server is no longer running")
        try:
            result = self._call(name, arguments, meta, timeout)
        except TimeoutError:
            self.close()
            raise ConnectionBroken("timeout", f"did not answer within {timeout:g} s") from None
        except ConnectionBroken:
            self.close()
            raise
        if self.stray:
            shown = self.stray[0]
            self.close()
            raise ConnectionBroken("stdout", f"wrote a line on stdout that is not a JSON-RPC message: {shown}")
        return result

    def _call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None, timeout: float) -> Any:
        """Sends tools/call and returns its result once it comes; raises ConnectionBroken (a line on stdout
        that is not JSON-RPC ends the wait at once), RpcError, or TimeoutError (the request left running:
        it ends when the server is stopped, its outcome taken then so asyncio prints no traceback)."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        params = types.CallToolRequestParams.model_validate({"name": name, "arguments": arguments, "_meta": meta})
        request = types.CallToolRequest(params=params)
        # A line the SDK cannot decode (not JSON, a lone-surrogate escape...) is dropped by it, and the
        # answer it may have been with it: the call ends on it at once, not at its time limit.
        self._stray_seen = cut = self._loop.loop.create_future()
        if self.stray:
            cut.set_result(None)
        # send_request, not call_tool: a result is observed as sent, never re-validated against
        # the tool's output schema by the client (that would turn a divergence into an exception).
        answer = self._loop.race(self.session.send_request(request, types.CallToolResult), timeout, cut)
        if not answer.done():
            answer.cancel()
            self._loop.run(asyncio.wait({answer}), timeout)  # its ending bounded as the call was
            raise ConnectionBroken("stdout", f"wrote a line on stdout that is not a JSON-RPC message during "
                                             f"tools/call {name}: {self.stray[0]}")
        try:
            return answer.result()
        except MCPError as exc:
            if self.ended or (self._life is not None and self._life.done()):
                raise self._broken(exc, f"tools/call {name}") from None
            raise RpcError(exc.code, exc.message, exc.data) from None
        except Exception as exc:
            raise self._broken(exc, f"tools/call {name}") from None

    def _broken(self, exc: BaseException, what: str) -> ConnectionBroken:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]  # anyio task groups wrap the one error that matters
        if isinstance(exc, ConnectionBroken):
            return exc
        if self.url is not None and "connect" in type(exc).__name__.lower():
            return ConnectionBroken("spawn", f"could not be reached at {self.url}: {exc}")
        if self.ended:
            return ConnectionBroken("exited", f"closed the connection (exited or crashed) during {what}")
        if self.stray:
            return ConnectionBroken("stdout", f"wrote a line on stdout that is not a JSON-RPC message during {what}: "
                                              f"{self.stray[0]}")
        from mcp.shared.exceptions import MCPError
        if isinstance(exc, MCPError):
            return ConnectionBroken("protocol", f"answered {what} with a JSON-RPC error {exc.code}: {exc.message}")
        return ConnectionBroken("protocol", f"broke the protocol during {what}: {type(exc).__name__}: {exc}")

    def tail(self) -> str:
        """Returns the tail of the server's stderr, formatted for a report (nothing for an HTTP server)."""
        if self.url is not None:
            return ""
        return self.stderr.report() if self.stderr is not None else "stderr: (empty)"


def _stray_line(exc: Exception) -> str:
    """Says why a stdout line was no JSON-RPC message, with the line's text where it went wrong
    (``could not be decoded: Invalid JSON: unexpected end of hex escape at line 1 column 97, near
    `…"text": "half a pair: \\ud800"}]}}```)."""
    from harness.util import printable
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - only a description is at stake
        first = None
    if isinstance(first, dict) and isinstance(first.get("input"), str):
        line, why = first["input"], str(first.get("msg", ""))
        column = re.search(r"column (\d+)", why)
        at = int(column.group(1)) if column else len(line)
        near = line[max(0, at - 60): at + 20]
        # The line itself, quoted (stray_line), then where it could not be read as JSON.
        return (f"{stray_line(exc)} (could not be decoded: {why[:200]}, near `{'…' if at > 60 else ''}"
                f"{printable.shown(near)}{'…' if at + 20 < len(line) else ''}`)")
    return stray_line(exc)
