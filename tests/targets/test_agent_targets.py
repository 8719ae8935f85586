"""The agent targets (harness/targets/agents/): specs, skips, bindings, and a whole session against a
stand-in agent (tests/adapters/chat_agent.py) that speaks Chat Completions to the fake endpoint.

The real agents are exercised by their captures (make capture-<agent>) and by the live test at the
end, skipped with the make target to run when an agent is not installed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.targets import make_target
from harness.targets.agents import AGENTS, AgentTarget
from harness.targets.agents.catalog import _codex_errored, _opencode_errored, _qwen_errored
from harness.targets.agents.session import AgentSession
from harness.targets.agents.spec import PROMPT, AgentSpec, Launch, base_env
from harness.targets.base import TargetError, Unsupported
from harness.targets.options import TargetOptions

ROOT = Path(__file__).resolve().parents[2]
STAND_IN = ROOT / "tests" / "adapters" / "chat_agent.py"


def stand_in(mode: str = "") -> AgentSpec:
    def launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
        return Launch([sys.executable, str(STAND_IN), PROMPT], base_env(home, {"AGENT_BASE_URL": base_url, "AGENT_MODE": mode}))

    def errored(events: list[dict[str, Any]], call_id: str, text: str) -> bool | None:
        return next((e["failed"] for e in events if e.get("type") == "tool" and e.get("id") == call_id), None)

    return AgentSpec(name="stand-in", title="Stand-in agent", package="none", version="0.0.0", tools_dir="none",
                     executable="none", api="openai-chat", profile="stand-in-captured", tools={"read": "function"},
                     make_target="none", launch=launch, errored=errored)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    return root


def session(workspace: Path, mode: str = "", **options: Any) -> AgentSession:
    return AgentSession(stand_in(mode), executable=Path(sys.executable), workspace=workspace, call_timeout=20, **options)


def test_a_call_is_played_as_the_models_tool_call_and_its_result_comes_back(workspace: Path) -> None:
    agent = session(workspace)
    try:
        result = agent.call("read", {"filePath": str(workspace / "a.txt")})
        assert (result.output, result.error) == ("hello\n", None)
        (workspace / "a.txt").write_text("changed behind its back\n", encoding="utf-8")  # between two calls
        assert agent.call("read", {"filePath": str(workspace / "a.txt")}).output == "changed behind its back\n"
    finally:
        agent.close()
    assert agent.proc.returncode == 0
    assert [r.kind for r in agent.api.requests] == ["main", "main", "main"]


def test_the_agents_own_error_marking_makes_an_error(workspace: Path) -> None:
    agent = session(workspace)
    try:
        result = agent.call("read", {"filePath": str(workspace / "missing.txt")})
    finally:
        agent.close()
    assert result.output is None
    assert result.error == {"code": None, "message": f"cannot read {workspace}/missing.txt: No such file or directory"}


def test_a_side_request_first_is_answered_and_not_taken_for_the_main_loop(workspace: Path) -> None:
    agent = session(workspace, mode="title")
    try:
        assert agent.call("read", {"filePath": str(workspace / "a.txt")}).output == "hello\n"
    finally:
        agent.close()
    assert [r.kind for r in agent.api.requests] == ["side", "main", "main"]


def test_an_agent_that_exits_without_answering_is_a_target_error(workspace: Path) -> None:
    agent = session(workspace, mode="exit-early")
    try:
        with pytest.raises(TargetError, match="Stand-in agent exited without running read") as raised:
            agent.call("read", {"filePath": str(workspace / "a.txt")})
        assert "exit code: 3" in str(raised.value)
    finally:
        agent.close()


def test_a_tool_the_agent_lacks_is_a_target_error_not_a_call(workspace: Path) -> None:
    agent = session(workspace)
    try:
        with pytest.raises(TargetError, match="has no tool 'write'"):
            agent.call("write", {"filePath": "x"})
    finally:
        agent.close()
    assert agent.calls == 0 and agent.api.script.pending is None  # nothing was queued for the model to play


def test_a_binding_maps_the_profiles_call_onto_the_agents_tool(workspace: Path, tmp_path: Path) -> None:
    from harness.targets import bindings
    path = tmp_path / "binding.yaml"
    path.write_text("binding: 1\nprofile: claude-code\ntarget: stand-in\ntools:\n  Read:\n    tool: read\n"
                    "    args:\n      filePath: file_path\n", encoding="utf-8")
    agent = session(workspace, binding=bindings.load(path))
    try:
        assert agent.call("Read", {"file_path": str(workspace / "a.txt")}).output == "hello\n"
    finally:
        agent.close()
    sent = [r.answer for r in agent.api.requests if r.kind == "main"][0]
    assert '"name":"read"' in sent and "filePath" in sent


# --------------------------------------------------------------------------- target specs and skips


def test_each_agent_is_a_target_by_name() -> None:
    for name in ("codex", "opencode", "qwen-code"):
        target = make_target(name)
        assert isinstance(target, AgentTarget) and target.agent is AGENTS[name]
    assert make_target("codex:timeout=90").call_timeout == 90.0
    assert make_target("codex", TargetOptions(timeout=120)).call_timeout == 120.0
    for bad in ("codex:colour=red", "opencode:timeout", "qwen-code:timeout=soon"):
        with pytest.raises(ValueError):
            make_target(bad)


def test_a_missing_agent_skips_naming_its_make_target(tmp_path: Path) -> None:
    target = make_target(f"opencode:cli={tmp_path / 'nothing'}")
    info = target.start()
    assert (info.name, info.version) == ("opencode", "")
    reason = target.skip_reason({"profile": "opencode-captured", "steps": [{"tool": "read"}]})
    assert reason == "OpenCode not installed (make opencode installs opencode-ai (opencode-linux-x64) 1.18.33)"
    with pytest.raises(Unsupported):
        target.open("opencode-captured", tmp_path, {})


def test_other_profiles_skip_unless_a_binding_maps_them(tmp_path: Path) -> None:
    plain = make_target(f"qwen-code:cli={tmp_path / 'nothing'}")
    assert "runs only the qwen-code-captured profile" in plain.skip_reason({"profile": "claude-code", "steps": []})
    bound = make_target(f"qwen-code:cli={tmp_path / 'nothing'}",
                        TargetOptions(binding=ROOT / "bindings" / "qwen-code.claude-code.yaml"))
    scenario = {"profile": "claude-code", "steps": [{"tool": "Read"}, {"tool": "Edit"}]}
    assert bound.skip_reason(scenario).startswith("Qwen Code not installed")
    assert bound.start().profiles == ("qwen-code-captured", "claude-code")  # the runner offers only these
    assert "maps profile claude-code, not gemini-safe-patch" in bound.skip_reason({"profile": "gemini-safe-patch", "steps": []})


def test_the_agents_error_markings_are_read_from_their_own_records() -> None:
    # Qwen Code: stream-json tool_result blocks; OpenCode: tool parts' state; Codex: the result's first line.
    qwen = [{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c1", "is_error": True}]}}]
    assert (_qwen_errored(qwen, "c1", ""), _qwen_errored(qwen, "c2", "")) == (True, None)
    opencode = [{"type": "tool_use", "part": {"callID": "c1", "state": {"status": "error"}}},
                {"type": "tool_use", "part": {"callID": "c2", "state": {"status": "completed"}}}]
    assert [_opencode_errored(opencode, c, "") for c in ("c1", "c2", "c3")] == [True, False, None]
    assert _codex_errored([], "c", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n") is False
    assert _codex_errored([], "c", "Exit code: 1\nWall time: 0.1 seconds\n") is True
    assert _codex_errored([], "c", "apply_patch verification failed: x") is True


def test_the_launches_point_each_agent_at_loopback_only(tmp_path: Path) -> None:
    """Every agent's configuration names the fake endpoint and a dummy key, nothing else to reach."""
    for name, agent in AGENTS.items():
        home = tmp_path / name
        (home / "tmp").mkdir(parents=True)
        launch = agent.launch(agent, Path("/bin/agent"), home, tmp_path, "http://127.0.0.1:9")
        written = "\n".join(p.read_text(encoding="utf-8") for p in home.rglob("*") if p.is_file())
        assert "http://127.0.0.1:9/v1" in written + json.dumps(launch.env), name
        assert not [v for v in launch.env.values() if "://" in v and "127.0.0.1" not in v], name
        assert set(launch.env) >= {"HOME", "PATH", "TMPDIR"} and launch.env["HOME"] == str(home)


@pytest.mark.live
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_live_agent_reproduces_its_snapshot(name: str) -> None:
    """One captured scenario through `harness run` against the installed agent matches its committed snapshot."""
    import subprocess
    agent = AGENTS[name]
    if not agent.default_executable().is_file():
        pytest.skip(agent.not_installed)
    done = subprocess.run([sys.executable, "-m", "harness", "run", "-q", "--target", name, "--profile", agent.profile,
                           "-k", "behaviour/edit-crlf", "--jobs", "1",
                           "--snapshots", str(ROOT / "snapshots")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 match, 0 differ" in done.stdout + done.stderr
