"""Candidates that answer without end within each message's bound: an MCP server paging tools/list forever."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from harness.run.runner import Runner
from harness.scenario.model import Verdict
from harness.targets.mcp.target import McpTarget

ADAPTER = Path(__file__).resolve().parents[1] / "adapters" / "mcp_misbehaving.py"

WRITE = """
id: mcp/write-endless
profile: mcp-write-text-file
title: one write_text_file
source: test
steps:
  - tool: write_text_file
    args: {path: "${workspace}/a.txt", content: "hi\\n"}
"""


def test_a_server_paging_tools_list_forever_is_an_error_at_once(scenario_from, monkeypatch: pytest.MonkeyPatch):
    # Each page is a line within the cap; the pages were read until the start timed out, the tools
    # of every page held meanwhile.
    monkeypatch.setattr("harness.targets.mcp.target.START_TIMEOUT", 60.0)
    target = McpTarget(f"mcp:{sys.executable} {ADAPTER} --mode endless-tools", timeout=60.0)
    started = time.monotonic()
    with Runner(target) as runner:
        result = runner.run(scenario_from(WRITE))
    assert result.verdict is Verdict.ERROR, result.reason
    assert "more than 10000 tools or 1000 pages in tools/list" in result.reason
    assert time.monotonic() - started < 50
