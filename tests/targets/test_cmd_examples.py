"""The example adapters under ``examples/adapters/`` speak the protocol well enough to be judged.

Their toy tools need not pass every scenario; what must hold is that the harness can talk to them:
a handshake, sessions, and results that are verdicts about the tools, not about the adapter.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.options import TargetOptions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "adapters"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(f"python {EXAMPLES / 'minimal_adapter.py'}", id="python"),
        pytest.param(f"node {EXAMPLES / 'minimal_adapter.js'}", id="node",
                     marks=[pytest.mark.live,
                            pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")]),
    ],
)
def test_an_example_adapter_runs_its_profile(command: str) -> None:
    scenarios = [s for s in catalog.load([catalog.builtin_dir()]).scenarios if s.profile == "mcp-write-text-file"]
    if not scenarios:
        pytest.skip("no mcp-write-text-file scenario in the catalog")
    target = make_target(f"cmd:{command}", TargetOptions(timeout=30.0))
    with Runner(target) as runner:
        assert runner.info.name.startswith("minimal-")
        results = runner.run_all(scenarios)
    verdicts = [r.verdict for r in results]
    assert Verdict.PASS in verdicts
    transport = [r.reason for r in results if r.verdict is Verdict.ERROR and "the adapter failed" not in r.reason]
    assert not transport  # every error is one the adapter reported itself, none a broken conversation
