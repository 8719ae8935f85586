"""Verdicts by aspect: every expectation of a scenario belongs to one of four aspects.

``effects``
    what is on disk: ``then`` (files, contents, modes, links, absent entries, nothing else
    changed) and writes outside the workspace (escapes);
``outcome``
    whether the call succeeded or failed, and which failure: that an ``output`` or an ``error``
    was expected at all, ``error.code``, and the output fields the profile names as the tool's
    success/failure signal (its ``outcome`` list: Aptix ``success`` and ``errorCode``, safe_patch's
    ``success``);
``content``
    the data a call returns about the files, compared in the profile's normal form: the output
    fields its tool lists in ``content.fields`` (a hash, a size, the text read), and, for a tool
    whose output is numbered lines (``content.lines``), the output with every line-number prefix
    rewritten the contract's way (harness/normal_form.py): the lines and their numbers, and, for a
    tool whose output is a report of entries (``content.entries``), those entry lines alone;
``output``
    what the call returned beyond that, as worded: texts, formats, prefixes, messages, other
    fields, events.

Each expectation is classified by its *key* with the table :data:`DEFAULTS` (documented in
docs/scenario-format.md, "Aspects"); a call step's ``aspect:`` mapping overrides it per key. The
unmet expectations of a run are classified by the same keys (from where the mismatch is), and each
aspect of a result gets a verdict: ``pass``, ``fail``, ``recorded`` (an open question's
observation, or an aspect the run was told not to judge) or ``n/a`` (no expectation of that aspect;
also every aspect of a skipped or errored scenario).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.scenario import profiles
from harness.scenario.model import Call, Result, Scenario, Verdict
from harness.scenario.normal_form import ContentSpec, entries_form, has_field, normal_form, path_names_field
from harness.util.memo import by_identity

ASPECTS: tuple[str, ...] = ("effects", "outcome", "content", "output")
PASS, FAIL, RECORDED, NA = "pass", "fail", "recorded", "n/a"

#: The aspect of each expectation key, unless a step's ``aspect:`` says otherwise.
DEFAULTS: dict[str, str] = {
    "succeeds": "outcome",       # `expect.output` is there: the call must succeed
    "fails": "outcome",          # `expect.error` is there: the call must fail
    "error.code": "outcome",     # which failure
    "error.message": "output",   # how the failure is worded
    "output": "output",          # the output as a whole, when it is not a mapping of fields
    "output.*": "output",        # one field of the output ...
    "output.<outcome field>": "outcome",  # ... unless the profile's tool lists it in `outcome`
    "output.<content field>": "content",  # ... or in `content.fields` (at any depth)
    "content": "content",        # a numbered output, its prefixes rewritten the contract's way
    "events": "output",
    "then": "effects",           # the workspace after a step or after the scenario
    "escape": "effects",         # a write outside the workspace (always judged)
}

#: Keys a step's ``aspect:`` mapping may name (``output.<field>`` too).
OVERRIDABLE = ("succeeds", "fails", "error.code", "error.message", "output", "content", "events", "then")

_FIELD = re.compile(r"^output[.]([^.\[]+)")


def parse_selection(text: str) -> tuple[str, ...]:
    """Returns the aspects named in ``--aspects`` (comma-separated); raises ValueError for others."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in ASPECTS]
    if unknown or not names:
        raise ValueError(f"--aspects takes a comma-separated list of {', '.join(ASPECTS)} (got {text!r})")
    return tuple(name for name in ASPECTS if name in names)


def _outcome_fields(scenario: Scenario, tool: str) -> tuple[str, ...]:
    return _outcome_fields_of(scenario.profile, scenario.file.parent if scenario.file is not None else None, tool)


@functools.lru_cache(maxsize=1024)
def _outcome_fields_of(profile_name: str, folder: Path | None, tool: str) -> tuple[str, ...]:
    # Cached per process: finding a scenario's profile walks the folders above its file, and every
    # result asks for every call step (a profile file edited during one run is not picked up). Keyed
    # on the scenario's folder, not its file: the profile depends on the folders above it only, and a
    # catalog has about a tenth as many folders as files (a --jobs worker works each out again).
    try:
        profile = profiles.for_folder(profile_name, folder)
    except profiles.ProfileError:
        return ()
    found = profile.tools.get(tool) if profile else None
    return found.outcome if found else ()


def content_spec(scenario: Scenario, tool: str) -> ContentSpec:
    """Returns the content declaration of the scenario's profile's tool (empty when it has none)."""
    return _content_spec_of(scenario.profile, scenario.file.parent if scenario.file is not None else None, tool)


@functools.lru_cache(maxsize=1024)
def _content_spec_of(profile_name: str, folder: Path | None, tool: str) -> ContentSpec:
    try:
        profile = profiles.for_folder(profile_name, folder)
    except profiles.ProfileError:
        return ContentSpec()
    found = profile.tools.get(tool) if profile else None
    return found.content if found else ContentSpec()


def _output_fields(expected: Any) -> list[str] | None:
    """Returns the top-level fields an output expectation names, or None when it is not a mapping."""
    if isinstance(expected, dict) and len(expected) == 1 and "$subset" in expected:
        expected = expected["$subset"]
    if isinstance(expected, dict) and not any(str(key).startswith("$") for key in expected):
        return [str(key) for key in expected]
    return None


def expectation_keys(expect: dict[str, Any] | None, then: Any = None) -> list[str]:
    """Returns the expectation keys of one call step's ``expect`` (and ``then``), in order."""
    expect = expect or {}
    keys: list[str] = []
    if "output" in expect:
        keys.append("succeeds")
        fields = _output_fields(expect["output"])
        keys += ["output"] if fields is None else [f"output.{name}" for name in fields]
    if "error" in expect:
        keys.append("fails")
        if isinstance(expect["error"], dict):
            keys += [f"error.{name}" for name in expect["error"]]
    if "events" in expect:
        keys.append("events")
    if then:
        keys.append("then")
    return keys


def override_problems(step: dict[str, Any]) -> list[str]:
    """Returns what is wrong with a raw call step's ``aspect:`` mapping: keys it does not have."""
    keys = expectation_keys(step.get("expect"), step.get("then"))
    fields = any(key.startswith("output.") for key in keys)
    out = []
    for key in step.get("aspect") or {}:
        if key not in keys and not (key == "output" and fields) and not (key == "content" and "succeeds" in keys):
            out.append(f"`aspect` names {key!r}, which this step does not expect "
                       f"(its expectation keys: {', '.join(keys) or 'none'})")
    return out


#: classify_step's answers by the step's identity (the entry holds the step, so the identity is not
#: reused while it is kept): every result of a run asks again for the same steps.
_CLASSIFIED: dict[int, tuple[Call, str, Path | None, dict[str, str]]] = {}


def classify_step(scenario: Scenario, step: Call) -> dict[str, str]:
    """Returns the aspect of each expectation key of one call step (its ``aspect:`` applied)."""
    known = _CLASSIFIED.get(id(step))
    if known is not None and known[0] is step and known[1] == scenario.profile \
            and (known[2] is scenario.file or known[2] == scenario.file):
        return dict(known[3])
    keys = _classify_step(scenario, step)
    if len(_CLASSIFIED) >= 65536:
        _CLASSIFIED.clear()
    _CLASSIFIED[id(step)] = (step, scenario.profile, scenario.file, dict(keys))
    return keys


def _classify_step(scenario: Scenario, step: Call) -> dict[str, str]:
    outcome_fields = _outcome_fields(scenario, step.tool)
    spec = content_spec(scenario, step.tool)
    keys: dict[str, str] = {}
    for key in expectation_keys(step.expect, step.then):
        if key.startswith("output."):
            name = key[len("output."):]
            keys[key] = ("outcome" if name in outcome_fields else "content" if name in spec.fields
                         else DEFAULTS["output.*"])
        else:
            keys[key] = DEFAULTS.get(key, "output")
    expect = step.expect or {}
    if "output" in expect and (spec.lines is not None or has_field(expect["output"], spec.fields)
                               or (spec.entries is not None and isinstance(expect["output"], str))):
        # A numbered output (or a text expectation of an entries report) is matched in its normal
        # form first (content), then as worded (output);
        # a content field inside the output (latest_file_state.sha256) is content too.
        keys["content"] = DEFAULTS["content"]
    for key, aspect in (step_overrides(step) or {}).items():
        if key == "output" and "output" not in keys:
            # `output` names the whole output expectation: every field of it
            for name in [k for k in keys if k.startswith("output.")]:
                keys[name] = aspect
        elif key in keys:
            keys[key] = aspect
    return keys


def step_overrides(step: Call) -> dict[str, str] | None:
    """Returns the step's ``aspect:`` mapping (key -> aspect), if it has one."""
    return getattr(step, "aspect", None) or None


def key_of(path: str, why: str = "") -> str:
    """Returns the expectation key an unmet expectation belongs to, from where it is."""
    if path == "output" and why == "the call failed":
        return "succeeds"
    if path == "error" and why == "the call succeeded":
        return "fails"
    if path == "escape":
        return "escape"
    if path.startswith("then"):
        return "then"
    if path.startswith("events"):
        return "events"
    if path == "content" or path.startswith(("content.", "content[")):
        return "content"
    if path.startswith("error."):
        return "error." + re.split(r"[.\[]", path[len("error."):])[0]
    field = _FIELD.match(path)
    if field:
        return f"output.{field.group(1)}"
    return "output"


def classify_failure(keys: dict[str, str], path: str, why: str = "", fields: tuple[str, ...] = ()) -> str:
    """Returns the aspect of one unmet expectation of a step whose keys are ``keys`` (``fields``: its
    tool's content fields, which make a mismatch inside the output content wherever it is)."""
    if path == "content":  # the numbered lines, after the profile's normal form (run/judge.py check_call)
        return "content"
    key = key_of(path, why)
    if key.startswith("output") and fields and path_names_field(path, fields) and keys.get(key) != "outcome":
        return "content"
    if key in keys:
        return keys[key]
    if key.startswith("output."):
        return keys.get("output", DEFAULTS["output.*"])
    return DEFAULTS.get(key, "output")


def expected_aspects(scenario: Scenario) -> set[str]:
    """Returns the aspects a scenario has expectations of (escapes always count as effects)."""
    found = {"effects"} if scenario.then else set()
    for step in scenario.calls:
        found.update(classify_step(scenario, step).values())
    return found


@by_identity
def _expected(scenario: Scenario) -> frozenset[str]:
    """expected_aspects, remembered per scenario: judging every result asks for them."""
    return frozenset(expected_aspects(scenario))


def failed_aspects(result: Result) -> set[str]:
    """Returns the aspects of every unmet expectation of a result."""
    scenario = result.scenario
    calls: dict[int, Call] | None = None  # worked out for the first step that failed something
    found: set[str] = set()
    for record in result.steps:
        if not record.failures:
            continue
        if calls is None:
            calls = {index: step for index, step in enumerate(scenario.steps) if isinstance(step, Call)}
        step = calls.get(record.index)
        keys = classify_step(scenario, step) if step is not None else {}
        fields = content_spec(scenario, step.tool).fields if step is not None else ()
        for failure in record.failures:
            found.add(classify_failure(keys, failure.path, failure.why, fields))
    for failure in result.then_failures:
        found.add(classify_failure({}, failure.path, failure.why))
    return found


def judge(result: Result, judged: Iterable[str] = ASPECTS) -> dict[str, str]:
    """Returns the verdict of each aspect of a result, judging only the ``judged`` aspects."""
    judged = set(judged)
    if result.verdict in (Verdict.SKIP, Verdict.ERROR):
        return {aspect: NA for aspect in ASPECTS}
    expected = _expected(result.scenario)
    failed = failed_aspects(result)
    out = {}
    for aspect in ASPECTS:
        if aspect in failed:
            out[aspect] = FAIL if aspect in judged else RECORDED
        elif result.scenario.open_question:
            out[aspect] = RECORDED
        elif aspect in expected:
            out[aspect] = PASS if aspect in judged else RECORDED
        else:
            out[aspect] = NA
    return out


def apply(result: Result, judged: Iterable[str] = ASPECTS) -> Result:
    """Sets ``result.aspects`` (as judged) and ``result.observed_aspects`` (every aspect judged).

    When some aspects are not judged, a failure of theirs alone no longer fails the result: its
    verdict becomes ``pass`` (``recorded`` for an open question) and the reason says what was not
    judged. An escape always fails.
    """
    judged = tuple(judged)
    # Judged in full once, by the runner, in whichever process ran the scenario (a --jobs worker
    # sends them with the result): they depend on the verdict being a skip or an error and on the
    # unmet expectations' places, which nothing changes afterwards (the reports apply it again to
    # narrow by --aspects; judging every result again cost a --jobs run's parent, whose caches of
    # each scenario's expected aspects were empty, 25-30 ms of processor time on the catalog).
    if result.observed_aspects is None:
        result.observed_aspects = judge(result, ASPECTS)
    # Every aspect judged (the default): the same verdicts, not worked out twice.
    result.aspects = dict(result.observed_aspects) if set(judged) == set(ASPECTS) else judge(result, judged)
    if result.verdict is Verdict.FAIL and set(judged) != set(ASPECTS):
        escaped = any(failure.path == "escape" for failure in result.then_failures)
        if not escaped and FAIL not in result.aspects.values():
            ignored = sorted(aspect for aspect, verdict in result.aspects.items()
                             if verdict == RECORDED and result.observed_aspects[aspect] == FAIL)
            result.verdict = Verdict.RECORDED if result.scenario.open_question else Verdict.PASS
            result.reason = f"not judged ({', '.join(ignored)}): {result.reason}"
    return result


def summary(results: Iterable[Result]) -> dict[str, dict[str, dict[str, int]]]:
    """Returns, per profile and aspect, how many results passed, failed, were recorded or n/a."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for result in results:
        count(out, result)
    return out


def count(counts: dict[str, dict[str, dict[str, int]]], result: Result) -> None:
    """Adds one result to counts of the :func:`summary` form (a run's tally keeps them as it goes)."""
    found = result.observed_aspects or result.aspects or judge(result)
    per = counts.get(result.scenario.profile)
    if per is None:
        per = counts[result.scenario.profile] = {a: {PASS: 0, FAIL: 0, RECORDED: 0, NA: 0} for a in ASPECTS}
    for aspect, verdict in found.items():
        per[aspect][verdict] += 1


def rate_line(counts: dict[str, dict[str, int]]) -> str:
    """Returns a summary line such as ``effects 97% · outcome 91% · content 95% · output 40%``: of the results that
    judged an aspect (pass or fail), the share that passed; ``–`` when none judged it."""
    parts = []
    for aspect in ASPECTS:
        judged = counts[aspect][PASS] + counts[aspect][FAIL]
        parts.append(f"{aspect} {round(100 * counts[aspect][PASS] / judged)}%" if judged else f"{aspect} –")
    return " · ".join(parts)


def project(doc: dict[str, Any], aspect: str) -> dict[str, Any]:
    """Returns the part of a recorded behaviour (a snapshot document) that belongs to ``aspect``,
    for ``harness diff --aspects``: ``effects`` the workspace after each step; ``outcome`` whether
    each call failed, its error code and the output fields its profile's tool lists in
    ``outcome``; ``content`` each successful call's content (its content fields, or its numbered
    output in the normal form); ``output`` the rest of what each call returned, and its events."""
    fields_of = _outcome_fields_by_name(str(doc.get("profile", "")))
    content_of = _content_spec_by_name(str(doc.get("profile", "")))
    steps = []
    for step in doc.get("steps", ()):
        entry: dict[str, Any] = {"step": step.get("step")}
        if aspect == "effects":
            if "workspace" in step:
                entry["workspace"] = step["workspace"]
        elif "tool" not in step:
            continue  # an action the harness took: the same on both sides
        elif aspect == "outcome":
            error, output = step.get("error"), step.get("output")
            entry["failed"] = "error" in step
            if isinstance(error, dict) and "code" in error:
                entry["code"] = error["code"]
            if isinstance(output, dict):
                entry.update({name: output[name] for name in fields_of(step["tool"]) if name in output})
        elif aspect == "content":
            spec = content_of(step["tool"])
            if "error" not in step and "output" in step:
                entry["content"] = _content_view(step["output"], spec)
        else:
            error, output = step.get("error"), step.get("output")
            if "error" in step:
                entry["error"] = {k: v for k, v in error.items() if k != "code"} if isinstance(error, dict) else error
            elif isinstance(output, dict):
                outcome = set(fields_of(step["tool"])) | set(content_of(step["tool"]).fields)
                entry["output"] = {k: v for k, v in output.items() if k not in outcome}
            else:
                entry["output"] = output
            if "events" in step:
                entry["events"] = step["events"]
        steps.append(entry)
    out: dict[str, Any] = {"steps": steps}
    if aspect == "effects" and "workspace" in doc:
        out["workspace"] = doc["workspace"]
    return out


def _content_view(output: Any, spec: ContentSpec, depth: int = 0) -> Any:
    """Returns what of a recorded output is content: its numbered lines in the normal form, or its
    content fields wherever they are (None when it has neither)."""
    if spec.lines is not None:
        return normal_form(output, spec.lines)
    if spec.entries is not None:
        return entries_form(output, spec.entries)
    if depth > 32 or not spec.fields:
        return None
    if isinstance(output, dict):
        found = {k: v for k, v in output.items() if k in spec.fields}
        for key, value in output.items():
            if key not in spec.fields:
                inner = _content_view(value, spec, depth + 1)
                if inner not in (None, {}, []):
                    found[key] = inner
        return found
    if isinstance(output, list):
        return [_content_view(item, spec, depth + 1) for item in output]
    return None


def differing(old: dict[str, Any], new: dict[str, Any], among: Iterable[str] = ASPECTS) -> list[str]:
    """Returns the aspects (of ``among``) in which two recorded behaviours differ."""
    return [aspect for aspect in ASPECTS if aspect in set(among) and project(old, aspect) != project(new, aspect)]


@functools.lru_cache(maxsize=64)
def _outcome_fields_by_name(name: str):
    try:
        profile = profiles.known().get(name)
    except profiles.ProfileError:
        profile = None

    def fields_of(tool: str) -> tuple[str, ...]:
        found = profile.tools.get(tool) if profile else None
        return found.outcome if found else ()
    return fields_of


@functools.lru_cache(maxsize=64)
def _content_spec_by_name(name: str):
    try:
        profile = profiles.known().get(name)
    except profiles.ProfileError:
        profile = None

    def spec_of(tool: str) -> ContentSpec:
        found = profile.tools.get(tool) if profile else None
        return found.content if found else ContentSpec()
    return spec_of
