"""Profiles as data: the built-in profile.yaml files, custom profiles from --scenarios, and the
checks a profile gives lint (tools, arguments, options), each problem located file:line:field."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.scenario import catalog, profiles
from harness.scenario.loader import ScenarioError, load_file

ROOT = Path(__file__).resolve().parents[1]
MCP_SERVER = ROOT / "tests" / "adapters" / "mcp_misbehaving.py"

PROFILE = """\
name: put-file
title: A put_text tool
contract:
  document: put-file-contract.md
  title: The put_text contract
paths: absolute
tools:
  put_text:
    summary: Writes content to an absolute path.
    arguments:
      type: object
      required: [path, content]
      properties:
        path: {type: string}
        content: {type: string}
        mode: {enum: [create, replace]}
    output:
      type: object
      properties:
        success: {type: boolean}
        bytes_written: {type: integer}
        created: {type: boolean}
    outcome: [success]
options:
  type: object
  additionalProperties: false
  properties:
    limit: {type: integer}
"""

SCENARIO = """\
id: put-file/put/creates
profile: put-file
title: put_text creates the file
source: put-file-contract.md §1
steps:
  - tool: put_text
    args: {path: "${workspace}/a.txt", content: "hi\\n"}
    expect:
      output: {success: true, bytes_written: 3, created: true}
then:
  files:
    a.txt: "hi\\n"
"""


def put(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def problems_of(path: Path) -> list:
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    return info.value.problems


def test_the_built_in_profiles_are_the_catalog_folders_with_the_seeds_tools():
    found = profiles.builtin()
    assert list(found) == ["claude-code", "aptix-tul-004", "mcp-write-text-file", "gemini-safe-patch",
                           "mcp-filesystem", "claude-code-captured", "codex-captured", "gemini-cli-captured",
                           "kilo-captured", "opencode-captured", "pi-captured", "qwen-code-captured",
                           "anthropic-text-editor", "codex-apply-patch"]
    assert list(found["claude-code"].tools) == ["Read", "Write", "Edit"]
    assert list(found["gemini-safe-patch"].tools) == ["read_file", "read_many_files", "write_file", "safe_patch"]
    for name, profile in found.items():
        assert profile.directory is not None and profile.directory.name == name
    assert {s.profile for s in catalog.load().scenarios} == set(found)


def test_profile_schemas_follow_the_contracts_where_they_are_explicit_and_allow_where_silent():
    found = profiles.builtin()
    edit = found["claude-code"].tools["Edit"]
    assert edit.argument_problems({"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": True}) == []
    assert edit.argument_problems({"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": "yes"})
    aptix = found["aptix-tul-004"]
    assert aptix.tools["workspace_create_file"].failure == "output"
    assert aptix.tools["workspace_create_file"].outcome == ("success", "errorCode")
    assert aptix.option_problems({"max_size": 4}) == []
    assert aptix.option_problems({"max_sise": 4})
    # Seed 004 names no arguments for read_file: the schema requires nothing.
    assert found["gemini-safe-patch"].tools["read_file"].arguments.get("required") is None
    # The text editor's documented parameters are required per command, and view_range is two integers.
    editor = found["anthropic-text-editor"].tools["str_replace_based_edit_tool"]
    assert editor.argument_problems({"command": "insert", "path": "a", "insert_line": 0, "insert_text": "x"}) == []
    assert editor.argument_problems({"command": "str_replace", "path": "a", "new_str": "y"})
    assert editor.argument_problems({"command": "create", "path": "a"})
    assert editor.argument_problems({"command": "view", "path": "a", "view_range": [1]})
    assert editor.argument_problems({"command": "remove", "path": "a"})
    assert found["anthropic-text-editor"].option_problems({"tool_version": "text_editor_20250124", "max_characters": 10}) == []
    assert found["anthropic-text-editor"].option_problems({"max_characters": 0})
    assert found["codex-apply-patch"].tools["apply_patch"].argument_problems({"patch": "x"})


def test_a_misspelled_argument_is_a_lint_error_with_file_line_and_field(folder):
    text = """\
    id: claude-code/edit/typo
    profile: claude-code
    title: a typo in an argument name
    source: 001-claude-code-read-write-edit.md §Tool Schemas
    given: {files: {a.txt: "x x\\n"}}
    steps:
      - tool: Read
        args: {file_path: "${workspace}/a.txt"}
      - tool: Edit
        args:
          file_path: "${workspace}/a.txt"
          old_string: x
          new_string: y
          replace_al: true
    """
    path = put(folder, "typo.yaml", text)
    (problem,) = problems_of(path)
    assert (problem.file, problem.line, problem.field) == (path, 14, "steps[1].args.replace_al")
    assert "did you mean 'replace_all'" in problem.message
    assert main(["lint", "--no-builtin", "--scenarios", str(folder)]) == 1


def test_a_mistyped_or_missing_argument_is_a_lint_error_unless_the_step_says_it_is_deliberate(folder):
    text = """\
    id: aptix-tul-004/request/typed
    profile: aptix-tul-004
    title: overwrite as text
    source: 002-aptix-tul-004-create-file.md §4.2
    steps:
      - tool: workspace_create_file
        args: {path: a.txt, content: "x", overwrite: "yes"}
        expect: {output: {success: false}}
    """
    (problem,) = problems_of(put(folder, "typed.yaml", text))
    assert problem.field == "steps[0].args.overwrite" and '"yes" is not of type "boolean"' in problem.message
    text = textwrap.dedent(text)
    deliberate = text.replace("  - tool: workspace_create_file\n", "  - tool: workspace_create_file\n    invalid_args: true\n")
    (scenario,) = load_file(put(folder, "typed.yaml", deliberate))
    assert scenario.calls[0].args["overwrite"] == "yes"
    stale = deliberate.replace('overwrite: "yes"', "overwrite: true")
    (problem,) = problems_of(put(folder, "typed.yaml", stale))
    assert problem.field == "steps[0].invalid_args" and "follow" in problem.message


def test_options_an_unknown_tool_and_an_unknown_profile_are_located(folder):
    base = """\
    id: aptix-tul-004/size/x
    profile: aptix-tul-004
    title: t
    source: 002-aptix-tul-004-create-file.md §5.3
    options: {max_sise: 4}
    steps:
      - tool: workspace_create_file
        args: {path: a.txt, content: "x"}
    """
    (problem,) = problems_of(put(folder, "o.yaml", base))
    assert (problem.line, problem.field) == (5, "options") and "max_sise" in problem.message
    (problem,) = problems_of(put(folder, "o.yaml", base.replace("options: {max_sise: 4}", "options: {max_size: 4}")
                                 .replace("- tool: workspace_create_file", "- tool: create_file")))
    assert (problem.line, problem.field) == (7, "steps[0].tool") and "tools: workspace_create_file" in problem.message
    (problem,) = problems_of(put(folder, "o.yaml", base.replace("profile: aptix-tul-004", "profile: aptix-tul-005")))
    assert (problem.line, problem.field) == (2, "profile") and "unknown profile 'aptix-tul-005'" in problem.message


def test_a_custom_profile_folder_is_loaded_with_its_scenarios(folder):
    put(folder, "put-file/profile.yaml", PROFILE)
    put(folder, "put-file/put/creates.yaml", SCENARIO)
    cat = catalog.load_with([folder])
    assert cat.problems == []
    assert [p.name for p in cat.profiles if p.name == "put-file"] == ["put-file"]
    (scenario,) = cat.select(profiles=["put-file"])
    assert scenario.id == "put-file/put/creates"
    assert main(["lint", "--scenarios", str(folder)]) == 0
    typo = put(folder, "put-file/put/typo.yaml", SCENARIO.replace("creates", "typo").replace("content:", "contents:"))
    unknown, missing = problems_of(typo)
    assert unknown.field == "steps[0].args.contents" and "did you mean 'content'" in unknown.message
    assert missing.field == "steps[0].args" and '"content" is required' in missing.message


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already (tests/conftest.py)
def test_a_custom_profile_runs_end_to_end_on_a_real_mcp_server(folder, tmp_path):
    put(folder, "put-file/profile.yaml", PROFILE)
    put(folder, "put-file/put/creates.yaml", SCENARIO)
    report = tmp_path / "report.json"
    target = f"mcp:{sys.executable} {MCP_SERVER} --tool put_text"
    code = main(["run", "--no-builtin", "--scenarios", str(folder), "--target", target, "--json", str(report), "-q"])
    import json
    (result,) = json.loads(report.read_text("utf-8"))["results"]
    assert (code, result["id"], result["verdict"]) == (0, "put-file/put/creates", "pass")


@pytest.mark.parametrize("mistake, fix, line, field", [
    ("    summary: Writes content", "    sumary: Writes content", 9, "tools.put_text.sumary"),
    ("mode: {enum: [create, replace]}", "mode: {enum: create}", 16, "tools.put_text.arguments.properties.mode.enum"),
    ("outcome: [success]", "outcome: [succes]", 23, "tools.put_text.outcome[0]"),
])
def test_a_profile_file_with_a_mistake_exits_2_naming_file_line_and_field(folder, capsys, mistake, fix, line, field):
    path = put(folder, "put-file/profile.yaml", PROFILE.replace(mistake, fix))
    put(folder, "put-file/put/creates.yaml", SCENARIO)
    with pytest.raises(profiles.ProfileError) as info:
        profiles.load_file(path)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == (path, line, field)
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "-q"]) == 2
    assert f"{path}:{line}: [{field}]" in capsys.readouterr().out
    assert main(["lint", "--no-builtin", "--scenarios", str(folder)]) == 2
    assert f"{path}:{line}: [{field}]" in capsys.readouterr().out


def test_profile_yaml_is_never_taken_for_a_scenario_file(folder):
    put(folder, "put-file/profile.yaml", PROFILE)
    assert catalog.scenario_files([folder]) == []
