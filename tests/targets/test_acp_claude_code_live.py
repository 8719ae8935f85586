"""acp:claude-code end to end: the pinned Claude Code ACP agent, its model played by the fake API.

Skipped (with the reason) when ``make claude-code-acp`` has not installed the agent and the pinned CLI.

Example: a Write through the agent reaches the harness as ``fs/write_text_file`` after a
``session/request_permission``; nothing touches the disk but the harness's own write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.targets import make_target
from harness.targets.acp.claude_code import NOT_INSTALLED, TURN_ENDED, ClaudeCodeAcpTarget

_probe = ClaudeCodeAcpTarget("acp:claude-code")


def needs_agent(test):
    """A live test: the pinned agent and CLI (make claude-code-acp); skipped, with the reason, without them."""
    return pytest.mark.live(pytest.mark.skipif(_probe.installed is not None, reason=_probe.installed or NOT_INSTALLED)(test))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_the_spec_picks_the_claude_code_agent_and_names_it() -> None:
    target = make_target("acp:permission=reject claude-code")
    assert isinstance(target, ClaudeCodeAcpTarget)
    assert target.slug == "acp-claude-code-0.16.2-cli-2.1.330-permission-reject"
    assert make_target("acp:cli=bundled claude-code").slug == "acp-claude-code-0.16.2-cli-bundled"


def test_a_missing_agent_skips_with_the_install_hint(monkeypatch) -> None:
    target = ClaudeCodeAcpTarget("acp:claude-code")
    monkeypatch.setattr(target, "agent", Path("/nonexistent/index.js"))
    assert target.skip_reason(type("S", (), {"profile": "claude-code"})()) == NOT_INSTALLED


@needs_agent
def test_reads_and_writes_reach_the_client_through_fs_on_the_pinned_cli(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\nworld\n")
    target = ClaudeCodeAcpTarget("acp:claude-code")
    target.start()
    session = target.open("claude-code", workspace, {})
    try:
        read = session.call("Read", {"file_path": str(workspace / "a.txt")})
        write = session.call("Write", {"file_path": str(workspace / "a.txt"), "content": "bye\n"})
    finally:
        session.close()
        target.stop()
    assert any(agent.startswith("claude-cli/2.1.330") for agent in session.api.user_agents), session.api.user_agents
    assert read.extra["fs"] == [{"method": "fs/read_text_file", "path": str(workspace / "a.txt"), "line": 1,
                                 "limit": 2000, "answer": "served", "bytes": 12}]
    assert write.extra["fs"] == [{"method": "fs/write_text_file", "path": str(workspace / "a.txt"),
                                  "content_bytes": 4, "answer": "served", "bytes": 4}]
    assert write.extra["permissions"][0]["options"] == ["allow_always", "allow_once", "reject_once"]
    assert write.extra["permissions"][0]["answer"] == "allow_once"
    assert (workspace / "a.txt").read_text() == "bye\n"
    kinds = [(e["params"]["update"]["sessionUpdate"], e["params"]["update"].get("status")) for e in write.events]
    assert kinds[0] == ("tool_call", "pending") and kinds[-1] == ("tool_call_update", "completed")


@needs_agent
def test_a_rejected_write_ends_the_turn_and_leaves_the_file(workspace: Path) -> None:
    (workspace / "a.txt").write_text("keep\n")
    target = ClaudeCodeAcpTarget("acp:claude-code")
    session = target.open("claude-code", workspace, {"acp": {"permission": "reject"}})
    try:
        session.call("Read", {"file_path": str(workspace / "a.txt")})
        write = session.call("Write", {"file_path": str(workspace / "a.txt"), "content": "bye\n"})
        again = session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        session.close()
        target.stop()
    assert write.extra["permissions"][0]["answer"] == "reject_once"
    assert write.extra["fs"] == []
    assert write.error is not None and write.error["code"] in (TURN_ENDED, None)
    assert (workspace / "a.txt").read_text() == "keep\n"
    assert again.output is not None  # the next call starts a new turn
