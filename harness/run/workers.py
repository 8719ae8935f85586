"""Runs scenarios on one or several targets, in this process or across worker processes.

With ``jobs`` 1 every target runs here, one after the other, as the runner always did. With more,
``jobs`` worker processes are forked once for the whole invocation, each given its first chunk of
scenarios at the fork; where every target is in this process (the reference), one fewer is forked
and this process runs chunks too, one scenario at a time between the workers' messages (a worker
forked costs the copy-on-write faults of the pages it shares with this process: about 50-75 ms of
processor time over a run of the catalog). A worker runs a chunk with its own :class:`Runner` (target after target, so
a worker holds one started target at most: one candidate process per worker for ``cmd:`` and
``mcp:``), and as it begins one it asks for the next, sending the previous chunk's results with
the request: one message, and one wake-up of the parent, per chunk, and the answer is there when
the chunk ends, so a worker never waits for the parent. Results that took :data:`FLUSH_AFTER` to
make are sent at once, so a slow scenario's result still reaches the reports as it finishes. The
parent hands out the next chunk before it passes the results on to the reports. The results are
put back in catalog order, so verdicts, reports and snapshots are those of a serial run; only the
timings differ. Once a run is to stop (``-x``), a byte shared with the workers tells them: none
begins another scenario, not even of a chunk it holds.

A worker that is killed (out of memory, by its candidate) turns the scenario it was running (a
slot shared with the parent says which) into an ``error`` verdict naming that; the rest of what it
held (not begun, or run with their results lost with it) goes to another worker (a new one if the
others were done), and its folder is removed by the parent. Before the
fork, each target does once what every worker would otherwise do (:meth:`Target.before_workers`).
Forking needs ``os.fork`` (Linux, macOS): elsewhere a run stays serial.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.containment.cleanup import remove_tree
from harness.run import assemble
from harness.run.division import chunks, heavy, runs, without
from harness.run.runner import Runner
from harness.scenario import matchers
from harness.scenario.model import Result, Scenario, Verdict
from harness.targets.base import Target, TargetInfo
from harness.util import collector, processes

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

#: Results that took this long (seconds) to make are sent without waiting for their chunk's end.
FLUSH_AFTER = 0.05
#: A result slot whose result the reports already took.
_EMITTED = object()
#: How long a finished worker gets to stop its candidate and exit before it is killed.
EXIT_GRACE = 15.0
#: A worker's slot: the target and position of the scenario it is running (-1, -1 between them).
_SLOT = struct.Struct("ii")


@dataclass
class TargetRun:
    """One target's part of a run: what it said about itself, its snapshot folder name, its results."""

    target: Target
    info: TargetInfo
    slug: str
    results: list[Result] = field(default_factory=list)
    seconds: float = 0.0
    start_error: str | None = None  # why the target did not start, in full (Runner.start_error)
    start_reason: str | None = None  # each scenario's short error then (Runner.start_reason)
    baseline: dict[str, Any] | None = None  # what --baseline made of this run (the JSON report's member)
    #: Workspaces that could not be removed (harness/containment/cleanup.py, Leftover): every report names them.
    leftovers: list[Any] = field(default_factory=list)

    @property
    def spec(self) -> str:
        """Returns the target's spec as given on the command line."""
        return self.target.spec


def run(targets: Sequence[Target], scenarios: Sequence[Scenario], *, jobs: int = 1, record_states: bool = True,
        tmp: str | None = None, on_result: Callable[[int, Result], None] | None = None,
        stop: Callable[[], bool] | None = None, emit: Callable[[TargetRun, Result], None] | None = None,
        keep: bool = True) -> list[TargetRun]:
    """Runs every scenario on every target; returns one TargetRun per target, results in catalog order.

    ``on_result(target_index, result)`` is called as each result arrives (in completion order).
    ``emit(target_run, result)`` is called in catalog order, target after target, as soon as every
    earlier result is in: what the reports write as the run goes (harness/report/stream.py). With
    ``keep`` false no result is kept once emitted (each TargetRun's ``results`` stays empty), so
    what a run holds does not grow with the catalog. Once ``stop()`` is true (``run -x`` after a
    failure) no further scenario starts; what did not run is left out of the results.
    """
    jobs = max(1, min(jobs, len(scenarios) * len(targets) or 1))
    if jobs == 1 or not hasattr(os, "fork"):
        return [_run_here(index, target, scenarios, record_states, tmp, on_result, stop, emit, keep)
                for index, target in enumerate(targets)]
    return _Pool(targets, scenarios, jobs, record_states, tmp, on_result, stop, emit, keep).run()


def _run_here(index: int, target: Target, scenarios: Sequence[Scenario], record_states: bool, tmp: str | None,
              on_result: Callable[[int, Result], None] | None, stop: Callable[[], bool] | None = None,
              emit: Callable[[TargetRun, Result], None] | None = None, keep: bool = True) -> TargetRun:
    started = time.perf_counter()
    # As before forking workers (a no-op in a forked one): an in-process target's modules imported
    # now, not by the first scenario of each profile, so the fake file system the fault scenarios
    # share is set up once, not again after each such import (harness/targets/faults.py).
    target.before_workers(scenarios, forking=False)
    with assemble.runner(target, record_states=record_states, tmp=tmp, say_leftovers=False) as runner:
        # The with started it: start() returns what it said about itself, starting nothing again.
        done = TargetRun(target, runner.start(), target.slug, [], 0.0, runner.start_error, runner.start_reason)

        def each(result: Result) -> None:
            if on_result:
                on_result(index, result)
            if emit:
                emit(done, result)
        done.results = runner.run_all(scenarios, on_result=each, stop=stop, keep=keep)
    done.seconds = time.perf_counter() - started
    done.leftovers = runner.leftovers
    return done


# -- the worker side ----------------------------------------------------------------------------


def _payload(result: Result) -> tuple[Any, ...]:
    """Returns a result without its scenario (the parent has it): what crosses the pipe. Its aspects
    as judged in full go with it, so the parent does not judge them again (harness/scenario/aspects.py
    ``apply``)."""
    return (result.verdict, result.reason, result.steps, result.then_failures, result.workspace, result.seconds,
            result.flaky, result.observed_aspects)


def _worker(conn: Any, targets: Sequence[Target], scenarios: Sequence[Scenario], record_states: bool,
            tmp: str | None, parent_ends: Sequence[Any], halt: Any, first: tuple[int, range] | None,
            slot: Any) -> None:
    """A worker's life: ask for a chunk, run it, send its results; stop the target when moving on.

    The next chunk is asked for as soon as one arrives, before it runs, so that it is there when
    this one ends: the worker never waits for the parent to wake up, take its results and answer.
    ``halt`` (a byte shared with the parent) set means the run was asked to stop (``-x``): no
    further scenario starts, not even in a chunk already here. ``first`` is the first chunk, given
    at the fork (a worker does not wait for the parent, busy forking the next one, to answer).
    ``slot`` (8 bytes shared with the parent) holds the target and position of the scenario running,
    -1 between scenarios: if the worker is killed, the parent knows which one it was.

    ``parent_ends`` are the parent's ends of the pipes made so far (this worker's and the earlier
    ones'), which the fork copied: closed at once, so that the parent's closing its end is an end of
    input here (and for the other workers), whatever else happened to the parent.
    """
    for end in parent_ends:
        end.close()
    current: tuple[int, Runner] | None = None
    # Forked with the signals blocked (_Pool.run): from here a signal is raised only at a checkpoint,
    # between scenarios, never inside the worker's or the runner's own bookkeeping.
    processes.hold()
    # The results not sent yet (target index, [(position, payload)]): they go with the next request
    # for a chunk, or as soon as running them took FLUSH_AFTER (``since``: when the first began).
    held: tuple[int, list[tuple[int, tuple[Any, ...]]]] | None = None
    since = 0.0
    task = first
    try:
        while True:
            processes.checkpoint()
            if task is None or halt[0]:  # nothing left, or the run stops (-x)
                break
            batch, held = held, None
            conn.send(("ready", batch))  # the next chunk, asked for now: it comes while this one runs
            index, span = task
            if current is None or current[0] != index:
                if current is not None:
                    _stop(conn, *current)
                runner = assemble.runner(targets[index], record_states=record_states, tmp=tmp, say_leftovers=False)
                current = (index, runner)
                info = runner.start()
                conn.send(("info", index, info, targets[index].slug, runner.start_error, runner.start_reason))
            for position in span:
                processes.checkpoint()
                if halt[0]:
                    break
                if held is None:
                    held, since = (index, []), time.perf_counter()
                _SLOT.pack_into(slot, 0, index, position)
                result = current[1].run(scenarios[position])
                _SLOT.pack_into(slot, 0, -1, -1)
                held[1].append((position, _payload(result)))
                if time.perf_counter() - since >= FLUSH_AFTER:
                    batch, held = held, None
                    conn.send(("results", batch))
            task = conn.recv()  # the answer to the request sent before this chunk ran
    except (EOFError, OSError, KeyboardInterrupt):
        # The parent went away (an end of input, or a reset when it closed with a message of ours
        # unread) or the run was interrupted: stop the candidate below.
        pass
    finally:
        processes.shield()  # a SIGTERM now (the run is being ended) must not cut the clean-up short
        if held is not None:  # what ran since the last request reaches the parent, if it listens
            with contextlib.suppress(OSError, ValueError):
                conn.send(("results", held))
        if current is not None:
            _stop(conn, *current)
        conn.close()


def _stop(conn: Any, index: int, runner: Runner) -> None:
    """Stops a worker's runner and sends the parent the workspaces it could not remove (its reports name them)."""
    runner.stop()
    if runner.leftovers:
        try:
            conn.send(("leftovers", index, runner.leftovers))
        except (OSError, ValueError):  # the parent went away: nothing left to tell
            pass


# -- the parent side ----------------------------------------------------------------------------


@dataclass
class _Worker:
    """The parent's view of one worker process."""

    process: Any
    folder: str  # where everything it makes is (harness-worker-*)
    slot: Any  # shared: the (target, position) it is running, -1 between scenarios
    running: tuple[int, range] | None  # the chunk it began last
    asked: tuple[int, range] | None  # the chunk sent for its next request, not begun
    told: bool  # answered "nothing more": it is ending
    index: int  # the target it runs (whose reports name what its folder keeps)

    def begun(self) -> None:
        """Its request says it began the chunk it asked for before."""
        if self.asked is not None:
            self.running, self.index = self.asked, self.asked[0]
        self.asked = None

    def running_now(self) -> tuple[int, int] | None:
        """Returns the (target, position) of the scenario it is running, or None between scenarios."""
        index, position = _SLOT.unpack_from(self.slot, 0)
        return (index, position) if position >= 0 else None


class _Pool:
    """The parent's side: hands out chunks, collects results, notices dead workers."""

    def __init__(self, targets: Sequence[Target], scenarios: Sequence[Scenario], jobs: int, record_states: bool,
                 tmp: str | None, on_result: Callable[[int, Result], None] | None,
                 stop: Callable[[], bool] | None = None, emit: Callable[[TargetRun, Result], None] | None = None,
                 keep: bool = True) -> None:
        self.targets, self.scenarios, self.jobs = targets, scenarios, jobs
        self.stop = stop
        self.record_states, self.tmp, self.on_result = record_states, tmp, on_result
        self.emit, self.keep = emit, keep
        # Targets in this process only: this process runs chunks too, between the workers' messages
        # (one worker fewer is forked, and with it the copy-on-write faults of its pages), and the
        # scenarios on pyfakefs are kept for the first worker, its first chunks: one process imports
        # pyfakefs and sets up the fake file system (some 50 ms, in which this process, running a
        # scenario, would answer no worker), none before the fork (the workers begin at once). So
        # are those that lay out a megabyte or more (25-30 ms each on the reference).
        self.here: _Here | None = None
        kept: list[int] = []
        if all(target.in_process for target in targets):
            from harness.targets.faults import on_pyfakefs
            kept = [position for position, scenario in enumerate(scenarios)
                    if on_pyfakefs(scenario.requires, scenario.given) or heavy(scenario.given)]
            self.here = _Here(self)
        #: The first worker's own chunks (the scenarios kept above), handed to it before any other;
        #: to the queue if it dies.
        self.reserved = [(index, span) for index in range(len(targets)) for span in runs(kept)]
        self.owner: Any = None  # the parent's end of that worker's pipe
        self.tasks = [(index, part) for index in range(len(targets)) for span in chunks(len(scenarios), jobs)
                      for part in without(span, kept)]
        # What every worker runs, for what each would otherwise do on its own (Target.before_workers):
        # the first worker's own set-up of pyfakefs is left to it.
        left = set(kept)
        self.forked_scenarios = [scenario for position, scenario in enumerate(scenarios) if position not in left]
        # Each slot: None until its result arrives, the result until it is emitted, then _EMITTED.
        # Only results that arrived ahead of an earlier one wait here: behind a slow scenario, every
        # chunk handed out after it (of this target and the next) waits until it is done.
        self.results: list[list[Any]] = [[None] * len(scenarios) for _ in targets]
        self.cursor = (0, 0)  # the next (target, position) to emit
        self.runs: list[TargetRun | None] = [None] * len(targets)
        self.infos: list[tuple[TargetInfo, str, str | None, str | None] | None] = [None] * len(targets)
        self.first: list[float | None] = [None] * len(targets)
        self.last: list[float] = [0.0] * len(targets)
        self.leftovers: list[list[Any]] = [[] for _ in targets]
        self.folders: list[str] = []  # the workers' folders not removed yet

    def run(self) -> list[TargetRun]:
        import multiprocessing
        context = multiprocessing.get_context("fork")  # workers inherit the loaded catalog and targets
        queue = list(reversed(self.tasks))
        # Set once the run is to stop (-x): the workers start no further scenario, even of a chunk they hold.
        self.halt = mmap.mmap(-1, 1)
        # New workers for work whose worker was killed: bounded, as a candidate may kill every one.
        spare = len(self.tasks) + self.jobs
        for target in self.targets:  # what each worker would otherwise do on its own: done once, shared
            target.before_workers(self.forked_scenarios)
        matchers.load_engine()  # (so is the $regex engine's import)
        with collector.frozen(added=True):  # what is alive now: out of the workers' and this process's walks
            return self._run(context, queue, spare)

    def _run(self, context: Any, queue: list[tuple[int, range]], spare: int) -> list[TargetRun]:
        from multiprocessing.connection import wait
        workers: dict[Connection[Any, Any], _Worker] = {}  # by the parent's end of its pipe
        ended: list[_Worker] = []  # workers whose pipe closed: joined at the end, all exiting at once

        def fork(first: tuple[int, range] | None) -> Any:
            # Everything the worker makes (its workspaces' enclosure and trash, the candidate's
            # TMPDIR) goes into a folder of its own, made here: a worker killed before it could
            # remove them leaves them where this process finds them (searchable by a candidate of
            # another user, --run-as; not listable).
            with processes.deferred():
                folder = tempfile.mkdtemp(prefix="harness-worker-", dir=self.tmp)
                self.folders.append(folder)
            os.chmod(folder, 0o711)
            slot = mmap.mmap(-1, _SLOT.size)
            _SLOT.pack_into(slot, 0, -1, -1)
            parent, child = context.Pipe()
            process = context.Process(target=_worker, name="harness-worker", daemon=True,
                                      args=(child, self.targets, self.scenarios, self.record_states, folder,
                                            (*workers, parent), self.halt, first, slot))
            with processes.blocked():  # the worker takes signals once it is ready for them (processes.hold)
                process.start()
                workers[parent] = _Worker(process, folder, slot, None, first, first is None,
                                          first[0] if first is not None else 0)
            child.close()
            self._handed(first)
            return parent

        here = self.here
        try:
            for _ in range(self.jobs - (here is not None)):  # inside the try: a signal while forking still ends those started
                if self.reserved and self.owner is None:
                    self.owner = fork(self.reserved.pop(0))
                else:
                    fork(queue.pop() if queue and not self._stopping() else None)
            while workers or (here is not None and here.has_work(queue)):
                busy = here is not None and here.has_work(queue)
                ready = (wait(list(workers), 0) if busy else wait(list(workers))) if workers else []
                for conn in [each for each in workers if each in ready]:  # as wait gives them: in this order
                    worker = workers[conn]
                    try:
                        message = conn.recv()
                    except (EOFError, OSError):
                        del workers[conn]
                        if conn is self.owner:  # its own chunks not handed yet: to whoever asks next
                            queue += reversed(self.reserved)
                            self.reserved = []
                        if self._gone(worker, queue):
                            ended.append(worker)
                        stopping = self._stopping()  # the error it left may stop the run (-x): at once
                        # Work given back and no worker left to ask for it: a new one takes it.
                        if queue and spare and not stopping and here is None and all(w.told for w in workers.values()):
                            spare -= 1
                            fork(queue.pop())
                        continue
                    if message[0] == "ready":
                        # The worker begins the chunk it was sent and asks for the next: that is sent
                        # before the results go to the reports (only what -x needs is done first).
                        stored = self._arrived(message[1])
                        worker.begun()
                        stopping = self._stopping()  # asked also when nothing is left: it ends held chunks
                        own = conn is self.owner and self.reserved and not stopping
                        task = self.reserved.pop(0) if own else queue.pop() if queue and not stopping else None
                        try:
                            conn.send(task)
                        except OSError:
                            # It died after asking (its request was still in the pipe): the end of
                            # input that follows says what became of its work.
                            if task is not None:
                                queue.append(task)
                        else:
                            worker.asked, worker.told = task, task is None
                            self._handed(task)
                        if stored:
                            self._emit_ready()
                    elif message[0] == "results":
                        if self._arrived(message[1]):
                            self._stopping()
                            self._emit_ready()
                    elif message[0] == "leftovers":
                        self.leftovers[message[1]] += message[2]
                    elif message[0] == "info":
                        _, index, info, slug, start_error, start_reason = message
                        self.infos[index] = self.infos[index] or (info, slug, start_error, start_reason)
                        self._emit_ready()  # a target's results wait for what it said about itself
                if busy and here is not None:
                    here.step(queue)
        finally:
            for conn in workers:
                conn.close()
            for worker in [*ended, *workers.values()]:
                worker.process.join(EXIT_GRACE)
                if worker.process.is_alive():
                    worker.process.kill()
                    worker.process.join()
                if worker.folder not in self.folders:
                    continue
                if worker.process.exitcode == 0:  # what it could not remove it named: kept, said as left
                    self.folders.remove(worker.folder)
                    with contextlib.suppress(OSError):
                        os.rmdir(worker.folder)
                else:  # killed (by something else, or here after EXIT_GRACE) before it could clean up
                    self._clear(worker.folder, worker.index)
            for folder in self.folders[:]:  # made for a worker a signal kept from starting: empty
                self.folders.remove(folder)
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            if here is not None:
                here.stop()
        self._emit_ready(final=True)
        return [self._target_run(index) for index in range(len(self.targets))]

    def _gone(self, worker: _Worker, queue: list[tuple[int, range]]) -> bool:
        """A worker's pipe closed: returns True if it ended by itself (it is exiting, or has); else it
        was killed holding work: the scenario it was running becomes an error naming its exit code,
        the rest of what it held (not begun, or run with their results lost) goes back to ``queue``
        unless the run stops, and its folder is removed."""
        running = worker.running_now()
        if running is None and not self._unfinished(worker.running) and not self._unfinished(worker.asked):
            return True
        worker.process.join(EXIT_GRACE)
        if worker.process.is_alive():  # its pipe closed, yet it lives on: it is ended here
            worker.process.kill()
            worker.process.join()
        code = worker.process.exitcode
        if code == 0:  # it ended itself (a stop, or interrupted with the run): what it skipped stays unrun
            return True
        if running is not None:
            index, position = running
            if self.results[index][position] is None:
                self._store(index, position, Result(self.scenarios[position], Verdict.ERROR,
                                                    f"the worker process running it died (exit code {code})"))
        if not self._stopping():
            for task in (worker.running, worker.asked):
                if task is not None:
                    queue += [(task[0], span) for span in self._left(task)]
        self._clear(worker.folder, worker.index)
        return False

    def _left(self, task: tuple[int, range]) -> list[range]:
        """Returns the runs of a task's positions whose results have not arrived."""
        index, span = task
        return runs([position for position in span if self.results[index][position] is None])

    def _clear(self, folder: str, index: int) -> None:
        """Removes the folder of a worker that died, with what it left; what cannot be removed is
        target ``index``'s leftover (every report names it)."""
        self.folders.remove(folder)
        left = remove_tree(folder)
        if left is not None:
            self.leftovers[index].append(left)

    def _handed(self, task: tuple[int, range] | None) -> None:
        """Notes when a target's first chunk was handed out (its run's duration begins there)."""
        if task is not None and self.first[task[0]] is None:
            self.first[task[0]] = time.perf_counter()

    def _stopping(self) -> bool:
        """Returns whether the run is to stop (``-x``); if so, tells the workers (``halt``)."""
        if not self.halt[0] and self.stop is not None and self.stop():
            self.halt[0] = 1
        return bool(self.halt[0])

    def _unfinished(self, task: tuple[int, range] | None) -> bool:
        """Returns whether a result of a task has not arrived."""
        return task is not None and any(self.results[task[0]][position] is None for position in task[1])

    def _arrived(self, batch: tuple[int, list[tuple[int, tuple[Any, ...]]]] | None) -> bool:
        """Takes a batch of results from a worker (``on_result`` for each, not emitted yet); returns
        whether it held any."""
        if not batch:
            return False
        index, results = batch
        for position, payload in results:
            found = Result(self.scenarios[position], *payload[:6])
            found.flaky = bool(payload[6])  # --repeat: the verdict or observation varied
            if payload[7] is not None:  # as the runner left it: every aspect judged (run/judge.py finish)
                found.observed_aspects, found.aspects = payload[7], dict(payload[7])
            self._store(index, position, found, emit=False)
        return bool(results)

    def _store(self, index: int, position: int, result: Result, *, emit: bool = True) -> None:
        if self.results[index][position] is _EMITTED:
            return
        self.results[index][position] = result
        self.last[index] = time.perf_counter()
        if self.on_result:
            self.on_result(index, result)
        if emit:
            self._emit_ready()

    def _emit_ready(self, final: bool = False) -> None:
        """Emits, in catalog order, every result whose predecessors are all in. ``final``: the run is
        over, so a slot still empty was not run (left out after ``stop``) or its worker died."""
        index, position = self.cursor
        stopped = final and self.stop is not None and self.stop()  # run -x: what did not run is left out
        while index < len(self.targets):
            if position == len(self.scenarios):
                index, position = index + 1, 0
                continue
            result = self.results[index][position]
            if not final and (result is None or self.infos[index] is None):
                break  # the reports begin a target with what it said about itself, never with a guess
            if result is None:
                if stopped:
                    position += 1
                    continue
                result = Result(self.scenarios[position], Verdict.ERROR, "not run: every worker process died")
            done = self._run_of(index)
            if self.keep:
                done.results.append(result)
            self.results[index][position] = _EMITTED
            if self.emit:
                self.emit(done, result)
            position += 1
        self.cursor = (index, position)

    def _run_of(self, index: int) -> TargetRun:
        """Returns target ``index``'s TargetRun, made when its first result is emitted."""
        done = self.runs[index]
        if done is None:
            target = self.targets[index]
            # Without what it said (every worker running it died first): its spec, at the very end.
            info, slug, start_error, start_reason = self.infos[index] or (TargetInfo(target.spec), target.slug, None, None)
            done = self.runs[index] = TargetRun(target, info, slug, [], 0.0, start_error, start_reason)
        return done

    def _target_run(self, index: int) -> TargetRun:
        done = self._run_of(index)
        first = self.first[index]
        done.seconds = self.last[index] - first if first is not None else 0.0
        done.leftovers = self.leftovers[index]
        return done


class _Here:
    """This process's part of a run whose targets are all in this process: chunks taken from the
    same queue as the workers', one scenario at a time between their messages, with a runner of its
    own (as a worker's), its results stored as they come."""

    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.task: tuple[int, range] | None = None
        self.next = 0  # the position in ``task`` to run next
        self.current: tuple[int, Runner] | None = None

    def has_work(self, queue: list[tuple[int, range]]) -> bool:
        """Whether a scenario is left to run here: of the chunk begun, or a chunk queued."""
        if self.pool.halt[0]:
            return False
        return (self.task is not None and self.next < self.task[1].stop) or bool(queue)

    def step(self, queue: list[tuple[int, range]]) -> None:
        """Runs the next scenario of the chunk begun, or begins the next chunk of ``queue``."""
        pool = self.pool
        if pool._stopping():
            return
        if self.task is None or self.next >= self.task[1].stop:
            self.task = queue.pop() if queue else None
            if self.task is None:
                return
            self.next = self.task[1].start
            pool._handed(self.task)
            index = self.task[0]
            if self.current is None or self.current[0] != index:
                self.stop()
                target = pool.targets[index]
                runner = assemble.runner(target, record_states=pool.record_states, tmp=pool.tmp, say_leftovers=False)
                self.current = (index, runner)
                info = runner.start()
                pool.infos[index] = pool.infos[index] or (info, target.slug, runner.start_error, runner.start_reason)
                pool._emit_ready()
            return
        assert self.current is not None
        index, runner = self.current
        position = self.next
        self.next += 1
        pool._store(index, position, runner.run(pool.scenarios[position]))

    def stop(self) -> None:
        """Stops the runner held, its leftovers given to its target's reports."""
        if self.current is not None:
            index, runner = self.current
            self.current = None
            runner.stop()
            self.pool.leftovers[index] += runner.leftovers
