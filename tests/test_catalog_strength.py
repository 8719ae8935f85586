"""The catalog catches plausible wrong implementations: each planted bug fails the named scenarios.

A scenario that passes on a wrong implementation asserts too little; these tests keep the repaired
ones (PDF and notebook reads) and the new scenario kinds (exact mtimes, references, path spellings,
symlinks, replacement patterns, patch matching) honest, and show that the must-not scenarios of the
public contracts (anthropic-text-editor, codex-apply-patch) fail when their rule is negated.
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
    (planted.WhitespaceTolerantReplace, "anthropic-text-editor", ["anthropic-text-editor/str_replace/indentation-must-match",
                                                                  "anthropic-text-editor/str_replace/trailing-space-must-match"]),
    (planted.CaseInsensitiveReplace, "anthropic-text-editor", ["anthropic-text-editor/str_replace/case-must-match"]),
    (planted.FirstMatchReplace, "anthropic-text-editor", ["anthropic-text-editor/str_replace/three-matches-refused",
                                                          "anthropic-text-editor/str_replace/two-matches-counted"]),
    (planted.ConstantMatchCount, "anthropic-text-editor", ["anthropic-text-editor/str_replace/two-matches-counted"]),
    (planted.InsertBeforeTheLine, "anthropic-text-editor", ["anthropic-text-editor/insert/after-a-line",
                                                            "anthropic-text-editor/insert/after-the-last-line"]),
    (planted.UnlimitedView, "anthropic-text-editor", ["anthropic-text-editor/view/max-characters-truncates"]),
    (planted.UndoInEveryVersion, "anthropic-text-editor", ["anthropic-text-editor/undo_edit/not-in-20250728"]),
    (planted.GlobalUndo, "anthropic-text-editor", ["anthropic-text-editor/undo_edit/undo-is-per-file"]),
    (planted.IgnoresEndOfFile, "codex-apply-patch", ["codex-apply-patch/update/end-of-file-anchors-at-the-end",
                                                     "codex-apply-patch/update/end-of-file-lines-not-at-the-end"]),
    (planted.LoosestMatchFirst, "codex-apply-patch", ["codex-apply-patch/matching/exact-match-preferred"]),
    (planted.ExactContextOnly, "codex-apply-patch", ["codex-apply-patch/matching/trailing-whitespace-ignored",
                                                     "codex-apply-patch/matching/surrounding-whitespace-ignored",
                                                     "codex-apply-patch/matching/unicode-punctuation-normalised"]),
    (planted.HunksFromTheTop, "codex-apply-patch", ["codex-apply-patch/update/hunks-apply-in-order",
                                                    "codex-apply-patch/update/context-header-picks-the-place",
                                                    "codex-apply-patch/update/context-must-come-before-the-lines"]),
    (planted.TransactionalPatch, "codex-apply-patch", ["codex-apply-patch/partial/earlier-operations-stay"]),
    (planted.AppliesWhileParsing, "codex-apply-patch", ["codex-apply-patch/envelope/no-end-marker"]),
    (planted.NoFinalNewline, "codex-apply-patch", ["codex-apply-patch/update/appends-trailing-newline"]),
    (planted.MoveKeepsSource, "codex-apply-patch", ["codex-apply-patch/move/to-new-directory"]),
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
