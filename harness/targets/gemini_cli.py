"""The ``gemini-cli`` target: gemini-cli's real file tools, run offline behind the cmd: protocol.

``gemini-cli`` is a name for a ``cmd:`` command line: ``node tools/gemini-cli/adapter.mjs``, the
project's own Node adapter that constructs the tool classes of the pinned
``@google/gemini-cli-core`` (``tools/gemini-cli/package.json``; ``make gemini-cli-tools`` installs
it) with a non-interactive configuration (see ``docs/gemini-cli.md``). Everything else — the
protocol, the timeouts, ``--run-as``, ``--sandbox``, broken-candidate verdicts — is the cmd:
target's. Spec: ``gemini-cli`` or ``gemini-cli:node=<path>`` (the Node.js executable; default
``node`` from ``PATH``).

Snapshot mask: the adapter's scratch folder ``<tmp>/harness-gemini-<6 random>`` becomes
``${gemini-scratch}``.

When the package is not installed the target starts nothing and skips every scenario with the
reason. Loading the package takes seconds, so the per-request timeout is at least
`STARTUP_TIMEOUT` (the first request, ``hello``, waits for the load).
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Any

from harness.targets.base import TargetInfo, Unsupported
from harness.targets.cmd.target import CmdTarget

#: The version ``tools/gemini-cli/package.json`` pins.
PINNED_VERSION = "0.61.0"
#: The profiles the adapter serves: the tools as captured, and seed 004's proposal for them.
PROFILES = ("gemini-cli-captured", "gemini-safe-patch")
#: The tools gemini-cli really has (of those the two profiles name); seed 004's ``safe_patch`` is a proposal.
REAL_TOOLS = frozenset({"read_file", "read_many_files", "write_file", "replace", "glob", "list_directory", "grep_search"})
#: The least per-request timeout: ``hello`` is answered once the package has loaded (seconds on a busy machine).
STARTUP_TIMEOUT = 60.0
NOT_INSTALLED = "gemini-cli tools not installed (make gemini-cli-tools installs @google/gemini-cli-core " + PINNED_VERSION + ")"

_OPTIONS = ("node",)

#: The adapter's scratch folder (Node's ``mkdtemp`` adds 6 characters); it shows in the tools'
#: "Path not in workspace" messages (the project temp directory under the scratch HOME).
SCRATCH_PREFIX = "harness-gemini-"
#: What snapshots of this target mask: the scratch folder, as ``${gemini-scratch}``; the project temp
#: directory named after the workspace folder ("ws", or "ws-8" for a run's 8th workspace: which one
#: depends on the scenario's place in the run), as ``${workspace-name}`` (applied after the first).
SNAPSHOT_MASKS: tuple[tuple[str, str], ...] = (
    (r"""(?:/[^/\s'"`<>|\\]+)*?/""" + SCRATCH_PREFIX + r"[A-Za-z0-9]{6}(?![A-Za-z0-9])", "${gemini-scratch}"),
    (r"(\$\{gemini-scratch\}/session/home/\.gemini/tmp/)ws(?:-[0-9]+)?(?![\w-])", r"\1${workspace-name}"),
)


def project_root() -> Path:
    """Returns the checkout this package lives in (or the current directory for an installed package)."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "tools" / "gemini-cli" / "package.json").exists() else Path.cwd()


def adapter_path() -> Path:
    """Returns the adapter script (committed with the project)."""
    return project_root() / "tools" / "gemini-cli" / "adapter.mjs"


def package_dir() -> Path:
    """Returns where ``npm ci --prefix tools/gemini-cli`` puts the package."""
    return project_root() / "tools" / "gemini-cli" / "node_modules" / "@google" / "gemini-cli-core"


def installed() -> bool:
    """Returns True when the pinned package is installed beside the adapter."""
    return (package_dir() / "package.json").is_file() and adapter_path().is_file()


def parse_spec(spec: str) -> dict[str, str]:
    """Returns the options of ``gemini-cli[:node=PATH]``; raises ValueError on anything unknown."""
    name, _, rest = spec.partition(":")
    if name != "gemini-cli":
        raise ValueError(f"not a gemini-cli target spec: {spec!r}")
    options = {"node": "node"}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in _OPTIONS or not value:
            raise ValueError(f"gemini-cli option {item!r}: expected one of {', '.join(k + '=...' for k in _OPTIONS)}")
        options[key] = value
    return options


def command_line(node: str = "node") -> str:
    """Returns the ``cmd:`` spec this target stands for."""
    return "cmd:" + shlex.join([node, str(adapter_path())])


class GeminiCliTarget(CmdTarget):
    """The cmd: target on the gemini-cli adapter; skips everything when the package is missing."""

    snapshot_masks = SNAPSHOT_MASKS

    def __init__(self, spec: str = "gemini-cli", *, timeout: float | None = None, run_as: str | None = None,
                 sandbox: bool = False, binding: str | Path | None = None, tool_map: Any = (),
                 tool_map_file: str | Path | None = None) -> None:
        self.name_spec = spec
        self.cli_options = parse_spec(spec)  # ValueError: a usage error, like any unknown target
        node = self.cli_options["node"]
        if "/" not in node and shutil.which(node) is None:
            node = shutil.which("nodejs") or node
        super().__init__(command_line(node), timeout=max(timeout or 0.0, STARTUP_TIMEOUT), run_as=run_as, sandbox=sandbox,
                         binding=binding, tool_map=tool_map, tool_map_file=tool_map_file)
        self.spec = spec  # reports name the target as it was asked for
        self.installed = installed()

    def start(self) -> TargetInfo:
        """Starts the adapter; without the package, starts nothing (its scenarios skip)."""
        if not self.installed:
            self.info = TargetInfo(name="gemini-cli", version="", profiles=PROFILES)
            return self.info
        return super().start()

    def skip_reason(self, scenario: Any) -> str | None:
        """Skips everything when the package is missing; else as the cmd: target does."""
        if not self.installed:
            return NOT_INSTALLED
        calls = scenario.calls if hasattr(scenario, "calls") else [
            step for step in (scenario.get("steps") or []) if isinstance(step, dict) and "tool" in step]
        missing = sorted({_tool(call) for call in calls} - REAL_TOOLS)
        if missing:
            return f"gemini-cli has no tool {', '.join(missing)} (seed 004 proposes it; the real tools are {', '.join(sorted(REAL_TOOLS))})"
        return super().skip_reason(scenario)

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Any:
        """Opens a session on the adapter (Unsupported when the package is missing)."""
        if not self.installed:
            raise Unsupported(NOT_INSTALLED)
        return super().open(profile, workspace, options)

    @property
    def slug(self) -> str:
        """Returns ``gemini-cli-<package version>`` (snapshots of two versions sit side by side)."""
        version = self.info.version if self.info and self.info.version else PINNED_VERSION
        return f"gemini-cli-{version}"


def _tool(call: Any) -> str:
    return call.get("tool", "") if isinstance(call, dict) else getattr(call, "tool", "")
