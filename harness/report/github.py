"""GitHub Actions: an annotation at the scenario file and line of each failure, and the step summary.

Under Actions (``GITHUB_ACTIONS=true``) ``harness run`` prints one ``::error`` workflow command per
``fail`` or ``error`` (a baseline's known failures excepted), pointing at the scenario file and the
line of the step whose expectation failed (else the scenario's first line), so the pull request
shows it beside the YAML (a scenario whose file is not in the repository, as the installed
catalog's are, is named by its id in the annotation's title, with no file); and it appends the Markdown report to ``$GITHUB_STEP_SUMMARY``. Outside
Actions it does nothing.
"""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.scenario.aspects import ASPECTS
from harness.scenario.model import Result, Verdict
from harness.util.printable import shown

#: Annotations printed per run at most (GitHub shows only the first few per step anyway).
MAX_ANNOTATIONS = 50


def active() -> bool:
    """Returns True when running as a GitHub Actions step."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


#: The token of ``::stop-commands::`` while the harness has workflow commands stopped (see stop_commands).
_STOPPED: str | None = None


def stop_commands() -> None:
    """Under Actions, stops GitHub from reading workflow commands in what follows, until the harness
    prints its own annotations (or exits): a candidate's text reaches the log (a stderr tail, an
    observed output), and a line of it that starts with ``::`` would be a command
    (``::stop-commands::x`` hid every annotation of the run, ``::error::`` made a false one)."""
    global _STOPPED
    if not active() or _STOPPED is not None:
        return
    import secrets
    import sys
    _STOPPED = secrets.token_hex(16)  # unknown to every candidate: none can print the resuming line
    sys.stdout.write(f"::stop-commands::{_STOPPED}\n")
    sys.stdout.flush()


def resume_commands() -> None:
    """Lets GitHub read workflow commands again (the harness's own, or the step's after it)."""
    global _STOPPED
    if _STOPPED is None:
        return
    import sys
    sys.stderr.flush()
    sys.stdout.write(f"::{_STOPPED}::\n")
    sys.stdout.flush()
    _STOPPED = None


def _data(text: str) -> str:
    """Escapes a workflow command's message: control characters shown escaped (harness/util/printable.py:
    a candidate's ESC and NUL reached the log and the annotation raw), then GitHub's rules (%, CR, LF)."""
    return shown(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escapes a workflow command's property value (also : and ,)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _line(result: Result) -> int:
    """Returns the line of the first step with an unmet expectation, else of the scenario."""
    scenario = result.scenario
    for record in result.steps:
        if record.failures and record.index < len(scenario.steps) and scenario.steps[record.index].line:
            return scenario.steps[record.index].line
    return scenario.line


def _file(path: Path) -> str | None:
    """Returns the file as GitHub wants it: relative to the checkout ($GITHUB_WORKSPACE) when inside it;
    for a scenario of the installed catalog (``site-packages/harness/builtin_scenarios/...``), the same
    file under the checkout's ``scenarios/`` when it is there; else None (the annotation then names
    the scenario by its id only: a path outside the repository opens nothing in a pull request)."""
    root = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    resolved = Path(path).resolve()
    if resolved.is_relative_to(root):
        return resolved.relative_to(root).as_posix()
    parts = resolved.parts
    if "builtin_scenarios" in parts:
        inside = Path("scenarios", *parts[len(parts) - parts[::-1].index("builtin_scenarios"):])
        if (root / inside).is_file():
            return inside.as_posix()
    return None


def annotations(results: Iterable[Result], spec: str) -> list[str]:
    """Returns the ``::error`` commands for the failures of one target's results."""
    out = []
    for result in results:
        if result.verdict not in (Verdict.FAIL, Verdict.ERROR) or result.known is not None:
            continue
        where = ""
        found = _file(result.scenario.file) if result.scenario.file is not None else None
        if found is not None:
            where = f"file={_property(found)},line={_line(result)},"
        title = _property(f"{result.verdict.value} on {spec}: {result.id}")
        judged = result.aspects or {}
        shown = (" (aspects: " + ", ".join(f"{a} {judged.get(a, 'n/a')}" for a in ASPECTS) + ")"
                 if any(v != "n/a" for v in judged.values()) else "")
        out.append(f"::error {where}title={title}::{_data((result.reason or result.verdict.value) + shown)}")
    return out


def summary_wanted() -> bool:
    """Returns True when a run appends its Markdown report to the step summary."""
    return active() and bool(os.environ.get("GITHUB_STEP_SUMMARY"))


def _left_title(left: Any, spec: str) -> str:
    if getattr(left, "kind", "left") == "escape":
        return f"write outside the workspace after the last scenario by {spec}"
    return f"workspace left behind by {spec}"


def report(console: Any, runs: list[Any], *, failures: list[list[Result]] | None = None, columns: Any = None) -> None:
    """Under GitHub Actions: prints the annotations and appends the Markdown report to the step summary.

    ``failures`` (each run's fails and errors, as the run's tally kept them) and ``columns`` (a
    function giving the matrix's columns, harness/record/observations.py ``Collector``) stand in for the runs'
    results when the run did not keep them.
    """
    if not active():
        return
    # Workspaces left on disk first: they fail the run and must not be cut off by the cap below.
    lines = [f"::error title={_property(_left_title(left, run.spec))}::{_data(str(left))}"
             for run in runs for left in getattr(run, "leftovers", None) or []]
    lines += [line for run, failed in zip(runs, failures or [run.results for run in runs])
              for line in annotations(failed, run.spec)]
    console.file.flush()
    resume_commands()
    for line in lines[:MAX_ANNOTATIONS]:
        console.file.write(line + "\n")  # verbatim: a workflow command must not be wrapped or styled
    if len(lines) > MAX_ANNOTATIONS:
        console.file.write(f"::notice::{len(lines) - MAX_ANNOTATIONS} more failures are not annotated\n")
    console.file.flush()
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        from harness.record import observations
        from harness.report import grid as matrix_mod
        from harness.report import markdown
        grid = matrix_mod.build(columns(runs) if columns is not None else observations.from_runs(runs))
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(markdown.render(grid, title="File-tool conformance: "
                                             + ", ".join(run.spec for run in runs)) + "\n")
        except OSError:
            pass  # the summary is a convenience; the annotations and the exit code still tell
