"""The options of a run, as one typed, immutable object, declared once.

Each field of :class:`RunOptions` carries its command-line flag, help and default (:func:`option`):
``harness run`` (and ``diff``/``report``, for how targets run now are reached) add their options
with :func:`add_arguments`, the pytest plugin with :func:`add_pytest_options`, and both parse them
back with :meth:`RunOptions.from_namespace` / :meth:`RunOptions.from_pytest`. The drivers build a
``RunOptions`` themselves. The object goes to harness/run/assemble.py (targets, through
:meth:`RunOptions.target_options`, and runners), to the workers, to the reports and to the exit
code (harness/cli/run.py). Nothing below the CLI sees argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.targets.options import TargetOptions

DEFAULT_TARGET = "reference"
DEFAULT_TIMEOUT = 10.0


def default_jobs() -> int:
    """Returns how many worker processes a run uses by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def shard_of(key: str, count: int) -> int:
    """Returns the shard (1..count) that ``key`` falls in.

    A stable hash (SHA-256 of the key), the same on every machine and in every run, so N jobs given
    ``--shard 1/N`` .. ``N/N`` cover everything exactly once.
    """
    import hashlib
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % count + 1


MAX_TIMEOUT = 86400.0  # a day: beyond it a timeout is no bound (and 1e308 s overflows a poll's milliseconds)


def parse_timeout(text: str) -> float:
    """Returns ``--timeout``'s seconds: a finite number above 0 and at most a day; ValueError otherwise
    (NaN, infinity and 1e308 ended in a traceback when a call was timed, 0 meant the default unsaid)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT:  # NaN fails every comparison
        from harness.util.printable import shown
        raise ValueError(f"a number of seconds above 0 and at most {MAX_TIMEOUT:g} is needed, not {shown(text)!r}")
    return value


def timeout_argument(text: str) -> float:
    """The type of every ``--timeout`` option (argparse): :func:`parse_timeout`, a usage error (exit 2) otherwise."""
    import argparse
    try:
        return parse_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_shard(text: str) -> tuple[int, int]:
    """Parses ``K/N`` (1 <= K <= N) for ``--shard``; raises ValueError naming the problem."""
    k, sep, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        raise ValueError(f"expected K/N, e.g. 2/4, not {text!r}") from None
    if not sep or count < 1 or not 1 <= index <= count:
        raise ValueError(f"K/N needs 1 <= K <= N, not {text!r}")
    return index, count


def _keyword(text: str) -> str:
    """The ``-k`` option's type: an expression pytest's grammar takes, else bad usage (exit 2) saying why."""
    import argparse

    from harness.scenario.catalog import compile_keyword
    from harness.util.printable import shown
    try:
        compile_keyword(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(shown(str(exc))) from None
    return text


def repeat_count(text: str) -> int:
    """The ``--repeat`` option's type: a count from 1 to 100."""
    import argparse

    from harness.util.printable import shown
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {shown(text)!r}") from None
    if not 1 <= count <= 100:
        raise argparse.ArgumentTypeError("give a count from 1 to 100")
    return count


def _shard(text: str) -> tuple[int, int]:
    import argparse
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _aspects(text: str) -> tuple[str, ...]:
    import argparse

    from harness.scenario.aspects import parse_selection
    try:
        return parse_selection(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def option(initial: Any, *flags: str, help: str, group: str, pytest: dict[str, Any] | None = None,
           **argparse_kwargs: Any) -> Any:
    """Declares a run option: its value when not given (``initial``), its command-line ``flags``, ``help`` and ``group``
    (``selection``, ``target``, ``run``, ``report``, ``snapshots``), the argparse settings, and
    ``pytest``: how the pytest plugin offers it (its own flags and settings; None: not offered there,
    pytest having its own, e.g. ``-x``, ``--lf``, ``-k``, ``--junit-xml``)."""
    meta = {"flags": flags, "help": help, "group": group, "argparse": argparse_kwargs, "pytest": pytest}
    return field(default=initial, metadata=meta)


@dataclass(frozen=True)
class RunOptions:
    """Everything a run was asked to do: declared once, here.

    Each field carries its command-line flag, help and default (:func:`option`); ``harness run``
    (:func:`add_arguments`), the pytest plugin (:func:`add_pytest_options`) and the drivers build
    their options from these declarations, and ``harness/run/assemble.py`` builds targets and
    runners from the object.
    """

    # what runs, and against what
    scenarios: tuple[Path, ...] = option(
        (), "--scenarios", action="append", type=Path, default=[], metavar="DIR", group="selection",
        help="also load scenario files from DIR (repeatable)")
    builtin: bool = option(
        True, "--no-builtin", action="store_true", dest="no_builtin", group="selection",
        help="do not load the built-in catalog")
    profiles: tuple[str, ...] = option(
        (), "--profile", action="append", default=[], dest="profile", group="selection",
        help="only this profile (repeatable)")
    keyword: str | None = option(
        None, "-k", dest="keyword", metavar="EXPR", type=_keyword, group="selection",
        help="only scenarios whose id, title or tags match (pytest -k syntax)")
    targets: tuple[str, ...] = option(
        (DEFAULT_TARGET,), "--target", action="append", default=None, dest="target", group="which",
        help="the target: {targets} (default: reference); repeatable: each target runs the same scenarios",
        pytest={"flags": ("--target",), "action": "store", "default": DEFAULT_TARGET,
                "help": "target for scenario items: {targets}"})
    # how targets are reached
    timeout: float = option(
        DEFAULT_TIMEOUT, "--timeout", type=timeout_argument, default=DEFAULT_TIMEOUT, group="target",
        help="per-call timeout in seconds, above 0 and at most 86400 (default 10)",
        pytest={"flags": ("--harness-timeout",), "dest": "harness_timeout"})
    run_as: str | None = option(
        None, "--run-as", metavar="USER", group="target", pytest={},
        help="run the candidate as USER (realises permission scenarios; refused by kinds that cannot)")
    sandbox: bool | None = option(
        None, "--sandbox", action=argparse.BooleanOptionalAction, default=None, group="target", pytest={},
        help="run every candidate the harness starts in a sandbox: its workspace and temporary folder "
             "writable, the rest read-only, no network but loopback, no capabilities, a clean environment "
             "(the default wherever one can be made; --sandbox refuses to run without it, --no-sandbox "
             "opts out; docs/security.md)")
    binding: Path | None = option(
        None, "--binding", type=Path, metavar="FILE", group="target", pytest={},
        help="cmd:/mcp: the profile's tools mapped onto the target's (YAML, docs/bindings.md)")
    tool_map: tuple[str, ...] = option(
        (), "--tool-map", action="append", default=[], metavar="TOOL=NAME", group="target", pytest={},
        help="cmd:/mcp: call the profile's TOOL as the target's NAME; TOOL.ARG=NAME renames an argument (repeatable)")
    tool_map_file: Path | None = option(
        None, "--tool-map-file", type=Path, metavar="FILE", group="target", pytest={},
        help="cmd:/mcp: tool and argument renames from a YAML file")
    aspects: tuple[str, ...] = option(
        ("effects", "outcome", "content", "output"), "--aspects", type=_aspects, metavar="A,B", group="report", pytest={},
        help="judge only these aspects (effects, outcome, content, output); the others are recorded "
             "and never fail the run (docs/scenario-format.md, Aspects)")
    # how the run is carried out
    jobs: int | None = option(  # None: chosen once the run's work is known (harness/run/division.py, auto_jobs)
        None, "--jobs", "-j", type=int, metavar="N", group="run",
        help="processes running scenarios (default: chosen by the size of the run and the machine's load, "
             "at most the number of cores, here {cores}; 1: all in this process; on the reference, this "
             "process is one of them)")
    tmp: Path | None = option(
        None, "--tmp", type=Path, metavar="DIR", group="run", pytest={"flags": ("--harness-tmp",), "dest": "harness_tmp"},
        help="the folder that holds the workspaces (default: /dev/shm where present, else $TMPDIR)")
    shard: tuple[int, int] | None = option(
        None, "--shard", type=_shard, metavar="K/N", group="run",
        help="run only part K of N (by a stable hash of each scenario id; with several targets, of each "
             "target spec): N CI jobs cover the run once; harness report merges them")
    # what is written and shown afterwards
    json: Path | None = option(
        None, "--json", type=Path, metavar="FILE", group="report",
        help="write the JSON report to FILE; with several targets FILE holds them all, or an existing folder "
             "gets one <target>.json each (<target>-2.json for a second target of that name)")
    junit: Path | None = option(
        None, "--junit", type=Path, metavar="FILE", group="report",
        help="write a JUnit XML report to FILE (an existing folder: one <target>.xml per target, "
             "<target>-2.xml for a second target of that name)")
    quiet: bool = option(False, "-q", "--quiet", action="store_true", group="report",
                         help="no progress, no failure details")
    color: str = option(
        "auto", "--color", choices=("auto", "always", "never"), default="auto", group="report",
        help="colour the output: auto (on a terminal, unless NO_COLOR is set), always, never")
    # habits from pytest
    exitfirst: bool = option(False, "-x", "--exitfirst", action="store_true", group="run",
                             help="stop at the first fail or error")
    last_failed: bool = option(
        False, "--lf", "--last-failed", dest="last_failed", action="store_true", group="run",
        help="only the scenarios that failed or errored last time on this target (all when none did)")
    repeat: int = option(1, "--repeat", type=repeat_count, metavar="N", group="run",
                         help="run each scenario N times (1-100); a verdict or observation that varies is marked flaky")
    snapshot_update: bool = option(False, "--snapshot-update", action="store_true", group="snapshots",
                                   help="write the snapshots of this run instead of comparing with them")
    no_snapshots: bool = option(False, "--no-snapshots", action="store_true", group="snapshots",
                                help="do not compare with stored snapshots")
    snapshots: Path | None = option(
        None, "--snapshots", type=Path, metavar="DIR", group="snapshots",
        help="snapshot root (default: $HARNESS_SNAPSHOTS or ./snapshots); files are DIR/<target>/<id>.yaml")
    baseline: Path | None = option(
        None, "--baseline", type=Path, metavar="FILE", group="snapshots", pytest={"flags": ("--baseline",),
                                                                                 "dest": "harness_baseline"},
        help="known failures (YAML: id: reason, or a scenario's aspects or checks); listed failures pass, "
             "listed passes fail as stale")
    write_baseline: Path | None = option(None, "--write-baseline", type=Path, metavar="FILE", group="snapshots",
                                         help="write the failures of this run as a baseline (the narrowest "
                                              "entries: one check each)")
    markdown: Path | None = option(None, "--markdown", type=Path, metavar="FILE", group="snapshots",
                                   help="write the Markdown report to FILE")
    html: Path | None = option(None, "--html", type=Path, metavar="FILE", group="snapshots",
                               help="write the self-contained HTML report to FILE")

    @classmethod
    def from_namespace(cls, args: Any) -> RunOptions:
        """Builds the options from parsed arguments (absent ones keep their default)."""
        values: dict[str, Any] = {}
        for item in fields(cls):
            dest = _dest(item)
            if not hasattr(args, dest) or getattr(args, dest) is None:
                continue
            values[item.name] = _value(item, getattr(args, dest))
        if not values.get("targets"):
            values.pop("targets", None)
        return cls(**values)

    @classmethod
    def from_pytest(cls, config: Any) -> RunOptions:
        """Builds the options from a pytest config (the options :func:`add_pytest_options` added)."""
        values: dict[str, Any] = {}
        for item in fields(cls):
            offered = item.metadata.get("pytest")
            if offered is None:
                continue
            value = config.getoption(offered.get("dest") or _dest(item), None)
            if value is None or value == [] or value == ():
                continue
            values[item.name] = _value(item, value)
        values["jobs"] = 1  # pytest runs its items in this process (pytest-xdist forks its own workers)
        return cls(**values)

    @property
    def target(self) -> str:
        """Returns the first (for a one-target run, the only) target spec."""
        return self.targets[0]

    @property
    def narrowed(self) -> bool:
        """Returns True when the run covers less than the whole known catalog (a selection, a shard, no built-in)."""
        return bool(self.profiles or self.keyword or not self.builtin or self.shard)

    def in_shard(self, key: str) -> bool:
        """Returns True when ``key`` (a scenario id, or a target spec) belongs to this run's shard."""
        return self.shard is None or shard_of(key, self.shard[1]) == self.shard[0]

    def sandbox_decision(self) -> tuple[bool, str | None]:
        """Returns whether the run's candidates are sandboxed and the one line the run says about it
        (harness/targets/launch.py ``decide``); ValueError when ``--sandbox`` was named and no sandbox
        can be made here."""
        from harness.targets.launch import decide
        return decide(self.sandbox)

    def target_options(self, *, confines: bool = True) -> TargetOptions:
        """Returns the run-wide settings every target is built with (each kind takes those it honours);
        ValueError when ``--sandbox`` was named and no sandbox can be made here.

        ``confines`` False: for a kind that starts no candidate it could confine (the reference, in
        this process), whether a sandbox can be made here is not tried (a ``bwrap`` started and
        waited for) unless ``--sandbox`` was named."""
        sandboxed = self.sandbox_decision()[0] if confines or self.sandbox else False
        if sandboxed and self.run_as:  # bwrap where that user can run it, made here, before any worker forks
            from harness.containment import sandbox
            with contextlib.suppress(sandbox.SandboxError):  # said by each candidate's start
                sandbox.bwrap_for_others()
        return TargetOptions(timeout=self.timeout, run_as=self.run_as, sandbox=sandboxed,
                             sandbox_asked=bool(self.sandbox), binding=self.binding,
                             tool_map=tuple(self.tool_map), tool_map_file=self.tool_map_file,
                             workspace_parent=self.workspace_parent())

    @property
    def records_states(self) -> bool:
        """Returns True when something reads the workspace state after each step.

        The JSON, Markdown and HTML reports and the snapshots show it; without any of them the
        runner leaves it out (the terminal report never shows it).
        """
        return bool(self.json or self.markdown or self.html or self.snapshot_update or not self.no_snapshots)

    def workspace_parent(self) -> str | None:
        """Returns the folder for the workspaces: ``--tmp``, else a memory file system where present.

        ``/dev/shm`` when it is a folder everyone may write to (workspaces there cost no disk
        I/O), else None: the system's temporary folder ($TMPDIR).
        """
        if self.tmp is not None:
            return str(self.tmp)
        if "TMPDIR" in os.environ:  # the user chose where temporary files go
            return None
        shm = Path("/dev/shm")
        try:
            info = shm.stat()
        except OSError:
            return None
        if shm.is_dir() and info.st_mode & 0o1777 == 0o1777 and os.access(shm, os.W_OK | os.X_OK):
            return str(shm)
        return None

    def usage_error(self) -> str | None:
        """Returns what is wrong with the combination of options, or None."""
        if self.jobs is not None and self.jobs < 1:
            return f"--jobs {self.jobs}: at least 1"
        if self.tmp is not None and not self.tmp.is_dir():
            return f"--tmp {self.tmp}: no such folder"
        if len(self.targets) > 1 and self.write_baseline:
            return "--write-baseline takes one --target"
        if self.snapshot_update and self.no_snapshots:
            return "--snapshot-update and --no-snapshots contradict each other"
        if self.baseline and not self.baseline.is_file():
            return f"--baseline {self.baseline}: no such file"
        return None


def _dest(item: Any) -> str:
    """Returns the argparse destination of a field (its name unless its declaration says otherwise)."""
    return item.metadata.get("argparse", {}).get("dest") or item.name


def _value(item: Any, value: Any) -> Any:
    """Returns a parsed value as the field holds it (a tuple for a list; ``builtin`` from --no-builtin)."""
    if item.name == "builtin":
        return not value
    if item.name == "targets" and isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(value)
    return value


def _formatted(text: str) -> str:
    from harness.targets import TARGET_HELP
    return text.replace("{targets}", TARGET_HELP).replace("{cores}", str(default_jobs()))


def add_arguments(parser: Any, groups: tuple[str, ...]) -> None:
    """Adds the options of these ``groups`` to an argparse parser, from their one declaration."""
    for item in fields(RunOptions):
        meta = item.metadata
        if meta.get("group") not in groups:
            continue
        kwargs = dict(meta["argparse"])
        kwargs.setdefault("dest", item.name)
        parser.add_argument(*meta["flags"], help=_formatted(meta["help"]), **kwargs)


def add_pytest_options(group: Any) -> None:
    """Adds the run options the pytest plugin offers to a pytest option group, from their one declaration."""
    for item in fields(RunOptions):
        meta = item.metadata
        offered = meta.get("pytest")
        if offered is None:
            continue
        kwargs = {key: value for key, value in meta["argparse"].items() if key not in ("dest",)}
        kwargs.update({key: value for key, value in offered.items() if key not in ("flags", "help")})
        kwargs.setdefault("dest", _dest(item))
        flags = offered.get("flags") or tuple(flag for flag in meta["flags"] if flag.startswith("--"))[:1]
        group.addoption(*flags, help=_formatted(offered.get("help") or meta["help"]), **kwargs)
