"""``python -m harness.drivers.bench`` prints its figures; it asserts nothing about how fast they are."""

from __future__ import annotations

from pathlib import Path

from harness.drivers import bench

SCENARIO = """
id: bench/write-{n}
profile: claude-code
title: one Write
source: test
steps:
  - tool: Write
    args: {{file_path: "${{workspace}}/a.txt", content: "hi\\n"}}
    expect: {{output: {{$contains: "a.txt"}}}}
"""


def test_bench_prints_both_times_their_ratio_and_the_per_call_overhead(tmp_path: Path, capsys) -> None:
    for n in range(3):
        (tmp_path / f"s{n}.yaml").write_text(SCENARIO.format(n=n))
    assert bench.main(["--repeat", "1", "--scenarios", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 scenarios, 3 tool calls" in out
    for label in ("in-process", "cmd:", "ratio cmd:/in-process", "harness overhead per call", "end-to-end cost per call"):
        assert label in out
    assert "3 pass" in out and "differ" not in out
