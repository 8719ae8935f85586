"""What ``harness run`` does once the results are in, beyond its summary table.

- Snapshots (harness/record/snapshot.py): compare each observation with the stored snapshot of the target
  and report a changed one as a divergence with a unified diff; ``--snapshot-update`` writes them
  instead; ``--no-snapshots`` skips both. Stored snapshots that no scenario of the catalog matches
  are listed, and removed by ``--snapshot-update`` when the run covers the whole catalog (built-in
  included, no ``--profile`` or ``-k``, no invalid file).
- A baseline of known failures (harness/record/baseline.py): ``--baseline FILE`` judges the verdicts,
  ``--write-baseline FILE`` writes one.
- The Markdown and HTML reports of this run, the matrix of every target (harness/report/markdown.py,
  html.py).

Exit codes stay those of ``run``: 1 when something failed -- a ``fail`` or ``error`` verdict (or,
with a baseline, an unlisted failure or a stale entry), or an observation that diverges from its
snapshot; 2 for bad usage or invalid scenario files.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.run.options import RunOptions
from harness.util.printable import shown

ORPHANS_SHOWN = 20


def escape(text: str) -> str:
    """Returns ``text`` with rich markup escaped (rich is imported only once a run reports)."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)


def add_options(run: argparse.ArgumentParser) -> None:
    """Adds the snapshot, baseline and report-format options of ``run``."""
    group = run.add_argument_group("snapshots and baselines")
    group.add_argument("--snapshot-update", action="store_true",
                       help="write the snapshots of this run instead of comparing with them")
    group.add_argument("--no-snapshots", action="store_true", help="do not compare with stored snapshots")
    group.add_argument("--snapshots", type=Path, metavar="DIR", default=None,
                       help="snapshot root (default: $HARNESS_SNAPSHOTS or ./snapshots); files are DIR/<target>/<id>.yaml")
    group.add_argument("--baseline", type=Path, metavar="FILE",
                       help="known failures (YAML: id: reason, or a scenario's aspects or checks); listed failures pass, "
                            "listed passes fail as stale")
    group.add_argument("--write-baseline", type=Path, metavar="FILE", help="write the failures of this run as a baseline (the narrowest entries: one check each)")
    group.add_argument("--markdown", type=Path, metavar="FILE", help="write the Markdown report to FILE")
    group.add_argument("--html", type=Path, metavar="FILE", help="write the self-contained HTML report to FILE")


def judge(options: RunOptions, console: Any, tally: Any) -> tuple[bool, dict[str, Any] | None]:
    """Judges the verdicts of one target (its tally, harness/report/tally.py), under ``--baseline``
    when given; returns (failed, the JSON report's ``baseline`` member or None).

    Each result was marked as it came (``Result.known`` for a known failure, ``Result.stale`` for a
    stale entry), before any report took it, so that every report shows what the exit code says.
    """
    if not options.baseline:
        return tally.bad, None
    if tally.baseline_error is not None:
        console.print(f"[red]error:[/red] {escape(tally.baseline_error)}")
        return True, None
    from harness.record import baseline
    outcome = tally.outcome()
    console.print(f"baseline {escape(str(options.baseline))}: {len(outcome.known)} known failure(s) tolerated, "
                  f"{len(outcome.new)} new, {len(outcome.stale)} stale", highlight=False)
    for scenario_id in outcome.new:
        console.print(f"  [red]new failure[/red] {escape(scenario_id)} (not in the baseline)")
    for scenario_id in outcome.stale:
        console.print(f"  [red]stale entry[/red] {escape(scenario_id)} passes now: remove it from the baseline")
    for check in outcome.stale_checks:
        console.print(f"  [red]stale entry[/red] {escape(check)} excuses nothing now: remove it from the baseline")
    return outcome.failed, baseline.report_section(options.baseline, outcome)


def finish(options: RunOptions, console: Any, catalog: Any, tally: Any, snapshots: Any, spec: str) -> bool:
    """Runs the after-run steps of target ``spec``: the snapshots compared as the results came
    (``snapshots``, a harness/record/snapshot.py ``Checker``, or None) are reported, a baseline written from
    the failures (``tally``); returns True when a snapshot diverged. The verdicts are judged before,
    by ``judge``.

    See the module docstring for what fails a run.
    """
    from rich.console import Console
    console = Console(file=console.file, highlight=False, soft_wrap=True,  # ids and paths stay whole in logs
                      force_terminal=console.is_terminal, no_color=console.no_color)
    failed = False
    if snapshots is not None:
        failed = _snapshots(options, console, catalog, snapshots)
    if options.write_baseline:
        from harness.record import baseline
        real = [result for result in tally.failures if not result.id.startswith("<invalid>")]
        try:
            count = baseline.write(options.write_baseline, real, header=f"target: {spec}")
        except OSError as exc:  # a folder that is not there, or not writable: said, and the run fails
            console.print(f"baseline: cannot write {shown(str(options.write_baseline))}: "
                          f"{shown(exc.strerror or str(exc))}", highlight=False, markup=False)
            return True
        console.print(f"baseline: wrote {count} entr{'y' if count == 1 else 'ies'} to {options.write_baseline}",
                      highlight=False)
    return failed


def _snapshots(options: RunOptions, console: Any, catalog: Any, checker: Any) -> bool:
    from harness.report.grid import print_diff
    store = checker.store
    # Removing orphans needs the whole known catalog: no selection, no broken file, the built-in included.
    unfiltered = not options.narrowed and not catalog.problems
    outcome = checker.finish((s.id for s in catalog.scenarios), prune=unfiltered)
    for scenario_id, diff in outcome.diverged.items():
        console.print(f"\n[bold yellow]SNAPSHOT[/bold yellow] [bold]{escape(scenario_id)}[/bold]: the observation "
                      f"differs from {escape(store.path(scenario_id).as_posix())}")
        print_diff(console, diff)
    for scenario_id, why in outcome.refused.items():
        console.print(f"\n[bold yellow]SNAPSHOT[/bold yellow] [bold]{escape(scenario_id)}[/bold]: {escape(why)}",
                      highlight=False)
    where = store.folder.as_posix()
    if options.snapshot_update:
        console.print(f"snapshots {where}: {len(outcome.written)} written ({len(outcome.new)} new), "
                      f"{len(outcome.matched)} unchanged, "
                      + (f"{len(outcome.refused)} not written, " if outcome.refused else "")
                      + f"{len(outcome.removed)} orphan(s) removed "
                      f"in {outcome.seconds:.2f}s", highlight=False)
    else:
        parts = [f"{len(outcome.matched)} match", f"{len(outcome.diverged)} differ"]
        if outcome.refused:
            parts.append(f"{len(outcome.refused)} not read")
        if outcome.new:
            parts.append(f"{len(outcome.new)} without snapshot (--snapshot-update writes them)")
        console.print(f"snapshots {where}: " + ", ".join(parts) + f" in {outcome.seconds:.2f}s", highlight=False)
    kept = [o for o in outcome.orphans if o not in outcome.removed]
    # Without the built-in catalog, the default folder's built-in snapshots would all look orphaned.
    if kept and (options.builtin or options.snapshots):
        console.print(f"[yellow]{len(kept)} snapshot(s) no scenario matches[/yellow] (a --snapshot-update "
                      "of the whole catalog removes them):")
        for scenario_id in kept[:ORPHANS_SHOWN]:
            console.print(f"  {escape(store.path(scenario_id).as_posix())}", highlight=False)
        if len(kept) > ORPHANS_SHOWN:
            console.print(f"  ... and {len(kept) - ORPHANS_SHOWN} more", highlight=False)
    return bool(outcome.diverged) and not options.snapshot_update or bool(outcome.refused)


def reports(options: RunOptions, catalog: Any, runs: list[Any], columns: Any = None) -> None:
    """Writes the Markdown and HTML reports: the matrix of every target's results (TargetRun), or of
    the columns ``columns(runs)`` gives (harness/record/observations.py ``Collector``, filled as the run went)."""
    if not (options.markdown or options.html):
        return
    from harness.record import observations
    from harness.report import grid as matrix_mod
    columns = columns(runs) if columns is not None else observations.from_runs(runs)
    grid = matrix_mod.build(columns, {s.id: s for s in catalog.scenarios})
    title = f"File-tool conformance: {', '.join(run.spec for run in runs)}"
    if options.markdown:
        from harness.report import markdown
        markdown.write(options.markdown, grid, title=title)
    if options.html:
        from harness.report import html
        html.write(options.html, grid, title=title)
