"""The scenario's workspace on disk: made from ``given``, changed by actions, read back for ``then``.

Each scenario gets a fresh temporary folder laid out as ``<base>/ws`` (the workspace), with canary
files around it (``<base>/canary.txt`` and ``<base>/sibling/canary.txt``). After the scenario, the
canaries and the set of entries in ``<base>`` are checked, so a target that writes outside its
workspace is caught naming the path. The whole base is removed afterwards.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import shutil
import stat
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.content import describe, to_bytes
from harness import difference
from harness.matchers import Mismatch, match
from harness.placeholders import substitute

CANARY = b"canary: nothing may write here\n"
TEXT_LIMIT = 4096  # text of files up to this size is kept in the recorded state
DIFF_LIMIT = 1 << 20  # a changed file up to this size is shown as a content diff or a hex window


class Workspace:
    """A fresh workspace with canaries around it; ``remove`` (or a Remover) deletes it afterwards."""

    def __init__(self, prefix: str = "harness-", parent: str | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        self.root = self.base / "ws"
        self.root.mkdir()
        (self.base / "canary.txt").write_bytes(CANARY)
        (self.base / "sibling").mkdir()
        (self.base / "sibling" / "canary.txt").write_bytes(CANARY)
        self.initial: dict[str, dict[str, Any]] = {}
        # The bytes `given` laid out (small files only): a changed file is then shown as a diff.
        self._given_bytes: dict[str, bytes] = {}
        # A file's recorded state by its stat signature: recording after every step re-reads only what changed.
        self._states: dict[tuple[Any, ...], dict[str, Any]] = {}

    def remove(self) -> None:
        """Removes the workspace and everything around it, whatever modes the scenario left."""
        if not self.base.exists():
            return
        for dirpath, dirnames, _ in os.walk(self.base):
            for name in dirnames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
        os.chmod(self.base, 0o700)
        shutil.rmtree(self.base, ignore_errors=True)

    # -- given -------------------------------------------------------------------------------

    def populate(self, given: dict[str, Any], names: dict[str, str], *, record_initial: bool = True) -> None:
        """Lays out ``given``: directories, files, symlinks, then modes (deepest first).

        ``record_initial`` keeps the state laid out, which ``others_unchanged`` compares with; a
        scenario that does not ask for it spares reading back what was just written.
        """
        modes: list[tuple[Path, int]] = []
        for entry in given.get("dirs", ()):
            rel, mode = (entry, None) if isinstance(entry, str) else (entry["path"], entry.get("mode"))
            path = self.path(rel)
            path.mkdir(parents=True, exist_ok=True)
            if mode:
                modes.append((path, int(mode, 8)))
        for rel, spec in given.get("files", {}).items():
            content, mode = (spec["content"], spec.get("mode")) if _has_mode(spec) else (spec, None)
            path = self.path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = to_bytes(content)
            path.write_bytes(data)
            if len(data) <= DIFF_LIMIT:
                self._given_bytes[rel] = data
            if mode:
                modes.append((path, int(mode, 8)))
        for rel, target in given.get("symlinks", {}).items():
            path = self.path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(_expand(target, names), path)
        for path, mode in sorted(modes, key=lambda item: -len(item[0].parts)):
            os.chmod(path, mode)
        if record_initial:
            self.initial = self.state(with_text=False)

    def path(self, rel: str) -> Path:
        """Returns the absolute path of a workspace-relative path."""
        return self.root / rel

    # -- actions -----------------------------------------------------------------------------

    def act(self, action: str, rel: str, *, content: Any = None, mode: str | None = None,
            target: str | None = None, names: dict[str, str] | None = None, mtime: str | None = None) -> None:
        """Performs one action as an outside process would.

        write/append/touch move the mtime at least one second forward, unless ``mtime`` says
        otherwise: ``same`` keeps the mtime the file had before, ``-5s`` / ``+500ms`` / ``+1ns``
        set it that far from there (from the time of the action for a file that did not exist),
        ``@1700000000.25`` sets it to that many seconds since the epoch.
        """
        path = self.path(rel)
        if action in ("write", "append", "touch"):
            before = _mtime_ns(path)
            wanted = None if mtime is None else mtime_after(mtime, before)
            if action == "touch":
                path.touch()
            else:
                with open(path, "ab" if action == "append" else "wb") as handle:
                    handle.write(to_bytes(content))
            if wanted is None:
                _advance_mtime(path, before)
            else:
                os.utime(path, ns=(os.stat(path).st_atime_ns, wanted))
        elif action == "chmod":
            os.chmod(path, int(mode, 8))  # type: ignore[arg-type]
        elif action == "delete":
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        elif action == "mkdir":
            path.mkdir(parents=True, exist_ok=True)
        elif action == "symlink":
            os.symlink(_expand(target or "", names or {}), path)
        else:  # the schema admits no other action
            raise ValueError(f"unknown action {action!r}")

    # -- state -------------------------------------------------------------------------------

    def state(self, *, with_text: bool = True) -> dict[str, dict[str, Any]]:
        """Returns every entry under the root: type, mode, size and SHA-256 of files, link targets."""
        out: dict[str, dict[str, Any]] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.root).replace(os.sep, "/")
                out[rel] = entry_state(full, with_text=with_text, cache=self._states)
        return dict(sorted(out.items()))

    def escapes(self) -> list[str]:
        """Returns what was created, changed or removed around the workspace (canaries, siblings)."""
        found: list[str] = []
        expected = {"ws", "canary.txt", "sibling"}
        present = set(os.listdir(self.base))
        found += [f"created {self.base / name}" for name in sorted(present - expected)]
        found += [f"removed {self.base / name}" for name in sorted(expected - present)]
        for canary in (self.base / "canary.txt", self.base / "sibling" / "canary.txt"):
            try:
                if canary.is_symlink() or canary.read_bytes() != CANARY:
                    found.append(f"changed {canary}")
            except OSError:
                pass  # reported as removed above, or the sibling itself went
        sibling = self.base / "sibling"
        if sibling.is_dir() and set(os.listdir(sibling)) != {"canary.txt"}:
            extra = sorted(set(os.listdir(sibling)) - {"canary.txt"})
            found += [f"created {sibling / name}" for name in extra]
        return found

    # -- then --------------------------------------------------------------------------------

    def check(self, then: dict[str, Any], names: dict[str, str]) -> list[Mismatch]:
        """Returns every way the workspace fails ``then``."""
        out: list[Mismatch] = []
        named = set(then.get("files", {})) | set(then.get("absent", ()))
        for rel, want in then.get("files", {}).items():
            out += self._check_file(rel, want, names)
        for rel in then.get("absent", ()):
            if os.path.lexists(self.path(rel)):
                out.append(Mismatch(f"then.absent[{rel}]", "no such entry", _kind(self.path(rel)), "exists"))
        if then.get("others_unchanged"):
            now = self.state(with_text=False)
            for rel in sorted(set(now) | set(self.initial)):
                if rel in named or _is_parent_of_named(rel, named):
                    continue
                before, after = self.initial.get(rel), now.get(rel)
                if before != after:
                    out.append(self._changed(rel, before, after))
        return out

    def _changed(self, rel: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> Mismatch:
        """Returns the mismatch of an entry that should not have changed; a changed file's content as a
        diff (text) or a hex window (binary) when `given` laid it out, not only its hashes."""
        where = f"then.others_unchanged[{rel}]"
        why = "created" if before is None else "removed" if after is None else "changed"
        if why == "changed" and rel in self._given_bytes and before and after \
                and before.get("type") == after.get("type") == "file" and before.get("sha256") != after.get("sha256"):
            path = self.path(rel)
            try:
                info = os.lstat(path)  # a regular file only: never open a FIFO or follow a link
                if stat.S_ISREG(info.st_mode) and info.st_size <= DIFF_LIMIT:
                    return _content_mismatch(where, self._given_bytes[rel], path.read_bytes(), why="content changed")
            except OSError:
                pass  # unreadable now: the hashes below still say that it changed
        return Mismatch(where, _brief(before), _brief(after), why)

    def _check_file(self, rel: str, want: Any, names: dict[str, str]) -> list[Mismatch]:
        where = f"then.files[{rel}]"
        path = self.path(rel)
        if not os.path.lexists(path):
            return [Mismatch(where, "an entry", "<missing>", "does not exist")]
        if not isinstance(want, dict) or not (set(want) & {"content", "matches", "sha256", "size", "mode",
                                                          "type", "target"}):
            want = {"content": want}
        out: list[Mismatch] = []
        kind = _kind(path)
        if "type" in want and want["type"] != kind:
            out.append(Mismatch(f"{where}.type", want["type"], kind))
        if "target" in want:
            observed = os.readlink(path) if kind == "symlink" else None
            expected = _expand(want["target"], names)
            if observed != expected:
                out.append(Mismatch(f"{where}.target", expected, observed))
        if "mode" in want:
            observed_mode = f"0{stat.S_IMODE(os.lstat(path).st_mode):03o}"
            if int(observed_mode, 8) != int(want["mode"], 8):
                out.append(Mismatch(f"{where}.mode", want["mode"], observed_mode))
        content_keys = {"content", "matches", "sha256", "size"} & set(want)
        if content_keys:
            if not path.is_file():
                return out + [Mismatch(where, "a file", kind)]
            data = path.read_bytes()
            if "content" in want:
                expected_bytes = to_bytes(want["content"])
                if data != expected_bytes:
                    out.append(_content_mismatch(f"{where}.content", expected_bytes, data))
            if "sha256" in want and hashlib.sha256(data).hexdigest() != want["sha256"]:
                out.append(Mismatch(f"{where}.sha256", want["sha256"], hashlib.sha256(data).hexdigest()))
            if "size" in want and len(data) != want["size"]:
                out.append(Mismatch(f"{where}.size", str(want["size"]), len(data)))
            if "matches" in want:
                text = data.decode("utf-8", errors="replace")
                out += match(want["matches"], text, f"{where}.matches")
        return out


class Remover:
    """Removes finished workspaces on a background thread, so the next scenario need not wait.

    Deleting a tree is mostly system calls, which run beside the next scenario's work on another
    core; ``drain`` waits until every workspace handed over is gone.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[Workspace | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def remove(self, workspace: Workspace) -> None:
        """Schedules ``workspace`` for removal."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="workspace-remover", daemon=True)
            self._thread.start()
        self._queue.put(workspace)

    def drain(self) -> None:
        """Returns once every scheduled workspace is removed."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _work(self) -> None:
        while (workspace := self._queue.get()) is not None:
            workspace.remove()


def entry_state(path: str, *, with_text: bool = True,
                cache: dict[tuple[Any, ...], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Returns the recorded state of one entry (not following symlinks).

    With ``cache``, a file whose inode, size, mode, mtime and ctime are unchanged is not read again.
    """
    info = os.lstat(path)
    mode = f"0{stat.S_IMODE(info.st_mode):03o}"
    if stat.S_ISLNK(info.st_mode):
        return {"type": "symlink", "target": os.readlink(path)}
    if stat.S_ISDIR(info.st_mode):
        return {"type": "dir", "mode": mode}
    key = (path, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns, with_text)
    if cache is not None and key in cache:
        return dict(cache[key])
    entry = _file_state(path, mode, info.st_size, with_text)
    if cache is not None:
        cache[key] = dict(entry)
    return entry


def _file_state(path: str, mode: str, size: int, with_text: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "file", "mode": mode, "size": size}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        entry["unreadable"] = exc.strerror
        return entry
    except Exception as exc:  # pyfakefs: a file whose write failed on a full disk has a size but no data
        entry["unreadable"] = type(exc).__name__
        return entry
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    if with_text and len(data) <= TEXT_LIMIT:
        try:
            entry["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return entry


def _has_mode(spec: Any) -> bool:
    return isinstance(spec, dict) and "content" in spec


def _expand(text: str, names: dict[str, str]) -> str:
    return substitute(text, names)


def _mtime_ns(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


_MTIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def mtime_after(spec: str, before: int | None) -> int:
    """Returns the mtime (ns) an action's ``mtime: same | [+-]N(s|ms|us|ns) | @<epoch seconds>`` asks for.

    ``before`` is the file's mtime before the action (None for a file that did not exist).
    """
    if spec == "same":
        if before is None:
            raise ValueError("mtime: same needs a file that exists before the action")
        return before
    if spec.startswith("@"):  # absolute: seconds since the epoch, e.g. @1700000000.25
        return int(Decimal(spec[1:]) * _MTIME_UNITS["s"])
    found = re.fullmatch(r"([+-])(\d+(?:\.\d+)?)(s|ms|us|ns)", spec)
    if found is None:
        raise ValueError(f"invalid mtime {spec!r} (same, or e.g. -5s, +500ms, +1ns)")
    sign, amount, unit = found.groups()
    step = int(Decimal(amount) * _MTIME_UNITS[unit])
    base = before if before is not None else time.time_ns()
    return base + step if sign == "+" else base - step


def _advance_mtime(path: Path, before: int | None) -> None:
    """Moves the mtime at least one second past ``before``, so any mtime resolution sees a change."""
    if before is None:
        return
    now = os.stat(path).st_mtime_ns
    wanted = max(now, before + 1_000_000_000, time.time_ns())
    os.utime(path, ns=(wanted, wanted))


def _kind(path: Path) -> str:
    if path.is_symlink():
        return "symlink"
    if path.is_dir():
        return "dir"
    return "file" if path.exists() else "<missing>"


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
    return f"dir mode {entry['mode']}"


def _content_mismatch(where: str, expected: bytes, observed: bytes, why: str = "") -> Mismatch:
    why = why or _first_difference(expected, observed)
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
