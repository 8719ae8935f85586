"""harness run --repeat N: each scenario N times; a verdict or an observation that varies is flaky, in every report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PLANTED = f"cmd:{sys.executable} {ROOT / 'tests' / 'adapters' / 'planted_cmd.py'}"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_candidate_that_varies_is_flaky_and_the_reference_is_not(tmp_path, capsys, jobs):
    common = ["run", "--profile", "claude-code", "--no-snapshots", "--repeat", "2", "--jobs", jobs, "-k", "read"]
    assert main(common + ["--json", str(tmp_path / "ref.json")]) == 0
    assert not [r for r in json.loads((tmp_path / "ref.json").read_text())["results"] if r.get("flaky")]
    assert "flaky" not in capsys.readouterr().out
    files = {ext: tmp_path / f"r.{ext}" for ext in ("json", "md", "html", "xml")}
    assert main(common + ["--target", f"{PLANTED} flaky-numbers", "--json", str(files["json"]), "--junit", str(files["xml"]),
                          "--markdown", str(files["md"]), "--html", str(files["html"])]) == 1
    out = capsys.readouterr().out
    results = {r["id"]: r for r in json.loads(files["json"].read_text())["results"]}
    one_read = results["claude-code/read/arrow-not-tab"]  # one Read: the arrow once, a tab the other time
    assert one_read["flaky"] is True and one_read["verdict"] == "fail"  # the failing repeat is the one kept
    flaky = sorted(key for key, r in results.items() if r.get("flaky"))
    assert f"{len(flaky)} flaky (verdict or observation varied between repeats):" in out
    assert "  ~ claude-code/read/arrow-not-tab" in out
    assert f"**{len(flaky)} flaky**" in files["md"].read_text()
    assert f"<b>{len(flaky)} flaky</b>" in files["html"].read_text()
    import xml.etree.ElementTree as ElementTree
    marked = [case.get("name") for case in ElementTree.parse(files["xml"]).getroot().iter("testcase")
              if case.find("properties/property[@name='flaky']") is not None]
    assert sorted(marked) == flaky


@pytest.mark.parametrize("value", ["0", "101", "two"])
def test_repeat_takes_a_count_from_1_to_100(value, capsys):
    assert main(["run", "--repeat", value]) == 2
    assert "--repeat" in capsys.readouterr().err
