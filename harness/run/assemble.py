"""One assembly of a run: the targets and runners every entry point uses, built from ``RunOptions``.

``harness run``, the pytest plugin and every driver (capture, bench, fuzz, mutation, discover, the
sources of ``harness diff``/``report``) build their targets with :func:`targets` / :func:`target`
and their runners with :func:`runner`; nothing else constructs a ``Runner``
(tests/test_guarantees.py checks it). So the isolation a run asks for (``--sandbox``, ``--run-as``,
the workspace folder, the timeouts) reaches every kind of target the same way, and a kind that
cannot apply it is refused with one line (a ValueError: exit 2) before anything starts.

A runner holds one enclosure, one workspace at a time and one started target: it is never shared
between threads or processes. Parallel work (``--jobs``, a capture's threads) takes one runner,
and one target, per worker (:func:`runner` for each).
"""

from __future__ import annotations

from harness.run.options import RunOptions
from harness.run.runner import Runner
from harness.targets import make_target, target_kind
from harness.targets.base import Target


def target(spec: str, options: RunOptions | None = None) -> Target:
    """Returns the target ``spec`` built with the run's options; ValueError (one line) when it cannot
    be: an unknown kind, a bad binding, or isolation the kind cannot apply."""
    confines = "sandbox" in target_kind(spec).honours
    return make_target(spec, (options or RunOptions()).target_options(confines=confines))


def targets(options: RunOptions) -> list[Target]:
    """Returns every target of the run (``--target``), in order; ValueError as :func:`target`."""
    return [target(spec, options) for spec in options.targets]


#: ``runner``'s ``tmp`` when not given: the run's own folder for workspaces.
RUN_FOLDER = "<the run's>"


def runner(target: Target, options: RunOptions | None = None, *, record_states: bool | None = None,
           tmp: str | None = RUN_FOLDER, say_leftovers: bool = True) -> Runner:
    """Returns a new runner of ``target`` (not started) with the run's settings.

    ``record_states`` defaults to what the run's reports need (``RunOptions.records_states``);
    ``tmp`` (the folder holding the workspaces; None: $TMPDIR) to the run's (``--tmp``, else
    /dev/shm where present); ``say_leftovers`` false when the caller puts leftovers in its own reports.
    """
    options = options or RunOptions()
    states = options.records_states if record_states is None else record_states
    folder = options.workspace_parent() if tmp is RUN_FOLDER else tmp
    return Runner(target, record_states=states, tmp=folder, say_leftovers=say_leftovers)
