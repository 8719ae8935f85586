"""``harness run`` and the garbage collector: what is alive before the scenarios is frozen while they
run and given back afterwards, and the heap is frozen as the process exits (harness/cli/run.py,
harness/cli/main.py), so neither the run's full collections nor the interpreter's last one walk it."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness.util import collector

ROOT = Path(__file__).resolve().parents[1]

PROBE = """\
import atexit, gc, sys
atexit.register(lambda: sys.stderr.write("frozen-at-the-end %d\\n" % gc.get_freeze_count()))  # runs last
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
from harness.util import collector
_hold = collector.hold
def hold():  # entry() holds the collector: the collections counted from there to the run's freeze
    _hold()
    collections.clear()
collector.hold = hold
_freeze = collector.freeze
def freeze():
    sys.stderr.write("collected-before-the-freeze %d\\n" % len(collections))
    return _freeze()
collector.freeze = freeze
from harness.run import runner
_run = runner.Runner.run
def run(self, scenario):
    sys.stderr.write("frozen-in-a-scenario %d\\n" % gc.get_freeze_count())
    sys.stderr.write("collector-on-in-a-scenario %d\\n" % gc.isenabled())
    return _run(self, scenario)
runner.Runner.run = run
from harness.cli import run as cli_run
_report = cli_run._report_target
def report(*args, **kwargs):
    sys.stderr.write("frozen-in-the-report %d\\n" % gc.get_freeze_count())
    return _report(*args, **kwargs)
cli_run._report_target = report
if sys.argv[1] == "frozen-before":
    gc.freeze()
    sys.stderr.write("theirs %d\\n" % gc.get_freeze_count())
from harness.cli.main import entry
sys.exit(entry(sys.argv[2:]))
"""


def _probe(tmp_path: Path, how: str) -> dict[str, int]:
    folder = tmp_path / "scenarios" / "anthropic-text-editor"
    folder.mkdir(parents=True)
    for name in ("profile.yaml", "create/empty-file.yaml"):
        shutil.copy(ROOT / "scenarios" / "anthropic-text-editor" / name, folder)
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, how, "run", "-q", "--jobs", "1", "--no-builtin",
                           "--scenarios", str(tmp_path / "scenarios")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.split()[0]: int(line.split()[1]) for line in done.stderr.splitlines()
            if line.split() and line.split()[0] in ("frozen-in-a-scenario", "frozen-in-the-report",
                                                    "frozen-at-the-end", "theirs", "collected-before-the-freeze",
                                                    "collector-on-in-a-scenario")}


def test_the_scenarios_run_with_the_heap_frozen_which_is_given_back_and_frozen_again_at_exit(tmp_path):
    seen = _probe(tmp_path, "plain")
    assert seen["frozen-in-a-scenario"] > 0
    assert seen["frozen-in-the-report"] == 0
    assert seen["frozen-at-the-end"] > 0


def test_the_start_of_a_run_makes_no_collection_and_the_scenarios_run_with_the_collector_on(tmp_path):
    seen = _probe(tmp_path, "plain")
    # The imports, the arguments and the catalog made no collection (each walked what all stays).
    assert seen["collected-before-the-freeze"] == 0
    assert seen["collector-on-in-a-scenario"] == 1


def test_a_hold_is_frozen_as_it_is_and_the_collector_given_back(nothing_frozen):
    made = [["during the start"]]
    collector.hold()
    try:
        assert not gc.isenabled()
        later = [["later in the start"]]
        assert collector.freeze() and gc.isenabled()
        assert not _young(made) and not _young(later)
    finally:
        collector.release()
        gc.enable()
        gc.unfreeze()


def test_a_hold_leaves_a_collector_that_was_off_and_release_gives_back_only_its_own(nothing_frozen):
    gc.disable()
    try:
        collector.hold()
        collector.release()
        assert not gc.isenabled()
        assert not collector.freeze()  # off, and not by a hold: nothing frozen
    finally:
        gc.enable()
    collector.hold()
    collector.release()
    assert gc.isenabled()


def test_a_command_other_than_run_gets_the_collector_back(nothing_frozen, capsys):
    from harness.cli.main import main
    collector.hold()
    try:
        assert main(["list", "--profile", "anthropic-text-editor"]) == 0
        assert gc.isenabled()
    finally:
        collector.release()
        gc.enable()


def test_a_freeze_made_before_is_left_as_it_was(tmp_path):
    seen = _probe(tmp_path, "frozen-before")
    # Not frozen again (the count only falls, as frozen objects are freed), nor given back after the run.
    assert 0 < seen["frozen-in-the-report"] <= seen["frozen-in-a-scenario"] <= seen["theirs"]


def _young(value: object) -> bool:
    return any(each is value for generation in range(3) for each in gc.get_objects(generation))


def test_what_is_alive_at_a_fork_is_frozen_for_the_block_and_given_back_after_it(nothing_frozen):
    alive = [["alive"]]
    with collector.frozen(added=True):
        assert not _young(alive) and gc.get_freeze_count() > 0
        made_inside = [["later"]]
        assert _young(made_inside)
    assert gc.get_freeze_count() == 0 and _young(alive)


def test_added_to_a_freeze_made_before_it_is_given_back_with_that(nothing_frozen):
    with collector.frozen():
        theirs = gc.get_freeze_count()
        alive = [["alive"]]
        with collector.frozen(added=True):
            assert not _young(alive) and gc.get_freeze_count() > theirs
        assert not _young(alive)  # still frozen: the owner gives it back
    assert gc.get_freeze_count() == 0 and _young(alive)
