"""What the cmd: protocol costs: the whole catalog in-process and through ``cmd:``, side by side.

``python -m harness.drivers.bench`` (``make bench``) runs the same scenarios on the in-process reference
and on ``cmd:python -m reference_impl.serve`` (one persistent process), ``--repeat`` times each,
and prints the best time of each, their ratio, the same over each scenario's fastest run (which
a busy machine disturbs less), two per-call figures, and what the default sandbox costs (the same
``cmd:`` target sandboxed, per run and per scenario, as ratios to it unsandboxed; and the sandbox's
own start against a plain start of ``true``):

harness overhead per call
    CPU time the harness's own thread spends inside ``CmdSession.call`` (encoding the request,
    the system calls that write and read it, decoding and validating the response), measured with
    :func:`time.thread_time` around every call. Waiting for the candidate is not CPU time, so the
    candidate's own work is left out.
end-to-end protocol cost per call
    (cmd: time - in-process time) / calls: everything the protocol adds, the adapter's decoding
    and encoding and the two context switches included.

Scenarios that require conditions (permissions, read-only file system, disk full) are left out:
in-process they run on pyfakefs and through ``cmd:`` they are skipped, so they would not compare.
This prints figures; it never fails on a slow machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from harness.run import assemble
from harness.run.options import RunOptions
from harness.scenario import catalog
from harness.scenario.model import Scenario, Verdict
from harness.targets.base import CallResult, Target
from harness.targets.cmd.target import CmdSession

REFERENCE_CMD = "cmd:python -m reference_impl.serve"


class _CallMeter:
    """Sums the harness thread's CPU time inside CmdSession.call while installed."""

    def __init__(self) -> None:
        self.calls = 0
        self.cpu = 0.0
        self._original = CmdSession.call

    def __enter__(self) -> _CallMeter:
        original, meter = self._original, self

        def call(self: CmdSession, tool: str, args: dict[str, Any]) -> CallResult:
            before = time.thread_time()
            try:
                return original(self, tool, args)
            finally:
                meter.cpu += time.thread_time() - before
                meter.calls += 1

        CmdSession.call = call  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        CmdSession.call = self._original  # type: ignore[method-assign]


def time_catalog(target: Target, scenarios: list[Scenario], tmp: str | None = None) -> tuple[float, float, dict[str, int]]:
    """Returns (start-up seconds, seconds for all scenarios, verdict counts) of one run, its
    workspaces in ``tmp`` (None: the system's temporary folder)."""
    return time_scenarios(target, scenarios, tmp)[:3]


def time_scenarios(target: Target, scenarios: list[Scenario],
                   tmp: str | None = None) -> tuple[float, float, dict[str, int], dict[str, float]]:
    """Returns what :func:`time_catalog` does, and the seconds of each scenario by id."""
    started = time.perf_counter()
    runner = assemble.runner(target, record_states=False, tmp=tmp)
    runner.start()
    ready = time.perf_counter()
    try:
        results = runner.run_all(scenarios)
    finally:
        done = time.perf_counter()
        runner.stop()
    counts: dict[str, int] = {}
    for result in results:
        counts[result.verdict.value] = counts.get(result.verdict.value, 0) + 1
    return ready - started, done - ready, counts, {r.id: r.seconds for r in results}


def _keep_fastest(fastest: dict[str, float], seconds: dict[str, float]) -> None:
    for key, value in seconds.items():
        fastest[key] = min(fastest.get(key, value), value)


def count_calls(scenarios: list[Scenario]) -> int:
    """Returns how many tool calls the scenarios make."""
    return sum(len(s.calls) for s in scenarios)


def main(argv: list[str] | None = None) -> int:
    """Prints the figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each target; the best counts (default 5)")
    parser.add_argument("--target", default=REFERENCE_CMD, help=f"the cmd: target to compare (default {REFERENCE_CMD})")
    parser.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR",
                        help="scenario directories (default: the built-in catalog)")
    parser.add_argument("--sandbox-repeat", type=int, default=1,
                        help="runs of the cmd: target in the default sandbox; the best counts (default 1; 0 leaves it out)")
    args = parser.parse_args(argv)

    cat = catalog.load(args.scenarios or [catalog.builtin_dir()])
    scenarios = [s for s in cat.scenarios if not s.requires]
    calls = count_calls(scenarios)

    inproc_best = cmd_best = float("inf")
    cmd_start = float("inf")
    overhead = float("inf")
    verdicts: dict[str, dict[str, int]] = {}
    fastest: dict[str, dict[str, float]] = {"in-process": {}, "cmd:": {}}
    for _ in range(max(1, args.repeat)):
        _, seconds, verdicts["in-process"], each = time_scenarios(assemble.target("reference"), scenarios)
        inproc_best = min(inproc_best, seconds)
        _keep_fastest(fastest["in-process"], each)
        with _CallMeter() as meter:
            # Unsandboxed: the protocol's own cost; the default sandbox's is measured below.
            startup, seconds, verdicts["cmd:"], each = time_scenarios(
                assemble.target(args.target, RunOptions(sandbox=False)), scenarios)
        cmd_best = min(cmd_best, seconds)
        cmd_start = min(cmd_start, startup)
        _keep_fastest(fastest["cmd:"], each)
        if meter.calls:
            overhead = min(overhead, meter.cpu / meter.calls)

    ratio = cmd_best / inproc_best if inproc_best else float("nan")
    per_call = (cmd_best - inproc_best) / calls if calls else float("nan")
    # The same sums over each scenario's fastest run: a burst of load on the machine hits a few
    # scenarios of one run, not the same scenario in every run.
    inproc_sum, cmd_sum = sum(fastest["in-process"].values()), sum(fastest["cmd:"].values())
    print(f"catalog: {len(scenarios)} scenarios, {calls} tool calls "
          f"({len(cat.scenarios) - len(scenarios)} requiring conditions left out); best of {args.repeat}")
    print(f"  in-process          {inproc_best * 1000:9.1f} ms   {_counts(verdicts['in-process'])}")
    print(f"  cmd:                {cmd_best * 1000:9.1f} ms   {_counts(verdicts['cmd:'])}"
          f"   (+ {cmd_start * 1000:.1f} ms to start the process once)")
    print(f"  ratio cmd:/in-process          {ratio:6.2f}x   (goal: at most 1.5x)")
    print(f"  per-scenario best, summed: in-process {inproc_sum * 1000:.1f} ms, cmd: {cmd_sum * 1000:.1f} ms, "
          f"ratio {cmd_sum / inproc_sum if inproc_sum else float('nan'):.2f}x, "
          f"{(cmd_sum - inproc_sum) / calls * 1e6 if calls else float('nan'):.1f} us per call")
    print(f"  harness overhead per call   {overhead * 1e6:8.1f} us   (goal: under 300 us; CPU of the harness thread in CmdSession.call)")
    print(f"  end-to-end cost per call    {per_call * 1e6:8.1f} us   ((cmd: - in-process) / calls, adapter side included)")
    if verdicts["in-process"] != verdicts["cmd:"]:
        print("  note: the verdicts differ between the two runs")
    if args.sandbox_repeat > 0:
        _bench_sandbox(args, scenarios, cmd_best, cmd_start, fastest["cmd:"], verdicts["cmd:"])
    return 0


def _bench_sandbox(args: argparse.Namespace, scenarios: list[Scenario], cmd_best: float, cmd_start: float,
                   cmd_each: dict[str, float], cmd_verdicts: dict[str, int]) -> None:
    """Prints what the default sandbox (harness/containment/sandbox.py) costs the cmd: target: per run
    and per scenario, as ratios to the same target unsandboxed (one sandbox per run: the candidate is
    started to learn what it offers, then once on the run's workspace folder, harness/targets/launch.py)."""
    from harness.containment import sandbox
    ok, why = sandbox.available()
    if not ok:
        print(f"  sandbox: not measured ({why})")
        return
    best, start = float("inf"), float("inf")
    each: dict[str, float] = {}
    counts: dict[str, int] = {}
    for _ in range(args.sandbox_repeat):
        startup, seconds, counts, one = time_scenarios(assemble.target(args.target, RunOptions()), scenarios)
        best, start = min(best, seconds), min(start, startup)
        _keep_fastest(each, one)
    unsandboxed_run, sandboxed_run = cmd_start + cmd_best, start + best
    per_scenario = sorted(each[key] / cmd_each[key] for key in each if cmd_each.get(key))
    median = per_scenario[len(per_scenario) // 2] if per_scenario else float("nan")
    extra = (sum(each.values()) - sum(cmd_each.get(key, 0.0) for key in each)) / len(each) if each else float("nan")
    print(f"  cmd: in the sandbox {best * 1000:9.1f} ms   {_counts(counts)}   (+ {start * 1000:.1f} ms to start; "
          f"best of {args.sandbox_repeat})")
    print(f"  ratio sandboxed/unsandboxed, per run       {sandboxed_run / unsandboxed_run if unsandboxed_run else float('nan'):6.2f}x")
    print(f"  ratio sandboxed/unsandboxed, per scenario  {median:6.2f}x   (median; {extra * 1000:.1f} ms more per scenario, "
          "the workspace folder emptied in place)")
    if counts != cmd_verdicts:
        print("  note: the verdicts differ between the sandboxed and the unsandboxed run")
    plain, boxed = _start_cost(sandbox)
    print(f"  the sandbox alone: {boxed * 1000:.1f} ms to start `true` in it against {plain * 1000:.1f} ms without "
          f"({boxed / plain if plain else float('nan'):.1f}x), paid once per run (per worker)")


def _start_cost(sandbox: Any, times: int = 20) -> tuple[float, float]:
    """Returns the best seconds to run ``true`` plainly and in a sandbox."""
    import shutil
    import subprocess
    import tempfile
    true = shutil.which("true") or "/bin/true"
    best = [float("inf"), float("inf")]
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:
        for _ in range(times):
            for index, argv in enumerate(([true], sandbox.Sandbox(writable=[folder]).wrap([true]))):
                started = time.perf_counter()
                subprocess.run(argv, check=True)
                best[index] = min(best[index], time.perf_counter() - started)
    return best[0], best[1]


def _counts(counts: dict[str, int]) -> str:
    order = [v.value for v in Verdict]
    return ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v))


if __name__ == "__main__":
    raise SystemExit(main())
