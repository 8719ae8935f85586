"""``harness discover`` by experiment: a few calls in a scratch workspace decide what names cannot.

For the chosen profile, each profile tool has up to three candidate server tools (ranked by names,
argument names and descriptions: harness/drivers/discover.py). Each candidate is tried with the
calls its kind calls for, through the draft binding itself, on a server started as the run will
start it, in a scratch workspace the harness made and removes:

``write``  the tool writes ``alpha\\nbeta\\n`` into a new file: the file must then hold exactly that;
``read``   the harness writes that file, the tool reads it: the answer must hold both lines. Where
           the answer is an object, the fields holding the text, its SHA-256, its size, its path are
           located and become the draft's ``output`` projection; with an offset argument, reading
           from line 2 tells a 1-based offset from a 0-based one (``add: -1``);
``edit``   the harness writes the file (and the chosen read tool reads it first), the tool replaces
           ``beta`` by ``gamma``: the file must then hold ``alpha\\ngamma\\n``.

A candidate that fails its calls is dropped (the draft says why); the first that passes is chosen.
Then one failure is provoked per tool (a read of a missing file, a write onto a directory, an edit
of text that is not there): how the server said so (a JSON-RPC error, ``isError``, a field such as
``success: false``, or only its text) becomes the draft's ``failure.signals`` and ``message``, and,
for a profile whose errors carry codes, each provoked failure's message becomes a ``codes`` entry.
Every guess in the draft is marked with its evidence: ``# probe: ...`` for what a call showed,
``# check: ...`` for what only names suggest.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.drivers.discover_signals import code_prefix, failure_field, holds, key_expr, locate, sha256, text_signal

ALPHA = "alpha\nbeta\n"
#: A tool that cannot be probed is bound only when its names are this alike (else it is left unbound).
OTHER_BOUND = 0.6
EDITED = "alpha\ngamma\n"
LINES3 = "alpha\nbeta\ngamma\n"


@dataclass
class Outcome:
    """What the experiments found for one profile tool."""

    tool: str                      # the profile tool
    kind: str                      # read | write | edit | other
    chosen: Any = None             # the Guess that passed (discover.Guess), or None
    evidence: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "<tool>: why" for candidates that failed
    output: str | None = None      # a JMESPath projection
    output_evidence: str = ""
    signals: list[Any] | None = None
    message: str | None = None
    failure_evidence: str = ""
    codes: list[dict[str, Any]] = field(default_factory=list)
    offset_add: int | None = None


def kind_of(name: str, schema: dict[str, Any]) -> str:
    """Returns what a profile tool does, from its name and arguments: read, write, edit or other."""
    from harness.drivers.discover import tokens
    words = tokens(name)
    props = set((schema.get("properties") or {}) if isinstance(schema, dict) else {})
    if "paths" in props or "many" in words:
        return "other"  # several files at once: not probed
    if "unified_diff" in props or "patch" in words:
        return "other"  # a diff to turn into the server's edit shape: not probed
    if words & {"read", "get", "view", "cat"}:
        return "read"
    if words & {"edit", "replace"} or {"old_string", "new_string"} <= props:
        return "edit"
    if words & {"write", "create", "save", "put"}:
        return "write"
    return "other"


def anchored(spec: str) -> str:
    """Returns an mcp: spec whose words naming an existing relative file are made absolute, so the
    server still starts when its working folder is another one."""
    import os
    import shlex
    if not spec.startswith("mcp:"):
        return spec
    words = shlex.split(spec[len("mcp:"):])
    out = [str(Path(w).absolute()) if not os.path.isabs(w) and "/" in w and os.path.exists(w) else w for w in words]
    return "mcp:" + shlex.join(out)


class Lab:
    """A server started as the run will start it, and scratch workspaces the harness removes."""

    def __init__(self, spec: str, profile: Any, timeout: float) -> None:
        from harness.run import assemble
        from harness.run.options import RunOptions
        from harness.targets.mcp.target import McpTarget
        self.profile = profile
        self.scratch = Path(tempfile.mkdtemp(prefix="harness-discover-"))
        MASKS[str(self.scratch)] = "<scratch>"
        self.binding_file = self.scratch / "draft.yaml"
        self.home = self.scratch / "cwd"  # the server's working folder: a relative path lands in the scratch folder
        self.home.mkdir()
        # Built as a run builds it (harness/run/assemble.py); its workspaces and working folder are the scratch folder's.
        target = assemble.target(spec, RunOptions(targets=(spec,), timeout=timeout, tmp=self.scratch))
        if not isinstance(target, McpTarget):
            raise ValueError(f"{spec!r} is no MCP server")
        self.target = target
        self.target.use_cwd(str(self.home))  # a relative path lands in the scratch folder
        self.count = 0

    def close(self) -> None:
        try:
            self.target.stop()
        finally:
            MASKS.pop(str(self.scratch), None)
            shutil.rmtree(self.scratch, ignore_errors=True)

    def use(self, text: str) -> None:
        """Makes ``text`` (a draft binding) the one the next calls go through."""
        from harness.targets import bindings
        self.binding_file.write_text(text)
        self.target.binding = bindings.load(self.binding_file)

    def workspace(self) -> Path:
        self.count += 1
        folder = self.scratch / f"ws{self.count}"
        folder.mkdir()
        return folder

    def path(self, workspace: Path, name: str) -> str:
        return name if self.profile.paths == "workspace-relative" else str(workspace / name)

    def session(self, workspace: Path) -> Any:
        return self.target.open(self.profile.name, workspace, {})


def _observe(session: Any, tool: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any] | None, str, str]:
    """Calls ``tool``; returns (output, error, channel, a short account) and never raises for a tool's answer."""
    from harness.targets.base import TargetError, Unsupported
    try:
        result = session.call(tool, args)
    except Unsupported as exc:
        return None, {"message": str(exc)}, "unsupported", f"not callable: {exc}"
    except TargetError as exc:
        return None, {"message": str(exc).splitlines()[0]}, "broken", f"broke: {str(exc).splitlines()[0][:160]}"
    channel = result.extra.get("channel", "result") if isinstance(result.extra, dict) else "result"
    if result.error is not None:
        return None, result.error, channel, f"failed ({channel}): {_short(result.error.get('message'))}"
    return result.output, None, channel, f"answered {_short(result.output)}"


#: Folders named in accounts as a placeholder (the scratch folder's name is random): see Lab.
MASKS: dict[str, str] = {}


#: What varies between probes, masked so that a draft is the same each time: a time, a random hex name.
VOLATILE = ((re.compile(r"\b[0-9]+(?:\.[0-9]+)?\s?ms\b"), "<n>ms"),
            (re.compile(r"(?<=[._-])[0-9a-f]{12,}(?![0-9a-zA-Z])"), "<random>"))


def _short(value: Any, size: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(str(text).split())
    for folder, shown in MASKS.items():
        text = text.replace(folder, shown)
    for pattern, shown in VOLATILE:
        text = pattern.sub(shown, text)
    return text if len(text) <= size else text[:size] + "..."


def _as_text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def run_experiments(lab: Lab, candidates: dict[str, list[Any]], draft: Callable[[dict[str, Any], dict[str, Outcome] | None], str],
                    schemas: dict[str, dict[str, Any]] | None = None) -> dict[str, Outcome]:
    """Tries each profile tool's candidates; returns what was found per profile tool.

    ``draft(chosen, outcomes)`` writes the binding text for the guesses chosen so far (profile tool
    -> Guess), so every call goes through the draft as it will be written."""
    profile = lab.profile
    outcomes = {name: Outcome(name, kind_of(name, tool.arguments)) for name, tool in profile.tools.items()}
    chosen: dict[str, Any] = {}
    order = sorted(outcomes, key=lambda n: ["read", "write", "edit", "other"].index(outcomes[n].kind))
    for name in order:
        outcome = outcomes[name]
        options = candidates.get(name) or []
        if outcome.kind == "other":
            if options and options[0].score >= OTHER_BOUND:
                outcome.chosen = options[0]
                outcome.evidence.append("not probed (several files or a diff per call): the names decide")
            elif options:
                outcome.rejected.append(f"{options[0].tool}: not probed (several files or a diff per call), and only "
                                        f"{options[0].score:.2f} alike: a wrong shape would make every scenario an error")
            continue
        for guess in options:
            trial = dict(chosen, **{name: guess})
            lab.use(draft(trial, None))
            ok, account = _try(lab, outcome, name, chosen, outcomes)
            if ok and outcome.kind == "write":
                ok, account = _overwrite(lab, name, guess, chosen, outcomes, (schemas or {}).get(guess.tool, {}),
                                         lambda: lab.use(draft(dict(chosen, **{name: guess}), None)),  # noqa: B023 (called at once)
                                         account)
            if ok:
                outcome.chosen = guess
                outcome.evidence.append(account)
                chosen[name] = guess
                break
            outcome.rejected.append(f"{guess.tool}: {account}")
        if outcome.chosen is not None:
            lab.use(draft(chosen, None))  # the answers as the server gives them: no projection, no signals yet
            _provoke(lab, outcome, name, chosen, outcomes)
    return outcomes


def _try(lab: Lab, outcome: Outcome, name: str, chosen: dict[str, Any], outcomes: dict[str, Outcome]) -> tuple[bool, str]:
    args_of = _args_of(lab.profile.tools[name].arguments)
    workspace = lab.workspace()
    session = lab.session(workspace)
    try:
        if outcome.kind == "write":
            target = workspace / "probe.txt"
            output, error, _channel, account = _observe(session, name, args_of(lab.path(workspace, "probe.txt"), content=ALPHA))
            held = target.read_bytes().decode("utf-8", "replace") if target.is_file() else None
            if held == ALPHA:
                _write_projection(outcome, lab.profile.tools[name], output, lab.path(workspace, "probe.txt"))
                return True, f"probe: wrote probe.txt; the file then held exactly the content sent ({account})"
            return False, f"the write left {'no file' if held is None else repr(held[:40])} ({account})"
        if outcome.kind == "read":
            (workspace / "probe.txt").write_text(ALPHA)
            output, error, _channel, account = _observe(session, name, args_of(lab.path(workspace, "probe.txt")))
            if error is not None or "alpha" not in _as_text(output) or "beta" not in _as_text(output):
                return False, f"the read did not return the file's lines ({account})"
            _read_projection(outcome, lab.profile.tools[name], output, lab.path(workspace, "probe.txt"))
            _offset_base(lab, outcome, name)
            return True, f"probe: read back a file the harness wrote; both lines came back ({account})"
        if outcome.kind == "edit":
            (workspace / "probe.txt").write_text(ALPHA)
            path = lab.path(workspace, "probe.txt")
            reader = next((n for n, o in outcomes.items() if o.kind == "read" and n in chosen), None)
            if reader is not None:
                _observe(session, reader, _args_of(lab.profile.tools[reader].arguments)(path))
            output, error, _channel, account = _observe(session, name, args_of(path, old="beta", new="gamma"))
            held = (workspace / "probe.txt").read_text()
            if held == EDITED:
                return True, f"probe: replaced beta by gamma; the file then held alpha, gamma ({account})"
            return False, f"the edit left {held!r} ({account})"
    finally:
        session.close()
    return False, "not probed"


def _overwrite(lab: Lab, name: str, guess: Any, chosen: dict[str, Any], outcomes: dict[str, Outcome],
               schema: dict[str, Any], redraft: Callable[[], None], created: str) -> tuple[bool, str]:
    """Overwrites an existing file (read first with the chosen read tool); when that fails, sends the
    defaults of the tool's optional choice arguments explicitly (``mode: rewrite``) and tries again."""
    def attempt() -> tuple[bool, str]:
        workspace = lab.workspace()
        (workspace / "probe.txt").write_text(ALPHA)
        path = lab.path(workspace, "probe.txt")
        session = lab.session(workspace)
        try:
            reader = next((n for n, o in outcomes.items() if o.kind == "read" and n in chosen), None)
            if reader is not None:
                _observe(session, reader, _args_of(lab.profile.tools[reader].arguments)(path))
            _o, _e, _c, account = _observe(session, name, _args_of(lab.profile.tools[name].arguments)(path, content=EDITED))
        finally:
            session.close()
        return (workspace / "probe.txt").read_text() == EDITED, account
    ok, account = attempt()
    if ok:
        return True, created + "; overwrote an existing file too"
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    taken = {arg for arg, _value, _comment in guess.args}
    added = []
    for arg, spec in props.items():
        if arg in taken or not isinstance(spec, dict) or not isinstance(spec.get("enum"), list):
            continue
        value = spec.get("default", next((v for v in spec["enum"] if str(v).lower() in ("rewrite", "overwrite", "replace", "write")),
                                         None))
        if value is not None:
            added.append((arg, {"const": value}, f"probe: an overwrite without it failed ({account}); with it, it worked"))
    if not added:
        return True, created + f"; an overwrite of an existing file failed ({account})"
    guess.args.extend(added)
    redraft()
    again, account2 = attempt()
    if again:
        return True, created + "; overwrote an existing file once " + ", ".join(a for a, _v, _c in added) + " was sent"
    del guess.args[-len(added):]
    redraft()
    return True, created + f"; an overwrite of an existing file failed ({account})"


def _args_of(schema: dict[str, Any]) -> Callable[..., dict[str, Any]]:
    """Returns a builder of a profile call's arguments by role (path, content, old, new)."""
    props = list((schema.get("properties") or {}) if isinstance(schema, dict) else {})
    path_arg = next((p for p in props if p in ("file_path", "path")), props[0] if props else "path")

    def build(path: str, content: str | None = None, old: str | None = None, new: str | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {path_arg: path}
        if content is not None:
            args[next((p for p in props if "content" in p), "content")] = content
        if old is not None:
            args[next((p for p in props if p.startswith("old")), "old_string")] = old
        if new is not None:
            args[next((p for p in props if p.startswith("new")), "new_string")] = new
        return args
    return build


def _read_projection(outcome: Outcome, tool: Any, output: Any, sent: str) -> None:
    """Sets the output projection of a read tool from where its answer holds the file's text."""
    props = _output_props(tool)
    if isinstance(output, str):
        outcome.output_evidence = "probe: the answer is the text itself: no projection"
        return
    text_at = locate(output, holds("alpha", "beta"), sent)
    if not props:  # the profile's output is a text: project the text out of the object
        if text_at and text_at != "@":
            outcome.output = text_at
            outcome.output_evidence = f"probe: the file's text is at {text_at}"
        return
    parts = _fields(props, output, sent, content=ALPHA)
    if parts:
        outcome.output = "{" + ", ".join(f"{k}: {v}" for k, v in parts.items()) + "}"
        missing = [p for p in props if p not in parts]
        outcome.output_evidence = ("probe: located in the answer: " + ", ".join(parts)
                                   + (f"; not in it: {', '.join(missing)}" if missing else ""))


def _write_projection(outcome: Outcome, tool: Any, output: Any, sent: str) -> None:
    props = _output_props(tool)
    if not props:
        return
    parts = _fields(props, output, sent, content=ALPHA)
    for name in props:
        if name not in parts and name == "success" and (props[name] or {}).get("type") == "boolean":
            parts[name] = "`true`"  # a write that returned is a success (the failure probe tells failures)
    if parts:
        outcome.output = "{" + ", ".join(f"{k}: {v}" for k, v in parts.items()) + "}"
        missing = [p for p in props if p not in parts]
        outcome.output_evidence = ("probe: located in the answer: " + ", ".join(parts)
                                   + (f"; not in it: {', '.join(missing)}" if missing else ""))


def _output_props(tool: Any) -> dict[str, Any]:
    output = tool.output if isinstance(tool.output, dict) else {}
    props = output.get("properties") if output.get("type") in (None, "object") else None
    return props if isinstance(props, dict) else {}


def _fields(props: dict[str, Any], output: Any, sent: str, content: str) -> dict[str, str]:
    """Returns, per profile output field, where its value is in a server's answer to a probe."""
    size = len(content.encode("utf-8"))
    digest = sha256(content)
    found: dict[str, str] = {}
    for name, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        kind = schema.get("type")
        lowered = name.lower()
        at = None
        if "sha" in lowered or "hash" in lowered:
            at = locate(output, lambda v: isinstance(v, str) and v.lower() == digest, sent)
        elif lowered in ("content", "contents", "text"):
            at = locate(output, lambda v: v == content, sent) or locate(output, holds("alpha", "beta"), sent)
        elif kind == "integer" and ("byte" in lowered or "size" in lowered):
            at = locate(output, lambda v: v == size and not isinstance(v, bool), sent)
        elif "path" in lowered and kind == "string":
            at = locate(output, lambda v: isinstance(v, str) and v.endswith("probe.txt"), sent)
            if at is None and isinstance(output, dict) and len(output) == 1 and next(iter(output)).endswith("probe.txt"):
                at = "keys(@)[0]"
        elif kind == "boolean" and lowered in ("created", "new", "is_new"):
            # a probe creates its file: the field that says so is true, named alike
            at = _locate_key(output, lambda key, v: v is True and key.lower() in ("created", "new", "is_new", "isnew"), sent)
        elif kind == "boolean":
            def named(key: str, v: Any, name: str = name) -> bool:
                return isinstance(v, bool) and key == name
            at = _locate_key(output, named, sent)
        if at is not None and at != "@":
            found[name] = at
    return found


def _locate_key(output: Any, wanted: Callable[[str, Any], bool], sent: str) -> str | None:
    """Returns where in ``output`` a key-value pair that ``wanted`` accepts is (shallowest first)."""
    level: list[tuple[str, Any]] = [("", output)]
    for _depth in range(6):
        following = []
        for where, item in level:
            if isinstance(item, dict):
                keyed_by_path = len(item) == 1 and str(next(iter(item))).endswith(Path(sent).name)
                for key, inner in list(item.items())[:50]:
                    step = "values(@)[0]" if keyed_by_path else key_expr(str(key))
                    at = f"{where}.{step}" if where else step
                    if not keyed_by_path and wanted(str(key), inner):
                        return at
                    following.append((at, inner))
            elif isinstance(item, list):
                for index, inner in enumerate(item[:20]):
                    following.append((f"{where}[{index}]", inner))
        level = following
    return None


def _offset_base(lab: Lab, outcome: Outcome, name: str) -> None:
    """Reads from line 2 of a three-line file: tells a 1-based offset from a 0-based one."""
    props = (lab.profile.tools[name].arguments.get("properties") or {})
    if "offset" not in props or outcome.chosen is None and False:
        return
    workspace = lab.workspace()
    (workspace / "lines.txt").write_text(LINES3)
    session = lab.session(workspace)
    try:
        args = _args_of(lab.profile.tools[name].arguments)(lab.path(workspace, "lines.txt"))
        args["offset"] = 2
        if "limit" in props:
            args["limit"] = 1
        output, error, _c, _a = _observe(session, name, args)
    finally:
        session.close()
    text = _as_text(output) if error is None else ""
    if "beta" in text and "alpha" not in text:
        outcome.evidence.append("probe: offset 2 started at the second line (1-based, as the profile)")
    elif "gamma" in text and "beta" not in text:
        outcome.offset_add = -1
        outcome.evidence.append("probe: offset 2 started at the third line: 0-based, so `add: -1`")


def _provoke(lab: Lab, outcome: Outcome, name: str, chosen: dict[str, Any], outcomes: dict[str, Outcome]) -> None:
    """Provokes one failure (and, for a profile with error codes, one per code a probe can realise)."""
    args_of = _args_of(lab.profile.tools[name].arguments)
    workspace = lab.workspace()
    session = lab.session(workspace)
    succeeded: list[str] = []
    try:
        if outcome.kind == "read":
            (workspace / "ok.txt").write_text(ALPHA)
            out, _e, _c, _a = _observe(session, name, args_of(lab.path(workspace, "ok.txt")))
            succeeded.append(_as_text(out))
            provoked = ("a read of a missing file", args_of(lab.path(workspace, "missing.txt")))
        elif outcome.kind == "write":
            (workspace / "adir").mkdir()
            provoked = ("a write onto a directory", args_of(lab.path(workspace, "adir"), content="x"))
            out, _e, _c, _a = _observe(session, name, args_of(lab.path(workspace, "ok.txt"), content=ALPHA))
            succeeded.append(_as_text(out))
        else:
            (workspace / "probe.txt").write_text(ALPHA)
            reader = next((n for n, o in outcomes.items() if o.kind == "read" and n in chosen), None)
            if reader is not None:
                _observe(session, reader, _args_of(lab.profile.tools[reader].arguments)(lab.path(workspace, "probe.txt")))
            provoked = ("an edit of text that is not in the file", args_of(lab.path(workspace, "probe.txt"), old="zzz-absent", new="q"))
            out, _e, _c, _a = _observe(session, name, args_of(lab.path(workspace, "probe.txt"), old="beta", new="gamma"))
            succeeded.append(_as_text(out))
        what, args = provoked
        output, error, channel, account = _observe(session, name, args)
    finally:
        session.close()
    if error is not None and channel in ("isError", "jsonrpc-error"):
        outcome.failure_evidence = f"probe: {what} {account}: the default signals see it"
    elif error is None:
        field_signal = failure_field(output, args.get("file_path", args.get("path", "")))
        if field_signal is not None:
            signal, message = field_signal
            outcome.signals = ["isError", "jsonrpc-error", signal]
            outcome.message = message
            outcome.failure_evidence = f"probe: {what} {account}: a field says so"
        else:
            pattern = text_signal(_as_text(output), succeeded, [str(workspace)])
            if pattern:
                outcome.signals = ["isError", "jsonrpc-error", {"text": pattern}]
                outcome.failure_evidence = f"probe: {what} {account}: only its text says so"
            else:
                outcome.failure_evidence = f"probe: {what} {account}: nothing tells it from a success"
    else:
        outcome.failure_evidence = f"probe: {what} {account}"
    if outcome.kind == "edit":
        _ambiguous(lab, outcome, name, chosen, outcomes, succeeded)
    _codes(lab, outcome, name)


def _ambiguous(lab: Lab, outcome: Outcome, name: str, chosen: dict[str, Any], outcomes: dict[str, Outcome],
               succeeded: list[str]) -> None:
    """Provokes two more edit failures (the old text twice, no replace_all; an old text that differs
    from the file's only in case): a tool that words each failure its own way in plain text gets a
    text signal for each."""
    for text, old, what in (("beta\nbeta\n", "beta", "the old text twice"),
                            ("alpha\nbeta\n", "Beta", "an old text differing only in case")):
        _edit_failure(lab, outcome, name, chosen, outcomes, succeeded, text, old, what)


def _edit_failure(lab: Lab, outcome: Outcome, name: str, chosen: dict[str, Any], outcomes: dict[str, Outcome],
                  succeeded: list[str], content: str, old: str, what: str) -> None:
    workspace = lab.workspace()
    (workspace / "twice.txt").write_text(content)
    path = lab.path(workspace, "twice.txt")
    session = lab.session(workspace)
    try:
        reader = next((n for n, o in outcomes.items() if o.kind == "read" and n in chosen), None)
        if reader is not None:
            _observe(session, reader, _args_of(lab.profile.tools[reader].arguments)(path))
        output, error, channel, account = _observe(session, name, _args_of(lab.profile.tools[name].arguments)(path, old=old, new="gamma"))
    finally:
        session.close()
    if error is not None or (workspace / "twice.txt").read_text() != content:
        return  # failed by a channel the signals see already, or it edited (a divergence the run shows)
    text = _as_text(output)
    current = [sig["text"] for sig in (outcome.signals or []) if isinstance(sig, dict) and "text" in sig]
    if any(re.search(pattern, text) for pattern in current):
        return
    pattern = text_signal(text, succeeded, [str(workspace)])
    if pattern:
        outcome.signals = (outcome.signals or ["isError", "jsonrpc-error"]) + [{"text": pattern}]
        outcome.failure_evidence += f"; probe: {what} {account}: its text too"


#: Failures a probe can realise, by the profile's error kind: (what, path under the workspace, is a dir).
_REALISABLE = {
    "directory-not-found": ("a missing parent directory", "missing-dir/probe.txt", False),
    "invalid-path": ("a relative path", "relative:../probe-rel.txt", False),
    "relative-path": ("a relative path", "relative:../probe-rel.txt", False),
    "not-found": ("a missing file", "missing.txt", False),
    "path-is-directory": ("a directory at the path", "adir", True),
}


def _codes(lab: Lab, outcome: Outcome, name: str) -> None:
    """For each of the profile's error kinds with a code that a probe can realise: the message's start -> code."""
    order = list(_REALISABLE)
    kinds = sorted((e for e in lab.profile.errors if e.get("code") is not None and e.get("kind") in _REALISABLE),
                   key=lambda e: order.index(e["kind"]))
    if not kinds or outcome.kind not in ("write", "read"):
        return
    args_of = _args_of(lab.profile.tools[name].arguments)
    seen: set[str] = set()
    for entry in kinds:
        what, rel, is_dir = _REALISABLE[entry["kind"]]
        workspace = lab.workspace()
        if is_dir:
            (workspace / rel).mkdir()
        if rel.startswith("relative:") and lab.profile.paths != "absolute":
            continue
        path = rel[len("relative:"):] if rel.startswith("relative:") else lab.path(workspace, rel)
        session = lab.session(workspace)
        try:
            args = args_of(path, content="x") if outcome.kind == "write" else args_of(path)
            output, error, channel, account = _observe(session, name, args)
        finally:
            session.close()
        message = error.get("message") if error else (_as_text(output) if outcome.signals else None)
        if error is not None and error.get("code") == entry["code"]:
            continue  # the server gives the profile's code itself
        if not isinstance(message, str) or channel in ("broken", "unsupported"):
            continue
        prefix = code_prefix(message, [path, str(workspace)])
        if prefix and prefix not in seen:
            seen.add(prefix)
            outcome.codes.append({"match": prefix, "code": entry["code"], "why": f"probe: {what} answered {_short(message, 70)}"})
    if any(isinstance(e.get("code"), int) and e["code"] < 0 for e in lab.profile.errors):
        # A profile in JSON-RPC codes: arguments the tool's schema refuses are -32602 (invalid params).
        workspace = lab.workspace()
        session = lab.session(workspace)
        try:
            args = args_of(lab.path(workspace, "probe.txt"))  # the content (or other required argument) left out
            output, error, channel, account = _observe(session, name, args)
        finally:
            session.close()
        if error is not None and error.get("code") is None and isinstance(error.get("message"), str):
            prefix = code_prefix(error["message"], [str(workspace)])
            if prefix and prefix not in seen:
                outcome.codes.append({"match": prefix, "code": -32602,
                                      "why": f"probe: a call without a required argument answered {_short(error['message'], 60)}"})
