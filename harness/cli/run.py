"""``harness run``: runs the selected scenarios on each target, reports, and decides the exit code.

Exit codes (decided in ``exit_code`` and ``target_failed``): 0 when nothing failed or errored, 1 when something did, 2 for bad usage or invalid
scenario files (the valid ones still run, the broken ones are reported as errors). Besides a
``fail`` or ``error`` verdict, a run fails (1) when

- an observation differs from its stored snapshot (harness/record/snapshot/): reported as a
  divergence with a unified diff; ``--snapshot-update`` writes them instead, ``--no-snapshots``
  skips both. Stored snapshots no scenario matches are listed, and removed by ``--snapshot-update``
  when the run covers the whole catalog (built-in included, no ``--profile`` or ``-k``, no invalid file);
- under ``--baseline FILE`` (harness/record/baseline.py), a failure is not listed or a listed one
  passes now (stale); listed failures pass. ``--write-baseline FILE`` writes one;
- nothing ran: every scenario was skipped (no profile or tool of the target's matched);
- a workspace could not be removed.

The Markdown and HTML reports (the matrix of every target) are written at the end.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any

from harness.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from harness.cli.console import make_console
from harness.run.options import RunOptions
from harness.targets.base import spec_slug
from harness.util import collector
from harness.util.printable import shown


def state_dir() -> Path | None:
    """Returns where the last run's results are kept (for ``show``, ``--lf``): $HARNESS_STATE_DIR or
    ./.harness; None when ./.harness is a symbolic link (a checkout's, say: never written through)."""
    named = os.environ.get("HARNESS_STATE_DIR")
    if named:
        return Path(named)
    default = Path(".harness")
    return None if default.is_symlink() else default


def run(options: RunOptions) -> int:
    """Runs ``harness run`` with these options; returns the exit code."""
    from harness.run import assemble
    from harness.scenario import catalog
    from harness.scenario.model import Result, Scenario, Verdict

    console = make_console(options.color)
    try:
        targets = assemble.targets(options)
    except ValueError as exc:  # an unknown target, a binding with mistakes (file:line: [field] message), refused isolation
        console.print(f"[red]error:[/red] {escape(shown(str(exc)))}", soft_wrap=True)
        return EXIT_USAGE
    cat = catalog.load_with(options.scenarios, builtin=options.builtin)
    if options.usage_error():
        console.print(f"[red]error:[/red] {options.usage_error()}")
        return EXIT_USAGE
    unknown = cat.unknown_profiles(options.profiles)
    if unknown:  # a typo must not silently narrow the run
        console.print(f"[red]error:[/red] {escape(unknown)}", soft_wrap=True)
        return EXIT_USAGE
    scenarios = cat.select(profiles=options.profiles, keyword=options.keyword)
    if len(targets) > 1:  # a campaign is split by target, so each target's report stays whole
        targets = [target for target in targets if options.in_shard(target.spec)]
    else:
        scenarios = [scenario for scenario in scenarios if options.in_shard(scenario.id)]
    if not targets:
        console.print("[yellow]no target in this shard[/yellow]")
        return EXIT_OK
    broken = [Result(Scenario(id=f"<invalid> {problem.file}", profile="?", title="invalid scenario file",
                              source=str(problem.file), steps=(), file=problem.file, line=problem.line),
                     Verdict.ERROR, str(problem)) for problem in cat.problems]
    if len(targets) == 1:  # each shard's report holds its own part of them, so merged shards hold each once
        broken = [result for result in broken if options.in_shard(result.id)]
    for problem in cat.problems:
        console.print(f"[red]invalid {file_kind(problem)}:[/red] {escape(shown(str(problem)))}", highlight=False, soft_wrap=True)
    if not scenarios and not broken:
        if options.shard and not cat.problems:
            console.print("[yellow]no scenario in this shard[/yellow]")
            return EXIT_OK
        console.print("[yellow]no scenario selected[/yellow]")
        return EXIT_USAGE
    if options.last_failed:
        scenarios = _last_failed(console, scenarios, targets)
    for target in targets:  # each runner of the target (in this process or a worker) repeats each scenario
        target.repeat = options.repeat
        target.repeat_key = functools.partial(observed_behaviour, masks=target.snapshot_masks)

    from harness.report import github, stream  # the terminal report (and rich) once the run has ended
    several = len(targets) > 1
    # Each result goes to the reports as it is produced, in catalog order (harness/report/stream.py).
    try:
        reports = stream.Reports(options, broken, several=several, state=state_dir(),
                                 matrix=bool(options.markdown or options.html or github.summary_wanted()),
                                 slugs=[target.slug for target in targets])
    except OSError as exc:
        console.print(f"[red]error:[/red] cannot write a report: {escape(shown(str(exc)))}", highlight=False)
        return EXIT_USAGE
    try:
        with collector.frozen():  # modules, the catalog, the targets: out of the collector's full walks
            runs = _run_with_progress(options, targets, scenarios, console, reports.add)
    except BaseException:  # Ctrl-C, SIGTERM: the report files are completed with what ran, marked so
        reports.close(interrupted=True)
        raise
    try:
        reports.finish(runs)
        bad = False
        for target_run in runs:
            bad = _report_target(options, console, cat, target_run, reports, several=several) or bad
    finally:
        reports.close()
    tallies = [reports.tally(run) for run in runs]
    lost = reports.lost + write_grid_reports(options, cat, runs, reports.columns())
    for line in lost:  # one line each, naming the file; the other reports were written
        console.print(f"[red]error:[/red] {escape(shown(line))}", highlight=False, soft_wrap=True)
    if options.exitfirst and any(tally.verdicts[Verdict.FAIL] or tally.verdicts[Verdict.ERROR] for tally in tallies):
        console.print("[yellow]stopped at the first failure (-x)[/yellow]")
    if several:  # before the annotations: the table shows what candidates said of themselves (hello)
        from harness.report import terminal
        console.print(terminal.targets_table(runs, tallies=tallies))
    # Last: it reads workflow commands again (GitHub Actions), and prints only the harness's own.
    github.report(console, runs, failures=[tally.failures for tally in tallies], columns=reports.columns())
    said = None  # said once, when a candidate ran, after its report (an in-process run never tries bwrap)
    if not options.quiet and any(not run.start_error for run in runs) and any(not target.in_process for target in targets):
        _, said = options.sandbox_decision()
    if said is not None:
        make_console(options.color, stderr=True, highlight=False).print(unconfined_note(said), style="dim")
    return exit_code(invalid_files=bool(cat.problems), lost_reports=bool(lost), failed=bad)


def unconfined_note(said: str) -> str:
    """Returns the one line a run without the sandbox says: why, and what is still detected."""
    return (f"note: {said}; detected are writes around each workspace (canaries, siblings, hard links) and, in "
            "$HOME, the temp roots and the harness's folders, entries named like the scenario's paths (any entry "
            "of the candidate's user under --run-as); nothing else (docs/security.md)")


def exit_code(*, invalid_files: bool, failed: bool, lost_reports: bool = False) -> int:
    """Returns the exit code of a run that ran: 2 when a scenario or profile file was invalid or a report
    could not be written, else 1 when a target failed (:func:`target_failed`), else 0. (Bad usage ends a
    run before it runs: 2.)"""
    if invalid_files or lost_reports:
        return EXIT_USAGE
    return EXIT_FAILED if failed else EXIT_OK


def target_failed(*, verdicts: bool, snapshots: bool, leftovers: bool, nothing_ran: bool) -> bool:
    """Returns True when one target's run fails ``harness run``: a ``fail`` or ``error`` verdict (under
    ``--baseline``: a new failure or a stale entry), an observation that differs from its snapshot
    (or a baseline that could not be written), a workspace left on disk, or nothing ran."""
    return verdicts or snapshots or leftovers or nothing_ran


def file_kind(problem) -> str:
    """Returns what kind of file a problem is in: a profile (profile.yaml) or a scenario file."""
    from harness.scenario.profiles import FILE_NAME
    return "profile" if Path(problem.file).name == FILE_NAME else "scenario"


#: A progress bar appears only once a run has taken this long (a short run prints nothing it then erases).
PROGRESS_AFTER = 2.0


def _last_failed(console: Any, scenarios: list, targets: list) -> list:
    """Returns the scenarios that failed last time on these targets (``--lf``); all when none did."""
    from harness.record import lastfailed
    state = state_dir()
    # Under the name the reports save them (harness/report/stream.py): the spec's, known before the
    # target starts (a cmd: target's own slug comes from its hello, once it runs).
    failed = lastfailed.load(state, [spec_slug(target.spec) for target in targets]) if state is not None else set()
    chosen = [scenario for scenario in scenarios  # a renamed scenario that failed under its former id too
              if scenario.id in failed or any(former in failed for former in scenario.former_ids)]
    if not chosen:
        console.print("--lf: no recorded failure among the selected scenarios; running them all")
        return scenarios
    console.print(f"--lf: running the {len(chosen)} scenario(s) that failed last time "
                  f"({len(scenarios) - len(chosen)} deselected)")
    return chosen


def _run_with_progress(options: RunOptions, targets: list, scenarios: list, console: Any, emit: Any) -> list:
    """Runs the scenarios, with a progress bar on a terminal; ``emit(target_run, result)`` takes each
    result in catalog order (the reports), and no result is kept beyond it."""
    from harness.run import division, workers
    from harness.scenario.model import Verdict
    failed: list[bool] = []  # -x: set by the first fail or error; no scenario starts after it
    stop = (lambda: bool(failed)) if options.exitfirst else None
    jobs = options.jobs if options.jobs is not None else division.auto_jobs(targets, scenarios)
    run = functools.partial(workers.run, targets, scenarios, jobs=jobs, tmp=options.workspace_parent(),
                            record_states=options.records_states, stop=stop, emit=emit, keep=False)

    # In a run of several processes the rest of this one's work (the reports) is shared with them,
    # its end is not: the terminal report's modules (rich) are imported with the first result.
    pending = [True] if jobs > 1 else []

    def seen(result) -> None:
        if pending:
            pending.clear()
            from harness.report import terminal  # noqa: F401
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            failed.append(True)
    if options.quiet or not console.is_terminal:
        return run(on_result=lambda index, r: seen(r))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("[dim]{task.fields[current]}"), console=console.made(), transient=True)
    what = targets[0].spec if len(targets) == 1 else f"{len(targets)} targets"
    task = progress.add_task(f"running on {what}", total=len(scenarios) * len(targets), current="")
    started = time.perf_counter()

    def advance(index: int, result) -> None:
        seen(result)
        progress.update(task, advance=1, current=result.id)
        if not progress.live.is_started and time.perf_counter() - started >= PROGRESS_AFTER:
            progress.start()  # only a run longer than a couple of seconds gets a bar
    try:
        return run(on_result=advance)
    finally:
        if progress.live.is_started:
            progress.stop()


def _report_target(options: RunOptions, console: Any, cat, target_run, reports, *, several: bool) -> bool:
    """Prints what concerns one target (from its tally: counts and failures); returns True when it failed."""
    from rich.text import Text

    from harness.report import terminal
    tally = reports.tally(target_run)
    info, spec = target_run.info, target_run.spec
    if several:
        console.rule(f"[bold]{spec}[/bold]", align="left")
    brief = target_run.start_reason
    not_run = sum(1 for result in tally.failures if brief is not None and result.reason == brief)
    if target_run.start_error:  # said once, with the count; each scenario's error then says only that
        terminal.print_start_error(console, target_run.start_error, not_run)
    bad, target_run.baseline = judge_baseline(options, console, tally)
    title = f"{info.name} {info.version}".strip() + f" — {tally.count} scenarios in {target_run.seconds:.2f}s"
    started = not (target_run.start_error and not_run == tally.count)
    # The matrix and the failures by cause first, then the details (80 columns).
    if not several and started:
        console.print(terminal.summary_table(tally, title))
    for line in terminal.aspect_lines(tally):
        console.print(Text(line), highlight=False, soft_wrap=True)
    for line in terminal.skip_reasons(tally):
        console.print(Text(shown(line), style="yellow"), highlight=False, soft_wrap=True)
    for line in terminal.flaky_lines(tally, console.width):
        console.print(Text(line, style="yellow"), highlight=False, soft_wrap=True)
    groups = tally.groups(brief=brief)
    terminal.print_groups(console, groups)
    if options.quiet:
        terminal.print_failing_lines(console, tally.failures, brief=brief)
    else:
        terminal.print_failures(console, tally.failures, brief=brief, groups=groups)
    terminal.print_leftovers(console, target_run.leftovers)  # what the run left on disk fails it
    if tally.nothing_ran:  # every scenario skipped: a green run would say the candidate conforms
        console.print(Text(shown(f"{spec}: {tally.nothing_ran}"), style="bold red"), highlight=False, soft_wrap=True)
    snapshots = after_run(options, console, cat, tally, reports.snapshots(target_run), spec)
    return target_failed(verdicts=bad, snapshots=snapshots, leftovers=bool(target_run.leftovers),
                         nothing_ran=bool(tally.nothing_ran))



ORPHANS_SHOWN = 20


def escape(text: str) -> str:
    """Returns ``text`` with rich markup escaped (rich is imported only once a run reports)."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)


def judge_baseline(options: RunOptions, console: Any, tally: Any) -> tuple[bool, dict[str, Any] | None]:
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


def after_run(options: RunOptions, console: Any, catalog: Any, tally: Any, snapshots: Any, spec: str) -> bool:
    """Runs the after-run steps of target ``spec``: the snapshots compared as the results came
    (``snapshots``, a harness/record/snapshot/ ``Checker``, or None) are reported, a baseline written from
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
            count = baseline.write(options.write_baseline, real, header=f"target: {spec}",
                                   masks=snapshots.masks if snapshots is not None else ())
        except OSError as exc:  # a folder that is not there, or not writable: said, and the run fails
            console.print(f"baseline: cannot write {shown(str(options.write_baseline))}: "
                          f"{shown(exc.strerror or str(exc))}", highlight=False, markup=False)
            return True
        console.print(f"baseline: wrote {count} entr{'y' if count == 1 else 'ies'} to {options.write_baseline}",
                      highlight=False)
    return failed


def _snapshots(options: RunOptions, console: Any, catalog: Any, checker: Any) -> bool:
    store = checker.store
    # Removing orphans needs the whole known catalog: no selection, no broken file, the built-in included.
    unfiltered = not options.narrowed and not catalog.problems
    outcome = checker.finish((s.id for s in catalog.scenarios), prune=unfiltered)
    if outcome.diverged:  # (the grid's module, and the observations' and difflib with it: only to show a diff)
        from harness.report.grid import print_diff
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


def write_grid_reports(options: RunOptions, catalog: Any, runs: list[Any], columns: Any = None) -> list[str]:
    """Writes the Markdown and HTML reports: the matrix of every target's results (TargetRun), or of
    the columns ``columns(runs)`` gives (harness/record/observations.py ``Collector``, filled as the run went).
    Returns one line per report that could not be written (a full disk): the other is still written."""
    if not (options.markdown or options.html):
        return []
    from harness.record import observations
    from harness.report import grid as matrix_mod
    columns = columns(runs) if columns is not None else observations.from_runs(runs)
    grid = matrix_mod.build(columns, {s.id: s for s in catalog.scenarios})
    title = f"File-tool conformance: {', '.join(run.spec for run in runs)}"
    from harness.report import html, markdown
    lost = []
    for path, writer in ((options.markdown, markdown), (options.html, html)):
        if path:
            try:
                writer.write(path, grid, title=title)
            except OSError as exc:
                lost.append(f"cannot write a report: {path}: {exc.strerror or exc}")
    return lost


def observed_behaviour(result: Any, masks: Any = ()) -> Any:
    """Returns what ``--repeat`` compares between the runs of a scenario: the observation as its snapshot
    records it (volatile values masked, harness/record/snapshot/), or None when nothing stable was observed."""
    from harness.record import snapshot
    data = result.as_dict()
    return snapshot.behaviour(snapshot.document(data, masks)) if snapshot.is_recordable(data) else None
