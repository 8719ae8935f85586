"""A renamed scenario keeps its identity: baselines, last-failed, snapshots, compare and the site follow its former ids."""

from __future__ import annotations

import json

import pytest

from harness.cli.main import main
from harness.scenario import catalog
from tests.test_cli import WRONG, put


def _renamed(text: str) -> str:
    return text.replace("id: claude-code/read/cli-wrong", "id: claude-code/read/cli-renamed\n"
                                                          "former_ids: [claude-code/read/cli-wrong]")


def test_a_renamed_scenario_is_followed_from_its_former_id(folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path / "state"))
    snapshots, known = tmp_path / "snapshots", tmp_path / "known.yaml"
    common = ["run", "-q", "--no-builtin", "--scenarios", str(folder), "--snapshots", str(snapshots)]
    put(folder, "wrong.yaml", WRONG)
    assert main(common + ["--snapshot-update", "--write-baseline", str(known), "--json", str(tmp_path / "old.json")]) == 1
    assert "claude-code/read/cli-wrong:" in known.read_text()
    put(folder, "wrong.yaml", _renamed(WRONG))
    put(folder, "other.yaml", WRONG.replace("cli-wrong", "cli-other"))  # fails too, never failed before
    capsys.readouterr()
    assert main(common + ["--lf"]) == 1
    assert "--lf: running the 1 scenario(s) that failed last time" in capsys.readouterr().out
    report = tmp_path / "new.json"
    code = main(common + ["--baseline", str(known), "--json", str(report), "-k", "renamed"])
    out = capsys.readouterr().out
    assert code == 0, out  # the entry written under the former id still excuses it; its snapshot still matches
    result, = json.loads(report.read_text())["results"]
    assert result["known"] and result["former_ids"] == ["claude-code/read/cli-wrong"]
    assert json.loads(report.read_text())["baseline"]["not_run"] == []
    assert "1 match, 0 differ" in out and "without snapshot" not in out
    assert main(["compare", str(tmp_path / "old.json"), str(report)]) == 0
    assert "claude-code/read/cli-renamed (was claude-code/read/cli-wrong)" in capsys.readouterr().out


@pytest.mark.parametrize("former, message", [
    ("claude-code/read/cli-other", "is also the id of"),
    ("claude-code/read/cli-renamed", "is its own id"),
])
def test_a_former_id_names_no_current_scenario(folder, former, message):
    put(folder, "wrong.yaml", _renamed(WRONG).replace("[claude-code/read/cli-wrong]", f"[{former}]"))
    put(folder, "other.yaml", WRONG.replace("cli-wrong", "cli-other"))
    found = catalog.load_with([folder], builtin=False)
    assert [problem.message for problem in found.problems if message in problem.message], found.problems
