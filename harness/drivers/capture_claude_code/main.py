"""Records the claude-code catalog through the real CLI: snapshots, a JSON report, progress lines.

Usage (``make capture-claude-code`` runs it)::

    python -m harness.drivers.capture_claude_code [--target SPEC ...] [--jobs N] [--snapshots DIR]
                                                  [--json-dir DIR] [--findings FILE]

It does what ``harness run --target SPEC --profile claude-code --snapshot-update --json FILE``
does -- the same runner, the same snapshot documents, the same JSON report -- with two differences
a live capture needs: scenarios run ``--jobs`` at a time (each worker has its own runner, target and workspace
enclosure; each scenario its own CLI process, HOME and fake API, so they are independent), and every finished scenario prints one line at once,
terminal or not. Results, snapshots and the report keep the catalog's order, so a parallel capture
writes the same files as a serial one. ``--findings FILE`` then writes the findings report of
these runs (harness/drivers/capture_claude_code/findings.py).

Exit status: 0 when every scenario gave a verdict about the CLI (``fail`` is a finding); 1 when one
ended in ``error`` (the capture itself broke there); 2 on a usage error.

Where this module's concern ends: the verdicts are the runner's, the files are harness/record/snapshot/'s
and harness/report/json.py's; the findings report is harness/drivers/capture_claude_code/findings.py's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.targets.claude_code import PROFILES, SNAPSHOT_MASKS

#: The permission mode and working directories `make capture-claude-code` records.
DEFAULT_TARGETS = ("claude-code", "claude-code:cwd=outside")


def default_jobs() -> int:
    """Returns how many CLI sessions run at once: one per CPU, at least 2, at most 4."""
    return max(2, min(4, os.cpu_count() or 1))


def capture(spec: str, scenarios: Sequence[Any], known_ids: Sequence[str], *, jobs: int, snapshots: Path,
            json_dir: Path | None, out: Any = sys.stdout, run_as: str | None = None,
            json_suffix: str = "") -> tuple[str, list[Any]]:
    """Runs ``scenarios`` on the target ``spec``; writes its snapshots and ``<json_dir>/<slug><suffix>.json``.

    ``run_as`` runs the CLI as that user (the permission scenarios). Returns the target's slug (its
    snapshot folder's name) and the results in the catalog's order.
    """
    from harness.record import snapshot as snap
    from harness.report import json as json_report
    from harness.run import assemble
    from harness.run.options import RunOptions

    options = RunOptions(targets=(spec,), run_as=run_as)
    # One runner, target and workspace enclosure per worker: a runner keeps its current workspace and
    # the enclosure around it, so two sessions sharing one would each see the other's workspace (as
    # something written outside its own) and clear it under the other's feet.
    jobs = max(1, min(jobs, len(scenarios)))
    started = time.perf_counter()
    lock = threading.Lock()
    done = 0
    width = len(str(len(scenarios)))

    with contextlib.ExitStack() as stack:
        runners: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(jobs):
            runner = stack.enter_context(assemble.runner(assemble.target(spec, options), options, record_states=True))
            runners.put(runner)
        target, info = runner.target, runner.start()  # started already: what the target said about itself
        print(f"{spec}: {info.name} {info.version}, {len(scenarios)} scenarios, {jobs} at a time -> "
              f"{snapshots / target.slug}", file=out, flush=True)

        def one(scenario: Any) -> Any:
            nonlocal done
            own = runners.get()  # a runner no other thread holds until it is put back
            try:
                result = own.run(scenario)
            finally:
                runners.put(own)
            with lock:
                done += 1
                print(f"  [{done:>{width}}/{len(scenarios)}] {result.verdict.value:<8} {result.seconds:5.1f}s  "
                      f"{scenario.id}", file=out, flush=True)
            return result

        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="capture") as pool:
            results = list(pool.map(one, scenarios))  # map keeps the catalog's order
    seconds = time.perf_counter() - started

    dicts = [result.as_dict() for result in results]
    store = snap.SnapshotStore(snapshots, target.slug)
    check = snap.check(store, dicts, known_ids, update=True, prune=True, masks=SNAPSHOT_MASKS)
    if json_dir is not None:
        json_dir.mkdir(parents=True, exist_ok=True)
        json_report.write(json_dir / f"{target.slug}{json_suffix}.json", results, info, spec, seconds)
    counts = json_report.summary(results)
    print(f"{spec}: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + f" in {seconds:.0f} s; "
          f"snapshots: {len(check.written)} written, {len(check.matched)} unchanged, "
          f"{len(check.removed)} orphan(s) removed", file=out, flush=True)
    return target.slug, results


def main(argv: Sequence[str] | None = None) -> int:
    """Captures every ``--target`` (default: the workspace and the outside working directory)."""
    from harness.scenario import catalog
    from harness.scenario.model import Verdict

    parser = argparse.ArgumentParser(prog="python -m harness.drivers.capture_claude_code", description=__doc__.split("\n")[0])
    parser.add_argument("--target", action="append", help="claude-code[:opt=val,...] or acp:[opt=val ...] claude-code (repeatable; default: "
                        + " and ".join(DEFAULT_TARGETS) + ")")
    parser.add_argument("--jobs", "-j", type=int, default=default_jobs(), help="CLI sessions at once")
    parser.add_argument("--snapshots", type=Path, default=Path("snapshots"), help="snapshot root")
    parser.add_argument("--json-dir", type=Path, default=Path(".harness"),
                        help="where <target slug>.json reports go (for harness/drivers/capture_claude_code/findings.py)")
    parser.add_argument("--findings", type=Path, default=None,
                        help="write the Markdown findings report of these runs to FILE (harness/drivers/capture_claude_code/findings.py)")
    parser.add_argument("-k", dest="keyword", default=None, help="only scenarios matching (pytest -k syntax)")
    parser.add_argument("--run-as", metavar="USER", default=None,
                        help="then run the scenarios that require permissions once more, the CLI as USER, "
                        "into the first target's snapshots")
    args = parser.parse_args(argv)
    specs = args.target or list(DEFAULT_TARGETS)
    from harness.targets.acp import target as acp
    from harness.targets.claude_code import parse_spec
    try:
        for spec in specs:  # acp:claude-code is the same CLI behind the ACP agent
            acp.parse_spec(spec) if spec.startswith(acp.PREFIX) else parse_spec(spec)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    cat = catalog.load([catalog.builtin_dir()])
    if cat.problems:
        for problem in cat.problems:
            print(f"invalid scenario: {problem}", file=sys.stderr)
        return 2
    scenarios = cat.select(profiles=PROFILES, keyword=args.keyword)
    known = [scenario.id for scenario in cat.scenarios]
    broken = []
    reports = []
    for spec in specs:
        slug, results = capture(spec, scenarios, known, jobs=max(1, args.jobs), snapshots=args.snapshots,
                                json_dir=args.json_dir)
        reports.append(args.json_dir / f"{slug}.json")
        broken += [f"{slug}: {r.scenario.id}: {r.reason.splitlines()[0] if r.reason else ''}"
                   for r in results if r.verdict is Verdict.ERROR]
    if args.run_as:
        # As root, file modes do not bite: those scenarios skipped above and run here as USER.
        permission = [s for s in scenarios if "permissions" in (s.requires or ())]
        slug, results = capture(specs[0], permission, known, jobs=max(1, args.jobs), snapshots=args.snapshots,
                                json_dir=args.json_dir, run_as=args.run_as, json_suffix="-run-as")
        broken += [f"{slug} (--run-as {args.run_as}): {r.scenario.id}: {r.reason.splitlines()[0] if r.reason else ''}"
                   for r in results if r.verdict is Verdict.ERROR]
    for line in broken:
        print(f"error verdict: {line}", file=sys.stderr)
    if args.findings is not None:
        from harness.drivers.capture_claude_code import findings
        findings.write(args.findings, [findings.load(path) for path in reports], snapshots=args.snapshots)
        print(f"findings: {args.findings}", flush=True)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
