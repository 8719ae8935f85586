"""The judge: where a scenario's verdict is decided, from what the runner observed.

The runner plays a scenario (the protocol: lay out, call, act, close) and hands what it saw here:

- :func:`check_call`: one call's observation against its ``expect``;
- :func:`check_then`: the workspace against ``then`` (files, absent, others_unchanged);
- :func:`escaped`: what was found outside the workspace, as the failures every report shows;
- :func:`verdict`: the verdict and its one-line reason from all of the above (an escape first, then
  an error, then the first failure, then an open question's recording);
- :func:`finish`: the aspects applied once (harness/scenario/aspects.py) and every observed value
  made storable and showable.

Nothing else decides a scenario's verdict; reports, baselines and snapshots read it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
from typing import Any

from harness.containment.paths import Outside, resolve
from harness.run.file_ops import read_regular
from harness.run.workspace import DIFF_LIMIT, Workspace
from harness.scenario import aspects
from harness.scenario.content_spec import describe, to_bytes
from harness.scenario.matchers import MISSING, Mismatch, match
from harness.scenario.model import Result, Scenario, Verdict
from harness.scenario.normal_form import Entries, Lines, entries_form, normal_form
from harness.scenario.placeholders import substitute
from harness.targets.base import CallResult
from harness.util import limits
from harness.util import textdiff as difference
from harness.util.fileio import type_name
from harness.util.printable import json_safe


def finish(result: Result) -> Result:
    """Returns ``result`` with every aspect judged (harness/scenario/aspects.py) and made safe to store."""
    return made_safe(aspects.apply(result))


def check_call(expect: dict[str, Any], observed: CallResult, lines: Lines | None = None,
               entries: Entries | None = None) -> list[Mismatch]:
    """Returns every way one call's observation fails its ``expect``.

    ``lines``: the tool's output is numbered lines (harness/scenario/normal_form.py). An output that
    matches its expectation as returned passes. Otherwise the expectation (a plain text rewritten the
    same way) is matched against the output with its prefixes rewritten the contract's way: a miss
    there is the ``content`` aspect's (path ``content``), else the miss is wording (``output``).

    ``entries``: the tool's output is a report whose entry lines are content. A plain-text output
    expectation is then reduced to its entries and matched against the output's entries first (a
    miss is ``content``), and only when that holds against the output as returned (wording)."""
    out: list[Mismatch] = []
    if "output" in expect:
        if observed.failed:
            out.append(Mismatch("output", "the call to succeed", {"error": observed.error}, "the call failed"))
        elif lines is not None:
            want = expect["output"]
            as_returned = match(want, observed.output, "output")
            if as_returned:  # an output exactly as expected holds its lines too: nothing more to judge
                # A plain-text expectation is numbered lines as well: written in the tool's own prefix
                # (a captured ``1\tx``), it is rewritten the contract's way before the lines are compared.
                canonical_want = normal_form(want, lines) if isinstance(want, str) else want
                found = match(canonical_want, normal_form(observed.output, lines), "content")
                out += found or as_returned
        elif entries is not None and isinstance(expect["output"], str):
            found = match(entries_form(expect["output"], entries), entries_form(observed.output, entries), "content")
            out += found or match(expect["output"], observed.output, "output")
        else:
            out += match(expect["output"], observed.output, "output")
    if "error" in expect:
        if not observed.failed:
            out.append(Mismatch("error", "the call to fail", {"output": observed.output}, "the call succeeded"))
        elif expect["error"] is not True:
            error = observed.error if isinstance(observed.error, dict) else {"message": observed.error}
            for key, want in expect["error"].items():
                out += match(want, error.get(key, MISSING), f"error.{key}")
    if "events" in expect:
        out += match(expect["events"], observed.events if observed.events is not None else [], "events")
    return out


def verdict(scenario: Scenario, result: Result, error: str | None) -> tuple[Verdict, str]:
    """Returns the verdict and its reason: an escape first (the error not hidden), then an error,
    then the first failure, then an open question's recording."""
    escapes = [f for f in result.then_failures if f.path == "escape"]
    if escapes:
        done = "wrote" if any(not str(f.observed).startswith("refused:") for f in escapes) else "tried to act"
        also = f" (the scenario also ended early: {error})" if error else ""  # the escape first, the error not hidden
        return Verdict.FAIL, f"escape: {done} outside the workspace: " + "; ".join(str(f.observed) for f in escapes) + also
    if error:
        return Verdict.ERROR, error
    failures = result.failures
    if failures:
        first = failures[0]
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        return Verdict.FAIL, f"{first[0]}: {first[1].path}: expected {first[1].expected}{more}"
    if scenario.open_question:
        return Verdict.RECORDED, "open question: observation recorded"
    return Verdict.PASS, ""


def escaped(paths: list[str]) -> list[Mismatch]:
    """Returns the escapes found, as the failures every report shows."""
    return [Mismatch("escape", "nothing done outside the workspace" if path.startswith("refused:")
                     else "nothing written outside the workspace", path, "escape") for path in paths]


def made_safe(result: Result) -> Result:
    """Returns ``result`` with every observed value storable and showable (harness/util/printable.py).

    Done once the verdict is decided, so that no report, snapshot or worker pipe meets a lone
    surrogate, a NaN or a 900-deep value from a candidate.
    """
    def mismatches(items: list[Mismatch]) -> list[Mismatch]:
        return [dataclasses.replace(m, observed=json_safe(m.observed), expected=json_safe(m.expected))
                if m.observed is not MISSING else m for m in items]
    for record in result.steps:
        record.args, record.output, record.error = json_safe(record.args), json_safe(record.output), json_safe(record.error)
        record.events, record.extra = json_safe(record.events), json_safe(record.extra)
        record.failures = mismatches(record.failures)
    result.then_failures = mismatches(result.then_failures)
    result.reason = json_safe(result.reason)
    if result.workspace is not None:
        result.workspace = json_safe(result.workspace)
    return result


def check_then(workspace: Workspace, then: dict[str, Any], names: dict[str, str]) -> list[Mismatch]:
    """Returns every way the workspace fails ``then``; a workspace that is no longer a folder (the
    candidate put a FIFO, a link or a file in its place, or removed it) fails it as a whole."""
    try:
        return _check_then(workspace, then, names)
    except OSError:
        replaced = workspace.replaced()
        if replaced is None:
            raise
        return [Mismatch("then", "the workspace, a folder", replaced, "the workspace was replaced")]


def _check_then(workspace: Workspace, then: dict[str, Any], names: dict[str, str]) -> list[Mismatch]:
    out: list[Mismatch] = []
    named = set(then.get("files", {})) | set(then.get("absent", ()))
    for rel, want in then.get("files", {}).items():
        try:
            out += _check_file(workspace, rel, want, names)
        except Outside as exc:
            out.append(Mismatch(f"then.files[{rel}]", "an entry inside the workspace", f"<{exc}>",
                                "not followed"))
        except PermissionError as exc:  # a folder on the way the candidate locked (the harness is not root)
            out.append(_locked_out(f"then.files[{rel}]", "an entry the harness can look at", exc))
    for rel in then.get("absent", ()):
        try:
            kind = workspace.kind(rel)
        except Outside as exc:
            out.append(Mismatch(f"then.absent[{rel}]", "no such entry", f"<{exc}>", "not followed"))
            continue
        except PermissionError as exc:
            out.append(_locked_out(f"then.absent[{rel}]", "no such entry", exc))
            continue
        if kind != "<missing>":
            out.append(Mismatch(f"then.absent[{rel}]", "no such entry", kind, "exists"))
    if then.get("others_unchanged"):
        now = workspace.state(with_text=False)
        if "<capped>" in now and "<capped>" in workspace.initial:  # both cut short: a change past the cut is not seen
            out.append(Mismatch("then.others_unchanged", "the whole workspace compared",
                                f"<{now['<capped>'].get('why', 'recorded only in part')}>",
                                "cannot be decided: the workspace was recorded only in part"))
        for rel in sorted(set(now) | set(workspace.initial)):
            if rel in named or _is_parent_of_named(rel, named):
                continue
            before, after = _comparable(workspace.initial.get(rel)), _comparable(now.get(rel))
            if before != after:
                out.append(_changed(workspace, rel, before, after))
    return out


def _changed(workspace: Workspace, rel: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> Mismatch:
    """Returns the mismatch of an entry that should not have changed; a changed file's content as a
    diff (text) or a hex window (binary) when `given` laid it out, not only its hashes."""
    where = f"then.others_unchanged[{rel}]"
    why = "created" if before is None else "removed" if after is None else "changed"
    if why == "changed" and rel in workspace.given_bytes and before and after \
            and before.get("type") == after.get("type") == "file" and before.get("sha256") != after.get("sha256"):
        try:  # a regular file only, contained: never open a FIFO or follow a link out
            read = workspace.read(rel, DIFF_LIMIT)
            if read.kind == "file" and read.error is None and not read.truncated:
                return _content_mismatch(where, workspace.given_bytes[rel], read.data, why="content changed")
        except OSError:
            pass  # unreadable now: the hashes below still say that it changed
    return Mismatch(where, _brief(before), _brief(after), why)


def _check_file(workspace: Workspace, rel: str, want: Any, names: dict[str, str]) -> list[Mismatch]:
    if not workspace.contained:
        return _check_entry(workspace, rel, want, names, None)
    if _met_by_held_reading(workspace, rel, want):
        return []
    # One walk to the entry serves its type, mode, link target and (unless it is a link, which
    # a read follows inside the workspace) its bytes.
    with contextlib.ExitStack() as stack:
        try:
            at = stack.enter_context(resolve(str(workspace.root), rel, follow_last=False))
        except (FileNotFoundError, NotADirectoryError):  # a folder on the way is missing: so is the entry
            if not workspace.root_intact():
                raise  # the workspace itself was replaced: said as such by the caller
            return _check_entry(workspace, rel, want, names, None)
        return _check_entry(workspace, rel, want, names, at)


#: What a ``then.files`` entry may ask of a file for the reading held to tell that it is met.
_HELD_KEYS = frozenset({"content", "sha256", "size", "type"})


def _met_by_held_reading(workspace: Workspace, rel: str, want: Any) -> bool:
    """Returns whether the reading of the workspace held since the last change (harness/run/workspace.py,
    ``Workspace.state``) tells that the regular file at ``rel`` meets ``want``: its type, size and
    SHA-256 (of the whole file) as asked, the content as expected by its size and SHA-256. Anything
    else (no reading held, a path it does not name, a link, a file it could not hash whole, a mode,
    a match, a mismatch to be shown) is judged by looking at the file, as before."""
    entry = workspace.held_entry(rel)
    if entry is None or entry.get("type") != "file" or "sha256" not in entry:
        return False
    if not isinstance(want, dict) or not (set(want) & _CHECKS):
        want = {"content": want}
    elif not _HELD_KEYS.issuperset(want):
        return False
    if want.get("type", "file") != "file" or want.get("size", entry["size"]) != entry["size"]:
        return False
    if "sha256" in want and want["sha256"] != entry["sha256"]:
        return False
    if "content" in want:
        try:
            expected = to_bytes(want["content"])
        except (ValueError, TypeError, KeyError, AttributeError):  # said as before, by looking at the file
            return False
        return len(expected) == entry["size"] and hashlib.sha256(expected).hexdigest() == entry["sha256"]
    return True


#: The keys that make a ``then.files`` entry a set of checks rather than a content spec.
_CHECKS = frozenset({"content", "matches", "sha256", "size", "mode", "type", "target"})


def _check_entry(workspace: Workspace, rel: str, want: Any, names: dict[str, str], at: Any) -> list[Mismatch]:
    where = f"then.files[{rel}]"
    info: os.stat_result | None = None
    if at is None:
        kind = workspace.kind(rel)
    else:
        try:
            info = at.info if at.name else os.stat(at.dir_fd)  # the walk's lstat of it
            kind = type_name(info.st_mode) if info is not None else "<missing>"
        except (FileNotFoundError, NotADirectoryError):
            kind = "<missing>"
    if kind == "<missing>":
        return [Mismatch(where, "an entry", "<missing>", "does not exist")]
    if not isinstance(want, dict) or not (set(want) & _CHECKS):
        want = {"content": want}
    out: list[Mismatch] = []
    if "type" in want and want["type"] != kind:
        out.append(Mismatch(f"{where}.type", want["type"], kind))
    if "target" in want:
        if kind != "symlink":
            observed = None
        elif at is None:
            observed = workspace.readlink(rel)
        else:
            observed = os.readlink(at.name, dir_fd=at.dir_fd)
        expected = substitute(want["target"], names)
        if observed != expected:
            out.append(Mismatch(f"{where}.target", expected, observed))
    if "mode" in want:
        observed_mode = f"0{stat.S_IMODE((info or workspace.lstat(rel)).st_mode):03o}"
        if int(observed_mode, 8) != int(want["mode"], 8):
            out.append(Mismatch(f"{where}.mode", want["mode"], observed_mode))
    content_keys = {"content", "matches", "sha256", "size"} & set(want)
    if content_keys:
        expected_bytes = to_bytes(want["content"]) if "content" in want else None
        # Read no more than can decide: the expected length + 1 for `content`, the cap otherwise.
        limit = len(expected_bytes) + 1 if expected_bytes is not None and not content_keys - {"content", "size"} \
            else limits.MAX_FILE_READ
        read = (read_regular(at.dir_fd, at.name, limit) if at is not None and kind != "symlink"
                else workspace.read(rel, limit))
        if read.kind != "file":
            return out + [Mismatch(where, "a file", read.kind)]
        if read.error is not None:
            return out + [Mismatch(where, "a readable file", f"<{read.error}>", "unreadable")]
        data = read.data
        if "size" in want and read.size != want["size"]:
            out.append(Mismatch(f"{where}.size", str(want["size"]), read.size))
        if expected_bytes is not None and (read.size != len(expected_bytes) or data != expected_bytes):
            shown = data if not read.truncated else data[:limits.MAX_SHOWN]
            out.append(_content_mismatch(f"{where}.content", expected_bytes, shown, size=read.size))
        if "sha256" in want:
            if read.truncated:
                out.append(Mismatch(f"{where}.sha256", want["sha256"],
                                    f"<not computed: {read.size} bytes, more than the cap of {limit}>"))
            elif hashlib.sha256(data).hexdigest() != want["sha256"]:
                out.append(Mismatch(f"{where}.sha256", want["sha256"], hashlib.sha256(data).hexdigest()))
        if "matches" in want:
            if read.truncated:
                out.append(Mismatch(f"{where}.matches", "a file within the read cap",
                                    f"<{read.size} bytes, more than the cap of {limit}>"))
            else:
                out += match(want["matches"], data.decode("utf-8", errors="replace"), f"{where}.matches")
    return out


def _locked_out(where: str, expected: str, exc: PermissionError) -> Mismatch:
    """Returns the mismatch of a ``then`` entry behind a folder whose mode keeps the harness out: what
    the candidate left cannot be looked at, so the expectation is not met (not changed to look)."""
    return Mismatch(where, expected, f"<{exc.strerror}: {exc.filename}>", "not readable: a mode keeps the harness out")


def _comparable(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    # The inode of a multiply-linked file is bookkeeping, not a change of the file.
    if entry is None or "inode" not in entry:
        return entry
    return {k: v for k, v in entry.items() if k != "inode"}


def _is_parent_of_named(rel: str, named: set[str]) -> bool:
    # A directory created to hold a named file is part of that expectation.
    return any(name.startswith(rel + "/") for name in named)


def _brief(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "<missing>"
    if entry["type"] == "file":
        return f"file {entry['size']} bytes sha256 {entry.get('sha256', '?')[:12]} mode {entry['mode']}"
    if entry["type"] == "symlink":
        return f"symlink -> {entry['target']}"
    if entry["type"] == "dir":
        return f"dir mode {entry['mode']}"
    return entry["type"]


def _content_mismatch(where: str, expected: bytes, observed: bytes, why: str = "", size: int | None = None) -> Mismatch:
    why = why or _first_difference(expected, observed)
    if size is not None and size != len(observed):  # only the start was read
        why = f"length {size} instead of {len(expected)}"
        observed = observed[:limits.MAX_SHOWN]
    try:
        return Mismatch(where, describe(expected), observed.decode("utf-8"), why,
                        expected_value=expected.decode("utf-8"))
    except UnicodeDecodeError:  # binary: the bytes around the first difference, in hex
        return Mismatch(where, describe(expected), describe(observed), why,
                        detail=difference.hex_window(expected, observed).replace("\n", "\n  "))


def _first_difference(expected: bytes, observed: bytes) -> str:
    for index, (a, b) in enumerate(zip(expected, observed)):
        if a != b:
            return f"differs at byte {index}"
    if len(expected) != len(observed):
        return f"length {len(observed)} instead of {len(expected)}"
    return ""
