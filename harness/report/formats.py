"""The report writers a run's options ask for: one line per format (harness/report/writer.py).

Each writer a run may go without is imported only for a run that writes it (a default run writes
the last run's state and compares the snapshots)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report.snapshots import SnapshotWriter
from harness.report.state import StateWriter
from harness.report.writer import Files, Writer


def writers(options: Any, files: Files, *, several: bool, state: Path | None, matrix: bool,
            slugs: Any) -> list[Writer]:
    """Returns the writers of one run, in the order each result reaches them; OSError when a report
    file cannot be made (the caller abandons what was made)."""
    chosen: list[Writer] = []
    if options.json:
        from harness.report.json import JsonWriter
        chosen.append(JsonWriter(options.json, files, several=several, slugs=slugs, baseline_file=options.baseline))
    if options.junit:
        from harness.report.junit import JunitWriter  # XML
        chosen.append(JunitWriter(options.junit, files, slugs=slugs))
    if state is not None:
        chosen.append(StateWriter(state, files))
    if not options.no_snapshots or options.snapshot_update:
        chosen.append(SnapshotWriter(options.snapshots, update=options.snapshot_update))
    if matrix:  # the Markdown and HTML reports' columns
        from harness.report.columns import ColumnsWriter
        chosen.append(ColumnsWriter(several))
    return chosen
