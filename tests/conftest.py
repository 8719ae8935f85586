"""Shared fixtures for the harness's own tests."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml  # noqa: F401 - imported for the whole session, see below

from harness.scenario.loader import load_text

# The harness imports PyYAML only where it parses or writes YAML (tests/test_start_imports.py). A
# test's in-process pytest run (pytester) takes every module it imported out of sys.modules again,
# and PyYAML imported anew after that is broken (its C loader keeps the first import's classes:
# "could not determine a constructor for the tag None", problems said at line 1). A process imports
# PyYAML once; so does this one, before any such run.


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
    from harness.run.options import RunOptions
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
    # pytest-xdist registers it too; `-p no:xdist` runs see it in the test modules that use it.
    config.addinivalue_line("markers", "xdist_group(name): tests that run on one xdist worker (--dist loadgroup)")
    # Tests that do not name a snapshot folder must not compare with (or write to) the checkout's.
    os.environ.setdefault("HARNESS_SNAPSHOTS", os.path.join(os.environ["HARNESS_STATE_DIR"], "snapshots"))
    # The catalog cache of this session only, never the user's; under pytest-xdist, the controller's
    # for every worker (pytest_configure_node), which the controller fills while they start.
    shared = getattr(config, "workerinput", {}).get("harness_cache_dir")
    os.environ["HARNESS_CACHE_DIR"] = shared or os.path.join(os.environ["HARNESS_STATE_DIR"], "cache")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, in the controller
def pytest_configure_node(node) -> None:
    """Gives each xdist worker the controller's catalog cache, and under ``--dist loadgroup`` the folder
    for the groups of its tests (``pytest_xdist_make_scheduler``)."""
    node.workerinput["harness_cache_dir"] = os.environ["HARNESS_CACHE_DIR"]
    if node.config.getoption("dist") == "loadgroup":
        folder = Path(os.environ["HARNESS_STATE_DIR"], "groups")
        folder.mkdir(exist_ok=True)
        node.workerinput["harness_groups"] = str(folder)


@pytest.hookimpl(wrapper=True)
def pytest_sessionstart(session: pytest.Session):
    """In the xdist controller, once its workers were started: loads the scenario folders' catalog
    into the shared cache. Each worker would otherwise parse and check every scenario file (about a
    second of processor time) to collect them; the workers are still importing when it is done."""
    result = yield
    if session.config.pluginmanager.has_plugin("dsession"):
        from harness.scenario import catalog
        catalog.load([Path(folder).resolve() for folder in session.config.getini("harness_scenarios")])
    elif hasattr(session.config, "workerinput"):
        _rewrite_a_share(session.config)
    return result


def _rewrite_a_share(config: pytest.Config) -> None:
    """In an xdist worker, before it collects: writes pytest's cached, assert-rewritten code of the test
    modules no other worker wrote yet, starting at this worker's share of them.

    On a fresh checkout every worker would rewrite every test module itself (about 2.3 s of processor
    time each, pytest's rewriter walks every node it makes); this way each rewrites about its share and
    then finds the others' files, written whole (pytest renames them into place), as pytest would find
    its own. Through pytest's own rewriting functions; where they moved, or assertions are not
    rewritten, nothing is done here and pytest rewrites as usual.
    """
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None or sys.dont_write_bytecode:
        return
    given = [Path(config.invocation_params.dir, arg.split("::")[0]).resolve() for arg in config.args]
    modules = sorted(path for path in Path(__file__).resolve().parent.rglob("test_*.py")
                     if any(path == place or place in path.parents for place in given))
    first = len(modules) * int(config.workerinput["workerid"].removeprefix("gw")) // config.workerinput["workercount"]
    for path in modules[first:] + modules[:first]:
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc) is None and try_makedirs(cache):
            source_hash, code = _rewrite_test(path, config)
            _write_pyc(state, code, source_hash, pyc)


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


#: The folder whose fixtures are the suite's own (this one and the checkout's conftest.py), not a plugin's.
OWN = Path(__file__).resolve().parent.parent


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """Returns a key for each of the suite's own fixtures ``item`` uses that outlive one test (module,
    class, package or session scope), and for each ``xdist_group`` mark it has: tests with a key in
    common share one instance per process (or, for a mark, what their process imported for the first)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # a scenario of the catalog, or another plugin's item
        return []
    keys = [f"mark::{mark.args[0]}" for mark in item.iter_markers("xdist_group") if mark.args]
    for name in item.fixturenames:
        definitions = info.name2fixturedefs.get(name)
        if not definitions or definitions[-1].scope == "function":
            continue
        definition = definitions[-1]
        try:
            source = Path(inspect.getsourcefile(definition.func) or "").resolve()
        except TypeError:
            continue
        if not source.is_relative_to(OWN) or ".venv" in source.relative_to(OWN).parts:
            continue  # pytest's own (tmp_path_factory), hypothesis', a plugin's
        where = {"session": "", "package": definition.baseid, "module": item.nodeid.split("::")[0],
                 "class": item.nodeid.rsplit("::", 1)[0]}[definition.scope]
        keys.append(f"{where}::{name}")
    return keys


def groups(items: list[pytest.Item]) -> dict[str, str]:
    """Returns the group of each test that shares one of the suite's own long-lived fixtures with
    another test (directly, or through a third): nodeid -> the group's name (its smallest key)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keyed = [(item.nodeid, _shared_fixtures(item)) for item in items]
    for _, keys in keyed:
        for key in keys:
            parent[root(key)] = root(keys[0])
    names: dict[str, str] = {}
    for key in sorted(parent):
        names.setdefault(root(key), f"shared {key}")
    return {nodeid: names[root(keys[0])] for nodeid, keys in keyed if keys}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker under ``--dist loadgroup``: writes the groups of its tests where the
    controller's scheduler reads them (``pytest_xdist_make_scheduler``). Every worker collects the same
    tests, so every worker writes the same groups."""
    folder = getattr(config, "workerinput", {}).get("harness_groups")
    if folder is None:
        return
    path = Path(folder, f"{config.workerinput['workerid']}.json")
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(groups(items)), "utf-8")
    temporary.replace(path)  # whole or absent for the controller


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, in the controller
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup``: the tests that share a long-lived fixture run on one worker, one after another.

    A fixture of module or session scope (a whole-catalog run, a reference server or agent, a fuzz
    run) is made once per process that runs one of its tests: spread over three workers, it was made up
    to three times. The groups come from the fixtures the tests use and from ``xdist_group`` marks
    (``groups``, written by a worker after its collection); larger groups are handed out first, then every other test one by one, so a
    worker that ends early takes the next. (pytest-xdist's own ``loadgroup`` reads ``xdist_group``
    marks through node ids that pytest 9.2 no longer lets a plugin change.)
    """
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling
    folder = Path(os.environ["HARNESS_STATE_DIR"], "groups")

    class SharedFixtures(LoadScopeScheduling):
        known: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.known is None:  # read once every worker finished collecting (all wrote the same)
                written = sorted(folder.glob("*.json"))
                self.known = json.loads(written[0].read_text("utf-8")) if written else {}
            return self.known.get(nodeid, nodeid)

    return SharedFixtures(config, log)


@pytest.fixture(scope="session")
def reference_results() -> dict:
    """The built-in catalog on the in-process reference, results by scenario id.

    Run once per test process: the tests that compare another transport (cmd:, mcp:, Streamable HTTP)
    with the in-process verdicts only read them.
    """
    from harness.run.runner import Runner
    from harness.scenario import catalog
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

    from harness.cli.main import main
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


@pytest.fixture
def parses(monkeypatch, tmp_path):
    """Counts the stored snapshots parsed (harness/record/snapshot/checker.py); the cache of their
    behaviours in a folder of this test's own."""
    from harness.record.snapshot import checker

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    counted: list[str] = []
    original = checker.stored_behaviour

    def counting(text):
        counted.append(text)
        return original(text)

    monkeypatch.setattr(checker, "stored_behaviour", counting)
    return counted


@pytest.fixture
def nothing_frozen():
    """Nothing frozen for the garbage collector during the test (the session's freeze, if any, made again after it)."""
    import gc
    had = gc.get_freeze_count()
    gc.unfreeze()
    yield
    if had:
        gc.freeze()
