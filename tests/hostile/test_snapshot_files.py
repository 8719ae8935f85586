"""Snapshot folders from a checkout: a stored snapshot that is a link, a FIFO, not a snapshot at all.

The snapshot root is the user's; what lies below it comes with a pull request. A snapshot that is a
link to a secret must not put the secret into the diff a failing run prints; an update must not
write through a link to a file or a folder elsewhere; pruning must not delete there; a FIFO must
not hang the run; a file that is no snapshot document is a difference, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

from harness.record.snapshot import SnapshotStore, SnapshotUnreadable
from tests.hostile.conftest import ROOT, write_scenarios

pytest_plugins = ["pytester"]

SCENARIO = """
id: hostile/snap
profile: claude-code
title: a scenario whose snapshot folder came with a pull request
source: test
given:
  files: {a.txt: "x\\n"}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
"""
SECRET = "scenario: hostile/snap\nprofile: claude-code\nsteps:\n- output: TOP-SECRET-SNAPSHOT-VALUE\n"


def run(tmp_path, *extra: str, command: str = "run") -> SimpleNamespace:
    argv = [sys.executable, "-m", "harness", command, "--no-builtin", "--scenarios", str(tmp_path / "scenarios"),
            "--snapshots", str(tmp_path / "snaps"), *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return SimpleNamespace(code=done.returncode, out=out)


def layout(tmp_path):
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    stored = tmp_path / "snaps" / "reference" / "hostile" / "snap.yaml"
    stored.parent.mkdir(parents=True)
    secret = tmp_path / "secret.yaml"
    secret.write_text(SECRET, "utf-8")
    return stored, secret


def test_a_stored_snapshot_that_is_a_link_is_neither_read_nor_written_through(tmp_path):
    stored, secret = layout(tmp_path)
    stored.symlink_to(secret)
    checked = run(tmp_path)
    assert checked.code == 1, checked.out
    assert "TOP-SECRET" not in checked.out
    assert f"{stored}: not read: a symbolic link, not followed" in checked.out
    updated = run(tmp_path, "--snapshot-update")
    assert updated.code == 1 and "TOP-SECRET" not in updated.out, updated.out
    assert secret.read_text("utf-8") == SECRET and stored.is_symlink()


def test_a_snapshot_folder_that_is_a_link_out_is_not_written_into_and_not_pruned_through(tmp_path):
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A file named like an orphan's hashed snapshot, claiming an id whose path leads through the link.
    victim = elsewhere / "gone.yaml"
    victim.write_text("keep me\n", "utf-8")
    target_folder = tmp_path / "snaps" / "reference"
    target_folder.mkdir(parents=True)
    (target_folder / "hostile").symlink_to(elsewhere)
    claimer = target_folder / ("x" * 80 + "-0123456789ab.yaml")
    claimer.write_text("scenario: hostile/gone\nprofile: claude-code\nsteps: []\n", "utf-8")
    updated = run(tmp_path, "--snapshot-update")
    assert updated.code == 1, updated.out
    assert "hostile/snap.yaml: not read: reference/hostile is a symbolic link" in updated.out
    assert "outside the snapshot folder: not followed" in updated.out and "1 not written" in updated.out
    assert sorted(p.name for p in elsewhere.iterdir()) == ["gone.yaml"]  # nothing written there
    store = SnapshotStore(tmp_path / "snaps", "reference")
    assert "hostile/gone" in store.ids()  # the orphan a whole-catalog update would prune
    store.remove("hostile/gone")
    assert victim.read_text("utf-8") == "keep me\n"  # not removed through the link


def test_a_fifo_or_a_file_that_is_no_snapshot_is_a_difference_not_a_hang_or_a_traceback(tmp_path):
    stored, _ = layout(tmp_path)
    os.mkfifo(stored)
    fifo = run(tmp_path)
    assert fifo.code == 1 and f"{stored}: not a regular file: not read" in fifo.out, fifo.out
    for text in ("just a string\n", "[1, 2]\n", "{unclosed\n", "[" * 5000 + "]" * 5000 + "\n"):
        stored.unlink()
        stored.write_text(text, "utf-8")
        differs = run(tmp_path)
        assert differs.code == 1 and "SNAPSHOT hostile/snap" in differs.out, (text[:20], differs.out)


def test_harness_report_and_diff_read_no_snapshot_through_a_link(tmp_path):
    from harness.record import observations
    stored, secret = layout(tmp_path)
    stored.symlink_to(secret)
    (stored.parent / "real.yaml").write_text("scenario: hostile/real\nprofile: claude-code\nsteps: []\n", "utf-8")
    source = observations.from_folder(stored.parent.parent)
    assert list(source.observations) == ["hostile/real"]
    assert "TOP-SECRET" not in repr(source.observations)
    (stored.parent / "real.yaml").write_text("- not a snapshot\n", "utf-8")
    try:
        observations.from_folder(stored.parent.parent)
    except ValueError as problem:
        assert "real.yaml: not a snapshot" in str(problem)
    else:
        raise AssertionError("a file that is no snapshot was taken for one")


def test_the_store_reads_and_writes_regular_files_below_its_root_only(tmp_path):
    store = SnapshotStore(tmp_path / "snaps", "t")
    assert store.write("a/b", "scenario: a/b\n") and store.read("a/b") == "scenario: a/b\n"
    (tmp_path / "out.yaml").write_text("secret\n", "utf-8")
    (tmp_path / "snaps" / "t" / "a" / "l.yaml").symlink_to(tmp_path / "out.yaml")
    for call in (lambda: store.read("a/l"), lambda: store.write("a/l", "x")):
        try:
            call()
        except SnapshotUnreadable as refused:
            assert "symbolic link" in str(refused)
        else:
            raise AssertionError("went through the link")
    assert (tmp_path / "out.yaml").read_text("utf-8") == "secret\n"
    store.remove("a/b")
    assert not (tmp_path / "snaps" / "t" / "a" / "b.yaml").exists() and (tmp_path / "snaps" / "t" / "a").is_dir()


def test_pytest_neither_reads_nor_writes_a_snapshot_through_a_link(pytester, monkeypatch):
    for name in [k for k in os.environ if k.startswith("PYTEST_XDIST")]:
        monkeypatch.delenv(name)  # a session of its own also when this test runs in an xdist worker
    write_scenarios(pytester.path / "scenarios", SCENARIO)
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\nharness_snapshots = snaps\n")
    stored = pytester.path / "snaps" / "reference" / "hostile" / "snap.yaml"
    stored.parent.mkdir(parents=True)
    secret = pytester.path / "secret.yaml"
    secret.write_text(SECRET, "utf-8")
    stored.symlink_to(secret)
    for extra in ((), ("--snapshot-update",)):
        result = pytester.runpytest("-q", "-p", "no:cacheprovider", "scenarios", *extra)
        out = result.stdout.str() + result.stderr.str()
        assert int(result.ret) == 1 and "TOP-SECRET" not in out, out
        assert "snap.yaml: not read: a symbolic link, not followed" in out, out
    assert secret.read_text("utf-8") == SECRET and stored.is_symlink()


def test_a_snapshot_root_that_is_a_link_is_neither_read_nor_written_through(tmp_path):
    # A checkout can bring ./snapshots as a link to a folder elsewhere: reads showed what is there
    # in the diff, --snapshot-update wrote there.
    write_scenarios(tmp_path / "scenarios", SCENARIO)
    outside = tmp_path / "outside"
    (outside / "reference" / "hostile").mkdir(parents=True)
    planted = outside / "reference" / "hostile" / "snap.yaml"
    planted.write_text(SECRET, "utf-8")
    (tmp_path / "snaps").symlink_to(outside)
    checked = run(tmp_path)
    assert checked.code == 1 and "TOP-SECRET" not in checked.out, checked.out
    assert "the snapshot folder is a symbolic link, not followed" in checked.out, checked.out
    updated = run(tmp_path, "--snapshot-update")
    assert updated.code == 1 and planted.read_text("utf-8") == SECRET, updated.out


def test_a_stored_snapshot_too_big_or_not_utf8_is_refused_naming_its_file(tmp_path, monkeypatch):
    from harness.util import limits
    folder = tmp_path / "snaps" / "reference" / "hostile"
    folder.mkdir(parents=True)
    (folder / "latin.yaml").write_bytes(b"scenario: caf\xe9\n")
    (folder / "big.yaml").write_bytes(b"x" * 65)
    (folder / "fits.yaml").write_bytes(b"x" * 64)
    monkeypatch.setattr(limits, "MAX_SCENARIO_FILE", 64)
    store = SnapshotStore(tmp_path / "snaps", "reference")
    for name, why in (("latin", "not UTF-8 ("), ("big", "more than 64 bytes (HARNESS_MAX_SCENARIO_FILE)")):
        try:
            store.read(f"hostile/{name}")
        except SnapshotUnreadable as exc:
            assert str(exc).startswith(f"{folder / name}.yaml: {why}") and str(exc).endswith(": not read"), exc
        else:
            raise AssertionError(f"{name}: read")
    assert store.read("hostile/fits") == "x" * 64
    assert store.read("hostile/none") is None
