"""The catalog catches plausible wrong implementations: each planted bug fails the named scenarios.

A scenario that passes on a wrong implementation asserts too little; these tests keep the repaired
ones (PDF and notebook reads) and the new scenario kinds (exact mtimes, references, path spellings,
symlinks, replacement patterns, patch matching) honest.
"""

from __future__ import annotations

import pytest

from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.model import Verdict
from harness.targets.reference import ReferenceTarget
from tests import planted

CASES = [
    (planted.RawPdfRead, "claude-code", ["claude-code/read/pdf-processed"]),
    (planted.RawImageRead, "claude-code", ["claude-code/read/image-as-visual-content"]),
    (planted.RawNotebookRead, "claude-code", ["claude-code/read/notebook-cells-with-outputs"]),
    (planted.NewerThanMtimeCheck, "claude-code", ["claude-code/session/mtime-moved-back-rejected",
                                                  "claude-code/session/sub-second-change-write-rejected"]),
    (planted.SecondsMtimeCheck, "claude-code", ["claude-code/session/sub-second-change-rejected"]),
    (planted.DollarExpandingEdit, "claude-code", ["claude-code/edit/replacement-dollar-patterns-literal",
                                                  "claude-code/edit/replace-all-dollar-patterns-literal"]),
    (planted.LastOccurrenceEdit, "claude-code", ["claude-code/edit/multiple-matches-rejected-by-default",
                                                 "claude-code/edit/adjacent-occurrences-ambiguous"]),
    (planted.StatCachedHash, "gemini-safe-patch", ["gemini-safe-patch/read_file/same-size-same-mtime-change-new-hash"]),
    (planted.SkipVersionAfterError, "gemini-safe-patch", ["gemini-safe-patch/session/version-after-failed-patch"]),
    (planted.FirstOccurrenceHunks, "gemini-safe-patch", ["gemini-safe-patch/safe_patch/repeated-blocks-two-hunks"]),
    (planted.RenameOverSymlink, "mcp-write-text-file", ["mcp-write-text-file/output/symlink-to-file-written-through"]),
]


@pytest.fixture(scope="module")
def scenarios():
    return catalog.load()


def _run(target, scenario):
    with Runner(target) as runner:
        return runner.run(scenario)


@pytest.mark.parametrize("session, profile, ids", CASES, ids=[case[0].__name__ for case in CASES])
def test_planted_bug_fails_its_scenarios_and_the_reference_passes_them(scenarios, session, profile, ids):
    for scenario_id in ids:
        scenario = scenarios.by_id(scenario_id)
        assert scenario is not None, scenario_id
        assert _run(ReferenceTarget("reference"), scenario).verdict is Verdict.PASS, scenario_id
        result = _run(planted.PlantedTarget({profile: session}), scenario)
        assert result.verdict is Verdict.FAIL, (scenario_id, result.verdict, result.reason)
