"""The terminal report: failures with expected and observed, then a summary table (rich)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.report.tally import Tally
from harness.scenario.model import Result, Verdict
from harness.util.printable import shown

STYLES = {
    Verdict.PASS: "green",
    Verdict.FAIL: "bold red",
    Verdict.RECORDED: "cyan",
    Verdict.SKIP: "yellow",
    Verdict.ERROR: "bold magenta",
}
KNOWN_STYLE = "dim yellow"


def explain(result: Result, width: int = 80) -> str:
    """Returns a failed or errored result as readable text: each unmet expectation, expected vs observed.

    The id is wrapped at ``/`` to ``width``; a line longer than a payload's room (a PDF's base64) is
    cut in the middle, with its size and digest (harness/report/wrap.py)."""
    from harness.report.wrap import cut_middle, wrap_id
    verdict = result.verdict.value.upper()
    lines = [f"{verdict} " + f"\n{' ' * (len(verdict) + 1)}".join(wrap_id(result.id, width - len(verdict) - 1)),
             f"  {result.scenario.location}", f"  {result.scenario.title}", f"  source: {result.scenario.source}"]
    if result.verdict is Verdict.ERROR or (result.reason and not result.failures):
        lines.append("  reason: " + result.reason.replace("\n", "\n    "))
    for where, failure in result.failures:
        lines.append(f"  {where}")
        lines += ["    " + cut_middle(line) for line in failure.render().splitlines()]
    return "\n".join(lines)


#: The lines of a target's start error shown: its first, and the last of its stderr's tail.
START_ERROR_LINES = 5


def print_start_error(console: Console, start_error: str, count: int | None = None) -> None:
    """Prints, once, why the target did not start: one line with the count of scenarios that did not
    run, then the reason and the end of its stderr's tail (at most START_ERROR_LINES lines)."""
    lines = shown(start_error).rstrip().splitlines() or [""]
    if len(lines) > START_ERROR_LINES:
        lines = lines[:1] + [f"[… {len(lines) - START_ERROR_LINES + 1} lines; the JSON report has them all]"] \
            + lines[-(START_ERROR_LINES - 2):]
    counted = f": {count} scenario{'' if count == 1 else 's'} did not run" if count is not None else ""
    console.print(Text.assemble(("TARGET DID NOT START", "bold magenta"), counted), highlight=False)
    console.print(Text(shown("\n".join("  " + line for line in lines))), highlight=False, soft_wrap=True)


def print_groups(console: Console, groups: list, *, members: int = 3) -> None:
    """Prints the failures grouped by cause (harness/report/groups.py): each group's count and cause,
    and its first members, within the console's width."""
    from harness.report.groups import terminal_lines
    if not groups:
        return
    failing = sum(group.count for group in groups)
    console.print(Text(f"FAILURES BY CAUSE: {failing} scenario{'' if failing == 1 else 's'} in {len(groups)} "
                       f"group{'' if len(groups) == 1 else 's'}", style="bold red"), highlight=False)
    for line in terminal_lines(groups, width=console.width, members=members):
        console.print(Text(line), highlight=False, soft_wrap=True)
    console.print()


def print_failing_lines(console: Console, results: Iterable[Result], *, brief: str | None = None) -> None:
    """Prints each failing scenario on one line (``-q``): its verdict, id and reason, cut to the width."""
    from harness.report.wrap import cut
    for result in results:
        if result.verdict not in (Verdict.FAIL, Verdict.ERROR) or result.known is not None or result.reason == brief:
            continue
        reason = shown(result.reason.splitlines()[0] if result.reason else "")
        console.print(Text(cut(f"{result.verdict.value.upper()} {shown(result.id)}  {reason}", console.width),
                           style=STYLES[result.verdict]), highlight=False, soft_wrap=True)


def print_leftovers(console: Console, leftovers: list) -> None:
    """Prints the workspaces that could not be removed, each with why; they fail the run."""
    from harness.containment.cleanup import split_leftovers
    late, left_behind = split_leftovers(leftovers)
    if late:
        console.print(Text(f"ESCAPED AFTER THE LAST SCENARIO: {len(late)} write(s) outside the workspace while "
                           "the candidate answered bye (the run fails)", style="bold red"), highlight=False)
        for left in late:
            console.print(Text(shown(f"  {left.path}: {left.reason}")), highlight=False, soft_wrap=True)
    if not left_behind:
        return
    console.print(Text(f"LEFT BEHIND: {len(left_behind)} workspace(s) could not be removed (the run fails; "
                       "remove them by hand)", style="bold red"), highlight=False)
    for left in left_behind:
        console.print(Text(shown(f"  {left.path}: {left.reason}")), highlight=False, soft_wrap=True)


def print_failures(console: Console, results: Iterable[Result], *, brief: str | None = None,
                   groups: list | None = None) -> None:
    """Prints every fail and error with its explanation; then the baseline's known failures, one line each.

    An error whose reason is ``brief`` (the target did not start, said once above with the count) is
    not repeated. With ``groups``, only the first member of a group is explained in full; the others
    get one line naming their group.
    """
    from harness.report.wrap import cut
    first_of = {group.members[0].id for group in groups or []}
    group_of = {member.id: number for number, group in enumerate(groups or [], 1) for member in group.members}
    known = []
    for result in results:
        if result.verdict not in (Verdict.FAIL, Verdict.ERROR):
            continue
        if result.known is not None:
            known.append(result)
        elif brief is not None and result.reason == brief:
            continue
        elif result.id in group_of and result.id not in first_of:
            console.print(Text.assemble((f"{result.verdict.value.upper()} ", STYLES[result.verdict]),
                                        cut(shown(result.id), max(console.width - 24, 20)),
                                        (f"  (cause {group_of[result.id]})", "dim")),
                          highlight=False, soft_wrap=True)
        else:
            console.print(Text(shown(explain(result, console.width))), highlight=False, soft_wrap=True)
            console.print()
    if known:
        console.print(Text(f"{len(known)} known failure(s) listed in the baseline (they do not fail the run):",
                           style=KNOWN_STYLE))
        for result in known:
            console.print(Text.assemble((f"KNOWN {result.verdict.value} ", KNOWN_STYLE), shown(result.id),
                                        (f"  baseline: {shown(result.known or '')}", "dim")), highlight=False, soft_wrap=True)
        console.print()


def _tally(results: Iterable[Result] | Tally) -> Tally:
    return results if isinstance(results, Tally) else Tally.of(results)


def summary_table(results: list[Result] | Tally, title: str) -> Table:
    """Returns a table of verdict counts per profile, and the total (of results, or of their tally)."""
    tally = _tally(results)
    per_profile = tally.per_profile
    # A known failure (listed in the baseline) counts under "known", not under fail or error.
    columns = [v.value for v in Verdict] + (["known"] if tally.any_known else [])
    styles = {**{v.value: s for v, s in STYLES.items()}, "known": KNOWN_STYLE}
    table = Table(title=Text(shown(title)) if isinstance(title, str) else title, title_justify="left")
    table.add_column("profile")
    for column in columns:
        table.add_column(column, justify="right", style=styles[column])
    table.add_column("total", justify="right")
    total: Counter[str] = Counter()
    # Every cell a Text: shown as it is (a str cell is read as markup, and that parse was half the
    # time the table took to print).
    for profile in sorted(per_profile):
        counts = per_profile[profile]
        total.update(counts)
        table.add_row(Text(shown(profile)), *(Text(str(counts.get(c, 0))) for c in columns),
                      Text(str(sum(counts.values()))))
    table.add_section()
    table.add_row(Text("all"), *(Text(str(total.get(c, 0))) for c in columns), Text(str(sum(total.values()))),
                  style="bold")
    return table


def flaky_lines(results: Iterable[Result] | Tally, width: int = 80) -> list[str]:
    """Returns the ``--repeat`` line: how many scenarios were flaky, then each id (wrapped at ``/``)."""
    from harness.report.wrap import wrap_id
    flaky = _tally(results).flaky
    if not flaky:
        return []
    return [f"{len(flaky)} flaky (verdict or observation varied between repeats):"] + [
        "  ~ " + line for scenario_id in flaky for line in wrap_id(shown(scenario_id), width - 4)]


def skip_reasons(results: Iterable[Result] | Tally) -> list[str]:
    """Returns one line per distinct skip reason, most frequent first: ``34 skipped: <reason>``."""
    reasons = _tally(results).skips
    return [f"{count} skipped: {shown(reason)}" for reason, count in reasons.most_common()]


def targets_table(runs: list, title: str = "targets", tallies: list[Tally] | None = None) -> Table:
    """Returns the matrix of a run on several targets: one row per target, its verdict counts and time
    (counted from each run's results, or given as each run's tally)."""
    table = Table(title=Text(shown(title)) if isinstance(title, str) else title, title_justify="left")
    table.add_column("target")
    table.add_column("implementation")
    for verdict in Verdict:
        table.add_column(verdict.value, justify="right", style=STYLES[verdict])
    table.add_column("total", justify="right")
    table.add_column("seconds", justify="right")
    for run, tally in zip(runs, tallies or [Tally.of(run.results) for run in runs]):
        counts = tally.verdicts
        table.add_row(Text(shown(run.spec)), Text(shown(f"{run.info.name} {run.info.version}".strip())),
                      *(Text(str(counts.get(v, 0))) for v in Verdict), Text(str(tally.count)),
                      Text(f"{run.seconds:.2f}"))
    return table


def aspect_lines(results: list[Result] | Tally) -> list[str]:
    """Returns one line per profile with each aspect's pass rate (``effects 97% · outcome 91% · output
    40%``, over the results that had expectations of it, judged or not), and a line counting the
    results that pass only because an aspect that failed was not judged (``--aspects``)."""
    from harness.scenario import aspects
    tally = _tally(results)
    counts = tally.aspects
    lines = [f"{profile}: {aspects.rate_line(counts[profile])}" for profile in sorted(counts)
             if any(counts[profile][a][aspects.PASS] + counts[profile][a][aspects.FAIL] for a in aspects.ASPECTS)]
    if tally.unjudged_results:
        lines.append(f"{tally.unjudged_results} result(s) differ only in aspects not judged: "
                     + ", ".join(f"{aspect} {count}" for aspect, count in sorted(tally.unjudged.items())))
    return lines
