"""Where recorded behaviour comes from, for ``harness diff`` and ``harness report``.

A *source* is one of:

- a JSON report written by ``harness run --json FILE`` (an existing file): its results, with
  verdicts, reasons and unmet expectations (a report of several targets in one file is one source
  per target);
- a snapshot folder, ``snapshots/<target slug>`` (an existing directory): observations only, no
  verdicts (the folder says what a target did, not whether that was right);
- a target spec (``reference``, ``cmd:...``, ...; anything that is not an existing path): the
  selected scenarios are run on it now.

Every source becomes the same thing: one observation per scenario id, with the snapshot document of
that observation (harness/snapshot.py), so any two sources compare the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from harness import limits, snapshot as snap
from harness.safepath import read_regular


@dataclass
class Observation:
    """One scenario on one source: its verdict (None for a snapshot folder) and recorded behaviour.

    The behaviour is held as a snapshot document (``doc``) or as a snapshot file's text (``raw``);
    each is derived from the other only when asked for, since YAML costs time on a whole catalog.
    """

    id: str
    profile: str
    title: str = ""
    source: str = ""
    open_question: str | None = None
    verdict: str | None = None
    reason: str = ""
    failures: list[dict[str, Any]] = field(default_factory=list)  # (where, mismatch) as mappings
    doc: dict[str, Any] | None = None  # the snapshot document; None when nothing stable was observed
    raw: str | None = None  # the snapshot text as stored, for a snapshot folder
    known: str | None = None  # a baseline's known failure: the baseline's reason
    stale: str | None = None  # listed in the baseline but passes now: the baseline's reason
    aspects: dict[str, str] | None = None  # per-aspect verdicts, every aspect judged (harness/aspects.py)
    #: True when a stable observation was made but its document not kept (a report with nothing to
    #: compare it with, see ``Collector``); ``tool`` then names its last call's tool.
    summary_only: bool = False
    tool: str | None = None

    @property
    def recorded(self) -> bool:
        """Returns True when there is a stable observation (not a skip or an error)."""
        return self.doc is not None or self.raw is not None or self.summary_only

    @property
    def document(self) -> dict[str, Any] | None:
        """Returns the snapshot document, or None."""
        if self.doc is None and self.raw is not None:
            self.doc = snap.parse(self.raw)
        return self.doc

    @property
    def text(self) -> str | None:
        """Returns the snapshot text, or None."""
        if self.raw is None and self.doc is not None:
            self.raw = snap.render(self.doc)
        return self.raw

    def same_behaviour(self, other: "Observation") -> bool:
        """Returns True when both recorded the same behaviour (the scenario's words aside)."""
        return snap.behaviour(self.document or {}) == snap.behaviour(other.document or {})


@dataclass
class Source:
    """One target's observations, from a report, a snapshot folder or a run."""

    label: str
    origin: str  # the path or spec it came from
    kind: str  # "json" | "snapshots" | "run"
    target: dict[str, Any] = field(default_factory=dict)  # name, version, spec when known
    observations: dict[str, Observation] = field(default_factory=dict)

    def recorded(self) -> dict[str, Observation]:
        """Returns scenario id -> observation, for the scenarios with a stable observation."""
        return {key: obs for key, obs in self.observations.items() if obs.recorded}


def observation(result: dict[str, Any]) -> Observation:
    """Returns the observation of one result in the JSON report's shape."""
    failures = [{"where": _where(index, step), **failure}
                for index, step in enumerate(result.get("steps", ())) for failure in step.get("failures", ())]
    failures += [{"where": "then", **failure} for failure in (result.get("then") or {}).get("failures", ())]
    return Observation(
        id=result["id"], profile=result.get("profile", ""), title=result.get("title", ""),
        source=result.get("source", ""), open_question=result.get("open_question"),
        verdict=result.get("verdict"), reason=result.get("reason", ""), failures=failures,
        known=result.get("known"), stale=result.get("stale"),
        aspects=result.get("aspects_observed") or result.get("aspects"),
        doc=snap.document(result) if snap.is_recordable(result) else None)


def _where(index: int, step: dict[str, Any]) -> str:
    return f"step {index + 1} ({step.get('name') or step.get('tool') or step.get('action')})"


def from_report(path: Path) -> Source:
    """Reads a JSON report of one target (``harness run --json``)."""
    sources = from_reports(path)
    if len(sources) != 1:
        raise ValueError(f"{path}: holds the reports of {len(sources)} targets; one is needed here")
    return sources[0]


def from_reports(path: Path) -> list[Source]:
    """Reads a JSON report: one target's, or several targets' in one file (``{"runs": [...]}``)."""
    try:
        data = json.loads(read_regular(path, limits.MAX_REPORT_FILE, follow_link=True))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable JSON report: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a readable JSON report: it nests too deep to parse") from None
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        return [_from_document(run, path) for run in data["runs"]]
    return [_from_document(data, path)]


def _from_document(data: Any, path: Path) -> Source:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{path}: not a harness JSON report (no results list)")
    target = dict(data.get("target") or {})
    if data.get("leftovers"):  # shown once per target, like start_error
        target["leftovers"] = data["leftovers"]
    source = Source(label=str(target.get("spec") or Path(path).stem), origin=str(path), kind="json", target=target)
    for result in data["results"]:
        if isinstance(result, dict) and "id" in result:
            source.observations[result["id"]] = observation(result)
    return source


def from_folder(folder: Path) -> Source:
    """Reads a snapshot folder (one target's: ``snapshots/<slug>``)."""
    folder = Path(folder)
    source = Source(label=folder.name, origin=str(folder), kind="snapshots")
    store = snap.SnapshotStore(folder.parent, folder.name)
    for scenario_id in snap.folder_ids(folder):
        try:
            text = store.read(scenario_id)
        except snap.SnapshotUnreadable as exc:
            raise ValueError(str(exc)) from None
        if text is None:
            continue
        doc = snap.stored_behaviour(text) is not None and snap.parse(text)
        if not isinstance(doc, dict):
            raise ValueError(f"{store.path(scenario_id)}: not a snapshot (a YAML mapping within the nesting cap)")
        key = str(doc.get("scenario") or scenario_id)
        source.observations[key] = Observation(
            id=key, profile=str(doc.get("profile", "")), title=str(doc.get("title", "")),
            source=str(doc.get("source", "")), open_question=doc.get("open_question"), doc=doc, raw=text)
    return source


def from_results(label: str, results: Iterable[Any], info: Any = None, spec: str = "") -> Source:
    """Wraps results of a run made here (``Result`` objects)."""
    source = Source(label=label, origin=spec or label, kind="run")
    if info is not None:
        source.target = {"name": info.name, "version": info.version, "spec": spec}
    for result in results:
        source.observations[result.id] = observation(result.as_dict())
    return source


def from_runs(runs: list[Any]) -> list[Source]:
    """Wraps the runs of one invocation (TargetRun), each with what it says once: why it did not start, its leftovers."""
    collector = Collector(several=True)  # every observation whole, as from_results keeps it
    for run in runs:
        for result in run.results:
            collector.add(run, result.as_dict())
    return collector.sources(runs)


class Collector:
    """The columns of the Markdown and HTML reports, filled as a run's results come (``add``).

    Each result becomes an :class:`Observation` at once. Its snapshot document is kept only where a
    report uses it: with several targets (a cell that behaves unlike the first column shows the
    diff) and for an open question (its answer); otherwise only the verdict, reason, failures and
    aspects are, so what a one-target run holds for these reports stays small.
    """

    def __init__(self, several: bool) -> None:
        self.several = several
        self.columns: dict[int, Source] = {}  # id(TargetRun) -> its column, in order of the targets

    def add(self, run: Any, result: dict[str, Any]) -> None:
        """Adds one result (JSON shape) of ``run`` (a TargetRun) to its column."""
        column = self.columns.get(id(run))
        if column is None:
            column = self.columns[id(run)] = Source(label=run.spec, origin=run.spec, kind="run")
            column.target = {"name": run.info.name, "version": run.info.version, "spec": run.spec}
        found = observation(result)
        if found.doc is not None and not self.several and not found.open_question:
            tools = [step["tool"] for step in found.doc.get("steps", ()) if "tool" in step]
            found.doc, found.summary_only, found.tool = None, True, tools[-1] if tools else ""
        column.observations[result["id"]] = found

    def sources(self, runs: list[Any]) -> list[Source]:
        """Returns the columns of ``runs`` (every run, one without results empty), each with what its run says once."""
        columns = []
        for run in runs:
            column = self.columns.get(id(run)) or Source(label=run.spec, origin=run.spec, kind="run")
            column.target = {"name": run.info.name, "version": run.info.version, "spec": run.spec}
            if getattr(run, "start_error", None):
                column.target["start_error"] = run.start_error
            if getattr(run, "leftovers", None):
                column.target["leftovers"] = [left.as_dict() for left in run.leftovers]
            columns.append(column)
        unique_labels(columns)
        return columns


def run_target(spec: str, scenarios: list[Any], **options: Any) -> Source:
    """Runs ``scenarios`` on the target ``spec`` (recording the workspace after each step)."""
    from harness.runner import Runner
    from harness.targets import make_target
    target = make_target(spec, **options)
    with Runner(target, record_states=True) as runner:
        results = runner.run_all(scenarios)
        info = runner.info
    return from_results(spec, results, info, spec)


def resolve(name: str, scenarios: list[Any] | None = None, **options: Any) -> Source:
    """Returns the source ``name`` stands for: a JSON report, a snapshot folder, or a target to run."""
    path = Path(name)
    if path.is_file():
        return from_report(path)
    if path.is_dir():
        return from_folder(path)
    return run_target(name, scenarios or [], **options)


def resolve_all(name: str, scenarios: list[Any] | None = None, **options: Any) -> list[Source]:
    """Returns the sources ``name`` stands for: like :func:`resolve`, every target of a combined report."""
    if Path(name).is_file():
        return from_reports(Path(name))
    return [resolve(name, scenarios, **options)]


def merge_shards(sources: list[Source]) -> list[Source]:
    """Returns the sources with the JSON reports of one target's shards merged into one source.

    Reports of the same target spec whose scenarios do not overlap (``harness run --shard K/N``)
    are one run split across jobs; reports that overlap stay apart (two runs to compare).
    """
    out: list[Source] = []
    for source in sources:
        same = next((s for s in out if s.kind == source.kind == "json" and s.target.get("spec")
                     and s.target.get("spec") == source.target.get("spec")
                     and not set(s.observations) & set(source.observations)), None)
        if same is None:
            out.append(source)
        else:
            same.observations.update(source.observations)
            same.origin = f"{same.origin} + {source.origin}"
    return out


def unique_labels(sources: list[Source]) -> None:
    """Makes labels unique in place: a repeated label gets `` (2)``, `` (3)``..."""
    seen: dict[str, int] = {}
    for source in sources:
        count = seen.get(source.label, 0) + 1
        seen[source.label] = count
        if count > 1:
            source.label = f"{source.label} ({count})"
