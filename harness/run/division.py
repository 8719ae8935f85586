"""How a run's scenarios are divided among processes: the default ``--jobs`` (:func:`auto_jobs`, by
the work selected and the machine's load), the chunks handed out one at a time (:func:`chunks`),
and the scenarios kept for the first worker (:func:`heavy`, and those on pyfakefs) as runs of
positions (:func:`runs`, :func:`without`). harness/run/workers.py runs them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from harness.scenario.model import Scenario
from harness.targets.base import Target

#: Chunks per worker and target: enough for the fast workers to take over from a slow one.
CHUNKS_PER_WORKER = 4
MAX_CHUNK = 16


#: What the default ``--jobs`` (:func:`auto_jobs`) takes a run to cost, in processor seconds: the
#: run's own (its start, and what it does after the last scenario), per scenario (its reports
#: included), and per worker forked (the copy-on-write faults of the pages it shares with this
#: process, on both sides, and its own runner and enclosure; for a target with a process of its
#: own, also that process's start, which every worker pays). Measured on the reference
#: (docs/performance.md): a run's own about 0.15 s, a plain scenario in this process about 1 ms,
#: one on pyfakefs 3 ms (a fault the kernel realises costs about a plain one:
#: harness/targets/faults.py), a worker forked 50-75 ms (7-11% of a serial run of the catalog,
#: which is about the smallest run that takes a second process; a run whose targets are all in
#: this process forks one fewer, as this process runs chunks too); through ``cmd:`` about 3 ms a
#: scenario; an MCP server's start 0.5-1.5 s.
RUN_COST = 0.15
IN_PROCESS_COST = (0.001, 0.06)  # scenario, worker
ON_PYFAKEFS_COST = 0.003  # a scenario of a target in this process on pyfakefs
CMD_COST = (0.003, 0.25)
MCP_COST = (0.004, 1.0)
#: The processor time the workers may add to a run, as a share of the run's own (--jobs default).
WORKER_SHARE = 0.1


def auto_jobs(targets: Sequence[Target], scenarios: Sequence[Scenario], *, cores: int | None = None,
              load: float | None = None) -> int:
    """Returns the default ``--jobs`` for this run: as many workers as the idle cores allow (the cores
    this process may use less the one-minute load average), and no more than keep the processor time
    they add (:data:`IN_PROCESS_COST` and the like) within :data:`WORKER_SHARE` of the run's own, so a small run, or
    one on a busy machine, stays in this process. Targets other than the in-process reference,
    ``cmd:`` and ``mcp:`` (live agents, whose calls are mostly waiting) get a worker per idle core."""
    from harness.run.options import default_jobs
    cores = default_jobs() if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    idle = max(1, min(cores, cores - int(load)))
    if idle == 1 or not hasattr(os, "fork"):
        return 1
    work, worker = RUN_COST, 0.0
    for target in targets:
        ran: Sequence[Scenario] = scenarios
        if target.in_process:  # started at no cost: only what it offers and realises runs
            from harness.targets.faults import on_pyfakefs
            each, start = IN_PROCESS_COST
            offered = set(target.start().profiles)
            ran = [scenario for scenario in scenarios
                   if scenario.profile in offered and set(scenario.requires) <= target.realises]  # the rest is skipped
            work += sum(ON_PYFAKEFS_COST if on_pyfakefs(scenario.requires, scenario.given) else each for scenario in ran)
        elif target.spec.startswith(("cmd:", "mcp:", "mcp+")):
            each, start = CMD_COST if target.spec.startswith("cmd:") else MCP_COST
            work += each * len(ran)
        else:
            return idle
        worker += start
    return max(1, min(idle, 1 + int(WORKER_SHARE * work / worker)))


def chunks(count: int, jobs: int) -> list[range]:
    """Returns the scenario index ranges handed out one at a time (for one target).

    They shrink toward the end (none more than a ``2 * jobs``-th of what is left): the workers then
    finish nearly together, where one ending on a full chunk would leave the others idle meanwhile.
    """
    cap = max(1, min(MAX_CHUNK, count // (jobs * CHUNKS_PER_WORKER)))
    out, start = [], 0
    while start < count:
        size = max(1, min(cap, -(-(count - start) // (2 * jobs))))
        out.append(range(start, start + size))
        start += size
    return out


#: Generated ``given`` content (bytes) from which a scenario is kept for the first worker.
HEAVY_GIVEN = 1 << 20


def heavy(given: dict[str, Any] | None) -> bool:
    """Whether ``given`` lays out at least :data:`HEAVY_GIVEN` bytes of generated content (``lines``,
    ``pattern``: sized without being made)."""
    from harness.scenario.content_spec import generated_size, of_given_file
    files = ((given or {}).get("files") or {}).values()
    return sum(generated_size(of_given_file(spec)) or 0 for spec in files) >= HEAVY_GIVEN


def runs(positions: Sequence[int]) -> list[range]:
    """Returns ascending ``positions`` as the runs of consecutive ones."""
    out: list[range] = []
    for position in positions:
        if out and out[-1].stop == position:
            out[-1] = range(out[-1].start, position + 1)
        else:
            out.append(range(position, position + 1))
    return out


def without(span: range, kept: Sequence[int]) -> list[range]:
    """Returns ``span`` less the positions of ``kept``, as the runs left."""
    inside = {position for position in kept if position in span}
    return runs([position for position in span if position not in inside]) if inside else [span]
