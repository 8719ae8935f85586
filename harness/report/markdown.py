"""The Markdown report: for a pull-request comment or a CI job summary ($GITHUB_STEP_SUMMARY).

Sections: a summary table (verdict counts per target), the failures and differences with their
explanations and diffs folded in ``<details>``, the whole matrix folded, and the open questions
with each target's recorded answer side by side. GitHub renders ``<details>`` inside Markdown.
"""

from __future__ import annotations

import re
from pathlib import Path

import harness
from harness.containment.cleanup import split_leftovers
from harness.report.grid import ASPECT_LEGEND, VERDICTS, Matrix, explain_cell, notable
from harness.util.printable import shown

ICONS = {"pass": "✅ pass", "fail": "❌ fail", "recorded": "📝 recorded", "skip": "⏭️ skip", "error": "💥 error",
         "known": "🔕 known", "observed": "👁️ observed", "absent": "—"}


#: The characters that make Markdown (CommonMark, GitHub's tables, strikethrough and math) of inline
#: text, each shown literally by a backslash before it: emphasis, links and images, code spans,
#: strikethrough, math, a cell's end; ``<`` and ``&`` become entities (no tag, no entity of the text's).
_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_[]!~|$@"} | {"&": "&amp;", "<": "&lt;"})
#: What GitHub links when written bare (``https://...``, ``www....``), and what starts a block (a
#: heading, a quote, a list) at the start of a heading's or a list item's text.
_BARE_LINK = re.compile(r":(?=//)|(?<=www)\.", re.IGNORECASE)
_BLOCK_START = re.compile(r"^(\d*)([-+#>.)=])")


def _cell(text: str) -> str:
    """Returns text shown literally in Markdown (a table cell, a heading, a list item): one line
    (control characters escaped, harness/util/printable.py), no markup, no bare link, no tag."""
    text = shown(text).replace("\n", " ").replace("\t", " ").translate(_MARKUP)
    return _BLOCK_START.sub(r"\1\\\2", _BARE_LINK.sub(lambda m: "\\" + m.group(), text))


def _span(text: str, *, table: bool = True) -> str:
    """Returns ``text`` as a code span: shown literally (nothing is interpreted in a code span), its
    backtick run longer than any in the text; in a table row its pipes escaped for the table."""
    text = shown(text).replace("\n", " ").replace("\t", " ")
    if table:
        text = text.replace("|", "\\|")
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _html(text: str) -> str:
    """Returns text shown literally inside raw HTML (a ``<summary>``, where Markdown is not read): one line, no tag."""
    return shown(text).replace("\n", " ").replace("\t", " ").replace("&", "&amp;").replace("<", "&lt;")


def _code(text: str) -> str:
    """Returns a fenced block that no line of ``text`` can close (control characters escaped)."""
    text = shown(text)
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}diff\n{text.rstrip()}\n{fence}"


def _run_notes(matrix: Matrix) -> list[str]:
    """Returns what a source says once for all its scenarios: a target that did not start, stale baseline entries."""
    out: list[str] = []
    for source in matrix.sources:
        start_error = source.target.get("start_error")
        if start_error:
            out += [f"**{_cell(source.label)} did not start**: every scenario is an error.", "",
                    _code(str(start_error)).replace("```diff", "```text", 1), ""]
        late, left_behind = split_leftovers(source.target.get("leftovers") or [])
        if late:
            out += [f"**{_cell(source.label)} wrote outside the workspace after the last scenario**, "
                    f"{len(late)} time(s), while it answered bye (the run fails):", ""]
            out += [f"- {_span(str(left.get('path')), table=False)}: {_cell(str(left.get('reason')))}"
                    for left in late] + [""]
        if left_behind:
            out += [f"**{_cell(source.label)} left {len(left_behind)} workspace(s) that could not be removed** "
                    "(the run fails; remove them by hand):", ""]
            out += [f"- {_span(str(left.get('path')), table=False)}: {_cell(str(left.get('reason')))}"
                    for left in left_behind] + [""]
        flaky = sorted(key for key, obs in source.observations.items() if obs.flaky)
        if flaky:
            out += [f"**{len(flaky)} flaky** on {_cell(source.label)} (verdict or observation varied between "
                    "repeats): " + ", ".join(_span(key) for key in flaky), ""]
        stale = sorted(key for key, obs in source.observations.items() if obs.stale is not None)
        if stale:
            out += [f"**{len(stale)} stale baseline entr{'y' if len(stale) == 1 else 'ies'}** on {_cell(source.label)} "
                    "(listed as known failures, pass now: they fail the run until removed): "
                    + ", ".join(_span(key) for key in stale), ""]
    return out


def _groups(matrix: Matrix) -> list[str]:
    """Returns each source's failures grouped by cause (harness/report/groups.py), largest first."""
    from harness.report import groups as groups_mod
    out: list[str] = []
    for source in matrix.sources:
        failing = [row.cells[source.label].observation for row in matrix.rows
                   if row.cells[source.label].verdict in ("fail", "error") and not row.cells[source.label].not_started]
        found = groups_mod.group(failing)
        if found:
            count = sum(group.count for group in found)
            out.append(groups_mod.markdown(found, f"### Failures by cause on {_cell(source.label)}: {count} in "
                                                  f"{len(found)} group{'' if len(found) == 1 else 's'}"))
    return out


def render(matrix: Matrix, *, title: str = "File-tool conformance") -> str:
    """Returns the report as Markdown."""
    labels = matrix.labels
    out = [f"## {_cell(title)}", "",
           f"{len(matrix.rows)} scenarios, {len(labels)} target(s); harness {harness.__version__}.", ""]
    shown = [v for v in VERDICTS if any(matrix.summary(label)[v] for label in labels)]
    out.append("| target | " + " | ".join(shown) + (" | differs from " + _cell(labels[0]) if len(labels) > 1 else "") + " |")
    out.append("|---|" + "---:|" * (len(shown) + (len(labels) > 1)))
    for label in labels:
        counts = matrix.summary(label)
        extra = f" | {counts['differs']}" if len(labels) > 1 else ""
        out.append(f"| {_cell(label)} | " + " | ".join(str(counts[v]) for v in shown) + extra + " |")
    out.append("")
    aspect_lines = [line for label in labels for line in matrix.aspect_lines(label)]
    if aspect_lines:
        out += [f"- {_cell(line)}" for line in aspect_lines] + ["", f"<sub>{ASPECT_LEGEND}</sub>", ""]
    out += _run_notes(matrix)

    out += _groups(matrix)
    # New failures first, then differences, then the baseline's known failures (they did not fail the run).
    problems = sorted(notable(matrix), key=lambda item: (
        0 if item[2].verdict in ("fail", "error") else 2 if item[2].known is not None else 1))
    out.append(f"### Failures and differences ({len(problems)})")
    out.append("")
    if not problems:
        out.append("None.")
    for row, label, cell in problems:
        what = (f"known {cell.observation.verdict}" if cell.known is not None and cell.observation else cell.verdict) \
            + (", differs" if cell.differs else "")
        reason = (f"baseline: {cell.known}" if cell.known is not None else
                  cell.observation.reason if cell.observation and cell.verdict in ("fail", "error") else "")
        out += [f"<details><summary><code>{_html(row.id)}</code> on <b>{_html(label)}</b>: {what}"
                + (f" — {_html(reason[:200])}" if reason else "") + "</summary>", "",
                _code(explain_cell(cell)), "", "</details>"]
    out.append("")

    out.append("### Matrix")
    out.append("")
    out.append(f"<details><summary>All {len(matrix.rows)} scenarios by profile and tool</summary>")
    out.append("")
    out.append("| scenario | " + " | ".join(_cell(label) for label in labels) + " |")
    out.append("|---|" + "---|" * len(labels))
    for profile, tool, rows in matrix.groups():
        out.append(f"| **{_cell(profile)} · {_cell(tool or '—')}** |" + " |" * len(labels))
        for row in rows:
            cells = [ICONS.get(row.cells[label].verdict, row.cells[label].verdict)
                     + (f" {row.cells[label].marks}" if row.cells[label].marks else "")
                     + (" ≠" if row.cells[label].differs else "")
                     for label in labels]
            out.append(f"| {_span(row.id)} | " + " | ".join(cells) + " |")
    out += ["", "</details>", ""]

    questions = matrix.open_questions
    out.append(f"### Open questions ({len(questions)})")
    out.append("")
    if questions:
        out.append("| question | source | " + " | ".join(_cell(label) for label in labels) + " |")
        out.append("|---|---|" + "---|" * len(labels))
        for row in questions:
            answers = [_cell(row.cells[label].shown_answer) for label in labels]
            out.append(f"| {_cell(row.open_question or '')}<br>{_span(row.id)} | {_cell(row.source)} | "
                       + " | ".join(answers) + " |")
    else:
        out.append("None.")
    out.append("")
    return "\n".join(out)


def write(path: Path, matrix: Matrix, **kwargs: str) -> None:
    """Writes the Markdown report to ``path``."""
    from harness.util.fileio import write_replacing
    write_replacing(path, render(matrix, **kwargs))
