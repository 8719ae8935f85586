"""The findings report of a claude-code capture, from hand-made JSON reports (no CLI needed).

Example: a seed scenario that failed is listed under "Where the real CLI contradicts seed 001" with
what was expected and what was observed, and the counts say how many agreed and disagreed.
"""

from __future__ import annotations

from harness.drivers.capture_claude_code import findings


def _result(scenario_id: str, verdict: str, steps=(), source="001-claude-code-read-write-edit.md §X", **more):
    return {"id": scenario_id, "profile": "claude-code", "title": scenario_id.rsplit("/", 1)[1], "source": source,
            "verdict": verdict, "reason": "", "steps": list(steps), "then": {"failures": []}, "workspace": {}, **more}


def _report(results, spec="claude-code"):
    return {"target": {"name": "claude-code", "version": "2.1.330", "spec": spec}, "results": results}


def test_counts_contradictions_and_answers() -> None:
    read = {"tool": "Read", "args": {"file_path": "/tmp/harness-abcdefgh/ws/huge.txt", "offset": 999999},
            "output": "999999\tx\n1000000\tx", "failures": []}
    failed = {"tool": "Read", "args": {"file_path": "/tmp/harness-abcdefgh/ws/a.txt"}, "output": "1\ta",
              "failures": [{"path": "output", "expected": "text matching /→/", "observed": "1\ta", "why": "no match"}]}
    report = _report([
        _result("claude-code/read/arrow-not-tab", "fail", [failed]),
        _result("claude-code/read/file-not-found", "pass"),
        _result("claude-code/open-questions/q02-line-number-width-past-999999", "recorded", [read]),
        _result("claude-code/captured/read/line-format-tab-unpadded", "pass",
                source="captured: claude-code 2.1.330 (acceptEdits, cwd=workspace)"),
    ])
    text = findings.markdown([report])
    assert "agrees with the seed in 1 scenarios and disagrees in 1**" in text
    assert "| `claude-code-2.1.330-acceptEdits` | captured | 1 | 0 |" in text
    assert "- **Line-number format**" in text and "`read/arrow-not-tab`" in text
    assert "observed `1\\ta`" in text
    assert "### 2. Line number formatting width" in text
    q2 = text.split("### 2.")[1].split("### 3.")[0]
    assert "no longer show" not in q2 and 'offset=999999' in q2
    q3 = text.split("### 3.")[1].split("### 4.")[0]
    assert "no longer show" in q3  # no evidence in this run: the answer is flagged, not trusted


def test_a_skip_reason_naming_the_cli_by_path_does_not_carry_the_checkout_folder() -> None:
    # The report is committed: two checkouts in different folders must write the same bytes.
    import os
    here = os.path.realpath(os.getcwd())
    skipped = _result("claude-code/open-questions/write-lone-surrogate", "skip",
                      reason=f"target claude-code:cli={here}/tools/claude-code/node_modules/.bin/claude cannot send it")
    text = findings.markdown([_report([skipped])])
    assert here not in text
    assert "target claude-code:cli=${checkout}/tools/claude-code/node_modules/.bin/claude cannot send it" in text
