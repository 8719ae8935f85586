"""Hands each result of ``harness run`` to every report writer as it is produced, in catalog order.

A run's results arrive one at a time, target after target (harness/run/workers.py ``emit``). Each is
judged by the run's aspects and baseline, counted (harness/report/tally.py) and handed to every
writer (harness/report/writer.py; harness/report/formats.py picks them from the options), which
writes it at once. The JSON and JUnit reports, the snapshots, the last run's state (``harness show``,
``--lf``) and the columns of the Markdown and HTML reports are each one writer.

Nothing else of a result is held: the tally keeps the counts and the failures, whose details the
terminal prints at the end. So what a run holds does not grow with the scenarios that pass.

A report file is written under ``<file>.partial`` and renamed to ``<file>`` when it is complete; a
run that is interrupted (Ctrl-C, SIGTERM) completes its JSON and JUnit files with what ran so far,
marked ``"interrupted": true`` (JSON) or by a closing comment (JUnit). A run killed outright leaves
only ``<file>.partial``: the report of an earlier run is removed when a run starts, so no file
passes for this run's report unless it is complete.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.report import formats
from harness.report.snapshots import SnapshotWriter
from harness.report.writer import PARTIAL, Files, Part, Writer

if TYPE_CHECKING:  # the tally and the snapshots' checkers are made as a target's first result comes
    from harness.report.tally import Tally

__all__ = ["PARTIAL", "Reports"]


class Reports:
    """The writers of one ``harness run``: ``add`` each result (in catalog order), ``finish`` with
    the runs, then the terminal report reads ``tally(run)`` and ``snapshots(run)``; ``close`` writes
    what is put together at the end. ``close(interrupted=True)`` when the run was stopped."""

    def __init__(self, options: Any, broken: list[Any], *, several: bool, state: Path | None = None,
                 matrix: bool = False, slugs: Any = ()) -> None:
        self.options, self.broken, self.several, self.matrix = options, broken, several, matrix
        self.targets: list[Part] = []
        self._by_run: dict[int, Part] = {}
        self.baseline: Any = None
        self.baseline_error: str | None = None
        if options.baseline:
            from harness.record import baseline
            try:
                self.baseline = baseline.load(options.baseline)
            except ValueError as exc:  # said by the terminal report; no result is judged
                self.baseline_error = str(exc)
        self.files = Files()
        try:
            self.writers: list[Writer] = formats.writers(options, self.files, several=several, state=state,
                                                         matrix=matrix, slugs=slugs)
        except OSError:  # a report that cannot be written: nothing half-made is left (the caller says why)
            self.files.abandon()
            raise
        self.files.settled()  # all could be opened: the old ones go
        self.closed = False
        #: One line per report file that could not be written (a full disk, a folder gone), in order:
        #: that report is dropped (nothing half-written is left) and the others are still written.
        self.lost: list[str] = []

    # -- as the run goes -----------------------------------------------------------------------

    def add(self, run: Any, result: Any) -> None:
        """Takes one result of ``run`` (a TargetRun): judged, counted and written at once."""
        part = self._by_run.get(id(run))
        if part is None:
            part = self._begin(run)
        self._take(part, result)

    def _begin(self, run: Any) -> Part:
        from harness.report.tally import Tally
        part = Part(run, Tally(self.baseline, self.baseline_error))
        self.targets.append(part)
        self._by_run[id(run)] = part
        for writer in list(self.writers):
            self._guard(writer, functools.partial(writer.begin, part))
        for result in self.broken:  # each target's report holds the invalid files first
            self._take(part, result)
        return part

    def _take(self, part: Part, result: Any) -> None:
        from harness.scenario import aspects
        aspects.apply(result, self.options.aspects)  # `--aspects` narrows what the runner judged in full
        part.tally.add(result)  # marks a baseline's known failure first: every report shows it
        data = result.as_dict()
        for writer in list(self.writers):
            self._guard(writer, functools.partial(writer.add, part, result, data))

    def _guard(self, writer: Writer, write: Callable[[], None]) -> None:
        """Runs ``write`` (a step of ``writer``); when the disk refuses it, that report is dropped: its
        files removed, said in one line each (``lost``), the other writers going on."""
        try:
            write()
        except OSError as exc:
            self.writers.remove(writer)
            why = exc.strerror or str(exc)
            abandon = getattr(writer, "abandon", None)
            for path in (abandon() if abandon is not None else [getattr(writer, "path", type(writer).__name__)]):
                self.lost.append(f"cannot write a report: {path}: {why}")

    def finish(self, runs: list[Any]) -> None:
        """Begins the reports of the runs no result reached (every target has its report)."""
        for run in runs:
            if id(run) not in self._by_run:
                self._begin(run)
        order = {id(run): number for number, run in enumerate(runs)}
        self.targets.sort(key=lambda part: order.get(id(part.run), len(order)))

    # -- at the end ----------------------------------------------------------------------------

    def tally(self, run: Any) -> Tally:
        """Returns the tally of ``run`` (a TargetRun)."""
        return self._by_run[id(run)].tally

    def writer(self, kind: type) -> Any:
        """Returns the run's writer of class ``kind``, or None when the options asked for none."""
        return next((writer for writer in self.writers if isinstance(writer, kind)), None)

    def snapshots(self, run: Any) -> Any:
        """Returns the snapshot checker of ``run``, or None when snapshots are not compared."""
        writer = self.writer(SnapshotWriter)
        return writer.checker(run) if writer is not None else None

    def columns(self) -> Callable[[Any], Any] | None:
        """Returns a function giving the grid reports' columns (harness/record/observations.py), or None
        when the run writes no matrix (its writer, and the observations, are then never imported)."""
        if not self.matrix:
            return None
        from harness.report.columns import ColumnsWriter
        writer = self.writer(ColumnsWriter)
        return writer.columns() if writer is not None else None

    def close(self, *, interrupted: bool = False) -> None:
        """Completes every report file; after an interruption with what ran, marked as such."""
        if self.closed:
            return
        self.closed = True
        for writer in list(self.writers):
            self._guard(writer, functools.partial(writer.close, self.targets, interrupted=interrupted))
