"""The JSON report: a public contract for CI users (docs/json-report.md describes it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import harness
from harness.printable import json_safe
from harness.model import Result, Verdict
from harness.targets.base import TargetInfo

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
             leftovers: list[Any] | None = None) -> dict[str, Any]:
    """Returns the report as a JSON-ready mapping."""
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
    if leftovers:  # workspaces that could not be removed (harness/workspace.py, Leftover): the run fails
        data["leftovers"] = [left.as_dict() if hasattr(left, "as_dict") else dict(left) for left in leftovers]
    return data


def write(path: Path, results: list[Result], target: TargetInfo, spec: str, seconds: float | None = None,
          **extra: Any) -> None:
    """Writes the report to ``path`` (``extra``: ``start_error``, ``baseline``, ``leftovers``; see ``document``)."""
    # Strict JSON whatever a candidate said (NaN, lone surrogates, deep values: harness/printable.py).
    text = json.dumps(json_safe(document(results, target, spec, seconds, **extra)), indent=1, ensure_ascii=False,
                      default=str, allow_nan=False)
    Path(path).write_text(text + "\n", "utf-8")


def run_extra(run: Any) -> dict[str, Any]:
    """Returns what a target's run adds to its report: why it did not start, what the baseline made of it,
    the workspaces it could not remove."""
    return {"start_error": getattr(run, "start_error", None), "baseline": getattr(run, "baseline", None),
            "leftovers": getattr(run, "leftovers", None)}


def write_combined(path: Path, runs: list[Any]) -> None:
    """Writes several targets' reports into one file: ``{"format", "harness", "runs": [report, ...]}``.

    Each item of ``runs`` is the report :func:`write` would have written for that target alone;
    ``harness report`` and ``harness diff`` read every run of such a file.
    """
    data = {"format": FORMAT_VERSION, "harness": {"version": harness.__version__},
            "runs": [document(run.results, run.info, run.spec, run.seconds, **run_extra(run)) for run in runs]}
    Path(path).write_text(json.dumps(json_safe(data), indent=1, ensure_ascii=False, default=str, allow_nan=False)
                          + "\n", "utf-8")
