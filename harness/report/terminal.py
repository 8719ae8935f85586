"""The terminal report: failures with expected and observed, then a summary table (rich)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.model import Result, Verdict

STYLES = {
    Verdict.PASS: "green",
    Verdict.FAIL: "bold red",
    Verdict.RECORDED: "cyan",
    Verdict.SKIP: "yellow",
    Verdict.ERROR: "bold magenta",
}


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


def print_failures(console: Console, results: Iterable[Result]) -> None:
    """Prints every fail and error with its explanation."""
    for result in results:
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            console.print(Text(explain(result)), highlight=False, soft_wrap=True)
            console.print()


def summary_table(results: list[Result], title: str) -> Table:
    """Returns a table of verdict counts per profile, and the total."""
    per_profile: dict[str, Counter[Verdict]] = defaultdict(Counter)
    for result in results:
        per_profile[result.scenario.profile][result.verdict] += 1
    table = Table(title=title, title_justify="left")
    table.add_column("profile")
    for verdict in Verdict:
        table.add_column(verdict.value, justify="right", style=STYLES[verdict])
    table.add_column("total", justify="right")
    total: Counter[Verdict] = Counter()
    for profile in sorted(per_profile):
        counts = per_profile[profile]
        total.update(counts)
        table.add_row(profile, *(str(counts.get(v, 0)) for v in Verdict), str(sum(counts.values())))
    table.add_section()
    table.add_row("all", *(str(total.get(v, 0)) for v in Verdict), str(sum(total.values())), style="bold")
    return table


def skip_reasons(results: Iterable[Result]) -> list[str]:
    """Returns one line per distinct skip reason, most frequent first: ``34 skipped: <reason>``."""
    reasons = Counter(result.reason for result in results if result.verdict is Verdict.SKIP)
    return [f"{count} skipped: {reason}" for reason, count in reasons.most_common()]


def targets_table(runs: list, title: str = "targets") -> Table:
    """Returns the matrix of a run on several targets: one row per target, its verdict counts and time."""
    table = Table(title=title, title_justify="left")
    table.add_column("target")
    table.add_column("implementation")
    for verdict in Verdict:
        table.add_column(verdict.value, justify="right", style=STYLES[verdict])
    table.add_column("total", justify="right")
    table.add_column("seconds", justify="right")
    for run in runs:
        counts = Counter(result.verdict for result in run.results)
        table.add_row(Text(run.spec), Text(f"{run.info.name} {run.info.version}".strip()),
                      *(str(counts.get(v, 0)) for v in Verdict), str(len(run.results)), f"{run.seconds:.2f}")
    return table
