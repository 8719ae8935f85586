"""Candidates and MCP servers that leave processes behind: nothing of theirs outlives them.

Each hostile process starts a ``setsid`` child and a double-forked grandchild carrying a unique
marker in their argv; after the harness moved on (or exited, or was sent SIGTERM / SIGHUP), no
live process with that marker may remain.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from harness.containment import sandbox
from harness.targets.options import TargetOptions
from tests.hostile.conftest import CANDIDATES, ROOT, harness_run, processes_with, write_scenarios

pytest_plugins = ["pytester"]

READ = """
id: hostile/forks-{n}
profile: claude-code
title: a candidate that leaves processes behind
source: test
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
"""


def marker() -> str:
    return f"hostile-marker-{uuid.uuid4().hex[:10]}"


def gone(mark: str, within: float = 5.0) -> list[str]:
    """Returns the processes with ``mark`` still alive after waiting up to ``within`` seconds."""
    deadline = time.monotonic() + within
    while (left := processes_with(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def scenarios(tmp_path, count=2):
    folder = tmp_path / "scenarios"
    for n in range(count):
        write_scenarios(folder, READ.format(n=n), f"s{n}.yaml")
    return folder


@pytest.mark.parametrize("mode", ["fork", "hang-forked"])
def test_a_cmd_candidates_detached_children_end_with_it(tmp_path, mode):
    mark = marker()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode {mode} --marker {mark}"
    outcome = harness_run(tmp_path, scenarios(tmp_path), "--target", spec, "--timeout", "2")
    assert outcome.code == (0 if mode == "fork" else 1)
    assert not gone(mark), "processes left behind"
    assert outcome.seconds < 40


@pytest.mark.parametrize("hang", ["initialize", "tools/list", "never"])
def test_an_mcp_server_and_its_children_end_also_after_a_hang_in_initialize_or_tools_list(tmp_path, hang):
    mark = marker()
    spec = f"mcp:python {CANDIDATES / 'hostile_mcp.py'} --hang {hang} --marker {mark}"
    # A start-up budget of 5 s instead of 30 where the server hangs: the hang is the same, the kill
    # that follows it too. A server that answers keeps the default budget (a loaded machine may need
    # more than 5 s to start one).
    budget = {} if hang == "never" else {"HARNESS_MCP_START_TIMEOUT": "5"}
    outcome = harness_run(tmp_path, scenarios(tmp_path, 1), "--target", spec, "--timeout", "2", timeout=120,
                          env=budget)
    assert outcome.code == (0 if hang == "never" else 1), outcome.stdout
    if budget:
        assert outcome.seconds < 25  # the budget set here, not the default's 30 s
    assert not gone(mark), "processes left behind"


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_clean_up_like_ctrl_c(tmp_path, signum, code):
    mark = marker()
    folder = scenarios(tmp_path, 1)
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode hang-forked --marker {mark}"
    tmp = tmp_path / "workspaces"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--no-builtin", "--scenarios", str(folder),
                             "--no-snapshots", "--target", spec, "--timeout", "60", "--tmp", str(tmp)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 30
    while len(processes_with(mark)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(mark), "the candidate never started its children"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, out + err
    assert "Traceback" not in out + err
    assert not gone(mark), "processes left behind"
    assert not list(tmp.iterdir()), f"the workspace was left behind; stderr: {err}"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_at_any_moment_leaves_no_workspace_and_no_process(tmp_path, jobs):
    """SIGTERM while the harness starts, lays out a workspace, talks to the candidate or cleans up.

    The same run is interrupted at spread-out moments after its start; whichever phase the signal
    lands in, nothing may be left: no workspace folder, no process of the candidate's. (A workspace
    made just before the signal, and not yet handed to the clean-up, was once left behind.)
    """
    folder = tmp_path / "scenarios"
    for n in range(6):
        write_scenarios(folder, READ.format(n=n), f"s{n}.yaml")
    for n, delay in enumerate((0.05, 0.15, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3)):
        mark = marker()
        spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode fork --marker {mark}"
        tmp = tmp_path / f"workspaces-{n}"
        tmp.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--no-builtin", "--scenarios", str(folder),
                                 "--no-snapshots", "--jobs", jobs, "--target", spec, "--timeout", "60", "--tmp", str(tmp)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        # Before the harness installed its handler the signal ends it outright (-15); after, 143;
        # a run that finished first exits 0.
        assert proc.returncode in (-signal.SIGTERM, 143, 0), out + err
        assert "Traceback" not in out + err
        assert not gone(mark), f"processes left behind (signal after {delay} s)"
        assert not list(tmp.iterdir()), f"a workspace was left behind (signal after {delay} s); stderr: {err}"


SERIAL_HOOKS = ["mkdtemp", "mkdir", "rename", "rmtree", "thread-start", "thread-join", "queue-put"]
POOL_HOOKS = ["process-start", "connection-send", "connection-recv"]


@pytest.mark.parametrize("jobs, hooks, signame", [("1", SERIAL_HOOKS, "SIGTERM"), ("2", POOL_HOOKS, "SIGTERM"),
                                                   ("1", SERIAL_HOOKS, "SIGINT")],
                         ids=["serial", "two-workers", "serial-ctrl-c"])
def test_sigterm_next_to_each_call_of_the_harness_bookkeeping_leaves_nothing(jobs, hooks, signame):
    """SIGTERM just before or just after the n-th call of each hook, for every n a small run makes.

    Deterministic where the test above samples moments (tests/hostile/signal_points.py). Serial: a
    signal raised as an exception right after ``mkdtemp`` returned (before its result was kept),
    after a workspace was renamed into the trash (before it was queued for removal) or inside a
    thread's ``join`` once left folders behind. With two workers, the parent signalled as it forks
    a worker, hands it a task or takes its result: workers signalled inside multiprocessing's own
    start-up, or waiting for a task that never came (the fork had copied the parent's end of their
    pipe), printed tracebacks, hung until killed or left their workspaces. Each run must end as
    signalled, leave its folder empty and print no traceback.
    """
    cases = [f"{hook}:{when}" for hook in hooks for when in ("before", "after")]
    proc = subprocess.run([sys.executable, "-m", "tests.hostile.signal_points", jobs, *cases], cwd=ROOT,
                          capture_output=True, text=True, timeout=280,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "SIGNAL_POINTS_SIGNAL": signame})
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for case in cases:  # each hook reached: the test still signals where it means to
        assert any(row["sent"] for row in rows if row["case"] == case), f"{case}: the hook was never called"
    for row in rows:
        where = f"signal {row['case']} call {row['at']}"
        assert row["error"] is None, f"{where}: {row['error']}"
        assert not row["left"], f"{where} left {row['left']}"
        assert row["raised"] == row["sent"], f"{where}: the run did not end as signalled"


SIGNAL_IN_IMPORT_MACHINERY = """
import signal, sys, time
from harness.util import processes
for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(signum, processes._terminated)
space = {}
exec(compile("import sys\\ndef here():\\n    return sys._getframe()\\n", "<frozen importlib._bootstrap>", "exec"), space)
processes._terminated(signal.SIGTERM, space["here"]())  # as if it landed in a module lock's callback
print("held", processes.pending(), flush=True)
try:
    time.sleep(5)
    print("not raised")
except processes.Terminated as exc:
    print("raised", exc.signum)
print("handlers", sorted({callable(signal.getsignal(s)) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}))
"""


def test_a_signal_landing_where_exceptions_are_dropped_is_raised_a_moment_later():
    # SIGTERM in importlib's module-lock callback (a weak-reference callback): an exception raised
    # there is printed ("Exception ignored ... Traceback") and dropped, and the run went on as if no
    # signal had come. It is held there and raised once the code is past it. Later signals find a
    # handler of ours, not SIG_IGN, which for a signal already on its way printed "Signal 15 ignored
    # due to race condition" as a traceback.
    out = subprocess.run([sys.executable, "-c", SIGNAL_IN_IMPORT_MACHINERY], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split("\n")[:3] == ["held 15", f"raised {int(signal.SIGTERM)}", "handlers [True]"], out.stdout + out.stderr


def _kill_marked(mark: str) -> None:
    for line in processes_with(mark):
        try:
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def test_a_cmd_candidate_that_sigkills_its_keeper_still_leaves_no_process(tmp_path):
    # SIGKILL cannot be caught: the keeper dies without ending the family it guarded, whose members
    # are re-parented to whatever subreaper is above (init, under the pytest plugin). Closing the
    # channel must still end the candidate and every process it started.
    from harness.targets.channel import Channel

    mark = marker()
    channel = Channel([sys.executable, str(CANDIDATES / "hostile_cmd.py"), "--mode", "kill-keeper", "--marker", mark])
    try:
        assert json.loads(channel.exchange(b'{"op": "hello", "protocol": 1}\n', 20))["ok"]
        open_ = {"op": "open", "session": "s", "workspace": str(tmp_path), "profile": "claude-code"}
        assert json.loads(channel.exchange(json.dumps(open_).encode() + b"\n", 20))["ok"]
        call = {"op": "call", "session": "s", "tool": "Read", "args": {"file_path": "a.txt"}}
        assert json.loads(channel.exchange(json.dumps(call).encode() + b"\n", 20))["output"] == "done"
        deadline = time.monotonic() + 10
        while channel.proc.poll() is None and time.monotonic() < deadline:  # the keeper is gone...
            time.sleep(0.02)
        assert channel.proc.returncode == -signal.SIGKILL
        assert len(processes_with(mark)) == 3  # ...and its family is not: the candidate, two sleepers
        channel.close(b'{"op": "bye"}\n', 1.0)
        assert not gone(mark), "processes left behind"
    finally:
        channel.kill()
        _kill_marked(mark)


SIGNAL_IN_A_CALLBACK = """
import os, signal, time, weakref
from harness.util import processes
processes.own_tree()
class Thing:
    pass
def on_collect():  # a weak-reference callback: what it raises Python prints and drops
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):
        pass
thing = Thing()
weakref.finalize(thing, on_collect)
try:
    del thing
    time.sleep(2)
    print("not raised", flush=True)
except processes.Terminated as exc:
    print("raised", exc.signum, flush=True)
"""


#: A loaded machine: starting the thread that sends the held signal again takes longer than that
#: thread's first 10 ms, so the signal comes back while the unraisable hook is still running.
SLOW_THREAD_START = """
import threading, time
_start = threading.Thread.start
def start(self):
    _start(self)
    time.sleep(0.2)
threading.Thread.start = start
"""


@pytest.mark.parametrize("machine", ["idle", "loaded"])
def test_a_signal_raised_where_python_drops_the_exception_is_raised_again(machine):
    # SIGTERM landing in any weak-reference callback or finaliser (not only importlib's): the
    # exception was printed ("Exception ignored ... Traceback") and lost, and every later signal was
    # ignored as one after the first: only SIGKILL ended the run. Loaded: the signal sent again
    # reached the hook itself, was raised there and dropped ("Exception ignored in
    # sys.unraisablehook"), and the script slept on to "not raised".
    script = (SLOW_THREAD_START if machine == "loaded" else "") + SIGNAL_IN_A_CALLBACK
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split("\n")[0] == f"raised {int(signal.SIGTERM)}", out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_an_mcp_server_that_sigkills_its_keeper_still_leaves_no_process(tmp_path):
    # The SDK spawns the keeper and kills its process group at the end; the server's setsid and
    # double-forked children are outside it, and with the keeper killed nothing else ends them.
    from harness.run.runner import Runner
    from harness.scenario.loader import load_text
    from harness.targets import make_target

    mark = marker()
    spec = f"mcp:{sys.executable} {CANDIDATES / 'hostile_mcp.py'} --kill-keeper --marker {mark}"
    folder = scenarios(tmp_path, 1)
    scenario = load_text((folder / "s0.yaml").read_text("utf-8"), folder / "s0.yaml")[0]
    try:
        with Runner(make_target(spec, TargetOptions(timeout=20.0))) as runner:
            runner.run(scenario)
            assert len(processes_with(mark)) >= 2  # the keeper is gone, its family is not
        assert not gone(mark), "processes left behind"
    finally:
        _kill_marked(mark)


@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_under_pytest_orphans_that_clear_their_environment_and_kill_their_keeper_do_not_outlive_the_run(
        tmp_path, pytester):
    """The red team's case: under pytest (not `harness run`, whose final sweep ends them), a candidate
    whose children clear their environment (no keeper's tag to find them by) and that SIGKILLs its
    keeper left those children running after the run. In the default sandbox the candidate cannot
    see its keeper, and every process in the sandbox ends with it."""
    mark = marker()
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    write_scenarios(pytester.path / "scenarios", """
    id: hostile/orphans
    profile: claude-code
    title: a candidate whose children clear their environment and that kills its keeper
    source: test (issue 27, the red team's cases)
    steps:
      - tool: Read
        args: {file_path: "${workspace}/a.txt"}
    """)
    spec = f"cmd:{sys.executable} {CANDIDATES / 'hostile_cmd.py'} --mode kill-keeper-clean --marker {mark}"
    try:
        result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "--target", spec, timeout=120)
        assert result.ret in (0, 1), result.stdout.str()
        assert not gone(mark), "processes outlived the pytest run"
    finally:
        _kill_marked(mark)
