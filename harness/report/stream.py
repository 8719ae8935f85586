"""Hands each result of ``harness run`` to every report as it is produced, in catalog order.

A run's results arrive one at a time, target after target (harness/run/workers.py ``emit``). Each is
judged by the run's aspects and baseline, counted (harness/report/tally.py) and written at once:

- the JSON report: each result written to the file as it comes (harness/report/json.py ``Stream``);
  several targets in one file are written to a spool each and put together at the end;
- the JUnit report: each testcase written to its profile's spool, the suites put together at the end
  (their counts are attributes that come first);
- the snapshots: compared, or written, at once (harness/record/snapshot.py ``Checker``);
- the last run's state (for ``harness show`` and ``--lf``);
- the Markdown and HTML reports: a small observation per result (harness/record/observations.py ``Collector``).

Nothing else of a result is held: the tally keeps the counts and the failures, whose details the
terminal prints at the end. So what a run holds does not grow with the scenarios that pass.

A report file is written under ``<file>.partial`` and renamed to ``<file>`` when it is complete; a
run that is interrupted (Ctrl-C, SIGTERM) completes its JSON and JUnit files with what ran so far,
marked ``"interrupted": true`` (JSON) or by a closing comment (JUnit). A run killed outright leaves
only ``<file>.partial``: the report of an earlier run is removed when a run starts, so no file
passes for this run's report unless it is complete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.scenario.model import Result
from harness.util.safepath import open_new, write_replacing
from harness.report.tally import Tally

PARTIAL = ".partial"


class _File:
    """A report file written under ``<path>.partial`` and renamed to ``<path>`` once complete."""

    def __init__(self, path: Path, taken: set[Path], *, replace_now: bool = True) -> None:
        self.path = Path(path)
        partial = self.path.with_name(self.path.name + PARTIAL)
        number = 2
        while partial in taken:  # the same file named twice (report folders give each target its own name): a partial each
            partial = self.path.with_name(f"{self.path.name}.{number}{PARTIAL}")
            number += 1
        taken.add(partial)
        self.partial = partial
        if replace_now:
            _remove(self.path)  # an earlier run's report must not pass for this one's
        # A new file, never one a checkout left there (a link to write through): see safepath.open_new.
        self.handle = os.fdopen(open_new(self.partial), "w", encoding="utf-8")

    def done(self) -> None:
        """Closes the file and gives it its name."""
        self.handle.close()
        os.replace(self.partial, self.path)

    def abandon(self) -> None:
        """Closes the file and removes it: nothing of it is left."""
        self.handle.close()
        self.partial.unlink(missing_ok=True)


def _report_names(slugs: Any) -> list[str]:
    """Returns the names the targets' files in a report folder take, in order: a slug an earlier
    target has gets ``-2``, ``-3``... (as ``Reports._name`` gives them once the targets have begun)."""
    names: list[str] = []
    for slug in slugs:
        name, number = slug, 2
        while name in names:
            name, number = f"{slug}-{number}", number + 1
        names.append(name)
    return names


def _remove(path: Path) -> None:
    """Removes the file (or link) ``path`` if there is one; never a folder."""
    try:
        if path.is_file() or path.is_symlink():
            path.unlink()
    except OSError:
        pass


class _Target:
    """One target's part of the reports: its tally and the writers it feeds."""

    def __init__(self, run: Any, tally: Tally) -> None:
        self.run, self.tally = run, tally
        self.json: Any = None  # json.Stream
        self.json_file: _File | None = None
        self.junit: Any = None  # junit.Suites
        self.junit_file: _File | None = None
        self.state: Any = None  # the last run's file (handle), for `harness show`
        self.state_count = 0
        self.lastfailed: Any = None
        self.snapshots: Any = None  # snapshot.Checker


class Reports:
    """The writers of one ``harness run``: ``add`` each result (in catalog order), ``finish`` with
    the runs, then the terminal report reads ``tally(run)`` and ``snapshots(run)``; ``close`` writes
    what is put together at the end. ``close(interrupted=True)`` when the run was stopped."""

    def __init__(self, options: Any, broken: list[Result], *, several: bool, state: Path | None = None,
                 matrix: bool = False, slugs: list[str] = ()) -> None:
        self.options, self.broken, self.several = options, broken, several
        self.state = state
        self.targets: list[_Target] = []
        self._by_run: dict[int, _Target] = {}
        self._taken: set[Path] = set()
        self._named: dict[int, str] = {}  # id(run) -> its report files' name in `--json DIR`, `--junit DIR`
        self.baseline: Any = None
        self.baseline_error: str | None = None
        if options.baseline:
            from harness.record import baseline
            try:
                self.baseline = baseline.load(options.baseline)
            except ValueError as exc:  # said by the terminal report; no result is judged
                self.baseline_error = str(exc)
        self.json_combined: Any = None
        self.json_combined_file: _File | None = None
        self.junit_file: _File | None = None
        # A report folder's files of an earlier run go now, for every target: a run interrupted
        # before a target began must not leave that target's old report passing for this run's.
        for folder, suffix in ((options.json, ".json"), (options.junit, ".xml")):
            if folder and folder.is_dir():
                for name in _report_names(slugs):
                    _remove(folder / f"{name}{suffix}")
        try:
            if options.json and several and not options.json.is_dir():
                from harness.report import json as json_report
                self.json_combined_file = _File(options.json, self._taken, replace_now=False)
                self.json_combined = json_report.Combined(self.json_combined_file.handle)
            if options.junit and not options.junit.is_dir():
                self.junit_file = _File(options.junit, self._taken, replace_now=False)
            for made in (self.json_combined_file, self.junit_file):  # all could be opened: the old ones go
                if made is not None:
                    _remove(made.path)
        except OSError:  # a report that cannot be written: nothing half-made is left (the caller says why)
            for made in (self.json_combined_file, self.junit_file):
                if made is not None:
                    made.abandon()
            raise
        self.collector: Any = None
        if matrix:
            from harness.record import observations
            self.collector = observations.Collector(several)
        self.closed = False

    # -- as the run goes -----------------------------------------------------------------------

    def add(self, run: Any, result: Result) -> None:
        """Takes one result of ``run`` (a TargetRun): judged, counted and written at once."""
        part = self._by_run.get(id(run))
        if part is None:
            part = self._begin(run)
        self._take(part, result)

    def _begin(self, run: Any) -> _Target:
        from harness.report import json as json_report
        options = self.options
        part = _Target(run, Tally(self.baseline, self.baseline_error))
        self.targets.append(part)
        self._by_run[id(run)] = part
        if options.json:
            if self.json_combined is not None:
                part.json = self.json_combined.stream()
            else:
                path = options.json / f"{self._name(run)}.json" if options.json.is_dir() else options.json
                part.json_file = _File(path, self._taken)
                part.json = json_report.Stream(part.json_file.handle)
            part.json.begin(run.info, run.spec, start_error=run.start_error, started=json_report.now())
        if options.junit:
            from harness.report import junit
            if options.junit.is_dir():
                part.junit = junit.Suites(run.info, "", run.start_error)
                part.junit_file = _File(options.junit / f"{self._name(run)}.xml", self._taken)
            else:
                part.junit = junit.Suites(run.info, f"{run.spec} ", run.start_error)
        if self.state is not None:
            from harness.record import lastfailed
            from harness.targets.base import spec_slug
            try:
                self.state.mkdir(parents=True, exist_ok=True)
                part.state = _File(self.state / f"last-{spec_slug(run.spec)}.json", self._taken, replace_now=False)
                head = json.dumps({"format": json_report.FORMAT_VERSION,
                                   "harness": {"version": _version()},
                                   "target": {"name": run.info.name, "version": run.info.version, "spec": run.spec}},
                                  default=str)
                part.state.handle.write(head[:-1] + ', "results": [')
            except OSError:
                part.state = None  # remembering is a convenience; a read-only checkout must still run
            part.lastfailed = lastfailed.Tracker(self.state, spec_slug(run.spec))
        if not options.no_snapshots or options.snapshot_update:
            from harness.record import snapshot as snap
            store = snap.SnapshotStore(options.snapshots or snap.default_root(), run.slug)
            part.snapshots = snap.Checker(store, update=options.snapshot_update)
        for result in self.broken:  # each target's report holds the invalid files first
            self._take(part, result)
        return part

    def _name(self, run: Any) -> str:
        """Returns the name of ``run``'s files in a report folder: its slug, or, when an earlier target of
        this run has that slug (two option sets of one adapter give one hello name), ``<slug>-2``,
        ``-3``...: each target keeps its own report."""
        if id(run) in self._named:
            return self._named[id(run)]
        name, number = run.slug, 2
        while name in self._named.values():
            name, number = f"{run.slug}-{number}", number + 1
        self._named[id(run)] = name
        return name

    def _take(self, part: _Target, result: Result) -> None:
        from harness.scenario import aspects
        aspects.apply(result, self.options.aspects)
        part.tally.add(result)  # marks a baseline's known failure first: every report shows it
        data = result.as_dict()
        if part.json is not None:
            part.json.add(data)
        if part.junit is not None:
            part.junit.add(result)
        if part.state is not None:
            try:  # ASCII escapes: a lone surrogate from a candidate is kept, never an encoding error
                part.state.handle.write((", " if part.state_count else "") + json.dumps(data, default=str))
                part.state_count += 1
            except (OSError, ValueError):
                part.state.abandon()  # no half-written state: `harness show` keeps the last complete run
                part.state = None
        real = not result.id.startswith("<invalid>")
        if part.lastfailed is not None:
            part.lastfailed.add(result)
        if part.snapshots is not None and real:
            part.snapshots.add(data)
        if self.collector is not None:
            self.collector.add(part.run, data)

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

    def snapshots(self, run: Any) -> Any:
        """Returns the snapshot checker of ``run``, or None when snapshots are not compared."""
        return self._by_run[id(run)].snapshots

    def columns(self) -> Any:
        """Returns a function giving the Markdown and HTML reports' columns (harness/record/observations.py)."""
        if self.collector is None:
            return None
        return lambda runs: self.collector.sources(runs)

    def close(self, *, interrupted: bool = False) -> None:
        """Completes every report file; after an interruption with what ran, marked as such."""
        if self.closed:
            return
        self.closed = True
        from harness.report import junit
        junit_parts = []
        for part in self.targets:
            run = part.run
            if part.json is not None:
                part.json.end(part.tally.summary(), run.seconds, baseline=self._baseline_section(part),
                              leftovers=run.leftovers, interrupted=interrupted)
                if part.json_file is not None:
                    part.json_file.handle.write("\n")
                    part.json_file.done()
            if part.junit is not None:
                if part.junit_file is not None:
                    junit.write_stream(part.junit_file.handle, f"harness on {run.spec}", [(part.junit, run.leftovers)],
                                       interrupted=interrupted)
                    part.junit_file.done()
                else:
                    junit_parts.append((part.junit, run.leftovers))
            self._remember(part, interrupted)
        if self.json_combined is not None and self.json_combined_file is not None:
            self.json_combined.close(interrupted=interrupted)
            self.json_combined_file.done()
        if self.junit_file is not None:
            junit.write_stream(self.junit_file.handle, f"harness on {len(self.targets)} targets", junit_parts,
                               interrupted=interrupted)
            self.junit_file.done()

    def _baseline_section(self, part: _Target) -> dict[str, Any] | None:
        """Returns the JSON report's ``baseline`` member (None without a readable baseline)."""
        if part.tally.baseline is None:
            return None
        from harness.record import baseline
        return baseline.report_section(self.options.baseline, part.tally.outcome())

    def _remember(self, part: _Target, interrupted: bool) -> None:
        """Completes the last run's state (``harness show``, ``--lf``); an interrupted run is not remembered."""
        if interrupted:
            if part.state is not None:
                part.state.abandon()
            return
        if part.state is not None:
            try:
                tail = json.dumps({"summary": part.tally.summary(), "seconds": round(part.run.seconds, 3)},
                                  default=str)
                part.state.handle.write("], " + tail[1:])
                part.state.done()
                with open(part.state.path, "rb") as written:  # copied in pieces: it holds the whole run
                    write_replacing(part.state.path.with_name("last.json"), written)
            except OSError:
                pass  # remembering is a convenience; a read-only checkout must still run
        if part.lastfailed is not None:
            part.lastfailed.save()


def _version() -> str:
    import harness
    return harness.__version__
