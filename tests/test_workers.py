"""Worker processes (--jobs) and several targets in one run: the serial run's results, in its order."""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.cli.main import main
from harness.run import division, workers
from harness.scenario import catalog
from harness.scenario.model import Verdict
from harness.targets.base import CallResult, TargetError
from tests.fakes import ScriptedTarget

REFERENCE_CMD = f"cmd:{sys.executable} -m reference_impl.serve"
CRASHING_CMD = f"cmd:{sys.executable} tests/adapters/misbehaving.py --mode crash"
# Pyfakefs scenarios, open questions and plain ones, through a profile every target serves.
PROFILE = "mcp-write-text-file"


def _without_timings(value: Any) -> Any:
    """The report without what differs between any two runs: timings (and when the run started) and the
    workspaces' temporary names."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in ("seconds", "started")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    if isinstance(value, str):
        value = re.sub(r"/[^\s'\"]*?harness-[A-Za-z0-9_]+/", "<base>/", value)
        return re.sub(r"<base>/ws-[0-9]+(?![\w-])", "<base>/ws", value)  # a run's later workspaces
    return value


def _run(tmp: Path, name: str, *extra: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    report, snapshots = tmp / f"{name}.json", tmp / f"{name}-snapshots"
    code = main(["run", "-q", "--profile", PROFILE, "--json", str(report), "--snapshot-update",
                 "--snapshots", str(snapshots), *extra])
    files = {str(p.relative_to(snapshots)): p.read_text("utf-8") for p in sorted(snapshots.rglob("*")) if p.is_file()}
    return code, json.loads(report.read_text("utf-8")), files


def test_jobs_2_gives_the_verdicts_order_reports_and_snapshots_of_a_serial_run(tmp_path: Path) -> None:
    serial = _run(tmp_path, "serial", "--jobs", "1")
    parallel = _run(tmp_path, "parallel", "--jobs", "2")
    assert serial[0] == parallel[0] == 0
    assert [r["id"] for r in parallel[1]["results"]] == [r["id"] for r in serial[1]["results"]]
    assert _without_timings(parallel[1]) == _without_timings(serial[1])
    assert parallel[2] == serial[2] and len(serial[2]) > 30


def test_a_cmd_target_runs_one_candidate_per_worker(tmp_path: Path) -> None:
    serial = _run(tmp_path, "serial", "--jobs", "1", "--target", REFERENCE_CMD)
    parallel = _run(tmp_path, "parallel", "--jobs", "2", "--target", REFERENCE_CMD)
    assert _without_timings(parallel[1]) == _without_timings(serial[1])
    assert parallel[2] == serial[2]


def _dies_on_marker(workspace: Path, args: dict[str, Any]) -> CallResult:
    if "DIE" in json.dumps(args):
        os._exit(9)  # the worker process itself goes, as if killed
    return CallResult(output={"ok": True})


def test_a_worker_that_dies_turns_what_it_had_taken_into_errors_and_the_run_goes_on() -> None:
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:8]
    dying = scenarios[3]
    args = {"path": "DIE", "content": ""}
    scenarios[3] = type(dying)(**{**dying.__dict__, "steps": (type(dying.calls[0])(tool="write_text_file", args=args),)})
    target = ScriptedTarget({"write_text_file": _dies_on_marker}, profiles=(PROFILE,))
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    assert run.results[3].verdict is Verdict.ERROR and "worker process" in run.results[3].reason
    assert "exit code 9" in run.results[3].reason
    others = [r for i, r in enumerate(run.results) if i != 3]
    assert all("worker process" not in r.reason for r in others)


def _dies_once_the_marker_exists(workspace: Path, args: dict[str, Any]) -> CallResult:
    content = args.get("content", "")
    if content.startswith("DIE-AFTER:"):
        marker, deadline = Path(content[10:]), time.monotonic() + 5
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os._exit(9)
    return CallResult(output={"ok": True, "pid": os.getpid()})


def test_a_chunk_taken_by_a_worker_that_died_before_beginning_it_still_runs(tmp_path: Path) -> None:
    # Each worker asks for its next chunk as it begins one. Worker A (scenario 0) is the first to ask
    # and takes scenario 2; worker B (scenario 1) is told there is nothing left. A dies once B is
    # done: scenario 2, which A never began, runs in a new worker instead of failing with A.
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:3]
    assert [list(span) for span in division.chunks(3, 2)] == [[0], [1], [2]]
    marker = tmp_path / "b-done"
    first = scenarios[0]
    args = {"path": "out.txt", "content": f"DIE-AFTER:{marker}"}
    scenarios[0] = type(first)(**{**first.__dict__, "steps": (type(first.calls[0])(tool="write_text_file", args=args),)})
    target = ScriptedTarget({"write_text_file": _dies_once_the_marker_exists}, profiles=(PROFILE,))

    def seen(index: int, result: Any) -> None:
        if result.id == scenarios[1].id:
            marker.touch()
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=seen)
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    assert run.results[0].verdict is Verdict.ERROR and "exit code 9" in run.results[0].reason
    assert all("worker process" not in r.reason for r in run.results[1:]), [r.reason for r in run.results]


def _fails_first_then_slow(workspace: Path, args: dict[str, Any]) -> CallResult:
    if args.get("content") == "FAIL":
        raise TargetError("the first scenario fails")
    time.sleep(0.05)
    return CallResult(output={"ok": True})


def test_a_stop_request_ends_the_chunks_the_workers_hold(monkeypatch) -> None:
    # run -x: once the parent sees a failure, no worker begins another scenario, not even one of a
    # chunk it already holds (chunks of 8 here: without that, each worker would finish its chunk).
    monkeypatch.setattr(workers, "FLUSH_AFTER", 0.0)
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    plain = [s for s in cat.scenarios if not s.requires][0]
    step = type(plain.calls[0])
    scenarios = [type(plain)(**{**plain.__dict__, "id": f"{plain.id}-{n}", "steps": (
        step(tool="write_text_file", args={"path": "out.txt", "content": "FAIL" if n == 0 else "x"}),)})
        for n in range(64)]
    assert len(division.chunks(64, 2)[0]) == 8
    target = ScriptedTarget({"write_text_file": _fails_first_then_slow}, profiles=(PROFILE,))
    failed: list[str] = []

    def seen(index: int, result: Any) -> None:
        if result.verdict is not Verdict.PASS:
            failed.append(result.id)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=seen, stop=lambda: bool(failed))
    assert run.results[0].id == scenarios[0].id and run.results[0].verdict is Verdict.ERROR
    assert len(run.results) < 8, [r.id for r in run.results]


def _fails_first_then_slower(workspace: Path, args: dict[str, Any]) -> CallResult:
    if args.get("content") == "FAIL":
        raise TargetError("the first scenario fails")
    time.sleep(1.0 if args.get("content") == "SLOWER" else 0.3)
    return CallResult(output={"ok": True})


def test_a_stop_reaches_the_workers_when_every_chunk_is_already_handed_out(monkeypatch) -> None:
    # Four chunks of one: each worker holds one and has asked for the next, so none is left to hand
    # out when scenario 0's failure arrives (with worker A's next request, not at once).
    monkeypatch.setattr(workers, "FLUSH_AFTER", 60.0)
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    plain = [s for s in cat.scenarios if not s.requires][0]
    step = type(plain.calls[0])
    scenarios = [type(plain)(**{**plain.__dict__, "id": f"{plain.id}-{n}", "steps": (
        step(tool="write_text_file", args={"path": "out.txt", "content": ("FAIL", "x", "SLOWER", "SLOWER")[n]}),)})
        for n in range(4)]
    assert [list(span) for span in division.chunks(4, 2)] == [[0], [1], [2], [3]]
    target = ScriptedTarget({"write_text_file": _fails_first_then_slower}, profiles=(PROFILE,))
    failed: list[str] = []

    def seen(index: int, result: Any) -> None:
        if result.verdict is not Verdict.PASS:
            failed.append(result.id)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=seen, stop=lambda: bool(failed))
    assert run.results[0].verdict is Verdict.ERROR
    # Worker A begins its next scenario (2 or 3) before the failure reaches the parent; worker B,
    # still in scenario 1 when the stop is decided (and before A says anything more), must not
    # begin the other one.
    ran = [r.id for r in run.results]
    assert not (scenarios[2].id in ran and scenarios[3].id in ran), [(r.id, r.verdict, r.reason) for r in run.results]


def _dies_a_moment_after_it_begins(workspace: Path, args: dict[str, Any]) -> CallResult:
    if args.get("content") == "DIE":
        time.sleep(0.2)
        os._exit(9)
    return CallResult(output={"ok": True})


def test_a_worker_that_dies_before_the_parent_answers_its_request_is_a_verdict_not_a_crash() -> None:
    # Each worker asks for its next chunk as it begins one. Here the parent is held up (taking the
    # first result takes a second) while both workers begin scenario 2 or 3 and die: the answers the
    # parent then writes to them find no reader. That must be the dead workers' verdicts.
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    plain = [s for s in cat.scenarios if not s.requires][0]
    step = type(plain.calls[0])
    scenarios = [type(plain)(**{**plain.__dict__, "id": f"{plain.id}-{n}", "steps": (
        step(tool="write_text_file", args={"path": "out.txt", "content": "DIE" if n in (2, 3) else "x"}),)})
        for n in range(6)]
    assert all(len(span) == 1 for span in division.chunks(6, 2))
    target = ScriptedTarget({"write_text_file": _dies_a_moment_after_it_begins}, profiles=(PROFILE,))
    seen: list[str] = []

    def slow_first(index: int, result: Any) -> None:
        if not seen:
            time.sleep(1.0)
        seen.append(result.id)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=slow_first)
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    for n in (2, 3):
        assert run.results[n].verdict is Verdict.ERROR and "exit code 9" in run.results[n].reason
    assert [r.verdict for r in run.results[:2]] == [Verdict.PASS, Verdict.PASS], [r.reason for r in run.results]


def _killed_on_marker(workspace: Path, args: dict[str, Any]) -> CallResult:
    (workspace / "kept.txt").write_text("what a killed worker leaves")
    if args.get("content") == "KILL":
        os.kill(os.getpid(), 9)  # the worker itself, as the kernel's out-of-memory killer would
    return CallResult(output={"ok": True})


def test_a_killed_worker_leaves_no_folder_behind(tmp_path: Path) -> None:
    # A worker killed outright cannot remove its workspaces' enclosure, its trash of finished
    # workspaces or its candidate's TMPDIR: the parent removes them, as the worker would have.
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    plain = [s for s in cat.scenarios if not s.requires][0]
    step = type(plain.calls[0])
    scenarios = [type(plain)(**{**plain.__dict__, "id": f"{plain.id}-{n}", "steps": (
        step(tool="write_text_file", args={"path": "out.txt", "content": "KILL" if n == 5 else "x"}),)})
        for n in range(8)]
    target = ScriptedTarget({"write_text_file": _killed_on_marker}, profiles=(PROFILE,))
    place = tmp_path / "workspaces"
    place.mkdir()
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, tmp=str(place))
    assert run.results[5].verdict is Verdict.ERROR and "exit code -9" in run.results[5].reason
    assert list(place.iterdir()) == [] and run.leftovers == []


def _numbered(count: int, content: Callable[[int], str]) -> list[Any]:
    """``count`` copies of a plain scenario, each writing ``content(n)``."""
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    plain = [s for s in cat.scenarios if not s.requires][0]
    step = type(plain.calls[0])
    return [type(plain)(**{**plain.__dict__, "id": f"{plain.id}-{n}", "steps": (
        step(tool="write_text_file", args={"path": "out.txt", "content": content(n)}),)}) for n in range(count)]


def _by_content(workspace: Path, args: dict[str, Any]) -> CallResult:
    """FAIL fails (FAIL-AFTER:<file> once the file exists), KILL kills the worker at once,
    LATE-KILL:<file> makes the file and kills it 0.5 s later, a number sleeps that long."""
    content = args.get("content", "")
    if content.startswith("FAIL"):
        marker, deadline = Path(content.partition(":")[2] or "."), time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        raise TargetError("fails")
    if content == "KILL" or content.startswith("LATE-KILL"):
        if content.startswith("LATE-KILL"):
            Path(content.partition(":")[2]).touch()
            time.sleep(0.5)
        os.kill(os.getpid(), 9)
    time.sleep(float(content or 0))
    return CallResult(output={"ok": True})


class _KilledWhileStopping(ScriptedTarget):
    def stop(self) -> None:
        os.kill(os.getpid(), 9)  # after its last result, before it removed its workspaces


def test_a_worker_killed_after_its_last_result_leaves_no_folder_behind(tmp_path: Path) -> None:
    place = tmp_path / "workspaces"
    place.mkdir()
    target = _KilledWhileStopping({"write_text_file": _by_content}, profiles=(PROFILE,))
    (run,) = workers.run([target], _numbered(6, lambda n: "0"), jobs=2, record_states=False, tmp=str(place))
    assert [r.verdict for r in run.results] == [Verdict.PASS] * 6
    assert list(place.iterdir()) == [] and run.leftovers == []


def test_with_x_a_scenario_whose_worker_is_killed_after_the_stop_is_an_error_not_left_out(tmp_path: Path) -> None:
    # Scenario 0 fails once scenario 1 has begun: the run stops. Scenario 1's worker is killed after.
    failed: list[str] = []
    begun = tmp_path / "1-begun"
    target = ScriptedTarget({"write_text_file": _by_content}, profiles=(PROFILE,))
    contents = (f"FAIL-AFTER:{begun}", f"LATE-KILL:{begun}", "0", "0")
    (run,) = workers.run([target], _numbered(4, lambda n: contents[n]), jobs=2,
                         record_states=False, on_result=lambda i, r: r.verdict is Verdict.PASS or failed.append(r.id),
                         stop=lambda: bool(failed))
    verdicts = {r.id[-1]: (r.verdict, r.reason) for r in run.results}
    assert verdicts["1"][0] is Verdict.ERROR and "exit code -9" in verdicts["1"][1], verdicts


def _within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Waits until ``condition()`` holds, at most ``seconds``; returns whether it does."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def _stop_byte(monkeypatch) -> list[Any]:
    """Records the byte the pool shares with its workers to tell them to stop (``-x``): made before
    the fork, so a scenario running in a worker sees the parent set it."""
    made: list[Any] = []

    def recording(fileno: int, length: int) -> Any:
        shared = mmap.mmap(fileno, length)
        if length == 1:
            made.append(shared)
        return shared
    monkeypatch.setattr(workers, "mmap", types.SimpleNamespace(mmap=recording))
    return made


def test_with_x_a_worker_killed_by_its_scenario_stops_the_run_at_once(tmp_path: Path, monkeypatch) -> None:
    # Scenario 0 kills its worker once scenario 1 has begun in the other worker: an error, so the run
    # stops. Nothing else tells the other worker (the dead one sends no message, and it sends none
    # itself until scenario 1 ends): the stop must reach it while scenario 1 runs, which waits for it
    # (20 s at most), so that it does not begin the chunk it holds.
    stop_byte, begun = _stop_byte(monkeypatch), tmp_path / "1-begun"

    def answer(workspace: Path, args: dict[str, Any]) -> CallResult:
        if args["content"] == "KILL":
            _within(20, begun.exists)
            os.kill(os.getpid(), 9)
        begun.touch()
        return CallResult(output={"stopped": _within(20, lambda: stop_byte[0][0] == 1)})
    failed: list[str] = []
    target = ScriptedTarget({"write_text_file": answer}, profiles=(PROFILE,))
    assert [list(span) for span in division.chunks(6, 2)] == [[n] for n in range(6)]
    (run,) = workers.run([target], _numbered(6, lambda n: "KILL" if n == 0 else "x"), jobs=2,
                         record_states=False, on_result=lambda i, r: r.verdict is Verdict.PASS or failed.append(r.id),
                         stop=lambda: bool(failed))
    assert len(stop_byte) == 1
    assert [r.id[-1] for r in run.results] == ["0", "1"], [(r.id, r.verdict, r.reason) for r in run.results]
    assert "exit code -9" in run.results[0].reason
    assert run.results[1].steps[0].output == {"stopped": True}, "the stop waited for a message from a worker"


def _waits_for_marker_file(workspace: Path, args: dict[str, Any]) -> CallResult:
    """Answers at once, except for a call naming a file to wait for (at most 5 s): it says whether it appeared."""
    wait_for = args.get("content", "")
    if wait_for.startswith("WAIT:"):
        marker, deadline = Path(wait_for[5:]), time.monotonic() + 5
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return CallResult(output={"appeared": marker.exists()})
    return CallResult(output={"ok": True})


def test_a_result_held_long_enough_reaches_the_parent_before_its_chunk_ends(tmp_path: Path, monkeypatch) -> None:
    # Results travel with the request for the next chunk, but one held FLUSH_AFTER goes at once: the
    # second scenario of the first chunk waits until the parent has seen the first one's result.
    monkeypatch.setattr(workers, "FLUSH_AFTER", 0.0)
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:40]
    assert division.chunks(len(scenarios), 2)[0] == range(0, 5)  # scenarios 0 and 1 in one chunk
    marker = tmp_path / "first-seen"
    second = scenarios[1]
    args = {"path": "out.txt", "content": f"WAIT:{marker}"}
    scenarios[1] = type(second)(**{**second.__dict__, "steps": (type(second.calls[0])(tool="write_text_file", args=args),)})
    target = ScriptedTarget({"write_text_file": _waits_for_marker_file}, profiles=(PROFILE,))

    def seen(index: int, result: Any) -> None:
        if result.id == scenarios[0].id:
            marker.touch()
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=seen)
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    assert run.results[1].steps[0].output == {"appeared": True}


def _children() -> set[str] | None:
    """Returns the process ids of this process's children (zombies included), or None where Linux does not list them."""
    found: set[str] = set()
    try:
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that has ended meanwhile
                found.update((task / "children").read_text().split())
    except OSError:
        return None
    return found


def test_every_worker_process_is_reaped_when_the_run_returns() -> None:
    before = _children()
    if before is None:
        pytest.skip("/proc/<pid>/task/<tid>/children is not available here")
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:12]
    target = ScriptedTarget({"write_text_file": lambda workspace, args: CallResult(output={"ok": True})},
                            profiles=(PROFILE,))
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    assert len(run.results) == len(scenarios)
    assert _children() == before  # no worker left running, nor as a zombie


def test_chunks_cover_every_scenario_once() -> None:
    for count, jobs in ((0, 2), (1, 4), (7, 2), (319, 2), (319, 8)):
        spans = division.chunks(count, jobs)
        assert [i for span in spans for i in span] == list(range(count))


def test_chunks_shrink_toward_the_end_so_the_workers_finish_together() -> None:
    for count, jobs in ((332, 2), (3320, 2), (319, 8)):
        spans = division.chunks(count, jobs)
        assert max(len(span) for span in spans) <= division.MAX_CHUNK
        for span in spans:  # none more than a (2 * jobs)-th of what is left, rounded up
            left = count - span.start
            assert len(span) <= max(1, -(-left // (2 * jobs)))
        assert len(spans[-1]) == 1


def test_several_targets_run_in_one_invocation_and_one_failing_fails_the_run(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "scenarios" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(
        "id: claude-code/write/several-targets\nprofile: claude-code\ntitle: a plain write\n"
        "source: 001-claude-code-read-write-edit.md §Write\n"
        "steps:\n  - tool: Write\n    args: {file_path: '${workspace}/MISBEHAVE.txt', content: 'x'}\n"
        "then:\n  files: {MISBEHAVE.txt: 'x'}\n", "utf-8")
    folder = tmp_path / "reports"
    folder.mkdir()
    combined = tmp_path / "all.json"
    base = ["run", "--no-builtin", "--scenarios", str(scenario.parent), "--no-snapshots",
            "--target", "reference", "--target", CRASHING_CMD]
    assert main([*base, "--json", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "targets" in out and "misbehaving" in out
    assert sorted(p.name for p in folder.iterdir()) == ["cmd-misbehaving.json", "reference.json"]
    assert json.loads((folder / "reference.json").read_text())["summary"]["pass"] == 1
    assert json.loads((folder / "cmd-misbehaving.json").read_text())["summary"]["error"] == 1

    assert main([*base, "--json", str(combined), "--jobs", "2"]) == 1
    runs = json.loads(combined.read_text())["runs"]
    assert [r["target"]["spec"] for r in runs] == ["reference", CRASHING_CMD]
    assert [r["summary"]["pass"] for r in runs] == [1, 0]
    assert main(["report", "-q", str(combined), "--no-builtin", "--scenarios", str(scenario.parent)]) == 0
    lines = capsys.readouterr().out
    assert "reference: 1 pass" in lines and "1 error" in lines


@pytest.mark.parametrize("options, message", [(["--jobs", "0"], "--jobs 0"), (["--tmp", "/no/such/dir"], "--tmp")])
def test_bad_run_options_are_bad_usage(options: list[str], message: str, capsys) -> None:
    assert main(["run", "--profile", PROFILE, *options]) == 2
    assert message in capsys.readouterr().out


def test_tmp_holds_the_workspaces(tmp_path: Path) -> None:
    seen: list[Path] = []

    def record(workspace: Path, args: dict[str, Any]) -> CallResult:
        seen.append(workspace)
        return CallResult(output={"ok": True})

    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    target = ScriptedTarget({"write_text_file": record}, profiles=(PROFILE,))
    workers.run([target], [s for s in cat.scenarios if not s.requires][:2], jobs=1, tmp=str(tmp_path))
    assert seen and all(tmp_path in p.parents for p in seen)


def test_shards_split_the_catalog_once_and_harness_report_merges_them(tmp_path: Path, capsys) -> None:
    parts = [tmp_path / f"shard-{k}.json" for k in (1, 2, 3)]
    for k, part in enumerate(parts, 1):
        assert main(["run", "-q", "--profile", PROFILE, "--no-snapshots", "--shard", f"{k}/3", "--json", str(part)]) == 0
    ids = [[r["id"] for r in json.loads(p.read_text())["results"]] for p in parts]
    everything = [s.id for s in catalog.load([catalog.builtin_dir() / PROFILE]).scenarios]
    assert sorted(sum(ids, [])) == sorted(everything) and all(ids)  # each scenario in exactly one part
    capsys.readouterr()
    assert main(["report", "-q", "--profile", PROFILE, *map(str, parts)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reference: ")  # one column, as if one run
    whole = json.loads(json.dumps(_run(tmp_path, "whole", "--jobs", "1")[1]))
    counts = whole["summary"]
    assert lines[0] == "reference: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def test_a_shard_is_stable_and_a_bad_shard_is_bad_usage(capsys) -> None:
    from harness.run.options import parse_shard, shard_of
    assert [shard_of("claude-code/edit/x", 4) for _ in range(3)] == [shard_of("claude-code/edit/x", 4)] * 3
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)
    assert main(["run", "--shard", "3/2"]) == 2


def test_the_parent_imports_what_every_in_process_worker_would_import_before_forking() -> None:
    # Each worker would otherwise import the reference's modules (and pyfakefs, for the faults) again.
    import subprocess
    code = (
        "import sys\n"
        "from harness.scenario import catalog\n"
        "from harness.targets.reference import ReferenceTarget\n"
        # Its disk with 1000 bytes free is on pyfakefs (harness/targets/faults.py).
        "scenarios = catalog.load([catalog.builtin_dir() / 'aptix-tul-004']).scenarios\n"
        "names = ('reference_impl.aptix_tul_004', 'pyfakefs.fake_filesystem_unittest', 'reference_impl.claude_code')\n"
        "print([name in sys.modules for name in names])\n"
        "ReferenceTarget('reference').before_workers(scenarios)\n"
        "print([name in sys.modules for name in names])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split("\n")[:2] == ["[False, False, False]", "[True, True, False]"]


def _answers_with_its_process(workspace: Path, args: dict[str, Any]) -> CallResult:
    """Answers with the id of the process that ran the call, after ``content`` seconds if a number
    (FAIL: fails; DIE: a worker process, not the test's own, exits 9 at once)."""
    content = args.get("content", "")
    if content == "FAIL":
        raise TargetError("scenario fails")
    if content == "DIE" and os.getpid() != _TEST_PROCESS:
        os._exit(9)
    with contextlib.suppress(ValueError):
        time.sleep(float(content))
    return CallResult(output={"pid": os.getpid()})


_TEST_PROCESS = os.getpid()


def _pids(run: Any) -> list[int]:
    return [step.output["pid"] for result in run.results for step in result.steps if isinstance(step.output, dict)]


def _died_first_and_the_rest_ran_here(run: Any, scenarios: list[Any]) -> None:
    """The results of a run whose worker died on scenario 0: in order, that one an error naming
    the exit code 9, every other passed, in this process."""
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    assert run.results[0].verdict is Verdict.ERROR and "exit code 9" in run.results[0].reason
    assert all(r.verdict is Verdict.PASS for r in run.results[1:]), [(r.id, r.reason) for r in run.results]
    assert set(_pids(run)) == {os.getpid()}


def test_a_run_of_targets_in_this_process_runs_chunks_here_and_forks_one_worker_fewer() -> None:
    # --jobs 2 on a target in this process: this process and one worker share the chunks; the
    # results are the serial run's, in its order, each judged as there.
    scenarios = _numbered(40, lambda n: "0.005")
    target = ScriptedTarget({"write_text_file": _answers_with_its_process}, profiles=(PROFILE,), in_process=True)
    serial = workers.run([target], scenarios, jobs=1, record_states=False)[0].results
    seen: list[str] = []
    emitted: list[str] = []
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False,
                         on_result=lambda index, result: seen.append(result.id),
                         emit=lambda done, result: emitted.append(result.id))
    assert [r.id for r in run.results] == emitted == [s.id for s in scenarios]
    assert sorted(seen) == sorted(emitted)
    assert [(r.verdict, r.observed_aspects) for r in run.results] == [(r.verdict, r.observed_aspects) for r in serial]
    pids = set(_pids(run))
    assert len(pids) == 2 and os.getpid() in pids, pids  # here and one worker, no second
    assert run.info.name == "scripted"


def test_this_process_runs_the_chunks_of_several_targets_in_this_process() -> None:
    scenarios = _numbered(24, lambda n: "0.002")
    targets = [ScriptedTarget({"write_text_file": _answers_with_its_process}, profiles=(PROFILE,), in_process=True)
               for _ in range(2)]
    runs = workers.run(targets, scenarios, jobs=2, record_states=False)
    assert [run.target for run in runs] == targets
    for run in runs:
        assert [r.id for r in run.results] == [s.id for s in scenarios]
        assert all(r.verdict is Verdict.PASS for r in run.results)
        assert run.info.name == "scripted"
    assert os.getpid() in {pid for run in runs for pid in _pids(run)}


def test_the_scenarios_on_pyfakefs_run_in_one_worker_and_nothing_sets_it_up_before_the_fork(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.run import assemble
    from harness.targets import faults
    # Its full-disk scenarios have bytes free: pyfakefs on every machine.
    scenarios = catalog.load([catalog.builtin_dir() / "aptix-tul-004"]).scenarios
    fake = [s.id for s in scenarios if faults.on_pyfakefs(s.requires, s.given)]
    assert fake and len(fake) < len(scenarios)
    log = tmp_path / "set-up"
    real = faults.fake_filesystem

    @contextlib.contextmanager
    def noted() -> Any:
        with log.open("a") as out:  # before the fake file system is up: on the real one
            out.write(f"{os.getpid()}\n")
        with real() as fs:
            yield fs
    monkeypatch.setattr(faults, "fake_filesystem", noted)
    monkeypatch.setattr(faults, "_held", None)
    serial = workers.run([assemble.target("reference")], scenarios, jobs=1, record_states=False)[0].results
    log.unlink()
    ready: list[int] = []
    monkeypatch.setattr(faults, "ready", lambda: ready.append(os.getpid()))
    (run,) = workers.run([assemble.target("reference")], scenarios, jobs=2, record_states=False)
    assert [(r.id, r.verdict, r.observed_aspects) for r in run.results] == \
        [(r.id, r.verdict, r.observed_aspects) for r in serial]
    noted = log.read_text().split()
    assert len(noted) == len(fake) and len(set(noted)) == 1 and noted[0] != str(os.getpid())  # one worker's
    assert ready == []  # nothing set up before the fork


def test_the_chunks_kept_for_a_worker_that_died_run_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first worker is given the scenarios on pyfakefs; it dies on the first: the others run here.
    from harness.targets import faults
    marker = tmp_path / "died"
    scenarios = _numbered(24, lambda n: "0.002")
    kept = {0, 5, 6, 17}
    monkeypatch.setattr(faults, "on_pyfakefs", lambda requires, given=None: False)
    real = workers._Pool.__init__

    def with_kept(self: Any, targets: Any, scenarios: Any, *args: Any, **kwargs: Any) -> None:
        real(self, targets, scenarios, *args, **kwargs)
        self.reserved = [(0, span) for span in division.runs(sorted(kept))]
        self.tasks = [(0, part) for span in division.chunks(len(scenarios), self.jobs)
                      for part in division.without(span, sorted(kept))]

    def answer(workspace: Path, args: dict[str, Any]) -> CallResult:
        if os.getpid() != _TEST_PROCESS and not marker.exists():
            marker.touch()
            os._exit(9)
        return _answers_with_its_process(workspace, args)
    monkeypatch.setattr(workers._Pool, "__init__", with_kept)
    target = ScriptedTarget({"write_text_file": answer}, profiles=(PROFILE,), in_process=True)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    _died_first_and_the_rest_ran_here(run, scenarios)


def test_a_scenario_that_lays_out_a_megabyte_runs_in_the_first_worker() -> None:
    plain = _numbered(24, lambda n: "0.002")
    big = {"files": {"big.txt": {"lines": {"count": 150_000, "template": "line {n}"}}}}
    assert division.heavy(big) and not division.heavy({"files": {"a.txt": {"lines": 10}}}) and not division.heavy(None)
    scenarios = [type(s)(**{**s.__dict__, "given": big}) if n in (3, 17) else s for n, s in enumerate(plain)]
    target = ScriptedTarget({"write_text_file": _answers_with_its_process}, profiles=(PROFILE,), in_process=True)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    assert [r.id for r in run.results] == [s.id for s in scenarios]
    assert all(r.verdict is Verdict.PASS for r in run.results), [(r.id, r.reason) for r in run.results]
    pids = [result.steps[0].output["pid"] for result in run.results]
    assert pids[3] == pids[17] != os.getpid()


def test_a_target_with_a_process_of_its_own_still_gets_a_worker_per_job() -> None:
    scenarios = _numbered(40, lambda n: "0.005")
    target = ScriptedTarget({"write_text_file": _answers_with_its_process}, profiles=(PROFILE,))
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    pids = set(_pids(run))
    assert len(pids) == 2 and os.getpid() not in pids, pids


def test_the_chunks_of_a_worker_that_died_are_run_here() -> None:
    # The worker takes the first chunk at its fork and dies on its first scenario: what it held
    # (that chunk's rest, and the chunk it had asked for) runs in this process, with no new worker.
    scenarios = _numbered(24, lambda n: "DIE" if n == 0 else "0.002")
    target = ScriptedTarget({"write_text_file": _answers_with_its_process}, profiles=(PROFILE,), in_process=True)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    _died_first_and_the_rest_ran_here(run, scenarios)


def test_a_stop_ends_the_chunk_this_process_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    # run -x: scenario 0 fails in the worker (its first chunk; its result sent at once); this
    # process, running its own chunk of slow scenarios meanwhile, begins none once the stop is decided.
    monkeypatch.setattr(workers, "FLUSH_AFTER", 0.0)
    scenarios = _numbered(64, lambda n: "FAIL" if n == 0 else "0.05")
    assert len(division.chunks(64, 2)[0]) == 8
    begun_here: list[float] = []
    answer = _answers_with_its_process

    def timed(workspace: Path, args: dict[str, Any]) -> CallResult:
        if os.getpid() == _TEST_PROCESS:
            begun_here.append(time.monotonic())
        return answer(workspace, args)
    target = ScriptedTarget({"write_text_file": timed}, profiles=(PROFILE,), in_process=True)
    failed: list[str] = []
    decided: list[float] = []

    def seen(index: int, result: Any) -> None:
        if result.verdict is not Verdict.PASS:
            failed.append(result.id)

    def stop() -> bool:
        if failed and not decided:
            decided.append(time.monotonic())
        return bool(failed)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, on_result=seen, stop=stop)
    assert run.results[0].id == scenarios[0].id and run.results[0].verdict is Verdict.ERROR
    assert decided and begun_here and all(at < decided[0] for at in begun_here), (begun_here, decided)
    assert len(run.results) < 32, [r.id for r in run.results]


def _catalog_reference_scenarios() -> list:
    return catalog.load([catalog.builtin_dir()]).scenarios


def test_the_default_jobs_keep_a_small_run_or_a_busy_machine_serial() -> None:
    from harness.run import assemble
    scenarios = _catalog_reference_scenarios()
    reference = assemble.target("reference")
    # The whole catalog on the reference: a worker's copy-on-write and start cost less than a tenth
    # of the run's own processor time (docs/performance.md), so one is forked; a tenth of it stays here.
    assert division.auto_jobs([reference], scenarios, cores=2, load=0.0) == 2
    assert division.auto_jobs([reference], scenarios[:len(scenarios) // 10], cores=2, load=0.0) == 1
    assert division.auto_jobs([reference], scenarios[:20], cores=8, load=0.0) == 1
    # Twenty times the work pays for a second worker, and more cores for more workers...
    assert division.auto_jobs([reference], scenarios * 20, cores=2, load=0.0) == 2
    assert division.auto_jobs([reference], scenarios * 20, cores=8, load=0.0) > 2
    # ...but not on cores the load average says are busy.
    assert division.auto_jobs([reference], scenarios * 20, cores=2, load=1.5) == 1
    assert division.auto_jobs([reference], scenarios * 20, cores=8, load=7.2) == 1
    # Skipped scenarios (a profile the target does not offer) are no work.
    only = ScriptedTarget(profiles=("no-such-profile",), in_process=True)
    assert division.auto_jobs([only], scenarios * 20, cores=2, load=0.0) == 1


def test_the_default_jobs_count_a_fault_the_kernel_realises_as_a_plain_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.run import assemble
    from harness.targets import faults
    reference = assemble.target("reference")
    permissions = [s for s in _catalog_reference_scenarios() if list(s.requires) == ["permissions"]]
    assert permissions
    many = permissions * (400 // len(permissions))  # ~3 s on pyfakefs, ~0.3 s on the real file system
    monkeypatch.setattr(faults, "_real", frozenset())
    assert division.auto_jobs([reference], many, cores=2, load=0.0) == 2
    monkeypatch.setattr(faults, "_real", frozenset({"permissions"}))
    assert division.auto_jobs([reference], many, cores=2, load=0.0) == 1


def test_the_default_jobs_give_a_live_agent_every_idle_core() -> None:
    agent = ScriptedTarget()  # neither in this process nor cmd:/mcp:: its calls are mostly waiting
    scenarios = _catalog_reference_scenarios()[:3]
    assert division.auto_jobs([agent], scenarios, cores=4, load=1.2) == 3
    assert division.auto_jobs([agent], scenarios, cores=4, load=0.0) == 4


def _jobs_run_with(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the ``jobs`` each ``workers.run`` of the test is given (and runs it)."""
    forked: list[int] = []
    real = workers.run

    def run(*args: Any, jobs: int = 1, **kwargs: Any) -> Any:
        forked.append(jobs)
        return real(*args, jobs=jobs, **kwargs)
    monkeypatch.setattr(workers, "run", run)
    return forked


def test_harness_run_without_jobs_runs_a_small_selection_in_its_own_process(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    forked = _jobs_run_with(monkeypatch)
    code = main(["run", "-q", "--profile", PROFILE, "-k", "tc1", "--no-snapshots"])
    assert code == 0 and forked == [1]


@pytest.mark.parametrize("given, chosen", [((), 2), (("--jobs", "1"), 1), (("--jobs", "3"), 3)])
def test_harness_run_takes_the_jobs_the_run_s_work_chooses_unless_given(monkeypatch: pytest.MonkeyPatch,
                                                                        given: tuple[str, ...], chosen: int) -> None:
    asked: list[int] = []
    forked = _jobs_run_with(monkeypatch)
    monkeypatch.setattr(division, "auto_jobs", lambda targets, scenarios: asked.append(len(scenarios)) or 2)
    code = main(["run", "-q", "--profile", PROFILE, "-k", "tc1", "--no-snapshots", *given])
    assert code == 0 and forked == [chosen]
    assert len(asked) == (0 if given else 1)  # the selected scenarios' work, asked once


def test_the_parent_takes_each_result_s_aspects_as_the_worker_judged_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reports apply the aspects again (to narrow by --aspects): in the parent of a --jobs run
    that judged every result again, with none of the scenarios' expected aspects worked out there."""
    from harness.scenario import aspects
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:10]
    target = ScriptedTarget({"write_text_file": lambda workspace, args: CallResult(output={"ok": True})},
                            profiles=(PROFILE,))
    serial = workers.run([target], scenarios, jobs=1, record_states=False)[0].results
    judged: list[str] = []  # appended to in this process only: a worker's calls stay in its own memory
    real_judge = aspects.judge
    monkeypatch.setattr(aspects, "judge", lambda result, *rest: judged.append(result.id) or real_judge(result, *rest))
    emitted = []

    def emit(run: Any, result: Any) -> None:
        emitted.append(aspects.apply(result))  # as the reports do (harness/report/stream.py)
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False, emit=emit)
    assert judged == []
    assert [r.observed_aspects for r in emitted] == [r.observed_aspects for r in serial]
    assert [r.aspects for r in run.results] == [r.aspects for r in serial]
    assert any(r.observed_aspects and "pass" in r.observed_aspects.values() for r in emitted)


def test_what_is_alive_when_the_workers_are_forked_is_frozen_in_them(nothing_frozen: None) -> None:
    """A worker's garbage collections never walk (and so copy the pages of) what it inherited."""
    import gc
    inherited = [["made before the run"]]  # a container the collector tracks, in a young generation now
    assert any(o is inherited for generation in range(3) for o in gc.get_objects(generation))

    def looked(workspace: Path, args: dict[str, Any]) -> CallResult:
        walked = any(o is inherited for generation in range(3) for o in gc.get_objects(generation))
        return CallResult(output={"walked": walked, "worker": os.getpid() != parent})
    parent = os.getpid()
    cat = catalog.load([catalog.builtin_dir() / PROFILE])
    scenarios = [s for s in cat.scenarios if not s.requires][:4]
    target = ScriptedTarget({"write_text_file": looked}, profiles=(PROFILE,))
    (run,) = workers.run([target], scenarios, jobs=2, record_states=False)
    outputs = [step.output for result in run.results for step in result.steps if isinstance(step.output, dict)]
    assert outputs and all(output == {"walked": False, "worker": True} for output in outputs)
    assert gc.get_freeze_count() == 0  # what the run froze alone is given back


_TERMINAL_PROBE = """\
import sys
from harness.run import workers
real = workers.run
def run(*args, **kwargs):
    out = real(*args, **kwargs)
    sys.stderr.write("terminal-at-the-run-s-end %d\\n" % ("harness.report.terminal" in sys.modules))
    return out
workers.run = run
from harness.cli.main import entry
sys.exit(entry(sys.argv[1:]))
"""


@pytest.mark.parametrize("jobs, loaded", [("1", 0), ("2", 1)])
def test_a_run_of_several_processes_imports_the_terminal_report_while_they_run(jobs: str, loaded: int) -> None:
    # Serial, the report's modules (rich) wait for the end; with workers, this process's end is
    # the run's alone while the rest of its work is shared: they come with the first result.
    import subprocess
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", _TERMINAL_PROBE, "run", "-q", "--jobs", jobs, "--profile", PROFILE,
                           "--no-snapshots"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"terminal-at-the-run-s-end {loaded}" in done.stderr
