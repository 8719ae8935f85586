"""What ``harness run`` does once the results are in, beyond its summary table.

- Snapshots (harness/snapshot.py): compare each observation with the stored snapshot of the target
  and report a changed one as a divergence with a unified diff; ``--snapshot-update`` writes them
  instead; ``--no-snapshots`` skips both. Stored snapshots that no scenario of the catalog matches
  are listed, and removed by ``--snapshot-update`` when the run covers the whole catalog (built-in
  included, no ``--profile`` or ``-k``, no invalid file).
- A baseline of known failures (harness/baseline.py): ``--baseline FILE`` judges the verdicts,
  ``--write-baseline FILE`` writes one.
- The Markdown and HTML reports of this run (harness/report/markdown.py, html.py).

Exit codes stay those of ``run``: 1 when something failed -- a ``fail`` or ``error`` verdict (or,
with a baseline, an unlisted failure or a stale entry), or an observation that diverges from its
snapshot; 2 for bad usage or invalid scenario files.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from harness.model import Result, Verdict

ORPHANS_SHOWN = 20


def add_options(run: argparse.ArgumentParser) -> None:
    """Adds the snapshot, baseline and report-format options of ``run``."""
    group = run.add_argument_group("snapshots and baselines")
    group.add_argument("--snapshot-update", action="store_true",
                       help="write the snapshots of this run instead of comparing with them")
    group.add_argument("--no-snapshots", action="store_true", help="do not compare with stored snapshots")
    group.add_argument("--snapshots", type=Path, metavar="DIR", default=None,
                       help="snapshot root (default: $HARNESS_SNAPSHOTS or ./snapshots); files are DIR/<target>/<id>.yaml")
    group.add_argument("--baseline", type=Path, metavar="FILE",
                       help="known failures (YAML: id: reason); listed failures pass, listed passes fail as stale")
    group.add_argument("--write-baseline", type=Path, metavar="FILE", help="write the failures of this run as a baseline")
    group.add_argument("--markdown", type=Path, metavar="FILE", help="write the Markdown report to FILE")
    group.add_argument("--html", type=Path, metavar="FILE", help="write the self-contained HTML report to FILE")


def usage_error(args: argparse.Namespace) -> str | None:
    """Returns what is wrong with the combination of options, or None."""
    if args.snapshot_update and args.no_snapshots:
        return "--snapshot-update and --no-snapshots contradict each other"
    if args.baseline and not args.baseline.is_file():
        return f"--baseline {args.baseline}: no such file"
    return None


def finish(args: argparse.Namespace, console: Console, catalog: Any, results: list[Result],
           target: Any, info: Any) -> bool:
    """Runs the after-run steps; returns True when the run failed (see the module docstring)."""
    console = Console(file=console.file, highlight=False, soft_wrap=True,  # ids and paths stay whole in logs
                      force_terminal=console.is_terminal, no_color=console.no_color)
    real = [result for result in results if not result.id.startswith("<invalid>")]
    failed = _judge_verdicts(args, console, real)
    if not args.no_snapshots or args.snapshot_update:
        failed = _snapshots(args, console, catalog, real, target) or failed
    if args.write_baseline:
        from harness import baseline
        count = baseline.write(args.write_baseline, real, header=f"target: {args.target}")
        console.print(f"baseline: wrote {count} entr{'y' if count == 1 else 'ies'} to {args.write_baseline}",
                      highlight=False)
    if args.markdown or args.html:
        _reports(args, catalog, results, info)
    return failed


def _judge_verdicts(args: argparse.Namespace, console: Console, results: list[Result]) -> bool:
    bad = any(r.verdict in (Verdict.FAIL, Verdict.ERROR) for r in results)
    if not args.baseline:
        return bad
    from harness import baseline
    try:
        known = baseline.load(args.baseline)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return True
    outcome = baseline.apply(known, {r.id: r.verdict.value for r in results})
    console.print(f"baseline {escape(str(args.baseline))}: {len(outcome.known)} known failure(s) tolerated, "
                  f"{len(outcome.new)} new, {len(outcome.stale)} stale", highlight=False)
    for scenario_id in outcome.new:
        console.print(f"  [red]new failure[/red] {escape(scenario_id)} (not in the baseline)")
    for scenario_id in outcome.stale:
        console.print(f"  [red]stale entry[/red] {escape(scenario_id)} passes now: remove it from the baseline")
    return outcome.failed


def _snapshots(args: argparse.Namespace, console: Console, catalog: Any, results: list[Result], target: Any) -> bool:
    from harness import snapshot as snap
    from harness.report.matrix import print_diff
    root = args.snapshots or snap.default_root()
    store = snap.SnapshotStore(root, target.slug)
    # Removing orphans needs the whole known catalog: no selection, no broken file, the built-in included.
    unfiltered = not args.profile and not args.keyword and not catalog.problems and not args.no_builtin
    outcome = snap.check(store, (r.as_dict() for r in results), (s.id for s in catalog.scenarios),
                         update=args.snapshot_update, prune=unfiltered)
    for scenario_id, diff in outcome.diverged.items():
        console.print(f"\n[bold yellow]SNAPSHOT[/bold yellow] [bold]{escape(scenario_id)}[/bold]: the observation "
                      f"differs from {escape(store.path(scenario_id).as_posix())}")
        print_diff(console, diff)
    where = store.folder.as_posix()
    if args.snapshot_update:
        console.print(f"snapshots {where}: {len(outcome.written)} written ({len(outcome.new)} new), "
                      f"{len(outcome.matched)} unchanged, {len(outcome.removed)} orphan(s) removed "
                      f"in {outcome.seconds:.2f}s", highlight=False)
    else:
        parts = [f"{len(outcome.matched)} match", f"{len(outcome.diverged)} differ"]
        if outcome.new:
            parts.append(f"{len(outcome.new)} without snapshot (--snapshot-update writes them)")
        console.print(f"snapshots {where}: " + ", ".join(parts) + f" in {outcome.seconds:.2f}s", highlight=False)
    kept = [o for o in outcome.orphans if o not in outcome.removed]
    # Without the built-in catalog, the default folder's built-in snapshots would all look orphaned.
    if kept and (not args.no_builtin or args.snapshots):
        console.print(f"[yellow]{len(kept)} snapshot(s) no scenario matches[/yellow] (a --snapshot-update "
                      "of the whole catalog removes them):")
        for scenario_id in kept[:ORPHANS_SHOWN]:
            console.print(f"  {escape(store.path(scenario_id).as_posix())}", highlight=False)
        if len(kept) > ORPHANS_SHOWN:
            console.print(f"  ... and {len(kept) - ORPHANS_SHOWN} more", highlight=False)
    return outcome.failed and not args.snapshot_update


def _reports(args: argparse.Namespace, catalog: Any, results: list[Result], info: Any) -> None:
    from harness import sources
    from harness.report import matrix as matrix_mod
    source = sources.from_results(args.target, results, info, args.target)
    grid = matrix_mod.build([source], {s.id: s for s in catalog.scenarios})
    title = f"File-tool conformance: {args.target}"
    if args.markdown:
        from harness.report import markdown
        markdown.write(args.markdown, grid, title=title)
    if args.html:
        from harness.report import html
        html.write(args.html, grid, title=title)
