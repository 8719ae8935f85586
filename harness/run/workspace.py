"""The scenario's workspace on disk: made from ``given``, changed by actions, read back for ``then``.

Each scenario gets a fresh, empty workspace ``<base>/ws``, with canary files around it
(``<base>/canary.txt`` and ``<base>/sibling/canary.txt``). The base and its canaries (an
:class:`Enclosure`) are made once per run; after each scenario the canaries and the set of
entries in ``<base>`` are checked, so a target that writes outside its workspace is caught naming
the path, and the workspace is moved out and removed. The whole base is removed at the end.

Everything the harness does here is contained (harness/containment/paths.py): paths are walked from a
descriptor of the root with ``O_NOFOLLOW``, so no operation of the harness's own goes through a
symbolic link out of the workspace; such an operation raises :class:`~harness.containment.paths.Outside`
and is not performed. Reading the workspace back never opens what is not a regular file (FIFOs,
sockets and devices are recorded by type), and the bytes read per file and per workspace and the
entries recorded are capped (harness/util/limits.py), the cap shown in the record.
"""

from __future__ import annotations

import contextlib
import functools
import errno
import hashlib
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.util import limits
from harness.util import processes
from harness.scenario.content_spec import describe, to_bytes
from harness.util import textdiff as difference
from harness.scenario.matchers import Mismatch, match
from harness.scenario.placeholders import substitute
from harness.containment.paths import Outside, check_link_target, resolve

CANARY = b"canary: nothing may write here\n"
TEXT_LIMIT = 4096  # text of files up to this size is kept in the recorded state
DIFF_LIMIT = 1 << 20  # a changed file up to this size is shown as a content diff or a hex window


class Enclosure:
    """The folder around workspaces, with its canaries: made once per run, checked by stat after each scenario.

    Laid out as ``<base>/canary.txt``, ``<base>/sibling/canary.txt`` and one workspace at a time:
    ``<base>/ws`` first, then ``<base>/ws-2``, ``<base>/ws-3``... (a fresh path each, so nothing a
    candidate keeps by path carries over). A finished workspace is moved out (one rename) to a
    private trash folder beside the base and removed from there. After each scenario
    :meth:`escapes` compares each canary's ``lstat`` (inode, ctime, mtime, size, mode, links)
    with the one taken when it was made, reads its bytes again (a write through ``mmap`` may move no time
    stamp), compares the sibling
    folder's ``lstat`` (an entry made or removed there moves its mtime) and lists the base. The
    canaries are made, then the harness waits until the kernel's coarse clock has passed their
    ctime (at most one tick, once per run): any later write to them gets a later ctime, so a
    rewrite that restores content and mtime is still caught. Once something is found the
    enclosure is spoiled: the runner retires it (removes it whole) and the next scenario gets a
    fresh one, so each escape is reported once, for the scenario that made it.
    """

    def __init__(self, prefix: str = "harness-", parent: str | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        self._prefix, self._parent = prefix, parent
        self.trash: Path | None = None  # made when the first workspace is moved out
        self.spoiled = False
        self.replaced = False  # the base itself was removed or replaced (by a link, a file): nothing below is ours
        self.made = 0  # workspaces placed so far
        self.current = "ws"  # the name of the workspace placed last
        # Each canary is held open: while its path still names the same inode (the signature says
        # so, and a held inode's number cannot be reused), its bytes are read through this
        # descriptor, without opening it again. The module that opens them is kept (pyfakefs puts
        # its own in place of ``os``): a descriptor of a fake file system is closed there, never as
        # a real one of the same number.
        self._held: dict[str, int] = {}
        self._os = os
        try:
            canaries = (self.base / "canary.txt", self.base / "sibling" / "canary.txt")
            (self.base / "sibling").mkdir()
            #: Whether two changes of a file, its ctime looked at between them, may leave the same
            #: ctime (time stamps from the coarse clock, as before Linux 6.13 or on ramfs): then a
            #: file's record is kept for reuse only once its ctime is a tick old (Workspace.state).
            self.coarse_times = False
            for canary in canaries:
                canary.write_bytes(CANARY)
                first = os.lstat(canary).st_ctime_ns
                canary.write_bytes(CANARY)
                self.coarse_times = self.coarse_times or os.lstat(canary).st_ctime_ns == first
                self._held[str(canary)] = os.open(canary, _READ_FLAGS)
            _wait_past(max(os.lstat(canary).st_ctime_ns for canary in canaries))
            # Kept as text: the check after every scenario then builds no path objects.
            self._base = str(self.base)
            self._sibling_path = os.path.join(self._base, "sibling")
            self._canaries = {str(canary): _signature(str(canary)) for canary in canaries}
            self._sibling = _signature(self._sibling_path)
            for canary, fd in list(self._held.items()):
                info, signature = os.fstat(fd), self._canaries[canary]
                if signature is None or (info.st_ino, info.st_dev) != (signature[0], signature[2]):
                    del self._held[canary]  # not the file the signature was taken of: read by its path
                    os.close(fd)
        except BaseException:  # a full disk, or SIGTERM (processes.Terminated) half-way: nothing is left behind
            self.close()
            shutil.rmtree(self.base, ignore_errors=True)
            raise

    def close(self) -> None:
        """Closes the canaries held open (``remove`` does it too)."""
        held, self._held = getattr(self, "_held", {}), {}
        for fd in held.values():
            with contextlib.suppress(Exception):
                self._os.close(fd)

    def __del__(self) -> None:
        self.close()

    def _canary_bytes(self, canary: str) -> bytes | None:
        fd = self._held.get(canary)
        if fd is None:
            return _head(canary, len(CANARY) + 1)
        self._os.lseek(fd, 0, os.SEEK_SET)
        return self._os.read(fd, len(CANARY) + 1)

    def escapes(self) -> list[str]:
        """Returns what was created, changed or removed around the workspace since the enclosure was made."""
        found: list[str] = []
        for canary, signature in self._canaries.items():
            now = _signature(canary)
            if now is None:
                continue  # reported as removed below (or its sibling folder went)
            if now[:2] != signature[:2]:  # type: ignore[index]
                found.append(f"changed {canary} (rewritten: inode or ctime differs)")
            elif now != signature or self._canary_bytes(canary) != CANARY:
                found.append(f"changed {canary}")
        try:
            present: list[str] | None = os.listdir(self._base)
        except OSError as exc:  # removed (``rm -rf ..``), or replaced by a file: that is what is said
            present = None
            found.append(self._base_replaced() or f"changed {self._base} (cannot be listed: {exc.strerror})")
        if present is not None and (len(present) != 3 or not {self.current, "canary.txt", "sibling"}.issuperset(present)):
            replaced = self._base_replaced()  # a link is never listed through: what it leads to is not ours
            if replaced:
                found.append(replaced)
                present = None
        if present is not None and (len(present) != 3 or not {self.current, "canary.txt", "sibling"}.issuperset(present)):
            expected = {self.current, "canary.txt", "sibling"}
            found += [f"created {os.path.join(self._base, name)}" for name in sorted(set(present) - expected)]
            found += [f"removed {os.path.join(self._base, name)}" for name in sorted(expected - set(present))]
        sibling = self._sibling_path
        now = _signature(sibling)
        if now is not None and now != self._sibling:
            if stat.S_ISLNK(now[5]):  # never listed through: the link may lead where the candidate cannot read
                with contextlib.suppress(OSError):
                    found.append(f"changed {sibling} (replaced by a symbolic link to {os.readlink(sibling)!r})")
            with contextlib.suppress(OSError):
                fd = os.open(sibling, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
                try:
                    extra = sorted(set(os.listdir(fd)) - {"canary.txt"})
                finally:
                    os.close(fd)
                found += [f"created {os.path.join(sibling, name)}" for name in extra]
            for canary in self._canaries:
                if os.path.dirname(canary) == sibling and not os.path.lexists(canary):
                    found.append(f"removed {canary}")
            if not any(f.startswith(("created", "removed", f"changed {sibling} (")) and sibling in f for f in found):
                found.append(f"changed {sibling} (entries made or removed there)")
        if found:
            self.spoiled = True
        return found

    def _base_replaced(self) -> str | None:
        """Returns what a candidate put in the base's place (removed it, or a link or a file there), or
        None while it is a folder."""
        try:
            info = os.lstat(self._base)
        except FileNotFoundError:
            self.replaced = True
            return f"removed {self._base}"
        if stat.S_ISDIR(info.st_mode):
            return None
        self.replaced = True
        if stat.S_ISLNK(info.st_mode):
            with contextlib.suppress(OSError):
                return f"changed {self._base} (replaced by a symbolic link to {os.readlink(self._base)!r})"
        return f"changed {self._base} (replaced by a {_type_name(info.st_mode)})"

    def place(self) -> Path:
        """Makes the next workspace, empty: ``<base>/ws``, then ``<base>/ws-2``..."""
        self.made += 1
        name = "ws" if self.made == 1 else f"ws-{self.made}"
        path = self.base / name  # one path object, its text worked out once
        os.mkdir(str(path))
        self.current = name
        return path

    def move_out(self, root: Path) -> "Tree | None":
        """Moves a finished workspace into the trash (one rename); returns it for removal, or None if it is gone.

        A workspace with a mount point below it is not moved (None; the enclosure is then spoiled:
        retire it whole). Raises OSError when it cannot be moved (spoiled as well).
        """
        try:
            if mounts_below(root):
                # Never moved: the mount table is read again only when a mount changes, not when a folder
                # above one is renamed, so the removal would not know it. The enclosure goes whole.
                self.spoiled = True
                return None
            if self.trash is None:
                self.trash = Path(tempfile.mkdtemp(prefix=self._prefix + "trash-", dir=self._parent))
            place = os.path.join(self.trash, os.path.basename(root))
            os.rename(root, place)
        except FileNotFoundError:
            if not os.path.lexists(root):
                return None  # already gone: nothing to move or remove
            self.spoiled = True
            raise
        except OSError:
            self.spoiled = True
            raise
        return Tree(place)

    def remove(self) -> "Leftover | None":
        """Removes the trash and the base (see :func:`remove_tree`); returns what could not be removed, or None."""
        self.close()
        trash = remove_tree(self.trash) if self.trash else None
        base = remove_tree(self.base)
        if base and trash:
            return Leftover(base.path, f"{base.reason}; also {trash}")
        return base or trash


class Tree:
    """A folder to remove (a finished workspace moved to the trash); what a :class:`Remover` takes."""

    def __init__(self, base: "str | Path") -> None:
        self.base = base

    def remove(self) -> "Leftover | None":
        """Removes it; returns what could not be removed, or None."""
        return remove_tree(self.base)


class Workspace:
    """A fresh workspace with canaries around it; ``remove`` (or a Remover) deletes it afterwards.

    Given an :class:`Enclosure` (the runner's, made once per run) the workspace is its ``ws``
    folder and ``remove`` takes the workspace alone; without one it makes its own (as a single
    workspace made by hand does), and ``remove`` takes the whole enclosure.
    """

    def __init__(self, prefix: str = "harness-", parent: str | None = None, *, contained: bool = True,
                 enclosure: Enclosure | None = None) -> None:
        # On pyfakefs (``contained=False``) nothing real can be reached: plain path operations do.
        self.contained = contained
        self._owned = enclosure is None
        self.enclosure = Enclosure(prefix, parent) if enclosure is None else enclosure
        self.base = self.enclosure.base
        try:
            self.root = self.enclosure.place()
        except BaseException:  # a full disk, or SIGTERM (processes.Terminated) half-way: nothing is left behind
            if self._owned:
                self.enclosure.remove()
            raise
        self.initial: dict[str, dict[str, Any]] = {}
        self.checked = False  # escapes() ran: what the enclosure shows now is this scenario's
        # The bytes `given` laid out (small files only): a changed file is then shown as a diff.
        self._given_bytes: dict[str, bytes] = {}
        # A file's recorded state by its stat signature: recording after every step re-reads only what changed.
        self._states: dict[tuple[Any, ...], dict[str, Any]] = {}
        # A state recorded since the last step passed over a folder or an entry it could not open or
        # look at (a mode the candidate set): such a state says nothing of the links below it.
        self._passed_over = False

    def remove(self) -> "Leftover | None":
        """Removes the workspace (with its enclosure when it made its own), whatever modes or flags the
        candidate left (see :func:`remove_tree`). Returns why it could not be removed, or None."""
        return self.enclosure.remove() if self._owned else remove_tree(self.root)

    def retire(self) -> "Tree | Workspace | None":
        """Frees the enclosure's place at once: the workspace is moved to the trash and returned for removal.

        A workspace with its own enclosure is returned whole. Raises OSError when it cannot be moved.
        """
        if self._owned:
            return self
        return self.enclosure.move_out(self.root)

    # -- given -------------------------------------------------------------------------------

    def populate(self, given: dict[str, Any], names: dict[str, str], *, record_initial: bool = True) -> None:
        """Lays out ``given``: directories, files, symlinks, then modes (deepest first).

        ``record_initial`` keeps the state laid out, which ``others_unchanged`` compares with; a
        scenario that does not ask for it spares reading back what was just written.
        """
        modes: list[tuple[str, int]] = []
        # What a file was written with is what reading it back would give: its record is kept (by
        # the stat signature the write left) when no cap could have cut that reading short.
        written: dict[tuple[Any, ...], dict[str, Any]] | None = {} if record_initial else None
        total = 0
        for entry in given.get("dirs", ()):
            rel, mode = (entry, None) if isinstance(entry, str) else (entry["path"], entry.get("mode"))
            self._mkdir(rel)
            if mode:
                modes.append((rel, int(mode, 8)))
        for rel, spec in given.get("files", {}).items():
            content, mode = (spec["content"], spec.get("mode")) if _has_mode(spec) else (spec, None)
            data = to_bytes(content)
            self._write(rel, data, append=False, parents=True, remember=written)
            total += len(data)
            if len(data) <= DIFF_LIMIT:
                self._given_bytes[rel] = data
            if mode:
                modes.append((rel, int(mode, 8)))
        for rel, target in given.get("symlinks", {}).items():
            self._symlink(rel, _expand(target, names), parents=True)
        for rel, mode in sorted(modes, key=lambda item: -len(Path(item[0]).parts)):
            self._chmod(rel, mode)
        if record_initial:
            if written and total <= limits.MAX_WORKSPACE_READ:
                settled = self._settled_now()
                self._states.update(written if settled is None else
                                    {key: entry for key, entry in written.items() if _settled(key[5], settled)})
            self.initial = self.state(with_text=False)

    def path(self, rel: str) -> Path:
        """Returns the absolute path of a workspace-relative path (for showing; never opened through)."""
        return self.root / rel

    # -- actions -----------------------------------------------------------------------------

    def act(self, action: str, rel: str, *, content: Any = None, mode: str | None = None,
            target: str | None = None, names: dict[str, str] | None = None, mtime: str | None = None) -> None:
        """Performs one action as an outside process would.

        write/append/touch move the mtime at least one second forward, unless ``mtime`` says
        otherwise: ``same`` keeps the mtime the file had before, ``-5s`` / ``+500ms`` / ``+1ns``
        set it that far from there (from the time of the action for a file that did not exist),
        ``@1700000000.25`` sets it to that many seconds since the epoch. Raises :class:`Outside`
        (not performed) when the action would act through a link leading outside.
        """
        if action in ("write", "append"):
            self._write(rel, to_bytes(content), append=action == "append", mtime=mtime)
        elif action == "touch":
            self._write(rel, b"", append=True, mtime=mtime)
        elif action == "chmod":
            self._chmod(rel, int(mode, 8))  # type: ignore[arg-type]
        elif action == "delete":
            self._delete(rel)
        elif action == "mkdir":
            self._mkdir(rel)
        elif action == "symlink":
            self._symlink(rel, _expand(target or "", names or {}))
        else:  # the schema admits no other action
            raise ValueError(f"unknown action {action!r}")

    def _write(self, rel: str, data: bytes, *, append: bool, parents: bool = False, mtime: str | None = None,
               remember: dict[tuple[Any, ...], dict[str, Any]] | None = None) -> None:
        """Writes (or appends) ``data``; a link to a file inside the workspace is written through.

        Given ``remember``, the file's record (as :func:`entry_state` would read it back, without its
        text) is put there under the stat signature the write left: a reading of the workspace that
        finds that signature takes the record instead of the file's bytes.
        """
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        if not self.contained:
            path = self.path(rel)
            if parents:
                path.parent.mkdir(parents=True, exist_ok=True)
            before = _mtime_ns(path)
            wanted = None if mtime is None else mtime_after(mtime, before)
            with open(path, "ab" if append else "wb") as handle:
                handle.write(data)
            if wanted is None:
                _advance_mtime(path, before)
            else:
                os.utime(path, ns=(os.stat(path).st_atime_ns, wanted))
            return
        with resolve(str(self.root), rel, create_parents=parents) as at:
            before = at.info.st_mtime_ns if at.info is not None else None  # the walk's lstat of it
            wanted = None if mtime is None else mtime_after(mtime, before)
            fd = os.open(at.name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666, dir_fd=at.dir_fd)
            real = at.rel
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise IsADirectoryError(errno.EISDIR, "not a regular file", rel)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if wanted is not None:
                os.utime(fd, ns=(os.fstat(fd).st_atime_ns, wanted))
            elif before is not None:
                _advance_mtime_fd(fd, before)
            if remember is not None and not append and len(data) <= limits.MAX_FILE_READ:
                info = os.fstat(fd)
                if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_size == len(data):
                    key = (real, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns,
                           info.st_nlink, False)
                    remember[key] = {"type": "file", "mode": f"0{stat.S_IMODE(info.st_mode):03o}",
                                         "size": info.st_size, "sha256": hashlib.sha256(data).hexdigest()}
        finally:
            os.close(fd)

    def _chmod(self, rel: str, mode: int) -> None:
        if not self.contained:
            os.chmod(self.path(rel), mode)
            return
        with resolve(str(self.root), rel) as at:
            fd = os.open(at.name or ".", _PATH_FLAGS, dir_fd=at.dir_fd)
            try:
                if stat.S_ISLNK(os.fstat(fd).st_mode):  # swapped for a link after the walk
                    raise Outside(f"{rel}: became a symbolic link: not changed")
                os.chmod(f"/proc/self/fd/{fd}", mode)  # the inode held, whatever its name now is
            finally:
                os.close(fd)

    def _delete(self, rel: str) -> None:
        if not self.contained:
            path = self.path(rel)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            return
        with resolve(str(self.root), rel, follow_last=False) as at:
            if not at.name:
                raise Outside("the workspace root itself: not deleted")
            if stat.S_ISDIR(os.lstat(at.name, dir_fd=at.dir_fd).st_mode):
                shutil.rmtree(at.name, dir_fd=at.dir_fd)  # descriptor-based: never leaves the tree
            else:
                os.unlink(at.name, dir_fd=at.dir_fd)

    def _mkdir(self, rel: str) -> None:
        if not self.contained:
            self.path(rel).mkdir(parents=True, exist_ok=True)
            return
        with resolve(str(self.root), rel, create_parents=True) as at:
            if at.name:
                try:
                    os.mkdir(at.name, 0o777, dir_fd=at.dir_fd)
                except FileExistsError:
                    if not stat.S_ISDIR(os.stat(at.name, dir_fd=at.dir_fd, follow_symlinks=False).st_mode):
                        raise

    def _symlink(self, rel: str, target: str, *, parents: bool = False) -> None:
        if not self.contained:
            path = self.path(rel)
            if parents:
                path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)
            return
        with resolve(str(self.root), rel, follow_last=False, create_parents=parents) as at:
            check_link_target(str(self.root), str(self.base), at.parts, target)
            os.symlink(target, at.name, dir_fd=at.dir_fd)

    # -- state -------------------------------------------------------------------------------

    def state(self, *, with_text: bool = True, entries: int | None = None) -> dict[str, dict[str, Any]]:
        """Returns every entry under the root: type, mode, size and SHA-256 of files, link targets.

        Never follows a link, never opens what is not a regular file; at most ``limits.MAX_ENTRIES``
        entries (``entries``, when given: what is left of a scenario's steps' cap, :func:`steps_capped`)
        and ``limits.MAX_WORKSPACE_READ`` bytes are read (a ``<capped>`` entry says so).
        """
        out: dict[str, dict[str, Any]] = {}
        budget = _Budget(entries)
        budget.settled = self._settled_now()  # before any file is looked at
        if not self.contained:
            for dirpath, dirnames, filenames in os.walk(self.root):
                if dirnames and os.path.relpath(dirpath, self.root).count(os.sep) >= limits.MAX_DEPTH - 1:
                    dirnames.clear()  # os.walk recurses once per level: it goes no deeper
                for name in sorted(dirnames + filenames):
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, self.root).replace(os.sep, "/")
                    out[rel] = entry_state(full, with_text=with_text, cache=self._states)
            return dict(sorted(out.items()))
        try:  # never through a link, and only a folder (a FIFO is not opened: O_DIRECTORY fails first)
            fd = os.open(str(self.root), _WALK_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # replaced by a link, a FIFO..., or removed
                return out
            raise
        try:
            self._walk(fd, "", out, budget, with_text)
        finally:
            os.close(fd)
        return dict(sorted(out.items()))

    def _settled_now(self) -> int | None:
        """Returns the coarse clock now when file time stamps come from it (see :func:`_settled`), else None."""
        return time.clock_gettime_ns(COARSE_CLOCK) if self.enclosure.coarse_times else None

    def _walk(self, dir_fd: int, prefix: str, out: dict[str, dict[str, Any]], budget: "_Budget",
              with_text: bool) -> None:
        """Records the entries of the folder open as ``dir_fd``, then of its folders, as
        ``os.fwalk(follow_symlinks=False)`` visits them (the same order, so the same entries and bytes
        fall under the caps), with one ``lstat`` per entry: a folder is entered only when the one
        opened (never through a link) is the one recorded."""
        dirs: list[str] = []
        others: list[str] = []
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                try:
                    (dirs if entry.is_dir() else others).append(entry.name)
                except OSError:
                    with contextlib.suppress(OSError):
                        if entry.is_symlink():
                            others.append(entry.name)
        # As deep as fwalk could go (it recursed once per level): the folders there are recorded, not entered.
        deepest = bool(dirs) and prefix.count("/") >= limits.MAX_DEPTH - 1
        infos: dict[str, os.stat_result] = {}
        for name in sorted(dirs + others):
            if budget.entries >= budget.cap:
                out["<capped>"] = {"type": "capped", "why": budget.why}
                dirs.clear()
                break
            budget.entries += 1
            try:
                info = os.lstat(name, dir_fd=dir_fd)
            except PermissionError:  # a folder the candidate left readable but not searchable: not looked into
                self._passed_over = True
                continue
            infos[name] = info
            out[prefix + name] = entry_state(name, with_text=with_text, cache=self._states, dir_fd=dir_fd,
                                             budget=budget, key_path=prefix + name, info=info)
        if deepest and dirs:
            out.setdefault("<capped>", {"type": "capped", "why": f"folders nested more than {limits.MAX_DEPTH} "
                                                                 "deep; what is below is not recorded"})
            dirs.clear()
        for name in dirs:
            before = infos.get(name)
            if before is None or not stat.S_ISDIR(before.st_mode):
                continue  # a link to a folder (is_dir follows it) is recorded, never entered
            try:
                sub = os.open(name, _WALK_FLAGS, dir_fd=dir_fd)
            except OSError:
                self._passed_over = True  # not readable (a mode the candidate set), gone, or swapped for a link
                continue
            try:
                if os.path.samestat(before, os.stat(sub)):
                    self._walk(sub, prefix + name + "/", out, budget, with_text)
            finally:
                os.close(sub)

    def hard_links_out(self, state: dict[str, dict[str, Any]] | None = None) -> list[str]:
        """Returns files in the workspace with hard links outside it (a write there changes a file outside).

        Without a ``state``, with one cut short (``<capped>``), or with one that passed over a folder it
        could not open, the link counts are read by a walk of its own (:func:`_linked_files`: one
        ``lstat`` per file, no read, at any depth), which makes such a folder searchable to look
        into it: only once the scenario's checks are done (the runner calls this last)."""
        if state is None or "<capped>" in state or self._passed_over:
            state, why = ({}, None) if not self.contained else _linked_files(str(self.root))
            if why:
                return [why]
        seen: dict[Any, int] = {}
        for entry in state.values():
            if entry.get("links", 1) > 1 and "inode" in entry:
                seen[entry["inode"]] = seen.get(entry["inode"], 0) + 1
        return [f"hard link to a file outside the workspace: {self.root / rel} ({entry['links']} links)"
                for rel, entry in state.items()
                if entry.get("links", 1) > seen.get(entry.get("inode"), 0) and entry.get("links", 1) > 1]

    def escapes(self, state: dict[str, dict[str, Any]] | None = None, *, walk: bool = True) -> list[str]:
        """Returns what was created, changed or removed around the workspace (canaries by content,
        inode and ctime; siblings), and files hard-linked outside it: from ``state`` when it was
        recorded whole, else by a walk of link counts (not with ``walk`` false: a target the harness
        refuses such a link, see ``Session.links_confined``)."""
        self.checked = True
        found = self.enclosure.escapes()
        if self.enclosure.replaced:  # no workspace of ours is left to walk, and a link is not walked through
            return found
        if walk or (state is not None and "<capped>" not in state):
            try:
                found += self.hard_links_out(state)
            except OSError as exc:  # what was found around the workspace is still reported
                found.append(f"hard links not checked in all of the workspace: {exc}")
        return found

    # -- then --------------------------------------------------------------------------------

    def check(self, then: dict[str, Any], names: dict[str, str]) -> list[Mismatch]:
        """Returns every way the workspace fails ``then``; a workspace that is no longer a folder (the
        candidate put a FIFO, a link or a file in its place, or removed it) fails it as a whole."""
        try:
            return self._check_then(then, names)
        except OSError:
            replaced = self._replaced()
            if replaced is None:
                raise
            return [Mismatch("then", "the workspace, a folder", replaced, "the workspace was replaced")]

    def _replaced(self) -> str | None:
        """Returns what is at the workspace's path when it is no longer a folder (``<missing>``), else None."""
        try:
            info = os.lstat(self.root)
        except FileNotFoundError:
            return "<missing>"
        return None if stat.S_ISDIR(info.st_mode) else _type_name(info.st_mode)

    def _check_then(self, then: dict[str, Any], names: dict[str, str]) -> list[Mismatch]:
        out: list[Mismatch] = []
        named = set(then.get("files", {})) | set(then.get("absent", ()))
        for rel, want in then.get("files", {}).items():
            try:
                out += self._check_file(rel, want, names)
            except Outside as exc:
                out.append(Mismatch(f"then.files[{rel}]", "an entry inside the workspace", f"<{exc}>",
                                    "not followed"))
            except PermissionError as exc:  # a folder on the way the candidate locked (the harness is not root)
                out.append(_locked_out(f"then.files[{rel}]", "an entry the harness can look at", exc))
        for rel in then.get("absent", ()):
            try:
                kind = self._kind(rel)
            except Outside as exc:
                out.append(Mismatch(f"then.absent[{rel}]", "no such entry", f"<{exc}>", "not followed"))
                continue
            except PermissionError as exc:
                out.append(_locked_out(f"then.absent[{rel}]", "no such entry", exc))
                continue
            if kind != "<missing>":
                out.append(Mismatch(f"then.absent[{rel}]", "no such entry", kind, "exists"))
        if then.get("others_unchanged"):
            now = self.state(with_text=False)
            if "<capped>" in now and "<capped>" in self.initial:  # both cut short: a change past the cut is not seen
                out.append(Mismatch("then.others_unchanged", "the whole workspace compared",
                                    f"<{now['<capped>'].get('why', 'recorded only in part')}>",
                                    "cannot be decided: the workspace was recorded only in part"))
            for rel in sorted(set(now) | set(self.initial)):
                if rel in named or _is_parent_of_named(rel, named):
                    continue
                before, after = _comparable(self.initial.get(rel)), _comparable(now.get(rel))
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
            try:  # a regular file only, contained: never open a FIFO or follow a link out
                read = self._read(rel, DIFF_LIMIT)
                if read.kind == "file" and read.error is None and not read.truncated:
                    return _content_mismatch(where, self._given_bytes[rel], read.data, why="content changed")
            except OSError:
                pass  # unreadable now: the hashes below still say that it changed
        return Mismatch(where, _brief(before), _brief(after), why)

    def _kind(self, rel: str) -> str:
        """Returns the type of the entry at ``rel`` (a link is a symlink), or ``<missing>``."""
        if not self.contained:
            return _kind(self.path(rel))
        with resolve(str(self.root), rel, follow_last=False) as at:
            try:
                info = os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)
            except (FileNotFoundError, NotADirectoryError):
                return "<missing>"
        return _type_name(info.st_mode)

    def _check_file(self, rel: str, want: Any, names: dict[str, str]) -> list[Mismatch]:
        if not self.contained:
            return self._check_entry(rel, want, names, None)
        # One walk to the entry serves its type, mode, link target and (unless it is a link, which
        # a read follows inside the workspace) its bytes.
        with resolve(str(self.root), rel, follow_last=False) as at:
            return self._check_entry(rel, want, names, at)

    def _check_entry(self, rel: str, want: Any, names: dict[str, str], at: Any) -> list[Mismatch]:
        where = f"then.files[{rel}]"
        info: os.stat_result | None = None
        if at is None:
            kind = self._kind(rel)
        else:
            try:
                info = at.info if at.name else os.stat(at.dir_fd)  # the walk's lstat of it
                kind = _type_name(info.st_mode) if info is not None else "<missing>"
            except (FileNotFoundError, NotADirectoryError):
                kind = "<missing>"
        if kind == "<missing>":
            return [Mismatch(where, "an entry", "<missing>", "does not exist")]
        if not isinstance(want, dict) or not (set(want) & {"content", "matches", "sha256", "size", "mode",
                                                          "type", "target"}):
            want = {"content": want}
        out: list[Mismatch] = []
        if "type" in want and want["type"] != kind:
            out.append(Mismatch(f"{where}.type", want["type"], kind))
        if "target" in want:
            if kind != "symlink":
                observed = None
            elif at is None:
                observed = self._readlink(rel)
            else:
                observed = os.readlink(at.name, dir_fd=at.dir_fd)
            expected = _expand(want["target"], names)
            if observed != expected:
                out.append(Mismatch(f"{where}.target", expected, observed))
        if "mode" in want:
            observed_mode = f"0{stat.S_IMODE((info or self._lstat(rel)).st_mode):03o}"
            if int(observed_mode, 8) != int(want["mode"], 8):
                out.append(Mismatch(f"{where}.mode", want["mode"], observed_mode))
        content_keys = {"content", "matches", "sha256", "size"} & set(want)
        if content_keys:
            expected_bytes = to_bytes(want["content"]) if "content" in want else None
            # Read no more than can decide: the expected length + 1 for `content`, the cap otherwise.
            limit = len(expected_bytes) + 1 if expected_bytes is not None and not content_keys - {"content", "size"} \
                else limits.MAX_FILE_READ
            read = (_read_regular(at.dir_fd, at.name, limit) if at is not None and kind != "symlink"
                    else self._read(rel, limit))
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

    def _lstat(self, rel: str) -> os.stat_result:
        if not self.contained:
            return os.lstat(self.path(rel))
        with resolve(str(self.root), rel, follow_last=False) as at:
            return os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)

    def _readlink(self, rel: str) -> str:
        if not self.contained:
            return os.readlink(self.path(rel))
        with resolve(str(self.root), rel, follow_last=False) as at:
            return os.readlink(at.name, dir_fd=at.dir_fd)

    def _read(self, rel: str, limit: int) -> "_Read":
        """Reads a regular file (a link followed only inside the workspace), at most ``limit`` bytes."""
        if not self.contained:
            path = self.path(rel)
            if not path.is_file():
                return _Read(_kind(path))
            data = path.read_bytes()
            return _Read("file", data[:limit], len(data), truncated=len(data) > limit)
        with resolve(str(self.root), rel) as at:
            return _read_regular(at.dir_fd, at.name, limit)


class _Read:
    """What reading one entry gave: its type, the bytes read (capped), its size, or why it failed."""

    def __init__(self, kind: str, data: bytes = b"", size: int = 0, *, truncated: bool = False,
                 error: str | None = None) -> None:
        self.kind, self.data, self.size, self.truncated, self.error = kind, data, size, truncated, error


def _read_regular(dir_fd: int, name: str, limit: int) -> _Read:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return _Read("<missing>")
    except OSError as exc:
        try:
            kind = _type_name(os.lstat(name, dir_fd=dir_fd).st_mode)
        except OSError:
            kind = "<missing>"
        return _Read(kind, error=exc.strerror if kind == "file" else None)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a FIFO, socket or device is never read
            return _Read(_type_name(info.st_mode))
        chunks, total = [], 0
        while total < limit:
            wanted = min(1 << 20, limit - total)
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < wanted and total >= info.st_size:
                break  # a regular file read short at its size: its end
        data = b"".join(chunks)
        truncated = info.st_size > total or (total >= limit and os.read(fd, 1) != b"")
        return _Read("file", data, max(info.st_size, total), truncated=truncated)
    except OSError as exc:
        return _Read("file", error=exc.strerror)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Leftover:
    """A workspace base that could not be removed, and why (every report names it)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"could not remove {self.path} ({self.reason})"

    def as_dict(self) -> dict[str, str]:
        """Returns the JSON report's form: ``{"path", "reason"}``."""
        return {"path": self.path, "reason": self.reason}


def _unescape_mount(text: str) -> str:
    """Decodes a mount point as /proc/self/mountinfo writes it (space, tab, newline, backslash as \\ooo)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


class _MountTable:
    """The mount points of this process's namespace, read again only when the kernel says they changed.

    ``/proc/self/mountinfo`` is pollable: a mount or unmount anywhere marks the open file with
    POLLPRI (proc(5)), so removing a workspace costs one ``poll`` instead of reading and parsing
    the table. A forked worker opens its own (the mark is per open file).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._file: Any = None
        self._poll: Any = None
        self._pid = -1  # the fork generation (below) the open file belongs to
        self._points: tuple[str, ...] = ()
        self._types: dict[str, str] = {}  # mount point -> file system type (the last mount there wins)

    def points(self) -> tuple[str, ...]:
        """Returns every mount point (decoded); empty where the table cannot be read (not Linux)."""
        import select
        with self._lock:
            try:
                if self._file is None or self._pid != _forks[0]:
                    self._file = open("/proc/self/mountinfo", "rb")
                    self._poll, self._pid = select.poll(), _forks[0]
                    self._poll.register(self._file, select.POLLPRI | select.POLLERR)
                    self._poll.poll(0)  # the first poll reports the table as changed: consumed here
                elif not self._poll.poll(0):
                    return self._points
                self._file.seek(0)
                lines = self._file.read(1 << 22).decode("utf-8", "surrogateescape").splitlines()
            except (OSError, AttributeError):
                return ()
            fields = [line.split(" ") for line in lines]
            self._points = tuple(_unescape_mount(f[4]) for f in fields if len(f) > 4)
            # After the optional fields, " - " and the file system type (proc(5)).
            self._types = {_unescape_mount(f[4]): f[f.index("-", 6) + 1] for f in fields
                           if len(f) > 4 and "-" in f[6:-1]}
            return self._points

    def type_of(self, folder: str) -> str | None:
        """Returns the type of the file system ``folder`` (a resolved path) lies on, or None if unknown."""
        self.points()
        with self._lock:
            best = max((point for point in self._types
                        if folder == point or folder.startswith(point.rstrip("/") + "/")), key=len, default=None)
            return self._types.get(best) if best is not None else None


#: Forks of this process so far, as seen by the child: a forked worker knows it is one without
#: asking the kernel for its process id at every look at the mount table.
_forks = [0]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _forks.__setitem__(0, _forks[0] + 1))

_MOUNTS = _MountTable()


def mounts_below(base: str | os.PathLike[str]) -> set[str]:
    """Returns the mount points strictly below ``base`` (resolved paths), from /proc/self/mountinfo.

    Empty where that file cannot be read (not Linux): nothing is then known to be mounted there.
    """
    points = _MOUNTS.points()
    parent, name = os.path.split(os.path.abspath(base))
    real = _resolved(parent).rstrip('/')  # the parent resolved once per run, not per workspace
    return {point for point in _below(points, real + "/") if point.startswith(f"{real}/{name}/")}


def _below(points: tuple[str, ...], prefix: str) -> tuple[str, ...]:
    """Returns the mount points under ``prefix`` (usually none): worked out once per mount table and
    folder, as every workspace of a run has the same parent."""
    known = _BELOW.get(prefix)
    if known is None or known[0] is not points:
        if len(_BELOW) >= 64:
            _BELOW.clear()
        known = _BELOW[prefix] = (points, tuple(point for point in points if point.startswith(prefix)))
    return known[1]


_BELOW: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


#: File systems held in memory: removing a tree there is quick and never waits on a disk.
MEMORY_FILE_SYSTEMS = frozenset({"tmpfs", "ramfs"})


def in_memory(folder: str | None) -> bool:
    """Returns whether ``folder`` (None: the system's temporary folder) is on a memory file system."""
    return _MOUNTS.type_of(_resolved(folder or tempfile.gettempdir())) in MEMORY_FILE_SYSTEMS


@functools.lru_cache(maxsize=64)
def _resolved(folder: str) -> str:
    return os.path.realpath(folder)


def _remove_around(base: Path, mounts: set[str]) -> None:
    """Removes everything below ``base`` that is not a mount point or inside one; never descends into one."""
    real = os.path.realpath(base)
    with contextlib.suppress(OSError):
        os.chmod(real, 0o700)
    files: list[str] = []
    dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(real):
        kept = []
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                files.append(path)
            elif path not in mounts:
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)  # a mode-000 folder is listed next, so searchable first
                kept.append(name)
                dirs.append(path)
        dirnames[:] = kept
        files += [os.path.join(dirpath, name) for name in filenames]
    for path in files:
        with contextlib.suppress(OSError):
            os.unlink(path)
    for path in reversed(dirs):  # deepest first; a folder holding a mount point stays
        with contextlib.suppress(OSError):
            os.rmdir(path)
    with contextlib.suppress(OSError):
        os.rmdir(real)


def _count(base: Path, mounts: set[str]) -> int:
    """Returns how many entries are left below ``base``, not counting what is inside a mount point."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(os.path.realpath(base)):
        total += len(dirnames) + len(filenames)
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in mounts]
    return total


class Remover:
    """Removes finished workspaces (and enclosures): on a disk on a background thread, so the next
    scenario need not wait; on a memory file system in the calling thread (``inline``).

    Deleting a tree on a disk is mostly system calls that wait for the disk, which run beside the
    next scenario's work on another core; ``drain`` waits until every workspace handed over is
    gone. Finished workspaces (already moved to the trash, so out of every later scenario's way)
    are handed over ``BATCH`` at a time: waking the thread costs a hand-over of the GIL each time,
    more than removing a small workspace.

    ``inline``: the trees are removed in the calling thread instead (``BATCH`` at a time, as
    above), for workspaces on a memory file system: there removing is a few microseconds of
    system calls per entry and never waits, so a thread would only contend for the GIL with the
    scenarios' own work (each system call of one hands the GIL to the other), which costs more
    than the removal itself.
    """

    #: Finished workspaces handed to the thread at once.
    BATCH = 32

    def __init__(self, *, inline: bool = False) -> None:
        self._queue: queue.Queue[list[Workspace | Tree | Enclosure] | None] = queue.Queue()
        self._pending: list[Workspace | Tree | Enclosure] = []
        self.leftovers: list[Leftover] = []  # workspaces that could not be removed: every report names them
        self._thread: threading.Thread | None = None
        self.inline = inline

    def remove(self, workspace: Workspace | Tree | Enclosure) -> None:
        """Schedules ``workspace`` (anything with ``base`` and ``remove()``) for removal."""
        with processes.deferred():  # a signal must not leave a thread unstarted or a workspace unqueued
            self._pending.append(workspace)
            if isinstance(workspace, Tree) and len(self._pending) < self.BATCH:
                return  # in the trash: nothing waits for it (an enclosure or a whole workspace goes at once)
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._pending:
            return
        if self.inline:
            # One at a time, each dropped from the list once removed: an interruption (Ctrl-C where
            # nothing defers it, as under pytest) leaves the rest pending for ``drain``, never forgotten.
            while self._pending:
                self._remove(self._pending[:1])
                del self._pending[0]
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="workspace-remover", daemon=True)
            self._thread.start()
        batch, self._pending = self._pending, []
        self._queue.put(batch)

    def drain(self) -> None:
        """Returns once every scheduled workspace is removed."""
        with processes.deferred():  # an interrupted join leaves a thread that later work is queued to in vain
            self._hand_over()
            if self._thread is not None:
                self._queue.put(None)
                self._thread.join()
                self._thread = None

    def _work(self) -> None:
        while (batch := self._queue.get()) is not None:
            self._remove(batch)

    def _remove(self, batch: list["Workspace | Tree | Enclosure"]) -> None:
        for workspace in batch:
            try:
                left = workspace.remove()
            except OSError as exc:
                left = Leftover(str(workspace.base), str(exc))
            if left:
                self.leftovers.append(left)


#: Folders the walk for hard links holds open at once; one above them is opened again through ``..``.
_OPEN_DIRS = 32


def _linked_files(root: str) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Returns the regular files below ``root`` with more than one link (``{rel: {links, inode}}``), and
    why the walk stopped short (None when it saw everything).

    One ``lstat`` per entry, no file opened; iterative, through descriptors (never through a link),
    at any depth: at most ``_OPEN_DIRS`` folders are held open, one above them is reached again
    through its child's ``..`` and checked to be the folder left. Bounded by ten times
    ``limits.MAX_ENTRIES`` entries. A folder gone or swapped for a link meanwhile is passed over; one
    whose mode keeps the harness out (a candidate running as the harness's own user can set mode 000
    and hide a link below) is made searchable first, by its descriptor (harness/containment/cleanup.py), so this
    walk changes modes in the workspace and runs only after the scenario's checks. One that still
    cannot be looked into is said (why the walk stopped short).
    """
    found: dict[str, dict[str, Any]] = {}
    try:
        top = _open_searchable(root, None)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # no folder now: nothing linked in it
            return found, None
        raise
    cap, seen = 10 * limits.MAX_ENTRIES, 0
    # Each frame: [descriptor (None while closed), names left, prefix, the folder's stat once closed].
    stack: list[list[Any]] = [[top, iter(os.listdir(top)), "", None]]
    try:
        while stack:
            frame = stack[-1]
            fd = frame[0]
            name = next(frame[1], None)
            if name is None:
                stack.pop()
                if stack and stack[-1][0] is None:
                    above = stack[-1]
                    try:
                        up = os.open("..", _WALK_FLAGS, dir_fd=fd)
                    except OSError:
                        up = None
                    if up is not None and not os.path.samestat(os.fstat(up), above[3]):
                        os.close(up)
                        up = None
                    if up is None:
                        os.close(fd)
                        return found, (f"hard links not checked in all of the workspace: "
                                       f"{os.path.join(root, frame[2])} was moved during the check")
                    above[0] = up
                os.close(fd)
                continue
            seen += 1
            if seen > cap:
                return found, f"hard links not checked in all of the workspace: more than {cap} entries"
            try:
                info = os.lstat(name, dir_fd=fd)
            except PermissionError:  # readable but not searchable: made searchable through its descriptor
                try:
                    os.fchmod(fd, 0o700)
                    info = os.lstat(name, dir_fd=fd)
                except OSError as exc:
                    return found, _not_looked_into(root, frame[2] + name, exc)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    found[frame[2] + name] = {"links": info.st_nlink, "inode": info.st_ino}
            elif stat.S_ISDIR(info.st_mode):
                try:
                    sub = _open_searchable(name, fd)
                except PermissionError as exc:
                    return found, _not_looked_into(root, frame[2] + name, exc)
                except OSError:
                    continue  # gone, or swapped for a link meanwhile
                try:
                    names = iter(os.listdir(sub))
                except OSError:
                    os.close(sub)
                    continue
                stack.append([sub, names, frame[2] + name + "/", None])
                if len(stack) > _OPEN_DIRS and stack[-_OPEN_DIRS - 1][0] is not None:
                    far = stack[-_OPEN_DIRS - 1]
                    far[3] = os.fstat(far[0])
                    os.close(far[0])
                    far[0] = None
    finally:
        for frame in stack:
            if frame[0] is not None:
                with contextlib.suppress(OSError):
                    os.close(frame[0])
    return found, None


def _open_searchable(name: str, dir_fd: int | None) -> int:
    """Opens the folder ``name`` (never through a link); one whose mode keeps the harness out is given
    mode 0700 first, pinned by a descriptor (``trees.searchable``: a link put in its place meanwhile is
    not followed)."""
    where = {} if dir_fd is None else {"dir_fd": dir_fd}
    try:
        return os.open(name, _WALK_FLAGS, **where)
    except PermissionError:
        from harness.containment import cleanup as trees
        trees.searchable(name, dir_fd)
        return os.open(name, _WALK_FLAGS, **where)


def _not_looked_into(root: str, rel: str, exc: OSError) -> str:
    return f"hard links not checked in all of the workspace: {os.path.join(root, rel)} could not be looked into ({exc.strerror})"


def steps_capped() -> dict[str, str]:
    """Returns what a state recorded after a step holds past ``limits.MAX_ENTRIES`` entries over all of a
    scenario's steps (given entries times steps would otherwise multiply)."""
    return {"type": "capped", "why": f"more than {limits.MAX_ENTRIES} entries recorded over the scenario's steps; "
                                     "the rest is not recorded"}


class _Budget:
    """What one reading of the workspace has used so far: entries and bytes."""

    def __init__(self, cap: int | None = None) -> None:
        self.entries = 0
        self.bytes = 0
        # The entries one reading may record: the workspace's cap, or what a scenario's steps left of it.
        self.cap = limits.MAX_ENTRIES if cap is None else cap
        self.why = (f"more than {limits.MAX_ENTRIES} entries; the rest is not recorded" if cap is None
                    else steps_capped()["why"])
        # The coarse clock when the reading began, where file times come from it: a record is kept
        # for reuse only when no later change can leave its file's signature as it is (_settled).
        self.settled: int | None = None


def entry_state(path: str, *, with_text: bool = True,
                cache: dict[tuple[Any, ...], dict[str, Any]] | None = None, dir_fd: int | None = None,
                budget: _Budget | None = None, key_path: str | None = None,
                info: os.stat_result | None = None) -> dict[str, Any]:
    """Returns the recorded state of one entry (``path`` relative to ``dir_fd`` when given), never following links.

    Only a regular file is opened (``O_NOFOLLOW | O_NONBLOCK``, then checked again on the open
    descriptor); a FIFO, socket or device is recorded by its type. At most ``limits.MAX_FILE_READ``
    bytes of a file (and what is left of the workspace's ``budget``) are hashed; a file cut short
    records ``sha256_of_first`` with the number of bytes instead of ``sha256``. A file with more
    than one hard link records ``links`` and ``inode``. With ``cache``, a file whose inode, size,
    mode, mtime and ctime are unchanged is not read again. ``info`` is the entry's ``lstat`` when
    the caller has just taken it.
    """
    if info is None:
        info = os.lstat(path, dir_fd=dir_fd)
    mode = f"0{stat.S_IMODE(info.st_mode):03o}"
    if stat.S_ISLNK(info.st_mode):
        return {"type": "symlink", "target": os.readlink(path, dir_fd=dir_fd)}
    if stat.S_ISDIR(info.st_mode):
        return {"type": "dir", "mode": mode}
    if not stat.S_ISREG(info.st_mode):
        return {"type": _type_name(info.st_mode), "mode": mode}
    key = (key_path or path, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns,
           info.st_nlink, with_text)
    if cache is not None and key in cache:
        return dict(cache[key])
    limit = limits.MAX_FILE_READ
    if budget is not None:
        limit = max(0, min(limit, limits.MAX_WORKSPACE_READ - budget.bytes))
    entry = _file_state(path, mode, info.st_size, with_text, dir_fd, limit)
    if budget is not None:
        budget.bytes += min(info.st_size, limit)
    if info.st_nlink > 1:
        entry.update(links=info.st_nlink, inode=info.st_ino)
    if cache is not None and (budget is None or _settled(info.st_ctime_ns, budget.settled)):
        cache[key] = dict(entry)
    return entry


def _file_state(path: str, mode: str, size: int, with_text: bool, dir_fd: int | None, limit: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "file", "mode": mode, "size": size}
    try:
        if dir_fd is None:  # on pyfakefs, whose os.open changes an existing file's mode; nothing real there
            with open(path, "rb") as handle:
                return _finish_file_state(entry, handle.read(limit + 1), limit, with_text)
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        entry["unreadable"] = exc.strerror
        return entry
    except Exception as exc:  # pyfakefs: a file whose write failed on a full disk has a size but no data
        entry["unreadable"] = type(exc).__name__
        return entry
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped after the lstat: recorded as what it is now
            return {"type": _type_name(info.st_mode), "mode": mode}
        digest = hashlib.sha256()
        head = b""
        total = 0
        while total < limit:
            wanted = min(1 << 20, limit - total)
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            if total < TEXT_LIMIT + 1:
                head += chunk[:TEXT_LIMIT + 1 - total]
            digest.update(chunk)
            total += len(chunk)
            if len(chunk) < wanted and total >= info.st_size:
                break  # a regular file read short at its size: its end (no second read to be told so)
        more = total >= limit and os.read(fd, 1) != b""
    except OSError as exc:
        entry["unreadable"] = exc.strerror
        return entry
    except Exception as exc:  # pyfakefs, as above
        entry["unreadable"] = type(exc).__name__
        return entry
    finally:
        os.close(fd)
    if more:
        entry["sha256_of_first"] = {"bytes": total, "sha256": digest.hexdigest(),
                                    "why": f"read capped at {total} bytes (harness/util/limits.py)"}
        return entry
    entry["sha256"] = digest.hexdigest()
    if with_text and total <= TEXT_LIMIT:
        try:
            entry["text"] = head.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return entry


def _finish_file_state(entry: dict[str, Any], data: bytes, limit: int, with_text: bool) -> dict[str, Any]:
    if len(data) > limit:
        entry["sha256_of_first"] = {"bytes": limit, "sha256": hashlib.sha256(data[:limit]).hexdigest(),
                                    "why": f"read capped at {limit} bytes (harness/util/limits.py)"}
        return entry
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    if with_text and len(data) <= TEXT_LIMIT:
        try:
            entry["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return entry


def _locked_out(where: str, expected: str, exc: PermissionError) -> Mismatch:
    """Returns the mismatch of a ``then`` entry behind a folder whose mode keeps the harness out: what
    the candidate left cannot be looked at, so the expectation is not met (not changed to look)."""
    return Mismatch(where, expected, f"<{exc.strerror}: {exc.filename}>", "not readable: a mode keeps the harness out")


def _type_name(mode: int) -> str:
    """Returns the recorded type of a file mode: file, dir, symlink, fifo, socket, char-device, block-device."""
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "symlink"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "char-device"),
                       (stat.S_ISBLK, "block-device")):
        if test(mode):
            return name
    return "unknown"


def _comparable(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    # The inode of a multiply-linked file is bookkeeping, not a change of the file.
    if entry is None or "inode" not in entry:
        return entry
    return {k: v for k, v in entry.items() if k != "inode"}


def _has_mode(spec: Any) -> bool:
    return isinstance(spec, dict) and "content" in spec


def _expand(text: str, names: dict[str, str]) -> str:
    return substitute(text, names)


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WALK_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_PATH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC


def _signature(path: "str | Path") -> tuple[int, ...] | None:
    """Returns what a write, a replacement or a new entry changes: inode and ctime first, then the rest."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_ctime_ns, info.st_dev, info.st_mtime_ns, info.st_size, info.st_mode, info.st_nlink


def _head(path: "str | Path", size: int) -> bytes | None:
    """Returns the first ``size`` bytes of a regular file (never through a link, never a FIFO), or None."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


#: The clock the kernel takes file time stamps from: CLOCK_REALTIME_COARSE (5 on Linux; Python's
#: ``time`` does not name it), a tick of some milliseconds behind the fine one.
COARSE_CLOCK = getattr(time, "CLOCK_REALTIME_COARSE", 5 if sys.platform.startswith("linux") else time.CLOCK_REALTIME)


def _wait_past(ctime_ns: int) -> None:
    """Returns once the clock file times are taken from (the coarse one) is past ``ctime_ns``: then any
    later change of the file gets a later ctime, however coarse the file system's time stamps are."""
    deadline = time.monotonic() + 0.1  # a clock set back must not hold the run
    while time.clock_gettime_ns(COARSE_CLOCK) <= ctime_ns and time.monotonic() < deadline:
        time.sleep(0.001)


def _settled(ctime_ns: int, settled: int | None) -> bool:
    """Returns whether any change of a file made after the coarse clock read ``settled`` gets a ctime
    other than ``ctime_ns`` (None: the file system's ctimes are fine, each change its own). A ctime of
    whole seconds is taken as one of a file system that keeps no less."""
    if settled is None:
        return True
    return ctime_ns + (1_000_000_000 if ctime_ns % 1_000_000_000 == 0 else 0) < settled


def remove_tree(base: "str | Path") -> "Leftover | None":
    """Removes ``base`` and everything under it, whatever modes, flags or depth a candidate left.

    Folders are made searchable first (mode 000 trees); what still resists (an immutable flag)
    gets ``chattr -R -i`` and a second try. A mount point below the base (a candidate running as
    root may bind-mount a folder from elsewhere into its workspace) is never entered: removing
    through it would delete what it shows from outside. A tree deeper than the removal's recursion
    can go is made shallow first (harness/containment/cleanup.py). Returns what could not be removed, or None.
    """
    try:
        return _remove_tree(base)
    except RecursionError:
        pass
    if mounts_below(base):  # moving folders up could move a mount point's path out of sight: not done
        return Leftover(str(base), "folders nested too deep to remove around the mount points below them; "
                                   "unmount them to remove it")
    from harness.containment import cleanup as trees
    try:
        trees.flatten(base)
        return _remove_tree(base)
    except (OSError, RecursionError) as exc:
        return Leftover(str(base), f"folders nested too deep to remove: {exc}")


def _remove_tree(base: Path) -> "Leftover | None":
    try:
        info = os.lstat(base)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):  # a link (or file) a candidate put where its folder was: that entry alone
        os.unlink(base)
        return None
    mounts = mounts_below(base)
    if mounts:
        _remove_around(base, mounts)
        if not os.path.lexists(base):
            return None
        names = ", ".join(sorted(os.path.relpath(m, os.path.realpath(base)) for m in mounts))
        return Leftover(str(base), f"{_count(base, mounts)} entries left; mount points not "
                                   f"entered, unmount them to remove it: {names}")
    for attempt in range(2):
        if attempt or not _plain_rmtree(base):
            from harness.containment import cleanup as trees
            trees.make_searchable(base)  # by descriptors: a folder swapped for a link is not followed
            shutil.rmtree(base, ignore_errors=True)
        if not os.path.lexists(base):
            return None
        if attempt == 0 and shutil.which("chattr"):
            subprocess.run(["chattr", "-R", "-i", "-a", str(base)], capture_output=True, timeout=60)
    return Leftover(str(base), f"{_count(base, set())} entries left")


def _plain_rmtree(base: "str | Path") -> bool:
    """Tries a plain removal first (what nearly every workspace needs); returns whether it is gone."""
    failed: list[Any] = []
    shutil.rmtree(base, onerror=lambda *error: failed.append(error))
    # Without an error the base itself was removed last: only after one is there anything to look at.
    return not failed or not os.path.lexists(base)


def _advance_mtime_fd(fd: int, before: int) -> None:
    """Moves the mtime of the open file at least one second past ``before`` (any mtime resolution sees it)."""
    now = os.fstat(fd).st_mtime_ns
    wanted = max(now, before + 1_000_000_000, time.time_ns())
    os.utime(fd, ns=(wanted, wanted))


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
    if not os.path.lexists(path):
        return "<missing>"
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
