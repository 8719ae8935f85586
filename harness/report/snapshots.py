"""The snapshots of ``harness run`` as a report writer: each result compared (or written) as it comes.

One :class:`~harness.record.snapshot.Checker` per target, in ``<root>/<target slug>/``, with the
target's own masks (``Target.snapshot_masks``). What the checks found is read at the end through
:meth:`SnapshotWriter.checker` (harness/cli/postrun.py reports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.report.writer import Part
from harness.scenario.model import Result

if TYPE_CHECKING:  # imported as the first result comes (``begin``), after the first scenario
    from harness.record import snapshot as snap


class SnapshotWriter:
    """Compares (or, with ``update``, writes) every target's snapshots."""

    def __init__(self, root: Path | None, *, update: bool) -> None:
        self.root, self.update = root, update
        self.checkers: dict[int, snap.Checker] = {}

    def begin(self, part: Part) -> None:
        from harness.record import snapshot as snap
        run = part.run
        store = snap.SnapshotStore(self.root or snap.default_root(), run.slug)
        self.checkers[id(run)] = snap.Checker(store, update=self.update, masks=run.target.snapshot_masks)

    def add(self, part: Part, result: Result, data: dict[str, Any]) -> None:
        if not result.id.startswith("<invalid>"):
            self.checkers[id(part.run)].add(data)

    def close(self, parts: Sequence[Part], *, interrupted: bool) -> None:
        """Nothing to complete: each snapshot was compared or written as its result came."""

    def checker(self, run: Any) -> snap.Checker | None:
        """Returns the checker of ``run`` (a TargetRun), or None when it never began."""
        return self.checkers.get(id(run))
