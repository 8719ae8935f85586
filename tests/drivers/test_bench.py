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
    # The sandbox part once more: its verdicts differed from the plain run's in the full suite when the
    # sandboxed candidate was started once per scenario (one start slower than the hello timeout on a
    # loaded machine made every later scenario an error); it is started twice per run now.
    assert bench.main(["--repeat", "1", "--sandbox-repeat", "1", "--scenarios", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 scenarios, 3 tool calls" in out
    for label in ("in-process", "cmd:", "ratio cmd:/in-process", "harness overhead per call", "end-to-end cost per call"):
        assert label in out
    assert "3 pass" in out and "differ" not in out
    from harness.containment import sandbox
    if sandbox.available()[0]:
        assert "ratio sandboxed/unsandboxed, per run" in out and "ratio sandboxed/unsandboxed, per scenario" in out
        assert "cmd: in the sandbox" in out and out.count("3 pass") == 3, out
    else:
        assert "sandbox: not measured" in out


def test_the_speed_bench_prints_each_ratio_with_the_load(tmp_path: Path, capsys) -> None:
    from harness.drivers import bench_speed
    for n in range(3):
        (tmp_path / f"s{n}.yaml").write_text(SCENARIO.format(n=n))
    # No warm-up runs: the suite's own processes wrote the bytecode caches (each pytest -n 2 costs 2 s of processor).
    assert bench_speed.main(["--repeat", "1", "--scenarios", str(tmp_path), "--skip", "mcp", "--skip", "filesystem",
                             "--skip", "campaign", "--skip", "start", "--skip", "warm-up"]) == 0
    out = capsys.readouterr().out
    assert "3 scenarios, 3 calls" in out and "load average" in out
    for label in ("in-process / replay floor", "with the workspace after each step", "--jobs 2 / --jobs 1",
                  "pytest -n 2 / harness run --jobs 2", "pytest -n 2 on 3 empty tests / harness run"):
        assert label in out
    import re
    memory = re.findall(r"memory of a run of (\d+) \((\d+)x\), JSON\+JUnit +([\d.]+) MiB +peak ([\d.]+) KB per scenario"
                        r"(, [-+][\d.]+ KB per added scenario)?, ([\d.]+) MiB held after", out)
    assert [(int(n), int(x), bool(growth)) for n, x, _, _, growth, _ in memory] == [
        (3, 1, False), (30, 10, True), (90, 30, True)], out
    assert all(float(peak) > 0 and float(held) <= float(mib) for _, _, mib, peak, _, held in memory), out


def test_the_replay_floor_makes_the_calls_the_runner_makes(tmp_path: Path) -> None:
    from harness.drivers import bench_speed
    from harness.scenario import catalog
    calls = []
    import reference_impl
    original = reference_impl.open_session

    def spy(profile, workspace, options=None):
        session = original(profile, workspace, options)
        real = session.call
        session.call = lambda tool, args: calls.append(tool) or real(tool, args)
        return session

    reference_impl.open_session = spy
    try:
        (tmp_path / "s.yaml").write_text(SCENARIO.format(n=1))
        bench_speed.replay(catalog.load([tmp_path]).scenarios, str(tmp_path))
    finally:
        reference_impl.open_session = original
    assert calls == ["Write"]
    assert [p.name for p in tmp_path.iterdir()] == ["s.yaml"]  # its folders are gone again


def test_the_mcp_bench_counts_the_processor_time_of_the_processes_it_started() -> None:
    import subprocess
    import sys
    import time

    from harness.drivers import bench_mcp

    before = bench_mcp.children_cpu()
    child = subprocess.Popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
                              "while time.process_time() < end: pass\ntime.sleep(60)"])
    try:
        deadline = time.monotonic() + 30
        while bench_mcp.children_cpu() - before < 0.2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bench_mcp.children_cpu() - before >= 0.2  # the child's 0.3 s of processor time, as /proc counts it
    finally:
        child.kill()
        child.wait()
