"""Shared fixtures for the harness's own tests."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

from harness.loader import load_text


@pytest.fixture
def scenario_from(tmp_path: Path):
    """Returns a function turning YAML text into a Scenario (written to a file, so lines are real)."""
    def make(text: str, name: str = "s.yaml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), "utf-8")
        return load_text(path.read_text("utf-8"), path)[0]
    return make


#: The least free space a memory file system needs to hold the suite's temporary folders (tens of MB).
MEMORY_TMP_FREE = 2 << 30


def memory_tmp() -> str | None:
    """Returns the memory file system ``harness run`` puts its workspaces on (``/dev/shm``) when it has
    ``MEMORY_TMP_FREE`` bytes free, allows running programs, and no temporary folder was chosen
    (TMPDIR), else None."""
    if "TMPDIR" in os.environ:
        return None
    from harness.options import RunOptions
    folder = RunOptions().workspace_parent()
    if folder is None:
        return None
    info = os.statvfs(folder)
    if info.f_flag & os.ST_NOEXEC:  # some tests run scripts they write in tmp_path (hardened hosts mount it so)
        return None
    return folder if info.f_bavail * info.f_frsize >= MEMORY_TMP_FREE else None


def pytest_configure(config: pytest.Config) -> None:
    """Keeps the CLI's last-run state and snapshots of every test out of the checkout.

    The tests' temporary folders (``tmp_path``, numbered and kept as pytest keeps them) go where the
    harness puts its workspaces, a memory file system where there is one (pytest's
    ``PYTEST_DEBUG_TEMPROOT``, read by the xdist controller, whose workers get their folders from it):
    the suite makes and removes thousands of folders and files, and on a disk each is a journal
    write. TMPDIR itself is left alone: the processes the tests start, and the workspaces of an
    in-process Runner, stay where the system puts temporary files.
    """
    shm = memory_tmp()
    if shm is not None:
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", shm)
    os.environ["HARNESS_STATE_DIR"] = tempfile.mkdtemp(prefix="harness-test-state-")
    # Tests that do not name a snapshot folder must not compare with (or write to) the checkout's.
    os.environ.setdefault("HARNESS_SNAPSHOTS", os.path.join(os.environ["HARNESS_STATE_DIR"], "snapshots"))
    # The catalog cache of this session only, never the user's.
    os.environ["HARNESS_CACHE_DIR"] = os.path.join(os.environ["HARNESS_STATE_DIR"], "cache")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; `-p no:xdist` runs leave it unused
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than the cores this process may use.

    Many tests here wait without using a core: for a candidate that hangs on purpose until its timeout,
    for a signal to land, for a process tree to end. With one worker per core those waits leave a core
    idle (about a fifth of a run's wall time on 2 cores); a third worker fills them. One more than that
    ran slower (more start-up and collection, a longer tail). PYTEST_XDIST_AUTO_NUM_WORKERS, when set,
    still decides, as pytest-xdist documents.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def pytest_unconfigure(config: pytest.Config) -> None:
    """Removes this session's state folder."""
    shutil.rmtree(os.environ.pop("HARNESS_STATE_DIR", ""), ignore_errors=True)


#: Session fixtures that cost a whole-catalog run, made once per test process that needs them.
SHARED = ("catalog_run", "reference_results")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Puts the tests that share one of the ``SHARED`` fixtures next to each other (where the first of
    them was): ``-n auto`` hands each worker runs of consecutive tests, so one worker makes the fixture,
    not every worker that happens to get one of its tests. Every worker reorders alike."""
    for name in SHARED:
        users = [item for item in items if name in getattr(item, "fixturenames", ())]
        if len(users) > 1:
            first = items.index(users[0])
            rest = [item for item in items if name not in getattr(item, "fixturenames", ())]
            items[:] = rest[:first] + users + rest[first:]


@pytest.fixture(scope="session")
def reference_results() -> dict:
    """The built-in catalog on the in-process reference, results by scenario id.

    Run once per test process: the tests that compare another transport (cmd:, mcp:, Streamable HTTP)
    with the in-process verdicts only read them.
    """
    from harness import catalog
    from harness.runner import Runner
    from harness.targets import make_target
    with Runner(make_target("reference")) as runner:
        return {r.id: r for r in runner.run_all(catalog.load([catalog.builtin_dir()]).scenarios)}


@pytest.fixture(scope="session")
def catalog_run(tmp_path_factory: pytest.TempPathFactory):
    """One ``harness run`` of the built-in catalog on the reference, per test process: snapshots
    updated into a fresh folder that held one snapshot no scenario matches (``orphan``), with the JSON,
    Markdown and HTML reports; its own last-run state folder. The report tests read it, and the
    snapshot test compares a second run with it.
    """
    from types import SimpleNamespace

    from harness.cli import main
    out = tmp_path_factory.mktemp("run")  # short: the terminal report prints its path whole
    orphan = out / "snaps" / "reference" / "gone" / "old.yaml"
    orphan.parent.mkdir(parents=True)
    orphan.write_text("steps: []\n", "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_STATE_DIR", str(out / "state"))
        code = main(["run", "-q", "--json", str(out / "ref.json"), "--snapshot-update", "--snapshots", str(out / "snaps"),
                     "--markdown", str(out / "run.md"), "--html", str(out / "run.html")])
    return SimpleNamespace(code=code, dir=out, json=out / "ref.json", snapshots=out / "snaps", orphan=orphan)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Returns an empty scenario folder."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    return directory
