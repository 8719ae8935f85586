"""Terminal output for people: short column labels with a legend, a legend for every mark, 100
columns, `harness show` wrapping when piped, and nothing raw from a candidate reaching the log."""

from __future__ import annotations

import json
import sys

from harness.cli.main import main
from harness.util.printable import shown as printable
from tests.test_cli import GOOD, WRONG, put

LONG_SPECS = ["cmd:python /home/someone/projects/adapters/first-adapter.py --mode strict --log /tmp/x.log",
              "cmd:node /home/someone/projects/adapters/second/dist/index.js --workspace-root {workspace}",
              "mcp:uvx some-mcp-filesystem-server --allow-everything-in-the-workspace --verbose"]


def reports(folder, tmp_path) -> list[str]:
    """Three JSON reports of the same run, as three targets named by long command lines."""
    put(folder, "good.yaml", GOOD)
    put(folder, "wrong.yaml", WRONG.replace("cli-wrong", "cli-wrong-with-a-long-scenario-identifier"))
    put(folder, "question.yaml", GOOD.replace("cli-good", "cli-question").replace(
        "    expect:\n      output: {$contains: \"     1→first line\"}\n", "    answers: true\n")
        + "open_question: What does Read print for a one-line file?\n")
    base = tmp_path / "base.json"
    main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "-q", "-j", "1", "--json", str(base)])
    paths = []
    for number, spec in enumerate(LONG_SPECS):
        data = json.loads(base.read_text("utf-8"))
        data["target"] = {"name": f"tool-{number}", "version": f"1.{number}", "spec": spec}
        if number == 2:  # the third one behaves differently in one scenario
            data["results"][0]["steps"][0]["output"] = "     1→first line changed"
        path = tmp_path / f"r{number}.json"
        path.write_text(json.dumps(data), "utf-8")
        paths.append(str(path))
    return paths


def test_report_of_three_long_targets_fits_100_columns_with_short_labels_and_a_legend(folder, tmp_path, capsys,
                                                                                      monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    paths = reports(folder, tmp_path)
    capsys.readouterr()
    assert main(["report", *paths, "--no-builtin", "--scenarios", str(folder)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    header = next(index for index, line in enumerate(lines) if line.startswith("┃ scenario"))
    names, versions = lines[header - 1], lines[header]  # name over version, bottom-aligned with "scenario"
    assert "tool-0" in names and "tool-2" in names and "cmd:" not in names + versions
    assert "1.0" in versions and "1.2" in versions
    flat = " ".join(line.strip() for line in lines)
    for spec in LONG_SPECS:  # the legend maps each short label to the whole target
        assert spec in flat
    assert "≠" in out and "behaves unlike the first column (tool-0 1.0)" in out
    assert "tool-2 1.2: 1 pass, 1 fail, 1 recorded, 1 differ from tool-0 1.0" in out
    assert "an open question: the table below" in out and "an expectation was not met" in out
    assert "read/cli-wrong-with-a-long-scenario-identifier" in out  # whole, not cut mid-word
    assert len(lines) < 120


def test_show_wraps_long_lines_when_piped(folder, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    long_title = "Read numbers lines with an arrow " + " ".join(f"word{n}" for n in range(40))
    put(folder, "good.yaml", GOOD.replace("title: Read numbers lines with an arrow", f"title: {long_title}"))
    assert main(["show", "claude-code/read/cli-good", "--no-builtin", "--scenarios", str(folder)]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 60 for line in out.splitlines())
    assert "word39" in out and "word20" in out


def test_nothing_raw_from_a_candidate_reaches_the_terminal():
    hostile = "ok\x1b[2J\x1b]0;title\x07\rover\x00"
    shown = printable(hostile)
    assert shown == "ok\\x1b[2J\\x1b]0;title\\x07\\x0dover\\x00"
    assert printable("line one\n\tline two") == "line one\n\tline two"


def test_a_candidate_s_control_bytes_are_printed_escaped(folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    adapter = tmp_path / "adapter.py"
    adapter.write_text("import sys\nsys.stderr.write('\\x1b[2J\\x1b]0;pwned\\x07cleared\\n')\nsys.exit(3)\n")
    main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "-j", "1", "--color", "never",
          "--target", f"cmd:{sys.executable} {adapter}"])
    out = capsys.readouterr().out
    assert "cleared" in out and "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J\\x1b]0;pwned\\x07cleared" in out
