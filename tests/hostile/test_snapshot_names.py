"""Scenario ids that make awkward snapshot file names: 400-character parts, one id a folder of another."""

from __future__ import annotations

from harness.record.snapshot import MAX_NAME, SnapshotStore


def test_a_400_character_id_gets_a_bounded_file_name_and_is_found_again(tmp_path):
    store = SnapshotStore(tmp_path, "target")
    long_id = "hostile/" + "n" * 400
    text = "# header\n# header\nscenario: " + long_id + "\nprofile: p\n"
    assert store.write(long_id, text)
    assert all(len(part) <= MAX_NAME + len(".yaml") for part in store.path(long_id).relative_to(tmp_path).parts)
    assert store.read(long_id) == text
    assert store.ids() == [long_id]


def test_an_id_that_is_the_folder_of_another_works_both_ways(tmp_path):
    store = SnapshotStore(tmp_path, "target")
    for scenario_id in ("a/x", "a/x/y"):
        store.write(scenario_id, f"scenario: {scenario_id}\n")
    assert store.ids() == ["a/x", "a/x/y"]
    assert store.read("a/x") == "scenario: a/x\n" and store.read("a/x/y") == "scenario: a/x/y\n"
    store.remove("a/x/y")
    assert store.ids() == ["a/x"]
