"""``harness diff A B``: only the scenarios whose recorded behaviours differ, and those on one side only."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main

PROFILE = "aptix-tul-004"  # one whole profile keeps the test quick; the mechanism is profile-blind


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """The reference's snapshots of one profile, written once for the module."""
    root = tmp_path_factory.mktemp("snaps")
    assert main(["run", "-q", "--profile", PROFILE, "--snapshot-update", "--snapshots", str(root)]) in (0, 1)
    return root / "reference"


def altered_copy(recorded: Path, tmp_path: Path) -> tuple[Path, set[str], str, str]:
    """Copies the snapshots, alters two, removes one and adds one; returns what was done."""
    copy = tmp_path / "altered"
    shutil.copytree(recorded, copy)
    files = sorted(copy.rglob("*.yaml"))
    assert len(files) >= 5
    changed = set()
    for path in (files[0], files[3]):
        text = path.read_text("utf-8")
        altered = re.sub(r"(?m)^(\s+)(size|sizeBytes): (\d+)$", lambda m: f"{m[1]}{m[2]}: {int(m[3]) + 1}", text, count=1)
        if altered == text:  # no size line: change the first step's number instead
            altered = text.replace("- step: 1", "- step: 100", 1)
        assert altered != text
        path.write_text(altered, "utf-8")
        changed.add(path.relative_to(copy).as_posix()[:-5])
    removed = files[1].relative_to(copy).as_posix()[:-5]
    files[1].unlink()
    added = "extra/only-here"
    (copy / "extra").mkdir()
    shutil.copy(files[2], copy / "extra" / "only-here.yaml")
    (copy / "extra" / "only-here.yaml").write_text(
        files[2].read_text("utf-8").replace(f"scenario: {files[2].relative_to(copy).as_posix()[:-5]}",
                                            f"scenario: {added}"), "utf-8")
    return copy, changed, removed, added


def listed(out: str, word: str) -> set[str]:
    return set(re.findall(rf"^{word} (?:\S+: )?(\S+)", out, re.M))


def test_diff_of_two_folders_lists_exactly_the_altered_scenarios(recorded, tmp_path, capsys):
    copy, changed, removed, added = altered_copy(recorded, tmp_path)
    capsys.readouterr()
    assert main(["diff", str(recorded), str(copy)]) == 1
    out = capsys.readouterr().out
    assert listed(out, "DIFFERS") == changed
    assert listed(out, "ONLY IN") == {removed, added}
    assert re.search(r"^[-+]\s+(size|sizeBytes|- step)", out, re.M)  # the diff itself is shown


def test_diff_of_a_target_and_an_altered_copy_lists_exactly_the_altered_scenarios(recorded, tmp_path, capsys):
    copy, changed, removed, added = altered_copy(recorded, tmp_path)
    capsys.readouterr()
    assert main(["diff", "reference", str(copy), "--profile", PROFILE, "-q"]) == 1
    out = capsys.readouterr().out
    assert listed(out, "DIFFERS") == changed
    assert listed(out, "ONLY IN") == {removed, added}


def test_identical_sources_exit_0_and_list_nothing(recorded, tmp_path, capsys):
    assert main(["diff", str(recorded), str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "DIFFERS" not in out and "ONLY IN" not in out and "0 differ" in out


def test_a_json_report_compares_like_its_snapshots(recorded, tmp_path, capsys):
    report = tmp_path / "report.json"
    main(["run", "-q", "--profile", PROFILE, "--no-snapshots", "--json", str(report)])
    capsys.readouterr()
    assert main(["diff", str(report), str(recorded)]) == 0, capsys.readouterr().out


def test_a_report_file_that_is_not_json_is_bad_usage(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", "utf-8")
    assert main(["diff", str(broken), str(tmp_path)]) == 2


def test_a_report_file_that_does_not_exist_is_bad_usage(tmp_path, capsys):
    assert main(["diff", str(tmp_path / "absent.json"), str(tmp_path)]) == 2
