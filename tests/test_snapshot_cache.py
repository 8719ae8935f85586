"""Stored snapshots parsed once and kept between runs (harness/record/snapshot/checker.py): a
comparison gives the same answer from the cache as from the file, and a changed file, a changed
cache key or a cache others may write is parsed afresh."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from harness.record import snapshot as snap
from harness.record.snapshot import checker

RESULT = {"id": "p/one", "verdict": "pass", "profile": "p", "title": "t", "source": "s",
          "steps": [{"step": 1, "tool": "Read", "args": {"path": "a.txt"}, "output": "hello"}]}



def _check(store, result=RESULT):
    return checker.check(store, [result], [result["id"]])


def _stored(tmp_path: Path):
    store = snap.SnapshotStore(tmp_path / "snaps", "reference")
    checker.check(store, [RESULT], [RESULT["id"]], update=True)
    return store


def test_a_second_run_compares_from_the_cache_with_the_same_answer(parses, tmp_path):
    store = _stored(tmp_path)
    assert _check(store).matched == ["p/one"] and len(parses) == 1
    assert _check(store).matched == ["p/one"] and len(parses) == 1  # not parsed again
    changed = {**RESULT, "steps": [{**RESULT["steps"][0], "output": "bye"}]}
    assert list(_check(store, changed).diverged) == ["p/one"]  # from the cache, still a divergence


def test_a_changed_snapshot_file_is_parsed_afresh(parses, tmp_path):
    store = _stored(tmp_path)
    assert _check(store).matched == ["p/one"]
    path = store.path("p/one")
    path.write_text(path.read_text("utf-8").replace("hello", "changed"), "utf-8")
    assert list(_check(store).diverged) == ["p/one"] and len(parses) == 2


def test_a_cache_made_by_another_harness_or_writable_by_others_is_not_read(parses, tmp_path):
    store = _stored(tmp_path)
    assert _check(store).matched == ["p/one"]
    [entry] = (tmp_path / "cache").glob("snapshots-*.pickle")
    key, kept = pickle.loads(entry.read_bytes())
    lie = {digest: None for digest in kept}  # what a forged entry would claim
    entry.write_bytes(pickle.dumps(("another harness", lie)))
    assert _check(store).matched == ["p/one"] and len(parses) == 2
    entry.write_bytes(pickle.dumps((key, lie)))
    os.chmod(entry, 0o666)
    assert _check(store).matched == ["p/one"] and len(parses) == 3


def test_with_the_cache_off_every_run_parses(parses, tmp_path, monkeypatch):
    store = _stored(tmp_path)
    monkeypatch.setenv("HARNESS_CACHE_DIR", "off")
    _check(store)
    _check(store)
    assert len(parses) == 2
