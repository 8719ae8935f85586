"""The ``harness compare`` and ``harness site`` commands: runs set against each other and over time.

``harness compare OLD.json NEW.json`` classifies every scenario as a new failure, still failing,
fixed, a new scenario or gone (harness/report/compare.py), new failures first; under GitHub
Actions it adds the same to the step summary. Exit 1 when there is a new failure, 0 otherwise, 2
for bad usage (an unreadable report).

``harness site REPORTS_DIR -o SITE`` builds a static site from a folder of JSON reports
(harness/report/site.py): the matrix of every target's latest run, each scenario's history, badges.
Exit 0, or 2 for bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_NEW_FAILURE, EXIT_USAGE = 0, 1, 2


def add_parsers(sub: Any) -> None:
    """Adds the ``compare`` and ``site`` subcommands."""
    compare = sub.add_parser("compare", help="two runs' JSON reports: new failures, still failing, fixed, new, gone")
    compare.add_argument("old", metavar="OLD.json", type=Path, help="the earlier run's JSON report")
    compare.add_argument("new", metavar="NEW.json", type=Path, nargs="+",
                         help="the later run's JSON report (several: the shards or targets of one run)")
    compare.add_argument("--markdown", type=Path, metavar="FILE", help="also write the comparison in Markdown")
    compare.add_argument("--json", type=Path, metavar="FILE", help="also write the comparison as JSON")
    compare.set_defaults(handler=cmd_compare)

    site = sub.add_parser("site", help="a static site (matrix, per-scenario history, badges) from a folder of JSON reports")
    site.add_argument("reports", metavar="REPORTS_DIR", type=Path, help="a folder of JSON reports (searched recursively)")
    site.add_argument("-o", "--output", type=Path, required=True, metavar="SITE", help="the folder to write the site to")
    site.add_argument("--title", default="File-tool conformance", help="the site's title")
    site.add_argument("--scenario-url", metavar="URL",
                      help="link each scenario's file at this prefix (e.g. https://github.com/o/r/blob/main/)")
    site.set_defaults(handler=cmd_site)


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.report import compare
    from harness.util.printable import shown
    try:
        outcome = compare.compare_files(args.old, args.new)
    except ValueError as exc:
        print(f"error: {shown(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(compare.terminal(outcome, width=_width()), flush=True)
    except BrokenPipeError:  # `| head`: the rest is not wanted; the files and the exit code still are
        sys.stdout = open(os.devnull, "w")
    text = compare.markdown(outcome)
    from harness.util.fileio import write_replacing
    if args.markdown:
        write_replacing(args.markdown, text + "\n")
    if args.json:
        compare.write_json(args.json, outcome)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if os.environ.get("GITHUB_ACTIONS") == "true" and summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(text + "\n")
        except OSError:
            pass  # the summary is a convenience; the exit code still tells
    return EXIT_NEW_FAILURE if outcome.of("new failure") else EXIT_OK


def cmd_site(args: argparse.Namespace) -> int:
    from harness.report import site
    from harness.util.printable import shown
    try:
        built = site.build(args.reports, args.output, title=args.title, scenario_url=args.scenario_url)
    except ValueError as exc:
        print(f"error: {shown(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{built.pages} pages from {built.runs} runs of {built.targets} targets in {shown(str(args.output))}")
    for skipped in built.skipped:
        print(f"skipped: {shown(skipped)}", file=sys.stderr)
    return EXIT_OK


def _width() -> int:
    import shutil
    return shutil.get_terminal_size((80, 24)).columns
