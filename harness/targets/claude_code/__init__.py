"""The ``claude-code`` target: the real, pinned Claude Code CLI, driven offline by a fake model.

Spec: ``claude-code`` or ``claude-code:opt=val,opt=val`` with

- ``cli=<path>``: the executable (default ``tools/claude-code/node_modules/.bin/claude``);
- ``mode=<permission mode>``: ``acceptEdits`` (default), ``default``, ``plan``, ``bypassPermissions``;
- ``cwd=workspace|outside``: the CLI's working directory is the workspace (default) or another
  folder, which puts every workspace file outside the directories the CLI trusts: the run's
  working folder (harness/run/working_folder.py: laid out as the workspace and watched, so a
  relative path resolved there is seen as an escape), or a scratch folder outside a run;
- ``tokens=<policy>``: how the fake API answers ``count_tokens`` (``chars4`` default, ``bytes``,
  ``const:N``; see `fake_api.TokenPolicy`) — Read's size limit depends on it;
- ``allowed=<rule>;<rule>``: permission rules passed as ``--allowedTools`` (e.g. ``allowed=Write``,
  ``allowed=Read(//tmp/**);Edit``), which the permission mode then does not ask about;
- ``timeout=<seconds>``: the bound on one call (default 60; the first call also gets the CLI's
  start-up time, `session.STARTUP_ALLOWANCE`);
- ``reminder=off|on``: ``off`` (default) sets ``CLAUDE_CODE_SILENT_TURN_REMINDER=0``, which silences
  the system message real sessions get after every fifth tool result; ``on`` leaves it as users have it.

A scenario may set the same things for its own session (its ``options``, claude-code-captured
only): ``permission_mode``, ``cwd`` (``workspace`` | ``outside``), ``allowed_tools`` (a list of
rules), ``count_tokens`` (a token policy, e.g. ``unavailable``) and ``turn_reminder`` (true: the
turn reminder as users get it); they win over the target's. ``cache_markers: true`` adds to each
call's ``events``, before the messages that followed its result, where the request carrying the
result put its ``cache_control`` markers (`fake_api.cache_markers`: ``{message, role, block,
cache_control}``, ``message`` counted from the one carrying the result).

A scenario captured from this CLI says under which mode and working directory
(``source: "captured: claude-code 2.1.330 (acceptEdits, cwd=workspace)"``); a target running under
others skips it with that reason.

Run-wide settings from the command line: ``timeout`` raises the bound on one call; ``run_as`` runs
each CLI process as that user (its scratch HOME, working directory and workspace given to it), so
file modes bite and ``requires: [permissions]`` scenarios run; ``sandbox`` is ignored (the CLI
talks to loopback only).

Each scenario gets its own CLI process, HOME and fake API server (`session.py`); the CLI's
session state (which files were read, and when) is the scenario's.

Snapshot masks (``ClaudeCodeTarget.snapshot_masks``, :data:`SNAPSHOT_MASKS`):
the CLI's scratch HOME ``<dir>/harness-claude-home-<8 random>`` becomes ``${cli-home}`` (it shows
in ``~`` paths and permission requests) and its working directory with ``cwd=outside``,
``<dir>/harness-claude-cwd-<8 random>`` or the run's ``<dir>/harness-cwd-<8 random>``, becomes ``${cli-cwd}`` (it shows in "current working
directory" notes), and its temporary file ``<name>.tmp.<pid>.<12 hex>`` (named when writing it
fails) becomes ``<name>.tmp.${pid}.${random}``; its project folder under ``~/.claude/projects/``
(the working directory's path, ``-tmp-harness-<8>-ws-<n>``) becomes ``${cli-project}``. Nothing else the CLI says varies between runs: its ``tool_use`` ids are the fake
API's own and never recorded, and it prints no times or random names into tool results.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from harness.targets.base import Target, TargetError, TargetInfo, Unsupported
from harness.targets.claude_code import cli as cli_mod
from harness.targets.claude_code.fake_api import TokenPolicy
from harness.targets.claude_code.session import CALL_TIMEOUT, ClaudeCodeSession
from harness.targets.options import TargetOptions

#: The prefix of the run's working folder (harness/run/working_folder.py), masked like the CLI's own.
WORKING_PREFIX = "harness-cwd-"

PROFILE = "claude-code"
#: Seed 001's profile, and the CLI's own behaviour as captured from it.
PROFILES = (PROFILE, "claude-code-captured")

_SCRATCH = r"""(?:/[^/\s'"`<>|\\]+)*?/{prefix}[a-z0-9_]{{8}}(?![a-z0-9_])"""
#: What snapshots of this target mask (see the module's docstring).
SNAPSHOT_MASKS: tuple[tuple[str, str], ...] = (
    (_SCRATCH.format(prefix=cli_mod.HOME_PREFIX), "${cli-home}"),
    (_SCRATCH.format(prefix=cli_mod.CWD_PREFIX), "${cli-cwd}"),
    # With cwd=outside inside a run, the run's working folder (harness/run/working_folder.py).
    (_SCRATCH.format(prefix=WORKING_PREFIX), "${cli-cwd}"),
    # The CLI writes through `<name>.tmp.<pid>.<12 hex>` and names it when that fails (e.g. EACCES).
    (r"\.tmp\.[0-9]+\.[0-9a-f]{12}(?![0-9a-f])", ".tmp.${pid}.${random}"),
    # The CLI keeps a large tool result under ~/.claude/projects/<its working directory, / and _ as ->/:
    # "-tmp-harness-is936joq-ws-73" names the workspace, random and numbered by the scenario's place.
    (r"""(\.claude/projects/)-[^/\s'"`]*?harness-[a-z0-9-]{8}-ws(?:-[0-9]+)?(?=/)""", r"\1${cli-project}"),
)
NOT_INSTALLED = "Claude Code CLI not installed (make capture-claude-code installs it)"
ROOT_CANNOT = "running as root: file modes do not bite, so '{}' cannot be realised"

# A captured scenario pins what the CLI did under one permission mode and working directory; a target
# running under others skips it (`source: "captured: claude-code 2.1.330 (acceptEdits, cwd=workspace)"`).
_CAPTURED = re.compile(r"^captured: claude-code \S+ \((?P<mode>[A-Za-z]+), cwd=(?P<cwd>workspace|outside)\)")

_MODES = ("acceptEdits", "default", "plan", "bypassPermissions", "dontAsk", "auto")
_OPTIONS = ("cli", "mode", "cwd", "tokens", "timeout", "allowed", "reminder")
#: Session options a scenario may set for itself (see the module docstring).
SESSION_OPTIONS = ("permission_mode", "cwd", "allowed_tools", "count_tokens", "turn_reminder", "cache_markers")


def parse_spec(spec: str) -> dict[str, str]:
    """Returns the options of ``claude-code[:opt=val,...]``; raises ValueError on anything unknown."""
    name, _, rest = spec.partition(":")
    if name != "claude-code":
        raise ValueError(f"not a claude-code target spec: {spec!r}")
    options = {"mode": "acceptEdits", "cwd": "workspace", "tokens": "chars4", "reminder": "off"}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in _OPTIONS:
            raise ValueError(f"claude-code option {item!r}: expected one of {', '.join(k + '=...' for k in _OPTIONS)}")
        options[key] = value
    if options["mode"] not in _MODES:
        raise ValueError(f"claude-code mode {options['mode']!r}: expected one of {', '.join(_MODES)}")
    if options["reminder"] not in ("off", "on"):
        raise ValueError(f"claude-code reminder {options['reminder']!r}: expected off or on")
    if options["cwd"] not in ("workspace", "outside"):
        raise ValueError(f"claude-code cwd {options['cwd']!r}: expected workspace or outside")
    TokenPolicy(options["tokens"])  # validates
    if "allowed" in options and not all(options["allowed"].split(";")):
        raise ValueError(f"claude-code allowed {options['allowed']!r}: expected rule;rule;...")
    if "timeout" in options:
        float(options["timeout"])
    return options


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


class ClaudeCodeTarget(Target):
    """Runs each scenario's calls through the real Claude Code CLI (one process per scenario)."""

    lone_surrogates_refused = "the CLI is driven by UTF-8 prompts, which cannot hold a lone surrogate"
    snapshot_masks = SNAPSHOT_MASKS

    honours = frozenset({"run_as", "sandbox"})

    @classmethod
    def from_options(cls, spec: str, options: TargetOptions) -> ClaudeCodeTarget:
        """Returns the target built with the run's timeout, ``--run-as`` and sandbox."""
        return cls(spec, timeout=options.timeout, run_as=options.run_as, sandbox=options.sandbox)

    def __init__(self, spec: str = "claude-code", *, timeout: float | None = None, run_as: str | None = None,
                 sandbox: bool = False) -> None:
        super().__init__(spec)
        self.sandbox = bool(sandbox)  # each CLI process in the sandbox (harness/targets/launch.py)
        self.options = parse_spec(spec)  # ValueError: a usage error, like any unknown target
        self.cli = Path(self.options["cli"]).expanduser() if "cli" in self.options else cli_mod.default_cli()
        self.mode = self.options["mode"]
        self.outside = self.options["cwd"] == "outside"
        self.tokens = TokenPolicy(self.options["tokens"])
        # The spec's timeout wins; else the run-wide one, but never below what a live CLI needs.
        self.call_timeout = float(self.options["timeout"]) if "timeout" in self.options else max(timeout or 0, CALL_TIMEOUT)
        self.allowed = tuple(self.options["allowed"].split(";")) if "allowed" in self.options else ()
        self.version = ""
        self.run_as = run_as
        self.user: tuple[int, int] | None = None
        if run_as is not None:
            import pwd
            try:
                entry = pwd.getpwuid(int(run_as)) if run_as.isdigit() else pwd.getpwnam(run_as)
            except (KeyError, ValueError):
                raise ValueError(f"--run-as: no such user {run_as!r}") from None
            self.user = (entry.pw_uid, entry.pw_gid)
        # As root, modes never bite (unless the CLI runs as another user); nothing else in
        # `requires` can be realised by a live CLI.
        bites = (self.user[0] != 0) if self.user is not None else not _is_root()
        self.realises = frozenset({"permissions"}) if bites else frozenset()
        #: The run's working folder (use_cwd): where the CLI runs with cwd=outside.
        self.working: Path | None = None

    def use_cwd(self, folder: str) -> bool:
        """Takes the run's working folder (laid out as each scenario's workspace and watched,
        harness/run/working_folder.py) as the CLI's working directory when a session runs with
        cwd=outside, so a relative path the CLI resolves there is seen; with cwd=workspace (the
        default) the workspace is its working directory, and a relative path lands in it."""
        self.working = Path(folder)
        if self.user is not None:
            os.chown(folder, *self.user)
        return True

    @property
    def installed(self) -> bool:
        """Returns True when the CLI executable exists."""
        return cli_mod.cli_available(self.cli)

    def start(self) -> TargetInfo:
        """Asks the CLI for its version (a missing CLI is not an error: its scenarios skip)."""
        if self.installed:
            try:
                self.version = cli_mod.cli_version(self.cli)
            except (OSError, RuntimeError, TimeoutError) as exc:
                raise TargetError(f"Claude Code at {self.cli} does not start", detail=str(exc)) from exc
        return TargetInfo(name="claude-code", version=self.version, profiles=PROFILES)

    def skip_reason(self, scenario: Any) -> str | None:
        """Skips other profiles, unrealisable ``requires``, and everything when the CLI is missing."""
        profile = _field(scenario, "profile")
        if profile not in PROFILES:
            return f"claude-code runs only the {' and '.join(PROFILES)} profiles (not {profile})"
        for condition in _field(scenario, "requires") or ():
            if condition not in self.realises:
                if condition == "permissions" and "permissions" not in self.realises:
                    return ROOT_CANNOT.format(condition) + " (run with --run-as USER)"
                return f"the claude-code target cannot realise '{condition}'"
        captured = _CAPTURED.match(_field(scenario, "source") or "")
        mode, cwd = self._session_mode(_field(scenario, "options") or {})
        if captured and (captured["mode"], captured["cwd"]) != (mode, cwd):
            return (f"captured with {captured['mode']}, cwd={captured['cwd']}; this target runs "
                    f"{mode}, cwd={cwd}")
        if not self.installed:
            return NOT_INSTALLED
        return None

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> ClaudeCodeSession:
        """Starts one CLI process rooted at ``workspace`` (or beside it, for cwd=outside)."""
        if profile not in PROFILES:
            raise Unsupported(f"claude-code runs only the {' and '.join(PROFILES)} profiles")
        if not self.installed:
            raise Unsupported(NOT_INSTALLED)
        options = options or {}
        unknown = sorted(set(options) - set(SESSION_OPTIONS))
        if unknown:
            raise Unsupported(f"claude-code has no session option {', '.join(unknown)} (it has {', '.join(SESSION_OPTIONS)})")
        mode, cwd = self._session_mode(options)
        if mode not in _MODES:
            raise Unsupported(f"claude-code permission mode {mode!r}: expected one of {', '.join(_MODES)}")
        tokens = TokenPolicy(options["count_tokens"]) if "count_tokens" in options else self.tokens
        allowed = tuple(options.get("allowed_tools", ())) or self.allowed
        return ClaudeCodeSession(
            cli=self.cli,
            workspace=Path(workspace),
            mode=mode,
            cwd_outside=cwd == "outside",
            outside=self.working,
            tokens=tokens,
            call_timeout=self.call_timeout,
            allowed_tools=allowed,
            user=self.user,
            turn_reminder=bool(options.get("turn_reminder", self.options["reminder"] == "on")),
            sandbox=self.sandbox,
            cache_markers=bool(options.get("cache_markers", False)),
        )

    def _session_mode(self, options: dict[str, Any]) -> tuple[str, str]:
        """Returns the permission mode and working directory a session runs with (its options win)."""
        return options.get("permission_mode", self.mode), options.get("cwd", self.options["cwd"])

    @property
    def slug(self) -> str:
        """Returns e.g. ``claude-code-2.1.330-acceptEdits`` (``-outside`` when cwd=outside)."""
        parts = ["claude-code", self.version or cli_mod.PINNED_VERSION, self.mode]
        if self.outside:
            parts.append("outside")
        if self.tokens.spec != "chars4":
            parts.append("tokens-" + self.tokens.spec.replace(":", "-"))
        if self.options["reminder"] == "on":
            parts.append("reminder")
        return "-".join(parts)


def _field(scenario: Any, name: str) -> Any:
    """Reads a scenario field whether the runner hands a mapping or an object."""
    if isinstance(scenario, dict):
        return scenario.get(name)
    return getattr(scenario, name, None)


__all__ = ["ClaudeCodeTarget", "ClaudeCodeSession", "parse_spec", "NOT_INSTALLED"]
