"""The target of one coding agent (``codex``, ``opencode``, ``qwen-code``): its real, pinned CLI, driven offline.

Spec: ``<agent>`` or ``<agent>:opt=val,...`` with ``cli=<path>`` (the executable; default the one
``make <agent>`` installs under tools/) and ``timeout=<seconds>`` (the bound on one call; the
first call also gets the agent's start-up time). It runs its own captured profile, whose tool
names and arguments are the agent's; other profiles reach it through a binding
(bindings/<agent>.<profile>.yaml). When the executable is missing, every scenario skips with the
make target that installs it.

``--binding FILE`` (bindings/<agent>.<profile>.yaml) runs another profile's scenarios through the
agent's tools: the profile's calls are renamed and reshaped onto the agent's (harness/bindings.py),
and its results read back the binding's way.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from harness.targets import bindings
from harness.targets.agents.session import CALL_TIMEOUT, HOME_PREFIX, AgentSession
from harness.targets.agents.spec import AgentSpec, base_env, executable_ok
from harness.targets.base import Target, TargetError, TargetInfo, Unsupported

_OPTIONS = ("cli", "timeout")

#: The scratch HOME each agent session gets, masked in every agent's snapshots.
HOME_MASK = (r"""(?:/[^/\s'"`<>|\\]+)*?/""" + HOME_PREFIX + r"[a-z0-9_]{8}(?![a-z0-9_])", "${agent-home}")


def parse_spec(name: str, spec: str) -> dict[str, str]:
    """Returns the options of ``<name>[:opt=val,...]``; raises ValueError on anything unknown."""
    head, _, rest = spec.partition(":")
    if head != name:
        raise ValueError(f"not a {name} target spec: {spec!r}")
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in _OPTIONS or not value:
            raise ValueError(f"{name} option {item!r}: expected one of {', '.join(k + '=...' for k in _OPTIONS)}")
        options[key] = value
    if "timeout" in options:
        float(options["timeout"])
    return options


def _version(executable: Path, home: Path) -> str:
    done = subprocess.run([str(executable), "--version"], env=base_env(home, {}), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, cwd=home)
    match = re.search(r"\d+\.\d+\.\d+\S*", done.stdout or done.stderr or "")
    if done.returncode != 0 or not match:
        raise RuntimeError(f"{executable} --version failed (exit {done.returncode}): {(done.stdout + done.stderr)[-500:]}")
    return match.group(0)


class AgentTarget(Target):
    """Runs each scenario's calls through one real agent CLI (one process per scenario)."""

    lone_surrogates_refused = "the agent reads its tool calls as UTF-8 JSON, which cannot hold a lone surrogate"

    #: The agent this target class drives (each agent's class sets it: harness.targets.agents).
    agent: AgentSpec
    honours = frozenset({"sandbox"})
    sandbox = False  # each agent process in the sandbox (set by from_options)

    def __init__(self, spec: str, *, timeout: float | None = None, binding: Any = None,
                 tool_map: Any = (), tool_map_file: Any = None) -> None:
        super().__init__(spec)
        agent = self.agent
        # The profile's tools as the agent names and shapes them; raises BindingError (a ValueError).
        self.binding = bindings.from_options(binding, tool_map, tool_map_file)
        self.options = parse_spec(agent.name, spec)
        self.executable = Path(self.options["cli"]).expanduser() if "cli" in self.options else agent.default_executable()
        self.call_timeout = float(self.options["timeout"]) if "timeout" in self.options else max(timeout or 0, CALL_TIMEOUT)
        self.version = ""
        # The snapshots' masks: the scratch HOME, then the agent's own (handed to the snapshot checker).
        self.snapshot_masks = (HOME_MASK, *tuple(agent.masks))

    @classmethod
    def from_options(cls, spec: str, options: Any) -> AgentTarget:
        """Returns the target built with the run-wide options it takes: the call timeout and a binding."""
        agent = cls(spec, timeout=options.timeout, binding=options.binding, tool_map=options.tool_map,
                    tool_map_file=options.tool_map_file)
        agent.sandbox = options.sandbox  # each agent process in the sandbox (harness/targets/launch.py)
        return agent

    @property
    def installed(self) -> bool:
        """Returns True when the executable exists."""
        return executable_ok(self.executable)

    def start(self) -> TargetInfo:
        """Asks the agent for its version (a missing agent is not an error: its scenarios skip)."""
        if self.installed:
            import shutil
            import tempfile
            home = Path(tempfile.mkdtemp(prefix=HOME_PREFIX))
            (home / "tmp").mkdir()
            try:
                self.version = _version(self.executable, home)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
                raise TargetError(f"{self.agent.title} at {self.executable} does not start", detail=str(exc)) from exc
            finally:
                shutil.rmtree(home, ignore_errors=True)
        bound = (self.binding.profile,) if self.binding.tools and self.binding.profile else ()
        return TargetInfo(name=self.agent.name, version=self.version, profiles=(self.agent.profile, *bound))

    def skip_reason(self, scenario: Any) -> str | None:
        """Skips other profiles, tools the agent lacks, any ``requires``, and everything when it is missing."""
        profile = _field(scenario, "profile")
        if not self._runs(profile):
            reason = self.binding.skip_reason(profile)
            return reason or f"{self.agent.name} runs only the {self.agent.profile} profile (not {profile}; a binding maps others)"
        calls = ([call.tool for call in scenario.calls] if hasattr(scenario, "calls") else
                 [tool for step in scenario.get("steps") or () if isinstance(step, dict) and isinstance(tool := step.get("tool"), str) and tool])
        missing = sorted({self.binding.tool(tool) for tool in calls} - set(self.agent.tools))
        if missing:
            return f"{self.agent.name} has no tool {', '.join(missing)} (it has {', '.join(sorted(self.agent.tools))})"
        if _field(scenario, "requires"):
            return f"the {self.agent.name} target cannot realise {', '.join(_field(scenario, 'requires'))}"
        if not self.installed:
            return self.agent.not_installed
        return None

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> AgentSession:
        """Starts one agent process rooted at ``workspace``."""
        if not self._runs(profile):
            raise Unsupported(f"{self.agent.name} runs only the {self.agent.profile} profile")
        if not self.installed:
            raise Unsupported(self.agent.not_installed)
        if options:
            raise Unsupported(f"{self.agent.name} has no session options (got {', '.join(sorted(options))})")
        return AgentSession(self.agent, executable=self.executable, workspace=Path(workspace), call_timeout=self.call_timeout,
                            binding=self.binding, sandbox=self.sandbox)

    def _runs(self, profile: str | None) -> bool:
        """Returns True for the agent's own profile, and for the profile its binding maps."""
        return profile == self.agent.profile or (bool(self.binding.tools) and self.binding.profile == profile)

    @property
    def slug(self) -> str:
        """Returns e.g. ``codex-0.171.0``."""
        return f"{self.agent.name}-{self.version or self.agent.version}"


def _field(scenario: Any, name: str) -> Any:
    if isinstance(scenario, dict):
        return scenario.get(name)
    return getattr(scenario, name, None)
