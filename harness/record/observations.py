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
that observation (harness/record/snapshot/), so any two sources compare the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.record import snapshot as snap
from harness.util import limits
from harness.util.fileio import read_regular
from harness.util.printable import json_safe

if TYPE_CHECKING:
    from harness.run.options import RunOptions


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
    aspects: dict[str, str] | None = None  # per-aspect verdicts, every aspect judged (harness/scenario/aspects.py)
    #: True when a stable observation was made but its document not kept (a report with nothing to
    #: compare it with, see ``Collector``); ``tool`` then names its last call's tool.
    summary_only: bool = False
    tool: str | None = None
    former_ids: tuple[str, ...] = ()  # the ids the scenario had before a rename (its ``former_ids``)
    flaky: bool = False  # ``--repeat N``: the verdict or observation varied between the repeats

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

    def same_behaviour(self, other: Observation) -> bool:
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
    started: str | None = None  # a report's ``started``: when the run began (ISO 8601, UTC)

    def recorded(self) -> dict[str, Observation]:
        """Returns scenario id -> observation, for the scenarios with a stable observation."""
        return {key: obs for key, obs in self.observations.items() if obs.recorded}


def observation(result: dict[str, Any], masks: tuple[tuple[str, str], ...] = ()) -> Observation:
    """Returns the observation of one result in the JSON report's shape (``masks``: the target's snapshot masks)."""
    failures = [{"where": _where(index, step), **failure}
                for index, step in enumerate(result.get("steps", ())) for failure in step.get("failures", ())]
    failures += [{"where": "then", **failure} for failure in (result.get("then") or {}).get("failures", ())]
    return Observation(
        id=result["id"], profile=result.get("profile", ""), title=result.get("title", ""),
        source=result.get("source", ""), open_question=result.get("open_question"),
        verdict=result.get("verdict"), reason=result.get("reason", ""), failures=failures,
        known=result.get("known"), stale=result.get("stale"),
        aspects=result.get("aspects_observed") or result.get("aspects"),
        former_ids=tuple(str(key) for key in result.get("former_ids") or () if isinstance(key, str)),
        flaky=result.get("flaky") is True,
        doc=snap.document(result, masks) if snap.is_recordable(result) else None)


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
        return [_from_document(run, path, f"runs[{number}].") for number, run in enumerate(data["runs"])]
    return [_from_document(data, path)]


def _from_document(data: Any, path: Path, where: str = "") -> Source:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{path}: not a harness JSON report (no results list{' in ' + where[:-1] if where else ''})")
    problem = _shape_problem(data)
    if problem is not None:  # a report from anywhere (a CI artifact, a fork's job): named, never a traceback
        raise ValueError(f"{path}: not a harness JSON report: {where}{problem}")
    data = json_safe(data)  # lone surrogates (a ``\ud800`` escape) escaped: every output can encode them
    target = dict(data.get("target") or {})
    if data.get("leftovers"):  # shown once per target, like start_error
        target["leftovers"] = data["leftovers"]
    source = Source(label=str(target.get("spec") or Path(path).stem), origin=str(path), kind="json", target=target,
                    started=data["started"] if isinstance(data.get("started"), str) else None)
    for result in data["results"]:
        if isinstance(result, dict) and "id" in result:
            source.observations[result["id"]] = observation(result)
    return source


_VERDICTS = ("pass", "fail", "recorded", "skip", "error")
_RESULT_TEXTS = ("profile", "title", "source", "reason", "open_question", "known", "stale")
_FAILURE_TEXTS = ("path", "expected", "why")


def _kind(value: Any) -> str:
    """Names the JSON kind of ``value`` (never the value: a report may hold anything)."""
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _texts(owner: dict[str, Any], keys: Iterable[str], where: str) -> str | None:
    for key in keys:
        if owner.get(key) is not None and not isinstance(owner[key], str):
            return f"{where}{key}: {_kind(owner[key])}, not a string"
    return None


def _list_of_objects(value: Any, where: str) -> str | None:
    if not isinstance(value, list):
        return f"{where}: {_kind(value)}, not an array"
    for number, item in enumerate(value):
        if not isinstance(item, dict):
            return f"{where}[{number}]: {_kind(item)}, not an object"
    return None


def _workspace_problem(state: Any, where: str) -> str | None:
    if not isinstance(state, dict):
        return f"{where}: {_kind(state)}, not an object"
    for entry in state.values():
        if not isinstance(entry, dict):
            return f"{where}: an entry is {_kind(entry)}, not an object"
        problem = _texts(entry, ("text", "target"), f"{where}.<entry>.")
        if problem:
            return problem
    return None


def _shape_problem(data: dict[str, Any]) -> str | None:
    """Returns what in one target's JSON report (``harness run --json``) has a shape the reports
    cannot take, as ``member: what is wrong`` (``results[3].steps: a string, not an array``); None
    when it is sound. Only the members ``harness report`` and ``diff`` read are checked; unknown ones
    are left alone (new keys may be added)."""
    target = data.get("target")
    if target is not None:
        if not isinstance(target, dict):
            return f"target: {_kind(target)}, not an object"
        problem = _texts(target, ("name", "version", "spec", "start_error"), "target.")
        if problem:
            return problem
    if data.get("leftovers") is not None:
        problem = _list_of_objects(data["leftovers"], "leftovers")
        if problem:
            return problem
        for number, left in enumerate(data["leftovers"]):
            problem = _texts(left, ("path", "reason"), f"leftovers[{number}].")
            if problem:
                return problem
    for number, result in enumerate(data["results"]):
        problem = _result_problem(result, f"results[{number}]")
        if problem:
            return problem
    return None


def _result_problem(result: Any, where: str) -> str | None:
    if not isinstance(result, dict):
        return f"{where}: {_kind(result)}, not an object"
    if "id" in result and not isinstance(result["id"], str):
        return f"{where}.id: {_kind(result['id'])}, not a string"
    problem = _texts(result, _RESULT_TEXTS, f"{where}.")
    if problem:
        return problem
    verdict = result.get("verdict")
    if verdict is not None and verdict not in _VERDICTS:
        shown_kind = "a string" if isinstance(verdict, str) else _kind(verdict)
        return f"{where}.verdict: {shown_kind}, not one of {', '.join(_VERDICTS)}"
    for key in ("aspects", "aspects_observed"):
        value = result.get(key)
        if value is not None and (not isinstance(value, dict)
                                  or not all(isinstance(item, str) for item in value.values())):
            return f"{where}.{key}: {_kind(value) if not isinstance(value, dict) else 'an object'}, " \
                   "not an object of verdicts (strings)"
    if result.get("workspace") is not None:
        problem = _workspace_problem(result["workspace"], f"{where}.workspace")
        if problem:
            return problem
    steps = result.get("steps", [])
    problem = _list_of_objects(steps, f"{where}.steps")
    if problem:
        return problem
    for number, step in enumerate(steps):
        problem = _step_problem(step, f"{where}.steps[{number}]")
        if problem:
            return problem
    then = result.get("then")
    if then is not None:
        if not isinstance(then, dict):
            return f"{where}.then: {_kind(then)}, not an object"
        problem = _failures_problem(then.get("failures", []), f"{where}.then.failures")
        if problem:
            return problem
    return None


def _step_problem(step: dict[str, Any], where: str) -> str | None:
    if "action" not in step and not isinstance(step.get("tool"), str):
        return f"{where}: neither an action nor a tool (a string)"
    problem = _texts(step, ("name", "tool", "action"), f"{where}.")
    if problem:
        return problem
    extra = step.get("extra")
    if extra is not None:
        if not isinstance(extra, dict):
            return f"{where}.extra: {_kind(extra)}, not an object"
        if extra.get("workspace") is not None:
            problem = _workspace_problem(extra["workspace"], f"{where}.extra.workspace")
            if problem:
                return problem
    return _failures_problem(step.get("failures", []), f"{where}.failures")


def _failures_problem(failures: Any, where: str) -> str | None:
    problem = _list_of_objects(failures, where)
    if problem:
        return problem
    for number, failure in enumerate(failures):
        problem = _texts(failure, _FAILURE_TEXTS, f"{where}[{number}].")
        if problem:
            return problem
    return None


def _snapshot_problem(doc: dict[str, Any]) -> str | None:
    """Returns what in a snapshot document has a shape the reports cannot take (``steps[2].tool: an
    array, not a string``), None when it is sound; only what ``report`` and ``diff`` read is checked."""
    problem = _texts(doc, ("open_question",), "")
    if problem:
        return problem
    steps = doc.get("steps", [])
    problem = _list_of_objects(steps, "steps")
    if problem:
        return problem
    for number, step in enumerate(steps):
        problem = _texts(step, ("name", "tool", "action"), f"steps[{number}].")
        if problem:
            return problem
    return None


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
        problem = _snapshot_problem(doc)
        if problem is not None:  # a snapshot folder comes with a checkout (a pull request): named, never a traceback
            raise ValueError(f"{store.path(scenario_id)}: not a snapshot: {problem}")
        key = str(doc.get("scenario") or scenario_id)
        source.observations[key] = Observation(
            id=key, profile=str(doc.get("profile", "")), title=str(doc.get("title", "")),
            source=str(doc.get("source", "")), open_question=doc.get("open_question"), doc=doc, raw=text)
    return source


def from_results(label: str, results: Iterable[Any], info: Any = None, spec: str = "",
                 masks: tuple[tuple[str, str], ...] = ()) -> Source:
    """Wraps results of a run made here (``Result`` objects)."""
    source = Source(label=label, origin=spec or label, kind="run")
    if info is not None:
        source.target = {"name": info.name, "version": info.version, "spec": spec}
    for result in results:
        source.observations[result.id] = observation(result.as_dict(), masks)
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
    diff) and for an open question (its answer); otherwise only the verdict, reason, failures (as
    explained, without the observed values) and aspects are, so what a one-target run holds for
    these reports stays small.
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
        found = observation(result, getattr(getattr(run, "target", None), "snapshot_masks", ()))
        # A mismatch is shown by its explanation (harness/report/grid.py ``explain_cell``): the
        # observed value it was made from (a whole answer, for ``$contains``) is not kept until the end.
        # The first mismatch keeps the start of its observed text: the failure groups are made of it
        # (harness/report/groups.py reads at most its first 4,000 characters).
        found.failures = [{k: v for k, v in failure.items() if k != "observed"} if failure.get("explanation")
                          and number else failure for number, failure in enumerate(found.failures)]
        if found.failures and isinstance(found.failures[0].get("observed"), str):
            found.failures[0] = {**found.failures[0], "observed": found.failures[0]["observed"][:4000]}
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


def run_target(spec: str, scenarios: list[Any], options: RunOptions | None = None) -> Source:
    """Runs ``scenarios`` on the target ``spec`` with the run's ``options`` (harness/run/options.py
    ``RunOptions``), recording the workspace after each step."""
    from harness.run import assemble
    target = assemble.target(spec, options)
    with assemble.runner(target, options, record_states=True) as runner:
        results = runner.run_all(scenarios)
        info = runner.info
    return from_results(spec, results, info, spec, target.snapshot_masks)


def resolve(name: str, scenarios: list[Any] | None = None, options: RunOptions | None = None) -> Source:
    """Returns the source ``name`` stands for: a JSON report, a snapshot folder, or a target to run."""
    path = Path(name)
    if path.is_file():
        return from_report(path)
    if path.is_dir():
        return from_folder(path)
    return run_target(name, scenarios or [], options)


def resolve_all(name: str, scenarios: list[Any] | None = None,
                options: RunOptions | None = None) -> list[Source]:
    """Returns the sources ``name`` stands for: like :func:`resolve`, every target of a combined report."""
    if Path(name).is_file():
        return from_reports(Path(name))
    return [resolve(name, scenarios, options)]


MERGE_CANDIDATES = 64  # runs of one spec a report may still merge into: past them, an overlapping one stays apart


def _disjoint(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Returns True when the two have no scenario id in common, looking through the smaller only
    (a shard of a few results against the thousands merged so far)."""
    small, large = (one, other) if len(one) <= len(other) else (other, one)
    return not any(key in large for key in small)


def merge_shards(sources: list[Source]) -> list[Source]:
    """Returns the sources with the JSON reports of one target's shards merged into one source.

    Reports of the same target spec whose scenarios do not overlap (``harness run --shard K/N``)
    are one run split across jobs; reports that overlap stay apart (two runs to compare). Each
    report is looked up by its spec and compared with at most ``MERGE_CANDIDATES`` runs kept apart
    so far, so what merging costs grows with the reports, not with their square.
    """
    out: list[Source] = []
    by_spec: dict[str, list[Source]] = {}  # spec -> the merged JSON sources of that spec: one look each
    origins: dict[int, list[str]] = {}  # id(merged source) -> the files merged into it, joined once at the end
    for source in sources:
        spec = source.target.get("spec") if source.kind == "json" else None
        same = None
        if spec and isinstance(spec, str):
            same = next((s for s in by_spec.get(spec, ()) if _disjoint(source.observations, s.observations)), None)
        if same is None:
            out.append(source)
            if spec and isinstance(spec, str) and len(by_spec.setdefault(spec, [])) < MERGE_CANDIDATES:
                by_spec[spec].append(source)
        else:
            same.observations.update(source.observations)
            origins.setdefault(id(same), [same.origin]).append(source.origin)
    for source in out:
        if id(source) in origins:
            source.origin = " + ".join(origins[id(source)])
    return out


def unique_labels(sources: list[Source]) -> None:
    """Makes labels unique in place: a repeated label gets `` (2)``, `` (3)``..."""
    seen: dict[str, int] = {}
    for source in sources:
        count = seen.get(source.label, 0) + 1
        seen[source.label] = count
        if count > 1:
            source.label = f"{source.label} ({count})"
