"""The goals docs/performance.md lists are the ones `make bench` measures (harness/drivers/bench_goals.py)."""

from pathlib import Path

import pytest

from harness.drivers import bench_goals

PAGE = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


def test_the_page_lists_the_goals_the_bench_measures():
    assert bench_goals.page_goals(PAGE.read_text(encoding="utf-8")) == [goal.name for goal in bench_goals.GOALS]


def test_a_page_with_a_goal_missing_is_told_apart():
    figures = [(goal, 1.0, "a / b") for goal in bench_goals.GOALS]
    page = bench_goals.render(figures[:-1], "heading")
    assert bench_goals.page_goals(page) != [goal.name for goal in bench_goals.GOALS]


def test_write_replaces_only_the_generated_section(tmp_path):
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nIntro.\n\n## What makes a run cheap\n\ntext\n", encoding="utf-8")
    figures = [(goal, goal.limit * 2, "a / b") for goal in bench_goals.GOALS]
    bench_goals.write(page, bench_goals.render(figures, "first"))
    bench_goals.write(page, bench_goals.render(figures[:1], "second"))
    text = page.read_text(encoding="utf-8")
    assert text.count(bench_goals.BEGIN) == 1 and "first" not in text and "second" in text
    assert text.startswith("# Performance\n\nIntro.\n\n## Goals\n\n") and text.endswith("## What makes a run cheap\n\ntext\n")
    assert bench_goals.page_goals(text) == [bench_goals.GOALS[0].name]
    assert "| no |" in text  # twice the limit: not met


@pytest.mark.parametrize("value, met", [(1.5, "yes"), (1.51, "no")])
def test_a_goal_is_met_at_its_limit_and_not_above(value, met):
    goal = bench_goals.Goal("g", 1.5)
    row = bench_goals.render([(goal, value, "a / b")], "h").splitlines()[-3]
    assert row.endswith(f"| {met} |")


def test_the_first_scenario_is_the_earliest_noted():
    process = bench_goals.Process(wall=1.0, cpu=0.5, started=100.0,
                                  stderr="x\nbench-first-scenario 100.3 0.2\nbench-first-scenario 100.25 0.1\n")
    assert bench_goals.first_scenario(process) == pytest.approx((0.25, 0.1))


def test_the_probes_run_in_a_new_interpreter_are_python():
    # A probe that does not compile exits 1, which the bench takes for a run with a failure.
    compile(bench_goals._PROBE, "probe", "exec")
    compile(bench_goals._REPLAY, "replay", "exec")


def test_the_jobs_row_says_what_the_default_chose():
    process = bench_goals.Process(wall=1.0, cpu=0.5, started=100.0, stderr="x\nbench-jobs 1\n", load=3.5)
    assert bench_goals.jobs_chosen(process) == "--jobs 1 at load 3.5"


def test_the_figures_section_holds_each_parts_output_as_printed_and_replaces_only_itself(tmp_path):
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\n## Goals\n\ngoals\n\n## Reproducing\n\nmake bench\n", encoding="utf-8")
    printed = "speed: 531 scenarios\n  a line with ``` in it\n"
    bench_goals.write_figures(page, bench_goals.render_figures([("python -m a", printed)], "first"))
    bench_goals.write_figures(page, bench_goals.render_figures([("python -m b", "b\n")], "second"))
    text = page.read_text(encoding="utf-8")
    assert text.count(bench_goals.FIGURES_BEGIN) == 1 and "first" not in text and "`python -m b`:" in text
    assert text.startswith("# Performance\n\n## Goals\n\ngoals\n\n## Figures\n\n")
    assert text.endswith("## Reproducing\n\nmake bench\n")
    fenced = bench_goals.render_figures([("python -m a", printed)], "h")
    assert "````text\n" + printed + "````" in fenced  # a fence longer than the output's own backticks


def test_a_part_of_the_bench_that_fails_fails_it_and_says_so(tmp_path, monkeypatch, capsys):
    (tmp_path / "part_ok.py").write_text("print('figure 1')\n", encoding="utf-8")
    (tmp_path / "part_broken.py").write_text("print('half'); raise SystemExit(3)\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    outputs, ok = bench_goals.run_drivers(("part_ok", "part_broken"))
    assert not ok
    assert outputs == [("python -m part_ok", "figure 1\n"), ("python -m part_broken", "half\n(exited with status 3)\n")]
    assert "figure 1" in capsys.readouterr().out  # passed through as it came


def test_where_the_time_goes_splits_a_serial_run_at_its_first_and_last_scenario():
    process = bench_goals.Process(wall=1.0, cpu=0.9, started=100.0,
                                  stderr="bench-first-scenario 100.2 0.1\nbench-scenarios 0.5 100.9 878\n")
    before, inside, between, after, results = bench_goals.where_time_goes(process)
    assert (before, inside, between, after, results) == pytest.approx((0.2, 0.5, 0.2, 0.1, 878))


@pytest.mark.parametrize("stderr", [
    "bench-first-scenario 100.2 0.1\n",  # no note at the exit: nothing ran to its end
    "bench-scenarios 0.5 100.9 878\n",  # no first scenario noted
    "bench-first-scenario 100.2 0.1\nbench-scenarios 0.2 100.9 400\nbench-scenarios 0.3 100.8 478\n",  # workers
])
def test_where_the_time_goes_is_not_made_up_from_partial_notes(stderr):
    process = bench_goals.Process(wall=1.0, cpu=0.9, started=100.0, stderr=stderr)
    assert bench_goals.where_time_goes(process) is None


def test_the_notes_go_below_the_table_and_are_no_goals():
    figures = [(goal, 1.0, "a / b") for goal in bench_goals.GOALS]
    page = bench_goals.render(figures, "heading", ["Where it goes: 1 ms | 2 ms."])
    assert bench_goals.page_goals(page) == [goal.name for goal in bench_goals.GOALS]
    table_end = page.rindex("| yes |")
    assert page.index("- Where it goes: 1 ms | 2 ms.") > table_end


def test_the_probe_notes_the_scenarios_of_a_serial_run_as_it_exits(tmp_path):
    # The probe in a new interpreter, on one scenario: its exit note says one result, run inside.
    import subprocess
    import sys
    folder = tmp_path / "scenarios" / "mcp-write-text-file"
    folder.mkdir(parents=True)
    source = Path(__file__).resolve().parent.parent / "scenarios" / "mcp-write-text-file"
    (folder / "profile.yaml").write_bytes((source / "profile.yaml").read_bytes())
    first = source / "errors" / "invalid-path-bare-name.yaml"
    (folder / first.name).write_bytes(first.read_bytes())
    done = subprocess.run([sys.executable, "-c", bench_goals._PROBE, "run", "--jobs", "1", "--no-snapshots", "--no-builtin",
                           "--scenarios", str(tmp_path / "scenarios")],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode in (0, 1), done.stderr
    process = bench_goals.Process(wall=60.0, cpu=1.0, started=0.0, stderr=done.stderr)
    noted = bench_goals.where_time_goes(process)
    assert noted is not None and noted[4] >= 1 and noted[1] > 0


def test_the_median_of_several_runs_is_the_middle_run_with_the_middle_processor_time():
    runs = [bench_goals.Process(wall=wall, cpu=cpu, started=started, stderr=f"run {started}", load=load)
            for wall, cpu, started, load in ((0.9, 0.5, 1.0, 0.1), (0.5, 0.9, 2.0, 0.2), (0.7, 0.55, 3.0, 0.3),
                                             (0.6, 0.6, 4.0, 0.4), (1.2, 0.8, 5.0, 0.5))]
    middle = bench_goals.median_process(runs)
    # The run of median wall time (its output and start, which the probe's notes are timed from),
    # with the median of the processor times (another run's here).
    assert (middle.wall, middle.started, middle.stderr, middle.load) == (0.7, 3.0, "run 3.0", 0.3)
    assert middle.cpu == 0.6 and bench_goals.median_process(runs[:3]).cpu == 0.55
    assert bench_goals.median_process(runs[1:4]).wall == 0.6 and bench_goals.median_process(runs[1:4]).cpu == 0.6
