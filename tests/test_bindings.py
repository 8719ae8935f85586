"""Bindings: each feature of the format, its mistakes as file:line:field, and bindings applied by real targets.

The end-to-end tests bind seed 003's ``write_text_file`` onto ``tests/adapters/mcp_shaped.py``, a
server whose one tool takes ``{files: [{file_path, text}], mode}`` and answers everything as plain
text, and check both what reaches the disk and what the harness makes of the answers.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.run.runner import Runner
from harness.scenario.loader import load_text
from harness.scenario.model import Verdict
from harness.targets import bindings
from harness.targets.bindings import Binding, BindingError, from_options, from_tool_map
from harness.targets.cmd.target import CmdTarget
from harness.targets.mcp.target import McpTarget

ROOT = Path(__file__).resolve().parents[1]
SHAPED = ROOT / "tests" / "adapters" / "mcp_shaped.py"


def binding(tmp_path: Path, text: str, name: str = "b.yaml") -> Binding:
    """Returns the binding of a YAML text written to ``tmp_path/name``."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return bindings.load(path)


def problems(tmp_path: Path, text: str) -> list[str]:
    """Returns the problems of an invalid binding text, each as ``line: [field] message`` (the file left out)."""
    with pytest.raises(BindingError) as caught:
        binding(tmp_path, text)
    return [f"{p.line}: [{p.field}] {p.message}" for p in caught.value.problems]


# -- arguments ------------------------------------------------------------------------------------


def test_renames_a_tool_and_its_arguments_and_passes_the_rest_through(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Write:
            tool: write_file
            args: {path: file_path}
    """)
    assert b.tool("Write") == "write_file" and b.tool("Read") == "Read"
    assert b.arguments("Write", {"file_path": "/a", "content": "x"}) == {"path": "/a", "content": "x"}
    assert b.arguments("Read", {"file_path": "/a"}) == {"file_path": "/a"}  # tools not bound pass through
    assert b.describe("Write") == "Write (as write_file)"


def test_adds_constants_and_drops_arguments(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Write:
            args: {mode: {const: rewrite}, options: {const: {fsync: true}}}
            drop: [dry_run]
    """)
    assert b.arguments("Write", {"file_path": "/a", "dry_run": True}) == \
        {"mode": "rewrite", "options": {"fsync": True}, "file_path": "/a"}


def test_nests_an_argument_into_a_one_element_list_of_objects(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          read_file:
            tool: get_text_file_contents
            args:
              files: [{file_path: file_path, ranges: [{start: {const: 1}}]}]
    """)
    assert b.arguments("read_file", {"file_path": "/w/a.txt"}) == \
        {"files": [{"file_path": "/w/a.txt", "ranges": [{"start": 1}]}]}


def test_nests_an_argument_into_an_object(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Write:
            args: {target: {path: file_path, body: content}}
    """)
    assert b.arguments("Write", {"file_path": "/a", "content": "x"}) == {"target": {"path": "/a", "body": "x"}}


def test_an_integer_offset_applies_to_integers_only(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Read:
            args: {offset: {arg: offset, add: -1}}
    """)
    assert b.arguments("Read", {"offset": 5}) == {"offset": 4}
    # A value that is no integer is the scenario's to send as it is (it may be testing just that).
    assert b.arguments("Read", {"offset": "5"}) == {"offset": "5"}
    assert b.arguments("Read", {"offset": True}) == {"offset": True}
    assert b.arguments("Read", {}) == {}  # absent stays absent


def test_a_boolean_becomes_a_count_with_a_default_when_absent(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Edit:
            tool: edit_block
            args:
              expected_replacements: {arg: replace_all, default: false, count: {true: 0, false: 1}}
    """)
    assert b.arguments("Edit", {"replace_all": True}) == {"expected_replacements": 0}
    assert b.arguments("Edit", {"replace_all": False}) == {"expected_replacements": 1}
    assert b.arguments("Edit", {}) == {"expected_replacements": 1}


def test_a_template_fills_plain_fields_and_is_left_out_when_one_is_missing(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          Read:
            args: {range: {template: "{offset}:{limit} of {file_path} {{literal}}"}}
            drop: [offset, limit]
    """)
    # every argument a template uses is taken by it, whether or not the template could be filled
    assert b.arguments("Read", {"file_path": "/a", "offset": 2, "limit": 3, "x": 1}) == {"range": "2:3 of /a {literal}", "x": 1}
    assert b.arguments("Read", {"file_path": "/a", "x": 1}) == {"x": 1}


# -- results --------------------------------------------------------------------------------------


def test_output_projection_with_jmespath(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          write_text_file:
            output: "result.written[0].{success: `true`, bytes_written: bytes, created: new}"
    """)
    output, error, extra = b.result("write_text_file", {"result": {"written": [{"bytes": 3, "new": True}]}},
                                    None, "result", None)
    assert (output, error) == ({"success": True, "bytes_written": 3, "created": True}, None)
    assert extra["output"] == {"result": {"written": [{"bytes": 3, "new": True}]}}  # what the tool said stays visible


def test_text_matching_a_pattern_is_a_failure_with_a_code_from_its_message(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          write_text_file:
            failure:
              signals: [isError, {text: "^Error: "}]
              codes:
                - {match: "must be absolute", code: -32600}
                - {match: "ENOENT", code: -32001}
    """)
    output, error, extra = b.result("write_text_file", "Error: ENOENT parent missing: /w/x", None, "result",
                                    "Error: ENOENT parent missing: /w/x")
    assert output is None and error == {"code": -32001, "message": "Error: ENOENT parent missing: /w/x"}
    assert extra["signal"] == "text '^Error: '"
    # isError results are failures as before, and get a code from their message too
    _, error, _ = b.result("write_text_file", None, {"code": None, "message": "x must be absolute"}, "isError", "x")
    assert error == {"code": -32600, "message": "x must be absolute"}
    # a JSON-RPC error is a failure only when listed: here it is not, so its text is the output
    output, error, _ = b.result("write_text_file", None, {"code": -1, "message": "m"}, "jsonrpc-error", "m")
    assert (output, error) == ("m", None)
    # a code the failure already carries is kept
    _, error, _ = b.result("write_text_file", None, {"code": 7, "message": "ENOENT"}, "isError", "ENOENT")
    assert error["code"] == 7


def test_an_output_field_signals_failure_with_a_message_from_the_output(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          write_text_file:
            failure:
              signals: [{field: status, equals: failed}, {field: error}]
              message: "reason || error"
    """)
    _, error, extra = b.result("write_text_file", {"status": "failed", "reason": "disk full"}, None, "result", None)
    assert error == {"code": None, "message": "disk full"} and extra["signal"] == "field status"
    _, error, _ = b.result("write_text_file", {"status": "ok", "error": "E1"}, None, "result", None)
    assert error == {"code": None, "message": "E1"}
    output, error, _ = b.result("write_text_file", {"status": "ok", "error": None}, None, "result", None)
    assert error is None and output == {"status": "ok", "error": None}


def test_a_pattern_sees_a_bounded_prefix_of_the_text(tmp_path: Path) -> None:
    b = binding(tmp_path, """
        tools:
          write_text_file:
            failure: {signals: [{text: "FAILED$"}]}
    """)
    long = "x" * (bindings.TEXT_CAP + 10) + "FAILED"
    assert b.result("write_text_file", long, None, "result", long)[1] is None
    assert b.result("write_text_file", "FAILED", None, "result", "FAILED")[1] is not None


# -- the shorthands ---------------------------------------------------------------------------------


def test_tool_map_entries_and_files_make_the_same_binding_as_a_binding_file(tmp_path: Path) -> None:
    file = binding(tmp_path, """
        tools:
          write_text_file:
            tool: write_file
            args: {text: content}
    """)
    flat = tmp_path / "flat.yaml"
    flat.write_text("write_text_file: write_file\nwrite_text_file.content: text\n")
    for shorthand in (from_tool_map(["write_text_file=write_file", "write_text_file.content=text"]),
                      from_tool_map([], flat)):
        assert isinstance(shorthand, Binding)
        for args in ({"path": "/p", "content": "c"}, {"path": "/p"}):
            assert shorthand.arguments("write_text_file", args) == file.arguments("write_text_file", args)
        assert shorthand.tool("write_text_file") == file.tool("write_text_file")


def test_tool_map_entries_go_on_top_of_a_binding_file(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("tools:\n  Write:\n    tool: write_file\n    args: {mode: {const: rewrite}}\n")
    combined = from_options(path, ["Write=save", "Write.content=text"])
    assert combined.tool("Write") == "save"
    assert combined.arguments("Write", {"content": "x"}) == {"mode": "rewrite", "text": "x"}


def test_a_binding_for_one_profile_skips_the_others(tmp_path: Path) -> None:
    b = binding(tmp_path, "profile: claude-code\ntools: {Write: {tool: write_file}}\n")
    assert b.skip_reason("claude-code") is None
    assert "maps profile claude-code, not gemini-safe-patch" in b.skip_reason("gemini-safe-patch")


# -- mistakes ----------------------------------------------------------------------------------------


def test_every_mistake_is_named_with_its_line_and_field(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        binding: 1
        profile: claude-code
        tools:
          Read:
            tool: read_file
            args:
              offset: {arg: offset, add: -1, count: {true: 1, false: 0}}
              range: {template: "{offset!r}"}
            output: "content[["
            failure:
              signals: [{text: "(unclosed"}]
          Wirte:
            tool: write_file
    """)
    assert found == [
        "7: [tools.Read.args.offset] `add` and `count` cannot be combined: one transform per value",
        "8: [tools.Read.args.range.template] invalid template: only {name} fields are allowed, not {offset!r}",
        found[2],
        found[3],
        "12: [tools.Wirte] unknown tool 'Wirte' for profile claude-code (tools: Read, Write, Edit)",
    ]
    assert found[2].startswith("9: [tools.Read.output] invalid JMESPath 'content[['")
    assert found[3].startswith("11: [tools.Read.failure.signals[0]] invalid regular expression '(unclosed'")


@pytest.mark.parametrize("text, expected", [
    ("tools: {Write: {tool: w, arsg: {}}}\n", "1: [tools.Write.arsg] unknown key 'arsg'; did you mean 'args'? (allowed: args, drop, failure, output, tool)"),
    ("tools:\n  Write:\n    args: {n: {arg: x, add: one}}\n", '3: [tools.Write.args.n.add] a string is not of type "integer"'),
    ("tools:\n  Write:\n    failure: {signals: [isErr]}\n", '3: [tools.Write.failure.signals[0]] "isErr" is not one of "isError" or "jsonrpc-error"'),
    ("profile: x\n", '1: [] "tools" is required'),
    ("tools: [a, b]\n", '1: [tools] a list is not of type "object"'),
    ("tools:\n  a: 1\n  a: 2\n", "3: [a] invalid YAML: duplicate key 'a'"),
])
def test_schema_mistakes(tmp_path: Path, text: str, expected: str) -> None:
    assert problems(tmp_path, text) == [expected]


def test_the_cli_exits_2_with_file_line_field_and_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("tools:\n  write_text_file:\n    output: 'a[['\n")
    code = main(["run", "--target", f"mcp:python {SHAPED}", "--binding", str(path), "--profile", "mcp-write-text-file"])
    out = capsys.readouterr()
    assert code == 2
    assert f"{path}:3: [tools.write_text_file.output] invalid JMESPath" in out.out
    assert "Traceback" not in out.out + out.err
    assert main(["run", "--target", f"mcp:python {SHAPED}", "--binding", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read the binding" in capsys.readouterr().out


# -- applied by the targets ------------------------------------------------------------------------------

SHAPED_BINDING = """\
binding: 1
profile: mcp-write-text-file
tools:
  write_text_file:
    tool: save_files
    args:
      files: [{file_path: path, text: content}]
      mode: {const: rewrite}
    output: "result.written[0].{success: `true`, bytes_written: bytes, created: new}"
    failure:
      signals: [isError, jsonrpc-error, {text: "^Error: "}]
      codes:
        - {match: "must be absolute", code: -32600}
        - {match: "ENOENT", code: -32001}
        - {match: "EISDIR", code: -32003}
"""

SCENARIO = """
id: binding/{id}
profile: mcp-write-text-file
title: a write through a binding
source: test
{extra}
steps:
  - tool: write_text_file
    args: {args}
    expect: {expect}{invalid}
"""


def scenario(tmp_path: Path, args: str, expect: str, extra: str = "", id: str = "s", invalid: bool = False):
    text = SCENARIO.format(args=args, expect=expect, extra=extra, id=id, invalid="\n    invalid_args: true" if invalid else "")
    (found,) = load_text(text, tmp_path / "s.yaml")
    return found


def shaped(tmp_path: Path, text: str = SHAPED_BINDING) -> McpTarget:
    path = tmp_path / "shaped.yaml"
    path.write_text(text, "utf-8")
    return McpTarget(f"mcp:python {SHAPED}", timeout=60.0, binding=path)  # a loaded machine starts slowly


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already
def test_a_differently_shaped_server_passes_through_its_binding(tmp_path: Path) -> None:
    cases = [
        ('{path: "${workspace}/a.txt", content: "hi\\n"}', "{output: {success: true, bytes_written: 3, created: true}}"),
        ('{path: "rel.txt", content: "x"}', "{error: {code: -32600}}"),
        ('{path: "${workspace}/no/a.txt", content: "x"}', "{error: {code: -32001}}"),
    ]
    with Runner(shaped(tmp_path)) as runner:
        results = [runner.run(scenario(tmp_path, args, expect, id=str(i))) for i, (args, expect) in enumerate(cases)]
    assert [r.verdict for r in results] == [Verdict.PASS] * 3, [r.reason for r in results]
    first = results[0].steps[0]
    assert first.extra["binding"]["output"] == {"result": {"written": [
        {"path": first.args["path"], "bytes": 3, "new": True}]}}
    assert results[2].steps[0].extra["binding"]["signal"] == "text '^Error: '"


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already
def test_a_mapping_the_input_schema_rejects_is_an_error_naming_the_binding_and_the_rule(tmp_path: Path) -> None:
    broken = SHAPED_BINDING.replace("      mode: {const: rewrite}\n", "")
    with Runner(shaped(tmp_path, broken)) as runner:
        result = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt", content: "x"}', "{output: {$any: true}}"))
        question = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt", content: "x"}', "{error: true}",
                                       extra="open_question: what happens?", id="q"))
    assert result.verdict is Verdict.ERROR
    assert f"the binding {tmp_path / 'shaped.yaml'}:4 maps write_text_file (as save_files)" in result.reason
    assert '"mode" is a required property (schema rule required)' in result.reason
    assert result.steps[0].output is None and result.steps[0].error is None  # never sent
    # an open question whose call was rejected for its shape is no recorded answer
    assert question.verdict is Verdict.ERROR and "inputSchema" in question.reason


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already
def test_an_argument_the_tool_does_not_take_sent_on_purpose_is_sent_and_recorded(tmp_path: Path) -> None:
    # A step saying `invalid_args: true` asks the tool about an argument it does not take: the call
    # is sent and its answer recorded (desktop-commander's q01 was blamed on its binding).
    args = '{path: "${workspace}/a.txt", content: "x", encoding: utf-8}'
    # (Without it, the lint refuses the scenario; a binding's own extra argument stays its mistake:
    # test_a_mapping_the_input_schema_rejects_is_an_error_naming_the_binding_and_the_rule.)
    with Runner(shaped(tmp_path)) as runner:
        deliberate = runner.run(scenario(tmp_path, args, "{error: true}", invalid=True, id="d"))
    assert deliberate.verdict is not Verdict.ERROR, deliberate.reason
    sent = deliberate.steps[0]
    assert sent.output is not None or sent.error is not None  # the tool's own answer, observed
def test_an_argument_sent_on_purpose_that_the_tool_does_not_take_is_sent_and_its_rule_recorded(tmp_path: Path) -> None:
    # invalid_args: true says the step breaks the schema on purpose: the tool's answer is the
    # observation (recorded), not the binding's mistake; the rule it broke stays in the record.
    with Runner(shaped(tmp_path)) as runner:
        result = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt", content: "x", encoding: utf-8}', "{error: true}", invalid=True))
    # The tool (which does not check its own schema) wrote the file: that is what it does, a fail of
    # the expectation, not an error.
    assert result.verdict is Verdict.FAIL and "expected the call to fail" in result.reason
    assert "Additional properties are not allowed ('encoding' was unexpected) (schema rule additionalProperties)" \
        in result.steps[0].extra["invalid_args"]


@pytest.mark.xdist_group("mcp-client")  # where the MCP SDK's client is imported already
def test_a_call_left_incomplete_on_purpose_is_sent_as_it_is(tmp_path: Path) -> None:
    # seed 003's open question "missing content": the profile's argument is absent, so the target's
    # `text` is too; that is the scenario's question, and the tool's answer is the observation.
    with Runner(shaped(tmp_path)) as runner:
        result = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt"}', "{error: true}", invalid=True))
    assert result.verdict is Verdict.PASS, result.reason
    assert result.steps[0].error["message"] == "Error: bad call"


def test_a_cmd_adapter_is_bound_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "cmd.yaml"
    path.write_text(textwrap.dedent("""\
        tools:
          write_text_file:
            output: bytes_written
            failure:
              signals: [{field: created, equals: false}]
              message: "join(' ', ['overwrote', to_string(bytes_written)])"
    """))
    target = CmdTarget("cmd:python -m reference_impl.serve", binding=path)
    with Runner(target) as runner:
        created = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt", content: "hey"}', "{output: 3}"))
        overwrite = load_text(SCENARIO.format(id="o", invalid="", extra="given: {files: {a.txt: old}}", args='{path: "${workspace}/a.txt", content: "hey"}',
                                              expect='{error: {code: null, message: "overwrote 3"}}'), tmp_path / "o.yaml")[0]
        overwritten = runner.run(overwrite)
    assert created.verdict is Verdict.PASS, created.reason
    assert overwritten.verdict is Verdict.PASS, overwritten.reason


def test_the_reference_through_a_renaming_binding_gives_the_same_verdicts(tmp_path: Path) -> None:
    # A binding whose every rename is undone by the next one is the identity: nothing may change.
    path = tmp_path / "identity.yaml"
    path.write_text("tools:\n  write_text_file:\n    args: {path: path, content: {arg: content}}\n")
    with Runner(CmdTarget("cmd:python -m reference_impl.serve", binding=path)) as runner:
        result = runner.run(scenario(tmp_path, '{path: "${workspace}/a.txt", content: "hi"}',
                                     "{output: {success: true, bytes_written: 2, created: true}}"))
    assert result.verdict is Verdict.PASS, result.reason

