"""What the end of a run reports about one target, kept as the results go by: counts, and the failures.

A run hands each result to its reports as it is produced (harness/report/stream.py); the terminal
summary, the JUnit suites' counts and the JSON report's ``summary`` need only counts, and the
failure details need only the results that failed. A :class:`Tally` keeps exactly that, so what a
run holds does not grow with the number of scenarios that pass.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from harness.scenario.matchers import MISSING, Mismatch
from harness.scenario.model import Result, StepRecord, Verdict

#: Characters kept of a failing result's reason and of each of its mismatches as shown: what the
#: end-of-run details and the annotations show of it (a mismatch's rendering is a few lines anyway).
KEPT_TEXT = 64 * 1024


@dataclasses.dataclass(frozen=True)
class ShownMismatch(Mismatch):
    """A mismatch kept as it is shown: its rendering, without the observed value it was made from."""

    text: str = ""

    def render(self) -> str:
        """Returns the rendering made when the mismatch was kept."""
        return self.text


def _cut(text: str) -> str:
    """Returns ``text`` cut at :data:`KEPT_TEXT` characters, saying how many were not kept."""
    if len(text) <= KEPT_TEXT:
        return text
    return text[:KEPT_TEXT] + f"[{len(text) - KEPT_TEXT:,} more characters not kept]"


def _shown(failure: Mismatch) -> Mismatch:
    return ShownMismatch(failure.path, _cut(str(failure.expected)), MISSING, _cut(failure.why),
                         text=_cut(failure.render()))


def held(result: Result) -> Result:
    """Returns what the end of a run needs of a failing result: its scenario, verdict, reason and
    mismatches as shown (harness/report/terminal.py ``explain``, harness/report/github.py), without
    the arguments, outputs, events and workspace states, which the streaming reports have written
    already. A reason or a mismatch longer than :data:`KEPT_TEXT` is cut, saying how much was not kept."""
    steps = [StepRecord(record.index, record.kind, record.name, label=record.label, seconds=record.seconds,
                        failures=[_shown(failure) for failure in record.failures]) for record in result.steps]
    return dataclasses.replace(result, reason=_cut(result.reason), steps=steps, workspace=None,
                               then_failures=[_shown(failure) for failure in result.then_failures])

def nothing_ran(count: int, skipped: int, reason: str | None = None) -> str | None:
    """Returns the one line that says a run ran nothing (``count`` scenarios, every one ``skipped``:
    no profile or tool of the target's matched), or None when something ran or nothing was selected.

    Such a run fails (exit 1) and every report says so: a CI job must not go green on a candidate
    that offered no profile, a misspelt one, or an MCP server that lists no tools.
    """
    if count == 0 or skipped < count:
        return None
    why = f" (e.g. {reason})" if reason else ""
    return f"nothing ran: all {count} scenario(s) were skipped{why}"


class Tally:
    """Counts and failures of one target's results, fed one result at a time (``add``).

    ``baseline`` (a harness/record/baseline.py ``Baseline``): each result is judged against it as it comes
    (``known`` on a listed failure, ``stale`` on a listed scenario that passes now), and the
    ``Outcome`` is the one ``apply`` makes of the whole run.
    """

    def __init__(self, baseline: Any = None, baseline_error: str | None = None) -> None:
        self.count = 0
        self.real = 0  # results of scenarios (not of invalid files)
        self.real_skipped = 0
        self.per_profile: dict[str, Counter[str]] = {}  # profile -> counted_as -> count, in order of arrival
        self.verdicts: Counter[Verdict] = Counter()
        self.any_known = False
        self.skips: Counter[str] = Counter()  # skip reason -> count, in order of arrival
        self.aspects: dict[str, dict[str, dict[str, int]]] = {}  # harness/scenario/aspects.py ``summary``, kept as it goes
        self.unjudged: Counter[str] = Counter()  # aspects that failed without being judged -> results
        self.unjudged_results = 0
        # Every fail and error, in order, as ``held`` keeps them: their details are shown at the end.
        self.failures: list[Result] = []
        # Each fail's and error's cause (harness/report/groups.py), taken before it is held.
        self.causes: dict[str, tuple[tuple[str, ...], str]] = {}
        self.bad = False  # a real (not an invalid file's) fail or error
        self.baseline = baseline
        self.baseline_error = baseline_error  # why the baseline could not be read (nothing is judged then)
        self.known: list[str] = []
        self.new: list[str] = []
        self.stale: list[str] = []
        self.flaky: list[str] = []  # --repeat N: the scenarios whose verdict or observation varied
        self.renamed: set[str] = set()  # former ids the baseline lists a scenario of this run under
        self.stale_checks: list[str] = []  # aspect and check entries that excused nothing in a failing scenario

    @classmethod
    def of(cls, results: Iterable[Result], baseline: Any = None) -> Tally:
        """Returns the tally of results already held (the terminal report's functions take either)."""
        tally = cls(baseline)
        for result in results:
            tally.add(result)
        return tally

    def add(self, result: Result) -> None:
        """Counts one result (after its aspects are judged); judges it against the baseline first."""
        from harness.scenario import aspects
        real = not result.id.startswith("<invalid>")
        if real and self.baseline is not None:
            self._judge(result)
        self.count += 1
        self.real += real
        self.real_skipped += real and result.verdict is Verdict.SKIP
        self.per_profile.setdefault(result.scenario.profile, Counter())[result.counted_as] += 1
        self.verdicts[result.verdict] += 1
        self.any_known = self.any_known or result.known is not None
        if result.verdict is Verdict.SKIP:
            self.skips[result.reason] += 1
        if result.flaky:
            self.flaky.append(result.id)
        aspects.count(self.aspects, result)
        if result.aspects and result.observed_aspects and result.aspects != result.observed_aspects \
                and any(v == aspects.FAIL for v in result.observed_aspects.values()) \
                and result.verdict is not Verdict.FAIL:
            self.unjudged_results += 1
            self.unjudged.update(a for a, v in result.observed_aspects.items() if v == aspects.FAIL)
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            from harness.report import groups
            self.causes[result.id] = groups.cause_of_result(result)
            self.failures.append(held(result))
            self.bad = self.bad or real

    def _judge(self, result: Result) -> None:
        from harness.record.baseline import judge, listed_as, unmet_of
        key = listed_as(self.baseline, result.id, result.scenario.former_ids)
        narrow = key in self.baseline.checks and result.verdict is Verdict.FAIL
        judged, reason, unused = judge(self.baseline, key, result.verdict.value, unmet_of(result) if narrow else ())
        if key != result.id:
            self.renamed.add(key)  # listed under a former id: not "not run"
        if judged is not None:
            getattr(self, judged).append(result.id)
            if judged != "new":
                setattr(result, judged, reason)
        self.stale_checks += [f"{result.id}: {check.describe()}" for check in unused]

    def groups(self, *, brief: str | None = None) -> list[Any]:
        """Returns the failures grouped by cause (harness/report/groups.py), largest first: the fails and
        errors that fail the run (a baseline's known ones, and errors whose reason is ``brief``, left out)."""
        from harness.report import groups
        return groups.from_causes((result.id, result.verdict.value, result.reason, self.causes[result.id])
                                  for result in self.failures
                                  if result.known is None and result.reason != brief and result.id in self.causes)

    def outcome(self) -> Any:
        """Returns what the baseline made of the run so far (harness/record/baseline.py ``Outcome``)."""
        from harness.record.baseline import Outcome
        seen = set(self.known) | set(self.stale) | set(self.new) | self.renamed
        return Outcome(list(self.known), list(self.new), list(self.stale),
                       sorted(self.baseline.listed() - seen) if self.baseline is not None else [],
                       list(self.stale_checks))

    def summary(self) -> dict[str, int]:
        """Returns the JSON report's ``summary``: each verdict's count (every verdict present), and ``known``."""
        counts: Counter[str] = Counter()
        for per in self.per_profile.values():
            counts.update(per)
        out = {verdict.value: counts.get(verdict.value, 0) for verdict in Verdict}
        out["known"] = counts.get("known", 0)
        if self.nothing_ran:
            out["nothing_ran"] = self.nothing_ran  # type: ignore[assignment]  # the one line, not a count
        return out

    @property
    def nothing_ran(self) -> str | None:
        """Returns the line saying no scenario ran on the target (see :func:`nothing_ran`), or None."""
        reason = self.skips.most_common(1)[0][0] if self.skips else None
        return nothing_ran(self.real, self.real_skipped, reason)
