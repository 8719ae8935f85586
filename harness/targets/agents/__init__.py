"""Coding agents driven offline against a fake model endpoint (harness/targets/model_api/).

Each agent is an `AgentSpec` (`catalog.AGENTS`); `agent_target_class` returns the target class
of the agent a spec names (an `AgentTarget` subclass bound to that spec).
"""

from __future__ import annotations

import functools

from harness.targets.agents.catalog import AGENTS
from harness.targets.agents.target import AgentTarget


def is_agent_spec(spec: str) -> bool:
    """Returns True when ``spec`` names an agent target (``codex``, ``opencode:timeout=90``, ...)."""
    return spec.partition(":")[0] in AGENTS


@functools.cache
def _target_class(name: str) -> type[AgentTarget]:
    return type(f"AgentTarget[{name}]", (AgentTarget,), {"agent": AGENTS[name]})


def agent_target_class(spec: str) -> type[AgentTarget]:
    """Returns the target class of the agent ``spec`` names."""
    return _target_class(spec.partition(":")[0])


__all__ = ["AGENTS", "AgentTarget", "agent_target_class", "is_agent_spec"]
