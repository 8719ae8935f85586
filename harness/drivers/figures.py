"""Writes the figures of a findings page from the capture's JSON reports: never typed by hand.

Usage (``make real-tools`` and ``make capture-gemini-cli`` run it)::

    python -m harness.drivers.figures PAGE [PAGE ...] [--json-dir .harness]

A page marks each block of figures with an HTML comment naming the JSON report of a capture
(``<json-dir>/<name>.json``, as ``harness run --json`` writes it) and the snapshot folder it wrote,
optionally with the scenario ids the capture selected (``select=`` comma-separated id prefixes),
and closes it::

    <!-- figures: capture-desktop-commander snapshots=mcp-desktop-commander -->
    | capture | snapshots | profile | scenarios | pass | fail | recorded | skip | error | effects | outcome | output |
    ...
    <!-- /figures -->

Everything between the two comments is replaced by one table row per profile of that report:
the verdict counts and each aspect's pass rate (of the results that judged it). A block whose
report is not there (that capture did not run here) is left as it is, and said on stderr.
``tests/test_findings_figures.py`` holds every block against the committed snapshots: pass + fail +
recorded is the number of snapshot files of that profile in that folder, and the scenarios are the
catalog's (of the selection).

Exit status: 0; 2 on a page without a block, or a block not closed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: ``<!-- figures: NAME [select=a/,b/] -->`` ... ``<!-- /figures -->``
BLOCK = re.compile(r"<!-- figures: (?P<name>[\w.-]+) snapshots=(?P<snapshots>[\w.-]+)(?: select=(?P<select>[^ ]+))? -->\n"
                   r"(?P<body>.*?)<!-- /figures -->", re.S)
HEADER = ("| capture | snapshots | profile | scenarios | pass | fail | recorded | skip | error | effects | outcome | output |\n"
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
VERDICTS = ("pass", "fail", "recorded", "skip", "error")
ASPECTS = ("effects", "outcome", "output")


def rows(name: str, report: dict[str, Any], snapshots: str) -> list[dict[str, Any]]:
    """Returns one row per profile of ``report``: its counts and aspect rates."""
    out: dict[str, dict[str, Any]] = {}
    for result in report["results"]:
        row = out.setdefault(result["profile"], {"capture": name, "snapshots": f"snapshots/{snapshots}",
                                                 "profile": result["profile"], **{v: 0 for v in VERDICTS},
                                                 **{a: [0, 0] for a in ASPECTS}})
        verdict = result["verdict"] if result["verdict"] in VERDICTS else "error"
        row[verdict] += 1
        for aspect, judged in (result.get("aspects") or {}).items():
            if aspect in ASPECTS and judged in ("pass", "fail"):
                row[aspect][0 if judged == "pass" else 1] += 1
    return [out[profile] for profile in sorted(out)]


def table(found: list[dict[str, Any]]) -> str:
    """Returns the Markdown table of ``rows``."""
    lines = []
    for row in found:
        rates = [f"{round(100 * p / (p + f))}%" if p + f else "–" for p, f in (row[a] for a in ASPECTS)]
        cells = [f"`{row['capture']}`", f"`{row['snapshots']}`", f"`{row['profile']}`",
                 str(sum(row[v] for v in VERDICTS)), *(str(row[v]) for v in VERDICTS), *rates]
        lines.append("| " + " | ".join(cells) + " |\n")
    return HEADER + "".join(lines)


def parse(body: str) -> list[dict[str, Any]]:
    """Returns the rows of a block's table as written in a page (for the tests)."""
    out = []
    for line in body.splitlines()[2:]:
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if len(cells) != 12:
            continue
        row: dict[str, Any] = dict(zip(("capture", "snapshots", "profile", "scenarios", *VERDICTS), cells[:9], strict=False))
        for key in ("scenarios", *VERDICTS):
            row[key] = int(row[key])
        out.append(row)
    return out


def blocks(text: str) -> list[re.Match[str]]:
    """Returns the figures blocks of a page's text."""
    return list(BLOCK.finditer(text))


def update(text: str, json_dir: Path, err: Any = sys.stderr) -> str:
    """Returns ``text`` with every block whose report is in ``json_dir`` written anew."""
    def one(match: re.Match[str]) -> str:
        path = json_dir / f"{match['name']}.json"
        if not path.is_file():
            print(f"figures: {path} not found; the block of {match['name']} is left as it is", file=err)
            return match.group(0)
        report = json.loads(path.read_text("utf-8"))
        head = match.group(0).split("\n", 1)[0]
        return f"{head}\n{table(rows(match['name'], report, match['snapshots']))}<!-- /figures -->"
    return BLOCK.sub(one, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Writes the figures blocks of every page given."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.figures", description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--json-dir", type=Path, default=Path(".harness"))
    args = parser.parse_args(argv)
    for page in args.pages:
        text = page.read_text("utf-8")
        if not blocks(text) or text.count("<!-- figures: ") != len(blocks(text)):
            print(f"error: {page}: no figures block, or one not closed with <!-- /figures -->", file=sys.stderr)
            return 2
        new = update(text, args.json_dir)
        if new != text:
            page.write_text(new, "utf-8")
            print(f"figures: {page} written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
