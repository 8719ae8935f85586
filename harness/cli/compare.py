"""The ``harness diff`` and ``harness report`` commands: comparing and reporting recorded behaviour.

Both take *sources* (harness/record/observations.py): JSON reports from ``harness run --json``, snapshot folders
(``snapshots/<target>``), or target specs to run now on the selected scenarios.

``harness diff A B`` lists, scenario by scenario, only where the two recorded behaviours differ,
with the unified diff, plus the scenarios present (observed) on one side only. Exit 0 when the two
agree everywhere, 1 when anything differs, 2 for bad usage.

``harness report SOURCE...`` prints the matrix (scenarios by profile and tool against the sources,
the first source being the base of comparison), a summary line per source and the open questions;
``--markdown``, ``--html`` and ``--json`` write the other formats. Exit 0, or 2 for bad usage: a
report informs, ``run`` and ``diff`` judge.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.cli.console import add_color, make_console
from harness.run.options import RunOptions, add_arguments
from harness.util.printable import shown

EXIT_OK, EXIT_DIFFERENT, EXIT_USAGE = 0, 1, 2


def escape(text: str) -> str:
    """Returns ``text`` with rich markup escaped (rich is imported only when a command prints)."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)
SOURCE_HELP = "a JSON report (harness run --json), a snapshot folder (snapshots/<target>), or a target to run"


def add_parsers(sub: Any, add_selection: Callable[[argparse.ArgumentParser], None]) -> None:
    """Adds the ``diff`` and ``report`` subcommands."""
    diff = sub.add_parser("diff", help="where two targets' (or snapshot folders') recorded behaviours differ")
    diff.add_argument("a", metavar="A", help=SOURCE_HELP)
    diff.add_argument("b", metavar="B", help=SOURCE_HELP)
    add_selection(diff)
    add_arguments(diff, ("target",))  # how targets run now are reached: as for harness run
    diff.add_argument("-q", "--quiet", action="store_true", help="list the scenarios only, no diffs")
    diff.add_argument("--aspects", metavar="A,B", default=None,
                      help="compare only these aspects of the behaviour (effects, outcome, content, output)")
    add_color(diff)
    diff.set_defaults(handler=cmd_diff)

    report = sub.add_parser("report", help="the conformance matrix over several sources, in several formats")
    report.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP + " (the first is the base)")
    add_selection(report)
    add_arguments(report, ("target",))
    report.add_argument("--markdown", type=Path, metavar="FILE", help="write the Markdown report to FILE")
    report.add_argument("--html", type=Path, metavar="FILE", help="write the self-contained HTML report to FILE")
    report.add_argument("--json", type=Path, metavar="FILE", help="write the combined JSON report to FILE")
    report.add_argument("--title", default="File-tool conformance", help="the report's title")
    report.add_argument("-q", "--quiet", action="store_true",
                        help="print only the summary lines and each failing scenario on one line")
    report.add_argument("--matrix", action="store_true", help="print only the matrix and its legend")
    report.add_argument("--against", type=Path, metavar="OLD.json",
                        help="an earlier run's JSON report: first list each scenario as a new failure, still "
                             "failing, fixed, new or gone (as harness compare does)")
    add_color(report)
    report.set_defaults(handler=cmd_report)


def _load(args: argparse.Namespace, names: list[str], console: Any,
          several: bool = False) -> tuple[list[Any], dict[str, Any]] | None:
    from harness.record import observations as sources
    from harness.scenario import catalog as catalog_mod
    cat = catalog_mod.load_with(args.scenarios, builtin=not args.no_builtin)
    if unknown := cat.unknown_profiles(args.profile):
        console.print(f"[red]error:[/red] {escape(unknown)}")
        return None
    scenarios = cat.select(profiles=args.profile, keyword=args.keyword)
    wanted = {s.id for s in scenarios}
    known = {s.id for s in cat.scenarios}
    options = RunOptions.from_namespace(args)
    loaded = []
    for name in names:
        try:
            found = (sources.resolve_all(name, scenarios, options) if several
                     else [sources.resolve(name, scenarios, options)])
        except ValueError as exc:
            console.print(f"[red]error:[/red] {escape(str(exc))}")
            return None
        for source in found:
            if args.profile or args.keyword:  # a selection narrows reports and folders too
                source.observations = {k: v for k, v in source.observations.items()
                                       if k in wanted or (k not in known and _selected(args, v))}
            loaded.append(source)
    if several:
        loaded = sources.merge_shards(loaded)
    sources.unique_labels(loaded)
    return loaded, {s.id: s for s in cat.scenarios}


def _selected(args: argparse.Namespace, obs: Any) -> bool:
    """Returns True when a scenario the catalog does not know still fits the selection (by profile)."""
    return not args.keyword and (not args.profile or obs.profile in args.profile)


def cmd_diff(args: argparse.Namespace) -> int:
    """Prints where two sources' recorded behaviours differ; returns 1 when they do."""
    from harness.record import snapshot as snap
    from harness.report.grid import print_diff
    console = make_console(args.color, soft_wrap=True)
    loaded = _load(args, [args.a, args.b], console)
    if loaded is None:
        return EXIT_USAGE
    (a, b), _ = loaded
    from harness.scenario import aspects
    try:
        among = aspects.parse_selection(args.aspects) if args.aspects else None
    except ValueError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    # Ids, reasons and labels come from reports (a candidate's reason through `run --json`): shown
    # escaped, as every other command shows them, never a terminal's control sequence.
    label_a, label_b = shown(a.label), shown(b.label)
    recorded_a, recorded_b = a.recorded(), b.recorded()
    differing, only_a, only_b = [], [], []
    for scenario_id in sorted(set(recorded_a) | set(recorded_b)):
        old, new = recorded_a.get(scenario_id), recorded_b.get(scenario_id)
        if old is None:
            only_b.append(scenario_id)
        elif new is None:
            only_a.append(scenario_id)
        elif not old.same_behaviour(new):
            # which aspects differ (harness/scenario/aspects.py); with --aspects only those count and are shown
            which = aspects.differing(old.document or {}, new.document or {}, among or aspects.ASPECTS)
            if among is not None and not which:
                continue
            differing.append(scenario_id)
            console.print(f"\n[bold yellow]DIFFERS[/bold yellow] [bold]{escape(shown(scenario_id))}[/bold]"
                          + (f" [dim]({escape(', '.join(which))})[/dim]" if which else ""))
            if not args.quiet and among is None:
                print_diff(console, snap.unified_diff(old.text or "", new.text or "", f"{a.label}/{scenario_id}",
                                                      f"{b.label}/{scenario_id}"))
            elif not args.quiet:
                import yaml
                texts = [yaml.safe_dump({aspect: aspects.project(doc.document or {}, aspect) for aspect in which},
                                        allow_unicode=True, sort_keys=False) for doc in (old, new)]
                print_diff(console, snap.unified_diff(texts[0], texts[1], f"{a.label}/{scenario_id}",
                                                      f"{b.label}/{scenario_id}"))
    for label, other, ids in ((label_a, b, only_a), (label_b, a, only_b)):
        for scenario_id in ids:
            obs = other.observations.get(scenario_id)
            why = f"{obs.verdict}: {obs.reason}" if obs is not None and obs.verdict else "absent"
            console.print(f"[bold cyan]ONLY IN[/bold cyan] {escape(label)}: {escape(shown(scenario_id))} "
                          f"[dim](other side: {escape(shown((why.splitlines() or [''])[0][:160]))})[/dim]")
    same = len(set(recorded_a) & set(recorded_b)) - len(differing)
    console.print(f"\n{escape(label_a)} vs {escape(label_b)}: {len(differing)} differ, {same} same, "
                  f"{len(only_a)} only in {escape(label_a)}, {len(only_b)} only in {escape(label_b)}")
    return EXIT_DIFFERENT if differing or only_a or only_b else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    """Builds the matrix over the sources; prints it and writes the asked formats."""
    from harness.report import grid as matrix_mod
    console = make_console(args.color, soft_wrap=False)  # a report is read by people: wrapped to the width
    loaded = _load(args, list(args.sources), console, several=True)
    if loaded is None:
        return EXIT_USAGE
    sources, scenarios = loaded
    if args.against:  # new failures first (harness compare); then the matrix of the sources
        from harness.record import observations
        from harness.report import compare
        try:
            outcome = compare.compare_sources(observations.from_reports(args.against),
                                              [source for source in sources if source.kind != "snapshots"],
                                              str(args.against), ", ".join(args.sources))
        except ValueError as exc:
            console.print(f"[red]error:[/red] {escape(shown(str(exc)))}", soft_wrap=True)
            return EXIT_USAGE
        console.print(escape(compare.terminal(outcome, width=console.width)), soft_wrap=True, highlight=False)
        console.print()
    grid = matrix_mod.build(sources, scenarios)
    if args.matrix:
        console.print(matrix_mod.table(grid))
        console.print(matrix_mod.legend(grid, matrix_mod.short_labels(grid)))
    elif args.quiet:
        from harness.report.wrap import cut
        for label in grid.labels:
            console.print(grid.summary_line(label), soft_wrap=True)  # one line each, for scripts
        for row in grid.rows:  # then each failing scenario on one line
            for label, cell in row.cells.items():
                if cell.verdict in ("fail", "error") and not cell.not_started and cell.observation is not None:
                    reason = cell.observation.reason.splitlines()[0] if cell.observation.reason else ""
                    line = f"{cell.verdict.upper()} {row.id}" + (f" on {label}" if len(grid.labels) > 1 else "")
                    console.print(escape(cut(shown(f"{line}  {reason}"), console.width)), soft_wrap=True,
                                  highlight=False)
    else:
        matrix_mod.print_matrix(console, grid)
        if grid.open_questions:
            console.print(matrix_mod.open_questions_table(grid))
    if args.markdown:
        from harness.report import markdown
        markdown.write(args.markdown, grid, title=args.title)
    if args.html:
        from harness.report import html
        html.write(args.html, grid, title=args.title)
    if args.json:
        text = json.dumps(matrix_mod.as_json(grid), indent=1, ensure_ascii=False, default=str)
        from harness.util.fileio import write_replacing
        write_replacing(args.json, text + "\n")
    return EXIT_OK
