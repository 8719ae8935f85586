"""Comparing (or writing) one target's snapshots as its results come."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.record.snapshot.normalise import Masks, behaviour, body, document, is_recordable, render, stored_behaviour
from harness.record.snapshot.store import SnapshotStore, SnapshotUnreadable, Stamp


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """Returns the unified diff of two snapshot texts, empty when their behaviours (``body``) agree."""
    if body(old) == body(new):
        return ""
    import difflib  # only a run with a diverging snapshot shows one
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name, n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class Check:
    """What comparing (or updating) one run's snapshots found."""

    diverged: dict[str, str] = field(default_factory=dict)  # id -> unified diff
    matched: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # no stored snapshot (written when updating)
    written: list[str] = field(default_factory=list)  # changed or created by an update
    orphans: list[str] = field(default_factory=list)  # stored, but no scenario has that id
    removed: list[str] = field(default_factory=list)  # orphans removed by an update
    refused: dict[str, str] = field(default_factory=dict)  # id -> why its file was not read or written
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Returns True when a stored snapshot disagrees with what was observed, or was not read or written."""
        return bool(self.diverged or self.refused)


class Checker:
    """Compares (or, with ``update``, writes) one target's snapshots as its results come (``add``).

    Each result is compared the moment it is given and not kept; only what differs (its diff) and the
    ids seen are. ``finish`` lists (and, with ``prune``, removes) the orphans and returns the
    :class:`Check`.
    """

    def __init__(self, store: SnapshotStore, *, update: bool = False, masks: Masks = ()) -> None:
        self.store, self.update, self.masks = store, update, masks
        self.out = Check()
        self._read: StoredBehaviours | None = None  # made at the first comparison

    def _stored(self) -> StoredBehaviours:
        if self._read is None:
            self._read = StoredBehaviours(self.store)
        return self._read

    def _unchanged_match(self, scenario_id: str, observed: dict[str, Any]) -> bool:
        """Returns True when the stored snapshot is a file read before (by this run or an earlier one),
        unchanged since by its stamp, whose behaviour is ``observed``: a match, without reading it."""
        stamp = self.store.stamp(scenario_id)
        if stamp is None:
            return False
        found = self._stored().by_stamp(stamp)
        return found is not UNKNOWN and found == observed

    def add(self, result: Mapping[str, Any]) -> None:
        """Compares (or writes) the snapshot of one result in the JSON report's shape."""
        started = time.perf_counter()
        try:
            self._add(result)
        finally:
            self.out.seconds += time.perf_counter() - started

    def _add(self, result: Mapping[str, Any]) -> None:
        if not is_recordable(result):
            return
        store, out = self.store, self.out
        scenario_id = result["id"]
        doc = document(result, self.masks)
        observed = behaviour(doc)
        if not self.update and self._unchanged_match(scenario_id, observed):
            out.matched.append(scenario_id)
            return
        try:
            stored, stamp = store.read_stamped(scenario_id)
            for former in result.get("former_ids") or () if stored is None else ():
                stored = store.read(former) if isinstance(former, str) else None  # renamed: its old snapshot
                if stored is not None:
                    break
        except SnapshotUnreadable as exc:
            out.refused[scenario_id] = str(exc)
            return
        # The common case, a match, is decided on data (libyaml parses fast); the pure-Python emitter
        # only runs to write a file or to show a difference.
        if stored is not None and not self.update and self._stored().behaviour(stored, stamp) == observed:
            out.matched.append(scenario_id)
            return
        if stored is None and not self.update:  # nothing to compare with and nothing to write: no text needed
            out.new.append(scenario_id)
            return
        text = render(doc)
        if self.update:
            try:
                changed = store.write(scenario_id, text)
            except SnapshotUnreadable as exc:
                out.refused[scenario_id] = str(exc)
                return
            if changed:
                out.written.append(scenario_id)
                if stored is None:
                    out.new.append(scenario_id)
            else:
                out.matched.append(scenario_id)
        elif stored is not None and body(stored) == body(text):  # stored is None only when updating (above)
            out.matched.append(scenario_id)
        else:
            stored = stored or ""
            where = store.path(scenario_id).as_posix()
            out.diverged[scenario_id] = unified_diff(stored, text, f"{where} (stored)", f"{where} (observed)")

    def finish(self, known_ids: Iterable[str], *, prune: bool = False) -> Check:
        """Lists the stored snapshots no id of ``known_ids`` (the catalog's) matches, removes them when
        updating with ``prune``; returns what the whole check found."""
        started = time.perf_counter()
        out = self.out
        if self._read is not None:
            self._read.keep()
        self.store.close()  # the folders its reads kept open
        known = set(known_ids)
        out.orphans = [scenario_id for scenario_id in self.store.ids() if scenario_id not in known]
        if self.update and prune:
            for scenario_id in out.orphans:
                self.store.remove(scenario_id)
            out.removed = list(out.orphans)
        out.seconds += time.perf_counter() - started
        return out


#: The most stored snapshots' behaviours (and stamps) kept between runs for one snapshot folder.
KEPT_AT_MOST = 20_000

#: A file changed less than this long (nanoseconds) before it was read is not known by its stamp
#: later: a second change within the file system's clock tick would leave its times as they were.
SETTLED_NS = 2_000_000_000

#: What :meth:`StoredBehaviours.by_stamp` returns for a stamp it does not know (a behaviour may be None).
UNKNOWN: Any = object()


class StoredBehaviours:
    """What the stored snapshots' texts hold, parsed once and kept between runs.

    Parsing the stored YAML was a third of a default run's processor time, and most runs compare the
    same committed files again. Their behaviours are kept by the digest of their text in the
    harness's cache (harness/scenario/catalog_cache.py: a pickle read only when the user alone can
    write it), with a fingerprint of the harness's own sources and the YAML parser's version: a
    changed file, a changed harness or parser parses afresh. What a run read is kept with what the
    cache held, up to ``KEPT_AT_MOST`` entries (see :meth:`keep`).
    With them, the :data:`~harness.record.snapshot.store.Stamp` of each file as it was read (device,
    inode, size, times of modification and change), once it had not changed for ``SETTLED_NS``: a
    file whose stamp is known and whose behaviour matches is not read again (reading and digesting
    the catalog's 552 snapshots was about a sixth of what the reports cost per result).
    The parser is known by its installed files (path, size, mtime), without importing it: a run whose
    snapshots all come from the cache never loads PyYAML.
    """

    def __init__(self, store: SnapshotStore) -> None:
        from harness.scenario import catalog_cache
        self._where = [Path(os.path.abspath(store.folder))]  # one entry per folder, wherever the run starts
        self._key = f"{catalog_cache.fingerprint(_parser_files())}-pyyaml-stamped"
        kept = catalog_cache.read(self._where, self._key, kind="snapshots")
        self._kept: dict[bytes, Any] = {}
        self._stamps: dict[Stamp, bytes] = {}
        if isinstance(kept, tuple) and len(kept) == 2 and all(isinstance(part, dict) for part in kept):
            self._kept, self._stamps = kept
        self._used: dict[bytes, Any] = {}
        self._stamped: dict[Stamp, bytes] = {}

    def behaviour(self, text: str, stamp: Stamp | None = None) -> dict[str, Any] | None:
        """Returns the behaviour of a stored snapshot's text (read with ``stamp``, when known)."""
        import hashlib
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        if digest in self._used:
            found = self._used[digest]
        else:
            found = self._kept[digest] if digest in self._kept else stored_behaviour(text)
            self._used[digest] = found
        if stamp is not None and stamp[4] < time.time_ns() - SETTLED_NS:
            self._stamped[stamp] = digest
        return found

    def by_stamp(self, stamp: Stamp) -> Any:
        """Returns the behaviour of the file read before under ``stamp``, or :data:`UNKNOWN`."""
        digest = self._stamped.get(stamp) or self._stamps.get(stamp)
        if digest is None:
            return UNKNOWN
        if digest in self._used:
            found = self._used[digest]
        elif digest in self._kept:
            found = self._used[digest] = self._kept[digest]
        else:
            return UNKNOWN
        self._stamped[stamp] = digest
        return found

    def keep(self) -> None:
        """Stores what this run read, when it read anything the cache did not hold: with what the
        cache held (several processes may share one snapshot folder: pytest-xdist's workers each
        read their part of it), up to a bound, past which only this run's."""
        if self._used.keys() - self._kept.keys() or self._stamped.keys() - self._stamps.keys():
            from harness.scenario import catalog_cache
            kept, stamps = {**self._kept, **self._used}, {**self._stamps, **self._stamped}
            if len(kept) > KEPT_AT_MOST or len(stamps) > KEPT_AT_MOST:
                kept, stamps = self._used, self._stamped
            kept = {digest: _keys_interned(found) for digest, found in kept.items()}
            catalog_cache.write(self._where, self._key, (kept, stamps), kind="snapshots")


def _keys_interned(value: Any) -> Any:
    """Returns ``value`` (parsed YAML) with its mappings' keys interned: the keys every snapshot
    repeats (``step``, ``tool``, ``args``...) are then one object each, which the cache's pickle
    stores once and loads once (a third less time to load the catalog's)."""
    if isinstance(value, dict):
        return {sys.intern(key) if type(key) is str else key: _keys_interned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_keys_interned(item) for item in value]
    return value


def _parser_files() -> list[str]:
    """Returns the files of the installed PyYAML package (its modules and libyaml's binding)."""
    import importlib.util
    spec = importlib.util.find_spec("yaml")
    folders = list(spec.submodule_search_locations or ()) if spec else []
    files: list[str] = []
    for folder in folders:
        try:
            files += sorted(os.path.join(folder, name) for name in os.listdir(folder)
                            if name.endswith((".py", ".so", ".pyd")))  # not __pycache__, written by imports
        except OSError:
            files.append(folder)
    return files


def check(store: SnapshotStore, results: Iterable[Mapping[str, Any]], known_ids: Iterable[str], *,
          update: bool = False, prune: bool = False, masks: Masks = ()) -> Check:
    """Compares (or, with ``update``, writes) the snapshots of ``results`` (JSON shape).

    ``known_ids`` are all the catalog's ids: a stored snapshot with another id is an orphan, listed,
    and removed when ``update`` and ``prune`` are both given.
    """
    checker = Checker(store, update=update, masks=masks)
    for result in results:
        checker.add(result)
    return checker.finish(known_ids, prune=prune)
