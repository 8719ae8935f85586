"""How `make mutation` finds the scenarios that can notice a mutant (the coverage map, on mutmut's
real trampolines), and how the report shows mutants no scenario reaches, stale class entries and the
open questions the catalog records."""

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.drivers import mutation, mutation_report

pytest.importorskip("mutmut", reason="the mutation extra (make mutation installs it)")

SOURCE = '''
def read(x):
    return x + 1


def write(x):
    return x * 2


def never(x):
    return x - 3
'''


@dataclass
class Scenario:
    id: str
    calls: tuple[str, ...]
    open_question: str | None = None


@pytest.fixture()
def mutated(tmp_path, monkeypatch):
    """A small module rewritten by mutmut itself into its trampolines and mutants, imported."""
    from mutmut.mutation.file_mutation import mutate_file_contents
    mutated_file = mutate_file_contents("toolbox.py", SOURCE)
    package = tmp_path / "mutpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "toolbox.py").write_text(mutated_file.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")
    module = importlib.import_module("mutpkg.toolbox")
    yield module, list(mutated_file.mutant_names)
    for name in [m for m in sys.modules if m == "mutpkg" or m.startswith("mutpkg.")]:
        del sys.modules[name]


def test_the_coverage_map_gives_each_function_the_scenarios_that_enter_it(mutated):
    module, names = mutated
    scenarios = [Scenario("reads", ("read",)), Scenario("writes", ("write",)), Scenario("both", ("read", "write"))]

    def run(scenario):
        for call in scenario.calls:
            getattr(module, call)(1)
        return None

    reached_by, seconds, broken = mutation.coverage_map(scenarios, run)
    assert broken is None and set(seconds) == {"reads", "writes", "both"}
    assert {function: [s.id for s in found] for function, found in reached_by.items()} == {
        "mutpkg.toolbox.x_read": ["reads", "both"], "mutpkg.toolbox.x_write": ["writes", "both"]}
    # Every mutant of a function is planned against exactly the scenarios that reach it, the
    # scenario that killed a sibling first; a mutant of a function none enters gets none (not run).
    read_mutant = next(n for n in names if n.startswith("x_read__mutmut_"))
    never_mutant = next(n for n in names if n.startswith("x_never__mutmut_"))
    planned = mutation.plan(f"mutpkg.toolbox.{read_mutant}", reached_by, {"mutpkg.toolbox.x_read": "both"}, seconds)
    assert [s.id for s in planned] == ["both", "reads"]
    assert mutation.plan(f"mutpkg.toolbox.{never_mutant}", reached_by, {}, seconds) == []
    assert mutation.recorders(f"mutpkg.toolbox.{read_mutant}", reached_by) == []
    # Outside the map's run, the trampolines call the original again.
    assert module.read(1) == 2


def test_the_coverage_map_stops_at_a_scenario_that_fails_unmutated(mutated):
    module, _ = mutated

    def run(scenario):
        module.read(1)
        return scenario.id if scenario.id == "broken" else None

    reached_by, _, broken = mutation.coverage_map([Scenario("fine", ()), Scenario("broken", ())], run)
    assert broken == "broken"
    assert [s.id for s in reached_by["mutpkg.toolbox.x_read"]] == ["fine"]


def test_a_mutant_in_the_coverage_map_is_run_by_its_trampoline(mutated):
    module, names = mutated
    mutant = next(n for n in names if n.startswith("x_write__mutmut_"))
    import os
    os.environ["MUTANT_UNDER_TEST"] = f"mutpkg.toolbox.{mutant}"
    try:
        changed = module.write(3)
    finally:
        os.environ["MUTANT_UNDER_TEST"] = ""
    assert changed != 6 and module.write(3) == 6


def _report(results, classes, names):
    diffs = {name: f"-    return {name}\n+    return None" for name in names}
    for name, text in diffs.items():
        mutation_report._DIFFS[name] = text
    try:
        return mutation_report.render(results, {"pkg/mod.py": names}, classes, 60.0, 2)
    finally:
        for name in diffs:
            mutation_report._DIFFS.pop(name, None)


def test_a_mutant_no_scenario_reaches_is_not_reached_even_where_an_entry_calls_it_equivalent():
    names = ["pkg.mod.x_f__mutmut_1", "pkg.mod.x_g__mutmut_1", "pkg.mod.x_h__mutmut_1"]
    results = {names[0]: {"code": mutation_report.NOT_REACHED}, names[1]: {"code": 0}, names[2]: {"code": 1}}
    classes = [{"mutants": "pkg.mod.x_f__*", "class": "equivalent", "why": "helpers only"},
               {"mutants": "pkg.mod.x_g__*", "class": "not-reached", "why": "said unreachable"}]
    report = _report(results, classes, names)
    assert "### Not reached (no scenario enters the mutated function; counted against both scores): 1" in report
    assert "| `mod.x_f__mutmut_1` |" in report.split("### Not reached")[1].split("###")[0]
    assert "### Equivalent" not in report
    # x_g is reached: an entry calling it not reached makes it a gap, not a class
    gaps = report.split("### Gaps in the catalog")[1].split("###")[0]
    assert "`mod.x_g__mutmut_1`" in gaps and "a scenario reaches it" in gaps
    # both survivors count against the strict score: 1 killed of 3
    assert "**Score (strict): 33.3%**" in report


def test_class_entries_that_take_no_survivor_are_listed_as_stale():
    names = ["pkg.mod.x_f__mutmut_1", "pkg.mod.x_f__mutmut_2"]
    results = {names[0]: {"code": 0}, names[1]: {"code": 1}}
    classes = [{"mutants": "pkg.mod.x_f__mutmut_1", "class": "equivalent", "why": "same", "_line": 3},
               {"mutants": "pkg.mod.x_f__mutmut_2", "class": "killed-by", "scenario": "p/s", "_line": 7},
               {"mutants": "pkg.mod.x_f__*", "class": "open-question", "why": "shadowed", "_line": 11}]
    assert [e["_line"] for e in mutation_report.stale_entries(results, classes)] == [7, 11]
    report = _report(results, classes, names)
    stale = report.split("## Class entries that take no survivor")[1]
    assert "2 entries" in stale and "| 7 | killed-by |" in stale and "| 11 | open-question |" in stale
    assert "| 3 |" not in stale


def test_the_committed_class_entries_carry_their_line_numbers():
    classes = mutation_report.load_classes(Path("docs/mutation-classes.yaml"))
    lines = Path("docs/mutation-classes.yaml").read_text("utf-8").splitlines()
    assert all(lines[entry["_line"] - 1].startswith("- ") for entry in classes)


def test_the_report_counts_recorded_open_questions_apart_from_kills():
    names = ["pkg.mod.x_f__mutmut_1", "pkg.mod.x_f__mutmut_2", "pkg.mod.x_f__mutmut_3"]
    results = {names[0]: {"code": 0, "recorded_by": "p/open/a"}, names[1]: {"code": 0, "recorded_by": ""},
               names[2]: {"code": 0}}
    classes = [{"mutants": "pkg.mod.*", "class": "open-question", "why": "Q1"}]
    report = _report(results, classes, names)
    assert "**Recorded open questions: 1 of 3**" in report
    assert "1 are not recorded" in report and "1 were not checked" in report
    assert "| `p/open/a` |" in report and "| *not recorded* |" in report and "| (not checked) |" in report
    assert "**Score (strict): 0.0%**" in report  # recording is never a kill


def test_the_recording_pass_names_the_open_scenario_whose_snapshot_changes(tmp_path, monkeypatch):
    """Runs a real open scenario on the reference, compared with a copy of its committed snapshot: the
    reference itself is not recorded; a stand-in mutant (active, like a trampoline's, only while
    MUTANT_UNDER_TEST names it) that keeps a leading U+FEFF is recorded by that scenario; and a
    scenario whose snapshot differs already unmutated is left out."""
    import os

    import reference_impl.aptix_tul_004 as aptix
    from harness.record import snapshot
    from harness.scenario import catalog
    scenario = catalog.load().by_id("aptix-tul-004/open/bom-in-content")
    assert scenario.open_question
    stored = snapshot.SnapshotStore(Path("snapshots").resolve(), "reference").read(scenario.id)
    copy = snapshot.SnapshotStore(tmp_path / "snapshots", "reference")
    copy.write(scenario.id, stored)
    name = "reference_impl.aptix_tul_004.x_final_bytes__mutmut_999"
    original = aptix.final_bytes

    def final_bytes(content):
        if os.environ.get("MUTANT_UNDER_TEST") == name:
            return content.encode("utf-8")
        return original(content)

    monkeypatch.setattr(aptix, "final_bytes", final_bytes)
    monkeypatch.setitem(mutation_report._DIFFS, name, "-    a\n+    b")
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")
    reached_by = {"reference_impl.aptix_tul_004.x_final_bytes": [scenario]}
    classes = [{"mutants": "reference_impl.*", "class": "open-question", "why": "U+FEFF"}]
    other = "reference_impl.aptix_tul_004.x_final_bytes__mutmut_998"  # the reference's own behaviour
    monkeypatch.setitem(mutation_report._DIFFS, other, "-    a\n+    c")
    results = {name: {"code": 0}, other: {"code": 0}, "killed": {"code": 1}}
    mutation.record(results, reached_by, classes, 2, tmp_path / "cwd", tmp_path / "snapshots")
    assert results[name]["recorded_by"] == scenario.id
    assert results[other]["recorded_by"] == ""
    assert "recorded_by" not in results["killed"]
    copy.write(scenario.id, stored.replace("sizeBytes: 6", "sizeBytes: 7", 1))
    results = {name: {"code": 0}}
    mutation.record(results, reached_by, classes, 1, tmp_path / "cwd", tmp_path / "snapshots")
    assert results[name]["recorded_by"] == ""


def test_a_survivor_that_changes_a_committed_snapshot_counts_as_detected_not_killed():
    names = ["pkg.mod.x_f__mutmut_1", "pkg.mod.x_g__mutmut_1", "pkg.mod.x_h__mutmut_1", "pkg.mod.x_k__mutmut_1"]
    results = {names[0]: {"code": 1}, names[1]: {"code": 0, "recorded_by": "p/open/q"},
               names[2]: {"code": 0, "recorded_by": "p/any/worded"}, names[3]: {"code": 0, "recorded_by": ""}}
    classes = [{"mutants": "pkg.mod.x_[ghk]__*", "class": "open-question", "why": "open"}]
    report = _report(results, classes, names)
    assert "| killed (also timed out and killed since) | 1 | 25.0% |" in report
    assert "| detected: killed, or changing a committed snapshot of the reference | 3 | 75.0% |" in report
    assert "**Detected: 75.0%**" in report and "**Score (strict): 25.0%**" in report
