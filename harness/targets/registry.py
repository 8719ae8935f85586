"""Target kinds by name: how a ``--target`` spec is recognised, and which factory makes its target.

:data:`KINDS` is the one table. A new target kind is one module (its :class:`~harness.targets.base.Target`
subclass) plus one entry here: its name, how a spec of it is written (the help text is made from
these), how a spec is recognised, and ``module:factory``, imported only when such a target is made
(some kinds bring slow or optional modules). The first kind whose ``matches`` accepts a spec makes it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from harness.targets.base import Target
from harness.targets.options import TargetOptions, refusal


@dataclass(frozen=True)
class Kind:
    """One kind of target."""

    name: str
    #: How a spec of this kind is written, as the help text shows it.
    syntax: str
    #: Whether ``spec`` names a target of this kind.
    matches: Callable[[str], bool]
    #: ``module:attribute`` of the kind's Target class (its ``from_options`` builds a target), or of a
    #: function ``(spec) -> class`` where the spec chooses between classes.
    factory: str
    #: The kind as a refusal names it (``mcp:``, ``claude-code``); the name when empty.
    shown: str = ""

    def target_class(self, spec: str) -> type[Target]:
        """Returns the class that makes the target ``spec`` (its module imported now)."""
        module, _, attribute = self.factory.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        return found if isinstance(found, type) else found(spec)

    def make(self, spec: str, options: TargetOptions | None = None) -> Target:
        """Returns the target ``spec`` names, built with the run-wide ``options``; ValueError (one line)
        when the kind cannot apply the isolation they ask for (``--sandbox``, ``--run-as``)."""
        options = options or TargetOptions()
        kind = self.target_class(spec)
        reason = refusal(self.shown or self.name, kind.honours, options)
        if reason is not None:
            raise ValueError(reason)
        made: Target = kind.from_options(spec, options)
        return made


def _named(name: str) -> Callable[[str], bool]:
    """Returns the test for a kind written ``name`` or ``name:<options>``."""
    return lambda spec: spec == name or spec.startswith(name + ":")


def _is_agent(spec: str) -> bool:
    from harness.targets.agents import is_agent_spec  # the agents' table, imported only to recognise one
    return is_agent_spec(spec)


def _prefixed(*prefixes: str) -> Callable[[str], bool]:
    return lambda spec: spec.startswith(prefixes)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("reference", "reference", lambda spec: spec == "reference", "harness.targets.reference:ReferenceTarget"),
    Kind("cmd", "cmd:<command line>", _prefixed("cmd:"), "harness.targets.cmd.target:CmdTarget", "cmd:"),
    Kind("mcp", "mcp:<command line> | mcp+http://<url>", _prefixed("mcp:", "mcp+http://", "mcp+https://"),
         "harness.targets.mcp.target:McpTarget", "mcp:"),
    Kind("claude-code", "claude-code[:opt=val,...]", _named("claude-code"), "harness.targets.claude_code:ClaudeCodeTarget"),
    Kind("acp", "acp:[opt=val ...] <command line>|claude-code", _prefixed("acp:"), "harness.targets.acp:target_class",
         "acp:"),
    Kind("gemini-cli", "gemini-cli[:node=PATH]", _named("gemini-cli"), "harness.targets.gemini_cli:GeminiCliTarget"),
    Kind("agent", "codex|opencode|kilo|pi|qwen-code[:cli=PATH,timeout=S]", lambda spec: _is_agent(spec),
         "harness.targets.agents:agent_target_class"),
)}

#: Every kind's syntax, for ``--target``'s help and the error on an unknown spec.
TARGET_HELP = " | ".join(kind.syntax for kind in KINDS.values())


def kind_of(spec: str) -> Kind:
    """Returns the kind of target ``spec`` names; ValueError for an unknown kind."""
    for kind in KINDS.values():
        if kind.matches(spec):
            return kind
    raise ValueError(f"unknown target {spec!r}; expected {TARGET_HELP}")


def make_target(spec: str, options: TargetOptions | None = None) -> Target:
    """Returns the target named by ``spec``, built with the run-wide ``options``.

    Raises ValueError for an unknown kind, a bad binding, or isolation the kind cannot apply
    (``--sandbox``/``--run-as`` on a kind that does not honour them: one line saying so).
    """
    return kind_of(spec).make(spec, options)


def target_kind(spec: str) -> type[Target]:
    """Returns the class of the target named by ``spec``; raises ValueError for an unknown kind."""
    return kind_of(spec).target_class(spec)
