"""The catalog cache: a second load of unchanged files parses nothing; any change loads afresh."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from harness.scenario import catalog, catalog_cache, profiles

SCENARIO = """\
id: cache/write-{n}
profile: claude-code
title: {title}
source: 001-claude-code-read-write-edit.md §Write
steps:
  - tool: Write
    args: {{file_path: "${{workspace}}/a.txt", content: "x"}}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(catalog_cache.ENV, str(folder))
    return folder


def _write(folder: Path, n: int, title: str) -> Path:
    path = folder / f"s{n}.yaml"
    path.write_text(textwrap.dedent(SCENARIO.format(n=n, title=title)), "utf-8")
    return path


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path):
        raise AssertionError(f"parsed {path} again")
    monkeypatch.setattr(catalog, "load_file", refuse)


def test_a_second_load_of_unchanged_files_comes_from_the_cache(tmp_path: Path, cache: Path, monkeypatch) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    _write(folder, 1, "first")
    first = catalog.load([folder])
    assert [s.id for s in first.scenarios] == ["cache/write-1"] and list(cache.iterdir())
    _no_parsing(monkeypatch)
    again = catalog.load([folder])
    assert [(s.id, s.title, s.line) for s in again.scenarios] == [(s.id, s.title, s.line) for s in first.scenarios]


def test_a_changed_added_or_removed_file_loads_afresh(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    path = _write(folder, 1, "first")
    catalog.load([folder])
    _write(folder, 1, "a longer title")
    assert [s.title for s in catalog.load([folder]).scenarios] == ["a longer title"]
    _write(folder, 2, "second")
    assert len(catalog.load([folder]).scenarios) == 2
    path.unlink()
    assert [s.id for s in catalog.load([folder]).scenarios] == ["cache/write-2"]


def test_a_profile_file_appearing_above_the_scenarios_loads_afresh(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "put-file" / "scenarios"
    folder.mkdir(parents=True)
    path = _write(folder, 1, "first")
    path.write_text(path.read_text().replace("profile: claude-code", "profile: put-file"), "utf-8")
    before = [str(p) for p in catalog.load([folder]).problems]
    assert any("unknown profile 'put-file'" in p for p in before)
    (tmp_path / "put-file" / "profile.yaml").write_text("name: put-file\n", "utf-8")  # there, but invalid
    after = [str(p) for p in catalog.load([folder]).problems]
    assert after != before and not any("unknown profile" in p for p in after)


def test_a_cache_others_may_write_is_never_read(tmp_path: Path, cache: Path, monkeypatch) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    _write(folder, 1, "first")
    catalog.load([folder])
    (entry,) = cache.iterdir()
    os.chmod(entry, 0o666)
    calls = []
    real = catalog.load_file
    monkeypatch.setattr(catalog, "load_file", lambda path: calls.append(path) or real(path))
    catalog.load([folder])
    assert calls  # parsed again rather than unpickling what anyone could have written


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(catalog_cache.ENV, "off")
    assert catalog_cache.cache_dir() is None
    folder = tmp_path / "scenarios"
    folder.mkdir()
    _write(folder, 1, "first")
    assert len(catalog.load([folder]).scenarios) == 1


def test_the_built_in_catalog_loads_the_same_from_the_cache(cache: Path) -> None:
    fresh = catalog.load()
    cached = catalog.load()
    assert [s.raw for s in cached.scenarios] == [s.raw for s in fresh.scenarios]
    assert [str(p) for p in cached.problems] == [str(p) for p in fresh.problems]
    # Paths are stored as their text (a faster load) and come back as the same paths.
    assert [(type(s.file), s.file) for s in cached.scenarios] == [(type(s.file), s.file) for s in fresh.scenarios]
    assert [(type(p.file), p.file) for p in cached.profiles] == [(type(p.file), p.file) for p in fresh.profiles]


def _cached_profile(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A catalog folder with its own copy of the claude-code profile, loaded once (so cached), and this
    process's profile caches emptied; returns the copy and the built-in file it copies."""
    from harness.scenario import profiles
    folder = tmp_path / "scenarios" / "claude-code"
    folder.mkdir(parents=True)
    builtin = profiles.builtin_dir() / "claude-code" / profiles.FILE_NAME
    profile_file = folder / profiles.FILE_NAME
    profile_file.write_text(builtin.read_text("utf-8"), "utf-8")
    _write(folder, 1, "first")
    catalog.load([tmp_path / "scenarios"])  # written to the cache
    monkeypatch.setattr(profiles, "_PRIMED", {})
    profiles._load_cached.cache_clear()
    return profile_file, builtin


def test_profiles_of_a_cached_catalog_are_not_parsed_again_unless_changed(tmp_path: Path, cache: Path, monkeypatch) -> None:
    from harness.scenario import profiles
    profile_file, builtin = _cached_profile(tmp_path, monkeypatch)
    parsed: list[Path] = []
    real_load_file = profiles.load_file
    monkeypatch.setattr(profiles, "load_file", lambda path: parsed.append(path) or real_load_file(path))
    loaded = catalog.load([tmp_path / "scenarios"])  # from the cache
    assert profiles.load_cached(profile_file) is loaded.profiles[0] and parsed == []
    profile_file.write_text(builtin.read_text("utf-8") + "\n", "utf-8")  # changed: parsed afresh
    assert profiles.load_cached(profile_file).name == "claude-code" and parsed == [profile_file.resolve()]


def test_a_profile_changed_between_the_fingerprint_and_the_priming_is_parsed_again(tmp_path: Path, cache: Path,
                                                                                     monkeypatch) -> None:
    """The cached profile is kept under the stamp the fingerprint read, not one read later: a file
    edited in between never pairs the old content with its new stamp."""
    from harness.scenario import catalog_cache, profiles
    profile_file, builtin = _cached_profile(tmp_path, monkeypatch)
    real_read = catalog_cache.read

    def read_then_edit(*args, **kwargs):  # the cache is read, then the profile changes before priming
        found = real_read(*args, **kwargs)
        profile_file.write_text(builtin.read_text("utf-8").replace("title:", "title: Edited", 1), "utf-8")
        return found

    monkeypatch.setattr(catalog_cache, "read", read_then_edit)
    loaded = catalog.load([tmp_path / "scenarios"])  # from the cache, with the old content
    assert "Edited" not in loaded.profiles[0].title
    assert profiles.load_cached(profile_file).title.startswith("Edited")


def test_scenario_files_are_found_at_any_depth_and_links_to_folders_are_not_entered(tmp_path: Path) -> None:
    # A contributed folder nested deeper than a recursive walk can go ended the listing with a
    # RecursionError; a link to a folder (here, back to the top) would list it again without end.
    deep = str(tmp_path / "scenarios")
    os.mkdir(deep)
    for _ in range(1200):  # past Python's recursion limit (os.makedirs recurses too), within PATH_MAX
        deep += "/d"
        os.mkdir(deep)
    with open(f"{deep}/a.yaml", "w") as out:
        out.write("id: x\n")
    (tmp_path / "scenarios" / "loop").symlink_to(tmp_path / "scenarios", target_is_directory=True)
    try:
        assert catalog.scenario_files([tmp_path / "scenarios"]) == [Path(deep, "a.yaml")]
    finally:  # pytest's own clean-up recurses as deep as the tree
        from harness.containment.cleanup import remove_tree
        assert remove_tree(tmp_path / "scenarios") is None


def test_the_walk_for_scenario_files_meets_the_profile_files_the_profiles_walk_finds(tmp_path: Path) -> None:
    # The fingerprint's profile files come from the walk for scenario files: the same as a walk for them.
    top = tmp_path / "scenarios"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "profile.yaml").write_text("name: a\n", "utf-8")
    (top / "a" / "b" / "profile.yaml").write_text("name: b\n", "utf-8")
    (top / "a" / "b" / "s.yaml").write_text("id: s\n", "utf-8")
    (top / "dir" / "profile.yaml").mkdir(parents=True)  # a folder named so: no profile file
    (top / "linked").symlink_to(top / "a", target_is_directory=True)  # not entered
    (top / "file-link").mkdir()
    (top / "file-link" / "profile.yaml").symlink_to(top / "a" / "profile.yaml")  # listed, as a walk lists it
    (top / "broken").mkdir()
    (top / "broken" / "profile.yaml").symlink_to(tmp_path / "nowhere")
    outside = tmp_path / "above" / "scenarios"
    outside.mkdir(parents=True)
    (tmp_path / "above" / "profile.yaml").write_text("name: above\n", "utf-8")
    for directories in ([top], [top / "a" / "b"], [top / "a" / "b" / "s.yaml"], [outside], [top, outside], [tmp_path / "none"]):
        below: set[str] = set()
        catalog._scenario_texts(directories, below)
        walked = profiles.profile_files(directories)
        assert profiles.profile_files(directories, below=below) == walked, directories
    assert len(profiles.profile_files([top])) == 4


def test_the_texts_files_repeat_are_one_object_each_in_the_cache(tmp_path: Path, cache: Path) -> None:
    # Stored once in the cache's pickle and made once when it loads, however many scenarios repeat them.
    _write(tmp_path, 1, "first title")
    _write(tmp_path, 2, "second title")
    fresh = catalog.load([tmp_path])
    cached = catalog.load([tmp_path])
    for loaded in (fresh, cached):
        one, two = (scenario.raw for scenario in loaded.scenarios)
        assert [key for key in one if key == "profile"][0] is [key for key in two if key == "profile"][0]
        assert one["profile"] == "claude-code" and one["profile"] is two["profile"]
        assert one["steps"][0]["args"]["file_path"] is two["steps"][0]["args"]["file_path"]


def test_the_harness_own_files_are_looked_at_once_per_process_and_the_given_ones_each_time(tmp_path, monkeypatch):
    # A run asks for two fingerprints (its catalog, its stored snapshots): the harness's own
    # sources, some 200 files, were walked and looked at for each.
    catalog_cache._own()  # as the catalog's fingerprint leaves it
    walks: list[str] = []
    real_walk = os.walk
    monkeypatch.setattr(catalog_cache.os, "walk", lambda top, *a, **k: walks.append(str(top)) or real_walk(top, *a, **k))
    given = tmp_path / "given.yaml"
    given.write_text("a", "utf-8")
    stamps: dict = {}
    first = catalog_cache.fingerprint([given], stamps)
    given.write_text("ab", "utf-8")
    second = catalog_cache.fingerprint([given])
    assert walks == [] and first != second
    assert stamps[str(given)][1] == 1 and any(path.endswith("catalog_cache.py") for path in stamps)
