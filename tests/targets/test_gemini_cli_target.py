"""The gemini-cli target: the name, the adapter's protocol loop, and the real tools when installed.

The adapter tests run ``tools/gemini-cli/adapter.mjs`` (a copy, unchanged) beside a small fake
``@google/gemini-cli-core`` written into a temporary ``node_modules``: no package, no network. The
live tests at the end use the pinned package and skip when it is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness.record import snapshot
from harness.targets import gemini_cli, make_target
from harness.targets.base import Unsupported
from harness.targets.cmd.target import CmdTarget
from harness.targets.gemini_cli import NOT_INSTALLED, GeminiCliTarget, parse_spec

NODE = shutil.which("node") or shutil.which("nodejs")


def needs_node(test):
    """A live test: Node.js runs it; skipped, with the reason, without it."""
    return pytest.mark.live(pytest.mark.skipif(NODE is None, reason="Node.js is not installed")(test))


def needs_package(test):
    """A live test: the pinned gemini-cli package (make gemini-cli-tools); skipped, with the reason, without it."""
    return pytest.mark.live(pytest.mark.skipif(not gemini_cli.installed(), reason=NOT_INSTALLED)(test))

FAKE_CORE = textwrap.dedent(
    """
    import fs from 'node:fs';
    export const ApprovalMode = { YOLO: 'yolo' };
    export const DEFAULT_GEMINI_MODEL = 'fake-model';
    export class ClearcutLogger { static instance; }
    export class MessageBus { constructor() {} }
    export class Config {
      constructor(params) {
        this.params = params;
        this.storage = { initialize: async () => { this.initialized = true; } };
        console.log('banner on stdout that must not reach the protocol');
      }
    }
    class Tool {
      constructor(config) { this.config = config; }
    }
    export class ReadFileTool extends Tool {
      async validateBuildAndExecute(params) {
        if (!this.config.initialized) return { llmContent: 'x', error: { type: 'not_initialized', message: 'storage' } };
        try {
          return { llmContent: fs.readFileSync(params.file_path, 'utf8') };
        } catch {
          return { llmContent: 'gone', error: { type: 'file_not_found', message: `File not found: ${params.file_path}` } };
        }
      }
    }
    export class WriteFileTool extends Tool {
      async validateBuildAndExecute(params) {
        try {
          await this.config.baseLlmClient.generateJson({});
          return { llmContent: 'model reached' };
        } catch (err) {
          return { llmContent: 'no model', error: { type: 'execution_failed', message: err.message } };
        }
      }
    }
    export class EditTool extends Tool {
      async validateBuildAndExecute(params) {
        ClearcutLogger.instance.logEditStrategyEvent({ 'event.name': 'edit_strategy', 'event.timestamp': 'now', strategy: 'flexible' });
        return { llmContent: `edited ${params.file_path}`, home: process.env.HOME };
      }
    }
    export class ReadManyFilesTool extends Tool {
      async validateBuildAndExecute() { return { llmContent: [process.env.HOME, process.env.TMPDIR] }; }
    }
    export class GlobTool extends Tool {}
    export class LSTool extends Tool {}
    export class GrepTool extends Tool {}
    """
)


@pytest.fixture
def fake_adapter(tmp_path: Path) -> Path:
    """The committed adapter beside a fake core package, as `npm ci` would lay them out."""
    folder = tmp_path / "gemini-cli"
    package = folder / "node_modules" / "@google" / "gemini-cli-core"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@google/gemini-cli-core", "version": "9.9.9",
                                                      "type": "module", "main": "index.js"}))
    (package / "index.js").write_text(FAKE_CORE)
    shutil.copy(gemini_cli.adapter_path(), folder / "adapter.mjs")
    return folder / "adapter.mjs"


def _converse(adapter: Path, requests: list[dict], tmp: Path) -> list[dict]:
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([NODE, str(adapter)], input=lines, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp)})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_name_stands_for_the_adapter_command_line() -> None:
    target = make_target("gemini-cli")
    assert isinstance(target, GeminiCliTarget) and isinstance(target, CmdTarget)
    assert target.argv[-1] == str(gemini_cli.adapter_path()) and target.spec == "gemini-cli"
    assert target.timeout >= gemini_cli.STARTUP_TIMEOUT  # hello waits for the package to load
    assert parse_spec("gemini-cli:node=/opt/node/bin/node") == {"node": "/opt/node/bin/node"}
    for bad in ("gemini-cli:colour=red", "gemini-cli:node=", "gemini-clix"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_without_the_package_everything_skips_with_the_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(gemini_cli, "installed", lambda: False)
    target = GeminiCliTarget()
    info = target.start()
    assert info.profiles == gemini_cli.PROFILES and target._channel is None  # nothing was started
    assert target.skip_reason({"profile": "gemini-cli-captured", "steps": []}) == NOT_INSTALLED
    with pytest.raises(Unsupported, match="make gemini-cli-tools"):
        target.open("gemini-cli-captured", tmp_path, {})
    assert target.slug == f"gemini-cli-{gemini_cli.PINNED_VERSION}"


def test_a_scenario_calling_a_tool_gemini_cli_lacks_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gemini_cli, "installed", lambda: True)
    target = GeminiCliTarget()
    scenario = {"profile": "gemini-safe-patch", "steps": [{"tool": "read_file"}, {"tool": "safe_patch"}]}
    assert "no tool safe_patch" in (target.skip_reason(scenario) or "")


def test_the_adapter_scratch_folder_is_masked_in_snapshots() -> None:
    text = 'temp directory: /tmp/x/harness-gemini-AbC123/session/home/.gemini/tmp/ws"'
    assert snapshot.mask_text(text, GeminiCliTarget.snapshot_masks) == 'temp directory: ${gemini-scratch}/session/home/.gemini/tmp/${workspace-name}"'


@needs_node
def test_adapter_speaks_the_protocol_and_keeps_stdout_for_it(fake_adapter: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    answers = _converse(fake_adapter, [
        {"op": "hello", "protocol": 1},
        {"op": "open", "session": "s1", "profile": "gemini-cli-captured", "workspace": str(ws), "options": {}},
        {"op": "call", "session": "s1", "tool": "read_file", "args": {"file_path": str(ws / "a.txt")}},
        {"op": "call", "session": "s1", "tool": "read_file", "args": {"file_path": str(ws / "b.txt")}},
        {"op": "call", "session": "s1", "tool": "replace", "args": {"file_path": "a.txt"}},
        {"op": "call", "session": "s1", "tool": "safe_patch", "args": {}},
        {"op": "open", "session": "s2", "profile": "claude-code", "workspace": str(ws), "options": {}},
        {"op": "close", "session": "s1"},
        {"op": "bye"},
    ], tmp_path)
    assert answers[0] == {"ok": True, "name": "gemini-cli", "version": "9.9.9", "profiles": list(gemini_cli.PROFILES)}
    assert answers[1] == {"ok": True}
    assert answers[2] == {"ok": True, "output": "alpha\n"}
    # What the model is handed on failure is error.message, not llmContent; the type is the code.
    assert answers[3] == {"ok": True, "error": {"code": "file_not_found", "message": f"File not found: {ws / 'b.txt'}"}}
    # Telemetry is recorded as events without its timestamp, never sent.
    assert answers[4] == {"ok": True, "output": "edited a.txt", "events": [{"event": "edit_strategy", "strategy": "flexible"}]}
    assert answers[5]["ok"] is False and "unknown tool 'safe_patch'" in answers[5]["reason"]
    assert answers[6]["ok"] is False and "unknown profile" in answers[6]["reason"]
    assert answers[7:] == [{"ok": True}, {"ok": True}]


@needs_node
def test_adapter_has_no_model_and_keeps_home_and_temp_in_its_scratch(fake_adapter: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    answers = _converse(fake_adapter, [
        {"op": "hello", "protocol": 1},
        {"op": "open", "session": "s1", "profile": "gemini-cli-captured", "workspace": str(ws), "options": {}},
        {"op": "call", "session": "s1", "tool": "write_file", "args": {"file_path": "x", "content": "y"}},
        {"op": "call", "session": "s1", "tool": "read_many_files", "args": {}},
        {"op": "bye"},
    ], tmp_path)
    assert answers[2]["error"] == {"code": "execution_failed",
                                   "message": "offline conformance adapter: no model client (generateJson)"}
    home, temp = answers[3]["output"]
    assert Path(home).name == "home" and Path(home).parent.parent.name.startswith("harness-gemini-")
    assert Path(temp).parent == Path(home).parent.parent and Path(home).is_relative_to(tmp_path)
    assert not Path(home).parent.parent.exists()  # removed at exit


# ------------------------------------------------------------------ the real tools


@pytest.fixture(scope="module")
def live_target():
    target = GeminiCliTarget()
    target.start()
    yield target
    target.stop()


@needs_node
@needs_package
def test_real_replace_falls_back_to_flexible_matching_without_telling_the_model(live_target, tmp_path: Path) -> None:
    assert live_target.info.version == gemini_cli.PINNED_VERSION
    (tmp_path / "a.py").write_text("def f():\n    if x:\n        y = 1\n")
    session = live_target.open("gemini-cli-captured", tmp_path, {})
    try:
        result = session.call("replace", {"file_path": str(tmp_path / "a.py"), "instruction": "change y",
                                          "old_string": "if x:\n    y = 1", "new_string": "if x:\n    y = 2"})
    finally:
        session.close()
    assert result.events == [{"event": "edit_strategy", "strategy": "flexible"}]
    assert result.output.startswith(f"Successfully modified file: {tmp_path / 'a.py'} (1 replacements).")
    assert "flexible" not in result.output
    assert (tmp_path / "a.py").read_text() == "def f():\n    if x:\n        y = 2\n"


@needs_node
@needs_package
def test_real_read_file_window_carries_the_truncation_notice(live_target, tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("".join(f"line {n}\n" for n in range(1, 6)))
    session = live_target.open("gemini-cli-captured", tmp_path, {})
    try:
        result = session.call("read_file", {"file_path": str(tmp_path / "t.txt"), "start_line": 2, "end_line": 3})
    finally:
        session.close()
    assert "Status: Showing lines 2-3 of 6 total lines." in result.output
    assert result.output.endswith("--- FILE CONTENT (truncated) ---\nline 2\nline 3")


def test_the_project_temp_directory_named_after_the_workspace_is_masked() -> None:
    # "ws" for a run's first workspace, "ws-8" for its eighth: the snapshot must not depend on the order.
    for name in ("ws", "ws-8", "ws-26"):
        text = ("resolves outside the allowed workspace directories: /tmp/harness-abcdefgh/ws or the project temp "
                f"directory: /tmp/harness-gemini-Ab12Cd/session/home/.gemini/tmp/{name}")
        masked = snapshot.mask_text(text, GeminiCliTarget.snapshot_masks)
        assert masked.endswith("directory: ${gemini-scratch}/session/home/.gemini/tmp/${workspace-name}"), masked


def test_the_adapter_runs_in_the_runs_watched_working_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    # gemini-cli is a cmd: command line: the adapter's process starts in the run's working folder
    # (laid out as each workspace and watched), its script named by an absolute path. Its tools
    # resolve a relative path against their targetDir, the workspace, where `then` sees it.
    from harness.run.runner import Runner
    monkeypatch.setattr(gemini_cli, "installed", lambda: False)  # nothing started: the folder is given first
    target = GeminiCliTarget("gemini-cli")
    with Runner(target) as runner:
        runner.start()
        folder = runner._working.path
        assert target.cwd == folder and Path(target.argv[-1]).is_absolute()
    assert not Path(folder).exists()
