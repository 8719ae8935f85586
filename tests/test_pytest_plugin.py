"""Scenarios as pytest items: ids, verdicts, readable failures, --target."""

from __future__ import annotations

import os
import textwrap

import pytest
import yaml

pytest_plugins = ["pytester"]

GOOD = """\
id: claude-code/read/plugin-good
profile: claude-code
title: t
source: 001-claude-code-read-write-edit.md §Output Format
given:
  files: {a.txt: "alpha\\n"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect:
      output: {$contains: "1→alpha"}
"""


@pytest.fixture
def project(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    (pytester.path / "scenarios").mkdir()
    return pytester


def put(pytester, name, text):
    (pytester.path / "scenarios" / name).write_text(textwrap.dedent(text), "utf-8")


def test_each_scenario_is_an_item_whose_node_id_shows_the_scenario_id(project):
    put(project, "good.yaml", GOOD)
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["scenarios/good.yaml::claude-code/read/plugin-good"])


def test_a_wrong_expectation_fails_with_a_readable_diff_not_a_traceback(project):
    put(project, "good.yaml", GOOD)
    put(project, "wrong.yaml", GOOD.replace("plugin-good", "plugin-wrong").replace("1→alpha", "1→beta"))
    result = project.runpytest("-q")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAIL claude-code/read/plugin-wrong*", "*expected: text containing '1→beta'*",
                                 "*observed: \"     1→alpha*"])
    assert "harness/run/runner.py" not in result.stdout.str()


def test_skip_and_open_questions(project):
    put(project, "skip.yaml", GOOD.replace("plugin-good", "plugin-skip").replace(
        "source:", "requires: [disk-full]\nsource:").replace("  files:", "  disk_free: 0\n  files:"))
    put(project, "open.yaml", GOOD.replace("plugin-good", "plugin-open").replace(
        "source:", "open_question: what does it say?\nsource:"))
    # Through cmd:, running as root, disk-full cannot be realised: a skip with the reason.
    result = project.runpytest("-q", "-rs", "--target", "cmd:python -m reference_impl.serve")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*cannot realise disk-full*"])


def test_an_invalid_file_is_a_failing_item_naming_the_line(project):
    put(project, "bad.yaml", GOOD.replace("title:", "titel:"))
    result = project.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bad.yaml:3: [[]titel] unknown key 'titel'*"])


def test_an_unknown_target_is_reported(project):
    put(project, "good.yaml", GOOD)
    result = project.runpytest("-q", "--target", "nonsense")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # said before any item runs
    result.stderr.fnmatch_lines(["*unknown target 'nonsense'*"])


def test_yaml_outside_the_configured_folders_is_not_collected(pytester):
    (pytester.path / "config.yaml").write_text("key: value\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert "config.yaml" not in result.stdout.str()


def test_the_built_in_catalog_is_collected_from_any_project(pytester):
    result = pytester.runpytest("--harness-catalog", "-k", "tc1", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*::mcp-write-text-file/tc/tc1-create-new-file"])


def test_aspects_judges_only_the_named_aspects(project):
    put(project, "wrong.yaml", GOOD.replace("plugin-good", "plugin-wrong").replace("1→alpha", "1→beta"))
    project.runpytest("-q", "--aspects", "effects,outcome").assert_outcomes(passed=1)
    project.runpytest("-q", "--aspects", "output").assert_outcomes(passed=1)  # Read's lines are content
    project.runpytest("-q", "--aspects", "content").assert_outcomes(failed=1)
    result = project.runpytest("-q", "--aspects", "wording")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--aspects takes a comma-separated list of effects, outcome, content, output*"])


def test_an_invalid_profile_file_is_a_failing_item_naming_the_line(project):
    (project.path / "scenarios" / "mine").mkdir()
    put(project, "mine/profile.yaml", "name: mine\ntitle: t\ncontract: {document: d.md, title: t}\ntools: {}\n")
    result = project.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*invalid profile file*", "*profile.yaml:4: [[]tools] {} has less than 1 property*"])


def test_collection_resolves_paths_as_path_resolve_does(tmp_path):
    # Collection resolves each file's folder once and the file alone for being a link: the same
    # answer as Path.resolve, through a linked folder, a linked file, a missing file, "..".
    from harness.pytest_plugin import _real
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "a.yaml").write_text("x", "utf-8")
    (tmp_path / "real" / "c.yaml").write_text("z", "utf-8")
    (tmp_path / "elsewhere.yaml").write_text("y", "utf-8")
    (tmp_path / "linked").symlink_to(tmp_path / "real" / "sub")
    (tmp_path / "real" / "sub" / "b.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    for path in [tmp_path / "real" / "sub" / "a.yaml", tmp_path / "linked" / "a.yaml", tmp_path / "linked" / "b.yaml",
                 tmp_path / "linked" / "missing.yaml", tmp_path / "linked" / ".." / "c.yaml", tmp_path / "linked" / ".."]:
        assert _real(path) == str(path.resolve()), path
    assert _real(tmp_path / "linked" / ".." / "c.yaml") == str(tmp_path.resolve() / "real" / "c.yaml")
    assert _real(tmp_path / "linked" / "b.yaml") == str(tmp_path.resolve() / "elsewhere.yaml")


def test_a_linked_scenario_file_leading_out_of_the_folders_is_not_collected(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "out.yaml"
    outside.write_text(GOOD.replace("plugin-good", "plugin-out"), "utf-8")
    put(project, "good.yaml", GOOD)
    (project.path / "scenarios" / "out.yaml").symlink_to(outside)
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["scenarios/good.yaml::claude-code/read/plugin-good"])
    assert "plugin-out" not in result.stdout.str()


def test_baseline_and_write_baseline(project):
    put(project, "good.yaml", GOOD)
    put(project, "wrong.yaml", GOOD.replace("plugin-good", "plugin-wrong").replace("1→alpha", "1→beta"))
    result = project.runpytest("-q", "-p", "no:cacheprovider", "--write-baseline", "known.yaml")
    result.assert_outcomes(passed=1, failed=1)
    written = yaml.safe_load((project.path / "known.yaml").read_text())
    assert [(check["step"], check["path"]) for check in written["claude-code/read/plugin-wrong"]] == [(1, "content")]
    result = project.runpytest("-q", "-p", "no:cacheprovider", "-rx", "--baseline", "known.yaml")
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*known failure (baseline): fail: content*"])
    (project.path / "stale.yaml").write_text("claude-code/read/plugin-good: was broken\n")
    result = project.runpytest("-q", "-p", "no:cacheprovider", "--baseline", "stale.yaml")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*stale baseline entry for claude-code/read/plugin-good*"])
    (project.path / "bad.yaml").write_text("claude-code/read/plugin-good: {aspect: looks, reason: x}\n")
    result = project.runpytest("-q", "-p", "no:cacheprovider", "--baseline", "bad.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_pytest_route_keeps_the_stored_snapshots_parsed_between_sessions(project, parses):
    # As `harness run` keeps them (tests/test_snapshot_cache.py): a second session parses no stored
    # snapshot, and a snapshot changed since is parsed afresh and still fails its item.
    parsed = parses
    put(project, "good.yaml", GOOD)
    project.runpytest("-q", "-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    [stored] = (project.path / "snapshots").rglob("*.yaml")
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert len(parsed) == 1
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert len(parsed) == 1  # from the cache
    stored.write_text(stored.read_text("utf-8").replace("alpha", "gamma"), "utf-8")
    project.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(failed=1)
    assert len(parsed) == 2


def test_an_item_location_is_its_file_relative_to_the_root_folder_inside_it_or_not(project):
    # pytest's reports (JUnit XML file and line, -v lines) take the location: the scenario's file
    # relative to the root folder, its line counted from 0, "scenario <id>"; the built-in catalog of
    # this checkout lies outside the project's root folder (a path with "..").
    put(project, "good.yaml", GOOD)
    recorded = project.inline_run("--collect-only", "--harness-catalog", "-k", "plugin-good or tc1-create-new-file")
    items = recorded.getcall("pytest_collection_finish").session.items
    found = {item.name: item.location for item in items}
    assert found["claude-code/read/plugin-good"] == ("scenarios/good.yaml", 0, "scenario claude-code/read/plugin-good")
    catalog = next(item for item in items if item.name.endswith("tc1-create-new-file"))
    relative, line, description = found[catalog.name]
    assert relative.startswith("..") and relative == os.path.relpath(catalog.path, project.path)
    assert (line, description) == (catalog.scenario.line - 1, f"scenario {catalog.name}")


def test_an_item_runs_the_hooks_of_its_own_folders_conftest_files_only(project):
    # The item's hooks are worked out once collection is over: a conftest file of a folder collected
    # after the scenario folder (zz/) must still not apply to scenario items, and the scenario
    # folder's own must.
    put(project, "good.yaml", GOOD)
    put(project, "conftest.py", "def pytest_runtest_setup(item):\n    item.user_properties.append(('seen', 'scenarios'))\n\n"
                                "def pytest_runtest_logreport(report):\n"
                                "    if report.when == 'call':\n"
                                "        open('seen.txt', 'a').write(f'{report.nodeid} {dict(report.user_properties)}\\n')\n")
    (project.path / "zz").mkdir()
    (project.path / "zz" / "conftest.py").write_text("def pytest_runtest_setup(item):\n    raise RuntimeError('zz')\n")
    (project.path / "zz" / "test_z.py").write_text("def test_z():\n    pass\n")
    result = project.runpytest("-q", "-p", "no:cacheprovider")  # zz/conftest.py is loaded as zz/ is collected
    result.assert_outcomes(passed=1, errors=1)  # zz's own test errs in its set-up, the scenario passes
    seen = (project.path / "seen.txt").read_text("utf-8").splitlines()
    assert seen == ["scenarios/good.yaml::claude-code/read/plugin-good {'seen': 'scenarios', 'verdict': 'pass'}"]


def test_snapshots_no_scenario_matches_are_listed_after_the_run(project):
    put(project, "good.yaml", GOOD)
    project.runpytest("-q", "-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    gone = project.path / "snapshots" / "reference" / "claude-code" / "read" / "gone.yaml"
    gone.write_text("id: claude-code/read/gone\n", "utf-8")
    result = project.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 snapshot(s) no scenario matches*", f"  {gone}"])
    assert "plugin-good.yaml" not in result.stdout.str()


#: A conftest.py noting how many objects the garbage collector holds frozen: as collection starts, during
#: each item, at the session's end, once pytest's clean-ups are done, and as the process ends; with
#: FREEZE_FIRST set it freezes some itself first.
FREEZE_PROBE = """\
import atexit, functools, gc, os

if os.environ.get("FREEZE_FIRST"):
    gc.freeze()

def note(when):
    with open("frozen.txt", "a") as out:
        out.write(f"{when} {gc.get_freeze_count()}\\n")

def pytest_configure(config):
    config.add_cleanup(functools.partial(note, "cleanup"))  # runs after the plugin's own clean-ups

def pytest_collection(session):
    note("collection")

def pytest_runtest_call(item):
    note("item")

def pytest_sessionfinish(session):
    note("end")

atexit.register(note, "exit")  # runs after the plugin's own exit handler
"""


@pytest.mark.parametrize("frozen_before", [False, True])
def test_what_collection_left_alive_is_frozen_for_the_run_and_given_back(project, monkeypatch, frozen_before):
    # Frozen during the items (the collector's walks skip it) and again as the process exits (its last
    # collection skips it), given back in between, for a program that goes on after pytest.main; objects
    # frozen before the session (by the program that runs it) are neither frozen again nor given back.
    put(project, "good.yaml", GOOD)
    (project.path / "conftest.py").write_text(FREEZE_PROBE, "utf-8")
    if frozen_before:
        monkeypatch.setenv("FREEZE_FIRST", "1")
    project.runpytest_subprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    noted = {when: int(count) for when, count in
             (line.split() for line in (project.path / "frozen.txt").read_text("utf-8").splitlines())}
    assert noted["item"] > 0 and noted["exit"] > 0
    if frozen_before:
        assert noted["cleanup"] > 0
        assert noted["end"] <= noted["item"] <= noted["collection"]  # the program's freeze: nothing added
    else:
        assert noted["cleanup"] == 0
        # What start-up left alive is frozen before collection (loading the catalog sets off full
        # walks), what collection added before the first item, what the items left after the last.
        assert 0 < noted["collection"] < noted["item"] < noted["end"]


def test_a_session_without_scenario_items_gets_back_what_start_up_froze(project):
    # The scenario folders are configured, so start-up freezes; no scenario item is collected, so
    # the Python test runs (and the session ends) with nothing frozen, as without the plugin.
    (project.path / "conftest.py").write_text(FREEZE_PROBE, "utf-8")
    (project.path / "test_plain.py").write_text("def test_plain():\n    pass\n", "utf-8")
    project.runpytest_subprocess("-q", "-p", "no:cacheprovider", "test_plain.py").assert_outcomes(passed=1)
    noted = {when: int(count) for when, count in
             (line.split() for line in (project.path / "frozen.txt").read_text("utf-8").splitlines())}
    assert noted["collection"] > 0
    assert noted["item"] == noted["end"] == noted["cleanup"] == noted["exit"] == 0


@pytest.mark.parametrize("name", ["claude-code/read/plugin-good", 'a\\b/c?d*e:f|g"h<i>j k.0', "".join(map(chr, range(128))),
                                  "tab\there", "é/x", "zero\u200bwidth", "\x7f"])
def test_a_snapshot_name_is_cleaned_as_syrupy_cleans_it(name):
    # Scenario ids (printable ASCII) skip syrupy's test of each character's category; every name
    # comes out as syrupy's own cleaning makes it (what its report and its files are named by).
    from syrupy.extensions.single_file import SingleFileSnapshotExtension

    from harness.pytest_plugin.syrupy import ScenarioSnapshotExtension
    assert ScenarioSnapshotExtension._sanitize_filename(name) == SingleFileSnapshotExtension._sanitize_filename(name)
