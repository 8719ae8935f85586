"""The acp: target against the reference ACP agent and a misbehaving one: offline, real processes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from acp_prober import MISBEHAVING, probe

from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.acp.target import AcpTarget, parse_spec
from harness.targets.base import TargetError, Unsupported
from harness.targets.options import TargetOptions

# One worker runs them all (tests/conftest.py): the first acp: target in a process imports the ACP
# package, over a second of processor time.
pytestmark = pytest.mark.xdist_group("acp-client")

HERE = Path(__file__).resolve().parent
REFERENCE = "acp:python -m reference_impl.acp_agent"


def _gone(pid: int) -> bool:
    """Returns True when ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture(scope="module")
def reference():
    target = AcpTarget(REFERENCE, timeout=20)
    target.start()
    yield target
    target.stop()


# -- the reference agent: seed 003 over ACP ----------------------------------------------------


def test_reference_writes_through_the_client_and_reports_the_seed_events(reference, workspace):
    session = reference.open("mcp-write-text-file", workspace, {})
    result = session.call("write_text_file", {"path": f"{workspace}/new.txt", "content": "Hello\n"})
    session.close()
    assert result.output == {"success": True, "bytes_written": 6, "created": True}
    assert (workspace / "new.txt").read_text() == "Hello\n"
    # file_exists asks the client first (line 1, limit 1), then the write goes to the client.
    assert result.extra["fs"] == [
        {"method": "fs/read_text_file", "path": f"{workspace}/new.txt", "line": 1, "limit": 1, "answer": "refused",
         "error": {"code": -32002, "message": f"file not found: {workspace}/new.txt"}},
        {"method": "fs/write_text_file", "path": f"{workspace}/new.txt", "content_bytes": 6, "answer": "served", "bytes": 6},
    ]
    updates = [event["params"]["update"] for event in result.events]
    assert [(u["sessionUpdate"], u.get("status")) for u in updates] == [("tool_call", "pending"), ("tool_call_update", "completed")]
    assert updates[0]["rawInput"] == {"path": f"{workspace}/new.txt", "content": "Hello\n"}
    assert updates[0]["toolCallId"] == updates[1]["toolCallId"]
    assert updates[1]["rawOutput"] == result.output
    assert all(event["method"] == "session/update" for event in result.events)


def test_reference_overwrite_reads_through_the_client(reference, workspace):
    (workspace / "old.txt").write_text("Old content\n")
    session = reference.open("mcp-write-text-file", workspace, {})
    result = session.call("write_text_file", {"path": f"{workspace}/old.txt", "content": "New content\n"})
    session.close()
    assert result.output == {"success": True, "bytes_written": 12, "created": False}
    assert result.extra["fs"][0]["answer"] == "served" and result.extra["fs"][0]["bytes"] == len("Old content\n")


def test_a_refused_write_falls_back_to_the_disk_as_the_seed_says(reference, workspace):
    session = reference.open("mcp-write-text-file", workspace, {"acp": {"writes": "refuse"}})
    result = session.call("write_text_file", {"path": f"{workspace}/f.txt", "content": "data"})
    session.close()
    write = result.extra["fs"][-1]
    assert write["method"] == "fs/write_text_file" and write["answer"] == "refused"
    # The seed's Rust falls back to tokio::fs::write: the client said no, the file is there anyway.
    assert result.output == {"success": True, "bytes_written": 4, "created": True}
    assert (workspace / "f.txt").read_text() == "data"


def test_without_fs_capabilities_the_agent_never_asks_the_client(workspace):
    target = AcpTarget("acp:fs=none python -m reference_impl.acp_agent", timeout=20)
    try:
        session = target.open("mcp-write-text-file", workspace, {})
        result = session.call("write_text_file", {"path": f"{workspace}/f.txt", "content": "x"})
        session.close()
    finally:
        target.stop()
    assert result.extra["fs"] == []
    assert result.output["created"] is True and (workspace / "f.txt").read_text() == "x"


def test_a_rejected_permission_fails_the_call_and_is_recorded(workspace):
    target = AcpTarget("acp:permission=reject python -m reference_impl.acp_agent --ask-permission", timeout=20)
    try:
        session = target.open("mcp-write-text-file", workspace, {})
        result = session.call("write_text_file", {"path": f"{workspace}/f.txt", "content": "x"})
        session.close()
    finally:
        target.stop()
    assert result.error == {"code": -32002, "message": f"Permission denied: {workspace}/f.txt"}
    assert result.extra["permissions"] == [{"toolCallId": "call-1", "title": "write_text_file", "kind": "edit",
                                            "options": ["allow_once", "reject_once"], "answer": "reject_once"}]
    assert not (workspace / "f.txt").exists()
    assert result.events[-1]["params"]["update"]["status"] == "failed"


# -- fs/* confined to the workspace ----------------------------------------------------------


def test_reads_are_served_with_line_and_limit(prober, workspace):
    (workspace / "f.txt").write_text("one\ntwo\nthree\nfour\n")
    result = probe(prober, workspace, [{"method": "read", "path": f"{workspace}/f.txt", "line": 2, "limit": 2},
                                        {"method": "read", "path": f"{workspace}/f.txt"}])
    assert result.output["results"] == [{"ok": "two\nthree\n"}, {"ok": "one\ntwo\nthree\nfour\n"}]
    assert result.extra["fs"][0] == {"method": "fs/read_text_file", "path": f"{workspace}/f.txt", "line": 2, "limit": 2,
                                     "answer": "served", "bytes": 10}


def test_requests_outside_the_workspace_are_refused_and_marked_as_escapes(prober, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    result = probe(prober, workspace, [
        {"method": "read", "path": str(outside)},
        {"method": "write", "path": str(tmp_path / "planted.txt"), "content": "x"},
        {"method": "write", "path": f"{workspace}/../planted2.txt", "content": "x"},
        {"method": "read", "path": "relative.txt"},
    ])
    assert all("error" in item for item in result.output["results"])
    assert [entry.get("escape", False) for entry in result.extra["fs"]] == [True, True, True, False]
    assert result.extra["escape_attempts"] == [str(outside), str(tmp_path / "planted.txt"), f"{workspace}/../planted2.txt"]
    assert not (tmp_path / "planted.txt").exists() and not (tmp_path / "planted2.txt").exists()
    assert outside.read_text() == "secret"


def test_symlinks_are_never_followed(prober, workspace, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("k")
    (workspace / "link.txt").symlink_to(secret / "key.txt")
    (workspace / "dirlink").symlink_to(secret)
    (workspace / "inner.txt").write_text("inside")
    (workspace / "inner-link.txt").symlink_to(workspace / "inner.txt")
    result = probe(prober, workspace, [
        {"method": "read", "path": f"{workspace}/link.txt"},
        {"method": "write", "path": f"{workspace}/link.txt", "content": "owned"},
        {"method": "read", "path": f"{workspace}/dirlink/key.txt"},
        {"method": "write", "path": f"{workspace}/dirlink/new.txt", "content": "owned"},
        {"method": "read", "path": f"{workspace}/inner-link.txt"},
    ])
    for item in result.output["results"]:
        assert "symbolic link" in item["error"]["message"]
    assert (secret / "key.txt").read_text() == "k" and not (secret / "new.txt").exists()


def test_only_regular_files_are_opened(prober, workspace):
    os.mkfifo(workspace / "fifo")
    (workspace / "dir").mkdir()
    result = probe(prober, workspace, [{"method": "read", "path": f"{workspace}/fifo"},
                                        {"method": "read", "path": f"{workspace}/dir"},
                                        {"method": "write", "path": f"{workspace}/fifo", "content": "x"}])
    messages = [item["error"]["message"] for item in result.output["results"]]
    assert "not a regular file" in messages[0] and "directory" in messages[1] and "not a regular file" in messages[2]


def test_writes_need_an_existing_parent_unless_told_to_create_it(prober, workspace):
    path = f"{workspace}/a/b/c.txt"
    result = probe(prober, workspace, [{"method": "write", "path": path, "content": "x"}])
    assert result.output["results"][0]["error"]["message"] == f"file not found: {path}"
    result = probe(prober, workspace, [{"method": "write", "path": path, "content": "x"}], {"acp": {"parents": "create"}})
    assert result.output["results"] == [{"ok": True}] and (workspace / "a/b/c.txt").read_text() == "x"


@pytest.mark.parametrize(("answer", "outcome", "kind"), [
    ("allow", {"outcome": "selected", "optionId": "a1"}, "allow_once"),
    ("allow_always", {"outcome": "selected", "optionId": "a2"}, "allow_always"),
    ("reject", {"outcome": "selected", "optionId": "r1"}, "reject_once"),
    ("cancel", {"outcome": "cancelled"}, "cancelled"),
])
def test_permission_requests_are_answered_per_scenario_option(prober, workspace, answer, outcome, kind):
    result = probe(prober, workspace, [], {"acp": {"permission": answer}}, permission=True)
    assert result.output["permission"] == outcome
    assert result.extra["permissions"][0]["answer"] == kind
    assert result.extra["permissions"][0]["options"] == ["allow_once", "allow_always", "reject_once"]


def test_bad_scenario_options_are_unsupported(prober, workspace):
    with pytest.raises(Unsupported, match="permission='maybe'"):
        prober.open("any", workspace, {"acp": {"permission": "maybe"}})
    with pytest.raises(Unsupported, match="options.acp"):
        prober.open("any", workspace, {"acp": {"colour": "blue"}})


# -- agents that break --------------------------------------------------------------------------


@pytest.mark.parametrize(("what", "kind", "words"), [
    ("hang", "timeout", "did not answer session/prompt within 2 s"),
    ("crash", "exited", "exited with code 3"),
    ("garbage", "protocol", "not JSON: 'this is not json-rpc'"),
    ("bad-update", "protocol", "a session/update the ACP schema rejects"),
])
def test_a_broken_agent_is_a_target_error_and_its_process_is_gone(workspace, what, kind, words):
    target = AcpTarget(MISBEHAVING, timeout=2)
    session = target.open("any", workspace, {})
    pid = target._shared.process.proc.pid
    started = time.monotonic()
    with pytest.raises(TargetError) as caught:
        session.call(what, {})
    assert time.monotonic() - started < 10
    assert caught.value.kind == kind and words in str(caught.value)
    session.close()
    target.stop()
    assert _gone(pid)


@pytest.mark.parametrize("setsid", [False, True], ids=["same-group", "own-session"])
def test_descendants_of_a_hanging_agent_are_killed(workspace, tmp_path, setsid):
    pidfile = tmp_path / "child.pid"
    target = AcpTarget(MISBEHAVING, timeout=3)
    session = target.open("any", workspace, {})
    with pytest.raises(TargetError):
        session.call("spawn-and-hang", {"pidfile": str(pidfile), "setsid": setsid})
    session.close()
    target.stop()
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(child)


def test_an_agent_that_runs_no_tool_says_so(prober, workspace):
    session = prober.open("any", workspace, {})
    with pytest.raises(TargetError, match="ran no tool call for no-tool; it said: I would rather not."):
        session.call("no-tool", {})
    session.close()


def test_the_runner_turns_a_hang_into_an_error_verdict_and_goes_on(scenario_from):
    hang = scenario_from("""
        id: t/hang
        profile: mcp-write-text-file
        title: hangs
        source: test
        steps:
          - tool: write_text_file
            args: {path: "${workspace}/f", content: ""}
    """)
    target = make_target(MISBEHAVING, TargetOptions(timeout=1, tool_map=["write_text_file=hang"]))
    with Runner(target) as runner:
        first = runner.run(hang)
        second = runner.run(hang)  # a fresh agent process after the broken one
    assert first.verdict == second.verdict == Verdict.ERROR
    assert "did not answer session/prompt" in first.reason


def test_an_agent_that_cannot_start_is_an_error_for_every_scenario(scenario_from):
    scenario = scenario_from("""
        id: t/any
        profile: mcp-write-text-file
        title: any
        source: test
        steps:
          - tool: write_text_file
            args: {path: "${workspace}/f", content: ""}
    """)
    with Runner(make_target(f"acp:{sys.executable} -c 'import sys; sys.exit(7)'", TargetOptions(timeout=5))) as runner:
        result = runner.run(scenario)
    assert result.verdict == Verdict.ERROR and "exited with code 7" in result.reason


# -- the spec ---------------------------------------------------------------------------------------


def test_spec_options_come_first_like_env():
    options, argv = parse_spec("acp:fs=none permission=reject python -m agent fs=x")
    assert options == {"fs": "none", "permission": "reject"}
    assert argv[1:] == ["-m", "agent", "fs=x"] and argv[0] == sys.executable


@pytest.mark.parametrize("spec", ["acp:", "acp:fs=none", "acp:fs=some agent", "acp:permission=maybe agent",
                                  "acp:timeout=-1 agent"])
def test_bad_specs_are_usage_errors(spec):
    with pytest.raises(ValueError):
        parse_spec(spec)


def test_the_slug_names_the_agent_and_the_client_options(reference):
    assert reference.slug == "acp-reference-acp-agent"
    assert AcpTarget("acp:fs=none permission=reject agent").slug == "acp-agent-fs-none-permission-reject"


# -- event shapes ------------------------------------------------------------------------------------


def test_seed003_projection_renames_and_nests_but_keeps_every_value():
    from harness.targets.acp.events import seed003
    start = {"method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "tool_call", "toolCallId": "c1", "kind": "edit", "status": "pending", "title": "t"}}}
    done = {"method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "rawOutput": {"a": 1},
        "_meta": {"m": 1}}}}
    message = {"method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}}
    assert seed003(start)["params"]["update"] == {"type": "toolCall", "id": "c1", "kind": "edit", "status": "pending", "title": "t"}
    assert seed003(done)["params"]["update"] == {"type": "toolCallUpdate", "id": "c1", "_meta": {"m": 1},
                                                 "fields": {"status": "completed", "rawOutput": {"a": 1}}}
    assert seed003(message) == message


def test_with_the_seed_shape_only_the_kind_differs_from_seed_003(workspace):
    target = AcpTarget("acp:events=seed003 python -m reference_impl.acp_agent", timeout=20)
    try:
        session = target.open("mcp-write-text-file", workspace, {})
        result = session.call("write_text_file", {"path": f"{workspace}/f.txt", "content": "Hello, World!\n"})
        session.close()
    finally:
        target.stop()
    begin, end = (event["params"]["update"] for event in result.events)
    assert begin == {"type": "toolCall", "id": "call-1", "title": "write_text_file", "kind": "edit", "status": "pending",
                     "locations": [{"path": f"{workspace}/f.txt"}],
                     "rawInput": {"path": f"{workspace}/f.txt", "content": "Hello, World!\n"}}
    assert end == {"type": "toolCallUpdate", "id": "call-1",
                   "fields": {"status": "completed", "rawOutput": {"success": True, "bytes_written": 14, "created": True}}}


# -- scenarios with client settings ------------------------------------------------------------------


def test_a_scenario_with_acp_settings_requires_an_acp_client(scenario_from):
    scenario = scenario_from("""
        id: t/acp
        profile: mcp-write-text-file
        title: refused
        source: test
        acp: {writes: refuse}
        steps:
          - tool: write_text_file
            args: {path: "${workspace}/f", content: ""}
    """)
    assert scenario.requires == ("acp",) and scenario.acp == {"writes": "refuse"}
    with Runner(make_target("reference")) as runner:
        result = runner.run(scenario)
    assert result.verdict == Verdict.SKIP and "no ACP client" in result.reason


def test_bad_acp_settings_are_a_scenario_error(scenario_from):
    from harness.scenario.loader import ScenarioError
    with pytest.raises(ScenarioError, match="acp"):
        scenario_from("""
            id: t/acp
            profile: mcp-write-text-file
            title: refused
            source: test
            acp: {writes: sometimes}
            steps:
              - tool: write_text_file
                args: {path: "${workspace}/f", content: ""}
        """)


def test_an_agent_that_swaps_its_workspace_for_a_link_gets_no_write_there_nor_a_secret(prober, workspace, tmp_path):
    """The red team's case: the agent moves its workspace away and links an outside folder in its
    place; the client, which once opened the root by its path for every request, wrote there and
    served a secret from there. Every request now walks from the root held since the session began."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET")
    (workspace / "mine.txt").write_text("mine")
    away = tmp_path / "moved-away"
    swap = {"workspace": str(workspace), "away": str(away), "link_to": str(outside)}
    try:
        result = probe(prober, workspace, [
            {"method": "write", "path": f"{workspace}/planted.txt", "content": "owned"},
            {"method": "read", "path": f"{workspace}/secret.txt"},
            {"method": "read", "path": f"{workspace}/mine.txt"},
        ], swap=swap)
    finally:
        if workspace.is_symlink():
            workspace.unlink()
            away.rename(workspace)
    assert not (outside / "planted.txt").exists() and not (workspace / "planted.txt").exists()
    assert "TOP-SECRET" not in str(result.output) and "TOP-SECRET" not in str(result.extra)
    assert all("moved or replaced" in item["error"]["message"] for item in result.output["results"]), result.output
    assert [entry.get("escape") for entry in result.extra["fs"]] == [True, True, True]


RELATIVE_WRITE = """
    id: t/relative
    profile: mcp-write-text-file
    title: a relative path is refused
    source: test
    given:
      dirs: [src]
    steps:
      - tool: write_text_file
        args: {path: "./src/new.txt", content: "x"}
        expect:
          error: true
    then:
      absent: [src/new.txt]
      others_unchanged: true
"""


def test_the_agent_runs_in_the_watched_working_folder_so_a_relative_write_is_seen(scenario_from):
    # The careless agent writes ./src/new.txt where its process runs. Started in the harness's own
    # folder, that write went where no scenario looks (or failed for want of src/) and the refusal
    # seemed to hold; in the run's working folder, laid out as the workspace, it is an escape.
    target = make_target(MISBEHAVING, TargetOptions(timeout=10, tool_map=["write_text_file=write-relative"]))
    with Runner(target) as runner:
        found = [runner.run(scenario_from(RELATIVE_WRITE)) for _ in range(2)]  # reset between the two
        folder = runner._working.path
    assert target.cwd == folder and Path(target.argv[1]).is_absolute()
    for result in found:
        assert result.verdict == Verdict.FAIL, result.reason
        (escape,) = [f for f in result.then_failures if f.path == "escape"]
        assert f"{folder}/src/new.txt (created in the candidate's working folder" in str(escape.observed)
    assert not Path(folder).exists()
