"""pytest plugin: every scenario is a pytest item, run against ``--target``.

Usage (it is registered through the ``pytest11`` entry point when the package is installed)::

    # pyproject.toml
    [tool.pytest.ini_options]
    harness_scenarios = ["scenarios"]       # folders whose YAML files are scenarios

    $ pytest --target reference              # or cmd:..., mcp:..., claude-code
    $ pytest --harness-catalog               # also run the built-in catalog
    $ pytest -k "edit and not open"          # select by id, title, tags
    $ pytest --baseline known.yaml           # known failures xfail; stale entries fail
    $ pytest --write-baseline known.yaml     # write this session's failures as a baseline

The run options (``--target``, ``--harness-timeout``, ``--run-as``, ``--sandbox``, ``--binding``,
``--tool-map``, ``--aspects``, ``--harness-tmp``, ``--baseline``) are harness run's, declared once
in harness/run/options.py; the target and its runner are built by harness/run/assemble.py, as for
``harness run``. A session in which every scenario item was skipped fails (nothing ran).

YAML files are collected only under the configured folders (or the built-in catalog when asked):
installing the plugin changes nothing for a project that does not opt in. Nothing here has an
import-time side effect.
"""

from __future__ import annotations

import functools
import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

from harness.run.options import add_pytest_options
from harness.util import collector
from harness.util.printable import defused, shown

_RUNNER = pytest.StashKey["Any"]()
_TARGET = pytest.StashKey["Any"]()
_SKIPPED = pytest.StashKey["list[int]"]()
_SKIP_REASON = pytest.StashKey["str"]()
_NOTHING_RAN = pytest.StashKey["str"]()
_OPTIONS = pytest.StashKey["Any"]()
_ASPECTS = pytest.StashKey[bool]()  # --aspects names other aspects than the default
_BASELINE = pytest.StashKey["Any"]()
_DIRS = pytest.StashKey["list[Path]"]()
_ROOTS = pytest.StashKey["tuple[str, ...]"]()
_CATALOG = pytest.StashKey["Path"]()
#: The stored snapshots' behaviours read this session, by snapshot folder (harness/pytest_plugin/syrupy.py).
STORED_BEHAVIOURS = pytest.StashKey["dict[str, Any]"]()
#: The snapshot stores of this session, by root and target slug (harness/pytest_plugin/syrupy.py).
SNAPSHOT_STORES = pytest.StashKey["dict[tuple[Path, str], Any]"]()
_WRITTEN = pytest.StashKey["list[dict[str, Any]]"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds --target and friends, and the ``harness_scenarios`` ini option."""
    group = parser.getgroup("harness", "file-tool conformance harness")
    # --target, --harness-timeout, --run-as, --sandbox, --binding, --tool-map(-file), --aspects,
    # --harness-tmp, --baseline: declared once, with harness run's (harness/run/options.py).
    add_pytest_options(group)
    group.addoption("--harness-catalog", action="store_true", help="collect the built-in scenario catalog")
    group.addoption("--write-baseline", default=None, metavar="FILE",
                    help="write this session's failing scenarios as a baseline (one check per unmet expectation)")
    parser.addini("harness_scenarios", "folders whose YAML files are scenarios", type="paths", default=[])
    parser.addini("harness_snapshots", "folder of scenario snapshots (default: snapshots/ at the root)", default="")


def pytest_configure(config: pytest.Config) -> None:
    """Resolves the scenario folders and the run options once (a bad --aspects value is refused by
    its type, a missing or malformed --baseline here: usage errors)."""
    from harness.run.options import RunOptions
    options = RunOptions.from_pytest(config)
    config.stash[_OPTIONS] = options
    config.stash[_ASPECTS] = options.aspects != RunOptions().aspects
    if options.tmp is not None and not options.tmp.is_dir():
        raise pytest.UsageError(f"--harness-tmp {options.tmp}: no such folder")
    if options.baseline is not None:
        from harness.record import baseline
        try:
            config.stash[_BASELINE] = baseline.load(options.baseline)
        except ValueError as exc:
            raise pytest.UsageError(f"--baseline: {exc}") from None
    config.stash[_WRITTEN] = []
    dirs = [Path(p).resolve() for p in config.getini("harness_scenarios")]
    if config.getoption("--harness-catalog"):
        from harness.scenario.catalog import builtin_dir
        catalog = builtin_dir().resolve()
        dirs.append(catalog)
        # Installed, the catalog lives in site-packages: outside the paths pytest walks, or inside a
        # folder it never enters (a project's .venv: norecursedirs skips dot-folders and virtualenvs,
        # for an explicit path too). So the files pytest did not reach are collected here, after it
        # (pytest_collection_modifyitems), wherever the catalog is installed.
        config.stash[_CATALOG] = catalog
    config.stash[_DIRS] = dirs
    config.stash[_ROOTS] = tuple(str(directory).rstrip("/") + "/" for directory in dirs)
    if dirs or options.target != RunOptions().target:  # the target is built (not started) now: a refusal is a usage error
        from harness.run import assemble
        try:
            config.stash[_TARGET] = assemble.target(options.target, options)
        except ValueError as exc:  # an unknown target, a binding with mistakes, isolation it cannot apply
            raise pytest.UsageError(str(exc)) from None
    config.stash[_SKIPPED] = [0, 0]  # scenario items that ran, and those of them skipped
    config.pluginmanager.register(_Counter(config), "harness-scenario-counter")
    # Registered before the built-in plugins' own clean-ups (pytest calls this plugin's configure
    # first), so it runs after them: after the last garbage collection pytest makes (its
    # unraisable-exception plugin's), which the objects frozen by pytest_collection_finish skip.
    config.add_cleanup(functools.partial(_unfreeze, config))
    if dirs:  # what start-up left alive (modules, plugins, the target) lives as long as the session:
        _freeze(config)  # loading the catalog during collection set off a full walk of all of it (20-45 ms)


_FROZEN = pytest.StashKey[bool]()


def _freeze(config: pytest.Config) -> None:
    """Frees the young garbage and freezes what is alive now, adding to what this session froze
    before; nothing when something else froze first (see :func:`pytest_collection_finish`)."""
    if config.stash.get(_FROZEN, False):
        gc.collect(1)
        gc.freeze()
    elif collector.freeze():
        config.stash[_FROZEN] = True


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Moves what collection left alive (modules, the catalog, the items) out of the garbage
    collector's reach for the run, when scenario items are to run.

    Every full collection during the run walks every live object; pytest keeps more of them than
    ``harness run`` (nodes, reports), and the collector's walks over what was alive before the first
    item took 7-10% of a run of the catalog. The young generations' garbage is freed first;
    the older garbage a full collection would find there (about a hundred objects: nodes that
    collected nothing, none with a finalizer) is not worth the full walk (30-50 ms), and goes back to
    the collector with everything else. Nothing is frozen when something already is (a run inside
    another pytest process that froze, a program that froze for its own reasons); :func:`_unfreeze`
    gives the objects back at the end of the session. What start-up left alive was frozen already
    (``pytest_configure``, where scenario folders are configured); a session without a scenario item
    gets it back here.
    """
    scenario_items = [item for item in session.items if isinstance(item, ScenarioItem)]
    hooks: dict[Path, Any] = {}  # no conftest file is loaded after collection: the item's hooks are known now,
    for item in scenario_items:  # and they depend on its folder alone (the conftest files above it)
        folder = item.path.parent
        if folder not in hooks:
            hooks[folder] = session.gethookproxy(item.path)
        item._hooks = hooks[folder]
    if scenario_items:
        _freeze(session.config)
    elif session.config.stash.get(_FROZEN, False):  # no scenario item: what start-up froze goes back now
        del session.config.stash[_FROZEN]
        gc.unfreeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """Frees the garbage of the run and freezes what it left alive (results, reports, syrupy's
    assertions), once the items are done, when this session froze before.

    The session's end collects the garbage of the whole heap again and again: syrupy's report
    allocates enough to set off a full collection, and pytest's unraisable-exception plugin collects
    twice, in ``pytest_unconfigure`` and in its clean-up (each walk 15-40 ms over what the items left
    alive). One full collection here frees the same garbage while pytest's unraisable-exception hook
    is still on (a finalizer's exception is reported as before); the walks after it skip what it froze.
    """
    outcome = yield
    if session.config.stash.get(_FROZEN, False):
        gc.collect()
        gc.freeze()
    return outcome


def _unfreeze(config: pytest.Config) -> None:
    """Gives the objects this session froze (:func:`_freeze`) back to the garbage collector, and
    has them frozen again as the process exits (once per process, whichever session froze).

    At its exit the interpreter collects the garbage of the whole heap (the modules' reference
    cycles, every function and class), which took a sixth of a pytest run of the catalog; frozen
    objects it leaves alone, as it leaves alone every object still alive when a process ends
    (Python never promises ``__del__`` runs then). A program that goes on after ``pytest.main``
    (pytest's own tests of plugins) gets its objects back for as long as it runs.
    """
    if config.stash.get(_FROZEN, False):
        del config.stash[_FROZEN]
        gc.unfreeze()
        collector.freeze_at_exit()


class _Counter:
    """Counts a session's scenario items that ran, and those skipped, by their ``verdict`` property
    (registered per config: in the controller too under pytest-xdist, where every worker's reports arrive)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Counts one scenario item's call."""
        verdict = dict(report.user_properties).get("verdict") if report.when == "call" else None
        if verdict is None:
            return
        counts = self.config.stash[_SKIPPED]
        counts[0] += 1
        if verdict == "skip":
            counts[1] += 1
            if _SKIP_REASON not in self.config.stash and isinstance(report.longrepr, tuple):
                self.config.stash[_SKIP_REASON] = str(report.longrepr[2]).removeprefix("Skipped: ")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fails a session whose scenario items were all skipped (nothing ran on the target), as
    ``harness run`` does: CI must not go green when no scenario ran."""
    _write_baseline(session)
    for behaviours in session.config.stash.get(STORED_BEHAVIOURS, {}).values():  # snapshots were compared
        behaviours.keep()
    counts = session.config.stash.get(_SKIPPED, None)
    if counts is None or getattr(session.config, "workerinput", None) is not None:  # the controller judges
        return
    from harness.report.tally import nothing_ran
    line = nothing_ran(counts[0], counts[1], session.config.stash.get(_SKIP_REASON, None))
    if line and session.exitstatus == 0:
        session.config.stash[_NOTHING_RAN] = line
        session.exitstatus = 1


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keeps each failing scenario's baseline record (sent by an xdist worker as a user property)."""
    if report.when != "call":
        return
    for key, value in report.user_properties:
        if key == "harness_baseline":
            import json
            _written_records.append(json.loads(str(value)))


_written_records: list[dict[str, Any]] = []


def _write_baseline(session: pytest.Session) -> None:
    """Writes ``--write-baseline`` (in the controlling process, from every worker's records)."""
    config = session.config
    path = config.getoption("--write-baseline", None)
    if not path or getattr(config, "workerinput", None) is not None:
        return
    from harness.record import baseline
    records = sorted(_written_records, key=lambda record: record["id"])
    _written_records.clear()
    count = baseline.write(Path(path), records, header=f"target: {config.getoption('--target')}")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"baseline: wrote {count} entr{'y' if count == 1 else 'ies'} to {path}")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stops the target, if one was started."""
    runner = config.stash.get(_RUNNER, None)
    if runner is not None:
        runner.stop()


@functools.lru_cache(maxsize=8192)
def _real(path: str | os.PathLike[str]) -> str:
    """Returns ``path`` resolved (as ``Path.resolve`` does), as a string; collection, the catalog and
    the de-duplication each ask. A realpath is an lstat per component: the file's folder is
    resolved once for all its files, the file itself only looked at (one lstat) for being a link."""
    text = os.fspath(path)
    folder, name = os.path.split(text if os.path.isabs(text) else os.path.join(os.getcwd(), text))
    if name in ("", ".", "..") or os.path.islink(text):
        return os.path.realpath(text)
    return os.path.join(_real_folder(folder), name)


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collects YAML files under the scenario folders."""
    if not file_path.name.endswith((".yaml", ".yml")):
        return None
    roots = parent.config.stash.get(_ROOTS, ())
    if roots and _real(file_path).startswith(roots):
        if file_path.name == "profile.yaml":  # a profile (harness/scenario/profiles.py), not scenarios
            return ProfileFile.from_parent(parent, path=file_path)
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they apply to the catalog's items too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Adds the built-in catalog's files pytest did not reach (``--harness-catalog``); the catalog may
    also be reached twice (ini folder and --harness-catalog): keeps each file once."""
    catalog = config.stash.get(_CATALOG, None)
    if catalog is not None:
        from harness.scenario.catalog import scenario_files
        reached = {_real(item.path) for item in items if isinstance(item, (ScenarioItem, InvalidScenarioItem))}
        for path in scenario_files([catalog]):
            if _real(path) not in reached:
                items.extend(ScenarioFile.from_parent(session, path=path).collect())
    seen: set[tuple[str, str]] = set()
    keep = []
    for item in items:
        if isinstance(item, ScenarioItem):
            key = (_real(item.path), item.name)
            if key in seen:
                continue
            seen.add(key)
        keep.append(item)
    items[:] = keep


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Lists stored snapshots of the target that no scenario of the configured folders matches."""
    runner = config.stash.get(_RUNNER, None)
    dirs = config.stash.get(_DIRS, [])
    if config.stash.get(_NOTHING_RAN, None):  # said once, in one line; the session failed (exit 1)
        terminalreporter.write_sep("=", config.stash[_NOTHING_RAN], red=True)
    if runner is not None and runner.start_error:  # each item said only that; here is why, once
        terminalreporter.write_sep("=", "the target did not start", red=True)
        terminalreporter.write_line(defused(shown(runner.start_error)))
    if runner is not None and not runner.target.in_process and getattr(config, "workerinput", None) is None:
        try:  # a candidate ran unsandboxed: said once, in one line (harness/targets/launch.py)
            said = config.stash[_OPTIONS].sandbox_decision()[1]
        except ValueError:
            said = None
        if said is not None:
            terminalreporter.write_line(f"note: {said} (docs/security.md)")
    if runner is None or not dirs or getattr(config, "workerinput", None) is not None:
        return
    from harness.record.snapshot import SnapshotStore
    store = SnapshotStore(_snapshot_root(config), runner.target.slug)
    known = _known_ids(config)
    orphans = [scenario_id for scenario_id in store.ids() if scenario_id not in known]
    if orphans:
        terminalreporter.write_sep("-", f"{len(orphans)} snapshot(s) no scenario matches")
        for scenario_id in orphans:
            terminalreporter.write_line(f"  {store.path(scenario_id)}")


_FILES = pytest.StashKey["dict[str, list[Any]]"]()
_PROFILES = pytest.StashKey["set[str]"]()
_KNOWN = pytest.StashKey["set[str]"]()


def _known_ids(config: pytest.Config) -> set[str]:
    """Returns the ids of every scenario under the scenario folders (the catalog collection loaded,
    else loaded now)."""
    known = config.stash.get(_KNOWN, None)
    if known is None:
        from harness.scenario import catalog
        known = config.stash[_KNOWN] = {scenario.id for scenario in catalog.load(config.stash.get(_DIRS, [])).scenarios}
    return known


def _valid_files(config: pytest.Config) -> dict[str, list[Any]]:
    """Returns the scenarios of every valid file under the scenario folders, by resolved path.

    The folders are loaded once per session through the catalog, whose cache
    (harness/scenario/catalog_cache.py) spares parsing and checking every file again: collection costs
    little. Invalid files are left out (their collection loads them alone, for the problems).
    """
    files = config.stash.get(_FILES, None)
    if files is None:
        from harness.scenario import catalog
        loaded = catalog.load(config.stash.get(_DIRS, []))
        broken = {_real(path) for path in loaded.broken}
        files = {}
        for scenario in loaded.scenarios:
            if scenario.file is not None:
                real = _real(scenario.file)
                if real not in broken:
                    files.setdefault(real, []).append(scenario)
        config.stash[_FILES] = files
        config.stash[_KNOWN] = {scenario.id for scenario in loaded.scenarios}
        config.stash[_PROFILES] = {_real(profile.file) for profile in loaded.profiles if profile.file is not None}
    return files


def _valid_profiles(config: pytest.Config) -> set[str]:
    """Returns the resolved paths of the profile files the session's catalog loaded without a problem."""
    _valid_files(config)
    return config.stash[_PROFILES]


_SNAPSHOT_ROOT = pytest.StashKey[Path]()


def _snapshot_root(config: pytest.Config) -> Path:
    """Returns the snapshot root: the ``harness_snapshots`` ini value, else ``<rootpath>/snapshots``."""
    root = config.stash.get(_SNAPSHOT_ROOT, None)
    if root is None:
        root = config.stash[_SNAPSHOT_ROOT] = config.rootpath / (config.getini("harness_snapshots") or "snapshots")
    return root


def _runner(config: pytest.Config) -> Any:
    runner = config.stash.get(_RUNNER, None)
    if runner is None:
        from harness.run import assemble
        options = config.stash[_OPTIONS]
        try:  # built as harness run builds its own: the same options, isolation, workspace folder
            target = config.stash.get(_TARGET, None) or assemble.target(options.target, options)
        except ValueError as exc:  # an unknown target, a binding with mistakes, refused isolation
            raise pytest.UsageError(str(exc)) from None
        # Per-step workspace states go into snapshots.
        runner = assemble.runner(target, options, record_states=True)
        runner.start()
        config.stash[_RUNNER] = runner
    return runner


class ScenarioFile(pytest.File):
    """A scenario YAML file: one item per scenario in it, or one failing item if it is invalid."""

    def collect(self):
        """Yields the file's scenarios as items (from the session's catalog, loaded once and cached)."""
        from harness.scenario.loader import ScenarioError, load_file
        try:
            scenarios = _valid_files(self.config).get(_real(self.path))
            if scenarios is None:  # not in the catalog of the scenario folders, or invalid: say why
                scenarios = load_file(self.path)
        except ScenarioError as exc:
            yield InvalidScenarioItem.from_parent(self, name=self.path.name, problems=str(exc))
            return
        for scenario in scenarios:
            item = ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
            for tag in (scenario.profile, *scenario.tags):
                item.keywords[tag] = True
            yield item


class ProfileFile(pytest.File):
    """A profile.yaml: no item when it is valid, else one that fails with every problem, file:line:field."""

    def collect(self):
        """Yields a failing item when the profile file is invalid."""
        if _real(self.path) in _valid_profiles(self.config):
            return  # the session's catalog loaded it (from its cache, unchanged): valid
        from harness.scenario.profiles import ProfileError, load_cached
        try:
            load_cached(self.path)  # not in the catalog, or invalid: loaded alone, for its problems
        except ProfileError as exc:
            yield InvalidScenarioItem.from_parent(self, name=self.path.name, problems=str(exc), kind="profile")


class ScenarioFailed(Exception):
    """A scenario's verdict was fail or error."""

    def __init__(self, result: Any, snapshot_diff: str | None = None, stale: bool = False) -> None:
        super().__init__(result.reason)
        self.result = result
        self.snapshot_diff = snapshot_diff
        self.stale = stale  # it passes, but the baseline lists it as a known failure


class StaleEntry(Exception):
    """A baseline entry that excuses nothing now."""


class ScenarioItem(pytest.Item):
    """One scenario, run on the session's target."""

    def __init__(self, *, scenario: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.result: Any = None
        self._hooks: Any = None  # set once collection is over (pytest_collection_finish)

    @property
    def ihook(self) -> Any:
        """Returns the hooks that apply to the item, as pytest's ``Node.ihook`` does (which works them
        out from the conftest files again on each of the dozen times a run asks)."""
        return self._hooks if self._hooks is not None else super().ihook

    @functools.cached_property
    def location(self) -> tuple[str, int | None, str]:
        """Returns pytest's ``Item.location``: the file relative to the root folder, its 0-based line,
        the item's description. A file below the root folder is its path less the root's, as pytest's
        general path arithmetic (a path object per part) makes it; any other is left to pytest."""
        path, line, description = self.reportinfo()
        text, root = os.path.abspath(path), str(self.config.rootpath)
        if root != os.sep and text.startswith(root + os.sep):
            return text[len(root) + 1:], line, description
        return pytest.Item.location.func(self)  # type: ignore[attr-defined]

    @property
    def obj(self) -> Any:
        """Returns the function that runs the item (syrupy's location logic reads ``item.obj``)."""
        return ScenarioItem.runtest

    @property
    def target_slug(self) -> str:
        """Returns the target's file-name-safe name: the snapshot folder."""
        return _runner(self.config).target.slug

    @property
    def snapshot_masks(self) -> tuple[tuple[str, str], ...]:
        """Returns the target's own snapshot masks (``Target.snapshot_masks``)."""
        return _runner(self.config).target.snapshot_masks

    @property
    def snapshot_root(self) -> Path:
        """Returns the snapshot root (see ``_snapshot_root``)."""
        return _snapshot_root(self.config)

    def runtest(self) -> None:
        """Runs the scenario; fail and error raise, skip skips, pass and recorded pass."""
        from harness.scenario.model import Verdict
        self.result = result = _runner(self.config).run(self.scenario)
        if self.config.stash[_ASPECTS]:
            from harness.scenario import aspects
            aspects.apply(result, self.config.stash[_OPTIONS].aspects)
            self.user_properties.append(("aspects", ",".join(f"{k}={v}" for k, v in result.aspects.items())))
        self.user_properties.append(("verdict", result.verdict.value))
        if result.verdict is Verdict.SKIP:
            pytest.skip(result.reason)
        if result.verdict in (Verdict.FAIL, Verdict.ERROR) and self.config.getoption("--write-baseline", None):
            import json

            from harness.record import baseline
            self.user_properties.append(("harness_baseline", json.dumps(baseline.as_record(result))))
        from harness.pytest_plugin.syrupy import SnapshotDiverged, assert_result
        diff = assert_result(self, result)
        known = self.config.stash.get(_BASELINE, None)
        if known is not None:
            self._judge_by(known, result)
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            raise ScenarioFailed(result, snapshot_diff=diff)
        if diff:
            raise SnapshotDiverged(self.scenario.id, diff)

    def _judge_by(self, known: Any, result: Any) -> None:
        """Under ``--baseline``: a known failure xfails with the baseline's reason; a listed scenario that
        passes now, or a check entry that excuses nothing, fails as a stale entry."""
        from harness.record import baseline
        from harness.scenario.model import Verdict
        key = baseline.listed_as(known, result.id, result.scenario.former_ids)
        narrow = key in known.checks and result.verdict is Verdict.FAIL
        judged, reason, unused = baseline.judge(known, key, result.verdict.value,
                                                baseline.unmet_of(result) if narrow else ())
        if unused or judged == "stale":
            what = ", ".join(check.describe() for check in unused) or "the scenario passes now"
            raise StaleEntry(f"stale baseline entry for {result.id}: {what}; remove it from the baseline")
        if judged == "known":
            result.known = reason
            pytest.xfail(f"known failure (baseline): {reason}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """Shows expected vs observed, not a traceback into the harness."""
        if isinstance(excinfo.value, StaleEntry):
            return str(excinfo.value)
        if isinstance(excinfo.value, ScenarioFailed):
            from harness.report.terminal import explain
            diff = excinfo.value.snapshot_diff
            # The log of a CI job reads workflow commands: a candidate's text must not make one.
            return defused(explain(excinfo.value.result) + (f"\nsnapshot differs too:\n{shown(diff)}" if diff else ""))
        from harness.pytest_plugin.syrupy import SnapshotDiverged
        if isinstance(excinfo.value, SnapshotDiverged):
            return defused(shown(excinfo.value.render()))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Points at the scenario's file and line."""
        return self.path, self.scenario.line - 1, f"scenario {self.scenario.id}"


class InvalidScenarioItem(pytest.Item):
    """Stands for a scenario file that does not validate: it fails with every problem, file:line:field."""

    def __init__(self, *, problems: str, kind: str = "scenario", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = problems
        self.kind = kind

    def runtest(self) -> None:
        """Always fails."""
        raise ScenarioInvalid(self.problems)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """Shows the problems."""
        return defused(shown(f"invalid {self.kind} file:\n{self.problems}"))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Points at the file."""
        return self.path, 0, f"invalid {self.kind} file {self.path.name}"


class ScenarioInvalid(Exception):
    """A scenario file failed validation."""
