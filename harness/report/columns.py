"""The Markdown and HTML reports' columns, collected as ``harness run`` goes (a report writer).

Each result becomes a small observation (harness/record/observations.py ``Collector``); the grid
reports (harness/report/markdown.py, html.py) are rendered from the columns at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.record import observations
from harness.report.writer import Part
from harness.scenario.model import Result


class ColumnsWriter:
    """Keeps one column of observations per target."""

    def __init__(self, several: bool) -> None:
        self.collector = observations.Collector(several)

    def begin(self, part: Part) -> None:
        """A column begins with the target's first result."""

    def add(self, part: Part, result: Result, data: dict[str, Any]) -> None:
        self.collector.add(part.run, data)

    def close(self, parts: Sequence[Part], *, interrupted: bool) -> None:
        """The columns are read afterwards (:meth:`columns`)."""

    def columns(self) -> Callable[[Any], Any]:
        """Returns a function giving the columns of the runs."""
        return lambda runs: self.collector.sources(runs)
