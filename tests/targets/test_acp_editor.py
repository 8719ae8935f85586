"""The editor's side of ACP beyond fs/*: terminals that run nothing, unsaved buffers, tool names.

Example: with ``acp: {terminal: fake}`` the client offers the terminal capability, answers
``terminal/create`` with ``term-1`` and reports that it exited 0 with the output "(the editor ran
nothing)"; the command itself is never run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_prober import probe

from harness.targets.acp.client import FAKE_OUTPUT, ClientPolicy, EditorClient, Recorder
from harness.targets.acp.fs import FsRefusal, WorkspaceFiles
from harness.targets.acp.target import check_buffers, scenario_options
from harness.targets.base import Unsupported

pytestmark = pytest.mark.xdist_group("acp-client")



def _terminal(method: str, **params) -> dict:
    return {"method": f"terminal/{method}", "params": params}


# -- terminals --------------------------------------------------------------------------------------


def test_the_terminal_capability_is_off_unless_asked(prober, workspace):
    result = probe(prober, workspace, [_terminal("create", command="touch ran.txt")], capabilities=True)
    assert not result.output["capabilities"].get("terminal")  # false or absent: the same to ACP
    assert result.output["results"][0]["error"]["code"] == -32603
    assert result.extra["terminals"][0]["answer"] == "refused"
    assert not (workspace / "ran.txt").exists()


def test_a_fake_terminal_runs_nothing_and_has_exited(prober, workspace):
    result = probe(prober, workspace, [
        _terminal("create", command="touch ran.txt", args=["x"], cwd=str(workspace), outputByteLimit=10,
                  env=[{"name": "A", "value": "1"}]),
        _terminal("wait_for_exit", terminalId="term-1"),
        _terminal("output", terminalId="term-1"),
        _terminal("kill", terminalId="term-1"),
        _terminal("release", terminalId="term-1"),
        _terminal("output", terminalId="term-1"),
    ], {"acp": {"terminal": "fake"}}, capabilities=True)
    assert result.output["capabilities"]["terminal"] is True
    assert [item.get("ok", item.get("error")) for item in result.output["results"]] == [
        {"terminalId": "term-1"}, {"exitCode": 0}, {"output": FAKE_OUTPUT, "truncated": False, "exitStatus": {"exitCode": 0}},
        {}, {}, {"code": -32602, "message": "Invalid params"}]
    assert result.extra["terminals"][0] == {
        "method": "terminal/create", "command": "touch ran.txt", "args": ["x"], "cwd": str(workspace), "outputByteLimit": 10,
        "env": [{"name": "A", "value": "1"}], "answer": "created", "terminalId": "term-1"}
    assert [(e["method"], e["answer"]) for e in result.extra["terminals"][1:]] == [
        ("terminal/wait_for_exit", "exited"), ("terminal/output", "output"), ("terminal/kill", "killed"),
        ("terminal/release", "released"), ("terminal/output", "refused")]
    assert not (workspace / "ran.txt").exists()


def test_a_refusing_editor_offers_terminals_and_refuses_each(prober, workspace):
    result = probe(prober, workspace, [_terminal("create", command="touch ran.txt")], {"acp": {"terminal": "refuse"}},
                    capabilities=True)
    assert result.output["capabilities"]["terminal"] is True
    assert result.output["results"][0]["error"] == {"code": -32603, "message": "the client runs no commands"}
    assert not (workspace / "ran.txt").exists()


def test_a_running_terminal_exits_only_when_killed(prober, workspace):
    result = probe(prober, workspace, [
        _terminal("create", command="sleep 100"),
        _terminal("output", terminalId="term-1"),
        _terminal("kill", terminalId="term-1"),
        _terminal("wait_for_exit", terminalId="term-1"),
        _terminal("output", terminalId="term-1"),
        _terminal("release", terminalId="term-1"),
    ], {"acp": {"terminal": "running"}})
    assert [item["ok"] for item in result.output["results"]] == [
        {"terminalId": "term-1"}, {"output": "", "truncated": False}, {}, {"signal": "SIGKILL"},
        {"output": "", "truncated": False, "exitStatus": {"signal": "SIGKILL"}}, {}]


def _bound(tmp_path: Path, policy: ClientPolicy) -> tuple[EditorClient, Recorder]:
    client, recorder = EditorClient(), Recorder()
    client.bind("s", tmp_path, recorder, policy)
    return client, recorder


def test_a_wait_answered_later_is_recorded_where_it_was_answered(tmp_path):
    async def scenario():
        client, recorder = _bound(tmp_path, ClientPolicy(terminal="running"))
        await client.create_terminal("s", "sleep 100")
        waiting = asyncio.ensure_future(client.wait_for_terminal_exit("s", "term-1"))
        await asyncio.sleep(0.05)
        mark = recorder.mark()
        assert not waiting.done() and recorder.terminals[-1]["answer"] == "waiting"
        await client.kill_terminal("s", "term-1")
        response = await asyncio.wait_for(waiting, 5)
        return recorder, mark, response

    recorder, mark, response = asyncio.run(scenario())
    assert response.signal == "SIGKILL" and response.exit_code is None
    assert recorder.terminals_since(mark) == [
        {"method": "terminal/kill", "terminalId": "term-1", "answer": "killed"},
        {"method": "terminal/wait_for_exit", "terminalId": "term-1", "answered_after_waiting": True, "answer": "exited",
         "signal": "SIGKILL"}]


def test_a_session_that_ends_releases_a_waiting_agent(tmp_path):
    async def scenario():
        client, _recorder = _bound(tmp_path, ClientPolicy(terminal="running"))
        await client.create_terminal("s", "sleep 100")
        waiting = asyncio.ensure_future(client.wait_for_terminal_exit("s", "term-1"))
        await asyncio.sleep(0.05)
        client.unbind("s")
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(scenario()).signal == "SIGKILL"


def test_terminals_per_session_are_bounded(tmp_path, monkeypatch):
    from harness.targets.acp import client as client_mod
    monkeypatch.setattr(client_mod, "TERMINAL_LIMIT", 2)

    async def scenario():
        client, _recorder = _bound(tmp_path, ClientPolicy(terminal="fake"))
        ids = [(await client.create_terminal("s", "true")).terminal_id for _ in range(2)]
        with pytest.raises(Exception, match="runs no commands"):
            await client.create_terminal("s", "true")
        return ids

    assert asyncio.run(scenario()) == ["term-1", "term-2"]


# -- unsaved buffers --------------------------------------------------------------------------------


def test_a_buffer_is_served_instead_of_the_disk_and_a_write_saves_it(prober, workspace):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.txt").write_text("on disk\n")
    (workspace / "other.txt").write_text("plain\n")
    options = {"acp": {"buffers": {"sub/b.txt": "one\ntwo\nthree\n"}}}
    result = probe(prober, workspace, [
        {"method": "read", "path": f"{workspace}/sub/b.txt"},
        {"method": "read", "path": f"{workspace}/sub/b.txt", "line": 2, "limit": 1},
        {"method": "read", "path": f"{workspace}/other.txt"},
        {"method": "write", "path": f"{workspace}/sub/b.txt", "content": "saved\n"},
        {"method": "read", "path": f"{workspace}/sub/./b.txt"},
    ], options)
    assert [item["ok"] for item in result.output["results"]] == ["one\ntwo\nthree\n", "two\n", "plain\n", True, "saved\n"]
    assert (workspace / "sub" / "b.txt").read_text() == "saved\n"
    assert result.extra["fs"][0]["bytes"] == len("one\ntwo\nthree\n")


def test_a_buffer_opens_no_way_out(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    files = WorkspaceFiles(root, buffers={"a.txt": "buffer"})
    try:
        with pytest.raises(FsRefusal) as refused:
            files.read(f"{root}/../a.txt")
        assert refused.value.escape
        assert files.read(f"{root}/a.txt") == "buffer"
    finally:
        files.close()


@pytest.mark.parametrize("name", ["../x.txt", "/etc/passwd", "a/../../x", "./a.txt", "a//b.txt", "", "a\x00b"])
def test_buffer_paths_must_be_normal_and_relative(name):
    with pytest.raises(ValueError, match="relative to the workspace"):
        check_buffers({name: "x"}, where="acp.buffers")


def test_bad_buffers_and_terminal_options_are_unsupported():
    with pytest.raises(Unsupported, match="buffers"):
        scenario_options({"acp": {"buffers": ["a.txt"]}})
    with pytest.raises(Unsupported, match="terminal='shell'"):
        scenario_options({"acp": {"terminal": "shell"}})
    with pytest.raises(Unsupported, match="names='mine'"):
        scenario_options({"acp": {"names": "mine"}})
    own, _rest = scenario_options({"acp": {"buffers": {"a.txt": "x"}, "terminal": "fake"}})
    assert own == {"buffers": {"a.txt": "x"}, "terminal": "fake"}


# -- the names a claude-code step is sent under -----------------------------------------------------


@pytest.mark.parametrize(("names", "fs_read", "terminal", "tool", "sent"), [
    (None, True, False, "Read", "mcp__acp__Read"),
    (None, False, False, "Read", "Read"),
    ("offered", True, False, "Edit", "mcp__acp__Edit"),
    ("builtin", True, True, "Read", "Read"),
    ("builtin", True, True, "Bash", "Bash"),
    (None, True, False, "Bash", "Bash"),
    (None, True, True, "Bash", "mcp__acp__Bash"),
    (None, True, True, "KillShell", "mcp__acp__KillShell"),
])
def test_claude_code_steps_go_by_the_offered_or_the_builtin_name(names, fs_read, terminal, tool, sent):
    from harness.targets.acp.claude_code import ClaudeCodeAcpSession, ClaudeCodeAcpTarget
    session = ClaudeCodeAcpSession.__new__(ClaudeCodeAcpSession)
    session._target = ClaudeCodeAcpTarget("acp:claude-code")
    session.fs_read, session.fs_write, session.terminal, session.names = fs_read, fs_read, terminal, names
    assert session.tool_name(tool) == sent


def test_what_a_terminal_create_records_is_bounded(tmp_path):
    from acp.schema import EnvVariable

    from harness.targets.acp.client import RECORDED_ITEMS

    async def scenario():
        client, recorder = _bound(tmp_path, ClientPolicy(terminal="fake"))
        await client.create_terminal("s", "x" * 100_000, args=["a"] * 500,
                                     env=[EnvVariable(name=f"V{n}", value="1") for n in range(500)])
        return recorder.terminals[0]

    entry = asyncio.run(scenario())
    assert len(entry["args"]) == len(entry["env"]) == RECORDED_ITEMS
    assert len(entry["command"]) < 70_000 and entry["command"].endswith("100000 characters in all]")
