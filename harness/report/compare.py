"""Two runs compared: ``harness compare OLD.json NEW.json``.

Every scenario of either run falls in one class:

- **new failure**: fails (``fail`` or ``error``) now, did not before;
- **still failing**: failed before and fails now;
- **fixed**: failed before, does not now (its verdict now is shown: ``pass``, ``recorded``, ``skip``);
- **new scenario**: only in the new run (its verdict is shown, and counted as failing when it fails);
- **gone**: only in the old run;
- **unchanged**: did not fail before and does not now (counted, not listed).

A scenario renamed between the runs (the new result lists its old id in ``former_ids``) is
matched to its old id, not reported as one gone and one new. A baseline's known failure is still
a failure here: the comparison is about behaviour, not about what was excused.

The targets of the two files are paired by their spec; when each file holds one target they are
paired whatever their specs (a new version of one tool is usually a new spec). New failures come
first in every rendering: they are what a reviewer acts on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLASSES = ("new failure", "still failing", "fixed", "new scenario", "gone", "unchanged")
FAILING = ("fail", "error")


@dataclass
class Entry:
    """One scenario in the comparison."""

    id: str
    kind: str  # one of CLASSES
    old: str | None  # the verdict before (None: not in the old run)
    new: str | None  # the verdict now
    reason: str = ""  # the new run's reason (the old run's for a fixed or gone scenario)
    former: str | None = None  # the old id, when the scenario was renamed

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "class": self.kind, "old": self.old, "new": self.new,
                               "reason": self.reason}
        if self.former:
            out["former_id"] = self.former
        return out


@dataclass
class Pair:
    """One target compared across the two runs."""

    old_label: str
    new_label: str
    entries: list[Entry] = field(default_factory=list)

    def of(self, kind: str) -> list[Entry]:
        return [entry for entry in self.entries if entry.kind == kind]


@dataclass
class Outcome:
    """The comparison of two runs: one pair per target."""

    old: str
    new: str
    pairs: list[Pair] = field(default_factory=list)

    def of(self, kind: str) -> list[Entry]:
        return [entry for pair in self.pairs for entry in pair.of(kind)]

    def counts(self) -> dict[str, int]:
        return {kind: len(self.of(kind)) for kind in CLASSES}

    def as_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "counts": self.counts(),
                "targets": [{"old": pair.old_label, "new": pair.new_label, "counts":
                             {kind: len(pair.of(kind)) for kind in CLASSES},
                             "scenarios": [entry.as_dict() for entry in _ordered(pair.entries)]}
                            for pair in self.pairs]}


def _ordered(entries: Iterable[Entry]) -> list[Entry]:
    rank = {kind: number for number, kind in enumerate(CLASSES)}
    return sorted(entries, key=lambda entry: (rank[entry.kind], entry.id))


def classify(old: dict[str, Any], new: dict[str, Any]) -> list[Entry]:
    """Classifies every scenario; ``old`` and ``new`` map scenario id -> observation (harness/record/observations.py)."""
    renamed: dict[str, str] = {}  # old id -> new id
    for scenario_id, obs in new.items():
        for former in getattr(obs, "former_ids", None) or ():
            if former in old and former not in new:
                renamed[former] = scenario_id
    entries = []
    matched_old = set()
    for scenario_id, obs in new.items():
        former = next((key for key, value in renamed.items() if value == scenario_id), None)
        before = old.get(scenario_id) or (old.get(former) if former else None)
        if before is None:
            kind = "new scenario"
        else:
            matched_old.add(former if scenario_id not in old else scenario_id)
            was, now = before.verdict in FAILING, obs.verdict in FAILING
            kind = ("still failing" if was and now else "new failure" if now else "fixed" if was else "unchanged")
        reason = obs.reason if kind != "fixed" else (before.reason if before else "")
        entries.append(Entry(scenario_id, kind, before.verdict if before else None, obs.verdict, reason,
                             former if before is not None and scenario_id not in old else None))
    for scenario_id, obs in old.items():
        if scenario_id not in matched_old and scenario_id not in new:
            entries.append(Entry(scenario_id, "gone", obs.verdict, None, obs.reason))
    return _ordered(entries)


def compare_sources(old: list[Any], new: list[Any], old_name: str = "old", new_name: str = "new") -> Outcome:
    """Compares two lists of sources (harness/record/observations.py ``Source``), pairing targets by spec."""
    outcome = Outcome(old_name, new_name)
    if len(old) == 1 and len(new) == 1:
        pairs = [(old[0], new[0])]
    else:
        by_label = {source.label: source for source in old}
        missing = [source.label for source in new if source.label not in by_label]
        if missing:
            raise ValueError(f"{new_name}: no target {', '.join(missing)} in {old_name} "
                             f"(it has {', '.join(by_label) or 'none'})")
        pairs = [(by_label[source.label], source) for source in new]
    for before, now in pairs:
        outcome.pairs.append(Pair(before.label, now.label, classify(before.observations, now.observations)))
    return outcome


def compare_files(old: Path, new: Path | list[Path]) -> Outcome:
    """Compares the JSON reports at ``old`` and ``new`` (one path, or several making one run)."""
    from harness.record import observations as sources
    news = [new] if isinstance(new, Path) else list(new)
    new_sources = [source for path in news for source in sources.from_reports(path)]
    return compare_sources(sources.from_reports(old), new_sources, str(old), ", ".join(map(str, news)))


# -- renderings -------------------------------------------------------------------------------------

def _counts_line(counts: dict[str, int]) -> str:
    return " · ".join(f"{counts[kind]} {kind}" for kind in CLASSES)


def _verdicts(entry: Entry) -> str:
    return f"{entry.old or '—'} → {entry.new or '—'}"


def terminal(outcome: Outcome, width: int = 80) -> str:
    """Returns the plain-text comparison: per target, the counts, then new failures first."""
    from harness.util.printable import shown
    lines = []
    for pair in outcome.pairs:
        title = pair.new_label if pair.old_label == pair.new_label else f"{pair.old_label} → {pair.new_label}"
        lines.append(shown(title))
        lines.append("  " + _counts_line({kind: len(pair.of(kind)) for kind in CLASSES}))
        for kind in CLASSES[:-1]:
            entries = pair.of(kind)
            if not entries:
                continue
            lines.append(f"{kind.upper()} ({len(entries)})")
            for entry in entries:
                renamed = f" (was {entry.former})" if entry.former else ""
                lines.append(f"  {shown(entry.id)}{shown(renamed)}  {_verdicts(entry)}")
                if entry.reason and kind in ("new failure", "still failing", "new scenario"):
                    reason = shown(entry.reason.splitlines()[0] if entry.reason.splitlines() else "")
                    room = max(20, width - 6)
                    lines.append("      " + (reason if len(reason) <= room else reason[: room - 1] + "…"))
    return "\n".join(lines)


def markdown(outcome: Outcome) -> str:
    """Returns the comparison in Markdown (the step summary): new failures first."""
    from harness.report.markdown import _cell as cell
    from harness.report.markdown import _span as span
    lines = ["## Compared with an earlier run", ""]
    for pair in outcome.pairs:
        title = pair.new_label if pair.old_label == pair.new_label else f"{pair.old_label} → {pair.new_label}"
        lines += [f"**{cell(title)}**: " + _counts_line({kind: len(pair.of(kind)) for kind in CLASSES}), ""]
        for kind in CLASSES[:-1]:
            entries = pair.of(kind)
            if not entries:
                continue
            lines += [f"### {kind.capitalize()} ({len(entries)})", "", "| scenario | verdict | reason |",
                      "|---|---|---|"]
            for entry in entries:
                renamed = f" (was {span(entry.former)})" if entry.former else ""
                first = entry.reason.splitlines()[0] if entry.reason.splitlines() else ""
                lines.append(f"| {span(entry.id)}{renamed} | {_verdicts(entry)} | {cell(first[:200])} |")
            lines.append("")
    return "\n".join(lines)


def write_json(path: Path, outcome: Outcome) -> None:
    from harness.util.fileio import write_replacing
    write_replacing(path, json.dumps(outcome.as_dict(), indent=1, ensure_ascii=False) + "\n")
