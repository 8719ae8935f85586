"""The reference through ``cmd:`` gives the same verdicts as the in-process reference, on the whole catalog.

Scenarios that require conditions are the one difference allowed: in-process they run on
pyfakefs; through ``cmd:`` a real file system is used, so as root they are skipped unless the
candidate runs as another user (``--run-as``), and then permission scenarios must agree too.
"""

from __future__ import annotations

import os

import pytest

from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.model import Verdict
from harness.targets import make_target
from harness.targets.cmd.target import CmdTarget
from harness.targets.options import TargetOptions
from tests.adapters.run_as import reference_for_nobody

REFERENCE_CMD = "cmd:python -m reference_impl.serve"


@pytest.fixture(scope="module")
def scenarios():
    cat = catalog.load([catalog.builtin_dir()])
    if not cat.scenarios:
        pytest.skip("the catalog is empty")
    return cat.scenarios


@pytest.fixture(scope="module")
def in_process(scenarios, reference_results):
    assert set(reference_results) == {s.id for s in scenarios}
    return reference_results


def verdicts(results: dict) -> dict[str, str]:
    return {key: result.verdict.value for key, result in results.items()}


def test_cmd_reference_gives_the_in_process_verdicts_on_the_whole_catalog(scenarios, in_process) -> None:
    with Runner(make_target(REFERENCE_CMD, TargetOptions(timeout=30.0))) as runner:
        over_cmd = {r.id: r for r in runner.run_all(scenarios)}
    conditional = {s.id for s in scenarios if s.requires}
    expected = verdicts(in_process)
    if os.geteuid() == 0:
        # File modes do not bite for root: those scenarios are skipped, with the reason.
        for key in conditional:
            assert over_cmd[key].verdict is Verdict.SKIP, (key, over_cmd[key].reason)
            expected[key] = "skip"
    else:
        for key in conditional:  # only permissions are realised by an ordinary user
            if set(in_process[key].scenario.requires) - {"permissions"}:
                expected[key] = over_cmd[key].verdict.value
    observed = verdicts(over_cmd)
    differing = {key: (expected[key], observed[key], over_cmd[key].reason) for key in expected if expected[key] != observed[key]}
    assert not differing
    assert any(v == "pass" for v in observed.values())


@pytest.mark.skipif(reference_for_nobody() is None, reason="needs root, the user nobody and a system python3")
def test_permission_scenarios_agree_when_the_candidate_runs_as_another_user(scenarios, in_process) -> None:
    chosen = [s for s in scenarios if s.requires and set(s.requires) <= {"permissions"}]
    if not chosen:
        pytest.skip("no scenario requires only permissions")
    spec, env = reference_for_nobody()
    with Runner(CmdTarget(spec, run_as="nobody", env=env, timeout=30.0)) as runner:
        over_cmd = {r.id: r for r in runner.run_all(chosen)}
    differing = {
        key: (in_process[key].verdict.value, result.verdict.value, result.reason)
        for key, result in over_cmd.items()
        if result.verdict is not in_process[key].verdict
    }
    assert not differing
