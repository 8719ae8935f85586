"""Known divergences: a baseline file lets a run pass while an implementation is still catching up.

The file is YAML, keyed by scenario id. An entry excuses the whole scenario, one aspect of it, or
one check (one expectation path in one step), each with a reason or a link::

    # harness baseline: known failures of cmd:./my-tool
    claude-code/edit/replace-all-multiple: https://github.com/me/my-tool/issues/12   # the scenario
    aptix-tul-004/write/disk-full:
      reason: no disk-full handling yet
      link: https://github.com/me/my-tool/issues/14
    claude-code/read/arrow-not-tab:                  # one aspect: the output is judged no more
      aspect: output
      reason: we number lines with a tab (issue 9)
    claude-code/edit/replace-all-every-occurrence:   # checks: these two, the rest stays judged
      - {step: 2, path: output, reason: "replace_all not supported yet"}
      - {step: then, path: "then.files[target.txt].content", reason: "same"}

``step`` is the step's number (1 for the first), its ``name``, or ``then`` for the scenario's end
state; ``path`` is the unmet expectation's path as the reports show it. Applied to a run's results:

- a ``fail`` or ``error`` the whole scenario is listed for is *known*: it does not fail the run;
- a ``fail`` whose every unmet expectation is excused by an aspect or check entry is *known* too;
  one with an unmet expectation no entry excuses is *new*, as is an ``error`` (only a scenario
  entry excuses an error: it has no expectation to point at);
- a ``fail`` or ``error`` that is not listed is *new*: it fails the run;
- a listed scenario that now passes (``pass`` or ``recorded``) is *stale*, and so is an aspect or
  check entry that excuses nothing in a scenario that failed: both fail the run, so the entry gets
  removed and the fix cannot silently regress later;
- a listed scenario that was skipped, not selected, or is not in the catalog is left alone (and
  reported as *not run*).

``--write-baseline`` writes the narrowest entries: one check per unmet expectation (a scenario
entry for an error), keeping the reasons of entries already in the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.scenario.aspects import ASPECTS

FAILING = ("fail", "error")
PASSING = ("pass", "recorded")


@dataclass(frozen=True)
class Check:
    """An aspect or check entry of one scenario: ``aspect``, or ``step`` and ``path``."""

    reason: str
    aspect: str | None = None
    step: str | None = None  # "1", a step's name, or "then"
    path: str | None = None

    def describe(self) -> str:
        return f"aspect {self.aspect}" if self.aspect else f"step {self.step} {self.path}"

    def covers(self, failure: Unmet) -> bool:
        if self.aspect is not None:
            return failure.aspect == self.aspect
        return self.path == failure.path and self.step in failure.steps

    def as_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"aspect": self.aspect} if self.aspect else {
            "step": int(self.step) if self.step and self.step.isdigit() else self.step, "path": self.path}
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Unmet:
    """One unmet expectation of a result, as a baseline matches it."""

    steps: tuple[str, ...]  # how an entry may name its step: its number, its name; ("then",) for the end state
    path: str
    aspect: str
    reason: str = ""


@dataclass
class Baseline:
    """The entries of a baseline file: scenario id -> reason (the whole scenario), and scenario id ->
    its aspect and check entries (``checks``)."""

    entries: dict[str, str] = field(default_factory=dict)
    checks: dict[str, list[Check]] = field(default_factory=dict)

    def listed(self) -> set[str]:
        return set(self.entries) | set(self.checks)


def _entry(path: Path, key: str, value: Any) -> str | Check:
    """Returns one entry: a reason (the whole scenario) or a Check; raises ValueError naming what is wrong."""
    if isinstance(value, dict):
        unknown = set(value) - {"reason", "link", "aspect", "step", "path"}
        if unknown:
            raise ValueError(f"{path}: {key}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        reason = " ".join(str(value[k]) for k in ("reason", "link") if value.get(k)).strip()
        if not reason:
            raise ValueError(f"{path}: {key}: give a reason or a link")
        aspect, step, where = value.get("aspect"), value.get("step"), value.get("path")
        if aspect is None and step is None and where is None:
            return reason
        if aspect is not None:
            if step is not None or where is not None:
                raise ValueError(f"{path}: {key}: an entry names an aspect, or a step and a path, not both")
            if aspect not in ASPECTS:
                raise ValueError(f"{path}: {key}: aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
            return Check(reason, aspect=aspect)
        if step is None or where is None or isinstance(step, bool) or not isinstance(where, str) \
                or not isinstance(step, (int, str)) or (isinstance(step, int) and step < 1):
            raise ValueError(f"{path}: {key}: a check names its step (a number from 1, a name, or then) and its path")
        return Check(reason, step=str(step), path=where)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{path}: {key}: give a reason or a link")
    return value.strip()


def load(path: Path) -> Baseline:
    """Reads a baseline file; raises ValueError naming the file for anything malformed."""
    from harness.scenario.located_errors import FileProblems, parse_documents, read_yaml_text
    try:
        # Read as scenario files are: a regular file only, within the size cap, nesting and aliases bounded.
        documents, _ = parse_documents(read_yaml_text(Path(path), follow_link=True), Path(path), "baseline")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text: {exc}") from None
    except FileProblems as exc:
        if [problem.message for problem in exc.problems] == ["no baseline in file"]:
            return Baseline()
        raise ValueError(f"not valid YAML: {exc}") from None  # each problem names the file and line
    data = documents[0]
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a baseline maps scenario ids to reasons")
    out = Baseline()
    for key, value in data.items():
        key = str(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(value, list) and not isinstance(item, dict):
                raise ValueError(f"{path}: {key}: each item of a list is a check (step, path, reason) or an aspect")
            entry = _entry(Path(path), key, item)
            if isinstance(entry, str):
                out.entries[key] = entry
            else:
                out.checks.setdefault(key, []).append(entry)
    return out


@dataclass
class Outcome:
    """What a baseline made of a run."""

    known: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    #: Aspect and check entries that excused nothing in a scenario that failed: ``id: step N path``.
    stale_checks: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Returns True when the run fails under the baseline (a new failure or a stale entry)."""
        return bool(self.new or self.stale or self.stale_checks)


def listed_as(baseline: Baseline, scenario_id: str, former_ids: Iterable[str] = ()) -> str:
    """Returns the key the baseline lists a scenario under: its id, else the first of its former ids
    listed (an entry written before a rename still counts), else its id."""
    listed = baseline.listed()
    if scenario_id in listed:
        return scenario_id
    return next((former for former in former_ids if former in listed), scenario_id)


def judge(baseline: Baseline, scenario_id: str, verdict: str,
          unmet: Iterable[Unmet] = ()) -> tuple[str | None, str, list[Check]]:
    """Returns what the baseline makes of one result: (``"known"``, ``"new"``, ``"stale"`` or None; the
    reason of the entries that excuse it; the aspect and check entries that excused nothing).
    ``scenario_id`` is the key it is listed under (``listed_as``)."""
    if scenario_id in baseline.entries:
        if verdict in FAILING:
            return "known", baseline.entries[scenario_id], []
        return ("stale", baseline.entries[scenario_id], []) if verdict in PASSING else (None, "", [])
    checks = baseline.checks.get(scenario_id)
    if not checks:
        return ("new", "", []) if verdict in FAILING else (None, "", [])
    if verdict in PASSING:
        return "stale", "; ".join(dict.fromkeys(check.reason for check in checks)), []
    if verdict != "fail":
        return ("new", "", []) if verdict in FAILING else (None, "", [])
    unmet = list(unmet)
    used = [check for check in checks if any(check.covers(failure) for failure in unmet)]
    unused = [check for check in checks if check not in used]
    excused = unmet and all(any(check.covers(failure) for check in checks) for failure in unmet)
    if not excused:
        return "new", "", unused
    return "known", "; ".join(dict.fromkeys(check.reason for check in used)), unused


def classify(baseline: Baseline, scenario_id: str, verdict: str, unmet: Iterable[Unmet] = ()) -> str | None:
    """Returns what the baseline makes of one result: ``"known"`` (a listed failure), ``"new"`` (an
    unlisted failure), ``"stale"`` (a listed scenario that passes now), or None."""
    return judge(baseline, scenario_id, verdict, unmet)[0]


def unmet_of(result: Any) -> list[Unmet]:
    """Returns the unmet expectations of a ``Result`` (harness/scenario/model.py), each with its step's number and
    name and its aspect (harness/scenario/aspects.py), as entries match them."""
    from harness.scenario import aspects
    from harness.scenario.model import Call
    scenario = result.scenario
    out = []
    for record in result.steps:
        if not record.failures:
            continue
        step = scenario.steps[record.index] if record.index < len(scenario.steps) else None
        keys = aspects.classify_step(scenario, step) if isinstance(step, Call) else {}
        label = getattr(record, "label", None) or getattr(step, "name", None)
        names = (str(record.index + 1),) + ((str(label),) if label else ())
        for failure in record.failures:
            out.append(Unmet(names, failure.path, aspects.classify_failure(keys, failure.path, failure.why),
                             f"{failure.path}: {failure.why or failure.expected}"))
    for failure in result.then_failures:
        out.append(Unmet(("then",), failure.path, aspects.classify_failure({}, failure.path, failure.why),
                         f"{failure.path}: {failure.why or failure.expected}"))
    return out


def apply(baseline: Baseline, verdicts: dict[str, str]) -> Outcome:
    """Judges a run (scenario id -> verdict) against the baseline's scenario entries."""
    out = Outcome()
    for scenario_id, verdict in verdicts.items():
        judged = classify(baseline, scenario_id, verdict)
        if judged is not None:
            getattr(out, judged).append(scenario_id)
    out.not_run = sorted(baseline.listed() - set(out.known) - set(out.stale) - set(out.new))
    return out


def report_section(path: Path, outcome: Outcome) -> dict[str, Any]:
    """Returns the JSON report's ``baseline`` member: the file and what it made of the run."""
    out = {"file": str(path), "known": len(outcome.known), "new": list(outcome.new),
           "stale": list(outcome.stale), "not_run": list(outcome.not_run), "failed": outcome.failed}
    if outcome.stale_checks:
        out["stale_checks"] = list(outcome.stale_checks)
    return out


def entry_reason(verdict: str, reason: str, masks: tuple[tuple[str, str], ...] = ()) -> str:
    """Returns a new entry's reason: the verdict and the first line of the result's reason, with the
    run's temporary paths masked (``${workspace}``, and the target's own ``masks``), so regenerating a
    baseline does not change it."""
    from harness.record.snapshot import mask_text
    first = (mask_text(reason, masks).strip().splitlines() or [verdict])[0][:200]
    return f"{verdict}: {first}"


def render(entries: Iterable[tuple[str, Any]], header: str = "") -> str:
    """Returns baseline text for (scenario id, reason or list of checks) pairs, sorted by id."""
    lines = ["# harness baseline: known failures; a listed failure does not fail the run,",
             "# a listed scenario that passes does (remove its entry). Give each a reason or a link.",
             "# An entry excuses a scenario, one aspect (aspect: output), or one check (step: N, path: P)."]
    if header:
        lines.append(f"# {header}")
    body = {key: value if isinstance(value, str) else [check.as_yaml() for check in value]
            for key, value in sorted(entries, key=lambda pair: pair[0])}
    text = "\n".join(lines) + "\n"
    if body:
        text += yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
    return text


def write(path: Path, results: Iterable[Any], header: str = "", masks: tuple[tuple[str, str], ...] = ()) -> int:
    """Writes a baseline of every failing result, with the narrowest entries: one check per unmet
    expectation of a ``fail`` (``Result`` objects, or ``as_record`` of them), a scenario entry for an
    ``error`` (or a result in the JSON report's shape). An existing file's scenario entries are kept as
    they are, and its checks' reasons; new reasons have the run's temporary paths and the target's own
    ``masks`` masked. Returns the number of scenarios listed."""
    previous = Baseline()
    if Path(path).is_file():
        try:
            previous = load(path)
        except ValueError:
            pass  # rewriting a broken file is what was asked
    entries: list[tuple[str, Any]] = []
    for result in results:
        scenario_id, verdict, reason = _fields(result)
        if verdict not in FAILING:
            continue
        former = result.get("former_ids", ()) if isinstance(result, dict) else result.scenario.former_ids
        key = listed_as(previous, scenario_id, former)  # a reason given before a rename is kept
        if key in previous.entries:
            entries.append((scenario_id, previous.entries[key]))
            continue
        unmet = (_unmet_given(result) if isinstance(result, dict) else unmet_of(result)) if verdict == "fail" else []
        if not unmet:
            entries.append((scenario_id, entry_reason(verdict, reason, masks)))
            continue
        before = previous.checks.get(key, [])
        checks: list[Check] = []
        for failure in unmet:
            kept = next((check for check in before if check.covers(failure)), None)
            step = failure.steps[0]
            check = Check(kept.reason if kept else entry_reason(verdict, failure.reason, masks), step=step, path=failure.path)
            if check not in checks:
                checks.append(check)
        entries.append((scenario_id, checks))
    # A new file renamed over ``path``: a link a checkout left there (``baseline.yaml`` is the likeliest
    # name to carry) is replaced, never written through, and a FIFO there never blocks the run.
    from harness.util.fileio import write_replacing
    write_replacing(path, render(entries, header))
    return len(entries)


def as_record(result: Any) -> dict[str, Any]:
    """Returns what ``write`` needs of a ``Result``, JSON-ready (a pytest-xdist worker sends it to the
    process that writes the baseline)."""
    return {"id": result.id, "verdict": result.verdict.value, "reason": result.reason,
            "former_ids": list(result.scenario.former_ids),
            "unmet": [{"steps": list(failure.steps), "path": failure.path, "aspect": failure.aspect,
                       "reason": failure.reason} for failure in unmet_of(result)]}


def _unmet_given(record: dict[str, Any]) -> list[Unmet]:
    return [Unmet(tuple(item["steps"]), item["path"], item["aspect"], item.get("reason", ""))
            for item in record.get("unmet") or ()]


def _fields(result: Any) -> tuple[str, str, str]:
    if isinstance(result, dict):
        return result["id"], result["verdict"], result.get("reason", "")
    return result.id, result.verdict.value, result.reason
