"""Baselines of known failures: listed failures pass, unlisted fail, listed passes fail as stale."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

from harness.cli.main import main
from harness.record import baseline
from tests.test_cli import GOOD, WRONG, put


def test_apply_sorts_results_into_known_new_stale_and_not_run():
    known = baseline.Baseline({"a": "r", "b": "r", "c": "r", "d": "r"})
    outcome = baseline.apply(known, {"a": "fail", "b": "pass", "c": "skip", "x": "error", "y": "pass"})
    assert outcome.known == ["a"] and outcome.new == ["x"] and outcome.stale == ["b"]
    assert outcome.not_run == ["c", "d"] and outcome.failed


def test_only_known_failures_do_not_fail():
    outcome = baseline.apply(baseline.Baseline({"a": "r"}), {"a": "error", "b": "pass", "q": "recorded"})
    assert not outcome.failed


@pytest.mark.parametrize("text, message", [
    ("- a\n- b\n", "maps scenario ids to reasons"),
    ("a: ''\n", "give a reason or a link"),
    ("a: {reason: x, url: y}\n", r"unknown key\(s\) url"),
    ("a: [\n", "not valid YAML"),
])
def test_a_malformed_baseline_names_the_file(tmp_path, text, message):
    path = tmp_path / "baseline.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(ValueError, match=message) as caught:
        baseline.load(path)
    assert str(path) in str(caught.value)


def test_reason_and_link_entries_are_read(tmp_path):
    path = tmp_path / "baseline.yaml"
    path.write_text("a: https://example.invalid/1\nb: {reason: slow, link: https://example.invalid/2}\n", "utf-8")
    assert baseline.load(path).entries == {"a": "https://example.invalid/1", "b": "slow https://example.invalid/2"}


def run(folder, *extra):
    return main(["run", "-q", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", *extra])


def test_cli_listed_failure_passes_unlisted_fails_stale_fails(folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    listed = tmp_path / "listed.yaml"
    listed.write_text("claude-code/read/cli-wrong: https://example.invalid/issue/1\n", "utf-8")
    assert run(folder) == 1
    assert run(folder, "--baseline", str(listed)) == 0
    stale = tmp_path / "stale.yaml"
    stale.write_text("claude-code/read/cli-wrong: known\nclaude-code/read/cli-good: was broken\n", "utf-8")
    capsys.readouterr()
    assert run(folder, "--baseline", str(stale)) == 1
    assert "stale entry claude-code/read/cli-good" in capsys.readouterr().out
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing known\n", "utf-8")
    assert run(folder, "--baseline", str(empty)) == 1
    assert run(folder, "--baseline", str(tmp_path / "missing.yaml")) == 2


def test_cli_write_baseline_lists_the_failures_and_keeps_given_reasons(folder, tmp_path):
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    path = tmp_path / "baseline.yaml"
    run(folder, "--write-baseline", str(path))
    entries = yaml.safe_load(path.read_text("utf-8"))
    assert list(entries) == ["claude-code/read/cli-wrong"]
    check, = entries["claude-code/read/cli-wrong"]  # the narrowest entry: the one unmet check
    assert check["step"] == 1 and check["path"] == "content" and check["reason"].startswith("fail: content")
    path.write_text("claude-code/read/cli-wrong: https://example.invalid/issue/7\n", "utf-8")
    run(folder, "--write-baseline", str(path))
    assert yaml.safe_load(path.read_text("utf-8")) == {"claude-code/read/cli-wrong": "https://example.invalid/issue/7"}
    assert run(folder, "--baseline", str(path)) == 0


def test_known_failures_show_as_known_in_every_report_and_agree_with_the_exit_code(folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG)
    listed = tmp_path / "listed.yaml"
    listed.write_text("claude-code/read/cli-wrong: upper case is issue 12\n", "utf-8")
    out = {ext: tmp_path / f"report.{ext}" for ext in ("json", "xml", "md", "html")}
    code = main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "--baseline", str(listed),
                 "--json", str(out["json"]), "--junit", str(out["xml"]), "--markdown", str(out["md"]),
                 "--html", str(out["html"])])
    terminal = capsys.readouterr().out
    assert code == 0
    assert "KNOWN fail claude-code/read/cli-wrong  baseline: upper case is issue 12" in terminal
    assert re.search(r"┃ profile .*┃ known ┃", terminal) and "FAIL claude-code/read/cli-wrong" not in terminal
    report = json.loads(out["json"].read_text("utf-8"))
    assert report["summary"]["fail"] == 0 and report["summary"]["known"] == 1 and report["summary"]["pass"] == 1
    wrong = next(r for r in report["results"] if r["id"] == "claude-code/read/cli-wrong")
    assert wrong["verdict"] == "fail" and wrong["known"] == "upper case is issue 12"
    assert report["baseline"]["failed"] is False and report["baseline"]["known"] == 1
    suite = ET.parse(out["xml"]).getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "1")
    skipped = suite.find("testcase[@name='claude-code/read/cli-wrong']/skipped")
    assert skipped is not None and "upper case is issue 12" in skipped.get("message")
    markdown = out["md"].read_text("utf-8")
    assert "| known |" in markdown and "🔕 known" in markdown and "baseline: upper case is issue 12" in markdown
    assert "❌ fail" not in markdown
    html = out["html"].read_text("utf-8")
    assert 'class="v v-known"' in html and "baseline: upper case is issue 12" in html
    assert 'class="v v-fail"' not in html.split("<h2>Matrix</h2>")[1]


def test_a_stale_entry_fails_the_run_and_every_report_says_so(folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    listed = tmp_path / "listed.yaml"
    listed.write_text("claude-code/read/cli-good: was broken\n", "utf-8")
    xml, md = tmp_path / "r.xml", tmp_path / "r.md"
    assert run(folder, "--baseline", str(listed), "--junit", str(xml), "--markdown", str(md)) == 1
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite.get("failures") == "1"
    assert "stale baseline entry" in suite.find("testcase/failure").get("message")
    assert "1 stale baseline entry" in md.read_text("utf-8")


def test_a_written_baseline_holds_no_temporary_path_and_regenerates_identically(folder, tmp_path):
    put(folder, "path.yaml", GOOD.replace("cli-good", "cli-path").replace(
        '{$contains: "     1→first line"}', '{$contains: "${workspace}/a.txt is not here"}'))
    first, second = tmp_path / "one.yaml", tmp_path / "two.yaml"
    run(folder, "--write-baseline", str(first))
    run(folder, "--write-baseline", str(second))
    text = first.read_text("utf-8")
    reason = yaml.safe_load(text)["claude-code/read/cli-path"][0]["reason"]
    assert "${workspace}/a.txt is not here" in reason
    assert "/tmp" not in text and "harness-" not in text
    assert text == second.read_text("utf-8")


def test_write_baseline_replaces_a_link_and_never_writes_through_it(folder, tmp_path):
    put(folder, "wrong.yaml", WRONG)
    victim = tmp_path / "victim.txt"
    victim.write_text("victim original\n", "utf-8")
    path = tmp_path / "baseline.yaml"
    path.symlink_to(victim)
    run(folder, "--write-baseline", str(path))
    assert victim.read_text("utf-8") == "victim original\n"
    assert not path.is_symlink()
    assert list(yaml.safe_load(path.read_text("utf-8"))) == ["claude-code/read/cli-wrong"]


def test_write_baseline_on_a_fifo_does_not_block(folder, tmp_path):
    import os
    import subprocess
    import sys
    put(folder, "wrong.yaml", WRONG)
    path = tmp_path / "baseline.yaml"
    os.mkfifo(path)
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--no-builtin", "--scenarios", str(folder),
                           "--no-snapshots", "-q", "--write-baseline", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr  # the failure listed; the baseline file written
    assert "Traceback" not in done.stderr
    assert path.is_file() and list(yaml.safe_load(path.read_text("utf-8"))) == ["claude-code/read/cli-wrong"]


def test_write_baseline_into_a_missing_folder_is_said_and_fails_the_run(folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    path = tmp_path / "missing" / "baseline.yaml"
    assert run(folder, "--write-baseline", str(path)) == 1
    assert "baseline: cannot write" in capsys.readouterr().out


TWO_CHECKS = """\
id: claude-code/read/cli-two
profile: claude-code
title: Read numbers lines, and leaves the file alone
source: 001-claude-code-read-write-edit.md §Output Format
given:
  files: {a.txt: "first line\\n"}
steps:
  - tool: Read
    name: look
    args: {file_path: "${workspace}/a.txt"}
    expect:
      output: {$contains: "     1→FIRST LINE"}
then:
  files: {a.txt: "FIRST LINE\\n"}
"""


def test_a_check_entry_excuses_that_check_and_keeps_the_rest_judged(folder, tmp_path, capsys):
    put(folder, "two.yaml", TWO_CHECKS)
    one = tmp_path / "one.yaml"
    one.write_text("claude-code/read/cli-two:\n  - {step: 1, path: content, reason: upper case is issue 3}\n")
    assert run(folder, "--baseline", str(one)) == 1  # the end state is still judged, and fails
    assert "new failure claude-code/read/cli-two" in capsys.readouterr().out
    both = tmp_path / "both.yaml"
    both.write_text("claude-code/read/cli-two:\n  - {step: look, path: content, reason: issue 3}\n"
                    "  - {step: then, path: 'then.files[a.txt].content', reason: issue 4}\n")
    report = tmp_path / "r.json"
    assert run(folder, "--baseline", str(both), "--json", str(report)) == 0
    result, = json.loads(report.read_text())["results"]
    assert result["verdict"] == "fail" and result["known"] == "issue 3; issue 4"
    aspect = tmp_path / "aspect.yaml"
    aspect.write_text("claude-code/read/cli-two: {aspect: content, reason: the lines we return}\n")
    assert run(folder, "--baseline", str(aspect)) == 1  # effects (the end state) still fail
    aspect.write_text("claude-code/read/cli-two:\n  - {aspect: content, reason: a}\n  - {aspect: effects, reason: b}\n")
    assert run(folder, "--baseline", str(aspect)) == 0


def test_a_check_entry_that_excuses_nothing_is_stale_and_fails_the_run(folder, tmp_path, capsys):
    put(folder, "two.yaml", TWO_CHECKS)
    listed = tmp_path / "b.yaml"
    listed.write_text("claude-code/read/cli-two:\n  - {step: 1, path: content, reason: a}\n"
                      "  - {step: then, path: 'then.files[a.txt].content', reason: b}\n"
                      "  - {step: 1, path: output.sizeBytes, reason: c}\n")
    report = tmp_path / "r.json"
    assert run(folder, "--baseline", str(listed), "--json", str(report)) == 1
    assert "stale entry claude-code/read/cli-two: step 1 output.sizeBytes excuses nothing" in capsys.readouterr().out
    section = json.loads(report.read_text())["baseline"]
    assert section["stale_checks"] == ["claude-code/read/cli-two: step 1 output.sizeBytes"] and section["failed"]
    put(folder, "two.yaml", GOOD.replace("cli-good", "cli-two"))  # fixed: every entry of it is stale
    assert run(folder, "--baseline", str(listed), "--json", str(report)) == 1
    assert json.loads(report.read_text())["baseline"]["stale"] == ["claude-code/read/cli-two"]


def test_write_baseline_writes_one_check_per_unmet_expectation_and_passes_the_rerun(folder, tmp_path):
    put(folder, "two.yaml", TWO_CHECKS)
    path = tmp_path / "b.yaml"
    run(folder, "--write-baseline", str(path))
    checks = yaml.safe_load(path.read_text())["claude-code/read/cli-two"]
    assert [(check["step"], check["path"]) for check in checks] == [(1, "content"), ("then", "then.files[a.txt].content")]
    assert run(folder, "--baseline", str(path)) == 0
    data = yaml.safe_load(path.read_text())
    data["claude-code/read/cli-two"][0]["reason"] = "issue 3"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    run(folder, "--write-baseline", str(path))
    assert yaml.safe_load(path.read_text())["claude-code/read/cli-two"][0]["reason"] == "issue 3"


@pytest.mark.parametrize("text, message", [
    ("a: {aspect: looks, reason: x}\n", "aspect must be one of effects, outcome, content, output"),
    ("a: {step: 1, reason: x}\n", "a check names its step"),
    ("a: {step: 0, path: output, reason: x}\n", "a check names its step"),
    ("a: {aspect: output, step: 1, path: output, reason: x}\n", "not both"),
    ("a: [just text]\n", "each item of a list is a check"),
    ("a: [{step: 1, path: output}]\n", "give a reason or a link"),
])
def test_a_malformed_check_entry_names_the_file_and_the_scenario(tmp_path, text, message):
    path = tmp_path / "baseline.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(ValueError, match=message) as caught:
        baseline.load(path)
    assert f"{path}: a:" in str(caught.value)
