"""The real third-party tools of docs/real-world.md, each through its binding: judged on effects and
outcome, a tool fails only the scenarios docs/real-world.md names as its real divergences.

Each test skips with the reason when its tool is not installed (``make real-tools`` installs them,
pinned, under tools/). desktop-commander starts slowly, so its test runs the scenarios named for
it plus a sample of the others; the other two run their whole profile.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness.run.runner import Runner
from harness.scenario import aspects, catalog
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.options import TargetOptions

ROOT = Path(__file__).resolve().parents[2]
REAL_WORLD = ROOT / "docs" / "real-world.md"
FILESYSTEM = ROOT / "tools/mcp-filesystem/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
DESKTOP_COMMANDER = ROOT / "tools/desktop-commander/node_modules/@wonderwhy-er/desktop-commander/dist/index.js"
TEXT_EDITOR = ROOT / "tools/mcp-text-editor/venv/bin/mcp-text-editor"

TOOLS = {
    # name in docs/real-world.md: (installed file, target, binding, profile, sample size or None for all)
    "mcp-filesystem": (FILESYSTEM, f"mcp:node {FILESYSTEM} {{workspace}}", None, "mcp-filesystem", None),
    "mcp-filesystem-seed-003": (FILESYSTEM, f"mcp:node {FILESYSTEM} {{workspace}}",
                                "bindings/mcp-filesystem.mcp-write-text-file.yaml", "mcp-write-text-file", None),
    "mcp-text-editor": (TEXT_EDITOR, f"mcp:{TEXT_EDITOR}", "bindings/mcp-text-editor.gemini-safe-patch.yaml",
                        "gemini-safe-patch", None),
    "desktop-commander": (DESKTOP_COMMANDER, f"mcp:{ROOT}/tools/desktop-commander/serve.sh {{parent}}",
                          "bindings/desktop-commander.claude-code.yaml", "claude-code", 4),
}


def named_divergences(tool: str) -> set[str]:
    """Returns the scenario ids docs/real-world.md names in the divergence tables of the tool's section
    (``<!-- tool: NAME -->``); the section's prose cites scenarios that pass, or that were skipped."""
    text = REAL_WORLD.read_text("utf-8")
    section = text.split(f"<!-- tool: {tool} -->", 1)[1].split("<!-- tool:", 1)[0]
    rows = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    return set(re.findall(r"`([a-z0-9-]+/[a-z0-9_/.-]+)`", rows))


@pytest.mark.live
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_real_tool_fails_only_on_its_named_divergences(tool: str) -> None:
    installed, spec, binding, profile, sample = TOOLS[tool]
    if not installed.exists() or (spec.startswith("mcp:node") and shutil.which("node") is None):
        pytest.skip(f"{tool} is not installed (make real-tools installs it under tools/)")
    named = named_divergences(tool)
    scenarios = catalog.load([catalog.builtin_dir()]).select(profiles=[profile])
    if sample is not None:
        scenarios = [s for s in scenarios if s.id in named] + [s for s in scenarios if s.id not in named][:sample]
    target = make_target(spec, TargetOptions(timeout=60.0, binding=ROOT / binding if binding else None))
    with Runner(target) as runner:
        results = [aspects.apply(runner.run(s), ("effects", "outcome")) for s in scenarios]
    # A tool that hangs on a scenario is an error verdict: a divergence too, when the docs name it.
    errors = [f"{r.scenario.id}: {r.reason}" for r in results if r.verdict is Verdict.ERROR and r.scenario.id not in named]
    failing = {r.scenario.id for r in results if r.verdict is Verdict.FAIL}
    assert not errors, "\n".join(errors)
    assert failing <= named, f"failures docs/real-world.md does not name: {sorted(failing - named)}"
    ran = {r.scenario.id for r in results if r.verdict is not Verdict.SKIP}
    broke = {r.scenario.id for r in results if r.verdict is Verdict.ERROR}
    stale = {i for i in named & ran if i not in failing | broke and _judged_divergence(results, i)}
    assert not stale, f"named as failing on effects/outcome, but passed: {sorted(stale)}"


def _judged_divergence(results, scenario_id: str) -> bool:
    """Returns True when the docs name ``scenario_id`` as an effects/outcome failure (not output-only)."""
    text = REAL_WORLD.read_text("utf-8")
    line = next((ln for ln in text.splitlines() if ln.startswith("|") and f"`{scenario_id}`" in ln), "")
    return "output only" not in line


def test_desktop_commander_downloads_no_browser_at_start(tmp_path: Path) -> None:
    # At start-up it looks for a browser to write PDFs and downloads Chrome when it finds none (here
    # the download failed at once: "Failed to install Chrome: ... ENOTFOUND"). serve.sh's stand-in
    # stops it; the server is watched for 10 s after it says it is initialised.
    import json
    import os
    import select
    import signal
    import subprocess
    import time
    serve = ROOT / "tools" / "desktop-commander" / "serve.sh"
    if not (ROOT / "tools" / "desktop-commander" / "node_modules" / ".installed").exists():
        pytest.skip("desktop-commander not installed (make capture-desktop-commander installs it)")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
    proc = subprocess.Popen([str(serve), str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    said = b""
    try:
        proc.stdin.write((json.dumps(hello) + "\n" + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
                          + "\n").encode())
        proc.stdin.flush()
        started, until = None, time.monotonic() + 60
        while time.monotonic() < until and (started is None or time.monotonic() < started + 10):
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                said += chunk
                if started is None and b"MCP fully initialized" in said:
                    started = time.monotonic()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    assert b"MCP fully initialized" in said, said[-2000:]
    assert b"Chrome" not in said, said[-2000:]
