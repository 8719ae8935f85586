"""Captured scenarios pin what the real Claude Code CLI did; under pytest they run on a claude-code target only.

Each scenario here takes its expectations from a recorded run of the pinned CLI (``source:
"captured: claude-code 2.1.330 (<mode>, cwd=<...>)"``), tagged ``captured``. The reference
implements seed 001, which says otherwise in many of them (line format, relative paths, quote
matching, limits), so on any other pytest target they are skipped with that reason, and ``make
test`` stays about the seed. ``harness run`` and ``harness report`` run them on every target, where
a difference from the real CLI is worth seeing; ``-k "not captured"`` leaves them out there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REASON = ("captured from the real Claude Code CLI: pins its behaviour where seed 001 (the reference) may differ; "
          "run with --target claude-code")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skips this folder's scenarios unless the target is ``claude-code[:...]``."""
    target = str(config.getoption("--target", default="reference"))
    if target == "claude-code" or target.startswith("claude-code:"):
        return
    for item in items:
        if "captured" in item.keywords and item.path.resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.skip(reason=REASON))
