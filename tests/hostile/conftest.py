"""Helpers for the hostile tests: run the real ``harness`` command on purpose-built hostile input.

Each hostile test writes a scenario file (and, where it needs one, starts a hostile candidate from
``tests/hostile/candidates/``), runs ``harness run`` in a child process with a bounded time, and
checks what must hold whatever the input: the exit code as documented, no traceback, nothing
changed in a victim folder (compared byte for byte), no secret text in any report, no process left
behind (found by a marker in its argv).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = Path(__file__).resolve().parent / "candidates"
SECRET = "TOP-SECRET-6f1c2a: this text must never reach a report"


@dataclass
class Outcome:
    """What one ``harness run`` did: exit code, output, the JSON report and how long it took: in wall
    time, and in processor time (``cpu_seconds``, user and system, its own and its children's), which
    a busy machine does not stretch: what a bound on the harness's work checks."""

    code: int
    stdout: str
    stderr: str
    report: dict
    report_text: str
    seconds: float
    cpu_seconds: float

    def result(self, scenario_id: str) -> dict:
        """Returns the JSON result of one scenario."""
        return next(r for r in self.report["results"] if r["id"] == scenario_id)


def tree_digest(folder: Path) -> dict[str, str]:
    """Returns every entry below ``folder`` with its type, mode and content hash (links not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath, name)
            info = path.lstat()
            if path.is_symlink():
                out[str(path)] = f"link {os.readlink(path)}"
            elif path.is_dir():
                out[str(path)] = f"dir {info.st_mode:o}"
            elif path.is_file():
                out[str(path)] = f"file {info.st_mode:o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
            else:  # a FIFO, socket or device: named, never opened (opening a FIFO blocks)
                out[str(path)] = f"special {info.st_mode:o}"
    return out


@pytest.fixture
def victim(tmp_path: Path):
    """A folder outside every workspace holding a secret; the test checks it is unchanged afterwards."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    (folder / "keep.txt").write_text("keep me\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.txt").write_text("deep\n")
    before = tree_digest(folder)
    yield folder
    assert tree_digest(folder) == before, "the victim folder changed"


def write_scenarios(folder: Path, text: str, name: str = "hostile.yaml") -> Path:
    """Writes a scenario file (dedented) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def harness_run(tmp_path: Path, scenarios: Path, *extra: str, timeout: float = 60.0,
                env: dict[str, str] | None = None) -> Outcome:
    """Runs ``harness run`` on the scenarios folder only, with a JSON report; bounded in time."""
    report = tmp_path / f"report-{uuid.uuid4().hex[:8]}.json"
    argv = [sys.executable, "-m", "harness", "run", "--no-builtin", "--scenarios", str(scenarios),
            "--no-snapshots", "--json", str(report), *extra]
    started, used = time.monotonic(), _children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True, errors="surrogateescape", timeout=timeout,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    seconds, cpu_seconds = time.monotonic() - started, _children_cpu() - used
    text = report.read_text("utf-8") if report.exists() else ""
    outcome = Outcome(done.returncode, done.stdout, done.stderr, json.loads(text) if text else {}, text, seconds,
                      cpu_seconds)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return outcome


def _children_cpu() -> float:
    """Returns the processor time (user and system) of this process's children that ended and were waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def no_secret(outcome: Outcome) -> None:
    """Asserts the secret reached neither the terminal nor the JSON report."""
    for where, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr), ("json", outcome.report_text)):
        assert SECRET not in text and "TOP-SECRET" not in text, f"the secret reached {where}"


def processes_with(marker: str) -> list[str]:
    """Returns the command lines of live processes whose argv holds ``marker`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in argv and state != "Z" and int(entry.name) != os.getpid():
            found.append(f"{entry.name}: {argv}")
    return found
