"""``harness fuzz``: differential fuzzing of a target against the reference.

A hypothesis state machine (``RuleBasedStateMachine``) generates sequences of tool calls and disk
actions over a small workspace: each rule is one tool of the profile, its arguments drawn by what
they are for (a path of the workspace, a substring of the current file for ``old_string``, a diff
of the current content for ``unified_diff``, the current or a stale hash for a lock, ...), or an
outside change (write, touch with an exact mtime, delete). Every step runs on the reference and on
the target, each in its own workspace, and the two are compared by aspect:

``outcome``
    the call succeeded or failed (for payload-reporting tools: ``success``) alike;
``output``
    the fields of the output the seed fixes agree (per profile, ``COMPARED``);
``effects``
    the two workspaces hold the same entries with the same bytes afterwards.

The first divergence is shrunk by hypothesis to its shortest form and written as a scenario YAML
that expects what the reference did in the aspect that diverged, with a comment on how it was
found. The written file is checked: it must load, pass on the reference and fail on the target.

Where a seed leaves something open, the generator does not go there, or the comparison allows
every answer the seed allows, so the reference's choices are never imposed as the contract:
claude-code never sends an empty ``old_string``, an ``old_string`` equal to ``new_string`` or
one with overlapping occurrences, writes no CRLF, no symlinks and no content without a final
newline, never writes into a missing directory, never keeps an mtime while changing content, and
compares no message texts; gemini-safe-patch uses absolute paths only, compares no ``write_file``
output and no error shapes, never sends a diff whose context is ambiguous or whose header counts
are wrong, and accepts either count of versions where a failed call may or may not take one;
aptix-tul-004 compares neither ``message`` nor ``hash`` (the algorithm is open) and sends no BOM
and no lone CR; mcp-write-text-file compares no events.

hypothesis is needed only here: ``harness fuzz`` says how to install it when it is missing.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.drivers.fuzz_compare import (
    VersionSlack,
    _failed,
    compare_call,
    compare_effects,
    hunks_definite,
    make_diff,
    workspace_state,
)
from harness.run.options import timeout_argument
from harness.run.workspace import Workspace
from harness.targets.base import CallResult, Session, Target, TargetError, Unsupported
from harness.util.fileio import write_replacing

PROFILES = ("claude-code", "gemini-safe-patch", "aptix-tul-004", "mcp-write-text-file")

#: The workspace every sequence starts from.
GIVEN: dict[str, dict[str, str]] = {
    "claude-code": {"a.txt": "alpha\nbeta\ngamma beta\n", "b.txt": "one\ntwo\nthree\n", "sub/c.txt": "x = 1\ny = 2\n"},
    "gemini-safe-patch": {"a.txt": "alpha\nbeta\ngamma\nbeta\ndelta\n", "b.txt": "one\ntwo\nthree\n",
                          "sub/c.txt": "x = 1\ny = 2\n"},
    "aptix-tul-004": {"a.txt": "alpha\n", "sub/c.txt": "x = 1\n"},
    "mcp-write-text-file": {"a.txt": "alpha\n", "sub/c.txt": "x = 1\n"},
}

#: Where a divergence in each tool is judged (the `source` of a written scenario).
SOURCES = {
    "Read": "001-claude-code-read-write-edit.md §Read Tool Behavior + §Session State Model",
    "Write": "001-claude-code-read-write-edit.md §Write Tool Behavior + §Session State Model",
    "Edit": "001-claude-code-read-write-edit.md §Edit Tool Behavior + §Session State Model",
    "read_file": "004-gemini-cli-safe-patch.md §4.1 read_file Logic + Versioning",
    "read_many_files": "004-gemini-cli-safe-patch.md §4.1 read_many_files Logic + Versioning",
    "write_file": "004-gemini-cli-safe-patch.md §1, §4.1 (write_file, a file-write operation)",
    "safe_patch": "004-gemini-cli-safe-patch.md §4.2 The safe_patch Tool + §5.4 Detailed Execution Flow",
    "workspace_create_file": "002-aptix-tul-004-create-file.md §4.3 Response Payload + §5.1 Core Behavior Rules",
    "write_text_file": "003-mcp-write-text-file.md Output + Error Handling + Implementation Contract",
}


LINES = ("alpha", "beta", "gamma", "delta", "x = 1", "price $& $$ \\1", "")
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class HypothesisMissing(RuntimeError):
    """hypothesis is not installed; ``harness fuzz`` needs it."""


def _hypothesis():
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise HypothesisMissing("harness fuzz needs hypothesis: pip install 'file-tool-conformance[fuzz]'") from None
    import hypothesis
    return hypothesis


@dataclass(eq=False)
class Divergence(AssertionError):
    """The target and the reference differ; carries the sequence and the expectation to write."""

    profile: str
    given: dict[str, str]
    steps: list[dict[str, Any]]
    aspect: str
    detail: str
    expect: dict[str, Any] | None = None
    then: dict[str, Any] | None = None

    def __str__(self) -> str:
        return f"{self.aspect} diverges at step {len(self.steps)} ({self.steps[-1].get('tool') or self.steps[-1].get('action')}): {self.detail}"


@dataclass
class FuzzResult:
    """What one fuzz run found."""

    profile: str
    examples: int
    seconds: float
    divergence: Divergence | None = None
    scenario_file: Path | None = None
    checks: dict[str, str] = field(default_factory=dict)  # target -> verdict of the written scenario


# --- comparing ------------------------------------------------------------------------------------


def _build_machine(profile: str, reference: Target, target: Target, budget: _Budget):
    """Returns the RuleBasedStateMachine class for ``profile``."""
    _hypothesis()  # raises HypothesisMissing (said to the user) when it is not installed
    from hypothesis import assume, reject
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, rule

    given = GIVEN[profile]
    parent = _workspace_parent()
    declared = _declared_tools(profile)
    text_lines = st.lists(st.sampled_from(LINES), min_size=0, max_size=4)
    # Contents end with a newline (claude-code open question 10), and claude-code writes none empty.
    content_lf = (st.lists(st.sampled_from(LINES), min_size=1 if profile == "claude-code" else 0, max_size=4)
                  .map(lambda lines: "".join(line + "\n" for line in lines)))
    names = sorted(given) + ["new.txt", "sub/new.txt"]

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            budget.example()
            self.steps: list[dict[str, Any]] = []
            self.slack = VersionSlack()
            self.hashes: list[str] = [EMPTY_SHA256]
            self.sessions: list[Session] = []
            self.workspaces: list[Workspace] = []
            try:  # hypothesis tears down only a machine that was made: a failure here cleans up itself
                for _ in range(2):
                    self.workspaces.append(Workspace("harness-fuzz-", parent))
                self.ws_ref, self.ws_tgt = self.workspaces
                for ws in self.workspaces:
                    ws.populate({"files": dict(given)}, {"workspace": str(ws.root)})
                self.sessions.append(_open(reference, profile, self.ws_ref))
                self.sessions.append(_open(target, profile, self.ws_tgt))
            except BaseException:
                self.teardown()
                raise

        def teardown(self) -> None:
            for session in self.sessions:
                try:
                    session.close()
                except Exception:  # noqa: BLE001 - a session that cannot close must not hide the finding
                    pass
            for ws in self.workspaces:
                ws.remove()

        # -- what the reference's workspace holds now (arguments are drawn from it) --

        def text(self, rel: str) -> str | None:
            path = self.ws_ref.path(rel)
            try:
                return path.read_text("utf-8") if path.is_file() and not path.is_symlink() else None
            except (OSError, UnicodeDecodeError):
                return None

        # -- running one step on both sides --

        def call(self, tool: str, args: dict[str, Any]) -> None:
            # Only calls the profile declares, with arguments its schema accepts (profile.yaml).
            assume(tool in declared and declared[tool].follows(args))
            step = {"tool": tool, "args": args}
            self.steps.append(step)
            results = []
            for side, (session, ws) in enumerate(zip(self.sessions, (self.ws_ref, self.ws_tgt))):
                concrete = _expand(args, str(ws.root))
                try:
                    results.append(session.call(tool, concrete))
                except (TargetError, Unsupported) as exc:
                    if side == 0:
                        raise  # the reference broke: a harness problem, not a finding
                    self.diverge("outcome", f"the target broke: {exc}", {"output": {"$any": True}} if not results[0].failed else {"error": True})
            ref, tgt = results
            self.account(tool, args, ref)  # first: a failed patch's own version may be taken or not
            found = compare_call(tool, ref, tgt, str(self.ws_ref.root), str(self.ws_tgt.root), self.slack)
            if found:
                aspect, detail, expect = found
                self.diverge(aspect, detail, expect)
            self.check_effects()

        def account(self, tool: str, args: dict[str, Any], ref: CallResult) -> None:
            """Widens the version slack where the seed lets a failed call take versions or not."""
            if profile != "gemini-safe-patch" or not _failed(tool, ref):
                if profile == "gemini-safe-patch" and not ref.failed:
                    for state in _states(ref.output):
                        self.hashes.append(state.get("sha256", EMPTY_SHA256))
                return
            if tool == "safe_patch":
                self.slack.fewer += 1
                state = (ref.output or {}).get("latest_file_state") or {}
                self.hashes.append(state.get("sha256", EMPTY_SHA256))
            elif tool == "read_many_files":
                self.slack.more += len(args.get("paths", ()))
            else:
                self.slack.more += 1

        def act(self, action: str, rel: str, **keys: Any) -> None:
            step = {"action": action, "path": rel, **{k: v for k, v in keys.items() if v is not None}}
            self.steps.append(step)
            for ws in (self.ws_ref, self.ws_tgt):
                for session in self.sessions:
                    session.before_action()
                ws.act(action, rel, content=keys.get("content"), mtime=keys.get("mtime"))
            self.check_effects()

        def check_effects(self) -> None:
            found = compare_effects(workspace_state(self.ws_ref), workspace_state(self.ws_tgt))
            if found:
                detail, then = found
                self.diverge("effects", detail, None, then)

        def diverge(self, aspect: str, detail: str, expect: dict[str, Any] | None,
                    then: dict[str, Any] | None = None) -> None:
            budget.found()
            raise Divergence(profile, dict(given), [dict(step) for step in self.steps], aspect, detail, expect, then)

        # -- outside changes, as another process would make them --

        @rule(kind=st.sampled_from(["write", "write", "touch", "delete"]), rel=st.sampled_from(sorted(given)),
              content=content_lf, mtime=st.sampled_from(
                  [None, "-5s", "+500ms", "+1ms", "same"] if profile != "claude-code" else [None, "-5s", "+500ms", "+1ms"]))
        def outside_change(self, kind: str, rel: str, content: str, mtime: str | None) -> None:
            """Another process writes (maybe keeping size and mtime), touches or deletes a file."""
            old = self.text(rel)
            if old is None:
                reject()
            if kind == "delete":
                self.act("delete", rel)
            elif kind == "touch":
                assume(mtime != "same")
                self.act("touch", rel, mtime=mtime)
            else:
                if mtime == "same":  # a change that keeps size and mtime: same length, other bytes
                    assume(len(content.encode()) == len(old.encode()) and content != old)
                self.act("write", rel, content=content, mtime=mtime)

        # -- the profile's tools --

        if profile == "claude-code":
            @rule(rel=st.sampled_from(names), relative=st.booleans())
            def Read(self, rel: str, relative: bool) -> None:
                self.call("Read", {"file_path": rel if relative else f"${{workspace}}/{rel}"})

            @rule(rel=st.sampled_from(names), content=content_lf)
            def Write(self, rel: str, content: str) -> None:
                self.call("Write", {"file_path": f"${{workspace}}/{rel}", "content": content})

            @rule(rel=st.sampled_from(names), data=st.data(), new=st.sampled_from(LINES + ("beta", "$&$'", "\\1"))
                  , replace_all=st.sampled_from([None, False, True]))
            def Edit(self, rel: str, data: Any, new: str, replace_all: bool | None) -> None:
                current = self.text(rel) or "alpha\nbeta\n"
                words = sorted(set(re.findall(r"\S+", current)))
                if words and data.draw(st.booleans()):  # a word of the file: often there more than once
                    old = data.draw(st.sampled_from(words))
                else:
                    start = data.draw(st.integers(0, max(len(current) - 1, 0)))
                    end = data.draw(st.integers(start + 1, min(len(current), start + 12)))
                    old = current[start:end]
                assume(old and old != new and not _overlaps(current, old))
                args = {"file_path": f"${{workspace}}/{rel}", "old_string": old, "new_string": new}
                if replace_all is not None:
                    args["replace_all"] = replace_all
                self.call("Edit", args)

        if profile == "gemini-safe-patch":
            @rule(rel=st.sampled_from(names))
            def read_file(self, rel: str) -> None:
                self.call("read_file", {"file_path": f"${{workspace}}/{rel}"})

            @rule(rels=st.lists(st.sampled_from(names), min_size=1, max_size=3))
            def read_many_files(self, rels: list[str]) -> None:
                self.call("read_many_files", {"paths": [f"${{workspace}}/{rel}" for rel in rels]})

            @rule(rel=st.sampled_from(names[:-1]), content=content_lf)
            def write_file(self, rel: str, content: str) -> None:
                self.call("write_file", {"file_path": f"${{workspace}}/{rel}", "content": content})

            @rule(rel=st.sampled_from(names), data=st.data())
            def safe_patch(self, rel: str, data: Any) -> None:
                current = self.text(rel)
                base = current if current is not None else ""
                source = data.draw(st.sampled_from(["current", "stale"]))
                before = base if source == "current" else data.draw(content_lf)
                after = data.draw(_edited(before))
                assume(after != before)
                context = data.draw(st.integers(0, 3))
                drift = data.draw(st.sampled_from([0, 0, 1, -1, 3]))
                diff = make_diff(before, after, context, drift)
                assume(diff is not None and hunks_definite(diff, base, drift))
                lock = data.draw(st.sampled_from(["current", "current", "stale", "zero"]))
                sha = {"current": hashlib.sha256(base.encode()).hexdigest(),
                       "stale": data.draw(st.sampled_from(self.hashes)),
                       "zero": "0" * 64}[lock]
                self.call("safe_patch", {"file_path": f"${{workspace}}/{rel}", "unified_diff": diff,
                                         "base_content_sha256": sha})

        if profile == "aptix-tul-004":
            paths = names + ["deep/er/x.txt", "./sub//d.txt", "../escape.txt", "/abs.txt", "sub/../e.txt"]

            @rule(path=st.sampled_from(paths), lines=text_lines, crlf=st.booleans(),
                  overwrite=st.sampled_from([None, False, True]))
            def workspace_create_file(self, path: str, lines: list[str], crlf: bool, overwrite: bool | None) -> None:
                args: dict[str, Any] = {"path": path, "content": ("\r\n" if crlf else "\n").join(lines)}
                if overwrite is not None:
                    args["overwrite"] = overwrite
                self.call("workspace_create_file", args)

        if profile == "mcp-write-text-file":
            paths = [f"${{workspace}}/{name}" for name in names] + [
                "${workspace}/missing/x.txt", "${workspace}/sub", "relative.txt", "${workspace}//sub/./e.txt"]

            @rule(path=st.sampled_from(paths), lines=text_lines, accent=st.booleans())
            def write_text_file(self, path: str, lines: list[str], accent: bool) -> None:
                content = "\n".join(lines) + ("é" if accent else "")
                self.call("write_text_file", {"path": path, "content": content})

    Machine.__name__ = f"Fuzz_{profile.replace('-', '_')}"
    return Machine


def _declared_tools(profile: str) -> dict[str, Any]:
    """The profile's tools as its ``profile.yaml`` declares them (names, argument schemas)."""
    from harness.scenario import profiles
    return dict(profiles.builtin()[profile].tools)


def _workspace_parent() -> str | None:
    """The folder for the workspaces, as for ``harness run`` (a memory file system where present)."""
    from harness.run.options import RunOptions
    return RunOptions().workspace_parent()


def _states(output: Any) -> list[dict[str, Any]]:
    if isinstance(output, list):
        return [item for item in output if isinstance(item, dict)]
    if isinstance(output, dict):
        if isinstance(output.get("latest_file_state"), dict):
            return [output["latest_file_state"]]
        if "sha256" in output:
            return [output]
    return []


def _open(target: Target, profile: str, workspace: Workspace) -> Session:
    return target.open(profile, workspace.root, {})


def _expand(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("${workspace}", root)
    if isinstance(value, list):
        return [_expand(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, root) for key, item in value.items()}
    return value


def _overlaps(text: str, old: str) -> bool:
    """True when occurrences of ``old`` in ``text`` overlap (the count is then open, seed 001)."""
    positions = [m.start() for m in re.finditer(f"(?={re.escape(old)})", text)]
    return any(b - a < len(old) for a, b in zip(positions, positions[1:]))


def _edited(text: str):
    """A strategy for ``text`` with one line replaced, inserted or removed."""
    from hypothesis import strategies as st
    lines = text.splitlines(keepends=True)

    @st.composite
    def edit(draw):
        out = list(lines)
        kind = draw(st.sampled_from(["replace", "insert", "remove"] if out else ["insert"]))
        new_line = draw(st.sampled_from(LINES)) + "\n"
        if kind == "insert":
            out.insert(draw(st.integers(0, len(out))), new_line)
        else:
            index = draw(st.integers(0, len(out) - 1))
            if kind == "replace":
                out[index] = new_line
            else:
                del out[index]
        return "".join(out)
    return edit()


class _Budget:
    """Counts examples, shows progress on a terminal, and ends generation after ``seconds``."""

    def __init__(self, seconds: float | None, progress: Callable[[str], None] | None) -> None:
        self.started = time.monotonic()
        self.seconds = seconds
        self.examples = 0
        self.found_at: float | None = None
        self.progress = progress

    def example(self) -> None:
        self.examples += 1
        if self.progress and self.examples % 5 == 0:
            state = "shrinking" if self.found_at else "searching"
            self.progress(f"{self.examples} examples, {time.monotonic() - self.started:.0f} s, {state}")

    def found(self) -> None:
        if self.found_at is None:
            self.found_at = time.monotonic()

    def over(self) -> bool:
        return self.seconds is not None and time.monotonic() - self.started > self.seconds


def fuzz(target: Target, profile: str, *, reference: Target | None = None, max_examples: int = 200,
         seed: int = 0, max_seconds: float | None = None, out: Path | None = None,
         progress: Callable[[str], None] | None = None, target_spec: str | None = None) -> FuzzResult:
    """Fuzzes ``target`` against the reference on ``profile``; writes the shrunk divergence under ``out``."""
    hypothesis = _hypothesis()
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import get_state_machine_test

    if profile not in PROFILES:
        raise ValueError(f"harness fuzz knows no profile {profile!r} (profiles: {', '.join(PROFILES)})")
    if reference is None:
        from harness.run import assemble
        reference = assemble.target("reference")
    reference.start()
    target.start()
    budget = _Budget(max_seconds, progress)
    machine = _build_machine(profile, reference, target, budget)
    started = time.monotonic()
    divergence = None
    # Batches of examples, each with a seed derived from ``seed``: the run is the same for the same
    # seed, and the time limit is checked between batches (never inside one, where it would make
    # hypothesis' replays disagree).
    batch = min(max_examples, 20)
    for index in range((max_examples + batch - 1) // batch):
        if budget.over():
            break
        config = settings(max_examples=min(batch, max_examples - index * batch), deadline=None, database=None,
                          stateful_step_count=12, suppress_health_check=list(HealthCheck), print_blob=False,
                          report_multiple_bugs=False, phases=[Phase.generate, Phase.shrink])
        test = hypothesis.seed(seed * 10_007 + index)(get_state_machine_test(machine, settings=config))
        try:
            test()
        except Divergence as found:
            divergence = found
        except BaseExceptionGroup as group:  # e.g. hypothesis' FlakyFailure around the divergence
            inner = group.subgroup(lambda exc: isinstance(exc, Divergence))
            if inner is None:
                raise
            divergence = _first(inner)
        if divergence is not None:
            break
    result = FuzzResult(profile, budget.examples, time.monotonic() - started, divergence)
    if divergence is not None and out is not None:
        result.scenario_file = write_scenario(divergence, out, seed=seed, examples=budget.examples,
                                              target_spec=target_spec or target.spec)
        result.checks = check_scenario(result.scenario_file, reference, target)
    return result


def _first(group: BaseExceptionGroup) -> Divergence:
    for exc in group.exceptions:
        return _first(exc) if isinstance(exc, BaseExceptionGroup) else exc  # type: ignore[return-value]
    raise LookupError("empty exception group")


def scenario_document(divergence: Divergence) -> dict[str, Any]:
    """Returns the scenario (as YAML-ready data) that replays ``divergence``."""
    steps = [dict(step) for step in divergence.steps]
    last = steps[-1]
    what = last.get("tool") or last.get("action")
    if divergence.expect is not None and "tool" in last:
        last["expect"] = divergence.expect
    if divergence.then is not None:
        if "tool" in last:
            last["then"] = divergence.then
    digest = hashlib.sha256(yaml.safe_dump(steps, sort_keys=True).encode()).hexdigest()[:8]
    tool = next((s["tool"] for s in reversed(steps) if "tool" in s), what)
    document: dict[str, Any] = {
        "id": f"{divergence.profile}/fuzz/{str(what).lower().replace('_', '-')}-{divergence.aspect}-{digest}",
        "profile": divergence.profile,
        "title": f"Found by fuzzing: {divergence.aspect} of {what} after {len(steps) - 1} earlier step(s)",
        "source": SOURCES.get(str(tool), divergence.profile),
        "tags": ["fuzz", divergence.aspect],
        "given": {"files": dict(divergence.given)},
        "steps": steps,
    }
    if divergence.then is not None and "tool" not in last:
        document["then"] = divergence.then
    return document


class _Dumper(yaml.SafeDumper):
    """Writes text with line breaks or special characters as one double-quoted line ("a\\nb\\n")."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = '"' if any(ch in data for ch in "\n\r\t") or data != data.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def write_scenario(divergence: Divergence, out: Path, *, seed: int, examples: int, target_spec: str) -> Path:
    """Writes the divergence as ``<out>/<profile>/fuzz/<name>.yaml`` and returns the path."""
    document = scenario_document(divergence)
    path = Path(out) / (document["id"] + ".yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = Path(__file__).resolve().parent.parent / "schema" / "scenario.schema.json"
    header = [
        f"# yaml-language-server: $schema={os.path.relpath(schema, path.parent.resolve())}",
        f"# Found by `harness fuzz --target {target_spec} --profile {divergence.profile} --seed {seed}` after",
        f"# {examples} generated sequences, shrunk to the shortest one on which the target and the reference",
        f"# differ ({divergence.aspect}): {divergence.detail}",
        "# The expectation is what the reference did, in the aspect that diverged only, where the seed",
        "# decides it; review it against the seed section in `source` before committing it.",
    ]
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    write_replacing(path, "\n".join(line[:200] for line in header) + "\n" + body)
    return path


def check_scenario(path: Path, reference: Target, target: Target) -> dict[str, str]:
    """Runs the written scenario on both: it must pass on the reference and fail on the target."""
    from harness.run import assemble
    from harness.scenario.loader import ScenarioError, load_file
    try:
        (scenario,) = load_file(path)
    except ScenarioError as exc:
        return {"load": f"invalid: {exc}"}
    out = {}
    for name, which in (("reference", reference), ("target", target)):
        runner = assemble.runner(which, record_states=False)
        try:
            out[name] = runner.run(scenario).verdict.value
        finally:  # the targets go on (the caller stops them): the workspaces and their enclosure go now
            runner.release()
    return out


# --- the command ----------------------------------------------------------------------------------


MAX_EXAMPLES = 1_000_000  # sequences per profile one run may ask for


def _examples(text: str) -> int:
    """``--max-examples``'s type: a whole number from 1 to MAX_EXAMPLES, a usage error (exit 2) otherwise
    (0 ended in a ZeroDivisionError, -1 in Hypothesis's InvalidArgument, both tracebacks)."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_EXAMPLES:
        from harness.util.printable import shown
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {MAX_EXAMPLES} is needed, not {shown(text)!r}")
    return value


def add_parser(sub: Any) -> None:
    """Adds ``harness fuzz`` to the CLI."""
    fuzz_parser = sub.add_parser("fuzz", help="differential fuzzing of a target against the reference")
    fuzz_parser.add_argument("--target", required=True, help="the target (as for harness run)")
    fuzz_parser.add_argument("--profile", action="append", default=[], choices=PROFILES,
                             help="fuzz this profile (repeatable; default: all)")
    fuzz_parser.add_argument("--max-examples", type=_examples, default=200,
                             help="generated sequences per profile, at least 1 (default 200)")
    fuzz_parser.add_argument("--seed", type=int, default=0, help="the random seed: same seed, same sequences (default 0)")
    fuzz_parser.add_argument("--out", type=Path, default=Path("fuzz-findings"),
                             help="where divergences are written as scenarios (default ./fuzz-findings)")
    fuzz_parser.add_argument("--max-seconds", type=timeout_argument, default=None,
                             help="start no new batch of 20 sequences after this long per profile (above 0, at most 86400)")
    fuzz_parser.add_argument("--timeout", type=timeout_argument, default=10.0, help="per-call timeout in seconds (default 10)")
    fuzz_parser.set_defaults(handler=cmd_fuzz)


def cmd_fuzz(args: Any) -> int:
    """Runs ``harness fuzz``; exit 0 without a divergence, 1 with one, 2 on a usage error."""
    from harness.run import assemble
    from harness.run.options import RunOptions
    try:
        _hypothesis()
        target = assemble.target(args.target, RunOptions(targets=(args.target,), timeout=args.timeout))
    except (HypothesisMissing, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    interactive = sys.stderr.isatty()
    found = 0
    try:
        for profile in args.profile or PROFILES:
            def progress(text: str, profile: str = profile) -> None:
                if interactive:
                    print(f"\r\x1b[2Kfuzz {profile}: {text}", end="", file=sys.stderr, flush=True)
            result = fuzz(target, profile, max_examples=args.max_examples, seed=args.seed,
                          max_seconds=args.max_seconds, out=args.out, progress=progress, target_spec=args.target)
            if interactive:
                print("\r\x1b[2K", end="", file=sys.stderr)
            if result.divergence is None:
                print(f"fuzz {profile}: no divergence in {result.examples} sequences ({result.seconds:.1f} s)")
                continue
            found += 1
            print(f"fuzz {profile}: {result.divergence} ({result.examples} sequences, {result.seconds:.1f} s)")
            checks = ", ".join(f"{k}: {v}" for k, v in result.checks.items())
            print(f"  wrote {result.scenario_file} ({checks})")
    finally:
        target.stop()
    return 1 if found else 0
