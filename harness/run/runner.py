"""Plays scenarios against a target, one fresh workspace each, and turns what happened into verdicts.

The runner owns the order of things (lay out ``given``, open a session, run steps, check ``then``
and the canaries, clean up) and the rule that nothing stops a run: a broken scenario, a failing
expectation, a crashing or hanging target each become a verdict, and the next scenario runs.
How a target is reached is the target's business (harness/targets/).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from harness.containment import outside
from harness.containment.cleanup import LateEscape, Leftover, Remover, Tree, in_memory
from harness.containment.enclosure import Enclosure
from harness.run import judge
from harness.run.judge import check_call, check_then, finish
from harness.run.working_folder import WorkingFolder
from harness.run.workspace import Workspace, steps_capped
from harness.scenario import aspects, static_checks
from harness.scenario.content_spec import lone_surrogate_in
from harness.scenario.matchers import PatternError
from harness.scenario.model import TARGET_NOT_STARTED, Action, Call, Result, Scenario, StepRecord, Verdict
from harness.scenario.placeholders import (
    UnknownPlaceholder,
    constant,
    has_references,
    holds,
    resolve_references,
    substitute,
)
from harness.targets import faults
from harness.targets.base import DELIBERATE_ARGS, Session, Target, TargetError, TargetInfo, Unsupported
from harness.util import limits, printable, processes
from harness.util.memo import by_identity

#: Names the scenarios gave that are looked up again while the candidate answers ``bye`` (at most).
MAX_BYE_NAMES = 5000


class Runner:
    """Runs scenarios on one target; start it once, run many, stop it."""

    def __init__(self, target: Target, *, record_states: bool = False, tmp: str | None = None,
                 say_leftovers: bool = True) -> None:
        self.target = target
        self.record_states = record_states  # keep the workspace state after every step (snapshots)
        self.tmp = tmp  # the folder that holds the workspaces (None: the system's temporary folder)
        self.info: TargetInfo | None = None
        #: Why the target did not start, in full (with its stderr tail); reports show it once.
        self.start_error: str | None = None
        #: What each scenario's ``error`` says when the target did not start: one short line.
        self.start_reason: str | None = None
        # Workspaces on a memory file system are removed in this thread (see Remover).
        self._remover = Remover(inline=in_memory(tmp))
        self._finished: Workspace | None = None  # the last scenario's workspace, until ``run`` clears it
        #: Workspaces that could not be removed (harness/containment/cleanup.py, Leftover), known once ``stop`` returns.
        self.leftovers: list[Leftover] = []
        # Said on stderr at ``stop`` unless the caller puts them in its reports (harness run does).
        self._say_leftovers = say_leftovers
        self._watched: list[str] | None = None  # the folders watched besides the workspace (harness/containment/outside.py)
        self._given: set[str] = set()  # every name the scenarios gave, watched during bye (stop)
        #: The folder around the workspaces, with its canaries: made once, renewed after an escape.
        self._enclosure: Enclosure | None = None
        #: The candidate's temporary folder for the run (TMPDIR), removed with the workspaces.
        self._scratch: str | None = None
        #: The candidate's working folder for the run, laid out and watched per scenario (harness/run/working_folder.py).
        self._working: WorkingFolder | None = None

    def start(self) -> TargetInfo:
        """Starts the target; a target that cannot start turns every scenario into an error."""
        if self.info is None and self.start_error is None:
            self._give_tmp()
            self._give_cwd()
            self._give_workspace()
            try:
                self.info = self.target.start()
            except (TargetError, Unsupported, OSError) as exc:
                text = str(exc)
                self.start_error = text if text.startswith(self.target.spec) else f"target {self.target.spec} did not start: {text}"
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                self.start_reason = f"{TARGET_NOT_STARTED}: {first[:200]}"
                self.info = TargetInfo(self.target.spec)
        assert self.info is not None, "set by the start, or by its failure"
        return self.info

    def _give_tmp(self) -> None:
        """Gives a candidate in a process of its own a temporary folder of the run's (beside the
        workspaces), removed with them: what it leaves in ``$TMPDIR`` is not left on the machine."""
        if self.target.in_process or self._scratch is not None:
            return
        with processes.deferred():
            self._scratch = tempfile.mkdtemp(prefix="harness-tmp-", dir=self.tmp)
        try:
            given = self.target.use_tmp(self._scratch)
        except OSError:
            given = False
        if not given:
            with processes.deferred():
                self._remover.remove(Tree(self._scratch))
                self._scratch = None

    def _give_workspace(self) -> None:
        """Gives a candidate that keeps one workspace folder for the run (a process in the sandbox)
        that folder before its start, so the sandbox it starts in binds it (harness/targets/launch.py):
        without it the first scenario would start the candidate a second time."""
        if self.target.in_process or not self.target.fixed_workspace or self._enclosure is not None:
            return
        with processes.deferred():
            self._enclosure = Enclosure(parent=self.tmp, fixed=True)
        try:
            self.target.use_workspace(str(self._enclosure.workspace_folder()))
        except OSError:
            self._retire_enclosure()  # the first scenario makes it, as without the early folder

    def _give_cwd(self) -> None:
        """Gives a candidate in a process of its own the run's working folder (beside the workspaces)."""
        if self.target.in_process or self._working is not None:
            return
        with processes.deferred():
            self._working = WorkingFolder(self.tmp)
        try:
            given = self.target.use_cwd(self._working.path)
        except OSError:
            given = False
        if not given:
            with processes.deferred():
                self._working.remove()
                self._working = None

    def stop(self) -> None:
        """Stops the target, and waits until every workspace is removed.

        The candidate still runs while it answers ``bye`` and ends: that is watched as a scenario is
        (the names every scenario gave, the candidate's user under ``--run-as``), and what it wrote
        outside is a :class:`~harness.containment.cleanup.LateEscape` among the leftovers (it fails the run)."""
        watching = self._bye_watch()
        try:
            with contextlib.suppress(Exception):
                self.target.stop()
            if watching is not None:
                with contextlib.suppress(OSError):
                    for seen in watching.end():
                        late = LateEscape(seen, "written while the candidate answered bye, after the last scenario")
                        self.leftovers.append(late)
                        if self._say_leftovers:
                            print(f"harness: {printable.shown(str(late))}", file=sys.stderr)
        finally:  # also when a signal cut the stop short: the workspaces still go, whole
            self.release()

    def _bye_watch(self) -> outside.Watch | None:
        """Starts watching for the target's ``bye``: None when no candidate of a process of its own ran."""
        if self.target.in_process or self._watched is None or self.start_error is not None:
            return None
        try:
            started = outside.Watch(self._watched, self.target.candidate_uid)
            started.begin(set(self._given))
        except OSError:
            return None
        return started

    def release(self) -> None:
        """Removes what the runner made (the workspaces, their enclosure and trash, the candidate's
        temporary folder) and waits until it is gone, leaving the target running: for a target the
        caller goes on using. :meth:`stop` does this after stopping the target."""
        with processes.deferred():
            if self._scratch is not None:  # after the target: its processes may still have used it
                self._remover.remove(Tree(self._scratch))
                self._scratch = None
            if self._working is not None:
                self._remover.remove(Tree(self._working.path))
                self._working = None
            self._retire_enclosure()
            self._remover.drain()
            self.leftovers += self._remover.leftovers  # never left silently (docs/security.md, "Leftovers")
            if self._say_leftovers:
                for left in self._remover.leftovers:
                    print(f"harness: {printable.shown(str(left))}", file=sys.stderr)
            self._remover.leftovers.clear()

    def __enter__(self) -> Runner:
        try:
            self.start()
        except BaseException:  # a signal during the start: what it made (the temporary folder) still goes
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _retire_enclosure(self) -> None:
        with processes.deferred():
            if self._enclosure is not None:
                self._remover.remove(self._enclosure)
                self._enclosure = None

    def run_all(self, scenarios: Iterable[Scenario], on_result: Callable[[Result], None] | None = None,
                stop: Callable[[], bool] | None = None, keep: bool = True) -> list[Result]:
        """Runs every scenario in order (until ``stop()`` says so, e.g. ``run -x``); returns their results.

        With ``keep`` false each result is only handed to ``on_result`` (the reports take it as it
        comes) and the list returned stays empty, so a run of any size holds no result.
        """
        results = []
        for scenario in scenarios:
            if stop is not None and stop():
                break
            result = self.run(scenario)
            if keep:
                results.append(result)
            if on_result:
                on_result(result)
        return results

    def run(self, scenario: Scenario) -> Result:
        """Runs one scenario and returns its result; never raises for anything the scenario or target does.

        With the target's ``repeat`` above 1 (``harness run --repeat N``) the scenario runs that many
        times; when the verdicts or the observations differ (compared by the target's ``repeat_key``,
        a function of a result the command hands in: the snapshot's behaviour, volatile values
        masked), the result is marked ``flaky``. The result kept is the first that failed (fail or
        error), else the first.
        """
        repeat = getattr(self.target, "repeat", 1) or 1
        first = self._run_once(scenario)
        if repeat <= 1 or first.verdict is Verdict.SKIP or self.start_reason:
            return first
        key = getattr(self.target, "repeat_key", None) or (lambda result: None)
        kept, flaky = first, False
        seen = key(first)
        for _ in range(repeat - 1):
            again = self._run_once(scenario)
            if again.verdict is not first.verdict or key(again) != seen:
                flaky = True
            if kept.verdict not in (Verdict.FAIL, Verdict.ERROR) and again.verdict in (Verdict.FAIL, Verdict.ERROR):
                kept = again
        kept.flaky = flaky
        return kept

    def _run_once(self, scenario: Scenario) -> Result:
        self.start()
        started = time.perf_counter()
        try:
            try:
                result = self._run(scenario)
            except Exception as exc:  # a bug in the harness itself: still a verdict, with where it happened
                result = Result(scenario, Verdict.ERROR, _harness_error(exc))
            if self._finished is not None and not self._finished.checked:
                _late_escapes(result, self._finished)
            result.seconds = time.perf_counter() - started  # the scenario's own time: not its clean-up
        finally:
            finished, self._finished = self._finished, None
            if finished is not None:  # moved out, and removed now or later (up to 32 at a time)
                self._clear(finished)
        return finish(result)  # every aspect judged; `harness run --aspects` narrows it afterwards

    def _run(self, scenario: Scenario) -> Result:
        if self.start_reason:
            return Result(scenario, Verdict.ERROR, self.start_reason)
        reason = self._skip_reason(scenario)
        if reason:
            return Result(scenario, Verdict.SKIP, reason)
        faulted = bool(scenario.requires) and self.target.in_process
        fake = faulted and faults.on_pyfakefs(scenario.requires, scenario.given)
        if fake:  # pyfakefs patches `os` for every thread: the remover must not be deleting now
            self._remover.drain()
            for step in scenario.calls:  # the profile's content declarations, read (and kept) from the disk
                aspects.content_spec(scenario, step.tool)  # now: on pyfakefs its file is not there
        with contextlib.ExitStack() as faked:
            try:
                fs = faked.enter_context(faults.fake_filesystem()) if fake else None
            except faults.Unavailable as exc:
                return Result(scenario, Verdict.ERROR, str(exc))
            # On pyfakefs the whole file system is dropped afterwards; a real workspace is removed
            # on a background thread while the next scenario runs.
            workspace = None
            try:
                # Made and recorded as one step (processes.deferred): a SIGTERM raised between the
                # folder's making and its recording would leave a folder nobody removes. Once
                # recorded, the finally below or Runner.stop removes it. On pyfakefs the workspace
                # makes its own enclosure there.
                with processes.deferred():
                    if fs is None and self._enclosure is None:
                        # A sandboxed candidate started once per run keeps one workspace folder (emptied
                        # between scenarios): its sandbox binds that folder (harness/targets/launch.py).
                        self._enclosure = Enclosure(parent=self.tmp, fixed=self.target.fixed_workspace)
                    workspace = Workspace(parent=None if fs is not None else self.tmp, contained=fs is None,
                                          enclosure=self._enclosure if fs is None else None)
                laid_out = None
                if faulted and not fake:  # realised by the kernel, taken down before the workspace is moved out
                    try:
                        laid_out = faked.enter_context(faults.realised(scenario.given, workspace.root))
                    except (OSError, ValueError) as exc:
                        return Result(scenario, Verdict.ERROR, f"the scenario's faults cannot be realised: {exc}")
                try:
                    workspace.populate(scenario.given, self._names(workspace),
                                       record_initial=_compares_with_given(scenario), read_later=self.record_states)
                    if fs is not None:
                        faults.apply(fs, scenario.given, workspace.root)
                    elif laid_out is not None:
                        laid_out()
                except (OSError, ValueError) as exc:
                    return Result(scenario, Verdict.ERROR, f"could not lay out `given`: {exc}")
                return self._play(scenario, workspace)
            finally:
                if fs is None and workspace is not None:
                    self._finished = workspace  # cleared by ``run`` once the scenario's time is taken

    def _clear(self, workspace: Workspace) -> None:
        """Frees the enclosure for the next scenario: the workspace moved out and removed in the background."""
        with processes.deferred():  # moved out and queued as one step: nothing renamed and then forgotten
            self._clear_now(workspace)

    def _clear_now(self, workspace: Workspace) -> None:
        if not workspace.checked:  # the scenario ended before its escape check (a harness error): what the
            workspace.enclosure.spoiled = True  # enclosure shows must not be blamed on the next one
        try:
            tree = workspace.retire()
        except OSError:  # it cannot be moved (a flag the candidate set): the enclosure goes with it
            tree = None
        if tree is not None:
            self._remover.remove(tree)
        if workspace.enclosure.spoiled:  # an escape was reported, or a move failed: a fresh one next
            self._retire_enclosure()

    def _skip_reason(self, scenario: Scenario) -> str | None:
        reason = self.target.skip_reason(scenario)  # the target knows best why (and what would help)
        if reason:
            return reason
        info = self.info
        if info and info.profiles and scenario.profile not in info.profiles:
            return f"target {info.name} does not offer profile {scenario.profile}"
        refused = self.target.lone_surrogates_refused
        if refused and any(isinstance(step, Call) and lone_surrogate_in(step.args) for step in scenario.steps):
            return f"target {self.target.spec} cannot send an argument holding a lone surrogate: {refused}"
        missing = [need for need in scenario.requires if need not in self.target.realises]
        if missing:
            if missing == ["acp"]:  # a client-side condition, not a fault of the file system
                return f"target {self.target.spec} is no ACP client (the scenario requires acp)"
            return f"target {self.target.spec} cannot realise {', '.join(missing)} (e.g. it runs as root)"
        return None

    def _watch(self, scenario: Scenario, names: dict[str, str]) -> outside.Watch | None:
        """Starts watching the folders a candidate can reach besides its workspace (harness/containment/outside.py);
        None for a target in this process (the reference), which is the harness's own code."""
        if self.target.in_process:
            return None
        if self._watched is None:
            self._watched = outside.folders(self.tmp, self.target.candidate_home)
        calls = [step.args for step in scenario.steps if isinstance(step, Call) and isinstance(step.args, dict)]
        started = outside.Watch(self._watched, self.target.candidate_uid)
        given = outside.given_names(calls, names["workspace"])
        if len(self._given) < MAX_BYE_NAMES:
            self._given.update(given)  # watched again while the candidate answers bye (stop)
        started.begin(given)
        return started

    @staticmethod
    def _names(workspace: Workspace) -> dict[str, str]:
        return {"workspace": str(workspace.root)}

    def _play(self, scenario: Scenario, workspace: Workspace) -> Result:
        names = self._names(workspace)
        result = Result(scenario, Verdict.PASS)
        watching = self._watch(scenario, names)
        working = self._working
        if working is not None:
            working.reset(scenario.given)
        try:
            session = self.target.open(scenario.profile, workspace.root, session_options(scenario))
        except Exception as exc:  # the candidate may have run: what it wrote outside is still its verdict
            if isinstance(exc, Unsupported):
                verdict, why = Verdict.SKIP, str(exc)
            else:  # the target's own failure, or anything else it raised (a bug of its, or of the harness)
                verdict = Verdict.ERROR
                why = (f"could not open a session: {exc}" if isinstance(exc, TargetError)
                       else f"could not open a session: {_harness_error(exc)}")
            result.then_failures += judge.escaped(workspace.escapes() + (watching.end() if watching is not None else [])
                                                  + (working.changes() if working is not None else []))
            if any(failure.path == "escape" for failure in result.then_failures):
                result.verdict, result.reason = judge.verdict(scenario, result, why)
            else:
                result.verdict, result.reason = verdict, why
            return result
        workspace.hold_readings = session.acts_only_in_calls  # then a reading holds until the next call or action
        workspace.stirred()
        error: str | None = None
        try:
            try:
                error = self._steps(scenario, session, workspace, names, result)
            except PatternError as exc:  # a $regex that cannot run safely: nothing to judge by
                error = str(exc)
            finally:
                try:
                    session.close()
                except TargetError as exc:
                    error = error or f"closing the session failed: {exc}"
            if error is None and scenario.then:
                try:
                    result.then_failures += check_then(workspace, _substituted(scenario.then, names), names)
                except PatternError as exc:
                    error = str(exc)
            if self.record_states:  # the final state is for reports and snapshots, as the per-step ones
                result.workspace = workspace.state()
        except Exception as exc:  # a bug in the harness: still an error, and what the candidate did outside is still checked
            error, result.workspace = _harness_error(exc), None
        result.then_failures += judge.escaped(workspace.escapes(result.workspace, walk=not session.links_confined)
                                         + (watching.end() if watching is not None else []) + session.refused()
                                         + (working.changes() if working is not None else []))
        result.verdict, result.reason = judge.verdict(scenario, result, error)
        return result

    def _steps(self, scenario: Scenario, session: Session, workspace: Workspace,
               names: dict[str, str], result: Result) -> str | None:
        """Runs the steps; returns the reason when the target broke or an action failed."""
        recorded = 0  # entries recorded after the steps so far: limits.MAX_ENTRIES over them all
        held = 0  # characters of the outputs recorded so far: limits.MAX_SCENARIO_OUTPUT over them all
        for index, step in enumerate(scenario.steps):
            started = time.perf_counter()
            if isinstance(step, Action):
                record = StepRecord(index, "action", step.action, _action_args(step), label=step.name)
                result.steps.append(record)
                try:
                    session.before_action()
                    workspace.act(step.action, step.path, content=step.content, mode=step.mode,
                                  target=step.target, names=names, mtime=step.mtime)
                except (OSError, ValueError) as exc:
                    return f"step {index + 1} ({step.action} {step.path}) failed: {exc}"
                except TargetError as exc:
                    return f"step {index + 1}: the target broke before the action: {exc}"
            else:
                lookup = _step_lookup(result)
                try:
                    args = substitute(step.args, names, steps=lookup, in_args=True)
                    if holds(step.args, "${step"):  # built from an earlier answer
                        why = static_checks.built_argument_problem(args, names["workspace"], links=_lays_out_links(scenario))
                        if why:
                            raise UnknownPlaceholder(f"a path built from an earlier answer leads outside the "
                                                     f"harness's folder around the workspace: {why}; not sent")
                    # An expectation without placeholders is used as it is (matching only reads it).
                    expect: dict[str, Any] | None = (
                        None if not step.expect else step.expect if constant(step.expect)
                        else substitute(step.expect, names, steps=lookup))
                except (UnknownPlaceholder, UnicodeDecodeError) as exc:
                    result.steps.append(StepRecord(index, "call", step.tool, dict(step.args), label=step.name))
                    return f"step {index + 1} ({step.tool}): cannot build the call: {exc}"
                record = StepRecord(index, "call", step.tool, args, label=step.name)
                result.steps.append(record)
                deliberate = DELIBERATE_ARGS.set(step.invalid_args)
                workspace.stirred()
                try:
                    observed = session.call(step.tool, args)
                except TargetError as exc:
                    record.seconds = time.perf_counter() - started
                    return f"step {index + 1} ({step.tool}): {exc}"
                except Unsupported as exc:
                    return f"step {index + 1} ({step.tool}) unsupported: {exc}"
                finally:
                    DELIBERATE_ARGS.reset(deliberate)
                record.output, record.error = observed.output, observed.error
                record.events, record.extra = observed.events, observed.extra
                held += _size((observed.output, observed.error, observed.events, observed.extra), limits.MAX_SCENARIO_OUTPUT - held)
                if held > limits.MAX_SCENARIO_OUTPUT:
                    record.seconds = time.perf_counter() - started
                    return (f"step {index + 1} ({step.tool}): the outputs of the steps so far hold more than "
                            f"{limits.MAX_SCENARIO_OUTPUT:,} characters (HARNESS_MAX_SCENARIO_OUTPUT); "
                            "the scenario ends here")
                if expect:
                    checked: dict[str, Any] = (resolve_references(expect, _reference_lookup(result, record))
                                               if expect is not step.expect or has_references(expect) else expect)
                    spec = aspects.content_spec(scenario, step.tool)
                    record.failures += check_call(checked, observed, spec.lines, spec.entries)
                if step.then:
                    record.failures += check_then(workspace, _substituted(step.then, names), names)
            if self.record_states:
                left = limits.MAX_ENTRIES - recorded
                state = workspace.state(entries=left) if left > 0 else {"<capped>": steps_capped()}
                recorded += len(state)
                record.extra = {**record.extra, "workspace": state}
            record.seconds = time.perf_counter() - started
        return None


def _size(value: Any, limit: int) -> int:
    """Returns the characters of the strings in ``value`` (8 per other item), counting only until
    past ``limit``: what keeping it costs, roughly, without walking more of it than the cap needs."""
    total, todo = 0, [value]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item)
        elif isinstance(item, dict):
            total += 8 * len(item)
            todo += item.keys()
            todo += item.values()
        elif isinstance(item, (list, tuple)):
            total += 8 * len(item)
            todo += item
        else:
            total += 8
    return total


def _lays_out_links(scenario: Scenario) -> bool:
    """Returns whether a scenario lays out links (then '..' after a name may go where a link leads)."""
    return bool(scenario.given.get("symlinks")) or any(
        isinstance(step, Action) and step.action == "symlink" for step in scenario.steps)


def _substituted(then: Any, names: dict[str, str]) -> Any:
    """Returns a ``then`` with its placeholders replaced; one without any as it is (checking only reads it)."""
    return then if constant(then) else substitute(then, names)


@by_identity
def _compares_with_given(scenario: Scenario) -> bool:
    """Returns whether an expectation compares the workspace with its laid-out state
    (``others_unchanged``); asked each time the scenario runs, so remembered per scenario."""
    thens = [scenario.then, *(getattr(step, "then", None) for step in scenario.steps)]
    return any(isinstance(then, dict) and bool(then.get("others_unchanged")) for then in thens)


def session_options(scenario: Scenario) -> dict[str, Any]:
    """Returns what ``Target.open`` gets: the scenario's options, and ``acp`` (only targets that realise acp see it)."""
    options = dict(scenario.options)
    if scenario.acp:
        options["acp"] = dict(scenario.acp)
    return options


def _step_lookup(result: Result):
    """Returns how ``${stepN.output...}`` finds what an earlier call returned."""
    def lookup(number: int, field: str) -> Any:
        record = result.steps[number - 1]
        if field == "output" and record.error is not None:
            raise UnknownPlaceholder(f"step {number} failed, so it has no output (error: {record.error})")
        if field == "error" and record.error is None:
            raise UnknownPlaceholder(f"step {number} succeeded, so it has no error")
        return {"output": record.output, "error": record.error, "events": record.events}[field]
    return lookup


def _reference_lookup(result: Result, current: StepRecord):
    """Returns how ``$same_as: steps[N].output...`` (or ``output...`` of this call) finds its value."""
    def lookup(number: int | None, field: str) -> Any:
        record = current if number is None else result.steps[number - 1]
        if record.kind != "call":
            raise LookupError(f"step {number} is an action")
        if field == "output" and record.error is not None:
            raise LookupError("the call failed")
        if field == "error" and record.error is None:
            raise LookupError("the call succeeded")
        if field == "events" and record.events is None:
            raise LookupError("no events")
        return {"args": record.args, "output": record.output, "error": record.error, "events": record.events}[field]
    return lookup


def _action_args(step: Action) -> dict[str, Any]:
    args: dict[str, Any] = {"path": step.path}
    for key in ("mode", "target", "mtime"):
        if getattr(step, key) is not None:
            args[key] = getattr(step, key)
    if step.content is not None:
        args["content"] = step.content
    return args


def _harness_error(exc: Exception) -> str:
    """Returns the reason of a scenario the harness itself failed: the exception and where it was raised."""
    where = traceback.format_exception(exc)[-2].strip()
    return f"harness error: {type(exc).__name__}: {exc} ({where})"


def _late_escapes(result: Result, workspace: Workspace) -> None:
    """Checks the enclosure of a scenario that ended before its own check (``given`` could not be
    laid out, or the harness failed before the session opened): a candidate's process lives on
    between scenarios, so what it wrote outside meanwhile is this scenario's verdict, not dropped
    with the enclosure."""
    try:
        found = workspace.escapes(walk=workspace.contained)
    except Exception:  # nothing more can be said: the enclosure is spoiled and retired (Runner._clear_now)
        return
    if found:
        result.then_failures += judge.escaped(found)
        result.verdict, result.reason = judge.verdict(result.scenario, result, result.reason or None)
