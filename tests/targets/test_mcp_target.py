"""The mcp: target: the reference over MCP, purpose-built misbehaving servers, tool maps, and a real server.

The misbehaving server (``tests/adapters/mcp_misbehaving.py``) speaks JSON-RPC by hand so that it
starts in milliseconds; the reference server uses the SDK and costs a Python start-up, so the
tests that need it share one target where they can. Timeouts are short, bounds on elapsed time
generous: no test depends on how fast the machine is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.containment import sandbox
from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.content_spec import lone_surrogate_in
from harness.scenario.loader import load_text
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.base import TargetError, Unsupported
from harness.targets.bindings import BindingError, from_tool_map
from harness.targets.mcp.target import McpTarget, parse_spec, workspace_parent
from harness.targets.options import TargetOptions

# One worker runs them all (tests/conftest.py): the first mcp: target in a process imports the MCP
# SDK's client, over a second of processor time.
pytestmark = pytest.mark.xdist_group("mcp-client")

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "tests" / "adapters" / "mcp_misbehaving.py"
REFERENCE = "mcp:python -m reference_impl.mcp_server"
FILESYSTEM = ROOT / "tools" / "mcp-filesystem" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"


def misbehaving(mode: str = "none", *extra: str, timeout: float = 5.0, **options) -> McpTarget:
    """Returns a target on the misbehaving server in ``mode``."""
    return McpTarget(f"mcp:python {ADAPTER} --mode {mode} {' '.join(extra)}", timeout=timeout, **options)


WRITE = """
id: mcp/write-{lower}
profile: mcp-write-text-file
title: one write_text_file
source: test
steps:
  - tool: write_text_file
    args: {{path: "${{workspace}}/{name}.txt", content: "hi\\n"}}
    expect:
      output: {{success: true, bytes_written: 3, created: true}}
then:
  files:
    {name}.txt: "hi\\n"
"""


def write(name: str) -> str:
    """Returns the write scenario for the file ``<name>.txt``."""
    return WRITE.format(name=name, lower=name.lower())


def scenario(text: str, tmp_path: Path):
    """Returns the one scenario of a YAML text."""
    (found,) = load_text(text, tmp_path / "scenario.yaml")
    return found


def run(target: McpTarget, tmp_path: Path, *names: str):
    """Runs one write scenario per name (``MISBEHAVE`` triggers the mode) and returns the results."""
    with Runner(target) as runner:
        return [runner.run(scenario(write(name), tmp_path)) for name in names]


# -- the reference over MCP -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference_target():
    target = make_target(REFERENCE, TargetOptions(timeout=10.0))
    target.start()
    yield target
    target.stop()


class Lent:
    """The module's reference target, lent to one Runner: the Runner's stop leaves the server running
    for the next test (one server serves any number of runs: its sessions are keyed per scenario)."""

    def __init__(self, target: McpTarget) -> None:
        self._target = target

    def __getattr__(self, name: str):
        return getattr(self._target, name)

    def stop(self) -> None:
        pass


def _sends_lone_surrogate(scenario) -> bool:
    return any(lone_surrogate_in(getattr(step, "args", None)) for step in scenario.steps)


def test_the_reference_through_mcp_gives_the_in_process_verdicts_on_the_whole_catalog(reference_results,
                                                                                       reference_target) -> None:
    found = catalog.load([catalog.builtin_dir()])
    assert found.scenarios
    local = reference_results
    with Runner(Lent(reference_target)) as runner:
        remote = {s.id: runner.run(s) for s in found.scenarios}
    differ = []
    for s in found.scenarios:
        mine, theirs = remote[s.id], local[s.id]
        if mine.verdict is Verdict.SKIP and s.requires and theirs.verdict is not Verdict.SKIP:
            # faults exist on pyfakefs, in-process only; client settings need an ACP client
            assert "cannot realise" in mine.reason or ("no ACP client" in mine.reason and "acp" in s.requires)
            continue
        if mine.verdict is Verdict.SKIP and _sends_lone_surrogate(s) and theirs.verdict is not Verdict.SKIP:
            # the mcp SDK cannot send one (pydantic's JSON refuses it); the reason says so
            assert "cannot send an argument holding a lone surrogate" in mine.reason
            continue
        if mine.verdict is not theirs.verdict:
            differ.append(f"{s.id}: in-process {theirs.verdict} ({theirs.reason}), mcp {mine.verdict} ({mine.reason})")
    assert not differ, "\n".join(differ)
    assert sum(r.verdict is Verdict.ERROR for r in remote.values()) == 0


def test_normal_forms_and_channels(reference_target: McpTarget, tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    session = reference_target.open("mcp-write-text-file", tmp_path, {"session_id": "abc"})
    ok = session.call("write_text_file", {"path": f"{tmp_path}/new.txt", "content": "Hello\n"})
    assert ok.output == {"success": True, "bytes_written": 6, "created": True}
    assert ok.extra["channel"] == "result"
    assert [e["params"]["sessionId"] for e in ok.events] == ["abc", "abc"]  # options reached the session
    relative = session.call("write_text_file", {"path": "relative/path.txt", "content": "data"})
    assert relative.error == {"code": -32600, "message": "Path must be absolute: relative/path.txt"}
    assert relative.extra["channel"] == "jsonrpc-error"
    assert relative.events[1]["params"]["update"]["fields"]["status"] == "failed"
    session.close()

    claude = reference_target.open("claude-code", tmp_path, {})
    missing = claude.call("Read", {"file_path": f"{tmp_path}/nope.txt"})
    assert missing.error["code"] is None and missing.extra["channel"] == "isError"
    gemini = reference_target.open("gemini-safe-patch", tmp_path, {})
    many = gemini.call("read_many_files", {"paths": [f"{tmp_path}/new.txt"]})
    assert isinstance(many.output, list) and many.output[0]["content"] == "Hello\n"  # a list travels as JSON text
    assert gemini.call("read_file", {"file_path": f"{tmp_path}/dir"}).error["code"] == "EISDIR"


def test_every_scenario_gets_a_fresh_reference_session(reference_target: McpTarget, tmp_path: Path) -> None:
    text = """
id: mcp/read-then-write
profile: claude-code
title: Write of an existing file needs a Read in the same session
source: test
given:
  files: {a.txt: "old\\n"}
steps:
  - tool: TOOL
    args: ARGS
    expect: EXPECT
"""

    def step(tool: str, args: str, expect: str) -> str:
        return text.replace("TOOL", tool).replace("ARGS", args).replace("EXPECT", expect)

    read = step("Read", '{file_path: "${workspace}/a.txt"}', "{output: {$any: true}}")
    write = step("Write", '{file_path: "${workspace}/a.txt", content: "new"}', "{error: true}")
    runner = Runner(reference_target)  # the module's server: released, not stopped, after
    runner.start()
    try:
        assert runner.run(scenario(read, tmp_path)).verdict is Verdict.PASS
        assert runner.run(scenario(write, tmp_path)).verdict is Verdict.PASS  # the earlier Read does not count
    finally:
        runner.release()


def test_registry_and_spec() -> None:
    target = make_target(REFERENCE, TargetOptions(timeout=2.5, run_as=None, sandbox=False, tool_map=["a=b"], tool_map_file=None))
    assert isinstance(target, McpTarget) and target.timeout == 2.5 and target.binding.tool("a") == "b"
    assert parse_spec("mcp:node 'my server.js' --x=1") == ["node", "my server.js", "--x=1"]
    assert parse_spec("mcp:python -m x")[0] == sys.executable
    with pytest.raises(ValueError, match="needs a command line"):
        parse_spec("mcp:  ")
    assert not target.per_scenario
    assert McpTarget("mcp:node s.js ${workspace}").per_scenario
    assert McpTarget("mcp:node s.js {workspace}").per_scenario
    assert not McpTarget("mcp:node s.js {parent}").per_scenario


# -- where the workspace goes -------------------------------------------------------------------


ROOTED = """
id: mcp/rooted-{n}
profile: mcp-write-text-file
title: the server's root
source: test
steps:
  - tool: write_text_file
    args: {{path: "${{workspace}}/x.txt", content: "hi"}}
    expect:
      output: {{$subset: {{root: {root}}}}}
"""


def test_a_workspace_placeholder_starts_a_server_per_scenario_on_its_workspace(tmp_path: Path) -> None:
    target = misbehaving("none", "--root", "{workspace}")
    with Runner(target) as runner:
        results = [runner.run(scenario(ROOTED.format(n=n, root='"${workspace}"'), tmp_path)) for n in range(2)]
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], [r.reason for r in results]


def test_a_server_that_follows_roots_is_started_once_and_given_each_workspace_as_its_root(tmp_path: Path) -> None:
    target = misbehaving("none", "--roots", "--root", "{workspace}")
    with Runner(target) as runner:
        first = runner.run(scenario(ROOTED.format(n=1, root='"${workspace}"'), tmp_path))
        connection = target._connection
        second = runner.run(scenario(ROOTED.format(n=2, root='"${workspace}"'), tmp_path))
        assert target.uses_roots and not target.per_scenario
        assert target._connection is connection and connection.roots_asked == 3  # at start, then per scenario
    assert first.verdict is Verdict.PASS and second.verdict is Verdict.PASS, (first.reason, second.reason)
    assert first.steps[0].output["root"] != second.steps[0].output["root"]


def test_a_server_that_ignores_roots_still_gets_a_server_per_workspace(tmp_path: Path) -> None:
    target = misbehaving("none", "--root", "{workspace}")
    with Runner(target) as runner:
        runner.run(scenario(ROOTED.format(n=1, root='"${workspace}"'), tmp_path))
        assert not target.uses_roots and target.per_scenario


def test_a_parent_placeholder_starts_the_server_once_with_the_workspaces_parent(tmp_path: Path) -> None:
    target = misbehaving("none", "--root", "'${parent}'")
    with Runner(target) as runner:
        first = runner.run(scenario(ROOTED.format(n=1, root=f'"{workspace_parent()}"'), tmp_path))
        connection = target._connection
        second = runner.run(scenario(ROOTED.format(n=2, root=f'"{workspace_parent()}"'), tmp_path))
        assert target._connection is connection  # the same process for both
    assert first.verdict is Verdict.PASS and second.verdict is Verdict.PASS, (first.reason, second.reason)


# -- broken servers are verdicts ----------------------------------------------------------------


def test_a_call_that_never_answers_times_out_and_the_next_scenario_gets_a_fresh_server(tmp_path: Path) -> None:
    started = time.monotonic()
    hung, after = run(misbehaving("hang", timeout=1.0), tmp_path, "MISBEHAVE", "fine")
    assert hung.verdict is Verdict.ERROR and "did not answer within 1 s" in hung.reason
    assert after.verdict is Verdict.PASS, after.reason
    assert time.monotonic() - started < 20


def test_a_call_cut_by_its_time_limit_leaves_no_unretrieved_task_behind(tmp_path: Path, caplog) -> None:
    # The call's request ends later, when the server is stopped ("Connection closed"): asyncio printed
    # "Task exception was never retrieved" and a traceback into the run's output when nobody took it.
    import gc
    import logging
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        hung, _ = run(misbehaving("hang", timeout=1.0), tmp_path, "MISBEHAVE", "fine")
        gc.collect()
    assert hung.verdict is Verdict.ERROR and "did not answer within 1 s" in hung.reason
    assert not [r for r in caplog.records if r.name == "asyncio"], [r.getMessage() for r in caplog.records]


def test_a_slow_call_within_the_timeout_passes(tmp_path: Path) -> None:
    (slow,) = run(misbehaving("slow", "--delay", "0.5", timeout=3.0), tmp_path, "MISBEHAVE")
    assert slow.verdict is Verdict.PASS, slow.reason


def test_a_crash_mid_call_is_an_error_with_the_stderr_tail_and_the_run_goes_on(tmp_path: Path) -> None:
    crashed, after = run(misbehaving("crash"), tmp_path, "MISBEHAVE", "fine")
    assert crashed.verdict is Verdict.ERROR
    assert "closed the connection (exited or crashed)" in crashed.reason
    assert "segmentation fault (core dumped)" in crashed.reason  # the stderr tail
    assert after.verdict is Verdict.PASS, after.reason


def test_an_exit_before_initialise_is_an_error_for_every_scenario_with_the_stderr_tail(tmp_path: Path) -> None:
    with Runner(misbehaving("exit-early")) as runner:
        first, second = [runner.run(scenario(write(name), tmp_path)) for name in ("a", "b")]
    for result in (first, second):
        assert result.verdict is Verdict.ERROR
        assert "did not start" in result.reason and "initialize" in result.reason
    assert "no configuration found" in runner.start_error  # the stderr tail, once for the run


def test_an_initialise_that_never_answers_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.targets.mcp.target.START_TIMEOUT", 1.0)
    (result,) = run(misbehaving("hang-init", timeout=1.0), tmp_path, "a")
    assert result.verdict is Verdict.ERROR and "did not finish initialising within 1 s" in result.reason


def _pipes() -> int:
    """Returns how many pipes this process holds open."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            held += os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
        except OSError:  # the listing's own fd, or one closed meanwhile
            pass
    return held


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_start_that_times_out_leaves_no_pipe_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.targets.mcp.target.START_TIMEOUT", 0.5)

    def start_once() -> None:
        target = misbehaving("hang-init", timeout=0.5)
        with pytest.raises(TargetError, match="did not finish initialising"):
            target.start()
        target.stop()

    start_once()  # what a first start sets up once (the loop's self-pipe, the child watcher) is not a leak
    before = _pipes()
    for _ in range(3):
        start_once()
    deadline = time.monotonic() + 10  # a stderr tail's thread closes its end once it has read the end
    while _pipes() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pipes() == before  # the transport's two pipes to the server were left open per start


def test_a_command_that_does_not_exist_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with Runner(McpTarget("mcp:/nonexistent/server --x")) as runner:
        result = runner.run(scenario(write("a"), tmp_path))
    assert result.verdict is Verdict.ERROR and "cannot start '/nonexistent/server'" in result.reason


def test_stderr_noise_is_the_servers_business_and_stays_bounded(tmp_path: Path) -> None:
    target = misbehaving("stderr", "--noise", "8")
    with Runner(target) as runner:
        noisy = runner.run(scenario(write("MISBEHAVE"), tmp_path))
        kept = len(target._connection.stderr._data)
        quiet = runner.run(scenario(write("fine"), tmp_path))
    assert noisy.verdict is Verdict.PASS and quiet.verdict is Verdict.PASS, (noisy.reason, quiet.reason)
    assert 0 < kept <= 64 * 1024  # 8 MiB of noise, a bounded tail kept


def test_a_line_on_stdout_that_is_not_json_rpc_is_an_error(tmp_path: Path) -> None:
    noisy, after = run(misbehaving("stdout"), tmp_path, "MISBEHAVE", "fine")
    assert noisy.verdict is Verdict.ERROR and "not a JSON-RPC message" in noisy.reason
    assert "not a JSON-RPC message" in noisy.reason and "'writing file...'" in noisy.reason  # the line, quoted
    assert after.verdict is Verdict.PASS, after.reason


def test_an_answer_that_cannot_be_decoded_is_an_error_naming_the_bytes_not_a_timeout(tmp_path: Path) -> None:
    # A lone-surrogate escape makes the answer undecodable: said at once, with what was sent, and the
    # next scenario gets a fresh server.
    bad, after = run(misbehaving("surrogate", timeout=30.0), tmp_path, "MISBEHAVE", "fine")
    assert bad.verdict is Verdict.ERROR and "did not answer" not in bad.reason, bad.reason
    assert "could not be decoded" in bad.reason and "\\ud800" in bad.reason, bad.reason
    assert bad.seconds < 20, bad.seconds
    assert after.verdict is Verdict.PASS, after.reason


def test_a_write_outside_the_workspace_is_an_escape(tmp_path: Path) -> None:
    (escaped,) = run(misbehaving("escape"), tmp_path, "MISBEHAVE")
    assert escaped.verdict is Verdict.FAIL and "escape" in escaped.reason and "canary.txt" in escaped.reason


@pytest.mark.parametrize("mode, channel, code", [("is-error", "isError", None), ("rpc-error", "jsonrpc-error", -32002)])
def test_both_error_channels_are_errors_and_named(mode: str, channel: str, code, tmp_path: Path) -> None:
    target = misbehaving(mode)
    with Runner(target) as runner:
        result = runner.run(scenario(write("MISBEHAVE"), tmp_path))
    (step,) = result.steps
    assert step.error["code"] == code and step.extra["channel"] == channel
    assert result.verdict is Verdict.FAIL  # the scenario expected success


# -- tool maps ---------------------------------------------------------------------------------


def test_a_profile_tool_the_server_does_not_offer_is_a_skip_with_the_reason(tmp_path: Path) -> None:
    (result,) = run(misbehaving("none", "--tool", "write_file"), tmp_path, "a")
    assert result.verdict is Verdict.SKIP
    assert "does not offer tool write_text_file" in result.reason and "write_file" in result.reason


def test_a_tool_map_renames_tools_and_arguments(tmp_path: Path) -> None:
    target = misbehaving("none", "--tool", "write_file", "--arg", "content=text",
                         tool_map=["write_text_file=write_file", "write_text_file.content=text"])
    (result,) = run(target, tmp_path, "a")
    assert result.verdict is Verdict.PASS, result.reason


def test_a_tool_map_file_in_either_shape(tmp_path: Path) -> None:
    flat = tmp_path / "flat.yaml"
    flat.write_text("write_text_file: write_file\nwrite_text_file.content: text\n")
    nested = tmp_path / "nested.yaml"
    nested.write_text("write_text_file:\n  name: write_file\n  args: {content: text}\n")
    for file in (flat, nested):
        tools = from_tool_map([], file)
        assert tools.tool("write_text_file") == "write_file"
        assert tools.arguments("write_text_file", {"path": "/p", "content": "c"}) == {"path": "/p", "text": "c"}
    assert from_tool_map(["write_text_file=other"], flat).tool("write_text_file") == "other"  # the CLI wins
    target = misbehaving("none", "--tool", "write_file", "--arg", "content=text", tool_map_file=str(nested))
    (result,) = run(target, tmp_path, "a")
    assert result.verdict is Verdict.PASS, result.reason


@pytest.mark.parametrize("entry", ["write_text_file", "=x", "a.=b", "a="])
def test_a_bad_tool_map_entry_is_bad_usage(entry: str) -> None:
    with pytest.raises(BindingError):
        from_tool_map([entry])


def test_the_cli_hands_bindings_and_tool_maps_to_the_target(tmp_path: Path) -> None:
    from harness.cli.main import build_parser
    from harness.run.options import RunOptions
    args = build_parser().parse_args(["run", "--target", "mcp:x", "--tool-map", "a=b", "--tool-map", "a.c=d",
                                      "--tool-map-file", str(tmp_path / "m.yaml"), "--binding", str(tmp_path / "b.yaml")])
    options = RunOptions.from_namespace(args).target_options()
    assert options.tool_map == ("a=b", "a.c=d") and options.tool_map_file == tmp_path / "m.yaml"
    assert options.binding == tmp_path / "b.yaml"


def test_an_unsupported_call_is_raised_by_the_session(tmp_path: Path) -> None:
    target = misbehaving("none", "--tool", "write_file")
    try:
        target.start()
        session = target.open("mcp-write-text-file", tmp_path, {})
        with pytest.raises(Unsupported, match="does not offer tool write_text_file"):
            session.call("write_text_file", {"path": f"{tmp_path}/a", "content": ""})
    finally:
        target.stop()


SPAWN_ORDER = """\
import sys
from harness.targets.mcp.connection import Connection, LoopHere
from harness.util.packages import deferred_init
deferred_init("mcp", "mcp.client", "mcp_types")
import mcp.client.stdio  # not "as": that would take the name from the deferred package
stdio = sys.modules["mcp.client.stdio"]
spawn, seen = stdio._create_platform_compatible_process, []
async def spawned(*args, **kwargs):
    seen.append("mcp.client.session" in sys.modules or "mcp_types.methods" in sys.modules)
    return await spawn(*args, **kwargs)
stdio._create_platform_compatible_process = spawned
loop = LoopHere()
connection = Connection(loop, [sys.executable, sys.argv[1]])
connection.open(30)
connection.close()
loop.close()
print("session imported before the spawn:", seen)
"""


def test_the_server_is_started_before_the_clients_session_modules_are_imported() -> None:
    # What the session needs (its message types for both protocol versions: a third of a second)
    # is imported while the server starts, not before.
    done = subprocess.run([sys.executable, "-c", SPAWN_ORDER, str(ADAPTER)], capture_output=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert "session imported before the spawn: [False]" in done.stdout.decode()


@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_a_sandboxed_server_is_started_once_on_the_runs_workspace_folder(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner gives the run's one workspace folder before the start, so the server started to
    # learn its tools is started in the sandbox that binds it, and serves every scenario.
    started: list[object] = []
    connect = McpTarget._connect

    def counted(self, workspace, bound=None):
        started.append(bound)
        return connect(self, workspace, bound)
    monkeypatch.setattr(McpTarget, "_connect", counted)
    results = run(misbehaving(sandbox=True), tmp_path, "one", "two", "three")
    assert [result.verdict for result in results] == [Verdict.PASS] * 3, [result.reason for result in results]
    assert len(started) == 1 and started[0] is not None


def test_stop_ends_the_server(tmp_path: Path) -> None:
    target = misbehaving()
    target.start()
    connection = target._connection
    assert not connection._life.done()
    target.stop()
    assert connection._life.done()  # the client's connection task, and with it the server, ended


def test_a_command_that_does_not_exist_cannot_start() -> None:
    with pytest.raises(TargetError):
        McpTarget("mcp:/nonexistent/x").start()


# -- a real server no one here wrote -----------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not FILESYSTEM.is_file() or shutil.which("node") is None,
                    reason="the official filesystem server is not installed (make tools/mcp-filesystem/node_modules)")
def test_the_official_filesystem_server_ends_every_write_text_file_scenario_in_a_verdict() -> None:
    found = catalog.load([catalog.builtin_dir()])
    scenarios = found.select(profiles=["mcp-write-text-file"])
    target = make_target(f"mcp:node {FILESYSTEM} {{workspace}}", TargetOptions(timeout=10.0, tool_map=["write_text_file=write_file"]))
    with Runner(target) as runner:
        results = [runner.run(s) for s in scenarios]
        assert target.uses_roots  # one server for the run, each workspace given as its root
    errors = [f"{r.scenario.id}: {r.reason}" for r in results if r.verdict is Verdict.ERROR]
    assert not errors, "\n".join(errors)
    channels = {step.extra.get("channel") for r in results for step in r.steps if step.kind == "call"}
    assert "jsonrpc-error" not in channels  # it reports failures with isError, not seed 003's JSON-RPC errors
    assert {"isError", "result"} <= channels


# -- Streamable HTTP ---------------------------------------------------------------------------


@pytest.fixture
def http_reference():
    """Yields the URL of the reference served over Streamable HTTP on a free local port."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "reference_impl.mcp_server", "--http", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.1)
        yield f"mcp+http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


def test_the_reference_over_streamable_http_gives_the_in_process_verdicts(http_reference: str, reference_results) -> None:
    scenarios = [s for s in catalog.load([catalog.builtin_dir()]).select(profiles=["mcp-write-text-file", "claude-code"])
                 if not s.requires and not _sends_lone_surrogate(s)]  # neither can be sent through the mcp SDK
    local = [reference_results[s.id].verdict for s in scenarios]
    with Runner(make_target(http_reference, TargetOptions(timeout=10.0))) as runner:
        remote = [runner.run(s) for s in scenarios]
    assert [r.verdict for r in remote] == local, [(r.scenario.id, r.reason) for r in remote if r.verdict is Verdict.ERROR]


def test_an_http_server_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    with Runner(make_target("mcp+http://127.0.0.1:9/mcp", TargetOptions(timeout=2.0))) as runner:
        result = runner.run(scenario(write("a"), tmp_path))
    assert result.verdict is Verdict.ERROR and "could not be reached at http://127.0.0.1:9/mcp" in result.reason


def _rpc(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}


def test_the_reference_server_reads_long_lines_from_pipes_and_ends_with_its_input(tmp_path: Path) -> None:
    content = "x" * 300_000 + "\n"  # a line far over asyncio's default 64 KiB stream limit
    server = subprocess.Popen([sys.executable, "-m", "reference_impl.mcp_server"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        server.stdin.write(_rpc(INITIALIZE))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["result"]["serverInfo"]["name"] == "file-tool-conformance-reference"
        entry = {"id": "s1", "profile": "mcp-write-text-file", "workspace": str(tmp_path), "options": {}}
        server.stdin.write(_rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}) + _rpc(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "write_text_file", "arguments": {"path": f"{tmp_path}/big.txt", "content": content},
                        "_meta": {"file-tool-conformance/session": entry}}}))
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        assert answer["id"] == 2 and answer["result"]["structuredContent"]["bytes_written"] == len(content)
        server.stdin.close()
        assert server.wait(timeout=30) == 0  # the end of its input ends it
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        server.stdout.close()
        server.stderr.close()
    assert (tmp_path / "big.txt").read_text() == content


def test_the_reference_server_serves_a_file_as_input_too(tmp_path: Path) -> None:
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_bytes(_rpc(INITIALIZE))
    with requests.open("rb") as stdin, answers.open("wb") as stdout:  # not pipes: the SDK's own streams
        done = subprocess.run([sys.executable, "-m", "reference_impl.mcp_server"], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    (answer,) = [json.loads(line) for line in answers.read_text().splitlines()]
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "file-tool-conformance-reference"


SERVED_ALONE = """\
import sys, anyio
from reference_impl import mcp_server
anyio.run(mcp_server.serve, ".")
sys.stderr.write("client imported: %s; sdk init run: %s\\n" % (
    "mcp.client" in sys.modules, "__getattr__" not in vars(sys.modules["mcp"])))
"""


def test_the_reference_server_serves_stdio_without_importing_the_whole_sdk(tmp_path: Path) -> None:
    # The mcp package's __init__ imports the SDK's clients and every server with their HTTP stack
    # (about half a second of the server's start); stdio needs the low-level server alone.
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_rpc(INITIALIZE))
    with requests.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-c", SERVED_ALONE], stdin=stdin, capture_output=True, cwd=ROOT,
                              timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout.decode().splitlines()[0])["id"] == 1
    assert "client imported: False; sdk init run: False" in done.stderr.decode()


def test_profiles_a_server_advertises_are_honoured_and_the_rest_skipped(reference_target: McpTarget) -> None:
    captured = [s for s in catalog.load([catalog.builtin_dir()]).select(profiles=["claude-code-captured"])
                if "acp" not in s.requires][:1]  # one an MCP server could run, but for its profile
    with Runner(Lent(reference_target)) as runner:
        assert set(runner.info.profiles) == {"claude-code", "aptix-tul-004", "mcp-write-text-file", "gemini-safe-patch",
                                             "anthropic-text-editor", "codex-apply-patch"}
        (result,) = [runner.run(s) for s in captured]
    assert result.verdict is Verdict.SKIP and "does not offer profile claude-code-captured" in result.reason


def _line_within(fd: int, deadline: float) -> bytes:
    """Reads one line from ``fd`` (a pipe), waiting until ``deadline`` at most."""
    import select
    got = b""
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, f"no answer line in time: {got[:200]!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the server ended before answering: {got[:200]!r}"
            got += chunk
    return got


@pytest.mark.parametrize("size,repeat", [(10, 4), (4_000_000, 2)], ids=["small", "4MB"])
def test_the_reference_server_answers_a_call_sent_with_the_end_of_its_input(size: int, repeat: int,
                                                                             tmp_path: Path) -> None:
    # A client that writes its last call and closes stdin in the same moment must still get the answer.
    content = "y" * (size - 1) + "\n"
    (tmp_path / "f.txt").write_text(content)
    entry = {"id": "s1", "profile": "gemini-safe-patch", "workspace": str(tmp_path), "options": {}}
    last = _rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}) + _rpc(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"file_path": f"{tmp_path}/f.txt"},
                    "_meta": {"file-tool-conformance/session": entry}}})
    for _ in range(repeat):
        server = subprocess.Popen([sys.executable, "-m", "reference_impl.mcp_server"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        try:
            server.stdin.write(_rpc(INITIALIZE))
            server.stdin.flush()
            assert json.loads(_line_within(server.stdout.fileno(), time.monotonic() + 60))["id"] == 1
            out, err = server.communicate(last, timeout=120)  # one write, then stdin is closed at once
        finally:
            if server.poll() is None:
                server.kill()
            server.communicate()
        assert server.returncode == 0, err.decode(errors="replace")[-2000:]
        answers = [json.loads(line) for line in out.splitlines()]
        assert [a.get("id") for a in answers] == [2], err.decode(errors="replace")[-2000:]
        assert answers[0]["result"]["structuredContent"]["content"] == content


def test_the_reference_server_splits_lines_on_a_bare_carriage_return_too() -> None:
    # As the SDK's own text stdin (universal newlines) does.
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    given = _rpc(INITIALIZE)[:-1] + b"\r" + _rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})[:-1] \
        + b"\r\n" + _rpc(listing)[:-1] + b"\r"
    done = subprocess.run([sys.executable, "-m", "reference_impl.mcp_server"], input=given, capture_output=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2] and answers[1]["result"]["tools"]


def test_a_line_over_the_servers_limit_ends_its_input_without_a_traceback() -> None:
    # The limit lowered so the test need not send 256 MB; the line is answered by no crash, only the end.
    start = "import sys, reference_impl.mcp_server as m; m.MAX_LINE = 100_000; sys.exit(m.main([]))"
    given = _rpc(INITIALIZE) + b'{"jsonrpc": "2.0", "id": 2, "method": "' + b"z" * 300_000 + b'"}\n' \
        + _rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    done = subprocess.run([sys.executable, "-c", start], input=given, capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()[-2000:]
    assert b"over 100000 bytes" in done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1]


def test_a_request_left_failing_after_the_harness_gave_up_prints_no_traceback(caplog) -> None:
    # A request the SDK still ran when its server's connection closed ends with an exception no one
    # retrieves; asyncio printed it as a traceback in the middle of a run's report.
    import asyncio
    import gc

    from mcp.shared.exceptions import MCPError

    from harness.targets.mcp.connection import LoopThread

    class Closed(MCPError):
        def __init__(self) -> None:
            super().__init__(-32000, "Connection closed")

    loop = LoopThread()
    try:
        async def lost() -> None:
            raise Closed()

        async def start() -> None:
            asyncio.ensure_future(lost())  # never awaited, as the SDK's own request task
            await asyncio.sleep(0.05)
        loop.run(start(), 5)
        loop.run(asyncio.sleep(0.05), 5)
        gc.collect()
        loop.run(asyncio.sleep(0.05), 5)

        async def other() -> None:
            raise ValueError("a bug of the harness")

        async def start_other() -> None:
            asyncio.ensure_future(other())
            await asyncio.sleep(0.05)
        loop.run(start_other(), 5)
        gc.collect()
        loop.run(asyncio.sleep(0.05), 5)
    finally:
        loop.close()
    # asyncio reports through its logger (printed on stderr when nothing else handles it)
    logged = "\n".join(f"{r.getMessage()} {r.exc_info[1] if r.exc_info else ''}" for r in caplog.records)
    assert "Connection closed" not in logged
    assert "a bug of the harness" in logged  # anything else is still reported


def test_a_server_that_applies_its_first_roots_last_is_told_the_new_root_again(tmp_path: Path) -> None:
    # The official filesystem server checks each roots/list answer's folders on its own: the answer to the
    # roots it asked for on start can land after the first change's, leaving it on its start folder; its
    # stderr says it updated its roots, and the probe never named the new one ("did not take its new root").
    target = misbehaving("late-first-roots", "--roots", "--root", "{workspace}", timeout=20.0)
    with Runner(target) as runner:
        results = [runner.run(scenario(ROOTED.format(n=n, root='"${workspace}"'), tmp_path)) for n in range(2)]
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], [r.reason for r in results]
    assert results[0].steps[0].output["root"] != results[1].steps[0].output["root"]


def test_a_race_returns_its_task_ended_or_cut_and_leaves_a_late_one_running() -> None:
    import asyncio

    from harness.targets.mcp.connection import LoopHere

    async def answer(after: float) -> str:
        await asyncio.sleep(after)
        return "answered"

    here = LoopHere()
    try:
        ended = here.race(answer(0), 5, here.loop.create_future())
        assert ended.done() and ended.result() == "answered"
        cut = here.loop.create_future()
        here.loop.call_later(0.01, cut.set_result, None)  # as a stray line on stdout sets it
        waiting = here.race(answer(30), 5, cut)
        assert not waiting.done()  # left as it is: not cancelled
        with pytest.raises(TimeoutError):
            here.race(answer(30), 0.01, here.loop.create_future())
        late = [task for task in asyncio.all_tasks(here.loop) if task is not waiting]
        assert len(late) == 1 and not late[0].done()  # the timed-out one runs on too
        for task in [waiting, *late]:
            task.cancel()
        here.run(asyncio.wait({waiting, *late}), 5)
    finally:
        here.close()


def test_tasks_on_the_clients_loop_run_with_asyncio_named_and_the_callers_context() -> None:
    # anyio asks sniffio which library runs at every operation; unnamed, sniffio looks for asyncio's
    # current task each time. The loop's runner names it, as anyio.run does.
    import contextvars

    from harness.targets.mcp.connection import LoopHere
    sniffio = pytest.importorskip("sniffio")
    callers = contextvars.ContextVar("callers", default="unset")

    async def seen() -> tuple[str | None, str]:
        return sniffio.current_async_library_cvar.get(), callers.get()

    here = LoopHere()
    token = callers.set("set by the caller")
    try:
        assert here.run(seen(), 5) == ("asyncio", "set by the caller")
        assert here.race(seen(), 5, here.loop.create_future()).result() == ("asyncio", "set by the caller")
        assert sniffio.current_async_library_cvar.get() is None  # the caller's own context is left as it was
    finally:
        callers.reset(token)
        here.close()
