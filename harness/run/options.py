"""The options of one ``harness run``, as one typed, immutable object.

The CLI parses its arguments once (:meth:`RunOptions.from_namespace`) and hands this object down:
to the runner and its workers, to the targets (:meth:`RunOptions.target_options`), to the
after-run steps (harness/cli/postrun.py) and to the reports. Nothing below the CLI sees argparse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class RunOptions:
    """Everything a ``harness run`` was asked to do (see ``harness run --help`` for each option)."""

    # what runs, and against what
    targets: tuple[str, ...] = (DEFAULT_TARGET,)
    scenarios: tuple[Path, ...] = ()  # --scenarios DIR: folders beside the built-in catalog
    builtin: bool = True  # False with --no-builtin
    profiles: tuple[str, ...] = ()
    keyword: str | None = None  # -k EXPR
    aspects: tuple[str, ...] = ("effects", "outcome", "output")  # --aspects: the ones judged (harness/scenario/aspects.py)
    # how targets are reached
    timeout: float = DEFAULT_TIMEOUT
    run_as: str | None = None
    sandbox: bool = False
    binding: Path | None = None  # --binding FILE (harness/targets/bindings.py)
    tool_map: tuple[str, ...] = ()
    tool_map_file: Path | None = None
    # how the run is carried out
    jobs: int = 1  # worker processes (the CLI's default: the cores this process may use)
    tmp: Path | None = None  # the folder that holds the workspaces (--tmp; default: see workspace_parent)
    shard: tuple[int, int] | None = None  # --shard K/N: this run's part (K of N, from 1)
    # what is written and shown afterwards
    json: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    quiet: bool = False
    color: str = "auto"  # --color auto|always|never (NO_COLOR is honoured under auto)
    # habits from pytest
    exitfirst: bool = False  # -x: stop at the first fail or error
    last_failed: bool = False  # --lf: only what failed last time on the same target
    repeat: int = 1  # --repeat N: run each scenario N times; a verdict or observation that varies is flaky
    snapshot_update: bool = False
    no_snapshots: bool = False
    snapshots: Path | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None

    @classmethod
    def from_namespace(cls, args: Any) -> "RunOptions":
        """Builds the options from parsed arguments (argparse's names; absent ones keep their default)."""
        names = {"profile": "profiles", "target": "targets", "no_builtin": "builtin"}
        values: dict[str, Any] = {}
        for name, value in vars(args).items():
            key = names.get(name, name)
            if key not in _FIELDS or value is None:
                continue
            if key == "builtin":
                value = not value
            elif key == "targets":
                value = (value,) if isinstance(value, str) else tuple(value)
            elif isinstance(value, list):
                value = tuple(value)
            values[key] = value
        if not values.get("targets"):
            values.pop("targets", None)
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

    def target_options(self) -> dict[str, Any]:
        """Returns the run-wide settings handed to ``make_target`` (each target takes those it needs)."""
        return {"timeout": self.timeout, "run_as": self.run_as, "sandbox": self.sandbox,
                "binding": self.binding, "tool_map": list(self.tool_map), "tool_map_file": self.tool_map_file,
                "workspace_parent": self.workspace_parent()}

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
        if self.jobs < 1:
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


_FIELDS = frozenset(f.name for f in fields(RunOptions))
