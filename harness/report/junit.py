"""A JUnit XML report: one testcase per scenario, for CI systems that read JUnit."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.containment.cleanup import split_leftovers
from harness.report.json import summary
from harness.report.tally import nothing_ran
from harness.report.terminal import explain
from harness.report.writer import remove_folder_reports
from harness.scenario.aspects import ASPECTS
from harness.scenario.model import TARGET_NOT_STARTED, Result, Verdict
from harness.targets.base import TargetInfo
from harness.util.printable import shown


def write(path: Path, results: list[Result], target: TargetInfo, spec: str, *, start_error: str | None = None,
          leftovers: list[Any] | None = None) -> None:
    """Writes one testsuite per profile; fail -> failure, error -> error, skip -> skipped.

    Under a baseline, a known failure is ``skipped`` with the baseline's reason (the run does not fail
    on it), and a stale entry (listed, passes now) is a ``failure`` (the run does). When the target did
    not start, each suite's ``system-err`` holds why, once, and each testcase only a short error.
    Workspaces that could not be removed make a suite ``harness`` with one testcase in error
    (``workspaces removed``) naming each: the run fails on them.
    """
    suites = ET.Element("testsuites", name=f"harness on {spec}")
    _add_suites(suites, results, target, start_error=start_error)
    _add_leftovers(suites, leftovers or [], target)
    _write(suites, path)


def write_runs(path: Path, runs: list[Any]) -> None:
    """Writes several targets' results into one file: one testsuite per target and profile."""
    suites = ET.Element("testsuites", name=f"harness on {len(runs)} targets")
    for run in runs:
        _add_suites(suites, run.results, run.info, prefix=f"{run.spec} ", start_error=getattr(run, "start_error", None))
        _add_leftovers(suites, getattr(run, "leftovers", None) or [], run.info, prefix=f"{run.spec} ")
    _write(suites, path)


#: What XML 1.0 does not allow beyond the control characters ``shown`` escapes (U+FFFE, U+FFFF).
_NOT_XML = re.compile("[\ufffe\uffff]")


def _xml(text: str | None) -> str | None:
    """Returns ``text`` as XML 1.0 can hold it: control characters (but newline and tab), lone
    surrogates and U+FFFE/U+FFFF shown escaped (``\\x1b``), never dropped and never raw."""
    if text is None:
        return None
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", shown(text))


def _write(suites: ET.Element, path: Path) -> None:
    """Writes the tree, every text and attribute made valid XML first (ElementTree writes them raw)."""
    for element in suites.iter():
        element.text, element.tail = _xml(element.text), _xml(element.tail)
        for key, value in element.attrib.items():
            element.set(key, _xml(value) or "")
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _add_suites(suites: ET.Element, results: list[Result], target: TargetInfo, prefix: str = "",
                start_error: str | None = None) -> None:
    by_profile: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_profile[result.scenario.profile].append(result)
    for profile, group in sorted(by_profile.items()):
        counts = summary(group)
        stale = sum(result.stale is not None for result in group)
        suite = ET.SubElement(suites, "testsuite", name=prefix + profile, tests=str(len(group)),
                              failures=str(counts["fail"] + stale), errors=str(counts["error"]),
                              skipped=str(counts["skip"] + counts["known"]),
                              time=f"{sum(r.seconds for r in group):.3f}")
        for result in group:
            _add_case(suite, result, target, profile, start_error)
        if start_error:
            ET.SubElement(suite, "system-err").text = start_error


def _add_case(suite: ET.Element, result: Result, target: TargetInfo, profile: str, start_error: str | None) -> None:
    """Adds one result's testcase to ``suite``."""
    case = ET.SubElement(suite, "testcase", classname=f"{target.name}.{profile}", name=result.id,
                         time=f"{result.seconds:.4f}")
    if result.flaky:  # --repeat N: the verdict or observation varied (the JUnit property test viewers show)
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="flaky", value="true")
    if result.known is not None:
        ET.SubElement(case, "skipped", message=f"known {result.verdict.value} (baseline): {result.known}"[:500])
        ET.SubElement(case, "system-out").text = explain(result)
    elif result.stale is not None:
        ET.SubElement(case, "failure", message="stale baseline entry: passes now, remove it from the baseline"
                      ).text = f"baseline: {result.stale}"
    elif start_error and result.verdict is Verdict.ERROR and result.reason.startswith(TARGET_NOT_STARTED):
        ET.SubElement(case, "error", message=result.reason[:500])
    elif result.verdict is Verdict.FAIL:
        ET.SubElement(case, "failure", message=result.reason[:500]).text = explain(result)
    elif result.verdict is Verdict.ERROR:
        ET.SubElement(case, "error", message=result.reason[:500]).text = explain(result)
    elif result.verdict is Verdict.SKIP:
        ET.SubElement(case, "skipped", message=result.reason[:500])
    elif result.verdict is Verdict.RECORDED:
        ET.SubElement(case, "system-out").text = f"open question recorded: {result.scenario.open_question}"
    # after the verdict's element, which readers take as the testcase's first child
    found = result.aspects or {}
    if any(value != "n/a" for value in found.values()):  # the verdict per aspect (docs/scenario-format.md#aspects)
        properties = ET.SubElement(case, "properties")
        for aspect in ASPECTS:
            ET.SubElement(properties, "property", name=f"aspect.{aspect}", value=found.get(aspect, "n/a"))


def _add_leftovers(suites: ET.Element, leftovers: list[Any], target: TargetInfo, prefix: str = "") -> None:
    """Adds the suite that names the workspaces left on disk (none: nothing is added)."""
    if not leftovers:
        return
    late, left_behind = split_leftovers(leftovers)
    cases = [(name, message, found) for name, message, found in (
        ("nothing written after the last scenario",
         f"{len(late)} write(s) outside the workspace after the last scenario (while answering bye)", late),
        ("workspaces removed", f"{len(left_behind)} workspace(s) could not be removed", left_behind)) if found]
    suite = ET.SubElement(suites, "testsuite", name=prefix + "harness", tests=str(len(cases)), failures="0",
                          errors=str(len(cases)), skipped="0", time="0.000")
    for name, message, found in cases:
        case = ET.SubElement(suite, "testcase", classname=f"{target.name}.harness", name=name, time="0")
        ET.SubElement(case, "error", message=message).text = "\n".join(str(left) for left in found)


# -- written as the run goes -------------------------------------------------------------------

def _made_valid(element: ET.Element) -> ET.Element:
    """Returns ``element`` with every text and attribute below it made valid XML (as ``_write`` does)."""
    for item in element.iter():
        item.text, item.tail = _xml(item.text), _xml(item.tail)
        for key, value in item.attrib.items():
            item.set(key, _xml(value) or "")
    return element


def _text(element: ET.Element, level: int) -> str:
    """Returns ``element`` serialised as it sits at ``level`` of the indented document, without its tail."""
    _made_valid(element)
    ET.indent(element, level=level)
    element.tail = None
    return ET.tostring(element, encoding="unicode")


def _open_tag(tag: str, **attrs: str) -> str:
    """Returns the start tag ``<tag attr="...">`` as ElementTree writes it."""
    element = _made_valid(ET.Element(tag, attrs))
    ET.SubElement(element, "cut")
    text = ET.tostring(element, encoding="unicode")
    return text[: text.index("<cut />")]


class Suites:
    """One target's testsuites (one per profile, as :func:`write` makes them), fed one result at a
    time: each testcase is written to its profile's temporary spool at once, and only the counts are
    held; ``text`` puts the suites together at the end."""

    def __init__(self, target: TargetInfo, prefix: str = "", start_error: str | None = None) -> None:
        self.target, self.prefix, self.start_error = target, prefix, start_error
        self.spools: dict[str, Any] = {}
        self.counts: dict[str, dict[str, Any]] = {}
        self.invalid = 0  # results of invalid files (never skipped)
        self.skip_reason: str | None = None  # the first skip's reason (said when nothing ran)

    def add(self, result: Result) -> None:
        """Writes one result's testcase."""
        import tempfile
        profile = result.scenario.profile
        if profile not in self.spools:
            self.spools[profile] = tempfile.TemporaryFile("w+", encoding="utf-8")
            self.counts[profile] = {"tests": 0, "seconds": 0.0, **{key: 0 for key in
                                                                    ("fail", "error", "skip", "known", "stale")}}
        counts = self.counts[profile]
        self.invalid += result.id.startswith("<invalid>")
        if result.verdict is Verdict.SKIP and self.skip_reason is None:
            self.skip_reason = result.reason
        counts["tests"] += 1
        counts[result.counted_as] = counts.get(result.counted_as, 0) + 1
        counts["stale"] += result.stale is not None
        counts["seconds"] += result.seconds
        holder = ET.Element("testsuite")
        _add_case(holder, result, self.target, profile, self.start_error)
        self.spools[profile].write("\n    " + _text(holder[0], 2))

    def write_to(self, handle: Any, leftovers: list[Any] | None = None, *, interrupted: bool = False) -> None:
        """Writes the suites (each after ``\\n  ``) to ``handle``."""
        import shutil
        for profile in sorted(self.spools):
            counts = self.counts[profile]
            handle.write("\n  " + _open_tag("testsuite", name=self.prefix + profile, tests=str(counts["tests"]),
                                            failures=str(counts["fail"] + counts["stale"]),
                                            errors=str(counts["error"]),
                                            skipped=str(counts["skip"] + counts["known"]),
                                            time=f"{counts['seconds']:.3f}"))
            spool = self.spools[profile]
            spool.seek(0)
            shutil.copyfileobj(spool, handle)
            spool.close()
            if self.start_error:
                error = ET.Element("system-err")
                error.text = self.start_error
                handle.write("\n    " + _text(error, 2))
            handle.write("\n  </testsuite>")
        self.spools.clear()
        total = sum(counts["tests"] for counts in self.counts.values())
        line = nothing_ran(total - self.invalid, sum(counts["skip"] for counts in self.counts.values()),
                           self.skip_reason)
        if line and not interrupted:  # every scenario skipped: the run failed, and CI says so
            holder = ET.Element("testsuites")
            suite = ET.SubElement(holder, "testsuite", name=self.prefix + "harness", tests="1", failures="1",
                                  errors="0", skipped="0", time="0.000")
            case = ET.SubElement(suite, "testcase", classname=f"{self.target.name}.harness", name="something ran",
                                 time="0")
            ET.SubElement(case, "failure", message=line)
            handle.write("\n  " + _text(holder[0], 1))
        if leftovers:
            holder = ET.Element("testsuites")
            _add_leftovers(holder, leftovers, self.target, self.prefix)
            handle.write("\n  " + _text(holder[0], 1))


def write_stream(handle: Any, name: str, parts: list[tuple[Suites, list[Any] | None]], *,
                 interrupted: bool = False) -> None:
    """Writes a JUnit file from targets' :class:`Suites` (with their leftovers): the text :func:`write`
    and :func:`write_runs` give; after an interruption, a comment saying so follows the root."""
    handle.write("<?xml version='1.0' encoding='utf-8'?>\n")
    if any(suites.spools or leftovers for suites, leftovers in parts):
        handle.write(_open_tag("testsuites", name=name))
        for suites, leftovers in parts:
            suites.write_to(handle, leftovers, interrupted=interrupted)
        handle.write("\n</testsuites>")
    else:
        handle.write(ET.tostring(_made_valid(ET.Element("testsuites", name=name)), encoding="unicode"))
    if interrupted:
        handle.write("\n<!-- interrupted: only the scenarios that ran before the run was stopped are listed -->")


class JunitWriter:
    """``--junit FILE|DIR``: each result's testcase written as it comes (harness/report/writer.py).

    A folder gets one file per target (``<slug>.xml``); a file gets every target's suites, each
    suite's name prefixed with its target's spec.
    """

    def __init__(self, path: Path, files: Any, *, slugs: Any) -> None:
        self.path, self.files = Path(path), files
        remove_folder_reports(self.path, ".xml", slugs)
        self.file = None if self.path.is_dir() else files.open(self.path, replace_now=False)
        self.parts: dict[int, tuple[Suites, Any]] = {}

    def begin(self, part: Any) -> None:
        run = part.run
        if self.path.is_dir():
            file = self.files.open(self.path / f"{self.files.name(run)}.xml")
            self.parts[id(run)] = (Suites(run.info, "", run.start_error), file)
        else:
            self.parts[id(run)] = (Suites(run.info, f"{run.spec} ", run.start_error), None)

    def add(self, part: Any, result: Result, data: dict[str, Any]) -> None:
        self.parts[id(part.run)][0].add(result)

    def close(self, parts: Any, *, interrupted: bool) -> None:
        together = []
        for part in parts:
            run = part.run
            suites, file = self.parts[id(run)]
            if file is not None:
                write_stream(file.handle, f"harness on {run.spec}", [(suites, run.leftovers)], interrupted=interrupted)
                file.done()
            else:
                together.append((suites, run.leftovers))
        if self.file is not None:
            write_stream(self.file.handle, f"harness on {len(parts)} targets", together, interrupted=interrupted)
            self.file.done()

    def abandon(self) -> list[Path]:
        """Removes the files not yet completed (the disk refused one); returns their paths."""
        files = [file for _, file in self.parts.values() if file is not None and not file.completed]
        if self.file is not None and not self.file.completed:
            files.append(self.file)
        for file in files:
            file.abandon()
        return [file.path for file in files]
