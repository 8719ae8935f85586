"""harness compare OLD.json NEW.json: every scenario in one class, new failures first."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cli.main import main


def _result(scenario_id: str, verdict: str, reason: str = "", **extra) -> dict:
    return {"id": scenario_id, "profile": "p", "verdict": verdict, "reason": reason, "steps": [], **extra}


def _report(path: Path, spec: str, *results: dict) -> Path:
    path.write_text(json.dumps({"format": 1, "harness": {"version": "0"},
                                "target": {"name": "t", "version": "1", "spec": spec}, "results": list(results),
                                "summary": {"pass": 0, "fail": 0, "recorded": 0, "skip": 0, "error": 0,
                                            "known": 0}}))
    return path


def test_every_class_and_new_failures_first(tmp_path, capsys):
    old = _report(tmp_path / "old.json", "cmd:tool-1",
                  _result("p/a-passes", "pass"), _result("p/b-breaks", "pass"), _result("p/c-still", "fail", "c old"),
                  _result("p/d-fixed", "error", "d broke"), _result("p/e-gone", "fail", "e"),
                  _result("p/old-name", "fail", "renamed"))
    new = _report(tmp_path / "new.json", "cmd:tool-2",
                  _result("p/a-passes", "recorded"), _result("p/b-breaks", "fail", "b now fails"),
                  _result("p/c-still", "fail", "c new"), _result("p/d-fixed", "pass"),
                  _result("p/f-new", "fail", "f"), _result("p/new-name", "fail", "renamed", former_ids=["p/old-name"]))
    assert main(["compare", str(old), str(new), "--json", str(tmp_path / "c.json"),
                 "--markdown", str(tmp_path / "c.md")]) == 1
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "c.json").read_text())
    classes = {entry["id"]: entry["class"] for entry in data["targets"][0]["scenarios"]}
    assert classes == {"p/a-passes": "unchanged", "p/b-breaks": "new failure", "p/c-still": "still failing",
                       "p/d-fixed": "fixed", "p/e-gone": "gone", "p/f-new": "new scenario",
                       "p/new-name": "still failing"}
    assert data["counts"] == {"new failure": 1, "still failing": 2, "fixed": 1, "new scenario": 1, "gone": 1,
                              "unchanged": 1}
    assert out.index("NEW FAILURE (1)") < out.index("STILL FAILING") < out.index("FIXED") < out.index("GONE")
    assert "p/new-name (was p/old-name)" in out and "b now fails" in out
    markdown = (tmp_path / "c.md").read_text()
    assert markdown.index("### New failure (1)") < markdown.index("### Still failing (2)")


def test_no_new_failure_exits_0_and_a_bad_report_2(tmp_path, capsys):
    old = _report(tmp_path / "old.json", "x", _result("p/a", "fail", "a"))
    new = _report(tmp_path / "new.json", "x", _result("p/a", "pass"))
    assert main(["compare", str(old), str(new)]) == 0
    assert "FIXED (1)" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text('{"results": "no"}')
    assert main(["compare", str(old), str(tmp_path / "bad.json")]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_several_targets_are_paired_by_spec(tmp_path, capsys):
    both = {"format": 1, "harness": {"version": "0"}, "runs": [
        json.loads(_report(tmp_path / "1.json", "one", _result("p/a", "pass")).read_text()),
        json.loads(_report(tmp_path / "2.json", "two", _result("p/a", "fail", "x")).read_text())]}
    (tmp_path / "old.json").write_text(json.dumps(both))
    both["runs"].reverse()
    (tmp_path / "new.json").write_text(json.dumps(both))
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    missing = _report(tmp_path / "three.json", "three", _result("p/a", "pass"))
    assert main(["compare", str(tmp_path / "old.json"), str(missing), str(tmp_path / "1.json")]) == 2
    assert "no target three" in capsys.readouterr().err


def test_report_against_an_earlier_run_lists_new_failures_before_the_matrix(tmp_path, capsys):
    old = _report(tmp_path / "old.json", "x", _result("p/a", "pass"), _result("p/b", "fail", "b"))
    new = _report(tmp_path / "new.json", "x", _result("p/a", "fail", "a now"), _result("p/b", "pass"))
    assert main(["report", str(new), "--against", str(old), "--no-builtin", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert out.index("NEW FAILURE (1)") < out.index("FIXED (1)") < out.index("FAILURES BY CAUSE") < out.index(": 1 pass, 1 fail")
    assert main(["report", str(new), "--against", str(tmp_path / "missing.json"), "--no-builtin"]) == 2
