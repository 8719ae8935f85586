"""harness discover: listing an MCP server's tools, and binding skeletons that load and run.

Against our own MCP server (the reference, whose tools are the profiles' own) a skeleton is the
identity and runs the catalog as before; against ``tests/adapters/mcp_shaped.py`` (one tool shaped
nothing like seed 003's) the draft guesses the nesting and the constant the tool needs, and its
probes find the output projection, the failure signal and the codes, so the draft as written runs
seed 003's scenarios fairly; against ``tests/adapters/mcp_read_only.py`` nothing is bound onto a
write, and a server that writes debug lines on stdout is named by its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.drivers import discover
from harness.run.runner import Runner
from harness.scenario import aspects, catalog
from harness.scenario.model import Verdict
from harness.targets import bindings
from harness.targets.mcp.target import McpTarget

# On the worker that runs the mcp: target tests (tests/conftest.py): it imported the MCP SDK's client already.
pytestmark = pytest.mark.xdist_group("mcp-client")

ROOT = Path(__file__).resolve().parents[2]
SHAPED = f"mcp:python {ROOT / 'tests' / 'adapters' / 'mcp_shaped.py'}"
REFERENCE = "mcp:python -m reference_impl.mcp_server"
READ_ONLY = f"mcp:python {ROOT / 'tests' / 'adapters' / 'mcp_read_only.py'}"


def test_names_are_alike_by_words_synonyms_and_spelling() -> None:
    assert discover.tokens("readTextFile") == {"read", "text", "file"}
    assert discover.similarity("file_path", "file_path") == 1.0
    assert discover.similarity("file_path", "path") == 0.8  # synonyms
    assert discover.similarity("Read", "read_text_file") > discover.similarity("Read", "write_file")
    assert discover.similarity("old_string", "search") > discover.similarity("old_string", "new_string") - 0.2
    assert discover.similarity("content", "zzz") < discover.THRESHOLD
    assert discover.similarity("replace_all", "newText") < discover.THRESHOLD  # "new" alone relates nothing
    assert discover.similarity("old_string", "oldText") == discover.similarity("new_string", "newText") == 0.8
    assert discover.similarity("Read", "read_text_file") > discover.similarity("Read", "get_file_info")


def test_profiles_are_ranked_by_fit_and_none_fits_an_unrelated_server(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture) -> None:
    weather = [discover.ToolInfo("get_forecast", "Returns the weather for a city.",
                                 {"type": "object", "properties": {"city": {"type": "string"}}})]
    ranked = discover.best_profile(weather)
    assert ranked and ranked[0][0] < discover.FIT
    monkeypatch.setattr(discover, "discover_tools", lambda spec, timeout: (weather, "weather 1"))
    assert main(["discover", "mcp:weather"]) == 0
    out = capsys.readouterr().out
    assert "no profile fits: the best" in out and "write a binding with" not in out


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


def test_a_differently_shaped_server_gets_a_draft_that_runs_fairly_as_written(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "shaped.yaml"
    assert main(["discover", SHAPED, "--profile", "mcp-write-text-file", "-o", str(out), "--timeout", "120"]) == 0
    printed = capsys.readouterr().out
    assert "save_files: Saves files." in printed and "mode: any \"rewrite\"|\"append\" (required)" in printed
    text = out.read_text()
    assert "# probe: wrote probe.txt; the file then held exactly the content sent" in text
    assert "tool: save_files\n" in text  # chosen by a probe, not by its name
    assert "files: [{file_path: path, text: content}]  # check: nested" in text
    assert "mode: {const: rewrite}  # check: required by the tool" in text
    # The probes located the answer's fields and found how the server says it failed.
    assert 'output: "{bytes_written: result.written[0].bytes, created: result.written[0].new, success: `true`}"' in text
    assert 'signals: [isError, jsonrpc-error, {text: "^Error:"}]' in text
    assert '{match: "^Error: ENOENT parent missing", code: -32001}' in text
    assert '{match: "^Error: path must be absolute", code: -32600}' in text
    assert '{match: "^Error: EISDIR", code: -32003}' in text
    binding = bindings.load(out)
    assert binding.arguments("write_text_file", {"path": "/w/a", "content": "x"}) == \
        {"files": [{"file_path": "/w/a", "text": "x"}], "mode": "rewrite"}
    found = catalog.load([catalog.builtin_dir()])
    chosen = [found.by_id(f"mcp-write-text-file/tc/{name}") for name in
              ("tc1-create-new-file", "tc2-overwrite-existing", "tc3-empty-file", "tc5-relative-path",
               "tc6-parent-missing", "tc7-path-is-directory")]
    with Runner(McpTarget(SHAPED, binding=out, timeout=60.0)) as runner:
        results = [aspects.apply(runner.run(scenario), ("effects", "outcome")) for scenario in chosen]
    # The draft as written: no false fail of effects or outcome (created false on an overwrite included).
    assert [r.verdict for r in results] == [Verdict.PASS] * len(chosen), [(r.scenario.id, r.reason) for r in results]


def test_nothing_is_bound_onto_a_write_a_read_only_server_cannot_do(tmp_path: Path) -> None:
    out = tmp_path / "ro.yaml"
    assert main(["discover", READ_ONLY, "--profile", "claude-code", "-o", str(out), "--timeout", "120"]) == 0
    text = out.read_text()
    binding = bindings.load(out)
    assert binding.tool("Read") == "read_text_file"  # not get_file_info: the probe read the lines back
    assert "# probe: read back a file the harness wrote; both lines came back" in text
    assert binding.tool("Write") == "Write" and binding.tool("Edit") == "Edit"  # not offered: skipped
    assert "tool: Write  # check: no tool is like it" in text


def test_a_server_writing_debug_lines_on_stdout_is_named_by_its_line(tmp_path: Path) -> None:
    out = tmp_path / "noisy.yaml"
    assert main(["discover", READ_ONLY + " --noisy", "--profile", "claude-code", "-o", str(out), "--timeout", "120"]) == 0
    assert "not a JSON-RPC message during tools/call read_text_file: 'debug: answering'" in out.read_text()


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


def test_what_varies_between_probes_is_masked_so_a_draft_is_written_the_same_way() -> None:
    # desktop-commander reports how long a search took; the filesystem server names its temporary
    # file at random: the drafts of two runs differed by these alone.
    from harness.drivers.discover_probe import _short
    assert _short("a similar text (found in 179.71ms): D") == _short("a similar text (found in 180.58ms): D") \
        == "a similar text (found in <n>ms): D"
    assert _short("rename '/s/ws3/adir.11a18de55c7657b4ebb5d' -> x", 200) == "rename '/s/ws3/adir.<random>' -> x"
    assert _short('{"file_hash": "a3f5e0c2b1d4e6f7"}') == '{"file_hash": "a3f5e0c2b1d4e6f7"}'  # a value, not a name
