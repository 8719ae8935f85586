"""The JSON report: a public contract for CI users (docs/json-report.md describes it)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import harness
from harness.report.writer import remove_folder_reports
from harness.scenario.model import Result, Verdict
from harness.targets.base import TargetInfo
from harness.util.fileio import write_replacing
from harness.util.printable import json_safe, json_safe_at

FORMAT_VERSION = 1


def summary(results: Iterable[Result]) -> dict[str, int]:
    """Returns the count of each verdict, every verdict present (zero when none), and ``known``.

    Under a baseline, a listed ``fail`` or ``error`` counts as ``known``, not under its verdict: the
    counts add up to the number of results, and ``fail`` and ``error`` are what fails the run.
    """
    counts = Counter(result.counted_as for result in results)
    out = {verdict.value: counts.get(verdict.value, 0) for verdict in Verdict}
    out["known"] = counts.get("known", 0)
    return out


def document(results: list[Result], target: TargetInfo, spec: str, seconds: float | None = None, *,
             start_error: str | None = None, baseline: dict[str, Any] | None = None,
             leftovers: list[Any] | None = None, started: str | None = None) -> dict[str, Any]:
    """Returns the report as a JSON-ready mapping (``started``: when the run began, ISO 8601 UTC)."""
    data: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "harness": {"version": harness.__version__},
        "target": {"name": target.name, "version": target.version, "spec": spec},
        "results": [result.as_dict() for result in results],
        "summary": summary(results),
    }
    if start_error:
        data["target"]["start_error"] = start_error
    if baseline is not None:
        data["baseline"] = baseline
    if seconds is not None:
        data["seconds"] = round(seconds, 3)
    if leftovers:  # workspaces that could not be removed (harness/containment/cleanup.py, Leftover): the run fails
        data["leftovers"] = [left.as_dict() if hasattr(left, "as_dict") else dict(left) for left in leftovers]
    if started:
        data["started"] = started
    return data


def now() -> str:
    """Returns the current time as the report's ``started`` gives it: ISO 8601 in UTC, to the second."""
    import datetime
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write(path: Path, results: list[Result], target: TargetInfo, spec: str, seconds: float | None = None,
          **extra: Any) -> None:
    """Writes the report to ``path`` (``extra``: ``start_error``, ``baseline``, ``leftovers``; see ``document``)."""
    # Strict JSON whatever a candidate said (NaN, lone surrogates, deep values: harness/util/printable.py).
    text = json.dumps(json_safe(document(results, target, spec, seconds, **extra)), indent=1, ensure_ascii=False,
                      default=str, allow_nan=False)
    write_replacing(path, text + "\n")


def run_extra(run: Any) -> dict[str, Any]:
    """Returns what a target's run adds to its report: why it did not start, what the baseline made of it,
    the workspaces it could not remove."""
    return {"start_error": getattr(run, "start_error", None), "baseline": getattr(run, "baseline", None),
            "leftovers": getattr(run, "leftovers", None), "started": getattr(run, "started", None)}


def write_combined(path: Path, runs: list[Any]) -> None:
    """Writes several targets' reports into one file: ``{"format", "harness", "runs": [report, ...]}``.

    Each item of ``runs`` is the report :func:`write` would have written for that target alone;
    ``harness report`` and ``harness diff`` read every run of such a file.
    """
    data = {"format": FORMAT_VERSION, "harness": {"version": harness.__version__},
            "runs": [document(run.results, run.info, run.spec, run.seconds, **run_extra(run)) for run in runs]}
    write_replacing(path, json.dumps(json_safe(data), indent=1, ensure_ascii=False, default=str, allow_nan=False)
                    + "\n")


# -- written as the run goes -------------------------------------------------------------------

def _dump(value: Any, depth: int) -> str:
    """Returns ``value`` as the report writes it ``depth`` levels deep (indent 1, made safe there)."""
    text = json.dumps(json_safe_at(value, depth), indent=1, ensure_ascii=False, default=str, allow_nan=False)
    return text.replace("\n", "\n" + " " * depth) if depth else text


class Stream:
    """One target's report written as its results come: ``begin``, ``add`` each result, ``end``.

    The text is the one :func:`write` gives for the same results (``depth`` 2 inside a combined
    file's ``runs``), so nothing but the result being written is held. An ``end`` with
    ``interrupted`` closes the document with what ran so far and ``"interrupted": true``.
    """

    def __init__(self, handle: Any, depth: int = 0) -> None:
        self.handle, self.depth = handle, depth
        self.count = 0
        self.started: str | None = None

    def begin(self, target: TargetInfo, spec: str, *, start_error: str | None = None,
              started: str | None = None) -> None:
        """Writes the document's start: format, harness, target, and the opening of ``results``;
        ``started`` (when the run began) is written at the end, where :func:`document` has it."""
        self.started = started
        head: dict[str, Any] = {"format": FORMAT_VERSION, "harness": {"version": harness.__version__},
                                "target": {"name": target.name, "version": target.version, "spec": spec}}
        if start_error:
            head["target"]["start_error"] = start_error
        indent = " " * self.depth
        text = _dump(head, self.depth)
        self.handle.write(indent + text[: -len("\n" + indent + "}")] + ",\n" + indent + ' "results": [')

    def add(self, result: dict[str, Any]) -> None:
        """Writes one result (``Result.as_dict()``) at once."""
        indent = " " * (self.depth + 2)
        self.handle.write(("\n" if not self.count else ",\n") + indent + _dump(result, self.depth + 2))
        self.handle.flush()  # on disk before the next scenario runs: a report to follow, and what a crash leaves
        self.count += 1

    def end(self, summary: dict[str, int], seconds: float | None = None, *, baseline: dict[str, Any] | None = None,
            leftovers: list[Any] | None = None, interrupted: bool = False) -> None:
        """Writes the document's end: ``summary`` (the verdict counts), and what :func:`document` adds."""
        indent = " " * self.depth
        if interrupted:  # a run cut short did not show that nothing would have run
            summary = {key: value for key, value in summary.items() if key != "nothing_ran"}
        tail: dict[str, Any] = {"summary": summary}
        if baseline is not None:
            tail["baseline"] = baseline
        if seconds is not None:
            tail["seconds"] = round(seconds, 3)
        if leftovers:
            tail["leftovers"] = [left.as_dict() if hasattr(left, "as_dict") else dict(left) for left in leftovers]
        if self.started:
            tail["started"] = self.started
        if interrupted:  # the run was stopped (Ctrl-C, SIGTERM): the results are those that ran
            tail["interrupted"] = True
        closing = ("\n" + indent + " ]") if self.count else "]"
        self.handle.write(closing + "," + _dump(tail, self.depth)[1:])


class Combined:
    """Several targets' reports in one file (:func:`write_combined`'s text), each target's document
    written to its own spool as it goes and put together in target order at the end."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.spools: list[Any] = []

    def stream(self) -> Stream:
        """Returns the stream of the next target's document (written to a temporary spool)."""
        import tempfile
        spool = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.spools.append(spool)
        return Stream(spool, depth=2)

    def close(self, *, interrupted: bool = False) -> None:
        """Writes the file: every target's document, in order; ``"interrupted": true`` when the run was stopped."""
        import shutil
        head = json.dumps({"format": FORMAT_VERSION, "harness": {"version": harness.__version__}}, indent=1,
                          ensure_ascii=False)
        self.handle.write(head[: -len("\n}")] + ',\n "runs": [')
        for number, spool in enumerate(self.spools):
            self.handle.write("\n" if number == 0 else ",\n")
            spool.seek(0)
            shutil.copyfileobj(spool, self.handle)
            spool.close()
        self.handle.write(("\n ]" if self.spools else "]") + (',\n "interrupted": true' if interrupted else "") + "\n}\n")


class JsonWriter:
    """``--json FILE|DIR``: each target's JSON report written as its results come (harness/report/writer.py).

    A folder gets one file per target (``<slug>.json``); a file gets one target's document, or, for
    several targets, every target's document (spooled, put together at the end).
    """

    def __init__(self, path: Path, files: Any, *, several: bool, slugs: Any, baseline_file: Path | None) -> None:
        self.path, self.files, self.baseline_file = Path(path), files, baseline_file
        remove_folder_reports(self.path, ".json", slugs)
        self.combined: Combined | None = None
        self.combined_file: Any = None
        if several and not self.path.is_dir():
            self.combined_file = files.open(self.path, replace_now=False)
            self.combined = Combined(self.combined_file.handle)
        self.parts: dict[int, tuple[Stream, Any]] = {}

    def begin(self, part: Any) -> None:
        run = part.run
        if self.combined is not None:
            stream, file = self.combined.stream(), None
        else:
            path = self.path / f"{self.files.name(run)}.json" if self.path.is_dir() else self.path
            file = self.files.open(path)
            stream = Stream(file.handle)
        stream.begin(run.info, run.spec, start_error=run.start_error, started=now())
        self.parts[id(run)] = (stream, file)

    def add(self, part: Any, result: Result, data: dict[str, Any]) -> None:
        self.parts[id(part.run)][0].add(data)

    def close(self, parts: Any, *, interrupted: bool) -> None:
        for part in parts:
            stream, file = self.parts[id(part.run)]
            stream.end(part.tally.summary(), part.run.seconds, baseline=self._baseline(part),
                       leftovers=part.run.leftovers, interrupted=interrupted)
            if file is not None:
                file.handle.write("\n")
                file.done()
        if self.combined is not None:
            self.combined.close(interrupted=interrupted)
            self.combined_file.done()

    def abandon(self) -> list[Path]:
        """Removes the files not yet completed (the disk refused one); returns their paths."""
        files = [file for _, file in self.parts.values() if file is not None and not file.completed]
        if self.combined_file is not None and not self.combined_file.completed:
            files.append(self.combined_file)
        for file in files:
            file.abandon()
        return [file.path for file in files]

    def _baseline(self, part: Any) -> dict[str, Any] | None:
        """Returns the report's ``baseline`` member (None without a readable baseline)."""
        if part.tally.baseline is None or self.baseline_file is None:
            return None
        from harness.record import baseline
        return baseline.report_section(self.baseline_file, part.tally.outcome())
