"""harness fuzz finds planted bugs, shrinks them, and writes a scenario that fails on the bug only."""

from __future__ import annotations

import pytest
import yaml

pytest.importorskip("hypothesis")

from harness.drivers import fuzz as fuzz_driver  # noqa: E402
from harness.drivers.fuzz import VersionSlack, compare_call, fuzz, hunks_definite, make_diff  # noqa: E402
from harness.targets.base import CallResult, TargetError  # noqa: E402
from harness.targets.reference import ReferenceTarget  # noqa: E402
from tests import planted  # noqa: E402
from tests.fakes import read_scenario  # noqa: E402

PLANTED = {"edit-replaces-the-last-of-several": (planted.LastOccurrenceEdit, "claude-code"),
           "version-skips-after-a-failed-patch": (planted.SkipVersionAfterError, "gemini-safe-patch")}


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    """Returns each planted bug's fuzz run (seed 1), once per module: the same-seed test repeats one."""
    cache = {}

    def finding(name):
        if name not in cache:
            bug, profile = PLANTED[name]
            cache[name] = fuzz(planted.PlantedTarget({profile: bug}), profile, seed=1, max_examples=600,
                               max_seconds=60, out=tmp_path_factory.mktemp("fuzz"))
        return cache[name]
    return finding


@pytest.mark.parametrize("name", PLANTED)
def test_a_planted_bug_is_found_shrunk_and_written_as_a_scenario_that_fails_only_on_it(findings, name):
    profile = PLANTED[name][1]
    result = findings(name)
    assert result.divergence is not None, f"not found in {result.examples} sequences"
    assert result.checks == {"reference": "pass", "target": "fail"}
    document = yaml.safe_load(result.scenario_file.read_text("utf-8"))
    assert document["profile"] == profile and document["source"].startswith("00")
    assert len(document["steps"]) <= 4  # shrunk: the bug needs two or three steps
    assert "Found by `harness fuzz" in result.scenario_file.read_text("utf-8")


def test_the_same_seed_gives_the_same_finding(findings, tmp_path):
    first = findings("edit-replaces-the-last-of-several")  # a fresh target, another folder: a second run
    target = planted.PlantedTarget({"claude-code": planted.LastOccurrenceEdit})
    second = fuzz(target, "claude-code", seed=1, max_examples=600, max_seconds=60, out=tmp_path)  # as deep as the first
    assert first.scenario_file.parent != second.scenario_file.parent
    assert first.scenario_file.name == second.scenario_file.name
    assert first.scenario_file.read_text() == second.scenario_file.read_text()


@pytest.mark.parametrize("profile", fuzz_driver.PROFILES)
def test_the_reference_against_itself_never_diverges(profile):
    result = fuzz(ReferenceTarget("reference"), profile, seed=3, max_examples=15)
    assert result.divergence is None, str(result.divergence)
    assert result.examples >= 15


class CannotOpen(ReferenceTarget):
    """A target whose sessions fail to open: the machine is never made, so hypothesis never tears it down."""

    def open(self, profile, workspace, options):
        raise TargetError("cannot open a session")


def test_checking_a_written_scenario_leaves_no_folder(tmp_path, monkeypatch):
    # Each check ran the scenario on a runner that was never stopped: its enclosure and trash stayed
    # in the temporary folder (six a test session).
    import tempfile
    (tmp_path / "spaces").mkdir()
    monkeypatch.setattr(fuzz_driver, "_workspace_parent", lambda: None)  # the system's temporary folder:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "spaces"))  # this one
    written = tmp_path / "s.yaml"
    written.write_text(READ_SCENARIO, "utf-8")
    target = planted.PlantedTarget({"claude-code": planted.LastOccurrenceEdit})
    checks = fuzz_driver.check_scenario(written, ReferenceTarget("reference"), target)
    assert checks == {"reference": "pass", "target": "pass"}
    assert list((tmp_path / "spaces").iterdir()) == []


READ_SCENARIO = read_scenario("claude-code/fuzz/check")


def test_a_target_that_cannot_open_leaves_no_workspace(tmp_path, monkeypatch):
    monkeypatch.setattr(fuzz_driver, "_workspace_parent", lambda: str(tmp_path))
    try:
        fuzz(CannotOpen("broken"), "mcp-write-text-file", seed=1, max_examples=3)
    except Exception:  # noqa: BLE001 - how the failure surfaces is not the point; what it leaves is
        pass
    assert list(tmp_path.iterdir()) == []


def test_versions_may_differ_only_as_far_as_failed_calls_leave_open():
    slack = VersionSlack(fewer=1)
    ref = CallResult(output={"content": "a\n", "sha256": "h", "version": 3})
    assert compare_call("read_file", ref, CallResult(output={**ref.output, "version": 2}), "/r", "/t", slack) is None
    aspect, detail, expect = compare_call("read_file", ref, CallResult(output={**ref.output, "version": 4}),
                                          "/r", "/t", slack)
    assert aspect == "output" and expect == {"output": {"$subset": {"content": "a\n", "sha256": "h",
                                                                      "version": {"$any_of": [2, 3]}}}}


def test_messages_the_seed_leaves_open_are_not_compared():
    ref = CallResult(error={"code": None, "message": "String to replace not found in file."})
    other = CallResult(error={"code": None, "message": "No match found"})
    assert compare_call("Edit", ref, other, "/r", "/t", VersionSlack()) is None
    assert compare_call("Edit", ref, CallResult(output="done"), "/r", "/t", VersionSlack())[0] == "outcome"


def test_ambiguous_hunks_are_not_generated():
    text = "begin\nv\nend\nbegin\nv\nend\n"
    diff = make_diff(text, "begin\nw\nend\nbegin\nv\nend\n", 1, 0)
    assert hunks_definite(diff, text, 0)  # the header names one of the two places
    assert not hunks_definite(make_diff(text, "begin\nw\nend\nbegin\nv\nend\n", 1, 1), text, 1)


def test_the_command_reports_no_divergence_for_the_reference(capsys, tmp_path):
    from harness.cli.main import main
    code = main(["fuzz", "--target", "reference", "--profile", "mcp-write-text-file", "--max-examples", "5",
                 "--out", str(tmp_path)])
    assert code == 0
    assert "fuzz mcp-write-text-file: no divergence" in capsys.readouterr().out


@pytest.mark.parametrize("option, value, said", [
    ("--max-examples", "0", "a whole number from 1 to 1000000 is needed"),
    ("--max-examples", "-1", "a whole number from 1 to 1000000 is needed"),
    ("--max-seconds", "nan", "a number of seconds above 0 and at most 86400 is needed"),
    ("--max-seconds", "-1", "a number of seconds above 0 and at most 86400 is needed"),
])
def test_a_count_or_time_that_is_no_bound_is_bad_usage(capsys, tmp_path, option, value, said):
    # --max-examples 0 ended in a ZeroDivisionError, -1 in Hypothesis's InvalidArgument; --max-seconds -1
    # ran nothing and said "no divergence".
    from harness.cli.main import main
    assert main(["fuzz", "--target", "reference", "--profile", "mcp-write-text-file", option, value,
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {said}" in err and "Traceback" not in err
