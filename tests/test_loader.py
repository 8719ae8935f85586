"""The loader: valid files load; every problem names the file, the line and the field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.scenario import catalog
from harness.scenario.loader import ScenarioError, load_file
from harness.scenario.model import Action, Call

GOOD = """\
id: claude-code/read/example
profile: claude-code
title: an example
source: 001-claude-code-read-write-edit.md §Read Tool Behavior
tags: [read]
given:
  files:
    a.txt: "x\\n"
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect:
      output: {$contains: "x"}
  - action: write
    path: a.txt
    content: "y\\n"
then:
  files:
    a.txt: "y\\n"
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def problems_of(path: Path) -> list:
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    return info.value.problems


def test_a_valid_file_loads_into_a_scenario(tmp_path):
    (scenario,) = load_file(write(tmp_path, GOOD))
    assert scenario.id == "claude-code/read/example"
    assert scenario.tags == ("read",)
    assert isinstance(scenario.steps[0], Call) and scenario.steps[0].line == 10
    assert isinstance(scenario.steps[1], Action) and scenario.steps[1].content == "y\n"
    assert scenario.line == 1


def test_a_misspelled_key_names_file_line_and_field(tmp_path):
    path = write(tmp_path, GOOD.replace("    expect:", "    expcet:"))
    (problem,) = problems_of(path)
    assert (problem.file, problem.line, problem.field) == (path, 12, "steps[0].expcet")
    assert "unknown key 'expcet'" in problem.message and "expect" in problem.message
    assert str(problem).startswith(f"{path}:12:")


def test_a_misspelled_key_in_then_is_rejected(tmp_path):
    path = write(tmp_path, GOOD + "  absnet: [b.txt]\n")
    (problem,) = problems_of(path)
    assert problem.line == 20 and problem.field == "then.absnet"


def test_an_unknown_matcher_key_is_rejected(tmp_path):
    path = write(tmp_path, GOOD.replace("{$contains: \"x\"}", "{$contain: \"x\"}"))
    assert problems_of(path), "a misspelled matcher must not silently become an exact-match mapping"


def test_an_unknown_tool_for_the_profile_names_its_line(tmp_path):
    path = write(tmp_path, GOOD.replace("- tool: Read", "- tool: read_file"))
    (problem,) = problems_of(path)
    assert problem.line == 10 and problem.field == "steps[0].tool"
    assert "unknown tool 'read_file' for profile claude-code" in problem.message


def test_a_missing_required_field_is_named(tmp_path):
    path = write(tmp_path, GOOD.replace("source: 001-claude-code-read-write-edit.md §Read Tool Behavior\n", ""))
    (problem,) = problems_of(path)
    assert '"source" is required' in problem.message and problem.line == 1


def test_a_duplicate_yaml_key_is_an_error_not_a_silent_override(tmp_path):
    path = write(tmp_path, GOOD.replace("tags: [read]\n", "tags: [read]\ntags: [x]\n"))
    (problem,) = problems_of(path)
    assert problem.line == 6 and "duplicate key 'tags'" in problem.message


def test_invalid_yaml_names_its_line(tmp_path):
    path = write(tmp_path, GOOD.replace("title: an example", "title: [unclosed"))
    (problem,) = problems_of(path)
    assert problem.line in (3, 4) and "invalid YAML" in problem.message


def test_an_unknown_placeholder_is_rejected(tmp_path):
    path = write(tmp_path, GOOD.replace("${workspace}/a.txt", "${worksapce}/a.txt"))
    (problem,) = problems_of(path)
    assert "worksapce" in problem.message and problem.field == "steps[0].args"


def test_invalid_content_is_rejected(tmp_path):
    path = write(tmp_path, GOOD.replace('a.txt: "x\\n"', "a.txt: {base64: '!!!'}"))
    (problem,) = problems_of(path)
    assert problem.field == "given.files.a.txt" and "base64" in problem.message


def test_a_fault_field_needs_its_requirement(tmp_path):
    path = write(tmp_path, GOOD.replace("given:\n", "given:\n  disk_free: 0\n"))
    (problem,) = problems_of(path)
    assert problem.field == "given.disk_free" and "disk-full" in problem.message


def test_absent_outside_a_mapping_is_rejected(tmp_path):
    path = write(tmp_path, GOOD.replace("{$contains: \"x\"}", "{$absent: true}"))
    (problem,) = problems_of(path)
    assert "$absent" in problem.message


def test_a_file_may_hold_several_documents(tmp_path):
    second = GOOD.replace("claude-code/read/example", "claude-code/read/second")
    scenarios = load_file(write(tmp_path, GOOD + "---\n" + second))
    assert [s.id for s in scenarios] == ["claude-code/read/example", "claude-code/read/second"]
    assert scenarios[1].line == 21


def test_the_catalog_reports_duplicate_ids_across_files(tmp_path):
    write(tmp_path, GOOD, "one.yaml")
    write(tmp_path, GOOD, "two.yaml")
    cat = catalog.load([tmp_path])
    (problem,) = cat.problems
    assert "duplicate id 'claude-code/read/example'" in problem.message and problem.file.name == "two.yaml"


def test_the_catalog_keeps_valid_files_when_one_is_broken(tmp_path):
    write(tmp_path, GOOD, "good.yaml")
    write(tmp_path, "id: [", "bad.yaml")
    cat = catalog.load([tmp_path])
    assert [s.id for s in cat.scenarios] == ["claude-code/read/example"]
    assert [p.file.name for p in cat.problems] == ["bad.yaml"]


def test_selection_uses_pytest_k_expressions(tmp_path):
    write(tmp_path, GOOD, "one.yaml")
    write(tmp_path, GOOD.replace("claude-code/read/example", "claude-code/edit/other").replace("[read]", "[edit]"),
          "two.yaml")
    cat = catalog.load([tmp_path])
    assert [s.id for s in cat.select(keyword="edit")] == ["claude-code/edit/other"]
    assert [s.id for s in cat.select(keyword="not edit")] == ["claude-code/read/example"]
    assert len(cat.select(keyword="read or edit")) == 2
    assert cat.select(profiles=["gemini-safe-patch"]) == []


def test_a_step_reference_must_point_at_an_earlier_call(tmp_path):
    later = GOOD.replace('file_path: "${workspace}/a.txt"', 'file_path: "${step2.output}"')
    (problem,) = problems_of(write(tmp_path, later))
    assert "refers to step 2, but only steps 1..0 come before" in problem.message
    action = GOOD.replace("then:", "  - tool: Read\n    args: {file_path: \"${step2.output}\"}\nthen:")
    (problem,) = problems_of(write(tmp_path, action, "b.yaml"))
    assert "step 2, which is an action" in problem.message


def test_an_invalid_content_spec_in_args_is_rejected(tmp_path):
    bad = GOOD.replace('file_path: "${workspace}/a.txt"', 'file_path: {$content: {pattern: "x"}}')
    (problem,) = problems_of(write(tmp_path, bad))
    assert "$content" in problem.message and problem.field == "steps[0].args.file_path"


def test_a_same_as_reference_must_name_an_earlier_or_this_call(tmp_path):
    later = GOOD.replace('output: {$contains: "x"}', 'output: {$same_as: "steps[3].output"}')
    (problem,) = problems_of(write(tmp_path, later))
    assert "refers to step 3, but only steps 1..1" in problem.message
    assert problem.field == "steps[0].expect"
    action = GOOD.replace("then:", "  - tool: Read\n    args: {file_path: a}\n"
                                   "    expect: {output: {$differs_from: 'steps[2].output'}}\nthen:")
    (problem,) = problems_of(write(tmp_path, action, "b.yaml"))
    assert "step 2, which is an action" in problem.message
    malformed = GOOD.replace('output: {$contains: "x"}', 'output: {$same_as: "step1.output"}')
    (problem,) = problems_of(write(tmp_path, malformed, "c.yaml"))
    assert problem.field.startswith("steps[0].expect")
    own = GOOD.replace('output: {$contains: "x"}', 'output: {$same_as: "steps[1].output"}')
    assert load_file(write(tmp_path, own, "d.yaml"))


def test_an_action_mtime_is_checked_and_kept(tmp_path):
    good = GOOD.replace('    content: "y\\n"\n', '    content: "y\\n"\n    mtime: -1.5s\n')
    (scenario,) = load_file(write(tmp_path, good))
    assert scenario.steps[1].mtime == "-1.5s"
    (problem,) = problems_of(write(tmp_path, good.replace("-1.5s", "5s"), "b.yaml"))
    assert problem.field == "steps[1].mtime"
    on_chmod = good.replace("action: write", "action: chmod\n    mode: '0644'")
    assert problems_of(write(tmp_path, on_chmod, "c.yaml"))


def test_an_unknown_matcher_lists_every_matcher_and_suggests_the_nearest(tmp_path):
    from harness.scenario.matchers import MATCHER_NAMES
    path = write(tmp_path, GOOD.replace("{$contains: \"x\"}", "{$contain: \"x\"}"))
    (problem,) = problems_of(path)
    assert problem.line == 13 and problem.field == "steps[0].expect.output.$contain"
    assert "unknown matcher '$contain'; did you mean '$contains'?" in problem.message
    assert all(name in problem.message for name in MATCHER_NAMES)
    assert str(problem).startswith(f"{path}:13: [steps[0].expect.output.$contain] ")


def test_an_unknown_key_suggests_the_nearest_allowed_one(tmp_path):
    (problem,) = problems_of(write(tmp_path, GOOD.replace("tags: [read]", "tag: [read]")))
    assert "unknown key 'tag'; did you mean 'tags'?" in problem.message and problem.field == "tag"


def test_an_unterminated_string_is_reported_at_its_own_line_with_its_field(tmp_path):
    path = write(tmp_path, GOOD.replace("title: an example", 'title: "an example'))
    (problem,) = problems_of(path)
    assert problem.line == 3 and problem.field == "title"
    assert "unterminated string" in problem.message


def test_every_problem_keeps_a_field(tmp_path):
    broken = [GOOD.replace("title: an example", "title: [unclosed"), "", GOOD.replace("a.txt: \"x\\n\"", "a.txt: 'x")]
    for number, text in enumerate(broken):
        for problem in problems_of(write(tmp_path, text, f"b{number}.yaml")):
            assert problem.field and f"[{problem.field}]" in str(problem)


def test_a_duplicate_id_names_both_files_and_blames_the_one_outside_the_builtin_catalog(tmp_path):
    builtin = catalog.builtin_dir()
    original = next(s for s in catalog.load([builtin]).scenarios if s.id == "claude-code/read/arrow-not-tab")
    mine = write(tmp_path, GOOD.replace("claude-code/read/example", "claude-code/read/arrow-not-tab"), "a-mine.yaml")
    cat = catalog.load_with([tmp_path])
    (problem,) = cat.problems
    assert problem.file == mine and problem.field == "id"
    assert str(original.file) in problem.message and "the built-in catalog" in problem.message
    assert cat.by_id("claude-code/read/arrow-not-tab").file == original.file


def test_code_points_in_args_count_as_a_string_and_a_bad_list_names_its_field(tmp_path):
    good = GOOD.replace('file_path: "${workspace}/a.txt"', 'file_path: {$code_points: ["${workspace}/a", 0xD800]}')
    (scenario,) = load_file(write(tmp_path, good))
    assert scenario.steps[0].args == {"file_path": {"$code_points": ["${workspace}/a", 0xD800]}}
    bad = GOOD.replace('file_path: "${workspace}/a.txt"', 'file_path: {$code_points: ["a", 0x110000]}')
    (problem,) = problems_of(write(tmp_path, bad, "b.yaml"))
    assert problem.field == "steps[0].args.file_path.$code_points" and "not a code point" in problem.message
    assert problem.line == 11  # the args line


def test_code_points_count_towards_the_content_bound(tmp_path, monkeypatch):
    from harness.util import limits
    monkeypatch.setattr(limits, "MAX_SCENARIO_CONTENT", 100)
    big = GOOD.replace('file_path: "${workspace}/a.txt"', 'file_path: {$code_points: ["' + "x" * 101 + '"]}')
    (problem,) = problems_of(write(tmp_path, big))
    assert problem.field == "steps[0].args.file_path" and "100" in problem.message
