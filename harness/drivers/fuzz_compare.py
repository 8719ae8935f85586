"""Comparing the reference and a target in ``harness fuzz`` (harness/drivers/fuzz.py): one call, the
workspaces after it, and the diffs the generator sends (which must be definite where a seed says so).

Where a seed leaves something open the comparison allows every answer it allows (``VersionSlack``),
so the reference's choices are never imposed as the contract.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from harness.run.workspace import Workspace
from harness.targets.base import CallResult

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
        expect: dict[str, Any]
        if ref.failed or tgt.failed:
            expect = {"error": True} if ref.failed else {"output": {"$any": True}}
            if not ref.failed and isinstance(ref.output, dict) and "success" in ref.output:
                expect = {"output": {"$subset": {"success": ref.output["success"]}}}
        else:
            expect = {"output": {"$subset": {"success": ref.output["success"]}}}
        said = "failed" if tgt_failed else "succeeded"
        return "outcome", f"the target {said}, the reference did not", expect
    fields = COMPARED[tool]
    if ref.error is not None:  # the reference failed
        if fields is None:  # the seed's error table fixes code and message
            ref_error, tgt_error = ref.error, tgt.error or {}
            want = {"code": ref_error.get("code"), "message": _unroot(ref_error.get("message"), ref_root)}
            got = {"code": tgt_error.get("code"), "message": _unroot(tgt_error.get("message"), tgt_root)}
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


def make_diff(before: str, after: str, context: int, drift: int) -> str | None:
    """Returns a unified diff from ``before`` to ``after`` with ``context`` lines, headers moved by ``drift``."""
    lines = list(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                      "a/file", "b/file", n=context))
    if not lines:
        return None

    def moved(match: re.Match[str]) -> str:
        old_len, new_len = (int(g) if g is not None else None for g in match.group(2, 4))
        old_start = max(int(match.group(1)) + drift, 0 if old_len == 0 else 1)
        new_start = max(int(match.group(3)) + drift, 0 if new_len == 0 else 1)
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
