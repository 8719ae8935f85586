"""The `harness` command: exit codes, the JSON report's documented shape, lint, list and show."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema_rs
import pytest

from harness.cli.main import main

GOOD = """\
id: claude-code/read/cli-good
profile: claude-code
title: Read numbers lines with an arrow
source: 001-claude-code-read-write-edit.md §Output Format
given:
  files: {a.txt: "first line\\n"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect:
      output: {$contains: "     1→first line"}
"""
WRONG = GOOD.replace("cli-good", "cli-wrong").replace("1→first line", "1→FIRST LINE")


def put(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def test_run_exits_0_when_everything_passes(folder, capsys):
    put(folder, "good.yaml", GOOD)
    assert main(["run", "--no-builtin", "--scenarios", str(folder)]) == 0
    assert "1 scenarios" in capsys.readouterr().out


def test_a_wrong_expectation_exits_1_and_shows_expected_and_observed(folder, capsys):
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    assert main(["run", "--no-builtin", "--scenarios", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "FAIL claude-code/read/cli-wrong" in out
    assert "expected: text containing '     1→FIRST LINE'" in out and "observed: \"     1→first line" in out
    assert "Traceback" not in out


def test_an_invalid_scenario_exits_2_names_file_and_line_and_the_rest_still_runs(folder, capsys, tmp_path):
    put(folder, "good.yaml", GOOD)
    bad = put(folder, "bad.yaml", GOOD.replace("cli-good", "cli-bad").replace("    expect:", "    expect_:"))
    report = tmp_path / "r.json"
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--json", str(report)]) == 2
    assert f"{bad}:10:" in capsys.readouterr().out
    verdicts = {r["id"]: r["verdict"] for r in json.loads(report.read_text())["results"]}
    assert verdicts["claude-code/read/cli-good"] == "pass"
    assert [v for k, v in verdicts.items() if k.startswith("<invalid>")] == ["error"]


def test_bad_usage_exits_2(folder):
    put(folder, "good.yaml", GOOD)
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--target", "nonsense"]) == 2
    assert main(["run", "--bogus-flag"]) == 2
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "-k", "nothing-matches"]) == 2


def test_the_json_report_matches_its_documented_schema(folder, tmp_path):
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    report = tmp_path / "report.json"
    main(["run", "--no-builtin", "--scenarios", str(folder), "--json", str(report)])
    document = json.loads(report.read_text("utf-8"))
    schema = json.loads((Path(__file__).parents[1] / "harness/schema/report.schema.json").read_text())
    jsonschema_rs.validate(schema, document)
    assert document["target"]["name"] == "reference"
    assert document["summary"] == {"pass": 1, "fail": 1, "recorded": 0, "skip": 0, "error": 0, "known": 0}
    wrong = next(r for r in document["results"] if r["id"] == "claude-code/read/cli-wrong")
    # Read's lines are content (its profile's normal form): the miss is in the content aspect
    assert wrong["steps"][0]["tool"] == "Read" and wrong["steps"][0]["failures"][0]["path"] == "content"


def test_junit_report_has_a_failure_per_failed_scenario(folder, tmp_path):
    import xml.etree.ElementTree as ET
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    junit = tmp_path / "junit.xml"
    main(["run", "--no-builtin", "--scenarios", str(folder), "--junit", str(junit)])
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert {c.get("name"): c.find("failure") is not None for c in cases} == {
        "claude-code/read/cli-good": False, "claude-code/read/cli-wrong": True}


def test_lint_names_file_line_and_field_and_exits_non_zero(folder, capsys):
    bad = put(folder, "bad.yaml", GOOD.replace("title:", "titel:"))
    assert main(["lint", "--no-builtin", "--scenarios", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:3: [titel] unknown key 'titel'" in out


def test_lint_passes_a_clean_folder(folder, capsys):
    put(folder, "good.yaml", GOOD)
    assert main(["lint", "--no-builtin", "--scenarios", str(folder)]) == 0


def test_list_and_show(folder, capsys):
    put(folder, "good.yaml", GOOD)
    assert main(["list", "--no-builtin", "--scenarios", str(folder)]) == 0
    assert "claude-code/read/cli-good" in capsys.readouterr().out
    main(["run", "--no-builtin", "--scenarios", str(folder), "-q"])
    capsys.readouterr()
    assert main(["show", "claude-code/read/cli-good", "--no-builtin", "--scenarios", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "last observation" in out and "1→first line" in out


def test_python_dash_m_harness_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "harness", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("harness ")


def test_skip_reasons_are_listed_under_the_summary(folder, capsys):
    put(folder, "skip.yaml", GOOD.replace("cli-good", "cli-skip").replace(
        "source:", "requires: [disk-full]\nsource:").replace("given:", "given:\n  disk_free: 0"))
    put(folder, "good.yaml", GOOD)  # one that runs: a run in which every scenario skipped fails (nothing ran)
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--target", "cmd:python -m reference_impl.serve"]) == 0
    assert re.search(r"^1 skipped: .*cannot realise disk-full", capsys.readouterr().out, re.M)


def test_a_target_that_cannot_start_says_why_once_with_the_count_of_scenarios(folder, tmp_path, capsys):
    for number in range(5):
        put(folder, f"s{number}.yaml", GOOD.replace("cli-good", f"cli-{number}"))
    typo = f"cmd:{sys.executable} {tmp_path / 'no-such-adapter.py'}"
    files = {ext: tmp_path / f"r.{ext}" for ext in ("json", "xml", "md", "html")}
    code = main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--target", typo,
                 "--json", str(files["json"]), "--junit", str(files["xml"]), "--markdown", str(files["md"]),
                 "--html", str(files["html"])])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("No such file or directory") == 1 and out.count("TARGET DID NOT START") == 1
    assert "TARGET DID NOT START: 5 scenarios did not run" in out
    assert not [line for line in out.splitlines() if line.startswith("ERROR ")]  # no line per scenario
    for path in files.values():  # the stderr tail once per report (JUnit: once per suite), never per scenario
        assert path.read_text("utf-8").count("No such file or directory") == 1, path
    report = json.loads(files["json"].read_text("utf-8"))
    assert "No such file or directory" in report["target"]["start_error"]
    assert all(r["reason"].startswith("the target did not start: ") and "\n" not in r["reason"]
               for r in report["results"])
    assert main(["run", "-q", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--target", typo]) == 1
    quiet = capsys.readouterr().out
    assert "TARGET DID NOT START" in quiet and quiet.count("No such file or directory") == 1


def test_known_profile_names_are_checked_without_reading_the_built_in_profile_files(monkeypatch):
    """`harness list` (with or without --profile) must not parse and check every built-in
    profile.yaml again when the catalog came from the cache: that was a fifth of its start-up."""
    from harness.scenario import catalog, profiles
    cat = catalog.load()

    def read_again():
        raise AssertionError("the built-in profile files were read again")
    monkeypatch.setattr(profiles, "builtin", read_again)
    assert cat.unknown_profiles([]) is None
    assert cat.unknown_profiles(["claude-code", "aptix-tul-004"]) is None
    monkeypatch.undo()
    assert "unknown profile 'nosuch'" in cat.unknown_profiles(["claude-code", "nosuch"])


def test_an_unknown_profile_is_bad_usage_naming_the_valid_profiles(folder, capsys):
    put(folder, "good.yaml", GOOD)
    code = main(["run", "--no-builtin", "--scenarios", str(folder), "--profile", "nosuch", "--profile", "claude-code"])
    out = capsys.readouterr().out
    assert code == 2 and "unknown profile 'nosuch'" in out and "claude-code" in out and "1 scenarios" not in out
    assert main(["list", "--profile", "claude-cod"]) == 2
    assert "did you mean 'claude-code'?" in capsys.readouterr().err
    assert main(["report", "reference", "--profile", "nosuch", "-q"]) == 2


@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0", "-1", "ten"])
@pytest.mark.parametrize("command", ["run", "diff", "report"])
def test_a_timeout_that_is_no_bound_is_bad_usage(folder, capsys, command, value):
    # nan, inf and 1e308 ended in a traceback when the first call's poll was armed; 0 meant 10 s unsaid.
    put(folder, "good.yaml", GOOD)
    sources = [] if command == "run" else ["reference", "reference"]
    assert main([command, *sources, "--no-builtin", "--scenarios", str(folder), "--timeout", value]) == 2
    err = capsys.readouterr().err
    assert "argument --timeout: a number of seconds above 0 and at most 86400 is needed" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("expression, said", [
    ("good and (", "not a -k expression: expected not OR left parenthesis OR identifier"),
    ("(" * 5000 + "good" + ")" * 5000, "not a -k expression: nested too deep"),
])
def test_a_keyword_expression_that_does_not_parse_is_bad_usage(folder, capsys, expression, said):
    put(folder, "good.yaml", GOOD)
    for command in (["run"], ["list"], ["diff", "reference", "reference"]):
        assert main([*command, "--no-builtin", "--scenarios", str(folder), "-k", expression]) == 2
        err = capsys.readouterr().err
        assert f"argument -k: {said}" in err and "Traceback" not in err
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "-k", "(((good)))"]) == 0


def test_the_pytest_plugins_timeout_is_checked_as_the_clis(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--harness-timeout", "nan"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4  # pytest's usage error
    assert "argument --harness-timeout: a number of seconds above 0 and at most 86400 is needed" in done.stderr


@pytest.mark.parametrize("argv", [["-h"], ["-h", "run"], ["--help", "list", "x"]])
def test_the_help_of_harness_lists_every_command_whatever_follows_it(argv, capsys):
    from harness.cli.main import COMMANDS
    assert main(argv) == 0
    listed = re.findall(r"^    (\w+) ", capsys.readouterr().out, re.MULTILINE)
    assert listed == [name for names, _ in COMMANDS for name in names]


def test_a_command_builds_only_its_own_parser(capsys):
    from harness.cli.main import COMMANDS, build_parser
    every = [name for names, _ in COMMANDS for name in names]
    for names, _ in COMMANDS:
        parser = build_parser(names[0])
        for name in every:  # its help (exit 0) for the command's own group, an invalid choice (2) for the others
            with pytest.raises(SystemExit) as stopped:
                parser.parse_args([name, "-h"])
            assert stopped.value.code == (0 if name in names else 2), name
    capsys.readouterr()
