"""A JUnit XML report: one testcase per scenario, for CI systems that read JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.model import Result, Verdict
from harness.report.json import summary
from harness.report.terminal import explain
from harness.targets.base import TargetInfo


def write(path: Path, results: list[Result], target: TargetInfo, spec: str) -> None:
    """Writes one testsuite per profile; fail -> failure, error -> error, skip -> skipped."""
    suites = ET.Element("testsuites", name=f"harness on {spec}")
    _add_suites(suites, results, target)
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def write_runs(path: Path, runs: list[Any]) -> None:
    """Writes several targets' results into one file: one testsuite per target and profile."""
    suites = ET.Element("testsuites", name=f"harness on {len(runs)} targets")
    for run in runs:
        _add_suites(suites, run.results, run.info, prefix=f"{run.spec} ")
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _add_suites(suites: ET.Element, results: list[Result], target: TargetInfo, prefix: str = "") -> None:
    by_profile: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_profile[result.scenario.profile].append(result)
    for profile, group in sorted(by_profile.items()):
        counts = summary(group)
        suite = ET.SubElement(suites, "testsuite", name=prefix + profile, tests=str(len(group)),
                              failures=str(counts["fail"]), errors=str(counts["error"]),
                              skipped=str(counts["skip"]),
                              time=f"{sum(r.seconds for r in group):.3f}")
        for result in group:
            case = ET.SubElement(suite, "testcase", classname=f"{target.name}.{profile}", name=result.id,
                                 time=f"{result.seconds:.4f}")
            if result.verdict is Verdict.FAIL:
                ET.SubElement(case, "failure", message=result.reason[:500]).text = explain(result)
            elif result.verdict is Verdict.ERROR:
                ET.SubElement(case, "error", message=result.reason[:500]).text = explain(result)
            elif result.verdict is Verdict.SKIP:
                ET.SubElement(case, "skipped", message=result.reason[:500])
            elif result.verdict is Verdict.RECORDED:
                ET.SubElement(case, "system-out").text = f"open question recorded: {result.scenario.open_question}"
