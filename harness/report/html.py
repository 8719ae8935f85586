"""The HTML report: one self-contained file (inline CSS and JavaScript, nothing fetched).

It shows the matrix (scenarios grouped by profile and tool, against targets), filters by profile and
by verdict, each failure's or difference's explanation and diff on demand (``<details>``, opened
from the matrix cell that links to it), and the open questions with each target's answer side by
side. The page works without JavaScript too: filters then do nothing, everything stays visible.
Filters can be given in the link: ``report.html#profile=claude-code&verdict=fail,error``.
"""

from __future__ import annotations

from html import escape as html_escape
from pathlib import Path

import harness
from harness.containment.cleanup import split_leftovers
from harness.report.grid import ASPECT_LEGEND, VERDICTS, Matrix, explain_cell
from harness.util.printable import shown

CSS = """
:root{--pass:#1a7f37;--fail:#cf222e;--recorded:#0969da;--skip:#9a6700;--error:#8250df;--observed:#57606a;
--absent:#8c959f;--line:#d0d7de;--bg:#f6f8fa}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1f2328}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
.meta{color:#57606a;margin-bottom:1rem}
table{border-collapse:collapse;margin:.4rem 0}
th,td{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:var(--bg);position:sticky;top:0}
tr.group td{background:var(--bg);font-weight:600}
td.id{font-family:ui-monospace,monospace;font-size:12.5px}
.v{font-weight:600;white-space:nowrap}
.v-pass{color:var(--pass)}.v-fail{color:var(--fail)}.v-recorded{color:var(--recorded)}.v-skip{color:var(--skip)}
.v-error{color:var(--error)}.v-known{color:var(--skip);font-style:italic}.v-observed{color:var(--observed)}.v-absent{color:var(--absent);font-weight:400}
.differs{color:#bc4c00}
.marks{color:#6e7781;font-size:.85em;letter-spacing:.05em}
a.v{text-decoration:none}a.v:hover{text-decoration:underline}
#filters{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.5rem .7rem;background:var(--bg);
border:1px solid var(--line);border-radius:6px}
#filters label{white-space:nowrap}
details{border:1px solid var(--line);border-radius:6px;margin:.35rem 0;padding:.2rem .6rem}
details[open]{background:#fff}
summary{cursor:pointer}
pre{background:var(--bg);padding:.5rem;overflow:auto;font-size:12.5px;margin:.4rem 0}
pre .add{color:var(--pass)}pre .del{color:var(--fail)}pre .hunk{color:var(--recorded)}
.hidden{display:none}
.answer{font-family:ui-monospace,monospace;font-size:12.5px;max-width:28rem;overflow-wrap:anywhere}
"""

JS = """
(function(){
  var profile=document.getElementById('profile');
  var boxes=[].slice.call(document.querySelectorAll('#filters input[type=checkbox]'));
  function wanted(el){
    var p=profile.value;
    if(p&&el.getAttribute('data-profile')!==p)return false;
    var vs=(el.getAttribute('data-verdicts')||'').split(' ');
    return boxes.some(function(b){return b.checked&&vs.indexOf(b.value)>=0;});
  }
  function apply(){
    var rows=document.querySelectorAll('#matrix tbody tr.row');
    var shown=0;
    [].forEach.call(rows,function(r){var ok=wanted(r);r.classList.toggle('hidden',!ok);if(ok)shown++;});
    [].forEach.call(document.querySelectorAll('#matrix tbody tr.group'),function(g){
      var key=g.getAttribute('data-group');
      var any=document.querySelector('#matrix tbody tr.row[data-group="'+key+'"]:not(.hidden)');
      g.classList.toggle('hidden',!any);
    });
    [].forEach.call(document.querySelectorAll('details.item'),function(d){d.classList.toggle('hidden',!wanted(d));});
    document.getElementById('count').textContent=shown+' shown';
  }
  profile.addEventListener('change',apply);
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  [].forEach.call(document.querySelectorAll('a.v[href^="#d-"]'),function(a){
    a.addEventListener('click',function(){
      var d=document.getElementById(a.getAttribute('href').slice(1));
      if(d){d.open=true;d.classList.remove('hidden');}
    });
  });
  // A link may carry filters: report.html#profile=claude-code&verdict=fail,error
  var hash=location.hash.slice(1);
  if(hash.indexOf('=')>0){
    hash.split('&').forEach(function(pair){
      var kv=pair.split('='),key=kv[0],value=decodeURIComponent(kv[1]||'');
      if(key==='profile')profile.value=value;
      if(key==='verdict'){var on=value.split(',');boxes.forEach(function(b){b.checked=on.indexOf(b.value)>=0;});}
    });
  }
  apply();
  document.body.setAttribute('data-ready','1');
})();
"""


def escape(text: str) -> str:
    """Returns ``text`` for an HTML text or attribute: tags and quotes escaped, control characters
    and lone surrogates shown as ``\\x1b`` / ``\\ud800`` (harness/util/printable.py), never raw."""
    return html_escape(shown(text))


def _diff_html(text: str) -> str:
    out = []
    for line in text.splitlines():
        css = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else "")
        out.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return "\n".join(out)


def render(matrix: Matrix, *, title: str = "File-tool conformance report") -> str:
    """Returns the report as one self-contained HTML page."""
    labels = matrix.labels
    profiles = sorted({row.profile for row in matrix.rows})
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             f'<div class="meta">{len(matrix.rows)} scenarios · {len(labels)} target(s) · harness '
             f"{escape(harness.__version__)}</div>"]

    parts.append("<h2>Summary</h2><table id=\"summary\"><thead><tr><th>target</th><th>origin</th>"
                 + "".join(f"<th>{v}</th>" for v in VERDICTS)
                 + (f"<th>differs from {escape(labels[0])}</th>" if len(labels) > 1 else "") + "</tr></thead><tbody>")
    for source in matrix.sources:
        counts = matrix.summary(source.label)
        version = source.target.get("version") or ""
        parts.append(f"<tr><td>{escape(source.label)}{(' ' + escape(str(version))) if version else ''}</td>"
                     f"<td>{escape(source.kind)}: {escape(source.origin)}</td>"
                     + "".join(f'<td class="v v-{v}">{counts[v]}</td>' for v in VERDICTS)
                     + (f"<td>{counts['differs']}</td>" if len(labels) > 1 else "") + "</tr>")
    parts.append("</tbody></table>")
    aspect_lines = [line for label in labels for line in matrix.aspect_lines(label)]
    if aspect_lines:
        parts.append('<ul class="aspects">' + "".join(f"<li>{escape(line)}</li>" for line in aspect_lines)
                     + f'</ul><p class="meta">{escape(ASPECT_LEGEND)}</p>')
    for source in matrix.sources:
        start_error = source.target.get("start_error")
        if start_error:
            parts.append(f'<div class="start-error"><p><b>{escape(source.label)} did not start</b>: every scenario '
                         f"is an error.</p><pre>{escape(str(start_error))}</pre></div>")
        late, left_behind = split_leftovers(source.target.get("leftovers") or [])
        for found, said in ((late, f"wrote outside the workspace after the last scenario</b>, {len(late)} time(s), "
                                   "while it answered bye (the run fails):"),
                            (left_behind, f"left {len(left_behind)} workspace(s) that could not be removed</b> "
                                          "(the run fails; remove them by hand):")):
            if found:
                parts.append(f'<div class="leftovers"><p><b>{escape(source.label)} {said}</p><ul>'
                             + "".join(f"<li><code>{escape(str(left.get('path')))}</code>: "
                                       f"{escape(str(left.get('reason')))}</li>" for left in found) + "</ul></div>")
        flaky = sorted(key for key, obs in source.observations.items() if obs.flaky)
        if flaky:
            parts.append(f'<p class="flaky"><b>{len(flaky)} flaky</b> on {escape(source.label)} (verdict or '
                         "observation varied between repeats): "
                         + ", ".join(f"<code>{escape(k)}</code>" for k in flaky) + "</p>")
        stale = sorted(key for key, obs in source.observations.items() if obs.stale is not None)
        if stale:
            parts.append(f'<p class="stale"><b>{len(stale)} stale baseline entr{"y" if len(stale) == 1 else "ies"}</b> '
                         f"on {escape(source.label)} (listed as known failures, pass now: they fail the run until "
                         "removed): " + ", ".join(f"<code>{escape(k)}</code>" for k in stale) + "</p>")

    from harness.report import groups as groups_mod
    for source in matrix.sources:  # failures grouped by cause (harness/report/groups.py), largest first
        failing = [row.cells[source.label].observation for row in matrix.rows
                   if row.cells[source.label].verdict in ("fail", "error") and not row.cells[source.label].not_started]
        found = groups_mod.group(failing)
        if found:
            parts.append(f'<h2>Failures by cause on {escape(source.label)}: {sum(g.count for g in found)} in '
                         f'{len(found)} group{"" if len(found) == 1 else "s"}</h2><ol class="causes">'
                         + "".join(f"<li><b>{group.count}</b> × {escape(group.title)}<details><summary>"
                                   f"{escape(group.members[0].id)}{' …' if group.count > 1 else ''}</summary>"
                                   + ", ".join(f"<code>{escape(member.id)}</code>" for member in group.members)
                                   + "</details></li>" for group in found) + "</ol>")
    parts.append('<h2>Matrix</h2><div id="filters"><label>profile <select id="profile"><option value="">all</option>'
                 + "".join(f'<option value="{escape(p)}">{escape(p)}</option>' for p in profiles) + "</select></label>"
                 + "".join(f'<label><input type="checkbox" value="{v}" checked> {v}</label>' for v in VERDICTS)
                 + '<label><input type="checkbox" value="differs" checked> differs</label>'
                 + '<span id="count"></span></div>')
    parts.append('<table id="matrix"><thead><tr><th>scenario</th>'
                 + "".join(f"<th>{escape(label)}</th>" for label in labels) + "</tr></thead><tbody>")
    details: list[str] = []
    for number, (profile, tool, rows) in enumerate(matrix.groups()):
        group = f"g{number}"
        parts.append(f'<tr class="group" data-group="{group}" data-profile="{escape(profile)}">'
                     f'<td colspan="{len(labels) + 1}">{escape(profile)} · {escape(tool or "—")}</td></tr>')
        for row in rows:
            verdicts = sorted({cell.verdict for cell in row.cells.values()}
                              | ({"differs"} if any(c.differs for c in row.cells.values()) else set()))
            cells = []
            for label in labels:
                cell = row.cells[label]
                mark = ' <span class="differs" title="behaves unlike the first column">≠</span>' if cell.differs else ""
                if cell.marks:
                    mark = (f' <span class="marks" title="effects, outcome, content, output">{escape(cell.marks)}</span>'
                            + mark)
                if cell.notable:
                    anchor = f"d-{len(details)}"
                    cells.append(f'<td><a class="v v-{cell.verdict}" href="#{anchor}">{cell.verdict}</a>{mark}</td>')
                    reason = (f"baseline: {cell.known}" if cell.known is not None else
                              cell.observation.reason if cell.observation and cell.verdict in ("fail", "error") else "")
                    details.append(
                        f'<details class="item" id="{anchor}" data-profile="{escape(profile)}" '
                        f'data-verdicts="{cell.verdict}{" differs" if cell.differs else ""}"><summary>'
                        f"<code>{escape(row.id)}</code> on <b>{escape(label)}</b>: "
                        f'<span class="v v-{cell.verdict}">{cell.verdict}</span>{mark}'
                        + (f" — {escape(reason[:200])}" if reason else "")
                        + f"</summary><p>{escape(row.title)}<br><small>source: {escape(row.source)}</small></p>"
                        f"<pre>{_diff_html(explain_cell(cell))}</pre></details>")
                else:
                    cells.append(f'<td><span class="v v-{cell.verdict}">{cell.verdict}</span>{mark}</td>')
            marker = "? " if row.open_question else ""
            parts.append(f'<tr class="row" data-group="{group}" data-profile="{escape(profile)}" '
                         f'data-verdicts="{" ".join(verdicts)}"><td class="id" title="{escape(row.title)}">'
                         f"{marker}{escape(row.id)}</td>{''.join(cells)}</tr>")
    parts.append("</tbody></table>")

    parts.append(f"<h2>Failures and differences ({len(details)})</h2>")
    parts.append("".join(details) if details else "<p>None.</p>")

    questions = matrix.open_questions
    parts.append(f'<h2>Open questions ({len(questions)})</h2><table id="questions"><thead><tr><th>question</th>'
                 "<th>source</th>" + "".join(f"<th>{escape(label)}</th>" for label in labels) + "</tr></thead><tbody>")
    for row in questions:
        answers = "".join(
            f'<td class="answer">{escape(row.cells[label].shown_answer)}</td>'
            for label in labels)
        parts.append(f"<tr><td>{escape(row.open_question or '')}<br><small><code>{escape(row.id)}</code></small></td>"
                     f"<td>{escape(row.source)}</td>{answers}</tr>")
    parts.append("</tbody></table>")
    parts.append(f"<script>{JS}</script></body></html>")
    return "\n".join(parts) + "\n"


def write(path: Path, matrix: Matrix, **kwargs: str) -> None:
    """Writes the HTML report to ``path``."""
    from harness.util.fileio import write_replacing
    write_replacing(path, render(matrix, **kwargs))
