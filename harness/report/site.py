"""``harness site REPORTS_DIR -o SITE``: a static site from a folder of JSON reports.

The folder holds ``harness run --json`` reports (one target each, or several in one file) of any
number of targets, versions and dates, e.g. every CI run's report kept as an artifact. A *target*
is what a report's target calls itself (``target.name``, else its spec); a *run* is one report of
one target, dated by its ``started`` (else the file's modification time). The site has:

- ``index.html``: every target's latest run as a column of the matrix (scenarios grouped by profile
  and tool), with its summary and badge, and the list of runs; a red cell (``fail`` or ``error``)
  links to that scenario's page at that target;
- ``scenario/<id>.html``: per target, the scenario's history across runs, oldest first, with
  flaky results marked (runs before a rename found by the scenario's ``former_ids``); for each failing latest run its reason, each unmet expectation, the diff
  with the first column's behaviour, and the command that reproduces it;
- ``badge/<target>.svg`` (a digest added where two names would share a file): ``conformance | 93% (214/230)``, the share of judged scenarios
  (pass + fail + error) that pass, coloured by it.

A result is *flaky* when its report marks it so (``"flaky": true``, ``harness run --repeat N``) or
when runs of the same target and version gave it different verdicts.

Every page is a Jinja2 template (harness/report/templates/site/) rendered with autoescape: what a
report says (ids, reasons, a candidate's output) is text on the page, never markup. A report file
is read as ``harness report`` reads one (bounded, its members' kinds checked); files that are not
run reports (a combined matrix, a comparison) are skipped and named. Links are never followed
while walking the folder.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness
from harness.util.printable import shown

#: At most this many JSON files are read from the folder (a CI history of a few years' nightly runs).
MAX_REPORTS = 5000
FAILING = ("fail", "error")
TEMPLATES = Path(__file__).with_name("templates") / "site"


@dataclass
class Run:
    """One report of one target."""

    target: str  # the target's key (its name)
    version: str
    spec: str
    started: str  # ISO 8601 UTC
    origin: str
    source: Any  # harness/record/observations.py Source

    @property
    def counts(self) -> dict[str, int]:
        out = {verdict: 0 for verdict in ("pass", "fail", "recorded", "skip", "error")}
        for obs in self.source.observations.values():
            out[obs.verdict or "skip"] = out.get(obs.verdict or "skip", 0) + 1
        return out


@dataclass
class Built:
    """What ``build`` made."""

    pages: int = 0
    runs: int = 0
    targets: int = 0
    skipped: list[str] = field(default_factory=list)


def slug(text: str, limit: int = 80) -> str:
    """Returns a file name for ``text``: its safe characters, and a digest so no two texts share one."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:limit] or "x"
    return f"{safe}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def badge_files(names: list[str]) -> dict[str, str]:
    """Returns target name -> its badge's file name: the name's safe characters (``planted.svg``),
    with a digest only where two names would share one."""
    plain = {name: re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "x" for name in names}
    taken = [value for value in plain.values()]
    return {name: (value if taken.count(value) == 1 else slug(name)) + ".svg" for name, value in plain.items()}


def _reports(folder: Path) -> list[Path]:
    """Returns the JSON files under ``folder``, never through a link, at most MAX_REPORTS."""
    if folder.is_symlink() or not folder.is_dir():
        raise ValueError(f"{folder}: not a folder")
    found = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(name for name in dirs if not (Path(root) / name).is_symlink())
        for name in sorted(files):
            path = Path(root) / name
            if name.endswith(".json") and not path.is_symlink() and path.is_file():
                found.append(path)
                if len(found) > MAX_REPORTS:
                    raise ValueError(f"{folder}: more than {MAX_REPORTS} JSON files; give a smaller folder")
    return found


def _when(source: Any, path: Path) -> str:
    if source.started and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", source.started):
        return source.started
    stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def load(folder: Path) -> tuple[list[Run], list[str]]:
    """Reads every run report under ``folder``; returns the runs (oldest first) and the files skipped, with why."""
    from harness.record import observations as sources
    runs, skipped = [], []
    for path in _reports(folder):
        try:
            found = sources.from_reports(path)
        except ValueError as exc:
            skipped.append(str(exc))
            continue
        for source in found:
            target = source.target
            name = str(target.get("name") or source.label)
            runs.append(Run(name, str(target.get("version") or ""), str(target.get("spec") or source.label),
                            _when(source, path), str(path.relative_to(folder)), source))
    runs.sort(key=lambda run: (run.started, run.origin))
    return runs, skipped


def reproduce(spec: str, scenario_id: str, profile: str) -> str:
    """Returns the command line that runs one scenario on one target again."""
    return shlex.join(["harness", "run", "--target", spec, "--profile", profile, "-k", scenario_id])


def badge(label: str, value: str, share: float | None) -> dict[str, Any]:
    """Returns what the badge template needs: texts, widths (about 6.5 px a character) and colour."""
    colour = ("#9f9f9f" if share is None else "#4c1" if share >= 0.95 else "#a4a61d" if share >= 0.8
              else "#dfb317" if share >= 0.6 else "#e05d44")
    left, right = 10 + round(6.5 * len(label)), 10 + round(6.5 * len(value))
    return {"label": label, "value": value, "colour": colour, "left": left, "right": right, "width": left + right}


def _share(counts: dict[str, int]) -> tuple[str, float | None]:
    judged = counts["pass"] + counts["fail"] + counts["error"]
    if not judged:
        return "no verdicts", None
    return f"{100 * counts['pass'] // judged}% ({counts['pass']}/{judged})", counts["pass"] / judged


def _environment() -> Any:
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["shown"] = lambda value: shown(str(value))
    return env


def build(folder: Path, output: Path, *, title: str = "File-tool conformance",
          scenario_url: str | None = None) -> Built:
    """Builds the site from the reports under ``folder`` into ``output``."""
    from harness.report import grid as matrix_mod
    from harness.util.fileio import write_replacing
    runs, skipped = load(Path(folder))
    if not runs:
        raise ValueError(f"{folder}: no harness JSON report in it" + (f" ({len(skipped)} skipped)" if skipped else ""))
    targets: dict[str, list[Run]] = {}
    for run in runs:
        targets.setdefault(run.target, []).append(run)
    # The reference (when there) first: the base every other column's behaviour is compared with.
    order = sorted(targets, key=lambda name: (name != "reference", name))
    latest = [targets[name][-1] for name in order]
    for run, name in zip(latest, order):
        run.source.label = name
    grid = matrix_mod.build([run.source for run in latest])
    pages = {row.id: f"scenario/{slug(row.id)}.html" for row in grid.rows}
    flaky = _flaky(targets)
    env = _environment()
    files = _scenario_files() if scenario_url else {}
    common = {"title": title, "version": harness.__version__,
              "generated": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}
    output = Path(output)
    for sub in ("", "scenario", "badge"):
        (output / sub).mkdir(parents=True, exist_ok=True)
    built = Built(runs=len(runs), targets=len(order), skipped=skipped)

    columns = []
    badges = badge_files(order)
    for name, run in zip(order, latest):
        text, share = _share(run.counts)
        columns.append({"name": name, "run": run, "counts": run.counts, "share": text,
                        "badge": f"badge/{badges[name]}", "runs": len(targets[name])})
        write_replacing(output / "badge" / badges[name],
                        env.get_template("badge.svg.j2").render(**badge("conformance", text, share)))
        built.pages += 1
    groups = []
    for profile, tool, rows in grid.groups():
        items = []
        for row in rows:
            cells = []
            for name in order:
                cell = row.cells[name]
                cells.append({"verdict": cell.verdict, "red": cell.verdict in FAILING and not cell.not_started,
                              "href": f"{pages[row.id]}#{slug(name)}", "flaky": (name, row.id) in flaky,
                              "differs": cell.differs, "target": name})
            items.append({"id": row.id, "title": row.title, "href": pages[row.id], "cells": cells,
                          "question": bool(row.open_question)})
        groups.append({"profile": profile, "tool": tool or "—", "rows": items})
    write_replacing(output / "index.html", env.get_template("index.html.j2").render(
        columns=columns, groups=groups, runs=list(reversed(runs)), scenarios=len(grid.rows), **common))
    built.pages += 1

    for row in grid.rows:
        sections = []
        for name, run in zip(order, latest):
            cell = row.cells[name]
            former = cell.observation.former_ids if cell.observation is not None else ()
            history = [{"started": past.started, "version": past.version, "origin": past.origin,
                        "verdict": _verdict(past, row.id, former), "flaky": _flaky_result(past, row.id, former)}
                       for past in targets[name]]
            history = [entry for entry in history if entry["verdict"] != "absent"]
            first_red = next((entry for entry in reversed(history) if entry["verdict"] not in FAILING), None)
            sections.append({
                "target": name, "anchor": slug(name), "version": run.version, "spec": run.spec,
                "verdict": cell.verdict, "red": cell.verdict in FAILING, "flaky": (name, row.id) in flaky,
                "history": history, "explain": matrix_mod.explain_cell(cell) if cell.notable else "",
                "known": cell.known, "since": _since(history, first_red),
                "reproduce": reproduce(run.spec, row.id, row.profile) if cell.verdict in FAILING else ""})
        link = scenario_url.rstrip("/") + "/" + files[row.id] if scenario_url and row.id in files else ""
        write_replacing(output / pages[row.id], env.get_template("scenario.html.j2").render(
            row=row, sections=sections, link=link, **common))
        built.pages += 1
    return built


def _observed(run: Run, scenario_id: str, former: tuple[str, ...] = ()) -> Any:
    """Returns a run's observation of a scenario, under its id or, in a run before a rename, a former id."""
    found = run.source.observations.get(scenario_id)
    for old in former if found is None else ():
        found = run.source.observations.get(old)
        if found is not None:
            break
    return found


def _verdict(run: Run, scenario_id: str, former: tuple[str, ...] = ()) -> str:
    obs = _observed(run, scenario_id, former)
    return "absent" if obs is None else obs.verdict or "observed"


def _flaky_result(run: Run, scenario_id: str, former: tuple[str, ...] = ()) -> bool:
    obs = _observed(run, scenario_id, former)
    return bool(obs is not None and obs.flaky)


def _flaky(targets: dict[str, list[Run]]) -> set[tuple[str, str]]:
    """Returns (target, scenario id) pairs that are flaky: marked so by a run, or whose verdict varied
    between runs of one version of the target."""
    out = set()
    for name, runs in targets.items():
        seen: dict[tuple[str, str], set[str]] = {}
        for run in runs:
            for key, obs in run.source.observations.items():
                if obs.flaky:
                    out.add((name, key))
                if obs.verdict in ("pass", "fail", "error", "recorded"):
                    seen.setdefault((run.version, key), set()).add(obs.verdict)
        out |= {(name, key) for (version, key), verdicts in seen.items() if len(verdicts) > 1}
    return out


def _since(history: list[dict[str, Any]], last_green: dict[str, Any] | None) -> str:
    """Returns since when a failing scenario fails: the first failing run after the last one that did not."""
    if not history or history[-1]["verdict"] not in FAILING:
        return ""
    start = history.index(last_green) + 1 if last_green is not None else 0
    return history[start]["started"]


def _scenario_files() -> dict[str, str]:
    """Returns scenario id -> its file inside the repository (relative to the working folder), for the
    scenarios of the catalog found there."""
    from harness.scenario import catalog
    try:
        scenarios = catalog.load_with([], builtin=True).scenarios
    except Exception:  # a catalog that does not load: no links, the site still builds
        return {}
    root, out = Path.cwd().resolve(), {}
    for scenario in scenarios:
        if scenario.file is not None and Path(scenario.file).resolve().is_relative_to(root):
            out[scenario.id] = Path(scenario.file).resolve().relative_to(root).as_posix()
    return out
