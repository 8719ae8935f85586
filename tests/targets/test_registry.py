"""The target registry: one table of kinds; the help text and make_target come from it."""

from __future__ import annotations

import importlib

import pytest

from harness.targets import registry
from harness.targets.base import Target
from harness.targets.options import TargetOptions
from harness.targets.reference import ReferenceTarget


def test_every_kind_names_a_factory_that_exists_and_its_syntax_is_in_the_help() -> None:
    for kind in registry.KINDS.values():
        module, _, attribute = kind.factory.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), kind.name
        assert kind.syntax in registry.TARGET_HELP


@pytest.mark.parametrize(("spec", "kind"), [("reference", "reference"), ("cmd:python -m x", "cmd"),
                                            ("mcp:node server.js", "mcp"), ("mcp+https://h/mcp", "mcp"),
                                            ("claude-code", "claude-code"), ("claude-code:mode=plan", "claude-code"),
                                            ("acp:python -m agent", "acp"), ("gemini-cli:node=/n", "gemini-cli")])
def test_a_spec_is_recognised_as_its_kind(spec: str, kind: str) -> None:
    assert registry.kind_of(spec).name == kind


def test_a_spec_of_no_kind_is_refused_naming_every_kind() -> None:
    with pytest.raises(ValueError, match="unknown target 'claude-codex'; expected reference | cmd:"):
        registry.make_target("claude-codex")


def test_a_new_kind_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind added to the table is made by make_target and shown in the help, with nothing else changed."""
    class Echo(ReferenceTarget):
        pass

    monkeypatch.setattr(importlib.import_module("harness.targets.reference"), "Echo", Echo, raising=False)
    kinds = dict(registry.KINDS)
    kinds["echo"] = registry.Kind("echo", "echo:<x>", lambda spec: spec.startswith("echo:"), "harness.targets.reference:Echo")
    monkeypatch.setattr(registry, "KINDS", kinds)
    made = registry.make_target("echo:1", TargetOptions(timeout=3.0))
    assert isinstance(made, Echo) and isinstance(made, Target) and made.spec == "echo:1"


def test_the_acp_kind_gives_the_claude_code_agent_its_own_target() -> None:
    from harness.targets.acp.claude_code import ClaudeCodeAcpTarget
    from harness.targets.acp.target import AcpTarget
    assert type(registry.make_target("acp:claude-code")) is ClaudeCodeAcpTarget
    assert type(registry.make_target("acp:python -m reference_impl.acp_agent")) is AcpTarget
