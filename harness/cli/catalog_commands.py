"""The commands that read the catalog: ``list``, ``lint``, ``coverage``, ``profiles``, ``show``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from harness.cli.console import make_console
from harness.cli.run import file_kind, state_dir
from harness.targets.base import spec_slug
from harness.util.printable import shown


def _catalog(args: argparse.Namespace):
    from harness.scenario import catalog
    return catalog.load_with(args.scenarios, builtin=not args.no_builtin)


def cmd_list(args: argparse.Namespace) -> int:
    """Lists the selected scenarios: id, profile, title (and ? for open questions)."""
    cat = _catalog(args)
    for problem in cat.problems:
        print(f"invalid scenario: {shown(str(problem))}", file=sys.stderr)
    if cat.unknown_profiles(args.profile):
        print(f"error: {cat.unknown_profiles(args.profile)}", file=sys.stderr)
        return EXIT_USAGE
    for scenario in cat.select(profiles=args.profile, keyword=args.keyword):
        marker = "?" if scenario.open_question else " "
        print(f"{marker} {scenario.id:<60} {scenario.title}")
    return EXIT_USAGE if cat.problems else EXIT_OK


def cmd_lint(args: argparse.Namespace) -> int:
    """Validates every scenario and profile file; prints each problem as file:line: [field] message."""
    cat = _catalog(args)
    for problem in cat.problems:
        print(shown(str(problem)))
    count = len(cat.scenarios)
    if cat.problems:
        print(f"{len(cat.problems)} problem(s) in {len(set(p.file for p in cat.problems))} file(s); "
              f"{count} valid scenario(s)", file=sys.stderr)
        # A broken profile file is bad input to the harness itself, like a broken binding: exit 2.
        return EXIT_USAGE if cat.broken_profiles else EXIT_FAILED
    print(f"{count} scenarios, no problems")
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace) -> int:
    """Prints (or writes) the coverage table; exits 1 when a section is neither covered nor noted."""
    from rich.console import Console
    from rich.table import Table

    from harness.scenario import coverage
    seeds = args.seeds or coverage.seeds_dir()
    if not seeds.is_dir():
        print(f"no seeds folder at {seeds} (use --seeds)", file=sys.stderr)
        return EXIT_USAGE
    cat = _catalog(args)
    sections = coverage.build(seeds, cat.scenarios, coverage.load_notes())
    if args.markdown:
        from harness.util.fileio import write_replacing
        write_replacing(args.markdown, coverage.markdown(sections, len(cat.scenarios)))
    else:
        table = Table(title=f"coverage of {seeds} by {len(cat.scenarios)} scenarios", title_justify="left")
        for column in ("seed", "section", "scenarios", "note"):
            table.add_column(column, justify="right" if column == "scenarios" else "left")
        for section in sections:
            indent = "  " * max(0, section.depth - 2)
            table.add_row(section.seed[:3], indent + section.label, str(len(section.scenarios)), section.note or "")
        Console().print(table)
    missing = coverage.uncovered(sections)
    for section in missing:
        print(f"not covered: {section.seed} {section.label}", file=sys.stderr)
    return EXIT_FAILED if missing else EXIT_OK


def cmd_profiles(args: argparse.Namespace) -> int:
    """Lists the profiles; prints one's reference page; or writes every page (harness/cli/profile_pages.py)."""
    from harness.cli import profile_pages
    cat = _catalog(args)
    for problem in cat.problems:
        print(f"invalid {file_kind(problem)}: {problem}", file=sys.stderr)
    found = {profile.name: profile for profile in sorted(cat.profiles, key=lambda p: (p.document, p.name))}
    if args.name is not None and args.name not in found:
        print(f"no profile {args.name!r} (known: {', '.join(found)})", file=sys.stderr)
        return EXIT_USAGE
    chosen = [found[args.name]] if args.name else list(found.values())
    if args.markdown:
        for path in profile_pages.write_all(args.markdown, chosen, cat.scenarios):
            print(path)
    elif args.name:
        sys.stdout.write(profile_pages.render(found[args.name], cat.scenarios))
    else:
        for profile in chosen:
            count = sum(1 for s in cat.scenarios if s.profile == profile.name)
            print(f"{profile.name:<24} {count:>4} scenarios  {', '.join(profile.tools)}  ({profile.document})")
    return EXIT_USAGE if cat.broken_profiles else EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """Prints a scenario's file and its last recorded observation."""
    from rich.markup import escape
    from rich.syntax import Syntax
    console = make_console(args.color, soft_wrap=False)
    cat = _catalog(args)
    scenario = cat.by_id(args.id)
    if scenario is None:
        console.print(f"[red]no scenario with id {args.id!r}[/red]")
        return EXIT_USAGE
    console.print(f"[bold]{scenario.id}[/bold]  {scenario.location}")
    console.print(Syntax(shown(scenario.file.read_text("utf-8")), "yaml", line_numbers=True, word_wrap=True) if scenario.file else scenario.raw)
    state = state_dir()
    last = (state or Path(".harness")) / (f"last-{spec_slug(args.target)}.json" if args.target else "last.json")
    try:
        if state is None:
            raise OSError("the state folder is a symbolic link: not read")
        from harness.util import limits
        from harness.util.fileio import read_regular
        document = json.loads(read_regular(last, limits.MAX_REPORT_FILE))
        if not isinstance(document, dict) or not isinstance(document.get("results"), list) or not all(
                isinstance(r, dict) and isinstance(r.get("id"), str) for r in document["results"]):
            raise ValueError("not a harness JSON report")
    except (OSError, ValueError, RecursionError):
        console.print(f"[yellow]no recorded run ({last}); run `harness run` first[/yellow]")
        return EXIT_OK
    found = next((r for r in document["results"] if r["id"] == scenario.id), None)
    target = document.get("target")
    spec = str(target.get("spec", "?")) if isinstance(target, dict) else "?"
    if found is None:
        console.print(f"[yellow]the last run ({escape(shown(spec))}) did not include it[/yellow]")
        return EXIT_OK
    reason = str(found.get("reason") or "")
    console.print(f"\n[bold]last observation[/bold] on {escape(shown(spec))}: {escape(shown(str(found.get('verdict'))))}"
                  + (f" — {escape(shown(reason))}" if reason else ""))
    from rich.json import JSON  # printed wrapped to the width (print_json would let long values run on)
    console.print(JSON(shown(json.dumps({"steps": found.get("steps"), "then": found.get("then")},
                                        ensure_ascii=False, default=str))), soft_wrap=False)
    return EXIT_OK


