"""The scenario's workspace on disk: made from ``given``, changed by actions, read back as its state.

Each scenario gets a fresh, empty workspace in the run's enclosure (harness/containment/enclosure.py:
the canaries around it, checked after each scenario); a finished one is moved out and removed
(harness/containment/cleanup.py). Whether the state meets ``then`` is judged in harness/run/judge.py.

Everything the harness does here is contained (harness/containment/paths.py): paths are walked from a
descriptor of the root with ``O_NOFOLLOW``, so no operation of the harness's own goes through a
symbolic link out of the workspace; such an operation raises :class:`~harness.containment.paths.Outside`
and is not performed. Reading the workspace back never opens what is not a regular file (FIFOs,
sockets and devices are recorded by type), and the bytes read per file and per workspace and the
entries recorded are capped (harness/util/limits.py), the cap shown in the record.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from harness.containment import fake_records
from harness.containment.cleanup import Leftover, Tree, remove_tree
from harness.containment.enclosure import COARSE_CLOCK, Enclosure, PrivateEnclosure, linked_files
from harness.containment.paths import Outside, check_link_target, resolve
from harness.run.file_ops import (
    Read,
    advance_mtime,
    advance_mtime_fd,
    kind_of,
    mtime_after,
    mtime_ns,
    new_in_root,
    read_regular,
)
from harness.run.recorded import TEXT_LIMIT, fake_kind, fake_read, finish_file_state, recorded_state
from harness.scenario.content_spec import to_bytes
from harness.scenario.placeholders import substitute
from harness.util import limits
from harness.util.fileio import PATH_FLAGS, READ_FLAGS, WALK_FLAGS, type_name

DIFF_LIMIT = 1 << 20  # a changed file up to this size is shown as a content diff or a hex window


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
        if enclosure is None:  # a file system of its own (pyfakefs) needs no canaries
            enclosure = Enclosure(prefix, parent) if contained else PrivateEnclosure(prefix, parent)
        self.enclosure = enclosure
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
        self.given_bytes: dict[str, bytes] = {}
        # A file's recorded state by its stat signature: recording after every step re-reads only what changed.
        self._states: dict[tuple[Any, ...], dict[str, Any]] = {}
        # A state recorded since the last step passed over a folder or an entry it could not open or
        # look at (a mode the candidate set): such a state says nothing of the links below it.
        self._passed_over = False
        self._reading: tuple[Any, dict[str, dict[str, Any]]] | None = None  # on pyfakefs, see state()
        #: Whether a reading holds until the workspace may change (:meth:`stirred`): the runner says so
        #: for a target that changes it only while a call runs (``Session.acts_only_in_calls``).
        self.hold_readings = False
        # The last reading held (see state()): whether it has the texts, the entries it looked at, and
        # its own copy of what it recorded; None once the workspace may have changed.
        self._held: tuple[bool, int, dict[str, dict[str, Any]]] | None = None

    def held_entry(self, rel: str) -> dict[str, Any] | None:
        """Returns what the reading held (see :meth:`state`) recorded at ``rel``, a path as the reading
        names it (no link, ``.`` or ``..`` on the way), or None (no reading held, or no such entry)."""
        return self._held[2].get(rel) if self._held is not None else None

    def stirred(self) -> None:
        """Forgets the reading held: the target or the harness may change the workspace from now on."""
        self._held = None

    def remove(self) -> Leftover | None:
        """Removes the workspace (with its enclosure when it made its own), whatever modes or flags the
        candidate left (see :func:`remove_tree`). Returns why it could not be removed, or None."""
        return self.enclosure.remove() if self._owned else remove_tree(self.root)

    def retire(self) -> Tree | Workspace | None:
        """Frees the enclosure's place at once: the workspace is moved to the trash and returned for removal.

        A workspace with its own enclosure is returned whole. Raises OSError when it cannot be moved.
        """
        if self._owned:
            return self
        return self.enclosure.move_out(self.root)

    # -- given -------------------------------------------------------------------------------

    def populate(self, given: dict[str, Any], names: dict[str, str], *, record_initial: bool = True,
                 read_later: bool = False) -> None:
        """Lays out ``given``: directories, files, symlinks, then modes (deepest first).

        ``record_initial`` keeps the state laid out, which ``others_unchanged`` compares with; a
        scenario that does not ask for it spares reading back what was just written. ``read_later``:
        the workspace will be read (the states after the steps are recorded), so the files' records
        are kept from the bytes written as well, and a file unchanged since is not read back.
        """
        self._held = None
        modes: list[tuple[str, int]] = []
        # What a file was written with is what reading it back would give: its record is kept (by
        # the stat signature the write left) when no cap could have cut that reading short.
        written: dict[tuple[Any, ...], dict[str, Any]] | None = {} if record_initial or read_later else None
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
                self.given_bytes[rel] = data
            if mode:
                modes.append((rel, int(mode, 8)))
        for rel, target in given.get("symlinks", {}).items():
            self._symlink(rel, _expand(target, names), parents=True)
        for rel, mode in sorted(modes, key=lambda item: -len(Path(item[0]).parts)):
            self._chmod(rel, mode)
        if written and total <= limits.MAX_WORKSPACE_READ:
            settled = self._settled_now()
            self._states.update(written if settled is None else
                                {key: entry for key, entry in written.items() if _settled(key[5], settled)})
        if record_initial:
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
        self._held = None
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

        Given ``remember``, the file's records (as :func:`entry_state` would read it back, without its
        text and with it) are put there under the stat signature the write left: a reading of the
        workspace that finds that signature takes the record instead of the file's bytes.
        """
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        if not self.contained:
            fs = fake_records.filesystem() if parents and not append and mtime is None else None
            if fs is not None and fake_records.lay_out(fs, str(self.root), rel, data):
                return  # a new file of the layout, made as the fake os makes it (see lay_out)
            path = self.path(rel)
            if parents and "/" in rel:  # (a name alone is made in the root, there since the layout began)
                path.parent.mkdir(parents=True, exist_ok=True)
            before = mtime_ns(path)
            wanted = None if mtime is None else mtime_after(mtime, before)
            with open(path, "ab" if append else "wb") as handle:
                handle.write(data)
            if wanted is None:
                advance_mtime(path, before)
            else:
                os.utime(path, ns=(os.stat(path).st_atime_ns, wanted))
            return
        fd = new_in_root(str(self.root), rel) if parents and mtime is None and not append else None
        if fd is not None:  # a new file of the layout, right in the root: what the walk below would make
            before, wanted, real = None, None, rel
        else:
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
                advance_mtime_fd(fd, before)
            if remember is not None and not append and len(data) <= limits.MAX_FILE_READ:
                info = os.fstat(fd)
                if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_size == len(data):
                    key = (real, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns,
                           info.st_nlink)
                    entry = {"type": "file", "mode": f"0{stat.S_IMODE(info.st_mode):03o}",
                             "size": info.st_size, "sha256": hashlib.sha256(data).hexdigest()}
                    remember[(*key, False)] = entry
                    if len(data) <= TEXT_LIMIT:  # (as _file_state keeps the text of a short file that decodes)
                        with contextlib.suppress(UnicodeDecodeError):
                            entry = {**entry, "text": data.decode("utf-8")}
                    remember[(*key, True)] = entry
        finally:
            os.close(fd)

    def _chmod(self, rel: str, mode: int) -> None:
        if not self.contained:
            os.chmod(self.path(rel), mode)
            return
        with resolve(str(self.root), rel) as at:
            fd = os.open(at.name or ".", PATH_FLAGS, dir_fd=at.dir_fd)
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
            fs = fake_records.filesystem()
            if fs is None or not fake_records.lay_out(fs, str(self.root), rel):  # (see lay_out)
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

        With ``hold_readings``, a whole reading (nothing capped, no file read short for the bytes
        left of the workspace's cap) is held until :meth:`stirred`, an action or a new layout: a
        reading asked for meanwhile (after the last step, for ``then`` and the final state) is a copy
        of it, without the texts where it asks for none: what reading again would give, as the
        records of unchanged files come from the cache of signatures anyway.
        """
        out: dict[str, dict[str, Any]] = {}
        held = self._held
        if held is not None and (held[0] or not with_text) and held[1] <= (limits.MAX_ENTRIES if entries is None else entries):
            return {rel: {key: value for key, value in entry.items() if key != "text"} if not with_text and "text" in entry
                    else dict(entry) for rel, entry in held[2].items()}
        budget = _Budget(entries)
        budget.settled = self._settled_now()  # before any file is looked at
        if not self.contained:  # pyfakefs: read with the text (all a reading without it leaves out), and kept
            fs = fake_records.filesystem()  # while its records are as they were (harness/containment/fake_records.py)
            records = fake_records.below(fs, str(self.root)) if fs is not None else None
            if records is None or self._reading is None or self._reading[0] != records:
                tree = fake_records.plain_tree(fs, str(self.root)) if records is not None else None
                if tree is not None:  # the records tell all the walk would read, as it would read it
                    for rel, node in tree:
                        out[rel] = recorded_state(f"{self.root}/{rel}", node, self._states)
                else:
                    self._walk_plainly(str(self.root), "", out, with_text or records is not None)
                self._reading = (records, dict(sorted(out.items())))
            return {name: {key: value for key, value in entry.items() if with_text or key != "text"}
                    for name, entry in self._reading[1].items()}
        try:  # never through a link, and only a folder (a FIFO is not opened: O_DIRECTORY fails first)
            fd = os.open(str(self.root), WALK_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # replaced by a link, a FIFO..., or removed
                return out
            raise
        try:
            self._walk(fd, "", out, budget, with_text)
        finally:
            os.close(fd)
        reading = dict(sorted(out.items()))
        # Held only when reading again could not record it otherwise: nothing capped, and every file read
        # in full (reading again, some records from the cache count no bytes: the cap cuts no later file).
        if (self.hold_readings and "<capped>" not in reading and (held is None or with_text or not held[0])
                and budget.bytes <= limits.MAX_WORKSPACE_READ - limits.MAX_FILE_READ):
            self._held = (with_text, budget.entries, {rel: dict(entry) for rel, entry in reading.items()})
        return reading

    def _walk_plainly(self, folder: str, prefix: str, out: dict[str, dict[str, Any]], with_text: bool) -> None:
        """Records the entries below ``folder`` (on pyfakefs) as its ``os.walk`` did, one ``lstat`` each: an
        unlistable folder gives nothing; entries sorted, then folders it may search, as listed; none at the cap."""
        try:
            names = os.listdir(folder)
        except OSError:
            return
        deepest, folders = prefix[:-1].count("/") >= limits.MAX_DEPTH - 1, set()  # (os.walk's relpath: the root ".")
        for name in sorted(names):
            if deepest and os.path.isdir(f"{folder}/{name}"):  # (nor a link to one: os.walk followed it)
                continue
            info = os.lstat(f"{folder}/{name}")
            if stat.S_ISDIR(info.st_mode):
                folders.add(name)
            out[prefix + name] = entry_state(f"{folder}/{name}", with_text=with_text, cache=self._states, info=info)
        for name in names:  # (a folder readable alone is no folder to pyfakefs' os.walk: not entered)
            if name in folders and os.path.isdir(f"{folder}/{name}"):
                self._walk_plainly(f"{folder}/{name}", f"{prefix}{name}/", out, with_text)

    def _settled_now(self) -> int | None:
        """Returns the coarse clock now when file time stamps come from it (see :func:`_settled`), else None."""
        return time.clock_gettime_ns(COARSE_CLOCK) if self.enclosure.coarse_times else None

    def _walk(self, dir_fd: int, prefix: str, out: dict[str, dict[str, Any]], budget: _Budget,
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
                sub = os.open(name, WALK_FLAGS, dir_fd=dir_fd)
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
        could not open, the link counts are read by a walk of its own (:func:`~harness.containment.enclosure.linked_files`: one
        ``lstat`` per file, no read, at any depth), which makes such a folder searchable to look
        into it: only once the scenario's checks are done (the runner calls this last)."""
        if state is None or "<capped>" in state or self._passed_over:
            self._held = None  # (the walk below may make folders searchable)
            state, why = ({}, None) if not self.contained else linked_files(str(self.root))
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


    def replaced(self) -> str | None:
        """Returns what is at the workspace's path when it is no longer a folder (``<missing>``), else None."""
        try:
            info = os.lstat(self.root)
        except FileNotFoundError:
            return "<missing>"
        return None if stat.S_ISDIR(info.st_mode) else type_name(info.st_mode)


    def kind(self, rel: str) -> str:
        """Returns the type of the entry at ``rel`` (a link is a symlink), or ``<missing>``."""
        if not self.contained:
            return fake_kind(str(self.path(rel))) or kind_of(self.path(rel))
        try:
            with resolve(str(self.root), rel, follow_last=False) as at:
                info = os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)
        except (FileNotFoundError, NotADirectoryError):  # the entry, or a folder on the way to it, is missing
            if not self.root_intact():
                raise  # the workspace itself was replaced: said as such by the caller
            return "<missing>"
        return type_name(info.st_mode)

    def root_intact(self) -> bool:
        """Returns True when the workspace's root is still a folder (not removed, nor replaced by a link or a file)."""
        try:
            return stat.S_ISDIR(os.lstat(self.root).st_mode)
        except OSError:
            return False


    def lstat(self, rel: str) -> os.stat_result:
        if not self.contained:
            return os.lstat(self.path(rel))
        with resolve(str(self.root), rel, follow_last=False) as at:
            return os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)

    def readlink(self, rel: str) -> str:
        if not self.contained:
            return os.readlink(self.path(rel))
        with resolve(str(self.root), rel, follow_last=False) as at:
            return os.readlink(at.name, dir_fd=at.dir_fd)

    def read(self, rel: str, limit: int) -> Read:
        """Reads a regular file (a link followed only inside the workspace), at most ``limit`` bytes."""
        if not self.contained:
            path = self.path(rel)
            known = fake_read(str(path))  # (told by pyfakefs' records where they tell it for certain)
            if known is not None:
                kind, data = known
                return Read(kind) if data is None else Read("file", data[:limit], len(data),
                                                            truncated=len(data) > limit)
            if not path.is_file():
                return Read(kind_of(path))
            data = path.read_bytes()
            return Read("file", data[:limit], len(data), truncated=len(data) > limit)
        with resolve(str(self.root), rel) as at:
            return read_regular(at.dir_fd, at.name, limit)


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
        return {"type": type_name(info.st_mode), "mode": mode}
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
                return finish_file_state(entry, handle.read(limit + 1), limit, with_text)
        fd = os.open(path, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        entry["unreadable"] = exc.strerror
        return entry
    except Exception as exc:  # pyfakefs: a file whose write failed on a full disk has a size but no data
        entry["unreadable"] = type(exc).__name__
        return entry
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped after the lstat: recorded as what it is now
            return {"type": type_name(info.st_mode), "mode": mode}
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


def _has_mode(spec: Any) -> bool:
    return isinstance(spec, dict) and "content" in spec


def _expand(text: str, names: dict[str, str]) -> str:
    return substitute(text, names)


def _settled(ctime_ns: int, settled: int | None) -> bool:
    """Returns whether any change of a file made after the coarse clock read ``settled`` gets a ctime
    other than ``ctime_ns`` (None: the file system's ctimes are fine, each change its own). A ctime of
    whole seconds is taken as one of a file system that keeps no less."""
    if settled is None:
        return True
    return ctime_ns + (1_000_000_000 if ctime_ns % 1_000_000_000 == 0 else 0) < settled
