"""``harness report`` and ``harness diff`` read JSON reports from anywhere (CI artifacts, a fork's job):
a malformed one is a clear error naming the file and the member, text from a report reaches the
terminal escaped, and merging shards stays linear in the runs of a report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.record import observations as sources

TARGET = {"spec": "x", "name": "n", "version": "1"}


def report(tmp_path: Path, name: str, document: dict | str) -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), "utf-8")
    return path


def one(result: dict) -> dict:
    return {"format": 1, "target": TARGET, "results": [result]}


MALFORMED = {
    "failures_int": (one({"id": "a", "verdict": "fail", "steps": [{"tool": "Read", "failures": 5}]}), "results[0].steps[0].failures"),
    "id_list": (one({"id": ["a"], "verdict": "pass"}), "results[0].id"),
    "leftovers_int": ({"format": 1, "target": TARGET, "results": [], "leftovers": 5}, "leftovers"),
    "profile_list": (one({"id": "a", "verdict": "pass", "profile": ["x"]}), "results[0].profile"),
    "reason_int": (one({"id": "a", "verdict": "fail", "reason": 5}), "results[0].reason"),
    "steps_str": (one({"id": "a", "verdict": "fail", "steps": "abc"}), "results[0].steps"),
    "steps_list_int": (one({"id": "a", "verdict": "fail", "steps": [1]}), "results[0].steps[0]"),
    "target_list": ({"format": 1, "target": [1, 2], "results": []}, "target"),
    "then_list": (one({"id": "a", "verdict": "fail", "then": [1]}), "results[0].then"),
    "verdict_obj": (one({"id": "a", "verdict": {"x": 1}}), "results[0].verdict"),
    "spec_dict": ({"format": 1, "target": {"spec": {"a": 1}}, "results": []}, "target.spec"),
    "start_error_dict": ({"format": 1, "target": {"spec": "x", "start_error": {"a": 1}}, "results": []},
                         "target.start_error"),
    "leftover_path_int": ({"format": 1, "target": TARGET, "results": [], "leftovers": [{"path": 1, "reason": "r"}]},
                          "leftovers[0].path"),
    "failure_list": (one({"id": "a", "verdict": "fail", "steps": [{"tool": "Read", "failures": [[1]]}]}),
                     "results[0].steps[0].failures[0]"),
    "aspects_list": (one({"id": "a", "verdict": "pass", "aspects": [1]}), "results[0].aspects"),
    "step_without_tool": (one({"id": "a", "verdict": "pass", "steps": [{"failures": []}]}), "results[0].steps[0]"),
    "workspace_text_int": (one({"id": "a", "verdict": "pass", "steps": [], "workspace": {"a.txt": {"text": 5}}}),
                           "results[0].workspace"),
    "in_runs": ({"runs": [{"target": TARGET, "results": []}, {"target": TARGET, "results": [{"id": 1}]}]},
                "runs[1].results[0].id"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_report_is_an_error_naming_the_file_and_member(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # the message on one line
    document, where = MALFORMED[name]
    path = report(tmp_path, f"{name}.json", document)
    out = tmp_path / "out"
    assert main(["report", "--no-builtin", str(path), "--markdown", f"{out}.md", "--html", f"{out}.html",
                 "--json", f"{out}.json"]) == 2
    said = capsys.readouterr()
    text = said.out + said.err
    assert "error:" in text and f"{name}.json" in text and where in text, text
    assert "Traceback" not in text
    assert main(["diff", "--no-builtin", str(path), str(path)]) == 2


def test_lone_surrogates_in_a_report_are_shown_escaped_not_a_traceback(tmp_path, capsys):
    path = report(tmp_path, "sur.json", '{"format": 1, "target": {"spec": "x\\ud800", "name": "n\\udc80"}, '
                  '"results": [{"id": "claude-code/a\\ud800", "profile": "claude-code", "verdict": "fail", '
                  '"reason": "r\\ud800", "open_question": "q\\ud800?", "steps": [{"tool": "Read", "args": {}, '
                  '"output": "o\\ud800", "failures": []}]}]}')
    empty = report(tmp_path, "empty.json", {"format": 1, "target": {"spec": "y"}, "results": []})
    out = tmp_path / "out"
    assert main(["report", "--no-builtin", str(path), "--markdown", f"{out}.md", "--html", f"{out}.html",
                 "--json", f"{out}.json"]) == 0
    assert "\\ud800" in Path(f"{out}.md").read_text("utf-8")
    capsys.readouterr()
    assert main(["diff", "--no-builtin", str(path), str(empty)]) == 1
    assert "claude-code/a\\ud800" in capsys.readouterr().out


def test_diff_shows_ids_reasons_and_labels_from_reports_escaped(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    scenario_id = "claude-code/a\x1b[31mRED\x1b]0;T\x07"
    passing = report(tmp_path, "a.json", {"format": 1, "target": {"spec": "a\x1b[2Jspec"}, "results": [
        {"id": scenario_id, "profile": "claude-code", "verdict": "pass", "reason": "", "steps": []}]})
    failing = report(tmp_path, "b.json", {"format": 1, "target": {"spec": "b"}, "results": [
        {"id": scenario_id, "profile": "claude-code", "verdict": "error",
         "reason": "boom \x1b[2J\x1b[H\x1b[32mALL GOOD\x1b[0m \x00", "steps": []}]})
    capsys.readouterr()
    assert main(["diff", "--no-builtin", str(passing), str(failing)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x00" not in out and "\x07" not in out
    assert "ONLY IN a\\x1b[2Jspec: claude-code/a\\x1b[31mRED\\x1b]0;T\\x07" in out
    assert "boom \\x1b[2J\\x1b[H\\x1b[32mALL GOOD" in out


class _CountingTarget(dict):
    """A target mapping that counts how often it is looked into."""

    looks = 0

    def get(self, *args):
        _CountingTarget.looks += 1
        return super().get(*args)


def test_merging_shards_looks_at_each_report_a_bounded_number_of_times():
    # A report of N runs was merged by comparing each run with every merged one (N * N / 2 looks:
    # 20,000 runs did not finish in two minutes); each run is now looked up by its spec.
    count = 2000
    runs = [sources.Source(label=f"s{i}", origin="r.json", kind="json", target=_CountingTarget(spec=f"s{i}"))
            for i in range(count)]
    shards = [sources.Source(label="t", origin=f"shard{i}.json", kind="json", target=_CountingTarget(spec="t"),
                             observations={f"id{i}": sources.Observation(id=f"id{i}", profile="p")})
              for i in range(count)]
    _CountingTarget.looks = 0
    merged = sources.merge_shards(runs + shards)
    assert len(merged) == count + 1
    assert set(merged[-1].observations) == {f"id{i}" for i in range(count)}
    assert merged[-1].origin.startswith("shard0.json + shard1.json")
    assert _CountingTarget.looks <= 10 * 2 * count


def test_reports_of_one_spec_that_all_overlap_stay_apart_and_are_not_each_compared_with_all(monkeypatch):
    count = 3000
    runs = [sources.Source(label="t", origin=f"r{i}.json", kind="json", target={"spec": "t"},
                           observations={"same": sources.Observation(id="same", profile="p")})
            for i in range(count)]
    compared = []
    real = sources._disjoint

    def counting(one, other):
        compared.append(1)
        return real(one, other)

    monkeypatch.setattr(sources, "_disjoint", counting)
    merged = sources.merge_shards(runs)
    assert len(merged) == count  # every one overlaps every other: two runs to compare, never merged
    assert len(compared) <= 100 * count  # not count * count / 2


def test_a_combined_report_with_a_run_that_is_no_report_names_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    path = report(tmp_path, "runs.json", {"runs": [{"target": TARGET, "results": []}, {"target": TARGET}]})
    assert main(["report", "--no-builtin", str(path)]) == 2
    assert "runs.json: not a harness JSON report (no results list in runs[1])" in capsys.readouterr().out


@pytest.mark.parametrize("body, said", [
    ("steps: 5", "steps: a number, not an array"),
    ("steps: [5]", "steps[0]: a number, not an object"),
    ("steps: [{tool: [1], output: 1}]", "steps[0].tool: an array, not a string"),
    ("open_question: [2]\nsteps: []", "open_question: an array, not a string"),
])
def test_a_malformed_snapshot_in_a_folder_is_an_error_naming_the_file_and_member(tmp_path, capsys, monkeypatch,
                                                                                 body, said):
    monkeypatch.setenv("COLUMNS", "1000")
    folder = tmp_path / "snaps" / "t"
    (folder / "claude-code").mkdir(parents=True)
    (folder / "claude-code" / "x.yaml").write_text(f"scenario: claude-code/x\nprofile: claude-code\n{body}\n", "utf-8")
    empty = report(tmp_path, "empty.json", {"format": 1, "target": {"spec": "y"}, "results": []})
    for command in (["report", "--no-builtin", str(folder), "--markdown", str(tmp_path / "o.md")],
                    ["diff", "--no-builtin", str(folder), str(empty)]):
        assert main(command) == 2
        out = capsys.readouterr().out
        assert f"x.yaml: not a snapshot: {said}" in out, out
