"""What a user pays for a run: each speed goal of docs/performance.md as a ratio, from one run.

``python -m harness.drivers.bench_goals`` (the first part of ``make bench``) measures each goal
once, every side of a ratio in the same run, prints it with the figure it is measured against,
and with ``--write FILE`` puts the table into FILE between the markers below (the goals section
of docs/performance.md is made by it, never typed). The goals, in order:

whole process / replay
    ``harness run`` as a user starts it (a new process, default options: ``--jobs`` default,
    snapshots compared, fault scenarios included, output to a pipe) on the reference, against a
    new process that makes the same scenarios' calls directly on ``reference_impl``, each in a
    fresh folder with its ``given`` laid out (the fault scenarios' calls on the real file system,
    without their fault); that process's loading of the catalog is not counted. The default run,
    the replay and the serial run of the rows below are taken in turn, :data:`WHOLE_ROUNDS` times:
    each figure is the run of median wall time, with the median processor time.
fault scenario / plain scenario
    processor time per scenario, a scenario that requires a fault (realised by the kernel or on
    pyfakefs, harness/targets/faults.py) against one that does not, serially in this process with
    its heap frozen as ``harness run`` freezes it, the medians of :data:`ROUNDS` runs of each;
    beside it the wall time of each from the JSON report of a serial whole-process run, the mean
    of each (skipped ones left out).
start to first scenario
    from the process's start to the first scenario's start (a wrapper notes when ``Runner.run`` is
    first called), in ms and as a share of the whole run, for the default ``harness run``.
--jobs default / serial
    wall time and processor time (the process tree's) of the default ``harness run`` against
    ``--jobs 1``; the default chooses by the run's size and the machine's load
    (``harness.run.division.auto_jobs``), and the row says what it chose.
mcp: / in-process
    the catalog (no fault scenarios) through ``mcp:python -m reference_impl.mcp_server`` against
    the in-process reference, with the server's start and without it, the workspaces where
    ``harness run`` puts them by default (a memory file system where there is one).
pytest item / harness scenario
    ``pytest scenarios -n 0`` against ``harness run --jobs 1``, both new processes comparing the
    snapshots, per scenario; taken in turn, :data:`PYTEST_ROUNDS` times, the medians of each.

Below the goals, from the same run, where the time goes: the serial run's parts (before its first
scenario, inside the scenarios, between them, after the last), and the ``mcp:`` rows' floor, what
the official SDK and the reference server take for the same calls with nothing of the runner
around them (harness/drivers/bench_mcp.py ``sdk_floor``), below which no ``mcp:`` run can go.

The machine's load is printed beside the figures; no goal's failure fails the bench.

With ``--figures`` it then runs the other parts of ``make bench`` (:data:`DRIVERS`), each in a new
process, passing their output through, and with ``--write`` puts that output, as printed, into the
page's figures section (between :data:`FIGURES_BEGIN` and :data:`FIGURES_END`): the whole page's
figures come from one ``make bench``, none typed. A part that fails fails the bench (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BEGIN = "<!-- goals: made by `python -m harness.drivers.bench_goals --write docs/performance.md`; not edited by hand -->"
END = "<!-- end of goals -->"
REFERENCE_MCP = "mcp:python -m reference_impl.mcp_server"
FIGURES_BEGIN = "<!-- figures: the rest of `make bench` as it printed them; not edited by hand -->"
FIGURES_END = "<!-- end of figures -->"
#: The other parts of ``make bench``, run by ``--figures`` after the goals.
DRIVERS = ("harness.drivers.bench", "harness.drivers.bench_mcp", "harness.drivers.bench_speed")


@dataclass(frozen=True)
class Goal:
    name: str  #: the first column of the page's table
    limit: float  #: the ratio must be at most this
    unit: str = "x"


#: The goals of docs/performance.md, in the order the bench measures them.
GOALS = (
    Goal("whole process: harness run / replay", 1.5),
    Goal("fault scenario / plain scenario", 2.0),
    Goal("start to first scenario (ms)", 150.0, "ms"),
    Goal("--jobs default / serial: wall", 1.0),
    Goal("--jobs default / serial: CPU", 1.1),
    Goal("mcp: / in-process, with the start", 3.0),
    Goal("mcp: / in-process, without the start", 1.8),
    Goal("pytest per item / harness run per scenario", 2.0),
)

#: Run in a new interpreter: ``harness`` with a note on stderr when the first scenario begins
#: (in each process that runs one: the workers of ``--jobs`` too), and one as the process exits
#: with the seconds spent inside ``Runner.run``, when the last call of it ended, and how many there
#: were (the process that ran the scenarios: a forked worker ends without its exit handlers).
_PROBE = """\
import sys, time, runpy, atexit
from harness.run import runner as _runner
_run, _seen, _inside = _runner.Runner.run, [], [0.0, 0.0, 0]
def run(self, scenario):
    if not _seen:
        _seen.append(1)
        import os
        cpu = os.times()
        sys.stderr.write("\\nbench-first-scenario %r %r\\n" % (time.time(), cpu.user + cpu.system))
        sys.stderr.flush()
    began = time.perf_counter()
    try:
        return _run(self, scenario)
    finally:
        _inside[0] += time.perf_counter() - began
        _inside[1] = time.time()
        _inside[2] += 1
def _ran():
    if _inside[2]:
        sys.stderr.write("\\nbench-scenarios %r %r %d\\n" % tuple(_inside))
atexit.register(_ran)
_runner.Runner.run = run
from harness.run import workers as _workers
_pool = _workers.run
def pool(*args, jobs=1, **kwargs):
    sys.stderr.write("\\nbench-jobs %d\\n" % jobs)
    return _pool(*args, jobs=jobs, **kwargs)
_workers.run = pool
sys.argv = ["harness", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""

#: Run in a new interpreter: the replay of the calls (see the module's docstring).
_REPLAY = """\
import sys, time
from harness.drivers.bench_goals import replay_main
sys.exit(replay_main())
"""


@dataclass
class Process:
    wall: float  #: seconds from just before the start to the exit
    cpu: float  #: user + system seconds of the process and its children
    started: float  #: time.time() just before the start
    stderr: str
    load: float = 0.0  #: the one-minute load average just before the start


def run_process(argv: list[str], cwd: str | None = None) -> Process:
    """Runs ``argv`` to its end, output to pipes, and returns its wall and processor time."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as err:
        started_at = time.time()
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    if proc.returncode not in (0, 1):  # 1: a scenario failed; anything else measured no run
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{text[-2000:]}")
    return Process(wall, usage.ru_utime + usage.ru_stime, started_at, text, load)


#: Rounds of the default run, the replay and the serial run (taken in turn) whose medians the
#: whole-process, start and ``--jobs`` goals are measured on: a single run moves by about a tenth.
WHOLE_ROUNDS = 5
#: Rounds of ``pytest`` and the serial run (taken in turn) whose medians the pytest goal is measured on.
PYTEST_ROUNDS = 3


def median_process(processes: list[Process]) -> Process:
    """Returns the median of an odd number of runs of one command: the run whose wall time is the
    median (its output and start, which the probe's notes are timed from), with the median of
    their processor times."""
    from statistics import median
    middle = sorted(processes, key=lambda process: process.wall)[len(processes) // 2]
    return Process(middle.wall, median(p.cpu for p in processes), middle.started, middle.stderr, middle.load)


def first_scenario(process: Process) -> tuple[float, float]:
    """Returns the seconds from the process's start to its (or a worker's) first scenario, and the
    processor time the process that ran it had taken by then (a worker's own, from its fork)."""
    noted = [(float(at), float(cpu)) for at, cpu in
             re.findall(r"^bench-first-scenario (\S+) (\S+)$", process.stderr, re.M)]
    if not noted:
        return float("nan"), float("nan")
    at, cpu = min(noted)
    return at - process.started, cpu


def where_time_goes(process: Process) -> tuple[float, float, float, float, int] | None:
    """Returns the seconds of a serial run before its first scenario, inside its scenarios
    (``Runner.run``), between them (what is done with each result as it comes: reports, snapshot
    comparison) and after the last one (the summary, the orphaned snapshots, the exit), and the
    number of results; None unless one process noted running them all."""
    noted = re.findall(r"^bench-scenarios (\S+) (\S+) (\d+)$", process.stderr, re.M)
    first, _ = first_scenario(process)
    if len(noted) != 1 or first != first:
        return None
    inside, last, count = float(noted[0][0]), float(noted[0][1]), int(noted[0][2])
    end = process.started + process.wall
    return first, inside, (last - process.started) - first - inside, end - last, count


def jobs_chosen(process: Process) -> str:
    """Returns the ``--jobs`` a probed ``harness run`` chose, with the load average at its start."""
    chose = re.findall(r"^bench-jobs (\d+)$", process.stderr, re.M)
    return f"--jobs {chose[0] if chose else '?'} at load {process.load:.1f}"


def replay_main() -> int:
    """The replay process: the catalog's calls on ``reference_impl``; prints the catalog's loading time."""
    started = time.perf_counter()
    from harness.drivers.bench_speed import replay
    from harness.run import assemble
    from harness.scenario import catalog
    cat = catalog.load([catalog.builtin_dir()])
    offered = set(assemble.target("reference").start().profiles)
    scenarios = [s for s in cat.scenarios if s.profile in offered and "acp" not in s.requires]
    loading = time.perf_counter() - started
    replay(scenarios, _workspace_parent())
    print(f"bench-loading {loading!r}", file=sys.stderr)
    return 0


def _workspace_parent() -> str | None:
    from harness.run.options import RunOptions
    return RunOptions().workspace_parent()


def fault_and_plain(report: Path) -> tuple[float, float, int, int]:
    """Returns the mean seconds of a fault scenario and of a plain one in a JSON report, and their counts."""
    from harness.scenario import catalog
    requires = {s.id: bool(set(s.requires) - {"acp"}) for s in catalog.load([catalog.builtin_dir()]).scenarios}
    data = json.loads(report.read_text(encoding="utf-8"))
    ran = [r for r in data["results"] if r["verdict"] != "skip"]
    fault = [r["seconds"] for r in ran if requires.get(r["id"])]
    plain = [r["seconds"] for r in ran if not requires.get(r["id"])]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return mean(fault), mean(plain), len(fault), len(plain)


#: Rounds of the fault and the plain scenarios (taken in turn) whose median :func:`fault_and_plain_cpu` gives.
ROUNDS = 5


def fault_and_plain_cpu(rounds: int = ROUNDS) -> tuple[float, float]:
    """Returns the processor time per scenario of the fault scenarios and of the plain ones the
    reference runs, serially in this process, the medians of ``rounds`` runs of each (taken in
    turn, after a first run of both): the fault scenarios take some 30 ms in all, where one run's
    figure moved by a fifth from one to the next. As ``harness run`` runs its scenarios, what is
    alive before them is frozen (harness/util/collector.py), out of the collector's full walks."""
    from statistics import median

    from harness.run import assemble, workers
    from harness.scenario import catalog
    from harness.util import collector
    offered = set(assemble.target("reference").start().profiles)
    chosen = [s for s in catalog.load([catalog.builtin_dir()]).scenarios if s.profile in offered and "acp" not in s.requires]
    fault, plain = [s for s in chosen if s.requires], [s for s in chosen if not s.requires]
    tmp = _workspace_parent()

    def cpu(scenarios: list[Any]) -> float:
        started = time.process_time()
        workers.run([assemble.target("reference")], scenarios, jobs=1, tmp=tmp)
        return (time.process_time() - started) / len(scenarios)
    with collector.frozen():
        cpu(fault), cpu(plain)  # imports, caches and pyfakefs' first set-up, paid once per process
        figures = [(cpu(fault), cpu(plain)) for _ in range(rounds)]
    return median(f for f, _ in figures), median(p for _, p in figures)


def measure(skip: set[str], notes: list[str] | None = None) -> list[tuple[Goal, float, str]]:
    """Measures every goal once; returns each with its ratio and what it was measured against.
    ``notes``, when given, receives where the time goes: a serial run's parts, and the ``mcp:`` rows'
    floor (:func:`harness.drivers.bench_mcp.sdk_floor`)."""
    harness = [sys.executable, "-m", "harness", "run"]
    probe = [sys.executable, "-c", _PROBE, "run"]
    out: list[tuple[Goal, float, str]] = []
    notes = [] if notes is None else notes
    goals = iter(GOALS)
    run_process(harness)  # the catalog cache and the bytecode caches written before anything is timed

    # The default run, the replay and the serial run (its options the default's but --jobs), taken
    # in turn: each the median of WHOLE_ROUNDS.
    rounds = [(run_process(probe), run_process([sys.executable, "-c", _REPLAY]),
               run_process([*probe, "--jobs", "1"])) for _ in range(WHOLE_ROUNDS)]
    default, replayed, serial = (median_process([each[kind] for each in rounds]) for kind in range(3))
    loading = float(re.search(r"bench-loading (\S+)", replayed.stderr).group(1))  # type: ignore[union-attr]
    floor = replayed.wall - loading
    cpu_floor = replayed.cpu - loading * replayed.cpu / replayed.wall  # its loading's share of the CPU, taken as of the wall
    out.append((next(goals), default.wall / floor,
                f"{default.wall * 1000:.0f} ms / {floor * 1000:.0f} ms (replay {replayed.wall * 1000:.0f} ms "
                f"less {loading * 1000:.0f} ms loading its scenarios); processor time {default.cpu * 1000:.0f} ms / "
                f"about {cpu_floor * 1000:.0f} ms = {default.cpu / cpu_floor:.2f}"))

    with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:  # each scenario's wall time
        report = Path(folder) / "serial.json"
        run_process([*probe, "--jobs", "1", "--json", str(report)])
        fault, plain, faults, plains = fault_and_plain(report)
    parts = where_time_goes(serial)
    if parts is not None:
        before, inside, between, after, results = parts
        notes.append(f"Where the serial run's {serial.wall * 1000:.0f} ms go: {before * 1000:.0f} ms to its first "
                     f"scenario, {inside * 1000:.0f} ms inside the scenarios (`Runner.run`, {results} results, the "
                     f"skipped ones included), {between * 1000:.0f} ms between them (what is done with each result as "
                     f"it comes: the reports, the snapshot comparison) and {after * 1000:.0f} ms after the last (the "
                     f"summary, the orphaned snapshots, the exit). The scenarios alone take {inside / floor:.2f} times "
                     f"the replay's {floor * 1000:.0f} ms.")
    fault_cpu, plain_cpu = fault_and_plain_cpu()
    out.append((next(goals), fault_cpu / plain_cpu,
                f"{fault_cpu * 1000:.2f} ms / {plain_cpu * 1000:.2f} ms of processor time per scenario (serial, in "
                f"this process, medians of {ROUNDS} runs); wall in a whole serial run {fault * 1000:.2f} ms / {plain * 1000:.2f} ms = "
                f"{fault / plain:.2f}, the means of {faults} and {plains} scenarios, faults "
                f"{faults * fault / (faults * fault + plains * plain):.0%} of the scenarios' time"))

    first, _ = first_scenario(default)
    first_serial, cpu_serial = first_scenario(serial)
    out.append((next(goals), first * 1000,
                f"{first * 1000:.0f} ms of a {default.wall * 1000:.0f} ms run ({first / default.wall:.0%}); "
                f"serial: {first_serial * 1000:.0f} ms of {serial.wall * 1000:.0f} ms ({first_serial / serial.wall:.0%}), "
                f"{cpu_serial * 1000:.0f} ms of {serial.cpu * 1000:.0f} ms processor time ({cpu_serial / serial.cpu:.0%})"))

    out.append((next(goals), default.wall / serial.wall,
                f"{default.wall * 1000:.0f} ms / {serial.wall * 1000:.0f} ms (the default, which chose "
                f"{jobs_chosen(default)}, / --jobs 1)"))
    out.append((next(goals), default.cpu / serial.cpu,
                f"{default.cpu * 1000:.0f} ms / {serial.cpu * 1000:.0f} ms of processor time"))

    with_start, without = next(goals), next(goals)
    if "mcp" in skip:
        out += [(with_start, float("nan"), "not measured (--skip mcp)"), (without, float("nan"), "not measured")]
    else:
        from harness.drivers.bench import time_catalog
        from harness.run import assemble
        from harness.scenario import catalog
        offered = set(assemble.target("reference").start().profiles)
        scenarios = [s for s in catalog.load([catalog.builtin_dir()]).scenarios
                     if not s.requires and s.profile in offered]
        tmp = _workspace_parent()  # where `harness run` puts the workspaces (the system's temporary folder was a disk here)
        local_start, local, _ = time_catalog(assemble.target("reference"), scenarios, tmp)
        remote_start, remote, _ = time_catalog(assemble.target(REFERENCE_MCP), scenarios, tmp)
        out.append((with_start, (remote_start + remote) / (local_start + local),
                    f"{(remote_start + remote) * 1000:.0f} ms / {(local_start + local) * 1000:.0f} ms "
                    f"({len(scenarios)} scenarios; the server's start {remote_start * 1000:.0f} ms)"))
        out.append((without, remote / local, f"{remote * 1000:.0f} ms / {local * 1000:.0f} ms"))
        from harness.drivers.bench_mcp import sdk_floor
        floor_start, floor_calls, unsent = sdk_floor(scenarios, tmp)
        left = f"; {unsent} calls not sent, their arguments not UTF-8" if unsent else ""
        notes.append(f"The `mcp:` rows' floor: the official SDK and the reference server alone, the harness's MCP "
                     f"connection making the same scenarios' calls with no runner around them (each scenario in a "
                     f"fresh folder as the replay lays it out; no sandbox, nothing checked, read back or "
                     f"recorded{left}), take {floor_calls * 1000:.0f} ms, {floor_calls / local:.2f} times the "
                     f"in-process run, and {(floor_start + floor_calls) * 1000:.0f} ms with the server's start "
                     f"({floor_start * 1000:.0f} ms), {(floor_start + floor_calls) / (local_start + local):.2f} times. "
                     f"No `mcp:` run of these scenarios takes less while the SDK stays.")

    goal = next(goals)
    if "pytest" in skip:
        out.append((goal, float("nan"), "not measured (--skip pytest)"))
    else:
        # pytest and the serial run taken in turn, PYTEST_ROUNDS times: the medians of each.
        pairs = [(run_process([sys.executable, "-m", "pytest", "scenarios", "-q", "-n", "0", "-p", "no:cacheprovider"]),
                  run_process([*probe, "--jobs", "1"])) for _ in range(PYTEST_ROUNDS)]
        pytest, beside = median_process([each[0] for each in pairs]), median_process([each[1] for each in pairs])
        from harness.scenario import catalog
        count = len(catalog.load([catalog.builtin_dir()]).scenarios)
        out.append((goal, pytest.wall / beside.wall,
                    f"{pytest.wall / count * 1000:.2f} ms / {beside.wall / count * 1000:.2f} ms per scenario "
                    f"({count}; {pytest.wall * 1000:.0f} ms / {beside.wall * 1000:.0f} ms, new processes, "
                    f"medians of {PYTEST_ROUNDS} taken in turn)"))
    return out


def render(figures: list[tuple[Goal, float, str]], heading: str, notes: list[str] | tuple[str, ...] = ()) -> str:
    """Returns the page's goals section: the markers, a line on the run, one table row per goal,
    and ``notes`` (where the time goes) below the table."""
    rows = [BEGIN, "", heading, "", "| goal | ratio | measured against | at most | met? |", "|---|---|---|---|---|"]
    for goal, value, against in figures:
        shown = "—" if value != value else (f"{value:.0f} ms" if goal.unit == "ms" else f"{value:.2f}")
        limit = f"{goal.limit:.0f} ms" if goal.unit == "ms" else f"{goal.limit:g}"
        met = "—" if value != value else ("yes" if value <= goal.limit else "no")
        rows.append(f"| {goal.name} | **{shown}** | {against} | {limit} | {met} |")
    if notes:
        rows += ["", "Where the time goes, from the same run:", ""] + [f"- {note}" for note in notes]
    return "\n".join([*rows, "", END])


def page_goals(text: str) -> list[str]:
    """Returns the goal names of the generated section of a page (its table's first column)."""
    start, end = text.index(BEGIN), text.index(END)
    section = text[start:end].splitlines()
    return [line.split("|")[1].strip() for line in section
            if line.startswith("| ") and not line.startswith("| goal |")]


def write(page: Path, section: str) -> None:
    """Puts ``section`` in place of the page's generated goals section (after its first paragraph if none)."""
    text = page.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        head, _, rest = text.partition("\n## ")
        text = f"{head.rstrip()}\n\n## Goals\n\n{section}\n\n## {rest}"
    page.write_text(text, encoding="utf-8")


def run_drivers(drivers: tuple[str, ...] = DRIVERS) -> tuple[list[tuple[str, str]], bool]:
    """Runs each of ``drivers`` (modules) in a new process, its output passed through as it comes;
    returns each one's command and output, and whether all of them succeeded."""
    outputs, ok = [], True
    for module in drivers:
        command = f"python -m {module}"
        print(f"$ {command}", flush=True)
        with subprocess.Popen([sys.executable, "-m", module], stdout=subprocess.PIPE, text=True) as process:
            assert process.stdout is not None
            lines = []
            for line in process.stdout:
                print(line, end="", flush=True)
                lines.append(line)
        if process.returncode != 0:
            ok = False
            lines.append(f"(exited with status {process.returncode})\n")
        outputs.append((command, "".join(lines)))
    return outputs, ok


def render_figures(outputs: list[tuple[str, str]], heading: str) -> str:
    """Returns the page's figures section: the markers, a line on the run, each part's output as
    printed (in a fence longer than any run of backticks it holds)."""
    rows = [FIGURES_BEGIN, "", heading]
    for command, text in outputs:
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
        rows += ["", f"`{command}`:", "", f"{fence}text", text.rstrip("\n"), fence]
    return "\n".join([*rows, "", FIGURES_END])


def write_figures(page: Path, section: str) -> None:
    """Puts ``section`` in place of the page's generated figures section (if none: before its
    ``## Reproducing`` section, else at its end)."""
    text = page.read_text(encoding="utf-8")
    if FIGURES_BEGIN in text and FIGURES_END in text:
        text = text[:text.index(FIGURES_BEGIN)] + section + text[text.index(FIGURES_END) + len(FIGURES_END):]
    elif "\n## Reproducing" in text:
        head, _, rest = text.partition("\n## Reproducing")
        text = f"{head.rstrip()}\n\n## Figures\n\n{section}\n\n## Reproducing{rest}"
    else:
        text = f"{text.rstrip()}\n\n## Figures\n\n{section}\n"
    page.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.bench_goals", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, metavar="FILE", help="put the goals table into FILE (docs/performance.md)")
    parser.add_argument("--skip", action="append", default=[], choices=["mcp", "pytest"], help="leave a goal unmeasured")
    parser.add_argument("--figures", action="store_true",
                        help="then run the other parts of make bench, and with --write put their output into FILE too")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    print(f"goals: {os.cpu_count()} cores, load average {load:.1f} at the start")
    notes: list[str] = []
    figures = measure(set(args.skip), notes)
    for goal, value, against in figures:
        limit = f"{goal.limit:g}{' ms' if goal.unit == 'ms' else ''}"
        shown = f"{value:8.0f} ms" if goal.unit == "ms" else f"{value:8.2f}   "
        print(f"  {goal.name:<44} {shown} (at most {limit}): {against}")
    for note in notes:
        print(f"  {note}")
    end_load = os.getloadavg()[0]
    print(f"  load average at the end: {end_load:.1f}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if args.write:
        heading = (f"From one run of `make bench` on commit {commit or 'unknown'}, "
                   f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load average "
                   f"{load:.1f} at the start and {end_load:.1f} at the end. Each ratio's two sides were measured "
                   f"in this run; absolute times on a shared machine mean little.")
        write(args.write, render(figures, heading, notes))
    if not args.figures:
        return 0
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    outputs, ok = run_drivers()
    if args.write:
        heading = (f"The rest of the same `make bench` (commit {commit or 'unknown'}, from {started}), each part "
                   "as it printed its figures, the machine's load beside them.")
        write_figures(args.write, render_figures(outputs, heading))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
