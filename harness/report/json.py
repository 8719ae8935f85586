"""The JSON report: a public contract for CI users (docs/json-report.md describes it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import harness
from harness.model import Result, Verdict
from harness.targets.base import TargetInfo

FORMAT_VERSION = 1


def summary(results: Iterable[Result]) -> dict[str, int]:
    """Returns the count of each verdict, every verdict present (zero when none)."""
    counts = Counter(result.verdict for result in results)
    return {verdict.value: counts.get(verdict, 0) for verdict in Verdict}


def document(results: list[Result], target: TargetInfo, spec: str, seconds: float | None = None) -> dict[str, Any]:
    """Returns the report as a JSON-ready mapping."""
    data: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "harness": {"version": harness.__version__},
        "target": {"name": target.name, "version": target.version, "spec": spec},
        "results": [result.as_dict() for result in results],
        "summary": summary(results),
    }
    if seconds is not None:
        data["seconds"] = round(seconds, 3)
    return data


def write(path: Path, results: list[Result], target: TargetInfo, spec: str, seconds: float | None = None) -> None:
    """Writes the report to ``path``."""
    text = json.dumps(document(results, target, spec, seconds), indent=1, ensure_ascii=False, default=str)
    Path(path).write_text(text + "\n", "utf-8")


def write_combined(path: Path, runs: list[Any]) -> None:
    """Writes several targets' reports into one file: ``{"format", "harness", "runs": [report, ...]}``.

    Each item of ``runs`` is the report :func:`write` would have written for that target alone;
    ``harness report`` and ``harness diff`` read every run of such a file.
    """
    data = {"format": FORMAT_VERSION, "harness": {"version": harness.__version__},
            "runs": [document(run.results, run.info, run.spec, run.seconds) for run in runs]}
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
