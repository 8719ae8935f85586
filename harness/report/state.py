"""The last run's state (``harness show``, ``harness diff``) and its failures (``--lf``), as a report writer.

Each target's results go to ``<state>/last-<spec slug>.json`` as they come, completed and given the
name ``last.json`` too at the end (a hard link where the file system makes one, else a copy); an
interrupted run is not remembered. Remembering is a convenience: a read-only checkout must still
run, so a file that cannot be written is dropped without a word.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import harness
from harness.record import lastfailed
from harness.report.json import FORMAT_VERSION
from harness.report.writer import Files, Part, ReportFile
from harness.scenario.model import Result
from harness.targets.base import spec_slug
from harness.util.fileio import link_replacing

#: ``json.dumps(value, default=str)``, with the encoder made once (a run encodes every result).
_encode = json.JSONEncoder(default=str).encode


class StateWriter:
    """Writes the last run's state and its last-failed list, target by target."""

    def __init__(self, folder: Path, files: Files) -> None:
        self.folder, self.files = Path(folder), files
        self.parts: dict[int, dict[str, Any]] = {}  # id(run) -> {"file", "count", "failed"}

    def begin(self, part: Part) -> None:
        run = part.run
        mine: dict[str, Any] = {"file": None, "count": 0}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # Not replaced now: an earlier state is replaced only by a complete one.
            mine["file"] = ReportFile(self.folder / f"last-{spec_slug(run.spec)}.json", self.files.taken,
                                      replace_now=False)
            head = json.dumps({"format": FORMAT_VERSION, "harness": {"version": harness.__version__},
                               "target": {"name": run.info.name, "version": run.info.version, "spec": run.spec}},
                              default=str)
            mine["file"].handle.write(head[:-1] + ', "results": [')
        except OSError:
            mine["file"] = None
        mine["failed"] = lastfailed.Tracker(self.folder, spec_slug(run.spec))
        self.parts[id(run)] = mine

    def add(self, part: Part, result: Result, data: dict[str, Any]) -> None:
        mine = self.parts[id(part.run)]
        if mine["file"] is not None:
            try:  # ASCII escapes: a lone surrogate from a candidate is kept, never an encoding error
                text = _encode(data)  # before the separator: a result that cannot be encoded writes nothing
                if mine["count"]:
                    mine["file"].handle.write(", ")
                mine["file"].handle.write(text)
                mine["count"] += 1
            except (OSError, ValueError):
                mine["file"].abandon()  # no half-written state: `harness show` keeps the last complete run
                mine["file"] = None
        mine["failed"].add(result)

    def close(self, parts: Sequence[Part], *, interrupted: bool) -> None:
        for part in parts:
            mine = self.parts[id(part.run)]
            state = mine["file"]
            if interrupted:
                if state is not None:
                    state.abandon()
                continue
            if state is not None:
                try:
                    tail = json.dumps({"summary": part.tally.summary(), "seconds": round(part.run.seconds, 3)},
                                      default=str)
                    state.handle.write("], " + tail[1:])
                    state.done()
                    link_replacing(state.path, state.path.with_name("last.json"))  # it holds the whole run
                except OSError:
                    pass
            mine["failed"].save()
