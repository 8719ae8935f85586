"""What a warm ``harness run`` imports: only what it uses.

A warm start reads the catalog and the stored snapshots' behaviours from the cache, so it parses no
YAML and checks no scenario file against a JSON Schema: PyYAML is imported where a YAML text is
parsed or written, jsonschema-rs (which pulls in ``email``) where a validator is made, never at the
start. (The reference validates its answers against the ``cmd:`` protocol's schema, so a run on it
makes a validator; ``harness list`` makes none.) The probe is a fresh interpreter: it notes the
modules loaded when the first scenario starts (for ``run``) and when the process ends.

A serial run imports pyfakefs (with doctest and unittest) at its first fault scenario that runs on
it, not before its first plain one: only ``--jobs`` imports it before forking, to share it. Faults
the kernel realises (harness/targets/faults.py) never import it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WATCHED = ("yaml", "jsonschema_rs", "email", "pyfakefs", "rich")

PROBE = """\
import atexit, runpy, sys
from harness.run import runner
watched = sys.argv[1].split(",")
def note(when):
    loaded = [name for name in watched if name in sys.modules]
    sys.stderr.write("\\nloaded-at-%s %s\\n" % (when, ",".join(loaded) or "-"))
_run = runner.Runner.run
def run(self, scenario):
    if not getattr(run, "seen", False):
        run.seen = True
        note("first-scenario")
    return _run(self, scenario)
runner.Runner.run = run
atexit.register(note, "end")
sys.argv = ["harness", *sys.argv[2:]]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""


def _probe(tmp_path: Path, *args: str, command: tuple[str, ...] = ("run", "-q", "--jobs", "1"),
           watched: tuple[str, ...] = WATCHED) -> dict[str, set[str]]:
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, ",".join(watched), *command, *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out: dict[str, set[str]] = {}
    for line in done.stderr.splitlines():
        if line.startswith("loaded-at-"):
            when, _, names = line.removeprefix("loaded-at-").partition(" ")
            out[when] = set() if names == "-" else set(names.split(","))
    assert set(out) == ({"first-scenario", "end"} if command[0] == "run" else {"end"}), done.stderr
    return out


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A catalog of one built-in scenario and its profile (its snapshot is stored, so a run compares it)."""
    folder = tmp_path / "scenarios"
    profile = ROOT / "scenarios" / "anthropic-text-editor"
    (folder / profile.name).mkdir(parents=True)
    for name in ("profile.yaml", "create/empty-file.yaml"):
        shutil.copy(profile / name, folder / profile.name)
    return folder


def test_a_warm_run_imports_no_yaml_parser(tmp_path: Path, tiny: Path) -> None:
    cold = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    assert "yaml" in cold["first-scenario"]  # the cold run parsed the file
    warm = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    # Nor at the end: its stored snapshot's behaviour came from the cache and matched.
    assert "yaml" not in warm["first-scenario"] | warm["end"]


def test_a_run_to_a_pipe_imports_rich_for_its_report_after_the_scenarios(tmp_path: Path, tiny: Path) -> None:
    seen = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny), command=("run", "--jobs", "1"))
    assert "rich" not in seen["first-scenario"] and "rich" in seen["end"]


def test_a_warm_list_imports_no_yaml_parser_nor_schema_validator(tmp_path: Path, tiny: Path) -> None:
    listing = ("list", "--no-builtin", "--scenarios", str(tiny))
    assert {"yaml", "jsonschema_rs", "email"} <= _probe(tmp_path, command=listing)["end"]
    assert _probe(tmp_path, command=listing) == {"end": set()}


def test_a_changed_scenario_file_is_parsed_again(tmp_path: Path, tiny: Path) -> None:
    _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    scenario = tiny / "anthropic-text-editor" / "empty-file.yaml"
    scenario.write_text(scenario.read_text("utf-8") + "\n", "utf-8")
    changed = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    assert {"yaml", "jsonschema_rs"} <= changed["first-scenario"]


def test_a_serial_run_imports_pyfakefs_at_its_first_fault_scenario_on_it(tmp_path: Path, tiny: Path) -> None:
    # After the plain scenario (files are run in their order): a disk with 1000 bytes free, on pyfakefs.
    profile = ROOT / "scenarios" / "aptix-tul-004"
    (tiny / profile.name).mkdir()
    for name in ("profile.yaml", "write/disk-full.yaml"):
        shutil.copy(profile / name, tiny / profile.name)
    seen = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    assert "pyfakefs" not in seen["first-scenario"] and "pyfakefs" in seen["end"]


@pytest.mark.parametrize("faults", ["", "fake"])
@pytest.mark.parametrize(("condition", "scenario"), [
    ("permissions", "anthropic-text-editor/create/permission-denied.yaml"),
    ("disk-full", "mcp-write-text-file/errors/disk-full.yaml"),  # disk_free: 0
])
def test_a_fault_scenario_realised_by_the_kernel_never_imports_pyfakefs(
        tmp_path: Path, tiny: Path, monkeypatch: pytest.MonkeyPatch, faults: str, condition: str, scenario: str) -> None:
    from harness.targets.faults import FAULTS_VARIABLE, real_conditions
    if condition not in real_conditions():
        pytest.skip(f"this machine does not realise {condition} for the reference (harness/targets/faults.py)")
    monkeypatch.setenv(FAULTS_VARIABLE, faults)
    profile = scenario.split("/")[0]
    (tiny / profile).mkdir(exist_ok=True)
    shutil.copy(ROOT / "scenarios" / profile / "profile.yaml", tiny / profile)
    shutil.copy(ROOT / "scenarios" / scenario, tiny / profile)
    seen = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))
    assert ("pyfakefs" in seen["end"]) is (faults == "fake")




#: What a default run does without before its first scenario: the other commands' modules
#: (their parsers are not built), importlib.resources (the packaged schemas are read from the
#: package's folder), the writer of the matrix's columns with the observations (for the Markdown and
#: HTML reports) and difflib (a diff only for a failure).
UNUSED_AT_START = ("harness.cli.catalog_commands", "harness.cli.compare", "harness.cli.history", "importlib.resources",
                   "harness.report.columns", "harness.record.observations", "difflib")


#: What the reports take as a target's first result comes, after the first scenario: the tally and
#: the snapshots' checker.
AT_FIRST_RESULT = ("harness.report.tally", "harness.record.snapshot")


def test_a_warm_run_imports_nothing_it_does_not_use_before_its_first_scenario(tmp_path: Path, tiny: Path) -> None:
    _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny))  # the catalog's cache
    seen = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny), watched=UNUSED_AT_START + AT_FIRST_RESULT)
    assert seen["first-scenario"] == set()
    assert set(AT_FIRST_RESULT) <= seen["end"]
    # A run that writes the matrix imports its writer, before its first scenario.
    report = _probe(tmp_path, "--no-builtin", "--scenarios", str(tiny), "--markdown", str(tmp_path / "r.md"),
                    watched=UNUSED_AT_START)
    assert report["first-scenario"] == {"harness.report.columns", "harness.record.observations"}
