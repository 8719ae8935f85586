"""The report writer interface: what every report of ``harness run`` is, and the files they write.

The report stream (harness/report/stream.py) hands each target's part of a run to every writer:
``begin(part)`` once per target (before its first result, or at the end for a target no result
reached), ``add(part, result, data)`` for each result in catalog order (``data`` is
``result.as_dict()``, made once for all), ``close(parts, interrupted=...)`` once at the end. A
:class:`Part` carries the target's run (a TargetRun: ``spec``, ``info``, ``slug``, ``target``,
``seconds``, ``leftovers``, ``start_error``) and its :class:`~harness.report.tally.Tally`.

A new report format is one module with a writer class and one line in harness/report/formats.py,
which picks the writers a run's options ask for. Writers write their files through
:class:`ReportFile` (``<file>.partial``, renamed when complete) so that an earlier run's report never
passes for this one's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.scenario.model import Result
from harness.util.fileio import open_new

if TYPE_CHECKING:
    from harness.report.tally import Tally

PARTIAL = ".partial"


class Part:
    """One target's part of the reports: its run and its tally (the writers keep their own state)."""

    def __init__(self, run: Any, tally: Tally) -> None:
        self.run, self.tally = run, tally


class Writer(Protocol):
    """One report format, fed as the run goes."""

    def begin(self, part: Part) -> None:
        """A target's part begins (its first result follows, or none)."""

    def add(self, part: Part, result: Result, data: dict[str, Any]) -> None:
        """One result of ``part``, judged and counted already; ``data`` is its JSON shape."""

    def close(self, parts: Sequence[Part], *, interrupted: bool) -> None:
        """Completes the report (``parts`` in target order); after an interruption with what ran."""

    # A writer whose files can fail to be written (a full disk) also has ``abandon() -> list[Path]``:
    # it removes the files it has not completed and returns their paths (the stream says each once).


class Files:
    """The report files of one run: each partial file once, each target's name in a report folder once.

    ``opened`` lists the files made with ``replace_now=False`` until every writer is set up:
    :meth:`settled` then removes the earlier run's files they replace, :meth:`abandon` (when a writer
    could not be set up) removes what was made, leaving nothing half-made.
    """

    def __init__(self) -> None:
        self.taken: set[Path] = set()
        self.opened: list[ReportFile] = []
        self._named: dict[int, str] = {}  # id(run) -> its report files' name in `--json DIR`, `--junit DIR`

    def open(self, path: Path, *, replace_now: bool = True) -> ReportFile:
        """Returns a new report file for ``path`` (see :class:`ReportFile`)."""
        made = ReportFile(path, self.taken, replace_now=replace_now)
        if not replace_now:
            self.opened.append(made)
        return made

    def settled(self) -> None:
        """Every writer is set up: the files of an earlier run that the new ones replace go now."""
        for made in self.opened:
            remove_file(made.path)
        self.opened = []

    def abandon(self) -> None:
        """Removes every file made so far (a writer could not be set up)."""
        for made in self.opened:
            made.abandon()
        self.opened = []

    def name(self, run: Any) -> str:
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


class ReportFile:
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
            remove_file(self.path)  # an earlier run's report must not pass for this one's
        # A new file, never one a checkout left there (a link to write through): see harness/util/fileio.py open_new.
        self.handle = os.fdopen(open_new(self.partial), "w", encoding="utf-8")
        #: True once the file is complete and named (a full disk may refuse that at its last flush).
        self.completed = False

    def done(self) -> None:
        """Closes the file and gives it its name."""
        self.handle.close()
        os.replace(self.partial, self.path)
        self.completed = True

    def abandon(self) -> None:
        """Closes the file and removes it: nothing of it is left (also when its disk is full)."""
        try:
            self.handle.close()
        except OSError:
            pass  # the buffered rest could not be written either; the descriptor is closed all the same
        try:
            self.partial.unlink(missing_ok=True)
        except OSError:
            pass


def report_names(slugs: Any) -> list[str]:
    """Returns the names the targets' files in a report folder take, in order: a slug an earlier
    target has gets ``-2``, ``-3``... (as :meth:`Files.name` gives them once the targets have begun)."""
    names: list[str] = []
    for slug in slugs:
        name, number = slug, 2
        while name in names:
            name, number = f"{slug}-{number}", number + 1
        names.append(name)
    return names


def remove_file(path: Path) -> None:
    """Removes the file (or link) ``path`` if there is one; never a folder."""
    try:
        if path.is_file() or path.is_symlink():
            path.unlink()
    except OSError:
        pass


def remove_folder_reports(folder: Path | None, suffix: str, slugs: Any) -> None:
    """Removes an earlier run's files of every target from a report folder: a run interrupted before a
    target began must not leave that target's old report passing for this run's."""
    if folder and folder.is_dir():
        for name in report_names(slugs):
            remove_file(folder / f"{name}{suffix}")
