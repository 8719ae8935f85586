"""The one small interface every target implements.

A *target* is something that executes file-tool calls: the in-process reference, a command
speaking the cmd: JSON-lines protocol, an MCP server, the real Claude Code CLI. The runner only
ever sees this interface; everything specific to how a target is reached lives in its own module.
"""

from __future__ import annotations

import abc
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.targets.options import TargetOptions

#: True while the runner plays a step whose ``invalid_args: true`` says its arguments break the
#: tool's schema on purpose: a target checking a binding blames no such argument on the binding.
DELIBERATE_ARGS: contextvars.ContextVar[bool] = contextvars.ContextVar("deliberate_args", default=False)


class TargetError(Exception):
    """The target itself broke (crash, hang, protocol violation): an ``error`` verdict, not a tool error."""

    def __init__(self, message: str, *, detail: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.detail = detail  # e.g. the tail of the candidate's stderr
        self.kind = kind  # what broke, when a target can tell (e.g. "exited", "timeout")

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.detail}" if self.detail else base


class Unsupported(Exception):
    """The target cannot run this scenario (profile, tool or condition missing): a ``skip`` verdict."""


@dataclass
class TargetInfo:
    """What a target says about itself once started."""

    name: str
    version: str = ""
    profiles: tuple[str, ...] = ()


MAX_NAME = 200  # characters of a name or version a candidate gives itself that reports keep
MAX_SLUG_BYTES = 100  # bytes of a target's file name (snapshot folder, report file): far under NAME_MAX (255)


def bounded_name(text: str, limit: int = MAX_NAME) -> str:
    """Returns a name a candidate gave (hello ``name``/``version``, serverInfo, agentInfo) cut to ``limit``
    characters, saying how much was cut and the SHA-256 of the whole, so that it stays recognisable.

    Reports repeat the name (JUnit in every testcase's ``classname``): a candidate's name of megabytes
    must not make reports of gigabytes.
    """
    text = str(text)
    if len(text) <= limit:
        return text
    import hashlib
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{text[:limit]}... ({len(text) - limit} more characters, sha256 {digest})"


def name_slug(*parts: str, limit: int = MAX_SLUG_BYTES) -> str:
    """Returns ``parts`` joined by ``-`` as a file name: letters, digits, ``-_.`` kept, anything else ``-``.

    A name longer than ``limit`` bytes (UTF-8; a letter of another script takes two or more) is cut and
    ends with ``-`` and 8 hex digits of the SHA-256 of the whole, so it fits any file system's name
    limit and two long names that differ only after the cut stay two names.
    """
    import hashlib
    whole = "-".join("".join(c if c.isalnum() or c in "-_." else "-" for c in part) for part in parts)
    encoded = whole.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return whole
    digest = hashlib.sha256(encoded).hexdigest()[:8]
    head = encoded[:limit - 9].decode("utf-8", "ignore")  # a letter cut in two is dropped
    return f"{head}-{digest}"


@dataclass
class CallResult:
    """One call's observation in normal form: exactly one of ``output`` / ``error`` is meaningful."""

    output: Any = None
    error: dict[str, Any] | None = None
    events: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # target-specific records (e.g. structured results)

    @property
    def failed(self) -> bool:
        """Returns True when the tool reported an error."""
        return self.error is not None

    @classmethod
    def from_normal_form(cls, data: dict[str, Any]) -> CallResult:
        """Builds a result from ``{"output": ...}`` / ``{"error": {...}}`` (+ ``events``)."""
        if "error" in data and data["error"] is not None:
            return cls(error=data["error"], events=data.get("events"))
        return cls(output=data.get("output"), events=data.get("events"))


class Session(abc.ABC):
    """One scenario's conversation with a target; all per-session tool state lives here."""

    #: True when the harness refuses this session's target any hard link to a file outside the folder
    #: around its workspace (the in-process reference, harness/containment/audit_hook.py): the workspace then needs
    #: no walk for link counts after the scenario.
    links_confined: bool = False
    #: True when the target changes the workspace only while :meth:`call` runs (the in-process
    #: reference: its code runs only inside ``open`` and ``call``, and its confinement refuses it
    #: threads and processes, harness/containment/audit_hook.py): a reading of the workspace then
    #: holds until the next call or action (harness/run/workspace.py, ``Workspace.hold_readings``).
    acts_only_in_calls: bool = False

    @abc.abstractmethod
    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Runs one tool call; raises TargetError when the target broke."""

    def before_action(self) -> None:  # noqa: B027 - a hook: most sessions need nothing here
        """Called before the harness changes the workspace between calls (live targets may need to pause)."""

    def close(self) -> None:  # noqa: B027 - a hook: a session may hold nothing to release
        """Ends the session; the target releases its per-session state."""

    def refused(self) -> list[str]:
        """Returns what the harness refused this session's target outside its workspace (an in-process
        target the harness confines); shown as escapes."""
        return []


class Target(abc.ABC):
    """A thing that executes tool calls; started once per run, opens one session per scenario."""

    #: Conditions (see the scenario schema's ``requires``) this target can realise.
    realises: frozenset[str] = frozenset()

    #: True when the target runs in this process (faults can then be realised on pyfakefs).
    in_process: bool = False

    #: Why this target cannot send an argument holding a lone surrogate (a ``$code_points`` argument;
    #: valid in a JSON string as ``"\\ud800"``, not Unicode), or None when it sends one as it is.
    #: A scenario sending one is skipped with this reason on a target that cannot.
    lone_surrogates_refused: str | None = "its transport cannot carry a lone surrogate"

    #: The isolation settings (harness/targets/options.py ``ISOLATION``) this kind applies to its
    #: candidate; a run asking for another is refused before anything starts.
    honours: frozenset[str] = frozenset()

    #: Masks for volatile values only this target puts into what it returns (a scratch folder's random
    #: name): (regex, placeholder) pairs the snapshots apply before their built-in ones
    #: (harness/record/snapshot/normalise.py). The report stream hands them to the snapshot checker.
    snapshot_masks: tuple[tuple[str, str], ...] = ()

    #: ``harness run --repeat N``: how often the runner plays each scenario, and what of a result it
    #: compares between the plays (``repeat_key(result)``, None: the verdicts only) to mark it flaky.
    repeat: int = 1
    repeat_key: Any = None

    def __init__(self, spec: str) -> None:
        self.spec = spec

    @classmethod
    def from_options(cls, spec: str, options: TargetOptions) -> Target:
        """Returns the target ``spec`` built with the run-wide ``options`` it honours (see ``honours``)."""
        return cls(spec)

    @abc.abstractmethod
    def start(self) -> TargetInfo:
        """Starts the target (process, server, ...) and returns what it says about itself."""

    @abc.abstractmethod
    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens a session of ``profile`` rooted at ``workspace``; raises Unsupported or TargetError."""

    def skip_reason(self, scenario: Any) -> str | None:
        """Returns why this target cannot run ``scenario`` (profile, tools, conditions), or None."""
        return None

    def stop(self) -> None:  # noqa: B027 - a hook: a target may hold nothing to release
        """Stops the target and releases everything it holds."""

    def before_workers(self, scenarios: Sequence[Any], *, forking: bool = True) -> None:  # noqa: B027 - a hook, optional
        """Called before ``scenarios`` run: once in the parent before ``--jobs`` worker processes are
        forked (``scenarios``: those the workers may run), and again (then mostly a no-op,
        ``forking`` False) where they run. What every worker would otherwise do on its own and can
        share (an in-process target imports its modules). Nothing is started here: each worker
        starts its own target."""

    def use_tmp(self, folder: str) -> bool:
        """Gives the candidate ``folder`` as its temporary folder (``TMPDIR``, ``TMP``, ``TEMP``) for
        the run, before ``start``; returns False when the target has no process of its own to give it."""
        return False

    def use_workspace(self, folder: str) -> bool:
        """Gives a candidate that keeps one workspace folder for the run (``fixed_workspace``) that
        folder, before ``start``; returns False when its start has no use for it."""
        return False

    def use_cwd(self, folder: str) -> bool:
        """Starts the candidate in ``folder`` (the run's working folder, harness/run/working_folder.py),
        before ``start``, unless a working folder was chosen for it; returns False when the target
        has no process of its own, or keeps the one it was given."""
        return False

    @property
    def fixed_workspace(self) -> bool:
        """One workspace folder for the whole run (emptied between scenarios, harness/containment/enclosure.py)."""
        return False

    @property
    def candidate_uid(self) -> int | None:
        """The user the candidate runs as when it is not the harness's own (``--run-as``), else None.

        Escape watching (harness/containment/outside.py) then attributes every entry that user made to the candidate.
        """
        return None

    @property
    def candidate_home(self) -> str | None:
        """The candidate's own home folder when it differs from the harness's (watched for escapes), else None."""
        return None

    @property
    def slug(self) -> str:
        """Returns a file-name-safe name for this target (used for snapshot folders)."""
        return spec_slug(self.spec)


class ProcessTarget(Target):
    """A target whose candidate is a process the harness starts from a command line (``cmd:``,
    ``mcp:``, ``acp:``): the process gets the run's temporary folder and working folder, and in the
    sandbox it has one workspace folder for the run, since its sandbox is made once."""

    #: The command line that starts the process.
    argv: list[str]
    #: The process's environment (the run's temporary folder goes into it).
    env: dict[str, str]
    #: The process's working folder: one chosen for it, else the run's (`use_cwd`), else the harness's.
    cwd: str | None = None
    #: True when the process runs in the sandbox (harness/targets/launch.py).
    sandbox: bool = False
    #: The run's temporary folder given to the process (`use_tmp`), writable in its sandbox.
    _tmp: str | None = None
    #: Whether the process started to learn what the candidate offers can be started in the sandbox
    #: on the run's one workspace folder and serve the scenarios (no second start): `use_workspace`.
    starts_on_workspace = False
    #: That folder, given before the start (`use_workspace`).
    _fixed: Path | None = None

    def use_tmp(self, folder: str) -> bool:
        """Points the process's temporary folder at ``folder`` (the harness removes it after the run)."""
        self.env.update(TMPDIR=folder, TMP=folder, TEMP=folder)
        self._tmp = folder
        return True

    def use_cwd(self, folder: str) -> bool:
        """Starts the process in ``folder`` (the run's working folder), its relative words made
        absolute first; a working folder chosen for it is kept."""
        if self.cwd is not None:
            return False
        self.argv = anchored(self.argv)
        self.cwd = folder
        return True

    def use_workspace(self, folder: str) -> bool:
        """Takes the run's one workspace folder of a sandboxed process that ``starts_on_workspace``:
        the process started to learn what the candidate offers is then started in the sandbox that
        binds it, and serves the scenarios."""
        if not (self.sandbox and self.starts_on_workspace):
            return False
        self._fixed = Path(folder).absolute()
        return True

    @property
    def fixed_workspace(self) -> bool:
        """One workspace folder for the run (emptied between scenarios) when sandboxed: one sandbox per run."""
        return self.sandbox


def spec_slug(spec: str, name: str | None = None) -> str:
    """Returns a file-name-safe folder name for a target spec.

    A spec that is already a short safe name stays as it is (``reference``). Anything else (``cmd:``
    and ``mcp:`` command lines) becomes its kind, a sanitised short name (``name``, else the command's
    last word) and 8 hex digits of the SHA-256 of the whole spec, so two command lines that differ
    only in an argument get different folders: ``cmd-adapter.py-1a2b3c4d``.
    """
    import hashlib
    import re
    import shlex
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", spec):
        return spec
    kind, _, rest = spec.partition(":")
    if name is None:
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        plain = [word for word in words if not word.startswith("-")] or words
        name = Path(plain[-1]).name if plain else ""
    short = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40]
    kind = re.sub(r"[^A-Za-z0-9_-]+", "-", kind).strip("-")[:20] or "target"
    digest = hashlib.sha256(spec.encode("utf-8")).hexdigest()[:8]
    return "-".join(part for part in (kind, short, digest) if part)


def anchored(argv: list[str]) -> list[str]:
    """Returns ``argv`` with each word that names an existing file (``adapter.py``) or a file or
    folder by a relative path with a slash (``tools/x/serve.sh``, ``./dist``) made absolute, so the
    command still starts when its working folder is another one. Other words are left as they are
    (``python -m module`` finds an installed module, or one on ``PYTHONPATH``)."""
    import os
    out = []
    for word in argv:
        if word and not os.path.isabs(word) and not word.startswith("-") and (
                os.path.isfile(word) or ("/" in word and os.path.exists(word))):
            out.append(os.path.abspath(word))
        else:
            out.append(word)
    return out
