"""The cmd: target against a purpose-built misbehaving adapter: every broken candidate is a verdict.

Each test starts ``tests/adapters/misbehaving.py`` in one mode and checks the verdict and its
reason text, directly on the target (open/call/close) or through the runner on a tiny scenario.
No test depends on how fast the machine is: timeouts are short, bounds on elapsed time generous.
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from harness.containment import sandbox
from harness.run.runner import Runner
from harness.scenario.loader import load_text
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.base import TargetError, Unsupported
from harness.targets.cmd.target import CmdTarget, parse_spec
from harness.targets.options import TargetOptions
from tests.adapters.run_as import reference_for_nobody

ADAPTER = Path(__file__).resolve().parents[1] / "adapters" / "misbehaving.py"
REFERENCE = "cmd:python -m reference_impl.serve"


def misbehaving(mode: str, *extra: str, timeout: float = 5.0, **options) -> CmdTarget:
    """Returns a target running the misbehaving adapter in ``mode``."""
    spec = f"cmd:python {ADAPTER} --mode {mode} {' '.join(extra)}"
    return CmdTarget(spec, timeout=timeout, **options)


def scenario(text: str, tmp_path: Path):
    """Returns the one scenario of a YAML text."""
    (found,) = load_text(text, tmp_path / "scenario.yaml")
    return found


WRITE = """
id: cmd/write-{slug}
profile: claude-code
title: one Write
source: test
steps:
  - tool: Write
    args: {{file_path: "{name}.txt", content: "hi\\n"}}
"""


def run(target: CmdTarget, tmp_path: Path, *names: str):
    """Runs one Write scenario per name (``MISBEHAVE`` triggers the mode) and returns the results."""
    with Runner(target) as runner:
        return [runner.run(write(name, tmp_path)) for name in names]


def write(name: str, tmp_path: Path):
    """Returns a scenario writing ``<name>.txt``."""
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return scenario(WRITE.format(name=name, slug=slug), tmp_path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


# -- the happy path ----------------------------------------------------------------------------


def test_registry_makes_a_cmd_target_with_the_run_wide_options() -> None:
    target = make_target(REFERENCE, TargetOptions(timeout=2.5, run_as=None, sandbox=False))
    assert isinstance(target, CmdTarget)
    assert target.timeout == 2.5
    assert target.argv == [sys.executable, "-m", "reference_impl.serve"]


def test_spec_is_split_like_a_shell_would() -> None:
    assert parse_spec("cmd:node 'my adapter.js' --x=1") == ["node", "my adapter.js", "--x=1"]
    with pytest.raises(ValueError, match="needs a command line"):
        parse_spec("cmd:  ")


def test_reference_over_the_protocol_gives_normal_forms(workspace: Path) -> None:
    target = CmdTarget(REFERENCE)
    info = target.start()
    try:
        assert info.name == "reference"
        assert "claude-code" in info.profiles
        (workspace / "a.txt").write_text("one\n")
        session = target.open("claude-code", workspace, {})
        assert session.name == "s1"
        read = session.call("Read", {"file_path": str(workspace / "a.txt")})
        assert read.error is None and "one" in read.output
        edit = session.call("Edit", {"file_path": str(workspace / "missing.txt"), "old_string": "a", "new_string": "b"})
        assert edit.failed and edit.error["code"] is None
        session.close()
        assert target.open("claude-code", workspace, {}).name == "s2"
    finally:
        target.stop()


def test_unknown_tool_is_an_adapter_failure_and_the_process_goes_on(workspace: Path) -> None:
    target = CmdTarget(REFERENCE)
    target.start()
    try:
        session = target.open("claude-code", workspace, {})
        with pytest.raises(TargetError, match=r"the adapter failed \(call Nope\): unknown tool 'Nope'"):
            session.call("Nope", {})
        assert session.call("Write", {"file_path": str(workspace / "b.txt"), "content": "x"}).error is None
    finally:
        target.stop()


def test_stop_ends_the_process(workspace: Path) -> None:
    target = misbehaving("none")
    target.start()
    channel = target._channel
    target.stop()
    assert channel.proc.returncode == 0


# -- hangs and slowness ------------------------------------------------------------------------


def test_a_call_that_never_answers_times_out_and_the_next_scenario_gets_a_fresh_process(tmp_path: Path) -> None:
    target = misbehaving("hang", timeout=1.0)
    started = time.monotonic()
    with Runner(target) as runner:
        first_pid = target._channel.pid
        hung = runner.run(write("MISBEHAVE", tmp_path))
        fine = runner.run(write("fine", tmp_path))
        second_pid = target._channel.pid
    assert time.monotonic() - started < 60  # it returned at all: the hang did not hang the harness
    assert hung.verdict is Verdict.ERROR
    assert "did not answer within 1 s" in hung.reason
    assert "misbehaving with mode hang" in hung.reason  # the stderr tail
    assert fine.verdict is Verdict.PASS
    assert second_pid != first_pid


def test_a_slow_call_within_the_timeout_passes(tmp_path: Path) -> None:
    (result,) = run(misbehaving("slow", "--sleep", "0.3", timeout=10.0), tmp_path, "MISBEHAVE")
    assert result.verdict is Verdict.PASS, result.reason


def test_a_hello_that_never_answers_is_an_error_for_every_scenario(tmp_path: Path) -> None:
    results = run(misbehaving("hello-hangs", timeout=1.0), tmp_path, "a", "b")
    assert [r.verdict for r in results] == [Verdict.ERROR, Verdict.ERROR]
    assert "did not answer within 1 s (hello)" in results[0].reason


# -- crashes -----------------------------------------------------------------------------------


def test_a_crash_mid_call_names_the_exit_code_and_the_stderr_tail(tmp_path: Path) -> None:
    crashed, after = run(misbehaving("crash"), tmp_path, "MISBEHAVE", "after")
    assert crashed.verdict is Verdict.ERROR
    assert "exited with code 7 before answering" in crashed.reason
    assert "fatal: simulated crash in the middle of a call" in crashed.reason
    assert after.verdict is Verdict.PASS  # restarted for the next scenario


def test_a_process_that_died_between_scenarios_is_restarted_before_the_next(tmp_path: Path) -> None:
    results = run(misbehaving("exit-after-close"), tmp_path, "a", "b", "c")
    assert [r.verdict for r in results] == [Verdict.PASS] * 3, [r.reason for r in results]


def test_an_exit_before_hello_names_the_exit_code_and_the_stderr_tail(tmp_path: Path) -> None:
    target = misbehaving("exit-before-hello")
    with pytest.raises(TargetError) as caught:
        target.start()
    assert "exited with code 3" in str(caught.value)
    assert "cannot load configuration file adapter.toml" in caught.value.detail
    with Runner(misbehaving("exit-before-hello")) as runner:
        results = [runner.run(write(name, tmp_path)) for name in ("a", "b")]
    assert [r.verdict for r in results] == [Verdict.ERROR, Verdict.ERROR]
    assert "exited with code 3" in results[1].reason  # each scenario: one short line
    assert "\n" not in results[1].reason and "adapter.toml" not in results[1].reason
    assert "cannot load configuration file adapter.toml" in runner.start_error  # the stderr tail, once


def test_a_command_that_does_not_exist_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (result,) = run(CmdTarget("cmd:/nonexistent/adapter --x"), tmp_path, "a")
    assert result.verdict is Verdict.ERROR
    assert "cannot start '/nonexistent/adapter'" in result.reason


# -- what comes out on stdout ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("not-json", "wrote a line that is not JSON (call Write): 'this is not json {'"),
        ("not-protocol", "not a protocol call response (call Write): '{\"jsonrpc\": \"2.0\""),
        ("log", "wrote a line that is not JSON (call Write): 'INFO loading tool'"),
    ],
)
def test_stdout_that_is_not_a_protocol_response_is_named(mode: str, expected: str, tmp_path: Path) -> None:
    broken, after = run(misbehaving(mode), tmp_path, "MISBEHAVE", "after")
    assert broken.verdict is Verdict.ERROR
    assert expected in broken.reason
    assert f"misbehaving with mode {mode}" in broken.reason  # the stderr tail
    assert after.verdict is Verdict.PASS


def test_a_second_line_after_an_answer_is_caught_at_the_next_request(workspace: Path) -> None:
    target = misbehaving("extra-line")
    target.start()
    try:
        session = target.open("claude-code", workspace, {})
        assert session.call("Write", {"file_path": "MISBEHAVE.txt", "content": "x"}).error is None
        time.sleep(0.2)
        with pytest.raises(TargetError, match="wrote output nobody asked for: '.*a second answer"):
            session.call("Write", {"file_path": "b.txt", "content": "x"})
    finally:
        target.stop()


def test_an_oversized_line_is_cut_off_without_reading_it_all(workspace: Path) -> None:
    target = misbehaving("huge", timeout=30.0)
    target.start()
    try:
        session = target.open("claude-code", workspace, {})
        tracemalloc.start()
        try:
            with pytest.raises(TargetError) as caught:
                session.call("Write", {"file_path": "MISBEHAVE.txt", "content": "x"})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        target.stop()
    assert "wrote a response line longer than the cap of 16 MiB" in str(caught.value)
    assert "starting '{\"ok\": true, \"output\": \"xxx" in str(caught.value)
    assert peak < 24 * 1024 * 1024  # the 50 MiB line was never held whole


def test_the_line_cap_is_configurable(workspace: Path) -> None:
    target = CmdTarget(REFERENCE, line_cap=512)
    target.start()
    try:
        session = target.open("claude-code", workspace, {})
        (workspace / "a.txt").write_text("x" * 1000)
        with pytest.raises(TargetError, match="longer than the cap of 512 bytes"):
            session.call("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        target.stop()


# -- adapter failures --------------------------------------------------------------------------


def test_ok_false_is_an_error_verdict_with_the_reason(tmp_path: Path) -> None:
    failed, after = run(misbehaving("adapter-fails"), tmp_path, "MISBEHAVE", "after")
    assert failed.verdict is Verdict.ERROR
    assert "the adapter failed (call Write): simulated adapter failure: tool table not loaded" in failed.reason
    assert after.verdict is Verdict.PASS


# -- the handshake -----------------------------------------------------------------------------


def test_an_unsupported_protocol_version_is_an_error_for_every_scenario(tmp_path: Path) -> None:
    target = misbehaving("hello-protocol-2")
    with Runner(target) as runner:
        results = [runner.run(write(name, tmp_path)) for name in ("a", "b")]
        why = runner.start_error
    assert [r.verdict for r in results] == [Verdict.ERROR, Verdict.ERROR]
    assert "speaks cmd: protocol version 2; this harness speaks version 1" in why


def test_a_hello_that_declines_the_protocol_is_an_error_with_its_reason(tmp_path: Path) -> None:
    target = misbehaving("hello-declines")
    with Runner(target) as runner:
        (result,) = [runner.run(write("a", tmp_path))]
        why = runner.start_error
    assert result.verdict is Verdict.ERROR
    assert "declined cmd: protocol version 1: this adapter only speaks protocol 2" in why


def test_a_hello_without_the_scenario_profile_skips_with_the_reason(tmp_path: Path, workspace: Path) -> None:
    (result,) = run(misbehaving("none", "--profiles", "gemini-safe-patch"), tmp_path, "a")
    assert result.verdict is Verdict.SKIP
    assert result.reason == "the candidate does not offer profile 'claude-code' (its hello lists: gemini-safe-patch)"
    target = misbehaving("none", "--profiles", "gemini-safe-patch")
    target.start()
    try:
        with pytest.raises(Unsupported, match=r"its hello lists: gemini-safe-patch"):
            target.open("claude-code", workspace, {})
    finally:
        target.stop()


# -- escapes and permissions -------------------------------------------------------------------


def test_a_write_outside_the_workspace_is_an_escape_naming_the_path(tmp_path: Path) -> None:
    escaped, after = run(misbehaving("escape"), tmp_path, "MISBEHAVE", "after")
    assert escaped.verdict is Verdict.FAIL
    assert "escape" in escaped.reason
    assert "escaped.txt" in escaped.reason
    assert after.verdict is Verdict.PASS


PERMISSIONS = """
id: cmd/permission-denied
profile: claude-code
title: reading an unreadable file fails
source: test
requires: [permissions]
given:
  files:
    secret.txt: {content: "top secret\\n", mode: "0000"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/secret.txt"}
    expect:
      error: {message: {$regex: "(?i)permission denied"}}
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="only as root do file modes not bite")
def test_permission_scenarios_are_skipped_as_root_without_run_as(tmp_path: Path) -> None:
    target = CmdTarget(REFERENCE)
    assert "permissions" not in target.realises
    found = scenario(PERMISSIONS, tmp_path)
    assert "--run-as USER" in target.skip_reason(found)
    with Runner(target) as runner:
        result = runner.run(found)
    assert result.verdict is Verdict.SKIP
    assert "permissions" in result.reason


@pytest.mark.skipif(reference_for_nobody() is None, reason="needs root, the user nobody and a system python3")
def test_run_as_realises_permissions_and_hands_over_the_workspace(tmp_path: Path) -> None:
    spec, env = reference_for_nobody()
    target = CmdTarget(spec, run_as="nobody", env=env)
    assert "permissions" in target.realises
    with Runner(target) as runner:
        denied = runner.run(scenario(PERMISSIONS, tmp_path))
        written = runner.run(write("${workspace}/mine", tmp_path))
    assert denied.verdict is Verdict.PASS, denied.reason
    assert written.verdict is Verdict.PASS, written.reason


def test_run_as_an_unknown_user_is_bad_usage() -> None:
    with pytest.raises(ValueError, match="no such user"):
        make_target(REFERENCE, TargetOptions(run_as="no-such-user-here"))


# -- the sandbox -------------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_the_sandbox_blocks_a_write_outside_the_workspace(tmp_path: Path) -> None:
    escaped, after = run(misbehaving("escape", sandbox=True), tmp_path, "MISBEHAVE", "after")
    assert escaped.verdict is Verdict.ERROR  # the adapter crashed on the read-only file system
    assert "Read-only file system" in escaped.reason
    assert "wrote outside the workspace" not in escaped.reason  # blocked, so nothing to detect
    assert after.verdict is Verdict.PASS, after.reason


# -- the working folder ------------------------------------------------------------------------


RELATIVE = """
id: cmd/write-relative
profile: claude-code
title: a relative Write is refused
source: 001-claude-code-read-write-edit.md §Path Resolution
given:
  dirs: [src]
steps:
  - tool: Write
    args: {file_path: "./src/index.ts", content: "x"}
    expect:
      error: {message: {$regex: "\\\\S"}}
then:
  absent: [src/index.ts]
  others_unchanged: true
"""


def test_a_relative_write_lands_in_the_watched_working_folder_and_is_an_escape(tmp_path: Path) -> None:
    # The careless adapter writes ./src/index.ts where it runs. In the harness's own folder, with no
    # src/ there, the write failed and the refusal the scenario expects seemed to hold; in the run's
    # working folder, laid out as the workspace (src/ is there), it succeeds and is seen.
    target = misbehaving("relative-cwd")
    with Runner(target) as runner:
        result = runner.run(scenario(RELATIVE, tmp_path))
        folder = runner._working.path
        again = runner.run(scenario(RELATIVE, tmp_path))  # the folder was reset: the same again, not a leftover
    assert target.cwd == folder and Path(target.argv[1]).is_absolute()
    for found in (result, again):
        assert found.verdict is Verdict.FAIL, found.reason
        (escape,) = [f for f in found.then_failures if f.path == "escape"]
        assert f"{folder}/src/index.ts (created in the candidate's working folder" in str(escape.observed)
    assert not Path(folder).exists()  # removed with the run


def test_a_working_folder_chosen_for_the_target_is_kept(tmp_path: Path) -> None:
    target = misbehaving("none", cwd=str(tmp_path))
    with Runner(target) as runner:
        (result,) = [runner.run(write("fine", tmp_path))]
    assert target.cwd == str(tmp_path) and runner._working is None and result.verdict is Verdict.PASS
