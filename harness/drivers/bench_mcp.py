"""What MCP costs: the catalog in-process and through ``mcp:``, and the latency of one call.

``python -m harness.drivers.bench_mcp`` (part of ``make bench``, after the cmd: figures of
``harness/drivers/bench.py``) prints:

catalog
    the whole catalog (scenarios requiring conditions left out, as in ``harness/drivers/bench.py``) on the
    in-process reference and on ``mcp:python -m reference_impl.mcp_server`` (one server for the
    run), best of ``--repeat``; their ratio, the server's start-up (spawn, initialize, tools/list)
    and the end-to-end cost per call, (mcp: time - in-process time) / calls.
per-call latency
    the median and 95th percentile of ``--calls`` consecutive ``write_text_file`` calls on one
    session, in-process and through MCP: the SDK's client and server, JSON-RPC over two pipes and
    an event loop hop each way; and the processor time a call costs on each side (this process,
    and the server's process tree, read from ``/proc``), which says where a call's time goes.
start-up
    the server's start (spawn, the SDK's import, initialize, tools/list), the SDK's import alone
    in a fresh interpreter (the harness pays it too, once per process, for the client), and the
    server's stop (a run waits for it).

It prints figures and never fails on a slow machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.drivers.bench import count_calls, time_catalog
from harness.run import assemble
from harness.scenario import catalog
from harness.targets.mcp.target import SESSION_KEY, normal_form, parse_spec

REFERENCE_MCP = "mcp:python -m reference_impl.mcp_server"


def call_latencies(target, calls: int, cpu: dict[str, float] | None = None) -> list[float]:
    """Returns the seconds of ``calls`` write_text_file calls on one session of ``target``.

    ``cpu``, when given, receives the processor seconds per call of this process (``client``) and
    of the processes it started meanwhile (``server``; 0 where ``/proc`` is missing), and the
    seconds the target's ``stop`` took (``stop``: for a server, until its process has ended).
    """
    target.start()
    try:
        with tempfile.TemporaryDirectory(prefix="harness-bench-") as root:
            session = target.open("mcp-write-text-file", Path(root), {})
            out = []
            client, server = time.process_time(), children_cpu()
            for n in range(calls):
                args = {"path": f"{root}/f{n % 16}.txt", "content": "line\n" * 20}
                started = time.perf_counter()
                session.call("write_text_file", args)
                out.append(time.perf_counter() - started)
            if cpu is not None:
                cpu["client"] = (time.process_time() - client) / max(1, calls)
                cpu["server"] = (children_cpu() - server) / max(1, calls)
            session.close()
            return out
    finally:
        stopping = time.perf_counter()
        target.stop()
        if cpu is not None:
            cpu["stop"] = time.perf_counter() - stopping


def children_cpu() -> float:
    """Returns the processor seconds (user and system) used so far by the processes below this one."""
    parents: dict[int, list[tuple[int, int]]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0.0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append((int(name), int(fields[11]) + int(fields[12])))
    ticks, todo = 0, [os.getpid()]
    while todo:
        for pid, used in parents.get(todo.pop(), ()):
            ticks += used
            todo.append(pid)
    return ticks / os.sysconf("SC_CLK_TCK")


class _FloorSession:
    """One scenario's calls on the SDK floor's connection, answered in normal form; a call whose
    arguments cannot travel as UTF-8 (a lone surrogate) is not sent, and counted."""

    def __init__(self, connection: Any, entry: dict[str, Any], timeout: float, unsent: list[str]) -> None:
        self._connection, self._meta, self._timeout, self._unsent = connection, {SESSION_KEY: entry}, timeout, unsent

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        from harness.targets.mcp.connection import RpcError
        try:
            json.dumps(args, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            self._unsent.append(tool)
            return {"error": {"code": None, "message": "not sent"}}
        try:
            result = normal_form(self._connection.call_tool(tool, args, self._meta, self._timeout))
        except RpcError as exc:
            return {"error": {"code": exc.code, "message": exc.message}}
        return {"output": result.output, "error": result.error, "events": result.events}


def sdk_floor(scenarios: list[Any], parent: str | None = None, timeout: float = 60.0) -> tuple[float, float, int]:
    """Returns (the server's start, the calls, the calls not sent) of the *SDK floor*, in seconds.

    The floor is what the official SDK and the reference MCP server take for the scenarios' calls
    with nothing of the runner around them: the harness's MCP connection alone (the SDK's client
    session on the server's stdio, no sandbox) making each call as ``mcp:`` makes it, each scenario
    in a fresh folder laid out as the replay lays it out (:func:`harness.drivers.bench_speed.replay`),
    nothing checked, read back, judged or recorded. No run of ``mcp:`` on these scenarios can take
    less, so it bounds from below what the ``mcp:`` goals can reach while the SDK stays."""
    from harness.drivers.bench_speed import replay
    from harness.targets.mcp.connection import Connection, LoopHere
    argv = parse_spec(REFERENCE_MCP)  # as the mcp: target starts it (``python``: this interpreter)
    started = time.perf_counter()
    loop = LoopHere()
    connection = Connection(loop, argv)
    try:
        connection.open(timeout)
        start = time.perf_counter() - started
        unsent: list[str] = []
        opened = iter(range(len(scenarios)))

        def open_session(scenario: Any, root: str) -> _FloorSession:
            entry = {"id": f"floor{next(opened)}", "profile": scenario.profile, "workspace": root,
                     "options": dict(scenario.options)}
            return _FloorSession(connection, entry, timeout, unsent)
        calls = replay(scenarios, parent, open_session)
    finally:
        connection.close()
        loop.close()
    return start, calls, len(unsent)


def import_seconds(module: str, repeat: int) -> float:
    """Returns the best wall time of ``python -c 'import <module>'`` less that of ``python -c pass``."""
    def best(code: str) -> float:
        times = []
        for _ in range(max(1, repeat)):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - started)
        return min(times)
    return best(f"import {module}") - best("pass")


def main(argv: list[str] | None = None) -> int:
    """Prints the figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.bench_mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="catalog runs of each target; the best counts (default 3)")
    parser.add_argument("--calls", type=int, default=500, help="calls for the latency figures (default 500)")
    parser.add_argument("--target", default=REFERENCE_MCP, help=f"the mcp: target to compare (default {REFERENCE_MCP})")
    args = parser.parse_args(argv)

    cat = catalog.load([catalog.builtin_dir()])
    scenarios = [s for s in cat.scenarios if not s.requires]
    calls = count_calls(scenarios)
    local_best = remote_best = remote_start = float("inf")
    for _ in range(max(1, args.repeat)):
        local_best = min(local_best, time_catalog(assemble.target("reference"), scenarios)[1])
        startup, seconds, _ = time_catalog(assemble.target(args.target), scenarios)
        remote_best, remote_start = min(remote_best, seconds), min(remote_start, startup)
    local = call_latencies(assemble.target("reference"), args.calls)
    cpu: dict[str, float] = {}
    remote = call_latencies(assemble.target(args.target), args.calls, cpu)
    sdk = import_seconds("mcp", args.repeat)

    print(f"mcp: catalog {len(scenarios)} scenarios, {calls} tool calls; best of {args.repeat}")
    print(f"  in-process          {local_best * 1000:9.1f} ms")
    print(f"  mcp:                {remote_best * 1000:9.1f} ms   (+ {remote_start * 1000:.0f} ms to start the server once)")
    print(f"  ratio mcp:/in-process          {remote_best / local_best:6.2f}x")
    print(f"  end-to-end cost per call    {(remote_best - local_best) / calls * 1e6:8.1f} us")
    print(f"mcp: per-call latency, write_text_file x {args.calls}")
    for name, values in (("in-process", local), ("mcp:", remote)):
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"  {name:<12} median {statistics.median(values) * 1e6:8.1f} us   p95 {p95 * 1e6:8.1f} us")
    print(f"  ratio of the medians           {statistics.median(remote) / statistics.median(local):6.2f}x")
    print(f"  processor time per mcp: call: client {cpu['client'] * 1e6:.0f} us, server {cpu['server'] * 1e6:.0f} us")
    print("mcp: start-up")
    print(f"  the server's start          {remote_start * 1000:8.0f} ms   (spawn, import, initialize, tools/list)")
    print(f"  the SDK's import alone      {sdk * 1000:8.0f} ms   (python -c 'import mcp', less python -c pass)")
    print(f"  the server's stop           {cpu['stop'] * 1000:8.0f} ms   (stdin closed until the process has ended)")
    print(f"  ratio with the start        {(remote_best + remote_start) / local_best:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
