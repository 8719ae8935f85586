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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE  # noqa: F401 - the command's exit codes, named
from harness.cli.console import add_color
from harness.run.options import add_arguments
from harness.util import collector, processes


def add_selection(parser: argparse.ArgumentParser) -> None:
    """Adds the options that choose scenarios: --scenarios, --no-builtin, --profile, -k (harness/run/options.py)."""
    add_arguments(parser, ("selection",))


def _add_run(sub: Any) -> None:
    run = sub.add_parser("run", help="run scenarios against a target and report")
    # Every option of run is declared once, with its flag and help, in harness/run/options.py.
    add_arguments(run, ("selection", "which", "target", "run", "report"))
    add_arguments(run.add_argument_group("snapshots and baselines"), ("snapshots",))
    run.set_defaults(handler=cmd_run)


def _add_catalog_commands(sub: Any) -> None:
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


def _add_compare(sub: Any) -> None:
    from harness.cli import compare as cli_compare
    cli_compare.add_parsers(sub, add_selection)  # diff, report


def _add_history(sub: Any) -> None:
    from harness.cli import history
    history.add_parsers(sub)  # compare, site


def _add_fuzz(sub: Any) -> None:
    from harness.drivers import fuzz
    fuzz.add_parser(sub)


def _add_discover(sub: Any) -> None:
    from harness.drivers import discover
    discover.add_parser(sub)  # discover: an MCP server's tools, a binding skeleton


#: The commands, in the order the help lists them, each group with the function that adds its
#: parsers (and imports its handlers' module: the catalog's commands, the runs' comparisons, the
#: drivers of fuzz and discover with the runner and hypothesis' strategies).
COMMANDS: tuple[tuple[tuple[str, ...], Callable[[Any], None]], ...] = (
    (("run",), _add_run),
    (("list", "lint", "coverage", "profiles", "show"), _add_catalog_commands),
    (("diff", "report"), _add_compare),
    (("compare", "site"), _add_history),
    (("fuzz",), _add_fuzz),
    (("discover",), _add_discover),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Returns the argument parser of the ``harness`` command; given the ``command`` the arguments
    name, only that command's parser is built (``harness run`` imports nothing of the others), else
    every command's (no command, an unknown one, or the help of ``harness`` itself)."""
    import harness
    parser = argparse.ArgumentParser(prog="harness", description="Conformance harness for AI coding agents' file tools.")
    parser.add_argument("--version", action="version", version=f"harness {harness.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    every = not any(command in names for names, _ in COMMANDS)
    for names, add in COMMANDS:
        if every or command in names:
            add(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """Returns the command the arguments name (their first word that is not an option), or None
    when there is none or ``harness``'s own help is asked before it (it lists every command)."""
    for arg in argv:
        if arg in ("-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg
    return None


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
    if args.handler is not cmd_run:
        collector.release()
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
    # Off until `harness run` freezes what its start made (about 10 ms of collections that found
    # next to nothing), or until another command begins.
    collector.hold()
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
