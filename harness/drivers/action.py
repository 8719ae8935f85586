"""The GitHub Action's run step (``action.yml`` at the repository root): ``python -m harness.drivers.action``.

The Action hands its inputs over as environment variables (never pasted into a shell line, so an
input cannot inject a command), and this module turns them into one ``harness run``:

- ``INPUT_TARGET``: the target (``cmd:...``, ``mcp:...``, ``reference``, ...); one per line for several;
- ``INPUT_PROFILES``: profiles to run, separated by commas, spaces or lines (all when empty);
- ``INPUT_ASPECTS``: ``--aspects`` (judge only these aspects);
- ``INPUT_BASELINE``: ``--baseline FILE`` (known failures; a missing file is bad usage);
- ``INPUT_SHARD``: ``--shard K/N``;
- ``INPUT_REPORT_FOLDER``: where the reports go (default ``conformance-report``): one
  ``<target>.json`` and ``<target>.xml`` per target, ``report.md`` and ``report.html``;
- ``INPUT_COMPARE_WITH``: a JSON report of an earlier run; its comparison with this run
  (``harness compare``: new failures first) is added to the step summary and the folder;
- ``INPUT_ARGS``: more ``harness run`` arguments, split as a shell would split them.

``harness run`` itself prints the annotations and appends its Markdown report to
``$GITHUB_STEP_SUMMARY`` (``GITHUB_ACTIONS=true``, harness/report/github.py). This step adds the
command it ran to the log and writes the step's outputs to ``$GITHUB_OUTPUT``: ``exit-code``,
``report-folder``, ``json`` (the JSON reports, one per line), ``failed`` (the count of fails and
errors, a baseline's known ones excepted) and, with ``compare-with``, ``new-failures``. It exits
with the harness's exit code, so the job fails when the run does; the Action's next step uploads
the folder as an artifact whatever the outcome.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_FOLDER = "conformance-report"
EXIT_USAGE = 2


class Usage(Exception):
    """An input the Action cannot use: printed as one ``::error`` line, exit 2."""


def _split(text: str) -> list[str]:
    return [part for part in re.split(r"[,\s]+", text.strip()) if part]


def command(env: Mapping[str, str], python: str = sys.executable) -> tuple[list[str], Path]:
    """Returns the ``harness run`` command line the inputs ask for, and the report folder."""
    targets = [line.strip() for line in env.get("INPUT_TARGET", "").splitlines() if line.strip()]
    if not targets:
        raise Usage("the input 'target' is required (e.g. cmd:python my_adapter.py)")
    folder = Path(env.get("INPUT_REPORT_FOLDER", "").strip() or DEFAULT_FOLDER)
    argv = [python, "-m", "harness", "run"]
    for target in targets:
        argv += ["--target", target]
    for profile in _split(env.get("INPUT_PROFILES", "")):
        argv += ["--profile", profile]
    aspects = ",".join(_split(env.get("INPUT_ASPECTS", "")))
    if aspects:
        argv += ["--aspects", aspects]
    baseline = env.get("INPUT_BASELINE", "").strip()
    if baseline:
        if not Path(baseline).is_file():
            raise Usage(f"the baseline {baseline!r} is not a file (make one with --write-baseline)")
        argv += ["--baseline", baseline]
    shard = env.get("INPUT_SHARD", "").strip()
    if shard:
        argv += ["--shard", shard]
    try:
        argv += shlex.split(env.get("INPUT_ARGS", ""))
    except ValueError as exc:
        raise Usage(f"the input 'args' cannot be split: {exc}") from None
    # A folder for the JSON and JUnit reports: one file per target, whatever the count of targets.
    argv += ["--json", str(folder), "--junit", str(folder),
             "--markdown", str(folder / "report.md"), "--html", str(folder / "report.html")]
    return argv, folder


def _failed(reports: Sequence[Path]) -> int:
    count = 0
    for path in reports:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for run in data.get("runs", [data]) if isinstance(data, dict) else []:
            summary = run.get("summary", {}) if isinstance(run, dict) else {}
            count += int(summary.get("fail", 0)) + int(summary.get("error", 0))
    return count


def _output(env: Mapping[str, str], values: dict[str, str]) -> None:
    """Appends the step's outputs to ``$GITHUB_OUTPUT`` (a value of several lines as a heredoc)."""
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for key, value in values.items():
            if "\n" in value:
                import secrets
                mark = f"EOF_{secrets.token_hex(8)}"
                handle.write(f"{key}<<{mark}\n{value}\n{mark}\n")
            else:
                handle.write(f"{key}={value}\n")


def _compare(env: Mapping[str, str], old: str, reports: list[Path], folder: Path) -> int | None:
    """Compares the earlier report with this run's; adds it to the summary; returns the new failures."""
    from harness.report import compare
    try:
        outcome = compare.compare_files(Path(old), reports)
    except ValueError as exc:
        print(f"::warning title=compare-with::{_data(str(exc))}", flush=True)
        return None
    text = compare.markdown(outcome)
    (folder / "compare.md").write_text(text, encoding="utf-8")
    print(compare.terminal(outcome, width=100), flush=True)
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return len(outcome.of("new failure"))


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def main(env: Mapping[str, str] | None = None) -> int:
    """Runs the Action's step; returns its exit code."""
    env = dict(os.environ if env is None else env)
    try:
        argv, folder = command(env)
    except Usage as exc:
        print(f"::error title=conformance action::{_data(str(exc))}", flush=True)
        return EXIT_USAGE
    folder.mkdir(parents=True, exist_ok=True)
    old = env.get("INPUT_COMPARE_WITH", "").strip()
    keep = Path(old).resolve() if old else None
    for stale in [*folder.glob("*.json"), *folder.glob("*.xml")]:  # a folder reused: only this run's reports
        if stale.resolve() != keep:
            stale.unlink()
    summary = env.get("GITHUB_STEP_SUMMARY")
    run_env = dict(env)
    held = None
    if old and summary:  # the run's summary is held back, so the comparison (new failures) comes first
        import tempfile
        handle, held = tempfile.mkstemp(prefix="summary-", suffix=".md")
        os.close(handle)
        run_env["GITHUB_STEP_SUMMARY"] = held
    print("$ " + shlex.join(["harness", *argv[3:]]), flush=True)
    try:
        code = subprocess.run(argv, env=run_env, check=False).returncode
        reports = sorted(path for path in folder.glob("*.json") if path.resolve() != keep)
        outputs = {"exit-code": str(code), "report-folder": str(folder),
                   "json": "\n".join(str(path) for path in reports), "failed": str(_failed(reports))}
        if old and reports:
            new = _compare(env, old, reports, folder)
            if new is not None:
                outputs["new-failures"] = str(new)
        if held and summary:
            with open(held, encoding="utf-8") as source, open(summary, "a", encoding="utf-8") as target:
                target.write(source.read())
    finally:
        if held:
            os.unlink(held)
    _output(env, outputs)
    return code


if __name__ == "__main__":
    sys.exit(main())
