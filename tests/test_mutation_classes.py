"""How `make mutation` classifies survivors: a message rule covers wording only, never code."""

from harness.drivers import mutation, mutation_report


def diff(before: str, after: str) -> str:
    return f"-    {before}\n+    {after}"


def test_changed_text_inside_a_message_is_wording():
    assert mutation_report.wording_only(diff('raise ToolError(CODE, "No such file")', 'raise ToolError(CODE, "XXNo such fileXX")'))
    assert mutation_report.wording_only(diff('raise ToolError(CODE, f"gone: {path}")', 'raise ToolError(CODE, f"GONE: {path}")'))


def test_a_message_replaced_by_none_or_dropped_is_not_wording():
    assert not mutation_report.wording_only(diff('raise ToolError(CODE, "No such file")', "raise ToolError(CODE, None)"))
    assert not mutation_report.wording_only(diff('raise ToolError(CODE, "No such file")', "raise ToolError(CODE, )"))


def test_a_changed_code_name_or_lookup_is_not_wording():
    assert not mutation_report.wording_only(diff('raise ToolError(CODE, "x")', 'raise ToolError(None, "x")'))
    assert not mutation_report.wording_only(diff('raise ToolError(f"{opts[\'hash\']}")', 'raise ToolError(f"{opts[\'XXhashXX\']}")'))
    assert not mutation_report.wording_only(diff('if name == "a":', 'if name != "a":'))


def test_a_literal_that_is_compared_looked_up_or_a_key_is_data_not_wording():
    assert not mutation_report.wording_only(diff('if operation == "open":', 'if operation == "XXopenXX":'))
    assert not mutation_report.wording_only(diff('if "open" in ops:', 'if "OPEN" in ops:'))
    assert not mutation_report.wording_only(diff('code = codes["missing"]', 'code = codes["XXmissingXX"]'))
    assert not mutation_report.wording_only(diff('return {"message": text}', 'return {"XXmessageXX": text}'))
    assert mutation_report.wording_only(diff('return {"message": "File created."}', 'return {"message": "XXFile created.XX"}'))


def test_a_wording_rule_does_not_classify_a_mutant_that_changes_code(monkeypatch):
    classes = [{"mutants": "pkg.mod.*", "wording": True, "class": "open-question", "why": "wording"}]
    monkeypatch.setitem(mutation_report._DIFFS, "pkg.mod.x_f__mutmut_1", diff('raise E(C, "a")', 'raise E(C, "XXaXX")'))
    monkeypatch.setitem(mutation_report._DIFFS, "pkg.mod.x_f__mutmut_2", diff('raise E(C, "a")', 'raise E(None, "a")'))
    assert mutation_report.classify("pkg.mod.x_f__mutmut_1", classes)["class"] == "open-question"
    assert mutation_report.classify("pkg.mod.x_f__mutmut_2", classes) is None


def test_a_mutant_no_scenario_reaches_is_a_survivor_not_a_kill():
    assert mutation_report.status(mutation_report.NOT_REACHED) == "survived"
    assert mutation_report.status(1) == "killed" and mutation_report.status(0) == "survived" and mutation_report.status(36) == "timeout"


def test_a_wording_only_entry_without_the_wording_check_is_refused():
    mutation_report.check_classes([{"mutants": "a.*", "wording": True, "class": "wording-only", "why": "§4.3"}], "c.yaml")
    try:
        mutation_report.check_classes([{"mutants": "a.*", "class": "equivalent"},
                                {"mutants": "a.*", "class": "wording-only", "why": "§4.3"}], "c.yaml")
    except ValueError as exc:
        assert "c.yaml: entry 2" in str(exc) and "wording: true" in str(exc)
    else:
        raise AssertionError("a wording-only entry without `wording: true` was accepted")


def test_an_unknown_class_is_refused():
    try:
        mutation_report.check_classes([{"mutants": "a.*", "class": "wording"}], "c.yaml")
    except ValueError as exc:
        assert "'wording'" in str(exc)
    else:
        raise AssertionError("an unknown class was accepted")


def test_the_committed_classes_are_valid():
    from pathlib import Path
    classes = mutation_report.load_classes(Path(__file__).parents[1] / "docs" / "mutation-classes.yaml")
    assert classes and all(entry["class"] in mutation_report.CLASSES for entry in classes)


def test_scores_strict_counts_wording_only_against_and_the_contract_with_the_equivalent_ones():
    from collections import Counter
    # 80 killed, 2 killed since, 1 timed out; 17 survivors: 5 equivalent, 4 wording-only, 6 open, 2 gaps.
    totals = Counter({"killed": 80, "killed since": 2, "timeout": 1, "survived": 17, "equivalent": 5,
                      "wording-only": 4})
    figures = mutation_report.score_figures(totals, open_questions=6)
    assert round(figures["strict"], 3) == round(100 * 83 / 95, 3)
    assert round(figures["contract"], 3) == round(100 * 83 / 91, 3)
    assert round(figures["seeds_fix"], 3) == round(100 * 83 / 85, 3)
    assert figures["strict"] < figures["contract"] < figures["seeds_fix"]


def test_the_report_shows_both_scores_and_a_wording_only_section(monkeypatch):
    names = [f"pkg.mod.x_f__mutmut_{i}" for i in range(1, 7)]
    results = {names[0]: {"code": 1}, names[1]: {"code": 1}, names[2]: {"code": 0}, names[3]: {"code": 0},
               names[4]: {"code": 0}, names[5]: {"code": 0}}
    diffs = {names[2]: diff('raise E(C, "gone")', 'raise E(C, "XXgoneXX")'),   # wording-only
             names[3]: diff('raise E(C, "gone")', 'raise E(C, None)'),          # not wording: a gap
             names[4]: diff("x = a", "x = b"),                                   # equivalent
             names[5]: diff("y = 1", "y = 2")}                                   # open question
    for name, text in diffs.items():
        monkeypatch.setitem(mutation_report._DIFFS, name, text)
    classes = [{"mutants": "pkg.mod.*", "wording": True, "class": "wording-only", "why": "seed §4.3 free text"},
               {"mutants": names[4], "class": "equivalent", "why": "same"},
               {"mutants": names[5], "class": "open-question", "why": "open"}]
    report = mutation_report.render(results, {"pkg/mod.py": names}, classes, 60.0, 2)
    # killed 2 of 6; equivalent 1 -> strict 2/5; wording-only 1 -> contract 2/4; open 1 -> seeds fix 2/3.
    assert "**Score (strict): 40.0%**" in report
    assert "**Score under the contract: 50.0%**" in report
    assert "66.7% are killed" in report
    assert "| all | 6 | 2 | 0 | 4 | 0 | 0 | 1 | 1 |" in report
    assert "### Wording only" in report and "x_f__mutmut_3` " in report.split("### Wording only")[1].split("###")[0]
    gaps = report.split("### Gaps in the catalog")[1].split("###")[0]
    assert "x_f__mutmut_4`" in gaps and "x_f__mutmut_3`" not in gaps
    assert report.index("**Score (strict)") < report.index("**Score under the contract")


def test_a_survivor_a_killed_by_entry_names_is_reported_as_a_gap(monkeypatch):
    names = ["pkg.mod.x_f__mutmut_1", "pkg.mod.x_f__mutmut_2"]
    for name in names:
        monkeypatch.setitem(mutation_report._DIFFS, name, diff("y = 1", "y = 2"))
    classes = [{"mutants": "pkg.mod.x_f__mutmut_*", "class": "killed-by", "scenario": "p/s/kills-it"}]
    report = mutation_report.render({names[0]: {"code": 1}, names[1]: {"code": 0}}, {"pkg/mod.py": names}, classes, 1.0, 2)
    gaps = report.split("### Gaps in the catalog")[1]
    assert "x_f__mutmut_2`" in gaps and "classified as killed by p/s/kills-it" in gaps
    assert "1 survivors are gaps" in report and "**Score (strict): 50.0%**" in report


def test_the_report_names_what_is_not_mutated(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\ndo_not_mutate = ["reference_impl/serve.py"]\n', "utf-8")
    (tmp_path / "reference_impl").mkdir()
    (tmp_path / "reference_impl" / "mod.py").write_text("a = 1\nb = 2  # pragma: no mutate - unreachable\n", "utf-8")
    text = mutation_report.exclusions(tmp_path)
    assert "`reference_impl/serve.py`" in text
    assert "`reference_impl/mod.py:2` (pragma: no mutate - unreachable)" in text
    (tmp_path / "reference_impl" / "mod.py").write_text("a = 1\n", "utf-8")
    assert "`# pragma: no mutate`: none." in mutation_report.exclusions(tmp_path)
    report = mutation_report.render({}, {"pkg/mod.py": []}, [], 1.0, 2, mutation_report.exclusions(tmp_path))
    assert "Not mutated: the files `reference_impl/serve.py`" in report


def test_a_mutant_writing_a_relative_path_writes_into_the_scratch_folder_not_the_project(tmp_path, monkeypatch):
    project, scratch = tmp_path / "project", tmp_path / "scratch"
    project.mkdir()
    monkeypatch.chdir(project)

    def run_one(name, scenarios):
        with open("src-index.ts", "w", encoding="utf-8") as handle:  # what a mutant that takes relative paths does
            handle.write("x")
        return "killer"

    pool = mutation.Pool(1, run_one, cwd=scratch)
    pool.submit("pkg.mod.x_f__mutmut_1", [], limit=30.0)
    done = []
    while pool.running:
        done += pool.reap(block=True)
    assert done and done[0][:3] == ("pkg.mod.x_f__mutmut_1", 1, "killer")
    assert not (project / "src-index.ts").exists()
    assert [p.name for p in scratch.rglob("src-index.ts")] == ["src-index.ts"]
