"""What makes one coding agent a target: a small spec, data where it can be.

An `AgentSpec` names the npm package and its pinned version, where `make <agent>` installs it, the
model API it speaks (a `harness.targets.model_api` dialect), its file tools (name and call kind),
the profile its behaviour is captured under, and one function that lays out its configuration
(scratch HOME, config files pointing it at the fake endpoint) and returns its command line and
environment. Reading the agent's own verdict on a call (error or not) from its stdout is the
spec's `errored` function; what the model was told is the tool result the fake endpoint received.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The prompt of the one conversation a session is; the fake model ignores it.
PROMPT = "Run the file tool calls of this conformance scenario."

#: Everything that could make an agent reach past loopback, nag, or vary between runs is off.
BASE_ENV = {
    "NO_COLOR": "1",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "DO_NOT_TRACK": "1",
    "CI": "1",
}


@dataclass(frozen=True)
class Launch:
    """How one session's agent process starts."""

    argv: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class AgentSpec:
    """One agent (see the module docstring)."""

    name: str  # the target's name: harness run --target <name>
    title: str  # e.g. "Codex CLI"
    package: str  # the npm package pinned in tools/<tools_dir>/package.json
    version: str  # the pinned version
    tools_dir: str  # tools/<tools_dir>
    executable: str  # relative to tools/<tools_dir>
    api: str  # a model_api dialect name
    profile: str  # the profile its scenarios are written in (its own tool names)
    tools: dict[str, str]  # tool name -> call kind (function | custom)
    make_target: str  # the make target that installs it
    launch: Callable[[AgentSpec, Path, Path, Path, str], Launch]  # (spec, executable, home, workspace, base_url)
    #: Given the stdout events and a call id, True when the agent marked that call failed (None: cannot tell).
    errored: Callable[[list[dict[str, Any]], str, str], bool | None] = lambda events, call_id, text: None
    #: Snapshot masks (regex, placeholder) for what varies between runs in the agent's results.
    masks: tuple[tuple[str, str], ...] = ()
    #: What the first call may take on top of the call timeout: the agent starts and sends its first request.
    startup: float = 60.0

    def root(self) -> Path:
        """Returns the project checkout (where tools/ lives), or the current directory."""
        here = Path(__file__).resolve().parents[3]
        return here if (here / "tools" / self.tools_dir / "package.json").exists() else Path.cwd()

    def default_executable(self) -> Path:
        """Returns the pinned executable's path (which may not exist yet)."""
        return self.root() / "tools" / self.tools_dir / self.executable

    @property
    def not_installed(self) -> str:
        """Returns the skip reason when the executable is missing."""
        return f"{self.title} not installed (make {self.make_target} installs {self.package} {self.version})"


def executable_ok(path: Path) -> bool:
    """Returns True when ``path`` is an executable file."""
    return path.is_file() and os.access(path, os.X_OK)


def base_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """Returns the whole environment of an agent process: nothing of ours leaks in but PATH."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home / "tmp"),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local" / "state")}
    env.update(BASE_ENV)
    env.update(extra)
    return env
