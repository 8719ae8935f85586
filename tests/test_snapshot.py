"""Snapshots: stable documents of behaviour, stored per target, compared by ``harness run``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli.main import main
from harness.record import snapshot as snap
from harness.targets.base import spec_slug
from tests.test_cli import GOOD, put

pytest_plugins = ["pytester"]


def snapshot_files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*.yaml"))}


# -- masks and the document ----------------------------------------------------------------------

@pytest.mark.parametrize("text, masked", [
    ("not absolute: /tmp/harness-yilx478d/ws/keep2.txt.", "not absolute: ${workspace}/keep2.txt."),
    ("/private/var/T/harness-ab_12cd3/ws/a", "${workspace}/a"),
    ("/tmp/harness-ab_12cd3/ws-12/a and /tmp/harness-ab_12cd3/ws-3.", "${workspace}/a and ${workspace}."),
    ("/tmp/harness-ab_12cd3/ws-2x", "${base}/ws-2x"),
    ("/tmp/harness-ab_12cd3/canary.txt", "${base}/canary.txt"),
    ("/tmp/harness-ab_12cd3/wsx", "${base}/wsx"),
    ("file:///tmp/harness-ab_12cd3/ws/a.txt", "file://${workspace}/a.txt"),
    ("${workspace}/new/.x.txt.de52a5d9.tmp", "${workspace}/new/.x.txt.${random}.tmp"),
    ("left /tmp/tmpa1b2_c3d behind", "left /tmp/tmp${random} behind"),
    ("id 123e4567-e89b-12d3-a456-426614174000", "id ${uuid}"),
    ("at 2024-05-01T12:00:00.123+02:00 done", "at ${time} done"),
    ("created: Sat Nov 28 2026 01:54:06 GMT+0000 (Coordinated Universal Time)\nisFile: true",
     "created: ${time}\nisFile: true"),
    ("modified: Mon Jan 05 2026 23:00:00 GMT-0500", "modified: ${time}"),
    ("Sat is the day, Nov 28 2026 the date", "Sat is the day, Nov 28 2026 the date"),
    ("similarity (found in 514.94ms): x; (Fuzzy search completed in 227ms)", "similarity (found in ${duration}): x; "
     "(Fuzzy search completed in ${duration})"),
    ("Check log: /dev/shm/w/harness-tmp-tzh2ctjz/harness-tool-home-5eEtegQ1/.logs/fuzzy.log",
     "Check log: ${tool-home}/.logs/fuzzy.log"),
    ("stat '/dev/shm/harness-worker-9549vapx/harness-cwd-opq579bk/C:/Users/dev/src/index.ts'",
     "stat '${cwd}/C:/Users/dev/src/index.ts'"),
    ("stat '/dev/shm/harness-worker-9549vapx/a.txt'", "stat '${worker}/a.txt'"),
    ("/tmp/harness-worker-9549vapxy/a.txt", "/tmp/harness-worker-9549vapxy/a.txt"),
    ("outside allowed directories: /dev/shm/harness-tmp-w5d2jsj1/tilde-written.txt not in",
     "outside allowed directories: ${tmp}/tilde-written.txt not in"),
    ("/tmp/harness-tmp-w5d2jsj1x/a.txt", "/tmp/harness-tmp-w5d2jsj1x/a.txt"),
    ("read 12ms of audio in 3 ms", "read 12ms of audio in ${duration}"),
    ("sha256 " + "ab" * 32, "sha256 " + "ab" * 32),
    ("version 7 of a.txt", "version 7 of a.txt"),
])
def test_masks_replace_volatile_parts_and_nothing_else(text, masked):
    assert snap.mask_text(text) == masked


def test_a_root_below_a_folder_with_a_space_still_loses_its_random_part():
    assert snap.mask_text("/var/x y/T/harness-ab_12cd3/ws/a") == "/var/x y${workspace}/a"


def test_time_and_duration_keys_are_masked_versions_kept():
    value = {"mtime": 1714567890.5, "modified_at": "x", "duration_ms": 12, "version": 3, "seconds": 0.2,
             "content": "ok"}
    assert snap.normalise(value) == {"content": "ok", "duration_ms": "${duration}", "modified_at": "${time}",
                                     "mtime": "${time}", "seconds": "${duration}", "version": 3}


def test_document_records_calls_actions_and_workspace_but_no_verdict():
    result = {
        "id": "p/x", "profile": "claude-code", "title": "t", "source": "s", "verdict": "fail", "reason": "nope",
        "steps": [
            {"tool": "Write", "args": {"file_path": "/tmp/harness-abcdefgh/ws/a.txt", "content": "hi\n"},
             "output": "ok", "extra": {"workspace": {"a.txt": {"type": "file", "mode": "0644", "size": 3,
                                                              "sha256": "x", "text": "hi\n"}}},
             "failures": [{"path": "output", "expected": "x", "observed": "ok"}]},
            {"action": "touch", "path": "a.txt", "failures": []},
            {"tool": "Read", "args": {"file_path": "/tmp/harness-abcdefgh/ws/a.txt"},
             "error": {"code": "E", "message": "no"}, "events": [{"b": 1, "a": 2}],
             "extra": {"workspace": {"a.txt": {"type": "file", "mode": "0644", "size": 3, "sha256": "x",
                                               "text": "hi\n"}}}, "failures": []},
        ],
        "then": {"failures": []},
    }
    text = snap.serialise(result)
    doc = snap.parse(text)
    assert "verdict" not in text and "nope" not in text and "expected" not in text
    assert doc["steps"][0]["args"]["file_path"] == "${workspace}/a.txt"
    assert doc["steps"][0]["workspace"]["a.txt"]["text"] == "hi\n"
    assert doc["steps"][1] == {"step": 2, "action": "touch", "path": "a.txt"}
    assert doc["steps"][2]["error"] == {"code": "E", "message": "no"}
    assert list(doc["steps"][2]["events"][0]) == ["a", "b"]  # observed mappings are sorted
    assert doc["steps"][2]["workspace"] == "same as after step 1"
    assert "text: |" in text  # multi-line text is a readable block


def test_long_strings_keep_head_tail_length_and_hash():
    long = "".join(f"line {n}\n" for n in range(20000))
    shortened = snap.normalise(long)["long_text"]
    assert shortened["length"] == len(long) and shortened["lines"] == 20000
    assert shortened["head"].startswith("line 0\n") and shortened["tail"].endswith("line 19999\n")
    assert snap.normalise(long.replace("line 9000\n", "line 9000!\n")) != snap.normalise(long)
    one_line = snap.normalise("x" * 1_000_000)["long_text"]
    assert len(one_line["head"]) == snap.HEAD_CHARS and len(one_line["tail"]) == snap.TAIL_CHARS


def test_slugs_are_file_names_and_tell_command_lines_apart():
    assert spec_slug("reference") == "reference"
    one, two = spec_slug("cmd:python adapter.py --mode a"), spec_slug("cmd:python adapter.py --mode b")
    assert one != two and one.startswith("cmd-")
    for slug in (one, spec_slug('mcp:npx "my server" --port 3'), spec_slug("claude-code:mode=plan")):
        assert "/" not in slug and " " not in slug and ":" not in slug


def test_store_lists_writes_and_removes(tmp_path):
    store = snap.SnapshotStore(tmp_path, "t")
    assert store.write("a/b/c", "x") is True and store.write("a/b/c", "x") is False
    store.write("d", "y")
    assert store.ids() == ["a/b/c", "d"]
    store.remove("a/b/c")
    assert store.ids() == ["d"] and not (tmp_path / "t" / "a").exists()


# -- harness run ---------------------------------------------------------------------------------

def test_two_runs_give_byte_identical_snapshots_of_the_whole_catalog_and_remove_the_ones_no_scenario_matches(
        catalog_run, tmp_path, monkeypatch):
    # Two whole-catalog updates serve both behaviours: the first (the session's catalog_run, which the
    # report tests read too) was given a snapshot no scenario matches.
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path / "state"))
    first, second = catalog_run.snapshots, tmp_path / "two"
    assert catalog_run.code == 0
    assert catalog_run.orphan.parent.parent == first / "reference"
    assert not catalog_run.orphan.exists()  # a whole-catalog update removes the snapshots no scenario matches
    assert (first / "reference" / "claude-code" / "read" / "arrow-not-tab.yaml").is_file()
    assert main(["run", "-q", "--snapshot-update", "--snapshots", str(second)]) == 0
    files = snapshot_files(first / "reference")
    assert len(files) > 100
    assert files == snapshot_files(second / "reference")
    assert not any(b"/harness-" in data for data in files.values())  # every workspace path was masked


def test_a_changed_reference_behaviour_is_a_divergence_naming_the_scenario(folder, tmp_path, capsys, monkeypatch):
    put(folder, "good.yaml", GOOD)
    root = tmp_path / "snaps"
    args = ["run", "--no-builtin", "--scenarios", str(folder), "--snapshots", str(root)]
    assert main(args + ["--snapshot-update"]) == 0
    assert (root / "reference" / "claude-code/read/cli-good.yaml").is_file()
    capsys.readouterr()
    assert main(args) == 0  # unchanged behaviour: no divergence

    from harness.targets import reference
    original = reference.ReferenceSession.call

    def call(self, tool, args):
        observed = original(self, tool, args)
        if isinstance(observed.output, str):
            observed.output += "\n(altered)"
        return observed

    monkeypatch.setattr(reference.ReferenceSession, "call", call)
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "SNAPSHOT claude-code/read/cli-good" in out
    assert "+    " in out and "(altered)" in out and "1 differ" in out
    assert main(args + ["--no-snapshots"]) == 0  # the expectation still passes


def test_snapshots_no_scenario_matches_are_listed_and_removed_only_by_a_whole_catalog_update(
        folder, tmp_path, capsys):
    put(folder, "good.yaml", GOOD)
    root = tmp_path / "snaps"
    args = ["run", "--no-builtin", "--scenarios", str(folder), "--snapshots", str(root)]
    main(args + ["--snapshot-update"])
    orphan = root / "reference" / "gone" / "old.yaml"
    orphan.parent.mkdir()
    shutil.copy(root / "reference" / "claude-code/read/cli-good.yaml", orphan)
    capsys.readouterr()
    main(args)
    out = capsys.readouterr().out
    assert "1 snapshot(s) no scenario matches" in out and "gone/old.yaml" in out
    main(args + ["--snapshot-update"])  # --no-builtin: the known catalog is partial, nothing removed
    assert orphan.is_file()


def test_contradictory_snapshot_options_are_bad_usage(folder):
    put(folder, "good.yaml", GOOD)
    assert main(["run", "--no-builtin", "--scenarios", str(folder), "--snapshot-update", "--no-snapshots"]) == 2


# -- pytest, through syrupy ----------------------------------------------------------------------

def test_pytest_snapshot_update_writes_and_a_change_fails_the_item(pytester, monkeypatch):
    for name in [k for k in os.environ if k.startswith("PYTEST_XDIST")]:
        monkeypatch.delenv(name)  # a session of its own also when this test runs in an xdist worker
    scenarios = pytester.path / "scenarios"
    scenarios.mkdir()
    (scenarios / "good.yaml").write_text(GOOD, "utf-8")
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\nharness_snapshots = snaps\n")
    tmp_path = pytester.path

    def pytest_run(*extra: str) -> SimpleNamespace:
        # In this process (pytester): a new interpreter per run cost a second each.
        result = pytester.runpytest("-q", "-p", "no:cacheprovider", "scenarios", *extra)
        return SimpleNamespace(returncode=int(result.ret), stdout=result.stdout.str(), stderr=result.stderr.str())

    written = pytest_run("--snapshot-update")
    stored = tmp_path / "snaps" / "reference" / "claude-code/read/cli-good.yaml"
    assert written.returncode == 0, written.stdout + written.stderr
    assert stored.is_file() and "1 snapshot generated" in written.stdout
    assert pytest_run().returncode == 0
    stored.write_text(stored.read_text("utf-8").replace("first line", "other line"), "utf-8")
    changed = pytest_run()
    assert changed.returncode == 1
    assert "SNAPSHOT claude-code/read/cli-good" in changed.stdout
    assert "+    output: '     1→first line" in changed.stdout
    # A new title is the scenario's own words, not behaviour: no failure, but an update rewrites it; the
    # same update puts the right behaviour back in place of the changed one.
    (scenarios / "good.yaml").write_text(GOOD.replace("Read numbers lines", "Read numbers its lines"), "utf-8")
    assert pytest_run("--snapshot-update").returncode == 0
    assert "title: Read numbers its lines" in stored.read_text("utf-8")
    assert "1→first line" in stored.read_text("utf-8") and "other line" not in stored.read_text("utf-8")


def test_a_partial_catalog_does_not_call_the_default_folders_snapshots_orphans(folder, tmp_path, capsys,
                                                                                monkeypatch):
    put(folder, "good.yaml", GOOD)
    root = tmp_path / "default-snaps"
    monkeypatch.setenv("HARNESS_SNAPSHOTS", str(root))
    main(["run", "--no-builtin", "--scenarios", str(folder), "--snapshot-update"])
    (root / "reference" / "claude-code" / "other.yaml").write_text("steps: []\n")
    capsys.readouterr()
    main(["run", "--no-builtin", "--scenarios", str(folder)])
    assert "no scenario matches" not in capsys.readouterr().out


def test_a_store_walks_to_each_folder_once_reads_through_it_and_closes_it(tmp_path, monkeypatch):
    from harness.record.snapshot import store as store_module
    store = snap.SnapshotStore(tmp_path / "snapshots", "reference")
    for n in range(3):
        store.write(f"p/group/s{n}", f"scenario: p/group/s{n}\n")
    store.close()
    walks: list[str] = []
    resolve = store_module.resolve

    def counted(root, rel, **kwargs):
        walks.append(rel)
        return resolve(root, rel, **kwargs)
    monkeypatch.setattr(store_module, "resolve", counted)
    before = len(os.listdir("/proc/self/fd"))
    assert [store.read(f"p/group/s{n}") for n in range(3)] == [f"scenario: p/group/s{n}\n" for n in range(3)]
    assert store.read("p/group/missing") is None
    assert walks == ["reference/p/group"]  # one walk, to the folder, for four reads
    store.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_snapshot_that_became_a_link_after_its_folder_was_kept_is_not_read_through(tmp_path):
    store = snap.SnapshotStore(tmp_path / "snapshots", "reference")
    store.write("p/s", "scenario: p/s\n")
    assert store.read("p/s") == "scenario: p/s\n"  # the folder is kept open now
    secret = tmp_path / "secret.txt"
    secret.write_text("not a snapshot")
    path = store.path("p/s")
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(snap.SnapshotUnreadable, match="symbolic link"):
        store.read("p/s")
    store.close()


@pytest.mark.parametrize("scenario_id", ["claude-code/read/a", "p/" + "x" * 300 + "/y.z", "p/a..b/c", "Weird//id/./x",
                                         "../up/x", "<invalid> /tmp/s.yaml"])
def test_a_snapshots_place_below_the_root_is_its_path_relative_to_it(tmp_path, scenario_id):
    store = snap.SnapshotStore(tmp_path, "reference")
    assert store._rel(scenario_id) == store.path(scenario_id).relative_to(tmp_path).as_posix()


def test_the_ids_of_a_folder_leave_out_links_and_what_is_no_snapshot(tmp_path):
    store = snap.SnapshotStore(tmp_path / "snapshots", "reference")
    store.write("p/group/kept", "scenario: p/group/kept\n")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "not-mine.yaml").write_text("scenario: not/mine\n")
    (outside / "alone.yaml").write_text("scenario: alone\n")
    folder = store.folder
    (folder / "p" / "linked-folder").symlink_to(outside)
    (folder / "p" / "linked-file.yaml").symlink_to(outside / "alone.yaml")
    (folder / "p" / "notes.txt").write_text("not a snapshot")
    (folder / "p" / "a-folder.yaml").mkdir()
    assert store.ids() == ["p/group/kept"]


def test_a_run_with_no_snapshot_differing_does_not_import_the_diff_printer() -> None:
    # harness/report/grid.py (with the observations' module and difflib, about 9 ms) shows a
    # differing snapshot's diff; a run where none differs never needs it.
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('grid %d\\n' % ('harness.report.grid' in sys.modules)))\n"
            "from harness.cli.main import entry\n"
            "sys.exit(entry(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, "run", "-q", "--jobs", "1", "--profile", "mcp-write-text-file"],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 differ" in done.stdout and "grid 0" in done.stderr
