"""The candidate's working folder: one for the run, laid out per scenario as its workspace, and watched.

A tool that resolves a relative path does so against its process's working folder. Were that the
harness's own folder (or any folder outside every workspace), a tool that wrongly accepts
``./src/index.ts`` would write where no scenario looks, or fail for want of ``src/``, and pass a
scenario that expects the path refused. So every candidate with a process of its own starts in a
folder of the run's (``harness-cwd-*``, beside the workspaces): before each scenario it is emptied
and laid out as the scenario's ``given`` lays out the workspace (its directories, and its files
with their bytes, up to :data:`MIRRORED_BYTES` each), and after the scenario anything created,
changed or removed there is an escape: a relative path written where the tool runs, not in the
workspace, reported as what it is.

The folder is the harness's: nothing in it is followed (links are listed, never entered), clearing
never leaves it, and the walk is bounded (:data:`MAX_ENTRIES` entries, :data:`MAX_DEPTH` levels).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from typing import Any

from harness.scenario.content_spec import generated_size, to_bytes

#: How the folder's name starts (the claude-code target masks it in snapshots: harness/targets/claude_code).
PREFIX = "harness-cwd-"
#: Bytes of one given file copied into the working folder; a larger one is laid out empty (its name is what a relative path reaches).
MIRRORED_BYTES = 1024 * 1024
MAX_ENTRIES = 2000
MAX_DEPTH = 8


class WorkingFolder:
    """A run's working folder for the candidate (see the module docstring)."""

    def __init__(self, parent: str | None = None) -> None:
        self.path = tempfile.mkdtemp(prefix=PREFIX, dir=parent)
        self._before: dict[str, tuple[Any, ...]] = {}

    def reset(self, given: dict[str, Any] | None) -> None:
        """Empties the folder and lays out ``given``'s directories and files; remembers what is there."""
        self._clear()
        given = given or {}
        for entry in given.get("dirs", ()):
            rel = entry if isinstance(entry, str) else entry.get("path", "")
            self._mkdir(rel)
        for rel, spec in (given.get("files") or {}).items():
            content = spec["content"] if isinstance(spec, dict) and "content" in spec and ("mode" in spec or len(spec) == 1) else spec
            size = generated_size(content)  # generated lines past the mirror's limit are not made at all
            try:
                data = b"" if size is not None and size > MIRRORED_BYTES else to_bytes(content)
            except Exception:  # noqa: BLE001 - a form the loader accepted; only the mirror is lost
                data = b""
            self._write(rel, data if len(data) <= MIRRORED_BYTES else b"")
        self._before = self._listing()

    def changes(self) -> list[str]:
        """Returns what was created, changed or removed in the folder since :meth:`reset`, as escapes."""
        after = self._listing()
        out = []
        for rel in sorted(set(after) | set(self._before)):
            if rel not in self._before:
                what = "created"
            elif rel not in after:
                what = "removed"
            elif after[rel] != self._before[rel]:
                what = "changed"
            else:
                continue
            out.append(f"{os.path.join(self.path, rel)} ({what} in the candidate's working folder: a relative path "
                       f"resolved where the tool runs, not in the workspace)")
            if len(out) >= 20:
                break
        return out

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    # -- inside the folder ----------------------------------------------------------------------

    def _inside(self, rel: str) -> str | None:
        if not rel or os.path.isabs(rel) or ".." in rel.replace("\\", "/").split("/"):
            return None
        return os.path.join(self.path, rel)

    def _mkdir(self, rel: str) -> None:
        target = self._inside(rel)
        if target is not None:
            try:
                os.makedirs(target, exist_ok=True)
            except OSError:
                pass

    def _write(self, rel: str, data: bytes) -> None:
        target = self._inside(rel)
        if target is None:
            return
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except OSError:
            return
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _clear(self) -> None:
        try:
            entries = list(os.scandir(self.path))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    _make_writable(entry.path)
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass

    def _listing(self) -> dict[str, tuple[Any, ...]]:
        out: dict[str, tuple[Any, ...]] = {}
        stack = [("", 0)]
        while stack and len(out) < MAX_ENTRIES:
            rel, depth = stack.pop()
            try:
                entries = list(os.scandir(os.path.join(self.path, rel) if rel else self.path))
            except OSError:
                continue
            for entry in entries:
                name = os.path.join(rel, entry.name) if rel else entry.name
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                kind = stat.S_IFMT(info.st_mode)
                # a folder's own times move with what is made in it: its entries say that
                out[name] = (kind, info.st_ino) if kind == stat.S_IFDIR else (kind, info.st_size, info.st_mtime_ns, info.st_ino)
                if stat.S_ISDIR(info.st_mode) and depth < MAX_DEPTH:
                    stack.append((name, depth + 1))
                if len(out) >= MAX_ENTRIES:
                    break
        return out


def _make_writable(folder: str) -> None:
    """Gives the harness's user write access to folders the candidate made read-only (so they can go)."""
    for root, dirs, _files in os.walk(folder, followlinks=False):
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass

