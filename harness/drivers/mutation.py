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

from harness.util.safepath import write_replacing

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

STOPPED = (". The run was stopped before the end: the mutants run are a pseudo-random sample of every module "
           "(a fixed order by hash); `make mutation` resumes where it stopped. The time is the mutants' own "
           "run time shared by the jobs (a stopped run keeps no wall clock).")
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


def diff_of(name: str) -> str:
    """Returns mutmut's diff for one mutant (the changed lines only)."""
    import mutmut.__main__ as mm
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    try:
        found = mm.find_mutant(name)
        text = get_diff_for_mutant(name, path=found.path)
    except Exception as exc:  # noqa: BLE001 - a diff that cannot be shown is reported as such
        return f"(no diff: {exc})"
    return "\n".join(line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


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
    from harness.scenario import catalog
    from harness.scenario.model import Verdict
    from harness.run import assemble
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

    for path, name in mutants:
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
        for name, result in results.items():
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
    """The recording pass (never a kill): whether the catalog records what each survivor on an open
    question, or changing only a message's wording, changes. The scenarios that reach the mutant's
    function (the open ones, for an open question) run under the mutant and are compared with the
    reference's committed snapshots; the first whose observation
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


NOT_REACHED = 33  # mutmut's "no tests": no scenario enters the mutated function


def status(code: int) -> str:
    """Returns mutmut's word for an exit code (a mutant no scenario reaches is a survivor)."""
    return {0: "survived", 1: "killed", 36: "timeout", NOT_REACHED: "survived"}.get(code, "killed")


def load_classes(path: Path) -> list[dict[str, Any]]:
    """Returns the survivor classes (a list of {mutants, class, why, ...}) from YAML, or none."""
    import yaml
    if not path.exists():
        return []
    text = path.read_text("utf-8")
    classes = yaml.safe_load(text) or []
    check_classes(classes, str(path))
    node = yaml.compose(text)
    if node is not None and isinstance(node, yaml.SequenceNode):  # where each entry starts, for the report
        for entry, item in zip(classes, node.value):
            entry["_line"] = item.start_mark.line + 1
    return classes


CLASSES = ("equivalent", "wording-only", "open-question", "not-reached", "killed-by")


def check_classes(classes: list[dict[str, Any]], where: str) -> None:
    """Raises ValueError for an entry with an unknown class, or a ``wording-only`` entry without
    ``wording: true`` (the class may only take mutants whose change is inside string literals)."""
    for index, entry in enumerate(classes):
        kind = entry.get("class") if isinstance(entry, dict) else None
        if kind not in CLASSES:
            raise ValueError(f"{where}: entry {index + 1}: `class` must be one of {', '.join(CLASSES)}, not {kind!r}")
        if kind == "wording-only" and entry.get("wording") is not True:
            raise ValueError(f"{where}: entry {index + 1}: a wording-only entry must say `wording: true` "
                             f"(it may only take mutants that change the text inside string literals)")


def classify(name: str, classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Returns the first class whose ``mutants`` patterns match ``name`` and whose ``change`` regex
    (if any) is found in the mutant's diff."""
    import re
    for entry in classes:
        patterns = entry.get("mutants", "*")
        patterns = patterns if isinstance(patterns, list) else [patterns]
        if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
            continue
        if "change" in entry and not re.search(entry["change"], _diff_cached(name)):
            continue
        if entry.get("wording") and not wording_only(_diff_cached(name)):
            continue
        return entry
    return None


def _literal_shape(literal: str) -> str:
    """What of a string literal is code: nothing for a plain string, the replacement fields of an
    f-string (a changed ``{key}`` is a changed lookup, not wording)."""
    import re
    prefix = re.match(r"[A-Za-z]*", literal).group(0).lower()
    return "|".join(re.findall(r"\{[^{}]*\}", literal)) if "f" in prefix else ""


#: Tokens beside a string literal that make its text data, not wording: a comparison, a lookup, a key.
_DATA_BEFORE = {"==", "!=", "in", "is", "[", "<", ">", "<=", ">="}
_DATA_AFTER = {"==", "!=", "in", "is", "]", ":", "<", ">", "<=", ">="}


def wording_only(diff: str) -> bool:
    """True when a mutant changes only the text inside string literals (the wording of a message):
    the removed and added lines are the same tokens but for the contents of their strings. A
    literal replaced by ``None``, an argument dropped or a name changed is not wording, nor is a
    literal that is compared, looked up or used as a key (``op == "open"``, ``d["k"]``, ``{"k": v}``):
    its text is data the code acts on."""
    import io
    import tokenize
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    if not removed or len(removed) != len(added):
        return False

    def shape(line: str) -> list[tuple[int, str]] | None:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return None
        tokens = [t for t in tokens
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT)]
        out = []
        for number, token in enumerate(tokens):
            if token.type != tokenize.STRING:
                out.append((token.type, token.string))
                continue
            before = tokens[number - 1].string if number else ""
            after = tokens[number + 1].string if number + 1 < len(tokens) else ""
            acted_on = before in _DATA_BEFORE or after in _DATA_AFTER
            out.append((token.type, token.string if acted_on else _literal_shape(token.string)))
        return out

    for before, after in zip(removed, added):
        a, b = shape(before), shape(after)
        if a is None or b is None or a != b or before == after:
            return False
    return True


_DIFFS: dict[str, str] = {}


def _diff_cached(name: str) -> str:
    if name not in _DIFFS:
        _DIFFS[name] = diff_of(name)
    return _DIFFS[name]


def score_figures(totals: Counter[str], open_questions: int) -> dict[str, Any]:
    """Returns the scores from the counts of a run.

    ``strict``: killed (also killed since and timed out) of every mutant that is not an equivalent
    survivor. ``contract``: the same with the wording-only survivors left out like the equivalent
    ones (no conformant test can tell them from the reference). ``seeds_fix``: with the survivors on
    an open question left out too (a figure, not a score).
    """
    caught = totals["killed"] + totals["killed since"] + totals["timeout"]
    strict_base = caught + totals["survived"] - totals["equivalent"]
    contract_base = strict_base - totals["wording-only"]
    seeds_base = contract_base - open_questions

    def percent(base: int) -> float:
        return 100.0 * caught / base if base else 100.0

    return {"strict": percent(strict_base), "contract": percent(contract_base), "seeds_fix": percent(seeds_base),
            "wording": totals["wording-only"], "open_questions": open_questions}


def exclusions(root: Path = Path(".")) -> str:
    """Returns the sentence that names what is not mutated: the files pyproject's ``do_not_mutate``
    lists, and the lines of ``reference_impl/`` that carry ``# pragma: no mutate`` (each with the
    reason its comment gives)."""
    import tomllib
    config = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("tool", {}).get("mutmut", {})
    files = ", ".join(f"`{name}`" for name in config.get("do_not_mutate", [])) or "none"
    lines = []
    for path in sorted((root / "reference_impl").rglob("*.py")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if "pragma: no mutate" in line:
                lines.append(f"`{path.relative_to(root)}:{number}` ({line.split('#', 1)[-1].strip()})")
    pragmas = "; ".join(lines) if lines else "none"
    return (f"Not mutated: the files {files} (pyproject `do_not_mutate`: transports, never reached by the "
            f"in-process reference); lines excluded with `# pragma: no mutate`: {pragmas}.")


def survivor_class(name: str, result: dict[str, Any], classes: list[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
    """Returns the class of one survivor and the entry that gives it: ``not-reached`` for a mutant no
    scenario reaches (whatever an entry says: nothing ran, so nothing can show it equivalent; a
    ``not-reached`` entry gives the reason), ``killed-by`` for one a rerun killed, ``unclassified`` (a
    gap) when no entry takes it, or when the entry is ``killed-by`` (that scenario no longer kills
    it) or ``not-reached`` (a scenario does reach it); otherwise the entry's class."""
    if result.get("killed_since"):
        return "killed-by", {"class": "killed-by", "scenario": result["killed_since"]}
    entry = classify(name, classes)
    if result["code"] == NOT_REACHED:
        return "not-reached", entry if entry and entry["class"] == "not-reached" else None
    if entry and entry["class"] == "killed-by":
        return "unclassified", {"class": "unclassified",
                                "why": f"survived this run, though classified as killed by {entry.get('scenario', '?')}"}
    if entry and entry["class"] == "not-reached":
        return "unclassified", {"class": "unclassified",
                                "why": f"classified as not reached, but a scenario reaches it ({entry.get('why', '')})"}
    return (entry["class"], entry) if entry else ("unclassified", None)


def stale_entries(results: dict[str, dict[str, Any]], classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns the class entries that take no survivor of ``results`` (each survivor goes to the first
    entry that matches it): left over from mutants that a scenario kills now, or that changed."""
    used = set()
    for name, result in results.items():
        if name == "__run__" or status(result["code"]) != "survived" or result.get("killed_since"):
            continue
        entry = classify(name, classes)
        if entry is not None:
            used.add(id(entry))
    return [entry for entry in classes if id(entry) not in used]


def render(results: dict[str, dict[str, Any]], names_by_file: dict[str, list[str]], classes: list[dict[str, Any]],
           seconds: float, jobs: int, excluded: str | None = None, classes_path: str = "docs/mutation-classes.yaml") -> str:
    """Returns docs/mutation.md (``excluded``: the sentence of :func:`exclusions`, shown under the timing)."""
    rows = []
    totals: Counter[str] = Counter()
    by_class: dict[str, list[tuple[str, dict[str, Any] | None]]] = defaultdict(list)
    for path, names in sorted(names_by_file.items()):
        counts: Counter[str] = Counter()
        for n in names:
            if n not in results:
                continue
            word = status(results[n]["code"])
            if word == "survived" and results[n].get("killed_since"):
                word = "killed since"
            counts[word] += 1
            if word not in ("survived", "killed since"):
                continue
            kind, entry = survivor_class(n, results[n], classes)
            by_class[kind].append((n, entry))
            if kind == "not-reached":
                counts["not reached"] += 1
            if kind in ("equivalent", "wording-only"):
                counts[kind] += 1
        totals.update(counts)
        rows.append((path, len(names), counts))
    open_names = [n for n, _ in by_class.get("open-question", [])]
    worded_names = [n for n, _ in by_class.get("wording-only", [])]
    figures = score_figures(totals, open_questions=len(open_names))
    # Detected: killed (timed out, killed since), or a survivor that changes a committed snapshot of the
    # reference (an open question answered differently, a message worded otherwise): a target behaving
    # like the mutant shows as a changed snapshot in review, though no expectation fails.
    caught = totals["killed"] + totals["killed since"] + totals["timeout"]
    changed_snapshot = sum(1 for n in open_names + worded_names if results[n].get("recorded_by"))
    non_equivalent = caught + totals["survived"] - totals["equivalent"]
    detected = 100.0 * (caught + changed_snapshot) / non_equivalent if non_equivalent else 100.0
    gaps = len(by_class.get("unclassified", []))
    not_reached = totals["not reached"]
    recorded = sum(1 for n in open_names if results[n].get("recorded_by"))
    unrecorded = sum(1 for n in open_names if results[n].get("recorded_by") == "")
    unchecked = len(open_names) - recorded - unrecorded
    everything = sum(len(v) for v in names_by_file.values())
    ran = sum(1 for names in names_by_file.values() for n in names if n in results)
    wording, open_questions = figures["wording"], figures["open_questions"]
    out = [
        "# Mutation testing of the reference",
        "",
        "Generated by `make mutation` (mutmut 3 makes the mutants of `reference_impl/`; the catalog, run",
        "in-process on the mutated reference, is the test suite: the scenarios that enter the mutated",
        "function, stopping at the first that fails). Survivors are classified in",
        "`docs/mutation-classes.yaml`; a survivor no class names is a gap in the catalog.",
        "The reference is held to what every target is: it answers in the normal form of docs/cmd-protocol.md",
        "(a tool error has a `code` and a `message` that is a string) and acts only inside the folder around its",
        "workspace (harness/containment/audit_hook.py); a mutant that breaks either fails its scenario as a wrong answer does.",
        "",
        f"Measured: {ran} of {everything} mutants run, in {seconds / 60:.1f} minutes with {jobs} mutants at a time, "
        "on a machine shared with other work (its load varies)" + (STOPPED if ran < everything else "."),
        "",
        *([excluded, ""] if excluded else []),
        "| of the non-equivalent mutants | count | share |",
        "|---|---:|---:|",
        f"| killed (also timed out and killed since) | {caught} | {figures['strict']:.1f}% |",
        f"| detected: killed, or changing a committed snapshot of the reference | {caught + changed_snapshot} | {detected:.1f}% |",
        f"| survived without changing any snapshot (gaps, not recorded, not reached) | "
        f"{non_equivalent - caught - changed_snapshot} | {100.0 - detected:.1f}% |",
        f"| equivalent (not counted) | {totals['equivalent']} | |",
        f"| not reached (counted as survivors) | {not_reached} | |",
        "",
        f"**Detected: {detected:.1f}%** of the non-equivalent mutants: killed ({caught}), or surviving but changing a",
        f"committed snapshot ({changed_snapshot}: an open question answered otherwise, a message worded otherwise), so a",
        "target that behaved like the mutant shows as a changed snapshot in review. The goal is 98%.",
        "",
        f"**Score (strict): {figures['strict']:.1f}%** of the non-equivalent mutants killed (a timed-out mutant counts",
        "as killed: the catalog noticed it never finished; *killed since* are survivors of the full run that a",
        "scenario added afterwards kills). The goal is 95%. Every survivor that is not equivalent counts",
        f"against this score: also the {wording} wording-only ones, the {open_questions} on an open question and the "
        f"{not_reached} not reached.",
        "",
        f"**Score under the contract: {figures['contract']:.1f}%**: the same, with the {wording} wording-only",
        "survivors counted with the equivalent ones. Each of them changes nothing but the text of a message whose",
        "wording the seed leaves free (the section is named for each), so no conformant implementation can be",
        "told from it and no conformant test may kill it. This is not the strict score.",
        "",
        f"The {open_questions} survivors on an open question change a behaviour the seed does not settle (each",
        "names the seed section; the catalog records these and must not assert them); they count against",
        f"both scores. {gaps} survivors are gaps: the seed fixes what they change and no scenario checks it.",
        f"{not_reached} survivors are *not reached*: no scenario enters the function they mutate, so nothing ran",
        "them and nothing shows them equivalent; they count against both scores.",
        f"Of the mutants that change only what the seeds fix, {figures['seeds_fix']:.1f}% are killed (this third",
        "figure leaves the open questions out too; it is not a score).",
        "",
        f"**Recorded open questions: {recorded} of {open_questions}** survivors on an open question are recorded: an open",
        "scenario that reaches the mutated function observes, under the mutant, something other than the",
        "reference's committed snapshot (`snapshots/reference/`), so a target that behaved like the mutant would",
        f"show as a changed answer to that open question. {unrecorded} are not recorded (no open scenario's",
        "observation changes: marked *not recorded* below)" + (f"; {unchecked} were not checked." if unchecked else ".") +
        " A snapshot is the reference's own output, not the contract: a recorded mutant is not killed, and this",
        "figure changes no score.",
        "",
        "| module | mutants | killed | killed since | survived | of them not reached | timed out "
        "| of the survivors: equivalent | wording-only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for path, total, counts in rows:
        out.append(f"| `{path}` | {total} | {counts['killed']} | {counts['killed since']} | {counts['survived']} | "
                   f"{counts['not reached']} | {counts['timeout']} | {counts['equivalent']} | {counts['wording-only']} |")
    out.append(f"| all | {sum(r[1] for r in rows)} | {totals['killed']} | {totals['killed since']} | "
               f"{totals['survived']} | {not_reached} | {totals['timeout']} | {totals['equivalent']} | "
               f"{wording} |")
    out += ["", "## Survivors", ""]
    titles = {"equivalent": "Equivalent (no scenario can tell them apart: the behaviour is the same)",
              "wording-only": "Wording only (the text of a message the seed leaves free; counted against the strict "
                              "score, with the equivalent ones under the contract)",
              "open-question": "On an open question of the seed (the catalog records, it does not assert)",
              "not-reached": "Not reached (no scenario enters the mutated function; counted against both scores)",
              "killed-by": "Killed since by a new scenario (named)",
              "unclassified": "Gaps in the catalog (no class: the seed fixes what they change, no scenario checks it)"}
    for kind in ("unclassified", "open-question", "not-reached", "wording-only", "equivalent", "killed-by"):
        entries = by_class.get(kind)
        if not entries:
            continue
        recording = kind == "open-question"
        out += [f"### {titles[kind]}: {len(entries)}", "",
                "| mutant | change | why |" + (" recorded by |" if recording else ""),
                "|---|---|---|" + ("---|" if recording else "")]
        for name, entry in entries:
            change = _diff_cached(name).replace("|", "\\|").replace("\n", "<br>")
            if len(change) > 300:
                change = change[:300] + " …"
            why = (entry or {}).get("why", "")
            if kind == "not-reached" and not why:
                why = "no scenario enters the function (no class entry gives the reason)"
            if entry and entry.get("scenario"):
                why = f"{why} ({entry['scenario']})" if why else entry["scenario"]
            row = f"| `{name.split('.', 1)[1]}` | `{change}` | {why.replace('|', '/')} |"
            if recording:
                found = results[name].get("recorded_by")
                row += f" {f'`{found}`' if found else ('*not recorded*' if found == '' else '(not checked)')} |"
            out.append(row)
        out.append("")
    if ran == everything:
        stale = stale_entries(results, classes)
        out += ["## Class entries that take no survivor", ""]
        if stale:
            out += [f"{len(stale)} entries of `{classes_path}` take no survivor of this run (a scenario kills their "
                    "mutants now, or the code changed): they are stale and should go.", "",
                    "| line | class | mutants | change |", "|---:|---|---|---|"]
            for entry in stale:
                patterns = entry.get("mutants", "*")
                patterns = patterns if isinstance(patterns, list) else [patterns]
                shown = ", ".join(f"`{p.split('.', 1)[-1]}`" for p in patterns).replace("|", "\\|")
                change = f"`{entry['change']}`".replace("|", "\\|") if entry.get("change") else ""
                out.append(f"| {entry.get('_line', '?')} | {entry['class']} | {shown} | {change} |")
        else:
            out.append(f"None: every entry of `{classes_path}` takes at least one survivor of this run.")
        out.append("")
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    sys.exit(main())
