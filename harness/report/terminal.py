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


def explain(result: Result) -> str:
    """Returns a failed or errored result as readable text: each unmet expectation, expected vs observed."""
    lines = [f"{result.verdict.value.upper()} {result.id}  ({result.scenario.location})",
             f"  {result.scenario.title}", f"  source: {result.scenario.source}"]
    if result.verdict is Verdict.ERROR or (result.reason and not result.failures):
        lines.append("  reason: " + result.reason.replace("\n", "\n    "))
    for where, failure in result.failures:
        lines.append(f"  {where}")
        lines += ["    " + line for line in failure.render().splitlines()]
    return "\n".join(lines)


def print_start_error(console: Console, start_error: str) -> None:
    """Prints, once, why the target did not start: the reason and the tail of its stderr."""
    lines = shown(start_error).rstrip().splitlines()
    console.print(Text("TARGET DID NOT START", style="bold magenta"), highlight=False)
    console.print(Text(shown("\n".join("  " + line for line in lines))), highlight=False, soft_wrap=True)
    console.print(Text("  every selected scenario is an error; fix the target and run again", style="dim"))
    console.print()


def print_leftovers(console: Console, leftovers: list) -> None:
    """Prints the workspaces that could not be removed, each with why; they fail the run."""
    if not leftovers:
        return
    console.print(Text(f"LEFT BEHIND: {len(leftovers)} workspace(s) could not be removed (the run fails; "
                       "remove them by hand)", style="bold red"), highlight=False)
    for left in leftovers:
        console.print(Text(shown(f"  {left.path}: {left.reason}")), highlight=False, soft_wrap=True)


def print_failures(console: Console, results: Iterable[Result], *, brief: str | None = None) -> None:
    """Prints every fail and error with its explanation; then the baseline's known failures, one line each.

    An error whose reason is ``brief`` (the target did not start, said once above) gets one short line.
    """
    known = []
    for result in results:
        if result.verdict not in (Verdict.FAIL, Verdict.ERROR):
            continue
        if result.known is not None:
            known.append(result)
        elif brief is not None and result.reason == brief:
            console.print(Text.assemble((f"{result.verdict.value.upper()} ", STYLES[result.verdict]), result.id,
                                        (" (did not run: the target did not start)", "dim")),
                          highlight=False, soft_wrap=True)
        else:
            console.print(Text(shown(explain(result))), highlight=False, soft_wrap=True)
            console.print()
    if known:
        console.print(Text(f"{len(known)} known failure(s) listed in the baseline (they do not fail the run):",
                           style=KNOWN_STYLE))
        for result in known:
            console.print(Text.assemble((f"KNOWN {result.verdict.value} ", KNOWN_STYLE), shown(result.id),
                                        (f"  baseline: {shown(result.known)}", "dim")), highlight=False, soft_wrap=True)
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
    for profile in sorted(per_profile):
        counts = per_profile[profile]
        total.update(counts)
        table.add_row(profile, *(str(counts.get(c, 0)) for c in columns), str(sum(counts.values())))
    table.add_section()
    table.add_row("all", *(str(total.get(c, 0)) for c in columns), str(sum(total.values())), style="bold")
    return table


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
                      *(str(counts.get(v, 0)) for v in Verdict), str(tally.count), f"{run.seconds:.2f}")
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
