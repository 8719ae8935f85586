"""Bindings come with a checkout: their patterns and expressions must take bounded time and memory."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from harness.targets import bindings


def binding(tmp_path: Path, text: str) -> bindings.Binding:
    path = tmp_path / "b.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return bindings.load(path)


def test_a_failure_pattern_that_backtracks_without_end_takes_linear_time(tmp_path):
    # On a backtracking engine "(a+)+b" against an echoed path doubled its time per character:
    # 13 s at 26 characters, days at 40.
    b = binding(tmp_path, """
        tools:
          write_text_file:
            failure:
              signals: [isError, {text: "(a+)+b"}]
              codes: [{match: "(x+x+)+y", code: -32001}]
    """)
    started = time.monotonic()
    text = "a" * 60_000 + "!"
    output, error, _ = b.result("write_text_file", text, None, "result", text)
    assert error is None and output == text
    _, error, _ = b.result("write_text_file", None, {"code": None, "message": "x" * 60_000}, "isError", "x")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("expression", [
    "@" + "|[@,@]" * 40,                         # a value reached 2^40 times
    "[@]" + "|[@,@][]" * 40,                     # flattened: a list of 2^40 values
    "to_string(@" + "|[@,@]" * 40 + ")",         # serialised
    "join('', [@" + ",@" * 3 + "])" + "|join('', [@,@,@,@])" * 12,  # text doubling per stage
])
def test_an_output_expression_building_without_end_is_an_error_not_all_memory(tmp_path, expression):
    b = binding(tmp_path, f"""
        tools:
          write_text_file:
            output: "{expression}"
    """)
    started = time.monotonic()
    with pytest.raises(bindings.ResultTooLarge):
        b.result("write_text_file", "abcdefgh", None, "result", "abcdefgh")
    assert time.monotonic() - started < 10


def test_through_a_cmd_target_such_an_expression_is_the_calls_error(tmp_path):
    import sys

    from harness.run.runner import Runner
    from harness.scenario.loader import load_text
    from harness.scenario.model import Verdict
    from harness.targets.cmd.target import CmdTarget
    adapter = Path(__file__).resolve().parents[2] / "examples" / "adapters" / "minimal_adapter.py"
    path = tmp_path / "b.yaml"
    path.write_text('tools:\n  write_text_file:\n    output: "to_string(@' + "|[@,@]" * 40 + ')"\n', "utf-8")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(textwrap.dedent("""
        id: mcp-write-text-file/hostile/jmespath
        profile: mcp-write-text-file
        title: a binding building without end
        source: test
        steps:
          - tool: write_text_file
            args: {path: "${workspace}/a.txt", content: "x"}
    """), "utf-8")
    (loaded,) = load_text(scenario.read_text("utf-8"), scenario)
    target = CmdTarget(f"cmd:{sys.executable} {adapter}", binding=path)
    with Runner(target) as runner:
        result = runner.run(loaded)
    assert result.verdict is Verdict.ERROR and "built more than 200000 values" in result.reason, result.reason
    assert "harness error" not in result.reason
