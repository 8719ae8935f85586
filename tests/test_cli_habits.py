"""Habits people bring from pytest: -x, --lf, a progress bar for long runs, --color and NO_COLOR,
and GitHub Actions annotations beside the step summary."""

from __future__ import annotations

import re

import pytest

from harness.cli import run as cli
from harness.cli.main import main
from harness.run import workers
from tests.test_cli import GOOD, WRONG, put

THIRD = GOOD.replace("cli-good", "cli-third")


def run(folder, *extra):
    return main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "-j", "1", *extra])


@pytest.fixture
def three(folder):
    put(folder, "a.yaml", GOOD)
    put(folder, "b.yaml", WRONG)
    put(folder, "c.yaml", THIRD)
    return folder


def test_exitfirst_stops_at_the_first_failure(three, tmp_path, capsys):
    import json
    report = tmp_path / "r.json"
    assert run(three, "-x", "--json", str(report)) == 1
    ids = [r["id"] for r in json.loads(report.read_text("utf-8"))["results"]]
    assert ids == ["claude-code/read/cli-good", "claude-code/read/cli-wrong"]
    assert "stopped at the first failure (-x)" in capsys.readouterr().out


def test_a_stop_request_starts_no_further_scenario_in_worker_processes(three):
    from harness.scenario import catalog
    from harness.targets import make_target
    scenarios = catalog.load([three]).scenarios
    (done,) = workers.run([make_target("reference")], scenarios, jobs=2, stop=lambda: True)
    assert done.results == []


def test_last_failed_runs_only_what_failed_last_time_then_everything(three, capsys):
    assert run(three) == 1
    capsys.readouterr()
    assert run(three, "--lf") == 1
    out = capsys.readouterr().out
    assert "--lf: running the 1 scenario(s) that failed last time (2 deselected)" in out and "1 scenarios" in out
    put(three, "b.yaml", WRONG.replace("FIRST LINE", "first line"))  # fixed
    assert run(three, "--lf") == 0
    assert "1 scenarios" in capsys.readouterr().out
    assert run(three, "--lf") == 0
    out = capsys.readouterr().out
    assert "no recorded failure" in out and "3 scenarios" in out


def red(text: str) -> bool:
    """Returns True when the text holds the ANSI code of red (a failed verdict's colour)."""
    return re.search(r"\x1b\[[0-9;]*31m", text) is not None


def test_color_always_never_and_no_color(three, capsys, monkeypatch):
    assert run(three, "--color", "always") == 1
    assert red(capsys.readouterr().out)
    assert run(three, "--color", "never") == 1
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal
    run(three)
    assert red(capsys.readouterr().out)
    monkeypatch.setenv("NO_COLOR", "1")
    run(three)
    assert not red(capsys.readouterr().out)
    run(three, "--color", "always")  # asked for explicitly: colour all the same
    assert red(capsys.readouterr().out)


def test_a_progress_bar_shows_only_once_a_run_takes_long(three, capsys, monkeypatch):
    run(three, "--color", "always")  # a terminal; this run is short
    assert "running on reference" not in capsys.readouterr().out
    monkeypatch.setattr(cli, "PROGRESS_AFTER", 0.0)
    run(three, "--color", "always")
    assert "running on reference" in capsys.readouterr().out


def test_github_actions_annotations_point_at_the_scenario_file_and_line(three, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    assert run(three) == 1
    assert "::error" not in capsys.readouterr().out  # outside Actions: nothing
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(three.parent))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(three) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    # Workflow commands are stopped while candidates' text may be printed, resumed for the annotations.
    token = lines[0][len("::stop-commands::"):]
    assert lines[0].startswith("::stop-commands::") and len(token) == 32 and lines[1] == f"::{token}::"
    assert lines[2:] == ["::error file=scenarios/b.yaml,line=8,title=fail on reference%3A claude-code/read/cli-wrong::"
                         "step 1 (Read): content: expected text containing '     1→FIRST LINE' (aspects: effects n/a, outcome pass, content fail, output pass)"]
    text = summary.read_text("utf-8")
    assert text.startswith("## File-tool conformance: reference") and "claude-code/read/cli-wrong" in text
