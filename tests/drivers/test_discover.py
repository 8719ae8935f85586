"""harness discover: listing an MCP server's tools, and binding skeletons that load and run.

Against our own MCP server (the reference, whose tools are the profiles' own) a skeleton is the
identity and runs the catalog as before; against ``tests/adapters/mcp_shaped.py`` (one tool shaped
nothing like seed 003's) the skeleton guesses the nesting and the constant the tool needs, and its
first run writes the file: the output shape is the user's to project.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.drivers import discover
from harness.run.runner import Runner
from harness.scenario import catalog
from harness.scenario.loader import load_text
from harness.scenario.model import Verdict
from harness.targets import bindings
from harness.targets.mcp.target import McpTarget

# On the worker that runs the mcp: target tests (tests/conftest.py): it imported the MCP SDK's client already.
pytestmark = pytest.mark.xdist_group("mcp-client")

ROOT = Path(__file__).resolve().parents[2]
SHAPED = f"mcp:python {ROOT / 'tests' / 'adapters' / 'mcp_shaped.py'}"
REFERENCE = "mcp:python -m reference_impl.mcp_server"


def test_names_are_alike_by_words_synonyms_and_spelling() -> None:
    assert discover.tokens("readTextFile") == {"read", "text", "file"}
    assert discover.similarity("file_path", "file_path") == 1.0
    assert discover.similarity("file_path", "path") == 0.8  # synonyms
    assert discover.similarity("Read", "read_text_file") > discover.similarity("Read", "write_file")
    assert discover.similarity("old_string", "search") > discover.similarity("old_string", "new_string") - 0.2
    assert discover.similarity("content", "zzz") < discover.THRESHOLD


@pytest.fixture(scope="module")
def reference_skeleton(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("discover") / "reference.claude-code.yaml"
    assert main(["discover", REFERENCE, "--profile", "claude-code", "-o", str(out), "--timeout", "120"]) == 0
    return out


def test_our_own_server_gets_the_identity_binding_with_nothing_to_check(reference_skeleton: Path) -> None:
    text = reference_skeleton.read_text()
    assert "# check" not in text.split("tools:\n", 1)[1]  # every name matched exactly: no guess
    binding = bindings.load(reference_skeleton)
    assert binding.profile == "claude-code"
    for tool in ("Read", "Write", "Edit"):
        assert binding.tool(tool) == tool
    args = {"file_path": "/w/a", "old_string": "a", "new_string": "b", "replace_all": True}
    assert binding.arguments("Edit", args) == args
    assert "#   Read: Reads a file" in text and "#     file_path: string (required)" in text


def test_the_identity_skeleton_runs_the_catalog_as_before(reference_skeleton: Path) -> None:
    found = catalog.load([catalog.builtin_dir()]).select(profiles=["claude-code"])
    sample = [s for s in found if not s.requires][:12]
    with Runner(McpTarget(REFERENCE, binding=reference_skeleton, timeout=60.0)) as bound, \
            Runner(McpTarget(REFERENCE, timeout=60.0)) as plain:
        pairs = [(bound.run(s).verdict, plain.run(s).verdict) for s in sample]
    assert all(a == b for a, b in pairs), pairs
    assert Verdict.PASS in {a for a, _ in pairs}


def test_a_differently_shaped_server_gets_nesting_and_constants_guessed(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "shaped.yaml"
    assert main(["discover", SHAPED, "--profile", "mcp-write-text-file", "-o", str(out), "--timeout", "120"]) == 0
    printed = capsys.readouterr().out
    assert "save_files: Saves files." in printed and "mode: any \"rewrite\"|\"append\" (required)" in printed
    text = out.read_text()
    assert "tool: save_files  # check:" in text
    assert "files: [{file_path: path, text: content}]  # check: nested" in text
    assert "mode: {const: rewrite}  # check: required by the tool" in text
    binding = bindings.load(out)
    assert binding.arguments("write_text_file", {"path": "/w/a", "content": "x"}) == \
        {"files": [{"file_path": "/w/a", "text": "x"}], "mode": "rewrite"}
    (write,) = load_text("""
id: discover/first-run
profile: mcp-write-text-file
title: a first run through a discovered binding
source: test
steps:
  - tool: write_text_file
    args: {path: "${workspace}/a.txt", content: "hi"}
    expect: {output: {success: true}}
then:
  files: {a.txt: "hi"}
""", tmp_path / "s.yaml")
    with Runner(McpTarget(SHAPED, binding=out, timeout=60.0)) as runner:
        result = runner.run(write)
    # The call is accepted and the file written; only the output's shape is left to project.
    assert result.verdict is Verdict.FAIL and not result.then_failures
    assert {f.path.partition(".")[0] for f in result.steps[0].failures} == {"output"}


def test_without_a_profile_it_lists_the_tools_and_ranks_the_profiles(capsys: pytest.CaptureFixture) -> None:
    assert main(["discover", SHAPED, "--timeout", "120"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mcp-shaped 1.0: 1 tool(s)\nsave_files: Saves files.\n")
    ranking = out.split("profiles by fit: ", 1)[1].splitlines()[0]
    assert ranking.startswith("mcp-write-text-file ")
    assert "--profile mcp-write-text-file -o binding.yaml" in out


def test_a_skeleton_to_standard_output_is_a_binding(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["discover", SHAPED, "--profile", "claude-code", "--timeout", "120"]) == 0
    path = tmp_path / "out.yaml"
    path.write_text(capsys.readouterr().out)
    binding = bindings.load(path)
    assert set(binding.tools) == {"Read", "Write", "Edit"}


def test_bad_usage_is_exit_2(capsys: pytest.CaptureFixture) -> None:
    assert main(["discover", SHAPED, "--profile", "no-such-profile"]) == 2
    assert "unknown profile 'no-such-profile'" in capsys.readouterr().err
    assert main(["discover", "cmd:python -m reference_impl.serve"]) == 2
    assert "no MCP server" in capsys.readouterr().err


def test_a_server_that_cannot_start_is_exit_1(capsys: pytest.CaptureFixture) -> None:
    adapter = ROOT / "tests" / "adapters" / "mcp_misbehaving.py"
    assert main(["discover", f"mcp:python {adapter} --mode exit-early", "--timeout", "5"]) == 1
    assert "cannot start: no configuration found" in capsys.readouterr().err
