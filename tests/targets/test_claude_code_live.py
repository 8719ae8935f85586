"""The claude-code target end to end against the real, pinned CLI (skipped when it is not installed).

Example: a Read of a two-line file through Claude Code 2.1.330 comes back as ``1\\thello`` —
the number, a tab, the line — not the padded ``     1→hello`` of seed 001.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.targets.base import TargetError
from harness.targets.claude_code import NOT_INSTALLED, ClaudeCodeTarget, parse_spec
from harness.targets.claude_code import cli as cli_mod
from harness.targets.claude_code.session import PERMISSION_REQUEST


def needs_cli(test):
    """A live test: the real CLI (make capture-claude-code installs it); skipped, with the reason, without it."""
    return pytest.mark.live(pytest.mark.skipif(not cli_mod.cli_available(cli_mod.default_cli()), reason=NOT_INSTALLED)(test))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_spec_options_are_parsed_and_checked() -> None:
    assert parse_spec("claude-code") == {"mode": "acceptEdits", "cwd": "workspace", "tokens": "chars4", "reminder": "off"}
    assert parse_spec("claude-code:mode=default,cwd=outside,tokens=const:0")["tokens"] == "const:0"
    assert parse_spec("claude-code:reminder=on")["reminder"] == "on"
    for bad in ("claude-code:mode=yolo", "claude-code:cwd=home", "claude-code:colour=red", "claude-code:tokens=x",
                "claude-code:reminder=yes"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_slug_names_version_mode_and_cwd() -> None:
    target = ClaudeCodeTarget("claude-code:cli=/nonexistent/claude,mode=default,cwd=outside")
    assert target.slug == f"claude-code-{cli_mod.PINNED_VERSION}-default-outside"


def test_the_turn_reminder_is_silenced_unless_asked_for_and_named_in_the_slug(tmp_path: Path) -> None:
    silenced = cli_mod.clean_env(tmp_path, "http://127.0.0.1:1", mode="acceptEdits")
    assert silenced[cli_mod.TURN_REMINDER_VARIABLE] == "0"
    assert cli_mod.TURN_REMINDER_VARIABLE not in cli_mod.clean_env(tmp_path, "http://127.0.0.1:1", mode="acceptEdits",
                                                                  turn_reminder=True)
    assert ClaudeCodeTarget("claude-code:cli=/nonexistent/claude,reminder=on").slug == (
        f"claude-code-{cli_mod.PINNED_VERSION}-acceptEdits-reminder")


def test_a_missing_cli_skips_with_the_install_hint() -> None:
    target = ClaudeCodeTarget("claude-code:cli=/nonexistent/claude")
    info = target.start()
    assert info.name == "claude-code" and info.profiles == ("claude-code", "claude-code-captured")
    assert target.skip_reason({"profile": "claude-code"}) == NOT_INSTALLED
    assert "profile" in (target.skip_reason({"profile": "aptix-tul-004"}) or "")


@needs_cli
def test_read_returns_numbered_lines_and_the_structured_result(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\nworld\n")
    target = ClaudeCodeTarget("claude-code")
    assert target.start().version == cli_mod.PINNED_VERSION
    started = time.monotonic()
    session = target.open("claude-code", workspace, {})
    try:
        result = session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        session.close()
    assert not result.failed, result.error
    assert result.output.startswith("1\thello\n2\tworld")
    assert result.extra["tool_use_result"]["file"]["content"] == "hello\nworld\n"
    assert session.proc.returncode == 0
    assert time.monotonic() - started < 30


@needs_cli
def test_the_workspace_changes_between_calls_while_the_cli_waits(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("v1\n")
    session = ClaudeCodeTarget("claude-code").open("claude-code", workspace, {})
    try:
        session.call("Read", {"file_path": str(path)})
        session.before_action()
        path.write_text("v2, written by someone else\n")
        stat = path.stat()
        os.utime(path, (stat.st_atime + 2, stat.st_mtime + 2))
        result = session.call("Write", {"file_path": str(path), "content": "mine\n"})
    finally:
        session.close()
    assert result.failed and "modified since read" in result.error["message"]
    assert path.read_text() == "v2, written by someone else\n"


@needs_cli
def test_a_permission_request_is_the_calls_observation_not_a_hang(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    session = ClaudeCodeTarget("claude-code:cwd=outside,timeout=20").open("claude-code", workspace, {})
    started = time.monotonic()
    try:
        result = session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        session.close()
    assert time.monotonic() - started < 20
    assert result.error["code"] == PERMISSION_REQUEST
    assert "requested permissions to read from" in result.error["message"]


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-claude"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def test_a_cli_that_exits_is_a_target_error_with_what_it_said(tmp_path: Path, workspace: Path) -> None:
    from harness.targets.claude_code.session import ClaudeCodeSession

    cli = _script(tmp_path, 'echo "Invalid API key" >&2; exit 3')
    session = ClaudeCodeSession(cli=cli, workspace=workspace, call_timeout=20)
    started = time.monotonic()
    try:
        with pytest.raises(TargetError) as caught:
            session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        session.close()
    assert time.monotonic() - started < 10
    assert "exited" in str(caught.value) and "Invalid API key" in str(caught.value) and "exit code: 3" in str(caught.value)


def test_a_cli_that_never_calls_is_a_bounded_target_error(tmp_path: Path, workspace: Path) -> None:
    from harness.targets.claude_code.session import ClaudeCodeSession

    cli = _script(tmp_path, "exec sleep 30")
    session = ClaudeCodeSession(cli=cli, workspace=workspace, call_timeout=0.5, startup_allowance=0)
    started = time.monotonic()
    try:
        with pytest.raises(TargetError, match="no result"):
            session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        session.close()
    assert time.monotonic() - started < 25  # the call's bound, then close's bounded wait and kill
    assert session.proc.poll() is not None


def test_allowed_rules_and_session_options_are_read(tmp_path: Path) -> None:
    target = ClaudeCodeTarget("claude-code:cli=/nonexistent/claude,allowed=Write;Read(//tmp/**)")
    assert target.allowed == ("Write", "Read(//tmp/**)")
    assert cli_mod.command(Path("claude"), mode="default", allowed_tools=target.allowed)[-3:] == [
        "--allowedTools", "Write", "Read(//tmp/**)"]
    with pytest.raises(ValueError):
        parse_spec("claude-code:allowed=Write;")
    captured = {"profile": "claude-code-captured", "source": "captured: claude-code 2.1.330 (default, cwd=outside)"}
    # The target's own mode differs from the capture's: skipped, unless the scenario pins them itself.
    assert "captured with default, cwd=outside" in (target.skip_reason(captured) or "")
    pinned = dict(captured, options={"permission_mode": "default", "cwd": "outside"})
    assert target.skip_reason(pinned) == NOT_INSTALLED  # not a mode mismatch: only the CLI is missing


def test_run_as_realises_permissions_and_names_the_user() -> None:
    plain = ClaudeCodeTarget("claude-code:cli=/nonexistent/claude")
    needs = {"profile": "claude-code-captured", "requires": ["permissions"]}
    if os.geteuid() == 0:
        assert "--run-as" in (plain.skip_reason(needs) or "")
    as_nobody = ClaudeCodeTarget("claude-code:cli=/nonexistent/claude", run_as="nobody")
    assert "permissions" in as_nobody.realises and as_nobody.user is not None and as_nobody.user[0] != 0
    with pytest.raises(ValueError, match="no such user"):
        ClaudeCodeTarget("claude-code", run_as="no-such-user-here")


def test_a_note_after_the_result_becomes_an_event() -> None:
    from harness.targets.claude_code.session import note_event
    assert note_event({"role": "system", "content": [{"type": "text", "text": "[Truncated: ...]"}]}) == {
        "role": "system", "text": "[Truncated: ...]"}
    image = {"type": "image", "source": {}}
    assert note_event({"role": "user", "content": [image]}) == {"role": "user", "content": [image]}


RELATIVE = """
id: t/relative-write
profile: claude-code
title: a relative Write is refused
source: "001-claude-code-read-write-edit.md §Path Resolution"
given:
  dirs: [src]
steps:
  - tool: Write
    args: {file_path: "src/rel.txt", content: "x"}
    expect:
      error: true
then:
  absent: [src/rel.txt]
  others_unchanged: true
"""


def test_with_cwd_outside_the_cli_runs_in_the_watched_working_folder(tmp_path: Path) -> None:
    # A stand-in CLI that writes src/rel.txt where it runs. With cwd=outside it runs in the run's
    # working folder (laid out as the workspace, watched): an escape. It ran in a scratch folder
    # nobody watched, where the write failed for want of src/ and the refusal seemed to hold. (With
    # cwd=workspace, the default, a relative path lands in the workspace, which `then` checks.)
    from harness.run.runner import Runner
    from harness.scenario.loader import load_text
    from harness.scenario.model import Verdict
    cli = _script(tmp_path, 'if [ "$1" = --version ]; then echo "2.1.330 (Claude Code)"; exit 0; fi\n'
                            'mkdir -p src && echo x > src/rel.txt; exit 3')
    (scenario,) = load_text(RELATIVE, tmp_path / "s.yaml")
    target = ClaudeCodeTarget(f"claude-code:cli={cli},cwd=outside,timeout=20")
    with Runner(target) as runner:
        result = runner.run(scenario)
        folder = runner._working.path
    assert result.verdict is Verdict.FAIL and "escape" in result.reason
    assert f"{folder}/src/rel.txt (created in the candidate's working folder" in result.reason
    assert not Path(folder).exists()


def test_the_working_folder_is_masked_in_snapshots_like_the_clis_own() -> None:
    import re

    from harness.run import working_folder
    from harness.targets.claude_code import SNAPSHOT_MASKS, WORKING_PREFIX
    assert WORKING_PREFIX == working_folder.PREFIX
    text = "/tmp/harness-x/harness-cwd-ab12cd_9/a.txt"
    for pattern, placeholder in SNAPSHOT_MASKS:
        text = re.sub(pattern, placeholder, text)
    assert text == "${cli-cwd}/a.txt"


@needs_cli
def test_cache_markers_are_events_only_when_asked_for(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    target = ClaudeCodeTarget("claude-code")
    target.start()
    calls = {}
    for asked in (False, True):
        session = target.open("claude-code-captured", workspace, {"cache_markers": asked} if asked else {})
        try:
            calls[asked] = session.call("Read", {"file_path": str(workspace / "a.txt")})
        finally:
            session.close()
    assert calls[False].events is None
    assert calls[True].events == [{"message": 0, "role": "user", "block": "tool_result", "cache_control": {"type": "ephemeral"}}]
