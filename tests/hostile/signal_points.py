"""SIGTERM at the n-th call of one function the runner's own bookkeeping relies on, for every n.

Run as ``python -m tests.hostile.signal_points JOBS HOOK:WHEN...`` from the project root (its own
process: it installs the harness's signal handlers); the signal is SIGTERM, or the one named by
``SIGNAL_POINTS_SIGNAL`` (e.g. ``SIGINT``, Ctrl-C). ``HOOK`` names a function (``mkdtemp``,
``mkdir``, ``rename``, ``thread-start``, ``thread-join``, ``queue-put``, ``rmtree``; with JOBS 2,
``process-start``, ``connection-send``, ``connection-recv`` of the worker pool); ``WHEN`` is
``before`` or ``after`` the call; only this process's calls count, not those of its workers, and
a worker learns of the signal as it would in a real run (the harness passes it on). For n = 1, 2, ... it plays a small catalog on the in-process reference in a
fresh folder, exactly as ``harness run`` does (``workers.run``, then the final checkpoint), and
sends itself SIGTERM just before or just after the n-th call of the hook, until a run makes fewer
calls than n. A signal landing there is the worst case of a real one: the exception is raised
between the call and whatever the caller meant to do with its result. For each n it prints one
JSON line: whether the run was ended by the signal, what was left in the folder, and any other
exception.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from multiprocessing import connection, process
from pathlib import Path

from harness.run import workers
from harness.scenario.loader import load_text
from harness.targets import make_target
from harness.util import processes

SCENARIOS = """
id: signal-points/write-then-read-{n}
profile: claude-code
title: a write and a read, with a file given
source: test
given:
  files:
    a.txt: "alpha\\n"
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
  - tool: Write
    args: {{file_path: "${{workspace}}/b.txt", content: "beta\\n"}}
then:
  files:
    b.txt: "beta\\n"
"""

HOOKS = {
    "mkdtemp": (tempfile, "mkdtemp"),
    "mkdir": (os, "mkdir"),
    "rename": (os, "rename"),
    "rmtree": (shutil, "rmtree"),
    "thread-start": (threading.Thread, "start"),
    "thread-join": (threading.Thread, "join"),
    "queue-put": (queue.Queue, "put"),
    "process-start": (process.BaseProcess, "start"),
    "connection-send": (connection.Connection, "send"),
    "connection-recv": (connection.Connection, "recv"),
}

SIGNAL = getattr(signal, os.environ.get("SIGNAL_POINTS_SIGNAL", "SIGTERM"))

#: More calls than any of the hooks sees in one run of the catalog below.
MAX_N = 80


def main(jobs: str, *cases: str) -> None:
    scenarios = [s for n in range(3) for s in load_text(SCENARIOS.format(n=n), Path(f"s{n}.yaml"))]
    base = Path(tempfile.mkdtemp(prefix="signal-points-"))
    try:
        for case in cases:
            hook, when = case.split(":")
            play(hook, when, int(jobs), scenarios, base / case.replace(":", "-"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def play(hook: str, when: str, jobs: int, scenarios: list, base: Path) -> None:
    """Signals the runs of ``scenarios`` at each call of ``hook`` in turn; prints one JSON line per run."""
    owner, name = HOOKS[hook]
    original = getattr(owner, name)
    calls = {"n": 0, "at": 0, "sent": False}
    me = os.getpid()

    def hooked(*args, **kwargs):
        if os.getpid() != me:  # a forked worker inherits the hook: its calls are not counted
            return original(*args, **kwargs)
        calls["n"] += 1
        if when == "before" and calls["n"] == calls["at"]:
            calls["sent"] = True
            os.kill(os.getpid(), SIGNAL)
        result = original(*args, **kwargs)  # a call that raises sends nothing "after"
        if when == "after" and calls["n"] == calls["at"]:
            calls["sent"] = True
            os.kill(os.getpid(), SIGNAL)
        return result

    base.mkdir()
    for at in range(1, MAX_N + 1):
        folder = base / str(at)
        folder.mkdir()
        processes.own_tree()  # the first signal sets SIG_IGN: armed again for each run
        processes._pending = None
        calls.update(n=0, at=at, sent=False)
        raised, error = False, None
        setattr(owner, name, hooked)
        try:
            workers.run([make_target("reference")], scenarios, tmp=str(folder), jobs=jobs)
            processes.checkpoint()  # as harness run does once the run returned
        except KeyboardInterrupt:  # processes.Terminated, or Ctrl-C's own where it is not handled
            raised = True
        except BaseException as exc:  # noqa: BLE001 - reported, the test fails on it
            error = "".join(traceback.format_exception(exc))
        finally:
            setattr(owner, name, original)
        left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
        print(json.dumps({"case": f"{hook}:{when}", "at": at, "sent": calls["sent"], "raised": raised, "left": left,
                          "error": error}), flush=True)
        if calls["n"] < at:
            break


if __name__ == "__main__":
    main(*sys.argv[1:])
