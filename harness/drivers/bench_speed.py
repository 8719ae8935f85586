"""What a run costs beside the calls it makes: the ratios ``docs/performance.md`` reports.

``python -m harness.drivers.bench_speed`` (part of ``make bench``) measures, in one run, each
figure as a ratio of two timings taken back to back (best of ``--repeat``), so a machine busy
with other work shifts both sides alike:

harness / replay floor
    the catalog on the in-process reference through the runner (as ``harness run --jobs 1``
    does it), against the *replay floor*: the same calls made directly on ``reference_impl``,
    each scenario in a fresh temporary folder with its ``given`` laid out and removed afterwards,
    nothing checked or recorded. Once without the per-step workspace record (``--no-snapshots``
    and no report), once with it.
--jobs 2 / --jobs 1
    the same catalog in two worker processes, against one.
mcp: / in-process
    the catalog through ``mcp:python -m reference_impl.mcp_server`` (one server), against the
    in-process reference.
filesystem server, roots / a server per scenario
    the official filesystem server (when ``make capture-mcp-filesystem`` installed it) on the first
    ``--fs-scenarios`` scenarios of its catalog, started once and given each workspace as a root,
    against started afresh for each scenario (as before roots).
ten targets in one invocation / ten invocations
    ``harness run`` of one profile on ten ``cmd:`` targets at once, against ten ``harness run``
    processes one after the other.
pytest -n 2 / harness run --jobs 2
    the catalog through the pytest plugin on two xdist workers, against ``harness run --jobs 2``
    (both compare the snapshots; new processes, as a user starts them); beside it, ``pytest -n 2``
    on as many test functions doing nothing (in a temporary folder, hypothesis' plugin left out)
    against the same ``harness run``: what pytest-xdist costs before any plugin does any work.
process start
    ``harness list`` as a new process (interpreter start, imports, loading the catalog).

The processes the bench starts get ``PYTHONDONTWRITEBYTECODE`` removed from their environment
(after a first run that writes the bytecode caches), so they start as on a machine that keeps
them; the bench says when the variable was set.
scale
    the catalog copied ``--scale`` times (each copy's ids made unique) on the in-process
    reference with the workspace after each step recorded (as for snapshots and reports): seconds
    per scenario at each size and their ratio to the 1x figure; and at each ``--memory-scale``
    size the memory of a run that writes its JSON and JUnit reports as ``harness run`` does (each
    result handed to the reports as it is produced, none kept): the traced peak per scenario, and
    what is still allocated after it. Held results would make the peak grow with the catalog.

Scenarios that require conditions (pyfakefs) are left out everywhere, as in harness/drivers/bench.py.
It prints the machine's load beside the figures, and never fails on a slow machine.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.run import assemble, workers
from harness.scenario import catalog
from harness.scenario.content_spec import to_bytes
from harness.scenario.model import Action, Scenario
from harness.scenario.placeholders import substitute

REFERENCE_MCP = "mcp:python -m reference_impl.mcp_server"
FILESYSTEM = Path("tools/mcp-filesystem/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
CAMPAIGN_PROFILE = "mcp-write-text-file"


def replay(scenarios: list[Scenario], parent: str | None = None,
           open_session: Callable[[Scenario, str], Any] | None = None) -> float:
    """Returns the seconds of the replay floor: the scenarios' calls made directly on ``reference_impl``.

    ``open_session(scenario, root)``, when given, opens the session the calls go to instead (its
    ``call(tool, args)`` returns the answer's normal form, as ``reference_impl``'s sessions do)."""
    if open_session is None:
        import reference_impl

        def open_session(scenario: Scenario, root: str) -> Any:
            return reference_impl.open_session(scenario.profile, root, dict(scenario.options))
    started = time.perf_counter()
    for scenario in scenarios:
        base = tempfile.mkdtemp(prefix="bench-", dir=parent)
        root = os.path.join(base, "ws")
        os.mkdir(root)
        given = scenario.given
        for entry in given.get("dirs", ()):
            os.makedirs(os.path.join(root, entry if isinstance(entry, str) else entry["path"]), exist_ok=True)
        for rel, spec in given.get("files", {}).items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            content = spec["content"] if isinstance(spec, dict) and "content" in spec else spec
            with open(path, "wb") as handle:
                handle.write(to_bytes(content))
        for rel, target in given.get("symlinks", {}).items():
            os.symlink(substitute(target, {"workspace": root}), os.path.join(root, rel))
        session = open_session(scenario, root)
        outputs: list[Any] = []
        for step in scenario.steps:
            if isinstance(step, Action):
                _act(root, step)
                outputs.append(None)
                continue
            lookup = _lookup(outputs)
            answer = session.call(step.tool, substitute(step.args, {"workspace": root}, steps=lookup, in_args=True))
            outputs.append(answer)
        shutil.rmtree(base, ignore_errors=True)
    return time.perf_counter() - started


def _lookup(outputs: list[Any]) -> Callable[[int, str], Any]:
    def lookup(number: int, field: str) -> Any:
        return (outputs[number - 1] or {}).get(field)
    return lookup


def _act(root: str, step: Action) -> None:
    path = os.path.join(root, step.path)
    if step.action in ("write", "append"):
        with open(path, "ab" if step.action == "append" else "wb") as handle:
            handle.write(to_bytes(step.content))
    elif step.action == "touch":
        Path(path).touch()
    elif step.action == "chmod":
        os.chmod(path, int(step.mode or "644", 8))
    elif step.action == "delete":
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
    elif step.action == "mkdir":
        os.makedirs(path, exist_ok=True)
    elif step.action == "symlink":
        os.symlink(substitute(step.target or "", {"workspace": root}), path)


def timed(run: Callable[[], Any]) -> float:
    """Returns the seconds ``run()`` took."""
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def catalog_run(target_factory: Callable[[], Any], scenarios: list[Scenario], *, jobs: int = 1,
                record_states: bool = False, tmp: str | None = None) -> Callable[[], Any]:
    """Returns a function that runs the scenarios on a fresh target (start-up included)."""
    return lambda: workers.run([target_factory()], scenarios, jobs=jobs, record_states=record_states, tmp=tmp)


def best(repeat: int, *runs: Callable[[], Any]) -> list[float]:
    """Returns the best seconds of each run, taking them in turn ``repeat`` times (so load hits all alike)."""
    out = [float("inf")] * len(runs)
    for _ in range(repeat):
        for index, run in enumerate(runs):
            out[index] = min(out[index], timed(run))
    return out


def harness_command(*args: str) -> list[str]:
    """Returns the argv of ``harness`` with this interpreter."""
    return [sys.executable, "-m", "harness", *args]


def main(argv: list[str] | None = None) -> int:
    """Prints the figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.bench_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side; the best counts (default 3)")
    parser.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR",
                        help="scenario directories (default: the built-in catalog)")
    parser.add_argument("--fs-scenarios", type=int, default=8,
                        help="filesystem-server scenarios timed both ways (default 8; a server per scenario is slow)")
    parser.add_argument("--scale", default="1,10,30", help="catalog copies for the scale figures (default 1,10,30)")
    parser.add_argument("--memory-scale", default="1,10,30",
                        help="catalog copies for the memory figures (default 1,10,30; tracing allocations is slow)")
    parser.add_argument("--skip", action="append", default=[],
                        choices=["mcp", "filesystem", "campaign", "pytest", "start", "scale", "warm-up"],
                        help="leave a figure out (repeatable); warm-up: the pytest figures' first, untimed runs")
    args = parser.parse_args(argv)
    repeat = max(1, args.repeat)
    from harness.run.options import RunOptions
    tmp = RunOptions().workspace_parent()

    cat = catalog.load(args.scenarios or [catalog.builtin_dir()])
    offered = set(assemble.target("reference").start().profiles)
    scenarios = [s for s in cat.scenarios if not s.requires and s.profile in offered]
    calls = sum(len(s.calls) for s in scenarios)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"speed: {len(scenarios)} scenarios, {calls} calls; best of {repeat}; "
          f"{os.cpu_count()} cores, load average {load:.1f} at the start; workspaces in {tmp or tempfile.gettempdir()}")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("  (PYTHONDONTWRITEBYTECODE is set here: removed for the processes the bench starts)")

    def ratio(label: str, a: float, b: float, goal: str) -> None:
        print(f"  {label:<44} {a * 1000:9.1f} ms / {b * 1000:9.1f} ms = {a / b if b else float('nan'):5.2f}   ({goal})")

    floor, bare, recorded = best(repeat, lambda: replay(scenarios, tmp),
                                 catalog_run(lambda: assemble.target("reference"), scenarios, tmp=tmp),
                                 catalog_run(lambda: assemble.target("reference"), scenarios, record_states=True, tmp=tmp))
    ratio("in-process / replay floor", bare, floor, "goal: at most 2")
    ratio("  with the workspace after each step", recorded, floor, "snapshots, JSON report")

    serial, parallel = best(repeat, catalog_run(lambda: assemble.target("reference"), scenarios, jobs=1, tmp=tmp),
                            catalog_run(lambda: assemble.target("reference"), scenarios, jobs=2, tmp=tmp))
    ratio("--jobs 2 / --jobs 1", parallel, serial, "goal: at most 0.65")

    if "mcp" not in args.skip:
        local, remote = best(repeat, catalog_run(lambda: assemble.target("reference"), scenarios, tmp=tmp),
                             catalog_run(lambda: assemble.target(REFERENCE_MCP), scenarios, tmp=tmp))
        ratio("mcp: (reference server) / in-process", remote, local, "goal: at most 1.5")

    if "filesystem" not in args.skip and FILESYSTEM.is_file() and shutil.which("node"):
        _filesystem(cat, args.fs_scenarios, tmp, ratio)

    if "campaign" not in args.skip:
        _campaign(repeat, ratio)

    if "pytest" not in args.skip:
        _pytest(repeat, ratio, args.scenarios, warm_up="warm-up" not in args.skip)

    if "start" not in args.skip:
        subprocess.run(harness_command("list"), check=True, stdout=subprocess.DEVNULL, env=_env())  # caches
        (start,) = best(max(repeat, 5), lambda: subprocess.run(harness_command("list"), check=True,
                                                                stdout=subprocess.DEVNULL, env=_env()))
        print(f"  {'process start (harness list)':<44} {start * 1000:9.1f} ms   (goal: under 300 ms)")
    if "scale" not in args.skip:
        _scale(scenarios, [int(n) for n in args.scale.split(",") if n.strip()],
               [int(n) for n in args.memory_scale.split(",") if n.strip()], tmp)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average at the end: {load:.1f}")
    return 0


def _env() -> dict[str, str]:
    """Returns the environment of the processes the bench starts: bytecode caches kept, as usual."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _pytest(repeat: int, ratio: Callable[..., None], dirs: list[Path], warm_up: bool = True) -> None:
    pytest = [sys.executable, "-m", "pytest", "scenarios", "-q", "-n", "2", "-p", "no:cacheprovider"]
    harness = harness_command("run", "-q", "--jobs", "2")
    if dirs:  # --scenarios: those folders on both sides instead of the built-in catalog
        chosen = [str(d.resolve()) for d in dirs]
        pytest = [*pytest[:3], *chosen, *pytest[4:], "-o", f"harness_scenarios={shlex.join(chosen)}"]
        harness = [*harness, "--no-builtin", *(arg for d in chosen for arg in ("--scenarios", d))]

    def run(argv: list[str]) -> Callable[[], Any]:
        def once() -> None:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env())
            if done.returncode not in (0, 1):  # 1: a scenario failed; anything else timed no run at all
                tail = done.stdout.decode("utf-8", "replace")[-2000:]
                raise RuntimeError(f"{shlex.join(argv)} exited {done.returncode}:\n{tail}")
        return once
    if warm_up:
        run(pytest)()  # the first run writes the bytecode caches (pytest's rewritten modules too)
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:
        # What pytest-xdist costs before any work: as many tests doing nothing, in a folder of their
        # own (no project configuration; hypothesis' plugin left out, as the project's conftest.py
        # leaves out its summary), so a lower bound for any plugin's items.
        count = len(catalog.load([Path(d) for d in chosen] if dirs else [catalog.builtin_dir()]).scenarios)
        empty = Path(folder) / "test_empty.py"
        empty.write_text(f"import pytest\n\n\n@pytest.mark.parametrize('n', range({count}))\n"
                         "def test_nothing(n):\n    pass\n", encoding="utf-8")
        floor = [sys.executable, "-m", "pytest", str(empty), "-q", "-n", "2", "-p", "no:cacheprovider",
                 "-p", "no:hypothesispytest", "-p", "no:anyio", "--rootdir", folder]
        if warm_up:
            run(floor)()
        slow, fast, nothing = best(repeat, run(pytest), run(harness), run(floor))
    ratio("pytest -n 2 / harness run --jobs 2", slow, fast, "goal: at most 1.5")
    ratio(f"  pytest -n 2 on {count} empty tests / harness run", nothing, fast, "pytest-xdist's own cost")


def _filesystem(cat: Any, count: int, tmp: str | None, ratio: Callable[..., None]) -> None:
    from harness.run.options import RunOptions
    spec = f"mcp:node {FILESYSTEM} {{workspace}}"
    chosen = [s for s in cat.scenarios if s.profile == "mcp-write-text-file" and not s.requires][:max(1, count)]

    def make(roots: bool) -> Any:
        target = assemble.target(spec, RunOptions(tool_map=("write_text_file=write_file",),
                                                  tmp=Path(tmp) if tmp else None))
        if not roots:
            target.start = _without_roots(target)  # type: ignore[method-assign]
        return target

    with_roots = timed(catalog_run(lambda: make(True), chosen, tmp=tmp))
    per_scenario = timed(catalog_run(lambda: make(False), chosen, tmp=tmp))
    ratio(f"filesystem server: per scenario / roots ({len(chosen)})", per_scenario, with_roots, "goal: at least 5")


def _without_roots(target: Any) -> Callable[[], Any]:
    """Returns ``target.start`` made to ignore roots: a server per scenario, as before roots."""
    original = target.start

    def start() -> Any:
        info = original()
        if target.uses_roots:
            target._retire()
        target.uses_roots, target.per_scenario = False, True
        return info
    return start


def _campaign(repeat: int, ratio: Callable[..., None]) -> None:
    # Ten specs for one adapter, as a campaign over ten variants would name them.
    specs = [f"cmd:env VARIANT={n} {sys.executable} -m reference_impl.serve" for n in range(10)]
    common = ["run", "-q", "--no-snapshots", "--profile", CAMPAIGN_PROFILE]
    together = [*common, *(arg for spec in specs for arg in ("--target", spec))]

    def one() -> None:
        subprocess.run(harness_command(*together), stdout=subprocess.DEVNULL)

    def separate() -> None:
        for spec in specs:
            subprocess.run(harness_command(*common, "--target", spec), stdout=subprocess.DEVNULL)

    joint, apart = best(repeat, one, separate)
    ratio(f"ten targets: one invocation / ten ({CAMPAIGN_PROFILE})", joint, apart, "goal: at most 0.5")


def copies(scenarios: list[Scenario], factor: int) -> list[Scenario]:
    """Returns the scenarios ``factor`` times, each copy's ids made unique (``<id>~<copy>``)."""
    import dataclasses
    return [dataclasses.replace(s, id=f"{s.id}~{k}") if k else s for k in range(factor) for s in scenarios]


def _scale(scenarios: list[Scenario], factors: list[int], memory_factors: list[int], tmp: str | None) -> None:
    import gc
    import tracemalloc
    first = None
    for factor in factors:
        chosen = copies(scenarios, factor)
        seconds = timed(catalog_run(lambda: assemble.target("reference"), chosen, record_states=True, tmp=tmp))
        each = seconds / len(chosen)
        first = first or each
        print(f"  {f'scale {factor}x: {len(chosen)} scenarios':<44} {seconds:9.2f} s   "
              f"{each * 1000:6.2f} ms per scenario, {each / first:4.2f} x the first   (goal: the same at every size)")
    base: tuple[int, int] | None = None  # (scenarios, peak) of the first memory size
    for factor in memory_factors:
        chosen = copies(scenarios, factor)
        with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:
            from harness.report import stream
            from harness.run.options import RunOptions
            out = Path(folder)
            # As `harness run --json --junit` does it: each result handed to the reports, none kept.
            options = RunOptions(json=out / "r.json", junit=out / "r.xml", no_snapshots=True)
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            reports = stream.Reports(options, [], several=False, state=out / "state")
            runs = workers.run([assemble.target("reference")], chosen, record_states=True, tmp=tmp,
                               emit=reports.add, keep=False)
            reports.finish(runs)
            reports.close()
            peak = tracemalloc.get_traced_memory()[1] - before
            del reports, runs
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
        growth = ""
        if base is None:
            base = (len(chosen), peak)
        else:  # what each scenario beyond the first size adds to the peak: near 0 when nothing is held
            growth = f", {(peak - base[1]) / (len(chosen) - base[0]) / 1000:+.2f} KB per added scenario"
        print(f"  {f'memory of a run of {len(chosen)} ({factor}x), JSON+JUnit':<44} {peak / 2**20:9.1f} MiB   "
              f"peak {peak / len(chosen) / 1000:.1f} KB per scenario{growth}, {held / 2**20:.1f} MiB held after"
              "   (goal: under 20 KB per scenario)")


if __name__ == "__main__":
    raise SystemExit(main())
