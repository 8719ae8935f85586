"""The GitHub Action (action.yml): its run step, run as a runner would, against the reference and a broken candidate.

The step's shell line and its environment are taken from action.yml itself, the ``${{ ... }}``
expressions filled in from the inputs as GitHub would; ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``
and ``GITHUB_WORKSPACE`` point into a temporary folder. The install step is not run (it is
``pip install`` of this checkout, which the test's environment already is).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.drivers import action

ROOT = Path(__file__).resolve().parents[1]
PLANTED = f"cmd:{sys.executable} {ROOT / 'tests' / 'adapters' / 'planted_cmd.py'}"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _definition() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _evaluate(text: str, inputs: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression[len("inputs."):]]
        if expression == "github.action_path":
            return str(ROOT)
        raise AssertionError(f"action.yml: an expression the test does not know: {expression}")
    return EXPRESSION.sub(value, text)


def run_step(tmp_path: Path, **given: str) -> tuple[int, str, str, dict[str, str]]:
    """Runs action.yml's step ``run`` with ``given`` inputs (defaults from action.yml); returns its
    exit code, its log, the step summary and the step's outputs."""
    definition = _definition()
    inputs = {name: str(spec.get("default", "")) for name, spec in definition["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    step = next(step for step in definition["runs"]["steps"] if step.get("id") == "run")
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("INPUT_", "GITHUB_"))}
    env.update({key: _evaluate(str(value), inputs) for key, value in step["env"].items()})
    env.update({"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
                "GITHUB_WORKSPACE": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
                "HARNESS_SNAPSHOTS": str(tmp_path / "no-snapshots")})
    done = subprocess.run(["bash", "-c", _evaluate(step["run"], inputs)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    found: dict[str, str] = {}
    if outputs.exists():
        lines = iter(outputs.read_text(encoding="utf-8").splitlines())
        for line in lines:
            if "<<" in line:
                key, mark = line.split("<<", 1)
                found[key] = "\n".join(iter(lambda: next(lines), mark))
            else:
                key, _, value = line.partition("=")
                found[key] = value
    return done.returncode, done.stdout + done.stderr, summary.read_text(encoding="utf-8") if summary.exists() else "", found


def test_the_action_declares_the_inputs_and_steps_the_issue_asks_for():
    definition = _definition()
    assert {"target", "profiles", "aspects", "baseline", "shard", "report-folder"} <= set(definition["inputs"])
    steps = definition["runs"]["steps"]
    assert definition["runs"]["using"] == "composite"
    install = next(step for step in steps if "pip install" in step.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"  # the harness of the Action's own tag
    upload = next(step for step in steps if str(step.get("uses", "")).startswith("actions/upload-artifact@"))
    assert "always()" in upload["if"] and upload["with"]["path"] == "${{ inputs.report-folder }}"
    run = next(step for step in steps if step.get("id") == "run")
    assert "${{" not in run["run"], "inputs reach the script through env, never pasted into the shell line"


def test_the_action_on_the_reference_passes_and_writes_every_report(tmp_path):
    code, log, summary, outputs = run_step(tmp_path, target="reference", profiles="claude-code",
                                           **{"report-folder": "out"})
    assert code == 0, log
    assert outputs["exit-code"] == "0" and outputs["failed"] == "0"
    assert outputs["json"] == "out/reference.json"
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [
        "reference.json", "reference.xml", "report.html", "report.md"]
    report = json.loads((tmp_path / "out" / "reference.json").read_text())
    assert report["summary"]["fail"] == 0 and report["summary"]["pass"] > 50
    assert {result["profile"] for result in report["results"]} == {"claude-code"}
    assert "::error" not in log
    assert "## File-tool conformance" in summary


def test_the_action_on_a_broken_candidate_fails_with_annotations_at_the_scenario_files(tmp_path):
    code, log, summary, outputs = run_step(tmp_path, target=f"{PLANTED} tab-numbers", profiles="claude-code")
    assert code == 1, log
    report = json.loads(Path(tmp_path / outputs["json"]).read_text())
    failing = [result["id"] for result in report["results"] if result["verdict"] == "fail"]
    assert "claude-code/read/arrow-not-tab" in failing
    assert outputs["failed"] == str(len(failing))
    errors = [line for line in log.splitlines() if line.startswith("::error ")]
    assert len(errors) == len(failing)
    assert all(line.startswith("::error file=scenarios/claude-code/") for line in errors), errors[:3]
    assert "claude-code/read/arrow-not-tab" in summary


def test_the_action_compared_with_an_earlier_run_lists_new_failures_first(tmp_path):
    code, _, _, outputs = run_step(tmp_path, target="reference", profiles="claude-code",
                                   **{"report-folder": "before", "artifact-name": ""})
    assert code == 0
    (tmp_path / "summary.md").unlink()
    earlier = tmp_path / "earlier.json"
    (tmp_path / "before" / "reference.json").rename(earlier)
    code, log, summary, outputs = run_step(tmp_path, target=f"{PLANTED} no-trailing-newline", profiles="claude-code",
                                           **{"compare-with": str(earlier)})
    assert code == 1, log
    new = int(outputs["new-failures"])
    assert new == int(outputs["failed"]) > 0
    assert summary.index("### New failure") < summary.index("## File-tool conformance")


def test_bad_inputs_are_one_error_line_and_exit_2(tmp_path):
    code, log, _, _ = run_step(tmp_path, target="reference", baseline="no-such-baseline.yaml")
    assert code == 2
    assert log.strip().splitlines() == ["::error title=conformance action::the baseline 'no-such-baseline.yaml' "
                                        "is not a file (make one with --write-baseline)"]
    with pytest.raises(action.Usage):
        action.command({"INPUT_TARGET": "  \n "})


def test_inputs_become_arguments_not_shell_text():
    argv, folder = action.command({"INPUT_TARGET": "cmd:./tool; rm -rf ~\nreference", "INPUT_PROFILES": "a, b\nc",
                                   "INPUT_ASPECTS": "outcome effects", "INPUT_SHARD": "2/4",
                                   "INPUT_ARGS": "--timeout 30 '-k' 'edit and not pdf'"}, python="py")
    assert argv[:4] == ["py", "-m", "harness", "run"]
    assert argv[4:8] == ["--target", "cmd:./tool; rm -rf ~", "--target", "reference"]
    assert argv[8:14] == ["--profile", "a", "--profile", "b", "--profile", "c"]
    assert argv[14:18] == ["--aspects", "outcome,effects", "--shard", "2/4"]
    assert argv[18:22] == ["--timeout", "30", "-k", "edit and not pdf"]
    assert folder == Path("conformance-report")
