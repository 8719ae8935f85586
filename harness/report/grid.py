"""The conformance matrix: scenarios (grouped by profile and tool) against targets, and its terminal form.

How several targets' results are combined: each source (a JSON report, a snapshot folder or a target
run now; see harness/record/observations.py) is one column, in the order given. Rows are every scenario id any
source has, ordered by profile, then by the tool the scenario is about (the call answering its
question, else its last call), then by id. A cell holds
the verdict of that scenario on that source (``observed`` for a snapshot folder, which has no
verdicts; ``absent`` when the source lacks the scenario). The first column is the base of
comparison: a cell whose recorded behaviour (its snapshot document) differs from the first column's is
marked as differing, with the unified diff of the two snapshot texts. When one source holds a scenario id twice, the last
result counts. The Markdown, HTML and JSON forms (markdown.py, html.py, ``as_json``) all render this
one model.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

import harness
from harness.record import snapshot as snap
from harness.record.observations import Observation, Source
from harness.scenario import profiles
from harness.scenario.aspects import ASPECTS, rate_line
from harness.scenario.model import TARGET_NOT_STARTED
from harness.util.printable import shown as printable  # the one helper for showing strings literally

#: What a cell shows: a verdict; ``known`` for a fail or error the run's baseline lists (it did not
#: fail the run); ``observed`` for a snapshot folder (no verdicts); ``absent`` when a source lacks it.
VERDICTS = ("pass", "fail", "recorded", "skip", "error", "known", "observed", "absent")
STYLES = {"pass": "green", "fail": "bold red", "recorded": "cyan", "skip": "yellow", "error": "bold magenta",
          "known": "dim yellow", "observed": "blue", "absent": "dim"}
#: How an error begins when the target did not start: said once per source, not per cell.
NOT_STARTED = TARGET_NOT_STARTED
ANSWER_WIDTH = 160
#: How a cell shows its aspects (effects, outcome, content, output, in that order): e.g. ``✓✓✓✗``.
ASPECT_MARKS = {"pass": "✓", "fail": "✗", "recorded": "○", "n/a": "·"}
ASPECT_LEGEND = "aspects: effects outcome content output — ✓ pass, ✗ fail, ○ recorded, · n/a"


@dataclass
class Cell:
    """One scenario on one source."""

    verdict: str
    observation: Observation | None = None
    diff: str = ""  # against the first column, when the recorded behaviours differ
    answer: str | None = None  # for open questions: the answering call, in one line

    @property
    def shown_answer(self) -> str:
        """Returns the answer as the open-questions table shows it: the answer, else the verdict."""
        return self.answer if self.answer is not None else f"({self.verdict})"

    @property
    def marks(self) -> str:
        """Returns the cell's aspect marks (effects, outcome, content, output), e.g. ``✓✓✓✗``; empty when it has
        none or every aspect is n/a."""
        found = self.observation.aspects if self.observation is not None else None
        if not found or all(found.get(a) == "n/a" for a in ASPECTS):
            return ""
        return "".join(ASPECT_MARKS.get(found.get(aspect, "n/a"), "?") for aspect in ASPECTS)

    @property
    def differs(self) -> bool:
        """Returns True when this cell's behaviour differs from the first column's."""
        return bool(self.diff)

    @property
    def known(self) -> str | None:
        """Returns the baseline's reason when this cell is a known failure, else None."""
        return self.observation.known if self.observation is not None else None

    @property
    def not_started(self) -> bool:
        """Returns True for an error that only says the target did not start (the source says why, once)."""
        return (self.verdict == "error" and self.observation is not None
                and self.observation.reason.startswith(NOT_STARTED))

    @property
    def notable(self) -> bool:
        """Returns True when the cell has something to show on demand (failures, a reason, a diff)."""
        return (self.verdict in ("fail", "error", "known") and not self.not_started) or self.differs


@dataclass
class Row:
    """One scenario across the sources."""

    id: str
    profile: str
    tool: str
    title: str
    source: str
    open_question: str | None
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass
class Matrix:
    """Scenarios against targets."""

    sources: list[Source]
    rows: list[Row]

    @property
    def labels(self) -> list[str]:
        """Returns the column labels, in order."""
        return [source.label for source in self.sources]

    def groups(self) -> list[tuple[str, str, list[Row]]]:
        """Returns (profile, tool, rows) in display order."""
        out: list[tuple[str, str, list[Row]]] = []
        for row in self.rows:
            if not out or out[-1][:2] != (row.profile, row.tool):
                out.append((row.profile, row.tool, []))
            out[-1][2].append(row)
        return out

    def summary(self, label: str) -> dict[str, int]:
        """Returns the count of each verdict in one column, and how many cells differ from the first."""
        counts = Counter(row.cells[label].verdict for row in self.rows)
        out = {verdict: counts.get(verdict, 0) for verdict in VERDICTS}
        out["differs"] = sum(row.cells[label].differs for row in self.rows)
        return out

    def summary_line(self, label: str) -> str:
        """Returns one line: ``reference: 180 pass, 46 recorded`` (zeros left out)."""
        counts = self.summary(label)
        parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
        if label != self.labels[0]:
            parts.append(f"{counts['differs']} differ from {self.labels[0]}")
        return f"{label}: " + (", ".join(parts) or "nothing")

    def aspect_lines(self, label: str) -> list[str]:
        """Returns one line per profile of a column: ``label · profile: effects 97% · outcome 91% ·
        content 95% · output 40%`` (harness/scenario/aspects.py, ``rate_line``); none for a column without aspect verdicts."""
        counts: dict[str, dict[str, dict[str, int]]] = {}
        for row in self.rows:
            obs = row.cells[label].observation
            if obs is None or not obs.aspects:
                continue
            per = counts.setdefault(row.profile, {a: {v: 0 for v in ASPECT_MARKS} for a in ASPECTS})
            for aspect in ASPECTS:
                verdict = obs.aspects.get(aspect, "n/a")
                per[aspect][verdict if verdict in ASPECT_MARKS else "n/a"] += 1
        return [f"{label} · {profile}: {rate_line(per)}" for profile, per in counts.items()
                if any(per[a]["pass"] + per[a]["fail"] for a in ASPECTS)]

    @property
    def open_questions(self) -> list[Row]:
        """Returns the rows of open questions."""
        return [row for row in self.rows if row.open_question]


def build(sources: list[Source], scenarios: dict[str, Any] | None = None) -> Matrix:
    """Combines sources into a matrix; ``scenarios`` (id -> Scenario) says which call answers a question."""
    scenarios = scenarios or {}
    ids: dict[str, Observation] = {}
    for source in sources:
        for key, seen in source.observations.items():
            ids.setdefault(key, seen)
    rows = []
    base = sources[0].label if sources else ""
    for key, first in ids.items():
        meta = next((s.observations[key] for s in sources if key in s.observations and s.kind != "snapshots"), first)
        scenario = scenarios.get(key)
        row = Row(id=key, profile=meta.profile, tool=_tool(scenario, first), title=meta.title or first.title,
                  source=meta.source or first.source, open_question=meta.open_question or first.open_question)
        base_obs = sources[0].observations.get(key)
        for source in sources:
            obs = source.observations.get(key)
            if obs is None:
                row.cells[source.label] = Cell("absent")
                continue
            cell = Cell("known" if obs.known is not None else obs.verdict or "observed", obs)
            if source.label != base and base_obs is not None and base_obs.recorded and obs.recorded \
                    and not base_obs.same_behaviour(obs):
                cell.diff = snap.unified_diff(base_obs.text or "", obs.text or "", f"{base}/{key}",
                                              f"{source.label}/{key}")
            if row.open_question and obs.recorded:
                cell.answer = answer(obs, scenario)
            row.cells[source.label] = cell
        rows.append(row)
    order, tool_order = profiles.display_order()
    rows.sort(key=lambda r: (order.get(r.profile, len(order)), r.profile,
                             tool_order.get((r.profile, r.tool), 99), r.tool, r.id))
    return Matrix(sources, rows)


def _tool(scenario: Any, obs: Observation) -> str:
    """Returns the tool a scenario is about: the call answering its question, else its last call."""
    calls = list(getattr(scenario, "calls", None) or [])
    if calls:
        return next((call.tool for call in calls if call.answers), calls[-1].tool)
    if obs.document is None and obs.tool is not None:  # the document was not kept (sources.Collector)
        return obs.tool
    tools = [step["tool"] for step in (obs.document or {}).get("steps", ()) if "tool" in step]
    return tools[-1] if tools else ""


def answering_step(doc: dict[str, Any], scenario: Any = None) -> dict[str, Any] | None:
    """Returns the step of a snapshot document that answers its open question (else the last call)."""
    steps = doc.get("steps", [])
    if scenario is not None:
        for index, step in enumerate(getattr(scenario, "steps", ())):
            if getattr(step, "answers", False):
                found = next((s for s in steps if s.get("step") == index + 1), None)
                if found is not None:
                    return found
    calls = [step for step in steps if "tool" in step]
    return calls[-1] if calls else None


def answer(obs: Observation, scenario: Any = None) -> str | None:
    """Returns the recorded answer to an open question in one line: the answering call's output or error."""
    doc = obs.document
    step = answering_step(doc, scenario) if doc else None
    if step is None or doc is None:
        return None
    if "error" in step:
        error = step["error"]
        if isinstance(error, dict):
            parts = [str(error[k]) for k in ("code", "message") if error.get(k) not in (None, "")]
            rest = {k: v for k, v in error.items() if k not in ("code", "message")}
            text = "error: " + ": ".join(parts) + (f" {_compact(rest)}" if rest else "")
        else:
            text = f"error: {error}"
    else:
        output = step.get("output")
        text = output if isinstance(output, str) else _compact(output)
    text = " ".join(str(text).split())
    if not text and isinstance(step.get("output"), str):
        text = json.dumps(step["output"])  # an empty (or blank) text is an answer too: shown as "" or "\n"
    # For a Write, what landed on disk is the answer as much as what the tool said: keep it whole.
    changes = _workspace_changes(doc, step, scenario)
    disk = f" [disk: {changes}]" if changes else ""
    room = max(40, ANSWER_WIDTH - len(disk))
    return (text if len(text) <= room else text[: room - 1] + "…") + disk


def _workspace_changes(doc: dict[str, Any], step: dict[str, Any], scenario: Any) -> str:
    """Returns what the answering call created, changed or removed, e.g. ``+new/a.txt (7 B)``."""
    after = step.get("workspace")
    if not isinstance(after, dict):  # absent, or "same as after step N": nothing changed
        return ""
    calls = [s for s in doc.get("steps", []) if "tool" in s and isinstance(s.get("workspace"), dict)]
    earlier = [s for s in calls if s.get("step", 0) < step.get("step", 0)]
    if earlier:
        before: dict[str, Any] = earlier[-1]["workspace"]
    else:  # before the first call: the names `given` laid out (their states are not recorded)
        before = {name: None for name in _given_names(scenario)}
    out = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            out.append(f"-{name}")
            continue
        old, new = before.get(name, "absent"), after[name]
        if old == "absent":
            out.append(f"+{name}" + (f" ({new['size']} B)" if new.get("type") == "file" else f" ({new.get('type')})"))
        elif old is not None and old != new and new.get("type") == "file":
            out.append(f"~{name} ({new['size']} B)")
    return ", ".join(out)


def _given_names(scenario: Any) -> set[str]:
    given = getattr(scenario, "given", None) or {}
    names = set(given.get("files", {})) | set(given.get("symlinks", {}))
    names |= {d if isinstance(d, str) else d["path"] for d in given.get("dirs", ())}
    for name in list(names):
        parts = name.split("/")
        names |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    return names


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True, default=str)


def explain_cell(cell: Cell) -> str:
    """Returns what a notable cell has to say: the reason, each unmet expectation, the diff."""
    obs = cell.observation
    lines: list[str] = []
    if obs is not None and obs.known is not None:
        lines.append(f"known {obs.verdict} (baseline): {obs.known}")
    if obs is not None and obs.reason and cell.verdict in ("fail", "error", "known"):
        lines.append(f"reason: {obs.reason}")
    for failure in (obs.failures if obs else []):
        if failure.get("explanation"):  # where it differs, as the terminal shows it (harness/util/textdiff.py)
            lines.append(f"{failure.get('where')}: " + "\n  ".join(str(failure["explanation"]).splitlines()))
            continue
        lines.append(f"{failure.get('where')}: {failure.get('path')}"
                     + (f" ({failure['why']})" if failure.get("why") else ""))
        lines.append(f"  expected: {failure.get('expected')}")
        lines.append(f"  observed: {_compact(failure.get('observed'))}")
    out = "\n".join(lines)
    if cell.diff:
        out += ("\n\n" if out else "") + cell.diff
    return out


def as_json(matrix: Matrix) -> dict[str, Any]:
    """Returns the combined report as a JSON-ready mapping (docs/json-report.md, "combined report")."""
    return {
        "format": 1,
        "harness": {"version": harness.__version__},
        "targets": [{"label": s.label, "kind": s.kind, "origin": s.origin, **s.target} for s in matrix.sources],
        "scenarios": [{
            "id": row.id, "profile": row.profile, "tool": row.tool, "title": row.title, "source": row.source,
            **({"open_question": row.open_question} if row.open_question else {}),
            "results": {label: {"verdict": cell.observation.verdict if cell.observation and cell.known is not None
                                else cell.verdict,
                                "reason": cell.observation.reason if cell.observation else "",
                                "differs": cell.differs,
                                **({"known": cell.known} if cell.known is not None else {}),
                                **({"answer": cell.answer} if cell.answer is not None else {}),
                                **({"aspects": dict(cell.observation.aspects)}
                                   if cell.observation is not None and cell.observation.aspects else {})}
                        for label, cell in row.cells.items()},
        } for row in matrix.rows],
        "summary": {label: matrix.summary(label) for label in matrix.labels},
    }


# -- terminal ----------------------------------------------------------------------------------

#: The widest a column label gets in the terminal (the legend under the table names the target in full).
LABEL_WIDTH = 28
#: What each mark of the terminal matrix means (the legend prints those that appear).
MARKS = {
    "≠": "behaves unlike the first column ({base})",
    "?": "an open question: the table below puts the answers side by side",
    "pass": "met every expectation", "fail": "an expectation was not met", "recorded": "an open question's answer",
    "skip": "the target cannot run it", "error": "the target or the harness broke",
    "known": "a failure the baseline lists (it did not fail the run)",
    "observed": "recorded in a snapshot folder (no verdict)", "absent": "not in that source",
}


def short_labels(matrix: Matrix) -> dict[str, str]:
    """Returns a short, unique column label per source: the target's name and version when known (a
    command line says little in a column header), else the label, cut to ``LABEL_WIDTH``."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for source in matrix.sources:
        name, version = source.target.get("name"), source.target.get("version")
        if name:  # each part at most half the width: shown as two lines, name over version
            half = LABEL_WIDTH // 2
            name, version = (str(part) if len(str(part)) <= half else str(part)[: half - 1] + "…"
                             for part in (name, version or ""))
            short = f"{name} {version}".strip()
        else:
            short = source.label if len(source.label) <= LABEL_WIDTH // 2 else source.label[: LABEL_WIDTH // 2 - 1] + "…"
        candidate, number = short, 2
        while candidate in used:
            candidate, number = f"{short} ({number})", number + 1
        used.add(candidate)
        out[source.label] = candidate
    return out


def legend(matrix: Matrix, shown: dict[str, str]) -> Table:
    """Returns the legend under the terminal matrix: each column's full target, and every mark that appears."""
    grid = Table(title="legend", title_justify="left", show_header=False, box=None, padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for source in matrix.sources:
        where = source.label if source.origin in (source.label, "") else f"{source.label} (from {source.origin})"
        grid.add_row(shown[source.label], printable(where))
    marks = {cell.verdict for row in matrix.rows for cell in row.cells.values()}
    if any(cell.differs for row in matrix.rows for cell in row.cells.values()):
        marks.add("≠")
    if matrix.open_questions:
        marks.add("?")
    base = shown[matrix.labels[0]] if matrix.labels else ""
    for mark, meaning in MARKS.items():
        if mark in marks:
            grid.add_row(Text(mark, style=STYLES.get(mark, "bold yellow" if mark == "≠" else "")),
                         meaning.format(base=base))
    return grid


def _row_name(row: Row) -> str:
    """Returns the id as the terminal shows it under its group: without the profile the group names."""
    return row.id[len(row.profile) + 1:] if row.id.startswith(row.profile + "/") else row.id


def table(matrix: Matrix, *, title: str = "conformance matrix") -> Table:
    """Returns the matrix as a rich table, one section per profile and tool; short column labels
    (``short_labels``; ``legend`` maps them to the targets)."""
    shown = short_labels(matrix)
    grid = Table(title=title, title_justify="left", show_lines=False)
    grid.add_column("scenario", overflow="fold", ratio=1)
    for label in matrix.labels:  # "name version" on two lines: a narrow column leaves the ids room
        grid.add_column(shown[label].replace(" ", "\n", 1), no_wrap=True)
    for profile, tool, rows in matrix.groups():
        grid.add_section()
        grid.add_row(Text(f"{profile} · {tool or '—'}", style="bold"), *("" for _ in matrix.labels))
        for row in rows:
            cells = []
            for label in matrix.labels:
                cell = row.cells[label]
                text = Text(cell.verdict, style=STYLES.get(cell.verdict, ""))
                if cell.marks:
                    text.append(" " + cell.marks, style="dim")
                if cell.differs:
                    text.append(" ≠", style="bold yellow")
                cells.append(text)
            grid.add_row(Text(("? " if row.open_question else "  ") + printable(_row_name(row))), *cells)
    return grid


def print_matrix(console: Console, matrix: Matrix, *, details: bool = True) -> None:
    """Prints the matrix and its legend, then each failure's explanation, then a summary line per target.

    A cell that only behaves unlike the first column is counted, not shown: ``harness diff`` (or the
    HTML report) shows those diffs one pair of sources at a time.
    """
    from harness.report.groups import terminal_lines
    from harness.report.wrap import cut_middle
    shown = short_labels(matrix)
    console.print(table(matrix))
    console.print(legend(matrix, shown))
    # The failures by cause next (harness/report/groups.py): one bug is one group, not a screenful.
    found = failure_groups(matrix)
    for label, groups in found.items():
        count = sum(group.count for group in groups)
        console.print(Text(f"\nFAILURES BY CAUSE on {shown[label]}: {count} in {len(groups)} group"
                           f"{'' if len(groups) == 1 else 's'}", style="bold red"))
        for line in terminal_lines(groups, width=console.width, members=3):
            console.print(Text(line), highlight=False, soft_wrap=True)
    group_of = {(label, member.id): (number, group.members[0].id == member.id)
                for label, groups in found.items() for number, group in enumerate(groups, 1)
                for member in group.members}
    differing: dict[str, int] = {}
    if details:
        for row in matrix.rows:
            for label, cell in row.cells.items():
                if not cell.notable:
                    continue
                if cell.verdict not in ("fail", "error", "known"):
                    differing[label] = differing.get(label, 0) + 1
                    continue
                number, first = group_of.get((label, row.id), (0, True))
                if not first:  # the group's first member is explained; the others named once
                    console.print(Text(f"{cell.verdict} (cause {number}): {printable(row.id)} on {shown[label]}"),
                                  highlight=False)
                    continue
                console.print(Text(f"\n{printable(row.id)} on {shown[label]}: {cell.verdict}"
                                   + (" (differs)" if cell.differs else ""), style="bold"))
                print_diff(console, "\n".join(cut_middle(line) for line in explain_cell(cell).splitlines()))
    console.print()
    base = matrix.labels[0] if matrix.labels else ""
    for label in matrix.labels:
        counts = matrix.summary(label)
        parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
        if label != base:
            parts.append(f"{counts['differs']} differ from {shown[base]}")
        console.print(Text(f"{shown[label]}: " + (", ".join(parts) or "nothing")))
    for label, count in differing.items():
        console.print(Text(f"{count} cell(s) of {shown[label]} behave unlike {shown[base]}, not shown here: "
                           "`harness diff` of the two shows each diff", style="dim"))
    lines = [line for label in matrix.labels for line in matrix.aspect_lines(label)]
    for line in lines:
        console.print(line, highlight=False, markup=False)
    if lines:
        console.print(ASPECT_LEGEND, style="dim", highlight=False, markup=False)


def failure_groups(matrix: Matrix) -> dict[str, list[Any]]:
    """Returns each column's failures grouped by cause (harness/report/groups.py; a baseline's known
    failures and a target that did not start left out), for the columns that have any."""
    from harness.report import groups
    out = {}
    for label in matrix.labels:
        failing = [row.cells[label].observation for row in matrix.rows
                   if row.cells[label].verdict in ("fail", "error") and not row.cells[label].not_started]
        found = groups.group(failing, label)
        if found:
            out[label] = found
    return out


def print_diff(console: Console, text: str) -> None:
    """Prints a unified diff: coloured on a terminal, plain text otherwise (CI logs)."""
    text = printable(text)  # a candidate's output never reaches the terminal raw
    if console.is_terminal:
        from rich.syntax import Syntax  # pygments' lexers: imported for a terminal's diff alone

        console.print(Syntax(text.rstrip("\n"), "diff", theme="ansi_dark", background_color="default"))
    else:
        console.print(text.rstrip("\n"), markup=False, highlight=False)  # wrapped as the console wraps


def open_questions_table(matrix: Matrix) -> Table:
    """Returns the open questions with each target's recorded answer side by side."""
    shown = short_labels(matrix)
    grid = Table(title="open questions", title_justify="left", show_lines=True)
    grid.add_column("question", overflow="fold")
    grid.add_column("source", overflow="fold")
    for label in matrix.labels:
        grid.add_column(shown[label], overflow="fold")
    for row in matrix.open_questions:
        question = Text(printable(row.open_question or ""))
        question.append(f"\n{printable(row.id)}", style="dim")
        grid.add_row(question, Text(printable(row.source)),
                     *(Text(printable(row.cells[label].shown_answer)) for label in matrix.labels))
    return grid


def notable(matrix: Matrix) -> Iterable[tuple[Row, str, Cell]]:
    """Yields every (row, label, cell) with something to show: failures, errors, differences."""
    for row in matrix.rows:
        for label, cell in row.cells.items():
            if cell.notable:
                yield row, label, cell
