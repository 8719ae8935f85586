"""The ``harness`` command: run, list, lint and show scenarios.

Only what every command needs is imported at the top: each command imports its own (rich, the
runner, the targets), so ``harness list`` starts fast.

Exit codes of ``run``: 0 when nothing failed or errored, 1 when something did, 2 for bad usage or
invalid scenario files (the valid ones still run, the broken ones are reported as errors). An
observation that differs from its stored snapshot also fails the run, and ``--baseline`` changes
what a failure is (harness/cli/postrun.py). ``diff`` and ``report`` live in harness/cli/compare.py.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from harness.run.options import RunOptions, default_jobs, timeout_argument
from harness.util import processes
from harness.cli.console import add_color, make_console
from harness.util.printable import shown
from harness.targets.base import spec_slug

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

def state_dir() -> Path | None:
    """Returns where the last run's results are kept (for ``show``, ``--lf``): $HARNESS_STATE_DIR or
    ./.harness; None when ./.harness is a symbolic link (a checkout's, say: never written through)."""
    named = os.environ.get("HARNESS_STATE_DIR")
    if named:
        return Path(named)
    default = Path(".harness")
    return None if default.is_symlink() else default


def add_selection(parser: argparse.ArgumentParser) -> None:
    """Adds the options that choose scenarios: --scenarios, --no-builtin, --profile, -k."""
    parser.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR",
                        help="also load scenario files from DIR (repeatable)")
    parser.add_argument("--no-builtin", action="store_true", help="do not load the built-in catalog")
    parser.add_argument("--profile", action="append", default=[], help="only this profile (repeatable)")
    parser.add_argument("-k", dest="keyword", metavar="EXPR", type=keyword_expression,
                        help="only scenarios whose id, title or tags match (pytest -k syntax)")


def keyword_expression(text: str) -> str:
    """The ``-k`` option's type: an expression pytest's grammar takes, else bad usage (exit 2) saying why."""
    from harness.scenario.catalog import compile_keyword
    try:
        compile_keyword(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(shown(str(exc))) from None
    return text


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """Adds --target and the run-wide target settings."""
    from harness.targets import TARGET_HELP
    parser.add_argument("--target", action="append", default=None,
                        help=f"the target: {TARGET_HELP} (default: reference); repeatable: each target runs the same scenarios")
    parser.add_argument("--timeout", type=timeout_argument, default=10.0,
                        help="per-call timeout in seconds, above 0 and at most 86400 (default 10)")
    parser.add_argument("--run-as", metavar="USER", help="run the candidate as USER (realises permission scenarios)")
    parser.add_argument("--sandbox", action="store_true", help="run the candidate with all but its workspace read-only")
    # cmd: and mcp: targets name and shape their tools their own way (harness/targets/bindings.py, docs/bindings.md).
    parser.add_argument("--binding", type=Path, metavar="FILE",
                        help="cmd:/mcp: the profile's tools mapped onto the target's (YAML, docs/bindings.md)")
    parser.add_argument("--tool-map", action="append", default=[], metavar="TOOL=NAME",
                        help="cmd:/mcp: call the profile's TOOL as the target's NAME; TOOL.ARG=NAME renames an argument (repeatable)")
    parser.add_argument("--tool-map-file", type=Path, metavar="FILE", help="cmd:/mcp: tool and argument renames from a YAML file")


def observed_behaviour(result: Any) -> Any:
    """Returns what ``--repeat`` compares between the runs of a scenario: the observation as its snapshot
    records it (volatile values masked, harness/record/snapshot.py), or None when nothing stable was observed."""
    from harness.record import snapshot
    data = result.as_dict()
    return snapshot.behaviour(snapshot.document(data)) if snapshot.is_recordable(data) else None


def _repeat(text: str) -> int:
    """The ``--repeat`` option's type: a count from 1 to 100."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {shown(text)!r}") from None
    if not 1 <= count <= 100:
        raise argparse.ArgumentTypeError("give a count from 1 to 100")
    return count


def _shard(text: str) -> tuple[int, int]:
    from harness.run.options import parse_shard
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``harness`` command."""
    import harness
    from harness.cli import compare as cli_compare
    from harness.cli import postrun
    parser = argparse.ArgumentParser(prog="harness", description="Conformance harness for AI coding agents' file tools.")
    parser.add_argument("--version", action="version", version=f"harness {harness.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run scenarios against a target and report")
    add_selection(run)
    add_target_options(run)
    run.add_argument("--jobs", "-j", type=int, default=default_jobs(), metavar="N",
                     help=f"worker processes (default: the number of cores, here {default_jobs()}; 1: all in this process)")
    run.add_argument("--tmp", type=Path, metavar="DIR",
                     help="the folder that holds the workspaces (default: /dev/shm where present, else $TMPDIR)")
    run.add_argument("--shard", type=_shard, metavar="K/N",
                     help="run only part K of N (by a stable hash of each scenario id; with several "
                          "targets, of each target spec): N CI jobs cover the run once; harness report merges them")
    run.add_argument("--json", type=Path, metavar="FILE",
                     help="write the JSON report to FILE; with several targets FILE holds them all, "
                          "or an existing folder gets one <target>.json each (<target>-2.json for a second target of that name)")
    run.add_argument("--junit", type=Path, metavar="FILE",
                     help="write a JUnit XML report to FILE (an existing folder: one <target>.xml per target, "
                          "<target>-2.xml for a second target of that name)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress, no failure details")
    run.add_argument("--aspects", type=_aspect_selection, metavar="A,B",
                     help="judge only these aspects (effects, outcome, output); the others are recorded "
                          "and never fail the run (docs/scenario-format.md, Aspects)")
    run.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first fail or error")
    run.add_argument("--repeat", type=_repeat, default=1, metavar="N",
                     help="run each scenario N times (2 to 100); a scenario whose verdict or observation varies "
                          "is marked flaky in every report")
    run.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                     help="only the scenarios that failed or errored last time on this target (all when none did)")
    add_color(run)
    postrun.add_options(run)  # snapshots, baseline, --markdown/--html
    run.set_defaults(handler=cmd_run)

    lst = sub.add_parser("list", help="list scenarios")
    add_selection(lst)
    lst.set_defaults(handler=cmd_list)

    lint = sub.add_parser("lint", help="validate every scenario and profile file (exit 1 on a scenario problem, 2 on a profile problem)")
    lint.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    lint.add_argument("--no-builtin", action="store_true")
    lint.set_defaults(handler=cmd_lint)

    cov = sub.add_parser("coverage", help="map each seed section to the scenarios citing it")
    cov.add_argument("--seeds", type=Path, default=None, help="the seeds folder (default ../shared/seeds)")
    cov.add_argument("--markdown", type=Path, metavar="FILE", help="write the table as Markdown to FILE")
    cov.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    cov.add_argument("--no-builtin", action="store_true")
    cov.set_defaults(handler=cmd_coverage)

    prof = sub.add_parser("profiles", help="list the profiles, print one's reference page, or write them all")
    prof.add_argument("name", nargs="?", help="print this profile's reference page (Markdown)")
    prof.add_argument("--markdown", type=Path, metavar="DIR", help="write <DIR>/<profile>.md for each profile")
    prof.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    prof.add_argument("--no-builtin", action="store_true")
    prof.set_defaults(handler=cmd_profiles)

    show = sub.add_parser("show", help="show a scenario and its last observation")
    show.add_argument("id")
    show.add_argument("--target", default=None, help="whose last observation (default: the last run)")
    show.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    show.add_argument("--no-builtin", action="store_true")
    add_color(show)
    show.set_defaults(handler=cmd_show)

    cli_compare.add_parsers(sub, add_selection)  # diff, report
    from harness.cli import history
    history.add_parsers(sub)  # compare, site
    from harness.drivers import fuzz
    fuzz.add_parser(sub)
    from harness.drivers import discover
    discover.add_parser(sub)  # discover: an MCP server's tools, a binding skeleton
    return parser


def _catalog(args: argparse.Namespace):
    from harness.scenario import catalog
    return catalog.load_with(args.scenarios, builtin=not args.no_builtin)


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the selected scenarios and reports; returns the exit code."""
    return run(RunOptions.from_namespace(args))


def run(options: RunOptions) -> int:
    """Runs ``harness run`` with these options; returns the exit code."""
    from rich.markup import escape
    from harness.scenario import catalog
    from harness.cli import postrun
    from harness.scenario.model import Result, Scenario, Verdict
    from harness.targets import make_target

    console = make_console(options.color)
    cat = catalog.load_with(options.scenarios, builtin=options.builtin)
    try:
        targets = [make_target(spec, **options.target_options()) for spec in options.targets]
    except ValueError as exc:  # an unknown target, or a binding with mistakes: file:line: [field] message
        console.print(f"[red]error:[/red] {escape(shown(str(exc)))}", soft_wrap=True)
        return EXIT_USAGE
    if options.usage_error():
        console.print(f"[red]error:[/red] {options.usage_error()}")
        return EXIT_USAGE
    if cat.unknown_profiles(options.profiles):  # a typo must not silently narrow the run
        console.print(f"[red]error:[/red] {escape(cat.unknown_profiles(options.profiles))}", soft_wrap=True)
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
        console.print(f"[red]invalid {_file_kind(problem)}:[/red] {escape(shown(str(problem)))}", highlight=False, soft_wrap=True)
    if not scenarios and not broken:
        if options.shard and not cat.problems:
            console.print("[yellow]no scenario in this shard[/yellow]")
            return EXIT_OK
        console.print("[yellow]no scenario selected[/yellow]")
        return EXIT_USAGE
    if options.last_failed:
        scenarios = _last_failed(console, scenarios, targets)
    for target in targets:  # each runner of the target (in this process or a worker) repeats each scenario
        target.repeat, target.repeat_key = options.repeat, observed_behaviour

    from harness.report import github, stream, terminal
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
    if not options.sandbox and not options.quiet and any(not run.start_error for run in runs) \
            and any(not target.in_process for target in targets):  # said when a candidate ran, after its report
        make_console(options.color, stderr=True, highlight=False).print(
            "note: without --sandbox a candidate can write anywhere its user can; detected are writes around each "
            "workspace (canaries, siblings, hard links) and, in $HOME, the temp roots and the harness's folders, "
            "entries named like the scenario's paths (any entry of the candidate's user under --run-as); "
            "nothing else (docs/security.md)", style="dim")
    postrun.reports(options, cat, runs, reports.columns())
    if options.exitfirst and any(tally.verdicts[Verdict.FAIL] or tally.verdicts[Verdict.ERROR] for tally in tallies):
        console.print("[yellow]stopped at the first failure (-x)[/yellow]")
    if several:  # before the annotations: the table shows what candidates said of themselves (hello)
        console.print(terminal.targets_table(runs, tallies=tallies))
    # Last: it reads workflow commands again (GitHub Actions), and prints only the harness's own.
    github.report(console, runs, failures=[tally.failures for tally in tallies], columns=reports.columns())
    if cat.problems:
        return EXIT_USAGE
    return EXIT_FAILED if bad else EXIT_OK


def _aspect_selection(text: str) -> tuple[str, ...]:
    from harness.scenario.aspects import parse_selection
    try:
        return parse_selection(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _file_kind(problem) -> str:
    """Returns what kind of file a problem is in: a profile (profile.yaml) or a scenario file."""
    from harness.scenario.profiles import FILE_NAME
    return "profile" if Path(problem.file).name == FILE_NAME else "scenario"


#: A progress bar appears only once a run has taken this long (a short run prints nothing it then erases).
PROGRESS_AFTER = 2.0


def _last_failed(console: Any, scenarios: list, targets: list) -> list:
    """Returns the scenarios that failed last time on these targets (``--lf``); all when none did."""
    from harness.record import lastfailed
    state = state_dir()
    failed = lastfailed.load(state, [target.slug for target in targets]) if state is not None else set()
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
    from harness.run import workers
    from harness.scenario.model import Verdict
    failed: list[bool] = []  # -x: set by the first fail or error; no scenario starts after it
    stop = (lambda: bool(failed)) if options.exitfirst else None
    run = functools.partial(workers.run, targets, scenarios, jobs=options.jobs, tmp=options.workspace_parent(),
                            record_states=options.records_states, stop=stop, emit=emit, keep=False)

    def seen(result) -> None:
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            failed.append(True)
    if options.quiet or not console.is_terminal:
        return run(on_result=lambda index, r: seen(r))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("[dim]{task.fields[current]}"), console=console, transient=True)
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
    from harness.cli import postrun
    from harness.report import terminal
    tally = reports.tally(target_run)
    info, spec = target_run.info, target_run.spec
    if several:
        console.rule(f"[bold]{spec}[/bold]", align="left")
    brief = target_run.start_reason
    not_run = sum(1 for result in tally.failures if brief is not None and result.reason == brief)
    if target_run.start_error:  # said once, with the count; each scenario's error then says only that
        terminal.print_start_error(console, target_run.start_error, not_run)
    bad, target_run.baseline = postrun.judge(options, console, tally)
    title = f"{info.name} {info.version}".strip() + f" — {tally.count} scenarios in {target_run.seconds:.2f}s"
    started = not (target_run.start_error and not_run == tally.count)
    # The matrix and the failures by cause first, then the details (80 columns: issue 29).
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
    return postrun.finish(options, console, cat, tally, reports.snapshots(target_run), spec) or bad \
        or bool(target_run.leftovers)


def cmd_list(args: argparse.Namespace) -> int:
    """Lists the selected scenarios: id, profile, title (and ? for open questions)."""
    cat = _catalog(args)
    for problem in cat.problems:
        print(f"invalid scenario: {shown(str(problem))}", file=sys.stderr)
    if cat.unknown_profiles(args.profile):
        print(f"error: {cat.unknown_profiles(args.profile)}", file=sys.stderr)
        return EXIT_USAGE
    for scenario in cat.select(profiles=args.profile, keyword=args.keyword):
        marker = "?" if scenario.open_question else " "
        print(f"{marker} {scenario.id:<60} {scenario.title}")
    return EXIT_USAGE if cat.problems else EXIT_OK


def cmd_lint(args: argparse.Namespace) -> int:
    """Validates every scenario and profile file; prints each problem as file:line: [field] message."""
    cat = _catalog(args)
    for problem in cat.problems:
        print(shown(str(problem)))
    count = len(cat.scenarios)
    if cat.problems:
        print(f"{len(cat.problems)} problem(s) in {len(set(p.file for p in cat.problems))} file(s); "
              f"{count} valid scenario(s)", file=sys.stderr)
        # A broken profile file is bad input to the harness itself, like a broken binding: exit 2.
        return EXIT_USAGE if cat.broken_profiles else EXIT_FAILED
    print(f"{count} scenarios, no problems")
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace) -> int:
    """Prints (or writes) the coverage table; exits 1 when a section is neither covered nor noted."""
    from rich.console import Console
    from rich.table import Table
    from harness.scenario import coverage
    seeds = args.seeds or coverage.seeds_dir()
    if not seeds.is_dir():
        print(f"no seeds folder at {seeds} (use --seeds)", file=sys.stderr)
        return EXIT_USAGE
    cat = _catalog(args)
    sections = coverage.build(seeds, cat.scenarios, coverage.load_notes())
    if args.markdown:
        from harness.util.safepath import write_replacing
        write_replacing(args.markdown, coverage.markdown(sections, len(cat.scenarios)))
    else:
        table = Table(title=f"coverage of {seeds} by {len(cat.scenarios)} scenarios", title_justify="left")
        for column in ("seed", "section", "scenarios", "note"):
            table.add_column(column, justify="right" if column == "scenarios" else "left")
        for section in sections:
            indent = "  " * max(0, section.depth - 2)
            table.add_row(section.seed[:3], indent + section.label, str(len(section.scenarios)), section.note or "")
        Console().print(table)
    missing = coverage.uncovered(sections)
    for section in missing:
        print(f"not covered: {section.seed} {section.label}", file=sys.stderr)
    return EXIT_FAILED if missing else EXIT_OK


def cmd_profiles(args: argparse.Namespace) -> int:
    """Lists the profiles; prints one's reference page; or writes every page (harness/cli/profile_pages.py)."""
    from harness.cli import profile_pages
    cat = _catalog(args)
    for problem in cat.problems:
        print(f"invalid {_file_kind(problem)}: {problem}", file=sys.stderr)
    found = {profile.name: profile for profile in sorted(cat.profiles, key=lambda p: (p.document, p.name))}
    if args.name is not None and args.name not in found:
        print(f"no profile {args.name!r} (known: {', '.join(found)})", file=sys.stderr)
        return EXIT_USAGE
    chosen = [found[args.name]] if args.name else list(found.values())
    if args.markdown:
        for path in profile_pages.write_all(args.markdown, chosen, cat.scenarios):
            print(path)
    elif args.name:
        sys.stdout.write(profile_pages.render(found[args.name], cat.scenarios))
    else:
        for profile in chosen:
            count = sum(1 for s in cat.scenarios if s.profile == profile.name)
            print(f"{profile.name:<24} {count:>4} scenarios  {', '.join(profile.tools)}  ({profile.document})")
    return EXIT_USAGE if cat.broken_profiles else EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """Prints a scenario's file and its last recorded observation."""
    from rich.markup import escape
    from rich.syntax import Syntax
    console = make_console(args.color, soft_wrap=False)
    cat = _catalog(args)
    scenario = cat.by_id(args.id)
    if scenario is None:
        console.print(f"[red]no scenario with id {args.id!r}[/red]")
        return EXIT_USAGE
    console.print(f"[bold]{scenario.id}[/bold]  {scenario.location}")
    console.print(Syntax(shown(scenario.file.read_text("utf-8")), "yaml", line_numbers=True, word_wrap=True) if scenario.file else scenario.raw)
    state = state_dir()
    last = (state or Path(".harness")) / (f"last-{spec_slug(args.target)}.json" if args.target else "last.json")
    try:
        if state is None:
            raise OSError("the state folder is a symbolic link: not read")
        from harness.util import limits
        from harness.util.safepath import read_regular
        document = json.loads(read_regular(last, limits.MAX_REPORT_FILE))
        if not isinstance(document, dict) or not isinstance(document.get("results"), list) or not all(
                isinstance(r, dict) and isinstance(r.get("id"), str) for r in document["results"]):
            raise ValueError("not a harness JSON report")
    except (OSError, ValueError, RecursionError):
        console.print(f"[yellow]no recorded run ({last}); run `harness run` first[/yellow]")
        return EXIT_OK
    found = next((r for r in document["results"] if r["id"] == scenario.id), None)
    target = document.get("target")
    spec = str(target.get("spec", "?")) if isinstance(target, dict) else "?"
    if found is None:
        console.print(f"[yellow]the last run ({escape(shown(spec))}) did not include it[/yellow]")
        return EXIT_OK
    reason = str(found.get("reason") or "")
    console.print(f"\n[bold]last observation[/bold] on {escape(shown(spec))}: {escape(shown(str(found.get('verdict'))))}"
                  + (f" — {escape(shown(reason))}" if reason else ""))
    from rich.json import JSON  # printed wrapped to the width (print_json would let long values run on)
    console.print(JSON(shown(json.dumps({"steps": found.get("steps"), "then": found.get("then")},
                                        ensure_ascii=False, default=str))), soft_wrap=False)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``harness`` command; returns its exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 for --help
        return int(exc.code or 0)
    from harness.report import github
    github.stop_commands()  # under Actions: no candidate's line is read as a workflow command
    try:
        code = args.handler(args)
        processes.checkpoint()  # a signal that arrived during the last clean-up still ends the run as signalled
        return code
    except processes.Terminated as exc:  # SIGTERM / SIGHUP: cleaned up on the way out, as for Ctrl-C
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130
    finally:
        github.resume_commands()  # the step's own commands after the harness are read again


def entry(argv: Sequence[str] | None = None) -> int:
    """The ``harness`` program: :func:`main`, owning its process tree.

    SIGTERM and SIGHUP unwind like Ctrl-C (every target stopped, every workspace removed; exit
    143 / 129). The harness is a child subreaper, and whatever still runs below it when it ends
    (nothing, unless a keeper itself was killed) is killed (harness/util/processes.py).
    """
    processes.own_tree()
    try:
        return main(argv)
    except BaseException as exc:  # before main's own handling began (still importing)
        signum = _terminated_by(exc)
        if signum is None:
            raise
        return 128 + signum
    finally:
        processes.sweep()


def _terminated_by(exc: BaseException | None) -> int | None:
    """Returns the signal number when ``exc`` is, or was raised because of, SIGTERM or SIGHUP.

    A signal that lands while a module is being imported may come out wrapped: an exception in a
    class body's ``__set_name__`` (a dataclass field) is re-raised as a RuntimeError caused by it.
    """
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, processes.Terminated):
            return exc.signum
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


if __name__ == "__main__":
    sys.exit(entry())
