"""Example: a cmd: adapter that misbehaves on command, to prove the harness survives broken candidates.

Usage: ``python tests/adapters/misbehaving.py --mode MODE [--profiles a,b] [--sleep S]``.

It serves the ``claude-code`` profile with a tiny, honest ``Write`` and ``Read`` (enough for a
scenario to pass) and misbehaves in one way, chosen by ``--mode``:

- at start-up: ``exit-before-hello``, ``hello-protocol-2`` (answers hello with ``protocol: 2``),
  ``hello-declines`` (answers hello with ``ok: false``), ``hello-hangs``;
- on every call whose arguments mention ``MISBEHAVE`` (other calls behave): ``hang``, ``slow``
  (sleeps ``--sleep`` seconds, then answers), ``crash`` (dies with exit code 7), ``not-json``,
  ``not-protocol`` (a JSON object that is no response), ``log`` (log lines on stdout before the
  answer), ``extra-line`` (a second line after the answer), ``huge`` (a 50 MiB line),
  ``adapter-fails`` (``ok: false``), ``escape`` (also writes a file beside the workspace);
- between scenarios: ``exit-after-close`` (answers ``close``, then exits);
- ``relative-cwd``: a ``Write`` to a relative path writes it against its own working folder, as a
  careless tool does (the others join it to the workspace);
- ``none``: no misbehaviour at all.

Everything it does goes to stderr too, so tests can check that its tail reaches the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

MODE = "none"


def log(text: str) -> None:
    sys.stderr.write(f"misbehaving[{os.getpid()}]: {text}\n")
    sys.stderr.flush()


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def tool(sessions: dict, request: dict) -> dict:
    """The honest part: Write and Read on the session's workspace."""
    workspace = sessions[request["session"]]
    args = request.get("args") or {}
    path = os.path.join(workspace, args.get("file_path", ""))
    if MODE == "relative-cwd" and not os.path.isabs(args.get("file_path", "/")):
        path = args["file_path"]  # resolved where the process runs
    if request["tool"] == "Write":
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(args.get("content", ""))
        except OSError as exc:
            return {"ok": True, "error": {"code": None, "message": f"{exc.strerror}: {path}"}}
        return {"ok": True, "output": f"File created successfully at: {path}"}
    if request["tool"] == "Read":
        try:
            with open(path, encoding="utf-8") as f:
                return {"ok": True, "output": f.read()}
        except OSError as exc:
            return {"ok": True, "error": {"code": None, "message": f"{exc.strerror}: {path}"}}
    return {"ok": False, "reason": f"unknown tool {request['tool']!r}"}


def misbehave(mode: str, sessions: dict, request: dict, pause: float) -> dict | None:
    """Does the misbehaviour; returns the response to send, or None when it was already written."""
    log(f"misbehaving with mode {mode}")
    if mode == "hang":
        time.sleep(3600)
    elif mode == "slow":
        time.sleep(pause)
    elif mode == "crash":
        log("fatal: simulated crash in the middle of a call")
        os._exit(7)
    elif mode == "not-json":
        sys.stdout.write("this is not json {\n")
        sys.stdout.flush()
        return None
    elif mode == "not-protocol":
        send({"jsonrpc": "2.0", "result": "hello"})
        return None
    elif mode == "log":
        sys.stdout.write("INFO loading tool\nINFO tool loaded\n")
    elif mode == "extra-line":
        send(tool(sessions, request))
        send({"ok": True, "output": "a second answer"})
        return None
    elif mode == "huge":
        chunk = "x" * (1024 * 1024)
        sys.stdout.write('{"ok": true, "output": "')
        try:
            for _ in range(50):
                sys.stdout.write(chunk)
            sys.stdout.write('"}\n')
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)
        return None
    elif mode == "adapter-fails":
        return {"ok": False, "reason": "simulated adapter failure: tool table not loaded"}
    elif mode == "escape":
        outside = os.path.join(os.path.dirname(sessions[request["session"]]), "escaped.txt")
        with open(outside, "w") as f:
            f.write("written outside the workspace\n")
    return tool(sessions, request)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="none")
    parser.add_argument("--profiles", default="claude-code")
    parser.add_argument("--sleep", type=float, default=0.5)
    opts = parser.parse_args()
    mode = opts.mode
    global MODE
    MODE = mode
    log(f"started with mode {mode}")
    if mode == "exit-before-hello":
        log("fatal: cannot load configuration file adapter.toml")
        sys.exit(3)
    sessions: dict[str, str] = {}
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "hello":
            if mode == "hello-hangs":
                time.sleep(3600)
            if mode == "hello-declines":
                send({"ok": False, "reason": "this adapter only speaks protocol 2"})
                continue
            answer = {"ok": True, "name": "misbehaving", "version": "0.0.1", "profiles": opts.profiles.split(",")}
            if mode == "hello-protocol-2":
                answer["protocol"] = 2
            send(answer)
        elif op == "open":
            sessions[request["session"]] = request["workspace"]
            send({"ok": True})
        elif op == "call":
            if "MISBEHAVE" in json.dumps(request.get("args")):
                response = misbehave(mode, sessions, request, opts.sleep)
            else:
                response = tool(sessions, request)
            if response is not None:
                send(response)
        elif op == "close":
            sessions.pop(request["session"], None)
            send({"ok": True})
            if mode == "exit-after-close":
                log("exiting between scenarios")
                return
        elif op == "bye":
            send({"ok": True})
            return
        else:
            send({"ok": False, "reason": f"unknown op {op!r}"})


if __name__ == "__main__":
    main()
