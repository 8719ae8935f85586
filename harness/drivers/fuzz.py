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

import difflib
import hashlib
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.run.options import timeout_argument
from harness.util.fileio import write_replacing
from harness.targets.base import CallResult, Session, Target, TargetError, Unsupported
from harness.run.workspace import Workspace

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

#: The output fields each tool's seed fixes (None: the whole output; (): none, outcome and effects only).
COMPARED: dict[str, tuple[str, ...] | None] = {
    "Read": (), "Write": (), "Edit": (),
    "read_file": ("content", "sha256", "version"),
    "read_many_files": ("content", "sha256", "version"),
    "write_file": (),
    "safe_patch": ("success", "message", "latest_file_state.content", "latest_file_state.sha256",
                   "latest_file_state.version"),
    "workspace_create_file": ("success", "errorCode", "path", "sizeBytes", "created", "overwritten"),
    "write_text_file": None,
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


def _field(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


_MISSING = object()


def _unroot(value: Any, root: str) -> Any:
    """Returns ``value`` with the workspace root written as ``${workspace}``."""
    if isinstance(value, str):
        return value.replace(root, "${workspace}")
    if isinstance(value, list):
        return [_unroot(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _unroot(item, root) for key, item in value.items()}
    return value


def _failed(tool: str, result: CallResult) -> bool:
    if result.failed:
        return True
    output = result.output
    return isinstance(output, dict) and output.get("success") is False


@dataclass
class VersionSlack:
    """How far a target's version may lie from the reference's where the seed leaves it open.

    The reference takes a version for every failed safe_patch and none for a failed read; the
    seed allows a failed patch to take none (``fewer``) and a failed read to take one per file
    (``more``).
    """

    fewer: int = 0
    more: int = 0

    def allowed(self, version: int) -> list[int]:
        """Returns every version the seed allows where the reference said ``version``."""
        return list(range(max(version - self.fewer, 1), version + self.more + 1))


def compare_call(tool: str, ref: CallResult, tgt: CallResult, ref_root: str, tgt_root: str,
                 slack: VersionSlack) -> tuple[str, str, dict[str, Any]] | None:
    """Returns (aspect, detail, expectation) for the first way ``tgt`` differs from ``ref``, or None."""
    ref_failed, tgt_failed = _failed(tool, ref), _failed(tool, tgt)
    if ref_failed != tgt_failed:
        if ref.failed or tgt.failed:
            expect = {"error": True} if ref.failed else {"output": {"$any": True}}
            if not ref.failed and isinstance(ref.output, dict) and "success" in ref.output:
                expect = {"output": {"$subset": {"success": ref.output["success"]}}}
        else:
            expect = {"output": {"$subset": {"success": ref.output["success"]}}}
        said = "failed" if tgt_failed else "succeeded"
        return "outcome", f"the target {said}, the reference did not", expect
    fields = COMPARED[tool]
    if ref.failed:
        if fields is None:  # the seed's error table fixes code and message
            want = {"code": ref.error.get("code"), "message": _unroot(ref.error.get("message"), ref_root)}
            got = {"code": tgt.error.get("code"), "message": _unroot(tgt.error.get("message"), tgt_root)}
            if want != got:
                return "output", f"error {got} instead of {want}", {"error": want}
        return None
    ref_out, tgt_out = _unroot(ref.output, ref_root), _unroot(tgt.output, tgt_root)
    if fields is None:
        if ref_out != tgt_out:
            return "output", f"output {tgt_out!r} instead of {ref_out!r}", {"output": ref_out}
        return None
    if not fields:
        return None
    if isinstance(ref_out, list):  # read_many_files: one state per file
        if not isinstance(tgt_out, list) or len(tgt_out) != len(ref_out):
            return "output", "a different number of file states", {"output": {"$len": len(ref_out)}}
        expected = [_expected_fields(item, fields, slack) for item in ref_out]
        for index, (want, got) in enumerate(zip(ref_out, tgt_out)):
            bad = _differing(want, got, fields, slack)
            if bad:
                return "output", f"[{index}].{bad}", {"output": [{"$subset": item} for item in expected]}
        return None
    bad = _differing(ref_out, tgt_out, fields, slack)
    if bad:
        return "output", bad, {"output": {"$subset": _expected_fields(ref_out, fields, slack)}}
    return None


def _differing(want: Any, got: Any, fields: tuple[str, ...], slack: VersionSlack) -> str | None:
    for name in fields:
        a, b = _field(want, name), _field(got, name)
        if name.endswith("version") and isinstance(a, int) and a is not _MISSING:
            if b not in slack.allowed(a):
                return f"{name}: {b if b is not _MISSING else '<missing>'} (the seed allows {slack.allowed(a)})"
        elif a != b:
            shown = "<missing>" if b is _MISSING else repr(b)
            return f"{name}: {shown} instead of {a!r}"
    return None


def _expected_fields(output: Any, fields: tuple[str, ...], slack: VersionSlack) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in fields:
        value = _field(output, name)
        if value is _MISSING:
            continue
        if name.endswith("version") and isinstance(value, int):
            allowed = slack.allowed(value)
            value = allowed[0] if len(allowed) == 1 else {"$any_of": allowed}
        head, _, rest = name.partition(".")
        if rest:
            out.setdefault(head, {"$subset": {}})["$subset"][rest] = value
        else:
            out[head] = value
    return out


def workspace_state(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Returns the compared state of every entry: type, bytes (as text when it is UTF-8), link target."""
    out = {}
    for rel, entry in workspace.state().items():
        entry = {key: entry[key] for key in ("type", "sha256", "size", "text", "target") if key in entry}
        out[rel] = entry
    return out


def compare_effects(ref: dict[str, dict[str, Any]], tgt: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """Returns (detail, then) when the two workspaces differ, else None."""
    differing = sorted(rel for rel in set(ref) | set(tgt) if {k: v for k, v in ref.get(rel, {}).items() if k != "text"}
                       != {k: v for k, v in tgt.get(rel, {}).items() if k != "text"})
    if not differing:
        return None
    files: dict[str, Any] = {}
    absent = []
    for rel in differing:
        entry = ref.get(rel)
        if entry is None:
            absent.append(rel)
        elif entry["type"] == "file":
            files[rel] = entry["text"] if "text" in entry else {"sha256": entry["sha256"], "size": entry["size"]}
        elif entry["type"] == "symlink":
            files[rel] = {"type": "symlink", "target": entry["target"]}
        else:
            files[rel] = {"type": "dir"}
    # A directory that is only there to hold a differing file needs no line of its own.
    files = {rel: want for rel, want in files.items()
             if not (want == {"type": "dir"} and any(other.startswith(rel + "/") for other in files))}
    then: dict[str, Any] = {}
    if files:
        then["files"] = files
    if absent:
        then["absent"] = absent
    shown = ", ".join(f"{rel} ({'missing' if rel not in tgt else tgt[rel].get('type')} on the target)" for rel in differing)
    return f"the workspaces differ: {shown}", then


# --- generating -----------------------------------------------------------------------------------


def _build_machine(profile: str, reference: Target, target: Target, budget: "_Budget"):
    """Returns the RuleBasedStateMachine class for ``profile``."""
    hypothesis = _hypothesis()
    from hypothesis import assume, strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

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
            assume(old is not None)
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


def make_diff(before: str, after: str, context: int, drift: int) -> str | None:
    """Returns a unified diff from ``before`` to ``after`` with ``context`` lines, headers moved by ``drift``."""
    lines = list(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                      "a/file", "b/file", n=context))
    if not lines:
        return None

    def moved(match: re.Match[str]) -> str:
        old_start, old_len, new_start, new_len = (int(g) if g is not None else None for g in match.groups())
        old_start = max(old_start + drift, 0 if old_len == 0 else 1)
        new_start = max(new_start + drift, 0 if new_len == 0 else 1)
        old = f"{old_start},{old_len}" if old_len is not None else str(old_start)
        new = f"{new_start},{new_len}" if new_len is not None else str(new_start)
        return f"@@ -{old} +{new} @@"

    text = "".join(lines)
    if drift:
        text = re.sub(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", moved, text, flags=re.M)
    return text


def hunks_definite(diff: str, current: str, drift: int) -> bool:
    """True when the seed decides where every hunk goes: its old lines occur at most once, or (with a
    correct header) at the place the header names; a hunk without old lines needs a correct header."""
    lines = current.splitlines(keepends=True)
    for header, body in re.findall(r"^@@ -(\d+)(?:,\d+)? [^\n]*@@\n((?:[ +\-][^\n]*\n)*)", diff, flags=re.M):
        old = [line[1:] for line in body.splitlines(keepends=True) if line[:1] in " -"]
        if not old:
            if drift:
                return False
            continue
        places = [i for i in range(len(lines) - len(old) + 1) if lines[i:i + len(old)] == old]
        if len(places) > 1 and (drift or int(header) - 1 not in places):
            return False
    return True


# --- running --------------------------------------------------------------------------------------


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
        from harness.targets.reference import ReferenceTarget
        reference = ReferenceTarget("reference")
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
        "source": SOURCES.get(tool, divergence.profile),
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
    from harness.scenario.loader import ScenarioError, load_file
    from harness.run.runner import Runner
    try:
        (scenario,) = load_file(path)
    except ScenarioError as exc:
        return {"load": f"invalid: {exc}"}
    out = {}
    for name, which in (("reference", reference), ("target", target)):
        runner = Runner(which, tmp=_workspace_parent())
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
    from harness.targets import make_target
    try:
        _hypothesis()
        target = make_target(args.target, timeout=args.timeout)
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
