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
    key, (kept, stamps) = pickle.loads(entry.read_bytes())
    lie = ({digest: None for digest in kept}, {})  # what a forged entry would claim
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


def _settled(monkeypatch):
    """A file read is known by its stamp at once (its change times are not waited out)."""
    monkeypatch.setattr(checker, "SETTLED_NS", -10**12)


def _reads(monkeypatch):
    counted: list[str] = []
    original = snap.SnapshotStore.read_stamped

    def counting(self, scenario_id):
        counted.append(scenario_id)
        return original(self, scenario_id)
    monkeypatch.setattr(snap.SnapshotStore, "read_stamped", counting)
    return counted


def test_a_file_unchanged_since_a_run_read_it_is_not_read_again(parses, tmp_path, monkeypatch):
    _settled(monkeypatch)
    store = _stored(tmp_path)
    reads = _reads(monkeypatch)
    assert _check(store).matched == ["p/one"] and reads == ["p/one"]  # read, and known by its stamp
    assert _check(store).matched == ["p/one"] and reads == ["p/one"]  # matched by its stamp: not read
    changed = {**RESULT, "steps": [{**RESULT["steps"][0], "output": "bye"}]}
    assert list(_check(store, changed).diverged) == ["p/one"]  # a difference: read, to show it
    assert reads == ["p/one", "p/one"] and len(parses) == 1


def test_a_file_changed_since_is_read_again_by_its_stamp(parses, tmp_path, monkeypatch):
    _settled(monkeypatch)
    store = _stored(tmp_path)
    assert _check(store).matched == ["p/one"]
    path = store.path("p/one")
    before = path.stat()
    path.write_text(path.read_text("utf-8").replace("hello", "bye!!"), "utf-8")  # its size changes too
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # its modification time put back
    reads = _reads(monkeypatch)
    assert list(_check(store).diverged) == ["p/one"] and reads == ["p/one"] and len(parses) == 2


def test_a_file_changed_just_before_it_was_read_is_not_known_by_its_stamp(parses, tmp_path, monkeypatch):
    # A second change within the file system's clock tick could leave its stamp as it was.
    store = _stored(tmp_path)  # written now: not settled
    reads = _reads(monkeypatch)
    assert _check(store).matched == ["p/one"] and _check(store).matched == ["p/one"]
    assert reads == ["p/one", "p/one"]


def test_a_stamped_file_that_became_a_link_or_too_big_is_refused_as_before(parses, tmp_path, monkeypatch):
    from harness.util import limits
    _settled(monkeypatch)
    store = _stored(tmp_path)
    assert _check(store).matched == ["p/one"]
    monkeypatch.setattr(limits, "MAX_SCENARIO_FILE", 10)
    assert list(_check(store).refused) == ["p/one"]
    monkeypatch.undo()
    _settled(monkeypatch)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    path = store.path("p/one")
    path.rename(tmp_path / "elsewhere.yaml")
    path.symlink_to(tmp_path / "elsewhere.yaml")
    store.close()
    assert list(_check(store).refused) == ["p/one"]


def test_the_kept_behaviours_share_their_keys_and_compare_the_same(parses, tmp_path):
    other = {**RESULT, "id": "p/two", "steps": [{**RESULT["steps"][0], "output": "other"}]}
    store = snap.SnapshotStore(tmp_path / "snaps", "reference")
    checker.check(store, [RESULT, other], [RESULT["id"], other["id"]], update=True)
    assert checker.check(store, [RESULT, other], [RESULT["id"], other["id"]]).matched == ["p/one", "p/two"]
    [entry] = (tmp_path / "cache").glob("snapshots-*.pickle")
    _, (kept, _) = pickle.loads(entry.read_bytes())
    one, two = kept.values()
    assert one != two and [id(key) for key in one["steps"][0]] == [id(key) for key in two["steps"][0]]
    assert checker.check(store, [RESULT, other], [RESULT["id"], other["id"]]).matched == ["p/one", "p/two"]
    assert len(parses) == 2  # from the cache


def test_a_stamped_file_replaced_by_a_link_to_another_stamped_file_is_refused(parses, tmp_path, monkeypatch):
    # The stamp is the link's own (lstat): never the stamp of what it points at, known and matching.
    _settled(monkeypatch)
    two = {**RESULT, "id": "p/two"}  # the same behaviour under another id
    store = snap.SnapshotStore(tmp_path / "snaps", "reference")
    checker.check(store, [RESULT, two], [RESULT["id"], two["id"]], update=True)
    assert checker.check(store, [RESULT, two], [RESULT["id"], two["id"]]).matched == ["p/one", "p/two"]
    path = store.path("p/one")
    path.unlink()
    path.symlink_to(store.path("p/two").name)
    store.close()
    assert store.stamp("p/one") is None and store.stamp("p/two") is not None
    assert list(_check(store).refused) == ["p/one"]
