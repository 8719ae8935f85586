"""``make mutation``: mutation testing of ``reference_impl/`` with the catalog as the test suite.

mutmut 3 (pinned in the ``mutation`` extra) makes the mutants: it copies the project to
``mutants/``, rewrites every function of the reference into its mutated variants behind a
trampoline, and keeps one result per mutant in ``mutants/**.meta`` (so ``mutmut results`` and
``mutmut show NAME`` work afterwards). The mutants are then run here rather than by mutmut's
pytest runner: each mutant is one forked child of a process that has imported the harness and
loaded the catalog once, and runs the scenarios that enter the mutated function (the coverage map
below) on the in-process reference, stopping at the first scenario that fails. pytest's start-up and collection per mutant
cost seconds, the catalog of one profile a fraction of that; two children run at a time.

The unmutated run records, in mutmut's ``stats`` mode, which functions each scenario enters (a
coverage map gathered once). A mutant then meets only the scenarios that reach its function: first
the one that killed a sibling mutant (in this run or the last), then the quickest. A mutant of a
function no scenario reaches is not run; it is reported as a survivor of its own class, *not
reached* (never as equivalent: nothing ran it).

Snapshots play no part: they record the reference's own output, not the contracts. A mutant that
changes only what the seeds leave open survives, and ``docs/mutation-classes.yaml`` says so: each
entry names mutants (``fnmatch`` patterns) as ``equivalent`` (why), ``wording-only`` (the seed
section that leaves a message's text free), ``open-question`` (which) or ``killed-by`` (the scenario
added for it, for survivors of an earlier run); an entry with ``wording: true`` only takes mutants
that change nothing but the text inside string literals, and a ``wording-only`` entry must say
``wording: true``. The report, ``docs/mutation.md``, counts killed / survived / timed out per module,
gives the score two ways (strict: every survivor that is not equivalent counts against it; under the
contract: wording-only survivors count with the equivalent ones, since no conformant implementation
can be told from them) and lists every survivor with its class, and the class entries that take no
survivor of the run (stale).

The recording pass (``record``) then asks, for each survivor on an open question, whether the catalog
records it: whether an open scenario reaching its function observes, under the mutant, something
other than the reference's committed snapshot. That is a figure of its own: a snapshot is the
reference's own output, not the contract, so a recorded survivor is never counted as killed.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import select
import shutil
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from harness.drivers.mutation_report import NOT_REACHED, classify, exclusions, load_classes, render, status
from harness.util.fileio import write_replacing

EXCLUDED_PROFILES = ("claude-code-captured",)  # the real CLI's captured behaviour, not a reference profile


def generate() -> dict[str, list[str]]:
    """Has mutmut write ``mutants/`` and returns the mutant names by source file."""
    import mutmut.__main__ as mm
    from mutmut.mutation.data import SourceFileMutationData
    mm.set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    mm.copy_src_dir()
    mm.copy_also_copy_files()
    mm.setup_source_paths()
    mm.create_mutants(2)
    mm.set_mutant_under_test("")
    names: dict[str, list[str]] = {}
    for path in mm.walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        names[str(path)] = list(data.exit_code_by_key)
    return names


def store(results: dict[str, int]) -> None:
    """Writes each mutant's exit code into mutmut's ``.meta`` files (1 killed, 0 survived, 36 timeout)."""
    import mutmut.__main__ as mm
    from mutmut.mutation.data import SourceFileMutationData
    for path in mm.walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for name in data.exit_code_by_key:
            if name in results:
                data.exit_code_by_key[name] = results[name]
        data.save()


class Pool:
    """Forks one child per mutant, two (``jobs``) at a time; each reports the scenario that killed it."""

    def __init__(self, jobs: int, run_one, cwd: Path | None = None) -> None:
        self.jobs = jobs
        self.run_one = run_one
        # A mutant that stops refusing relative paths writes relative to the working directory: each
        # child works in a scratch folder, never in the project it was started from.
        self.cwd = cwd
        self.running: dict[int, tuple[str, int, float, float]] = {}  # pid -> (name, read fd, start, limit)

    def submit(self, name: str, scenarios: list[Any], limit: float) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, say which scenario killed the mutant, exit without cleanup of the parent's state
            os.close(read_fd)
            code = 0
            try:
                if self.cwd is not None:
                    scratch = self.cwd / str(os.getpid())
                    scratch.mkdir(parents=True, exist_ok=True)
                    os.chdir(scratch)
                killer = self.run_one(name, scenarios)
                os.write(write_fd, (killer or "").encode())
                code = 1 if killer else 0
            except BaseException as exc:  # noqa: BLE001 - a mutant that breaks the harness is killed
                os.write(write_fd, f"<crash: {type(exc).__name__}>".encode())
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        self.running[pid] = (name, read_fd, time.monotonic(), limit)

    def full(self) -> bool:
        return len(self.running) >= self.jobs

    def reap(self, block: bool) -> list[tuple[str, int, str, float]]:
        """Returns finished (name, exit code, killer, seconds); kills children over their time limit."""
        done = []
        while True:
            for pid, (name, fd, started, limit) in list(self.running.items()):
                waited, status = os.waitpid(pid, os.WNOHANG)
                elapsed = time.monotonic() - started
                if waited == 0 and elapsed > limit:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    os.close(fd)
                    del self.running[pid]
                    done.append((name, 36, "", elapsed))
                    continue
                if waited == 0:
                    continue
                killer = b""
                while select.select([fd], [], [], 0)[0]:
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        break
                    killer += chunk
                os.close(fd)
                del self.running[pid]
                code = os.waitstatus_to_exitcode(status)
                done.append((name, 1 if code != 0 else 0, killer.decode(errors="replace"), elapsed))
            if done or not block or not self.running:
                return done
            time.sleep(0.01)


def coverage_map(scenarios: list[Any], run) -> tuple[dict[str, list[Any]], dict[str, float], str | None]:
    """Runs each scenario once, unmutated, in mutmut's ``stats`` mode, in which every trampoline of the
    mutated copy records the function it enters. Returns which scenarios reach each function (by
    mutmut's name for it, ``module.x_f`` or ``module.xǁClassǁf``: a mutant's name without its
    ``__mutmut_N``), each scenario's time, and the id of the first scenario that fails unmutated
    (then the map is incomplete and no mutant may be run). ``run(scenario)`` runs one scenario and
    returns its id when it fails, else None."""
    from mutmut.state import state
    reached_by: dict[str, list[Any]] = defaultdict(list)
    seconds: dict[str, float] = {}
    os.environ["MUTANT_UNDER_TEST"] = "stats"
    try:
        for scenario in scenarios:
            state()._stats.clear()
            started = time.monotonic()
            broken = run(scenario)
            seconds[scenario.id] = time.monotonic() - started
            if broken:
                return reached_by, seconds, broken
            for function in sorted(state()._stats):
                reached_by[function].append(scenario)
    finally:
        state()._stats.clear()
        os.environ["MUTANT_UNDER_TEST"] = ""
    return reached_by, seconds, None


def function_of(name: str) -> str:
    """Returns the function a mutant belongs to, as the coverage map names it."""
    return name.rsplit("__mutmut_", 1)[0]


def plan(name: str, reached_by: dict[str, list[Any]], first_killer: dict[str, str],
         seconds: dict[str, float]) -> list[Any]:
    """Returns the scenarios a mutant is run against: those that reach its function, the one that
    killed a sibling mutant first (most mutants of a function die at once), then the quickest (a
    mutant stops at its first failing scenario). Empty when no scenario reaches the function: the
    mutant is then not run and is reported as not reached."""
    function = function_of(name)
    return sorted(reached_by.get(function, ()),
                  key=lambda s: (s.id != first_killer.get(function), seconds.get(s.id, 0.0)))


def recorders(name: str, reached_by: dict[str, list[Any]], open_only: bool = True) -> list[Any]:
    """Returns the scenarios that reach a mutant's function and can record what it changes: the open
    ones (with an ``open_question``) for an open-question mutant; every one for a wording-only mutant
    (a message's text is in the snapshot of any scenario that shows it)."""
    return [s for s in reached_by.get(function_of(name), ()) if not open_only or getattr(s, "open_question", None)]


def main(argv: list[str] | None = None) -> int:
    """Generates the mutants, runs them through the catalog and writes the report."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.mutation", description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at the same time (default 2)")
    parser.add_argument("--out", type=Path, default=Path("docs/mutation.md"), help="the report (default docs/mutation.md)")
    parser.add_argument("--classes", type=Path, default=Path("docs/mutation-classes.yaml"),
                        help="how survivors are classified (default docs/mutation-classes.yaml)")
    parser.add_argument("--only", default=None, help="only mutants matching this fnmatch pattern")
    parser.add_argument("--json", type=Path, default=Path("mutants/results.json"), help="every mutant's result")
    parser.add_argument("--rerun-survivors", action="store_true",
                        help="run only the survivors of the last run (--json) again: those killed now are "
                             "reported as killed since, by the scenario that kills them")
    parser.add_argument("--report-only", action="store_true", help="only write the report from the last run")
    parser.add_argument("--snapshots", type=Path, default=Path("snapshots"),
                        help="the committed snapshots (the reference's under <dir>/reference) that the recording "
                             "pass compares the open scenarios with (default snapshots)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    # One line per mutant as it finishes: a run that is stopped resumes where it was. The JSON file
    # holds what a finished run (or a rerun of survivors) recorded, and wins over the log.
    full_log = args.json.with_suffix(".jsonl")
    previous: dict[str, dict[str, Any]] = {**_read_log(full_log),
                                           **(json.loads(args.json.read_text("utf-8")) if args.json.exists() else {})}
    log = args.json.with_suffix(".rerun.jsonl") if args.rerun_survivors else full_log
    done_before = _read_log(log) if not args.rerun_survivors else {}
    if args.report_only:
        names_by_file = _stored_names()
        seconds = previous.get("__run__", {}).get("seconds") or _busy_seconds(previous, args.jobs)
        write_replacing(args.out, render(previous, names_by_file, load_classes(args.classes), seconds, args.jobs,
                                         exclusions()))
        print(f"wrote {args.out}")
        return 0

    print("mutmut: generating mutants of reference_impl/ into mutants/ ...", flush=True)
    names_by_file = generate()
    # From here on ``reference_impl`` is the mutated copy (its trampolines read MUTANT_UNDER_TEST).
    sys.path.insert(0, str(Path("mutants").resolve()))
    for module in [m for m in sys.modules if m == "reference_impl" or m.startswith("reference_impl.")]:
        del sys.modules[module]
    os.environ["MUTANT_UNDER_TEST"] = ""
    tmp = Path("mutants/tmp").resolve()
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    os.environ["TMPDIR"] = str(tmp)
    import tempfile
    tempfile.tempdir = str(tmp)

    import reference_impl
    from harness.run import assemble
    from harness.scenario import catalog
    from harness.scenario.model import Verdict
    assert str(Path(reference_impl.__file__).resolve()).startswith(str(Path("mutants").resolve())), reference_impl.__file__

    cat = catalog.load()
    by_profile = {profile: [s for s in cat.select(profiles=[profile])] for profile in reference_impl.PROFILES}

    def run_one(name: str, scenarios: list[Any]) -> str | None:
        os.environ["MUTANT_UNDER_TEST"] = name
        runner = assemble.runner(assemble.target("reference"), record_states=False, tmp=None)
        try:
            for scenario in scenarios:
                if runner.run(scenario).verdict in (Verdict.FAIL, Verdict.ERROR):
                    return scenario.id
            return None
        finally:
            runner.stop()

    # The clean run: every scenario must pass unmutated, and its time sets the mutants' time limit.
    # It also gives, once, which scenarios reach which function (the coverage map, coverage_map):
    # a mutant is only run against those, and one of a function no scenario reaches is not run.
    every = [scenario for scenarios in by_profile.values() for scenario in scenarios]
    reached_by, scenario_seconds, broken = coverage_map(every, lambda scenario: run_one("stats", [scenario]))
    if broken:
        print(f"the unmutated reference fails {broken}: fix that first", file=sys.stderr)
        return 2
    clean_seconds = {profile: sum(scenario_seconds[s.id] for s in scenarios) for profile, scenarios in by_profile.items()}

    mutants = [(path, name) for path, names in names_by_file.items() for name in names
               if args.only is None or fnmatch.fnmatch(name, args.only)]
    if args.rerun_survivors:
        mutants = [(path, name) for path, name in mutants if status(previous.get(name, {}).get("code", 1)) == "survived"]
    # A fixed pseudo-random order: a run stopped early has still sampled every module evenly.
    mutants.sort(key=lambda item: hashlib.sha256(item[1].encode()).hexdigest())
    results: dict[str, dict[str, Any]] = {name: r for name, r in done_before.items() if name != "__run__"}
    mutants = [(path, name) for path, name in mutants if name not in results]
    log.parent.mkdir(parents=True, exist_ok=True)
    log_file = open(log, "a", encoding="utf-8")
    print(f"{len(mutants)} mutants; the catalog takes {sum(clean_seconds.values()):.1f} s unmutated", flush=True)
    first_killer: dict[str, str] = {}  # function -> the scenario that last killed one of its mutants
    # Scenarios that killed mutants of a function in an earlier run go first for its mutants now.
    for name, result in previous.items():
        if name != "__run__" and result.get("killer") and not result["killer"].startswith("<"):
            first_killer.setdefault(name.rsplit("__mutmut_", 1)[0], result["killer"])
    # The children share the parent's memory copy-on-write; frozen objects are never walked by the
    # collector, so a child does not copy the whole catalog page by page when it collects.
    import gc
    gc.collect()
    gc.freeze()
    pool = Pool(args.jobs, run_one, cwd=tmp / "cwd")
    interactive = sys.stdout.isatty()

    def collect(done):
        for name, code, killer, seconds in done:
            results[name] = {"code": code, "killer": killer, "seconds": round(seconds, 3)}
            log_file.write(json.dumps({"name": name, **results[name]}) + "\n")
            log_file.flush()
            if killer and not killer.startswith("<"):
                first_killer[name.rsplit("__mutmut_", 1)[0]] = killer
        if interactive:
            counts = Counter(status(r["code"]) for r in results.values())
            print(f"\r{len(results)}/{len(mutants)} " + " ".join(f"{k} {v}" for k, v in sorted(counts.items())),
                  end="", flush=True)

    for _path, name in mutants:
        scenarios = plan(name, reached_by, first_killer, scenario_seconds)
        if not scenarios:  # no scenario enters the function: nothing can notice the mutant
            results[name] = {"code": NOT_REACHED, "killer": "", "seconds": 0.0}
            log_file.write(json.dumps({"name": name, **results[name]}) + "\n")
            continue
        limit = 10 + 5 * sum(scenario_seconds[s.id] for s in scenarios)
        while pool.full():
            collect(pool.reap(block=True))
        pool.submit(name, scenarios, limit)
    while pool.running:
        collect(pool.reap(block=True))
    if interactive:
        print()
    record(results, reached_by, load_classes(args.classes), args.jobs, tmp / "cwd", args.snapshots.resolve())
    shutil.rmtree(tmp, ignore_errors=True)

    log_file.close()
    seconds = time.monotonic() - started + done_before.get("__run__", {}).get("seconds", 0.0)
    if args.rerun_survivors:  # the full run's figures stay; survivors killed now are killed since
        for result in results.values():
            if result["code"] not in (0, NOT_REACHED):
                result["killed_since"] = result["killer"]
                result["code"] = 0
        results = {**previous, **results}
        seconds = previous.get("__run__", {}).get("seconds") or _busy_seconds(previous, args.jobs)
    else:
        results["__run__"] = {"seconds": round(seconds, 1), "jobs": args.jobs}
    log.unlink()  # complete: the JSON holds it all
    store({name: r["code"] for name, r in results.items() if name != "__run__"})
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_replacing(args.json, json.dumps(results, indent=1, sort_keys=True))
    report = render(results, names_by_file, load_classes(args.classes), seconds, args.jobs, exclusions())
    write_replacing(args.out, report)
    print(f"wrote {args.out} ({seconds:.0f} s)")
    return 0


def record(results: dict[str, dict[str, Any]], reached_by: dict[str, list[Any]], classes: list[dict[str, Any]],
           jobs: int, cwd: Path, snapshots: Path) -> None:
    """The recording pass (a figure, never a kill): whether the catalog records what each survivor on
    an open question changes. The open scenarios that reach the mutant's function run under the
    mutant and are compared with the reference's committed snapshots; the first whose observation
    differs is stored as the survivor's ``recorded_by`` ("" when none does). A snapshot is the
    reference's own output, so a difference is not a failure of the contract: the mutant stays a
    survivor and the scores do not change. An open scenario whose snapshot differs already on the
    unmutated reference could not tell, and is left out."""
    from harness.record import snapshot
    from harness.run import assemble
    store = snapshot.SnapshotStore(snapshots, "reference")

    def record_one(name: str, scenarios: list[Any]) -> str | None:
        os.environ["MUTANT_UNDER_TEST"] = name
        runner = assemble.runner(assemble.target("reference"), record_states=True, tmp=None)
        checker = snapshot.Checker(store)
        try:
            for scenario in scenarios:
                checker.add(runner.run(scenario).as_dict())
                if checker.out.diverged:
                    return scenario.id
            return None
        finally:
            runner.stop()

    todo = [name for name, result in results.items()
            if name != "__run__" and result.get("code") == 0 and not result.get("killed_since")
            and (classify(name, classes) or {}).get("class") in ("open-question", "wording-only")]
    unstable: dict[str, bool] = {}
    pool = Pool(jobs, record_one, cwd=cwd)

    def collect(done: list[tuple[str, int, str, float]]) -> None:
        for name, code, found, _ in done:
            results[name]["recorded_by"] = found if code == 1 and found and not found.startswith("<") else ""

    for name in todo:
        scenarios = []
        for scenario in recorders(name, reached_by, (classify(name, classes) or {}).get("class") == "open-question"):
            if scenario.id not in unstable:  # unmutated, in this process: its snapshot must match
                unstable[scenario.id] = record_one("", [scenario]) is not None
            if not unstable[scenario.id]:
                scenarios.append(scenario)
        if not scenarios:
            results[name]["recorded_by"] = ""
            continue
        while pool.full():
            collect(pool.reap(block=True))
        pool.submit(name, scenarios, 60.0)
    while pool.running:
        collect(pool.reap(block=True))
    os.environ["MUTANT_UNDER_TEST"] = ""
    left_out = sorted(scenario_id for scenario_id, differs in unstable.items() if differs)
    if left_out:
        print(f"recording pass: snapshots differ unmutated, left out: {', '.join(left_out)}", file=sys.stderr)


def _busy_seconds(results: dict[str, dict[str, Any]], jobs: int) -> float:
    """The time the mutants took, shared by the jobs (for a run that was stopped: no wall clock kept)."""
    return sum(r.get("seconds", 0.0) for name, r in results.items() if name != "__run__") / max(jobs, 1)


def _read_log(path: Path) -> dict[str, dict[str, Any]]:
    """Returns the results a stopped run logged (name -> result)."""
    out: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text("utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut off when the run was stopped
            out[entry.pop("name")] = entry
    return out


def _stored_names() -> dict[str, list[str]]:
    """Returns the mutant names by source file from mutmut's ``.meta`` files."""
    import mutmut.__main__ as mm
    from mutmut.mutation.data import SourceFileMutationData
    out = {}
    for path in mm.walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        out[str(path)] = list(data.exit_code_by_key)
    return out


if __name__ == "__main__":
    sys.exit(main())
