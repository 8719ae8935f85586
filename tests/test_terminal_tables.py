"""The terminal report's tables show what they are given as it is: a name is never read as rich markup."""

from __future__ import annotations

import io

from rich.console import Console

from harness.report.tally import Tally
from harness.report.terminal import summary_table
from harness.scenario.model import Result, Scenario, Verdict


def _result(profile: str, verdict: Verdict) -> Result:
    return Result(Scenario(id=f"{profile}/s", profile=profile, title="t", source="test", steps=()), verdict, "")


def _printed(table, **options) -> str:
    out = io.StringIO()
    Console(file=out, width=100, highlight=False, **options).print(table)
    return out.getvalue()


def test_the_summary_table_shows_a_profile_name_that_looks_like_markup_as_it_is():
    tally = Tally()
    for result in (_result("claude-code", Verdict.PASS), _result("[/]odd[bold]", Verdict.FAIL),
                   _result("[/]odd[bold]", Verdict.SKIP)):
        tally.add(result)
    text = _printed(summary_table(tally, "reference 1 — 3 scenarios in 0.01s"))
    lines = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    rows = {cells[1].strip(): [cell.strip() for cell in cells[2:-1]] for cells in lines}
    # profile, pass, fail, recorded, skip, error, total
    assert rows["[/]odd[bold]"] == ["0", "1", "0", "1", "0", "2"]
    assert rows["claude-code"] == ["1", "0", "0", "0", "0", "1"]
    assert rows["all"] == ["1", "1", "0", "1", "0", "3"]
    coloured = _printed(summary_table(tally, "t"), force_terminal=True, color_system="standard")
    assert "[/]odd[bold]" in coloured and "\x1b[" in coloured  # the columns' styles still apply
