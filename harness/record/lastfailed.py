"""What failed last time, per target: what ``harness run --lf`` runs again (pytest's ``--lf``).

The state folder (``$HARNESS_STATE_DIR`` or ``./.harness``) keeps one file per target,
``lastfailed-<target slug>.json``: the ids of the scenarios whose last run on that target was a
``fail`` or an ``error``. Each run updates it like pytest's cache does: a scenario that ran and did
not fail leaves the list, one that failed joins it, one that did not run keeps its place. A known
failure of a baseline still failed, so it stays listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from harness.scenario.model import Result, Verdict
from harness.util import limits
from harness.util.fileio import read_regular, write_replacing

FAILING = (Verdict.FAIL, Verdict.ERROR)


def path(state: Path, slug: str) -> Path:
    """Returns the file that lists what failed last time on the target ``slug``."""
    return Path(state) / f"lastfailed-{slug}.json"


def load(state: Path, slugs: Iterable[str]) -> set[str]:
    """Returns the ids that failed last time on any of the targets (an empty set when nothing is known)."""
    failed: set[str] = set()
    for slug in slugs:
        try:
            data = json.loads(read_regular(path(state, slug), limits.MAX_REPORT_FILE))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, list):
            failed |= {item for item in data if isinstance(item, str)}
    return failed


class Tracker:
    """One target's failures, recorded as its results come (``add``) and saved at the end (``save``)."""

    def __init__(self, state: Path, slug: str) -> None:
        self.state, self.slug = Path(state), slug
        self.failed = load(state, [slug])

    def add(self, result: Result) -> None:
        """Notes one result: a fail or error is remembered, anything else forgotten."""
        if result.id.startswith("<invalid>"):
            return
        if result.verdict in FAILING:
            self.failed.add(result.id)
        else:
            self.failed.discard(result.id)

    def save(self) -> None:
        """Writes what failed (see the module docstring)."""
        try:
            self.state.mkdir(parents=True, exist_ok=True)
            write_replacing(path(self.state, self.slug), json.dumps(sorted(self.failed), indent=0) + "\n")
        except OSError:
            pass  # remembering is a convenience; a read-only checkout must still run
