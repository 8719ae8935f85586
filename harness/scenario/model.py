"""The data the pipeline passes along: scenarios (what to do), results (what happened, and the verdict)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scenario.matchers import Mismatch

#: How the error of every scenario begins when the target did not start (the full reason is given once).
TARGET_NOT_STARTED = "the target did not start"


class Verdict(str, enum.Enum):
    """The outcome of one scenario on one target."""

    PASS = "pass"
    FAIL = "fail"
    RECORDED = "recorded"
    SKIP = "skip"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Call:
    """A tool call step."""

    tool: str
    args: dict[str, Any]
    expect: dict[str, Any] | None = None
    then: dict[str, Any] | None = None
    name: str | None = None
    answers: bool = False
    line: int = 0
    aspect: dict[str, str] | None = None  # per expectation key, overriding harness/scenario/aspects.py's table
    invalid_args: bool = False  # the args break the tool's schema on purpose (the observation is the tool's answer)


@dataclass(frozen=True)
class Action:
    """An on-disk change the harness makes between calls, as an outside process would."""

    action: str
    path: str
    content: Any = None
    mode: str | None = None
    target: str | None = None
    name: str | None = None
    line: int = 0
    mtime: str | None = None  # write/append/touch: "same", or an offset such as "-5s", "+500ms"


Step = Call | Action


@dataclass(frozen=True)
class Scenario:
    """One scenario file's document, validated."""

    id: str
    profile: str
    title: str
    source: str
    steps: tuple[Step, ...]
    given: dict[str, Any] = field(default_factory=dict)
    then: dict[str, Any] | None = None
    tags: tuple[str, ...] = ()
    open_question: str | None = None
    requires: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    acp: dict[str, Any] = field(default_factory=dict)  # the editor's behaviour towards an ACP agent
    file: Path | None = None
    line: int = 1
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def calls(self) -> list[Call]:
        """Returns the call steps, in order."""
        return [step for step in self.steps if isinstance(step, Call)]

    @property
    def location(self) -> str:
        """Returns ``file:line`` of the scenario."""
        return f"{self.file}:{self.line}" if self.file else self.id


@dataclass
class StepRecord:
    """What one step did: the call's output or error (or the action taken) and unmet expectations."""

    index: int
    kind: str  # "call" | "action"
    name: str  # the tool or action
    args: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    error: dict[str, Any] | None = None
    events: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    failures: list[Mismatch] = field(default_factory=list)
    label: str | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Returns the step in the JSON report's shape."""
        if self.kind == "action":
            data: dict[str, Any] = {"action": self.name, **self.args}
        else:
            data = {"tool": self.name, "args": self.args}
            if self.error is not None:
                data["error"] = self.error
            else:
                data["output"] = self.output
            if self.events is not None:
                data["events"] = self.events
            if self.extra:
                data["extra"] = self.extra
        if self.label:
            data["name"] = self.label
        data["failures"] = [failure.as_dict() for failure in self.failures]
        return data


@dataclass
class Result:
    """One scenario's run on one target: its verdict, the reason, and every step's record."""

    scenario: Scenario
    verdict: Verdict
    reason: str = ""
    steps: list[StepRecord] = field(default_factory=list)
    then_failures: list[Mismatch] = field(default_factory=list)
    workspace: dict[str, Any] | None = None  # the final workspace state, relative paths
    seconds: float = 0.0
    known: str | None = None  # a listed fail or error under --baseline: the baseline's reason
    stale: str | None = None  # a listed scenario that passes now: the baseline's reason
    #: Per-aspect verdicts (harness/scenario/aspects.py): as judged, and as observed when the run judged fewer.
    aspects: dict[str, str] | None = None
    observed_aspects: dict[str, str] | None = None

    @property
    def counted_as(self) -> str:
        """Returns the summary column of this result: its verdict, or ``known`` for a baseline's known failure."""
        return "known" if self.known is not None else self.verdict.value

    @property
    def id(self) -> str:
        """Returns the scenario id."""
        return self.scenario.id

    @property
    def failures(self) -> list[tuple[str, Mismatch]]:
        """Returns every unmet expectation with where it belongs (step label or 'then')."""
        out = [(step_label(step), failure) for step in self.steps for failure in step.failures]
        out += [("then", failure) for failure in self.then_failures]
        return out

    @property
    def answer(self) -> StepRecord | None:
        """Returns the record of the call that answers the open question, if any."""
        calls = [(step, record) for step, record in zip(self.scenario.steps, self.steps) if record.kind == "call"]
        for step, record in calls:
            if isinstance(step, Call) and step.answers:
                return record
        return calls[-1][1] if calls else None

    def as_dict(self) -> dict[str, Any]:
        """Returns the result in the JSON report's shape."""
        data: dict[str, Any] = {
            "id": self.scenario.id,
            "profile": self.scenario.profile,
            "title": self.scenario.title,
            "source": self.scenario.source,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "steps": [step.as_dict() for step in self.steps],
            "then": {"failures": [failure.as_dict() for failure in self.then_failures]},
            "seconds": round(self.seconds, 6),
        }
        if self.scenario.open_question:
            data["open_question"] = self.scenario.open_question
        if self.workspace is not None:
            data["workspace"] = self.workspace
        if self.known is not None:
            data["known"] = self.known
        if self.stale is not None:
            data["stale"] = self.stale
        if self.aspects is not None:
            data["aspects"] = dict(self.aspects)
            if self.observed_aspects is not None and self.observed_aspects != self.aspects:
                data["aspects_observed"] = dict(self.observed_aspects)
        return data


def step_label(record: StepRecord) -> str:
    """Returns how a step is named in reports: ``step 2 (Edit)``."""
    what = record.label or record.name
    return f"step {record.index + 1} ({what})"
