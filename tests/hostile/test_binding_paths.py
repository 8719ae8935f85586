"""Binding files and the paths they send: a binding in the checkout is hostile input like a scenario.

A binding rewrites a call's arguments after every check of the scenario's paths, so its constants
and templates are held to the same rule when it is loaded, and what it builds at run time is held
to it again by the cmd: and mcp: targets just before sending. A binding, tool map or baseline file
that is a link is read only when the link stays inside its folder, and a binding's mistakes name
the kind of a wrong value, never the value (the file may be a credentials file in disguise).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.record import baseline
from harness.run.runner import Runner
from harness.scenario.loader import load_text
from harness.scenario.model import Verdict
from harness.targets import bindings
from harness.targets.bindings import BindingError, from_tool_map
from harness.targets.cmd.target import CmdTarget
from harness.targets.mcp.target import McpTarget
from tests.hostile.conftest import ROOT, harness_run, write_scenarios

ADAPTER = ROOT / "examples" / "adapters" / "minimal_adapter.py"
SHAPED = ROOT / "tests" / "adapters" / "mcp_shaped.py"
TOKEN = "ghp_TOKEN6f1c2a"  # stands for a credential: it must never reach a message

WRITE = """
id: binding/{name}
profile: mcp-write-text-file
title: a write through a binding
source: test
steps:
  - tool: write_text_file
    args: {{path: "${{workspace}}/a.txt", content: {content}}}
"""


def write_binding(folder: Path, text: str, name: str = "b.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def refused(path: Path) -> list[str]:
    """Returns the problems of an invalid binding file as ``line: [field] message``."""
    with pytest.raises(BindingError) as caught:
        bindings.load(path)
    return [f"{p.line}: [{p.field}] {p.message}" for p in caught.value.problems]


# -- constants and templates, at load -------------------------------------------------------------


@pytest.mark.parametrize("value, field, why", [
    ('{const: "/tmp/ESCAPED-BY-BINDING.txt"}', "path.const", "is an absolute path"),
    ('{const: "/${workspace}/x"}', "path.const", "is an absolute path"),
    ('{const: "../../x"}', "path.const", "climbs more than one level above the workspace"),
    ('{const: "a/../../x"}', "path.const", "'..' after a name"),
    ('{arg: path, default: "/etc/cron.d/x"}', "path.default", "is an absolute path"),
    ('{template: "/etc/{path}"}', "path.template", "the template's own text: '/etc/x' is an absolute path"),
    ('{template: "{path}/../x"}', "path.template", "'..' after a name"),
    ('[{const: "/etc/x"}]', "path[0].const", "is an absolute path"),
])
def test_a_binding_path_leading_outside_is_named_with_its_line_and_field(tmp_path: Path, value: str, field: str,
                                                                         why: str) -> None:
    path = write_binding(tmp_path, f"""\
        tools:
          write_text_file:
            args:
              path: {value}
    """)
    (problem,) = refused(path)
    assert problem.startswith(f"4: [tools.write_text_file.args.{field}] ") and why in problem, problem


def test_a_path_inside_a_constant_object_or_under_a_key_naming_a_path_is_checked(tmp_path: Path) -> None:
    path = write_binding(tmp_path, """\
        tools:
          write_text_file:
            args:
              options: {const: {backup: {dir: "/var/backups"}}}
              target: {where: {const: "/etc/x"}}
    """)
    problems = refused(path)
    assert [p.split("] ")[0] for p in problems] == ["4: [tools.write_text_file.args.options.const.backup.dir",
                                                    "5: [tools.write_text_file.args.target.where.const"], problems


def test_constants_that_are_no_path_or_stay_inside_load(tmp_path: Path) -> None:
    b = bindings.load(write_binding(tmp_path, """\
        tools:
          write_text_file:
            args:
              path: {template: "{path}"}
              mode: {const: "/rewrite"}
              backup: {const: "../backups/a.txt"}
              files: [{file_path: path, ranges: [{start: {const: 1}}]}]
    """))
    assert b.arguments("write_text_file", {"path": "/w/a.txt"})["mode"] == "/rewrite"
    for shipped in sorted((ROOT / "bindings").glob("*.yaml")):
        bindings.load(shipped)


def test_the_cli_refuses_a_binding_that_would_write_outside_and_nothing_is_written(tmp_path: Path) -> None:
    escaped = tmp_path / "outside" / "ESCAPED-BY-BINDING.txt"
    escaped.parent.mkdir()
    evil = write_binding(tmp_path, f"""\
        binding: 1
        profile: mcp-write-text-file
        tools:
          write_text_file:
            args:
              path: {{const: "{escaped}"}}
    """, "evil-binding.yaml")
    write_scenarios(tmp_path / "scenarios", WRITE.format(name="w", content='"pwned\\n"'))
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", f"cmd:python {ADAPTER}", "--binding", str(evil))
    assert outcome.code == 2, outcome.stdout + outcome.stderr
    assert f"{evil}:6: [tools.write_text_file.args.path.const]" in outcome.stdout + outcome.stderr
    assert not escaped.exists()


# -- what a binding builds at run time, checked by the targets ------------------------------------


def run_through(tmp_path: Path, target, content: str):
    text = WRITE.format(name="run", content=f'"{content}"')
    (scenario,) = load_text(text, tmp_path / "s.yaml")
    with Runner(target) as runner:
        return runner.run(scenario)


@pytest.mark.parametrize("mapping", ["path: content", 'path: {template: "{content}"}'])
def test_a_cmd_target_sends_no_path_a_binding_moved_outside(tmp_path: Path, mapping: str) -> None:
    # The scenario's content is no path, so nothing checked it as one; the binding makes it the path.
    escaped = tmp_path / "outside" / "ESCAPED.txt"
    escaped.parent.mkdir()
    path = write_binding(tmp_path, f"""\
        tools:
          write_text_file:
            args:
              {mapping}
              content: {{const: "pwned"}}
    """)
    result = run_through(tmp_path, CmdTarget(f"cmd:python {ADAPTER}", binding=path), str(escaped))
    assert not escaped.exists()
    assert result.verdict is Verdict.ERROR
    assert f"the binding {path}:2 maps write_text_file to a path beyond" in result.reason
    assert f"args.path: {str(escaped)!r} is an absolute path outside the workspace" in result.reason
    assert result.steps[0].output is None and result.steps[0].error is None  # never sent


def test_a_cmd_target_sends_what_a_binding_builds_inside_the_workspace(tmp_path: Path) -> None:
    path = write_binding(tmp_path, """\
        tools:
          write_text_file:
            args: {path: {template: "{path}"}}
    """)
    result = run_through(tmp_path, CmdTarget(f"cmd:python {ADAPTER}", binding=path), "hi")
    assert result.verdict is Verdict.PASS, result.reason


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already
def test_an_mcp_target_sends_no_path_a_binding_moved_outside(tmp_path: Path) -> None:
    escaped = tmp_path / "outside" / "ESCAPED.txt"
    escaped.parent.mkdir()
    path = write_binding(tmp_path, """\
        tools:
          write_text_file:
            tool: save_files
            args:
              files: [{file_path: content, text: {const: pwned}}]
              mode: {const: rewrite}
            drop: [path]
    """)
    result = run_through(tmp_path, McpTarget(f"mcp:python {SHAPED}", timeout=60.0, binding=path), str(escaped))
    assert not escaped.exists()
    assert result.verdict is Verdict.ERROR
    assert "args.files.0.file_path: " in result.reason and "not sent" in result.reason


@pytest.mark.xdist_group("acp-client")  # where the ACP package is imported already
def test_an_acp_target_sends_no_path_a_binding_moved_outside(tmp_path: Path) -> None:
    from harness.targets.acp.target import AcpTarget
    escaped = tmp_path / "outside" / "ESCAPED.txt"
    escaped.parent.mkdir()
    path = write_binding(tmp_path, """\
        tools:
          write_text_file:
            args: {path: content, content: {const: pwned}}
    """)
    result = run_through(tmp_path, AcpTarget("acp:python -m reference_impl.acp_agent", timeout=20, binding=path),
                         str(escaped))
    assert not escaped.exists()
    assert result.verdict is Verdict.ERROR
    assert "args.path: " in result.reason and "not sent" in result.reason


def test_a_value_the_binding_built_may_not_climb_after_a_name_but_the_scenarios_own_path_may(tmp_path: Path) -> None:
    # A binding cannot know whether the scenario lays out links (where `l/..` leads is the link's
    # business): its own values follow the stricter rule; a path the scenario gave is its to judge.
    root = str(tmp_path / "ws")
    built = from_tool_map(["write_text_file.content=path"])  # the profile's content sent as the path
    renamed = from_tool_map(["write_text_file.path=file_path"])
    with pytest.raises(bindings.ArgumentMismatch, match="has '..' after a name"):
        built.check_paths("write_text_file", {"content": f"{root}/l/../x"}, root)
    renamed.check_paths("write_text_file", {"path": f"{root}/l/../x"}, root)
    renamed.check_paths("write_text_file", {"path": "a/../b.txt"}, root)
    built.check_paths("write_text_file", {"content": f"{root}/../x"}, root)  # one level up: the harness's folder
    with pytest.raises(bindings.ArgumentMismatch, match="climbs more than one level"):
        renamed.check_paths("write_text_file", {"path": f"{root}/../../x"}, root)
    from_tool_map([]).check_paths("write_text_file", {"path": "/etc/x"}, root)  # unbound: the scenario's, checked before


# -- binding, tool map and baseline files that are links; values never quoted ---------------------


def secret_link(tmp_path: Path, name: str) -> Path:
    """Returns a link in ``tmp_path/checkout`` to a credentials file outside that folder."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"https://x-access-token:{TOKEN}@github.com\n")
    (tmp_path / "checkout").mkdir(exist_ok=True)
    link = tmp_path / "checkout" / name
    link.symlink_to(secret)
    return link


def test_a_binding_that_links_outside_its_folder_is_not_read(tmp_path: Path) -> None:
    link = secret_link(tmp_path, "b.yaml")
    with pytest.raises(BindingError) as caught:
        bindings.load(link)
    assert "a symbolic link to a file outside its folder" in str(caught.value) and str(link) in str(caught.value)
    assert TOKEN not in str(caught.value)


def test_a_tool_map_or_baseline_that_links_outside_its_folder_is_not_read(tmp_path: Path) -> None:
    link = secret_link(tmp_path, "map.yaml")
    with pytest.raises(BindingError) as caught:
        from_tool_map([], link)
    assert "outside its folder" in str(caught.value) and TOKEN not in str(caught.value)
    with pytest.raises(ValueError) as caught_baseline:
        baseline.load(secret_link(tmp_path, "baseline.yaml"))
    assert "outside its folder" in str(caught_baseline.value) and TOKEN not in str(caught_baseline.value)


def test_a_binding_linked_inside_its_folder_is_read(tmp_path: Path) -> None:
    write_binding(tmp_path / "real", "tools:\n  write_text_file:\n    tool: save\n", "b.yaml")
    (tmp_path / "link.yaml").symlink_to("real/b.yaml")
    assert bindings.load(tmp_path / "link.yaml").tool("write_text_file") == "save"


def test_the_cli_names_the_link_and_prints_no_secret(tmp_path: Path) -> None:
    link = secret_link(tmp_path, "evilb.yaml")
    write_scenarios(tmp_path / "scenarios", WRITE.format(name="w", content='"x"'))
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", f"cmd:python {ADAPTER}", "--binding", str(link))
    assert outcome.code == 2 and str(link) in outcome.stdout + outcome.stderr
    assert TOKEN not in outcome.stdout + outcome.stderr


@pytest.mark.parametrize("text, message", [
    (f"https://x-access-token:{TOKEN}@github.com\n", 'a string is not of type "object"'),
    (f"tools: {TOKEN}\n", 'a string is not of type "object"'),
    (f"tools: {{w: {{tool: '{TOKEN * 20}'}}}}\n", "a string is longer than 200 characters"),
    (f"tools: {{w: {{args: {{path: [{TOKEN}, 1.5]}}}}}}\n", 'a number is not of type "object"'),
    (f"tools: {{w: {{tool: {{a: [{TOKEN}, 'é\\t\"']}}}}}}\n", 'a mapping is not of type "string"'),
    (f"{{tools: {{w: {{}}}}, {TOKEN}: [1, {{x: {TOKEN}}}]}}\n", f"[{TOKEN}] unknown key"),
])
def test_a_binding_mistake_names_the_kind_of_value_not_the_value(tmp_path: Path, text: str, message: str) -> None:
    problems = refused(write_binding(tmp_path, text))
    assert any(message in problem for problem in problems), problems
    assert not any(TOKEN in problem.split("] ", 1)[1].replace(f"unknown key {TOKEN!r}", "") for problem in problems), problems


def test_a_tool_map_mistake_names_the_kind_of_value_not_the_value(tmp_path: Path) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(f"write_text_file: [{TOKEN}]\n")
    with pytest.raises(BindingError) as caught:
        from_tool_map([], path)
    assert "write_text_file=<a list>: both sides must be names" in str(caught.value)
    assert TOKEN not in str(caught.value)
