"""Known divergences: a baseline file lets a run pass while an implementation is still catching up.

The file is YAML, one entry per scenario id, each with a reason or a link::

    # harness baseline: known failures of cmd:./my-tool
    claude-code/edit/replace-all-multiple: https://github.com/me/my-tool/issues/12
    aptix-tul-004/write/disk-full:
      reason: no disk-full handling yet
      link: https://github.com/me/my-tool/issues/14

Applied to a run's results:

- a ``fail`` or ``error`` that is listed is *known*: it does not fail the run;
- a ``fail`` or ``error`` that is not listed is *new*: it fails the run;
- a listed scenario that now passes (``pass`` or ``recorded``) is *stale*: it fails the run, so the
  entry gets removed and the fix cannot silently regress later;
- a listed scenario that was skipped, not selected, or is not in the catalog is left alone (and
  reported as *not run*).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FAILING = ("fail", "error")
PASSING = ("pass", "recorded")


@dataclass
class Baseline:
    """The entries of a baseline file: scenario id -> reason (or link)."""

    entries: dict[str, str] = field(default_factory=dict)


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
    entries: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            unknown = set(value) - {"reason", "link"}
            if unknown:
                raise ValueError(f"{path}: {key}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
            value = " ".join(str(value[k]) for k in ("reason", "link") if value.get(k))
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{path}: {key}: give a reason or a link")
        entries[str(key)] = value.strip()
    return Baseline(entries)


@dataclass
class Outcome:
    """What a baseline made of a run."""

    known: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Returns True when the run fails under the baseline (a new failure or a stale entry)."""
        return bool(self.new or self.stale)


def classify(baseline: Baseline, scenario_id: str, verdict: str) -> str | None:
    """Returns what the baseline makes of one result: ``"known"`` (a listed failure), ``"new"`` (an
    unlisted failure), ``"stale"`` (a listed scenario that passes now), or None."""
    listed = scenario_id in baseline.entries
    if verdict in FAILING:
        return "known" if listed else "new"
    if verdict in PASSING and listed:
        return "stale"
    return None


def apply(baseline: Baseline, verdicts: dict[str, str]) -> Outcome:
    """Judges a run (scenario id -> verdict) against the baseline."""
    out = Outcome()
    for scenario_id, verdict in verdicts.items():
        judged = classify(baseline, scenario_id, verdict)
        if judged is not None:
            getattr(out, judged).append(scenario_id)
    out.not_run = sorted(set(baseline.entries) - set(out.known) - set(out.stale) - set(out.new))
    return out


def report_section(path: Path, outcome: Outcome) -> dict[str, Any]:
    """Returns the JSON report's ``baseline`` member: the file and what it made of the run."""
    return {"file": str(path), "known": len(outcome.known), "new": list(outcome.new),
            "stale": list(outcome.stale), "not_run": list(outcome.not_run), "failed": outcome.failed}


def entry_reason(verdict: str, reason: str, masks: tuple[tuple[str, str], ...] = ()) -> str:
    """Returns a new entry's reason: the verdict and the first line of the result's reason, with the
    run's temporary paths masked (``${workspace}``, and the target's own ``masks``), so regenerating a
    baseline does not change it."""
    from harness.record.snapshot import mask_text
    first = (mask_text(reason, masks).strip().splitlines() or [verdict])[0][:200]
    return f"{verdict}: {first}"


def render(failures: Iterable[tuple[str, str]], header: str = "") -> str:
    """Returns baseline text for (scenario id, reason) pairs, sorted by id."""
    lines = ["# harness baseline: known failures; a listed failure does not fail the run,",
             "# a listed scenario that passes does (remove its entry). Give each a reason or a link."]
    if header:
        lines.append(f"# {header}")
    body = {key: reason for key, reason in sorted(failures)}
    text = "\n".join(lines) + "\n"
    if body:
        text += yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
    return text


def write(path: Path, results: Iterable[Any], header: str = "", masks: tuple[tuple[str, str], ...] = ()) -> int:
    """Writes a baseline of every failing result; keeps reasons already given in an existing file.

    ``results`` are ``Result`` objects or JSON-shaped mappings. Returns the number of entries.
    """
    previous = Baseline()
    if Path(path).is_file():
        try:
            previous = load(path)
        except ValueError:
            pass  # rewriting a broken file is what was asked
    failures = []
    for result in results:
        scenario_id, verdict, reason = _fields(result)
        if verdict in FAILING:
            failures.append((scenario_id, previous.entries.get(scenario_id) or entry_reason(verdict, reason, masks)))
    # A new file renamed over ``path``: a link a checkout left there (``baseline.yaml`` is the likeliest
    # name to carry) is replaced, never written through, and a FIFO there never blocks the run.
    from harness.util.fileio import write_replacing
    write_replacing(path, render(failures, header))
    return len(failures)


def _fields(result: Any) -> tuple[str, str, str]:
    if isinstance(result, dict):
        return result["id"], result["verdict"], result.get("reason", "")
    return result.id, result.verdict.value, result.reason
