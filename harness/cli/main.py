"""The ``harness`` command: its entry point and its parser.

Each command lives in its own module: ``run`` in harness/cli/run.py; ``list``, ``lint``,
``coverage``, ``profiles`` and ``show`` in harness/cli/catalog_commands.py; ``diff`` and ``report``
in harness/cli/compare.py; ``fuzz`` and ``discover`` with their drivers. Only what every command
needs is imported at the top: each command imports its own (rich, the runner, the targets), so
``harness list`` starts fast.

Exit codes: 0 when nothing failed, 1 when something did (or, for ``run``, when nothing ran), 2 for
bad usage or invalid scenario files (harness/cli/run.py says what fails a run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE  # noqa: F401 - the command's exit codes, named
from harness.cli.console import add_color
from harness.run.options import add_arguments
from harness.util import collector, processes


def add_selection(parser: argparse.ArgumentParser) -> None:
    """Adds the options that choose scenarios: --scenarios, --no-builtin, --profile, -k (harness/run/options.py)."""
    add_arguments(parser, ("selection",))


#: The commands whose parsers import their whole driver (the runner, its matchers, hypothesis'
#: strategies): built only when one of them, or no known command, is asked for.
HEAVY_PARSERS = ("fuzz", "discover")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Returns the argument parser of the ``harness`` command; given the ``command`` the arguments
    name, the parsers of :data:`HEAVY_PARSERS` other than it are left out (they import their drivers)."""
    import harness
    from harness.cli import compare as cli_compare
    parser = argparse.ArgumentParser(prog="harness", description="Conformance harness for AI coding agents' file tools.")
    parser.add_argument("--version", action="version", version=f"harness {harness.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run scenarios against a target and report")
    # Every option of run is declared once, with its flag and help, in harness/run/options.py.
    add_arguments(run, ("selection", "which", "target", "run", "report"))
    add_arguments(run.add_argument_group("snapshots and baselines"), ("snapshots",))
    run.set_defaults(handler=cmd_run)
    from harness.cli import catalog_commands as catalog_cli

    lst = sub.add_parser("list", help="list scenarios")
    add_selection(lst)
    lst.set_defaults(handler=catalog_cli.cmd_list)

    lint = sub.add_parser("lint", help="validate every scenario and profile file (exit 1 on a scenario problem, 2 on a profile problem)")
    lint.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    lint.add_argument("--no-builtin", action="store_true")
    lint.set_defaults(handler=catalog_cli.cmd_lint)

    cov = sub.add_parser("coverage", help="map each seed section to the scenarios citing it")
    cov.add_argument("--seeds", type=Path, default=None, help="the seeds folder (default ../shared/seeds)")
    cov.add_argument("--markdown", type=Path, metavar="FILE", help="write the table as Markdown to FILE")
    cov.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    cov.add_argument("--no-builtin", action="store_true")
    cov.set_defaults(handler=catalog_cli.cmd_coverage)

    prof = sub.add_parser("profiles", help="list the profiles, print one's reference page, or write them all")
    prof.add_argument("name", nargs="?", help="print this profile's reference page (Markdown)")
    prof.add_argument("--markdown", type=Path, metavar="DIR", help="write <DIR>/<profile>.md for each profile")
    prof.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    prof.add_argument("--no-builtin", action="store_true")
    prof.set_defaults(handler=catalog_cli.cmd_profiles)

    show = sub.add_parser("show", help="show a scenario and its last observation")
    show.add_argument("id")
    show.add_argument("--target", default=None, help="whose last observation (default: the last run)")
    show.add_argument("--scenarios", action="append", type=Path, default=[], metavar="DIR")
    show.add_argument("--no-builtin", action="store_true")
    add_color(show)
    show.set_defaults(handler=catalog_cli.cmd_show)

    cli_compare.add_parsers(sub, add_selection)  # diff, report
    from harness.cli import history
    history.add_parsers(sub)  # compare, site
    known = set(sub.choices)
    every = command is None or command not in known
    if every or command == "fuzz":
        from harness.drivers import fuzz
        fuzz.add_parser(sub)
    if every or command == "discover":
        from harness.drivers import discover
        discover.add_parser(sub)  # discover: an MCP server's tools, a binding skeleton
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """Returns the command the arguments name (their first word that is not an option), or None."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the selected scenarios and reports; returns the exit code."""
    from harness.cli import run
    from harness.run.options import RunOptions
    return run.run(RunOptions.from_namespace(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``harness`` command; returns its exit code."""
    parser = build_parser(_command(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 for --help
        return int(exc.code or 0)
    from harness.report import github
    github.stop_commands()  # under Actions: no candidate's line is read as a workflow command
    try:
        code = args.handler(args)
        processes.checkpoint()  # a signal that arrived during the last clean-up still ends the run as signalled
        return code
    except processes.Terminated as exc:  # SIGTERM / SIGHUP: cleaned up on the way out, as for Ctrl-C
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130
    finally:
        github.resume_commands()  # the step's own commands after the harness are read again


def entry(argv: Sequence[str] | None = None) -> int:
    """The ``harness`` program: :func:`main`, owning its process tree.

    SIGTERM and SIGHUP unwind like Ctrl-C (every target stopped, every workspace removed; exit
    143 / 129). The harness is a child subreaper, and whatever still runs below it when it ends
    (nothing, unless a keeper itself was killed) is killed (harness/util/processes.py).
    """
    processes.own_tree()
    # The interpreter's last collection walked the whole heap: some 40-60 ms of a run of the catalog.
    collector.freeze_at_exit()
    try:
        return main(argv)
    except BaseException as exc:  # before main's own handling began (still importing)
        signum = _terminated_by(exc)
        if signum is None:
            raise
        return 128 + signum
    finally:
        processes.sweep()


def _terminated_by(exc: BaseException | None) -> int | None:
    """Returns the signal number when ``exc`` is, or was raised because of, SIGTERM or SIGHUP.

    A signal that lands while a module is being imported may come out wrapped: an exception in a
    class body's ``__set_name__`` (a dataclass field) is re-raised as a RuntimeError caused by it.
    """
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, processes.Terminated):
            return exc.signum
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


if __name__ == "__main__":
    sys.exit(entry())
