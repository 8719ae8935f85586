"""Finds scenario files, loads them all, selects among them, and lints the whole set.

The built-in catalog is the repository's ``scenarios/`` folder; an installed package carries a
copy as ``harness/builtin_scenarios``. Users add their own folders with ``--scenarios DIR``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scenario import catalog_cache, profiles
from harness.scenario.loader import Problem, ScenarioError, load_file
from harness.scenario.model import Scenario


def builtin_dir() -> Path:
    """Returns the folder of the built-in catalog (the checkout's scenarios/, else the packaged copy)."""
    return profiles.builtin_dir()


def scenario_files(directories: Iterable[Path]) -> list[Path]:
    """Returns every ``*.yaml``/``*.yml`` file under the directories (or the files themselves),
    sorted; a profile's ``profile.yaml`` is not a scenario file.

    Links inside a folder are not followed into other folders; a link named like a scenario file is
    listed, and reading it then fails with its name (a contributed folder cannot make the harness
    read, and quote, a file elsewhere).
    """
    return sorted({Path(text) for text in _scenario_texts(directories)})  # one per path ("./a.yaml" is "a.yaml")


def _scenario_texts(directories: Iterable[Path], profile_files: set[str] | None = None) -> set[str]:
    """Returns the paths :func:`scenario_files` finds, as texts (unsorted): a warm start only stats
    them for the cache's fingerprint, and needs no path object per file. ``profile_files``, when
    given, receives the ``profile.yaml`` files below the directories that the same walk meets."""
    found: set[str] = set()
    for directory in directories:
        directory = Path(directory)
        if directory.is_file():
            found.add(str(directory.resolve() if directory.is_symlink() else directory))  # the user named it
            continue
        _list_scenario_files(str(directory), found, profile_files)
    return found


def _list_scenario_files(top: str, out: set[str], profile_files: set[str] | None = None) -> None:
    """Adds the scenario files below ``top`` to ``out``, as os.walk would find them (a link to a folder
    is no folder to enter, a link to a file is listed), by one scandir per folder, at any depth; and
    to ``profile_files``, when given, every entry named ``profile.yaml`` that is no folder, as
    harness/scenario/profiles.py's walk finds them."""
    folders = [top]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        if not entry.is_symlink():
                            folders.append(entry.path)
                    elif entry.name == profiles.FILE_NAME:
                        if profile_files is not None:
                            profile_files.add(entry.path)
                    elif entry.name.endswith((".yaml", ".yml")) and (entry.is_symlink() or entry.is_file()):
                        out.add(entry.path)
        except OSError:  # as os.walk: a folder that cannot be listed is passed over
            continue


@dataclass
class Catalog:
    """Every scenario found, and every problem met on the way."""

    scenarios: list[Scenario] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    broken: list[Path] = field(default_factory=list)
    profiles: list[profiles.Profile] = field(default_factory=list)
    broken_profiles: list[Path] = field(default_factory=list)

    def by_id(self, scenario_id: str) -> Scenario | None:
        """Returns the scenario with that id, or None."""
        return next((s for s in self.scenarios if s.id == scenario_id), None)

    def profile_names(self) -> list[str]:
        """Returns every profile name a selection may use: the built-in profiles, those loaded with
        ``--scenarios`` and those of the loaded scenarios."""
        return sorted(set(profiles.builtin()) | {profile.name for profile in self.profiles}
                      | {scenario.profile for scenario in self.scenarios})

    def unknown_profiles(self, names: Iterable[str]) -> str | None:
        """Returns the usage error for ``--profile`` names no contract or scenario has (with the valid
        ones and the nearest), or None when every name is known."""
        names = list(names)
        # The loaded profiles and the scenarios' name most; the built-in profile files are read
        # (parsed and checked, tens of milliseconds) only for a name they do not.
        loaded = {profile.name for profile in self.profiles} | {scenario.profile for scenario in self.scenarios}
        if all(name in loaded for name in names):
            return None
        import difflib
        valid = self.profile_names()
        unknown = [name for name in names if name not in valid]
        if not unknown:
            return None
        hints = [f"{name!r}" + (f" (did you mean {near[0]!r}?)" if (near := difflib.get_close_matches(name, valid, 1)) else "")
                 for name in unknown]
        return f"unknown profile {', '.join(hints)}; valid profiles: {', '.join(valid)}"

    def select(self, *, profiles: Iterable[str] = (), keyword: str | None = None) -> list[Scenario]:
        """Returns the scenarios of the given profiles whose id, title or tags match ``keyword``.

        ``keyword`` is a pytest ``-k`` expression: words are matched as substrings of the id, the
        title and the tags, combined with ``and``, ``or``, ``not`` and parentheses.
        """
        chosen = [s for s in self.scenarios if not profiles or s.profile in set(profiles)]
        if keyword:
            chosen = [s for s in chosen if keyword_matches(keyword, s)]
        return chosen


def load(directories: Iterable[Path] | None = None) -> Catalog:
    """Loads every scenario file; invalid files are collected as problems, never raised.

    A catalog loaded before from unchanged files comes from the cache (harness/scenario/catalog_cache.py).
    """
    directories = list(directories) if directories is not None else [builtin_dir()]
    below: set[str] = set()  # the profile files met by the same walk
    texts = sorted(_scenario_texts(directories, below))  # in any fixed order: the fingerprint's
    stamps: dict[str, tuple[int, int]] = {}
    key = catalog_cache.fingerprint([*texts, *_profile_candidates(directories, below)], stamps)
    cached = catalog_cache.read(directories, key)
    if isinstance(cached, Catalog):
        profiles.prime(cached.profiles, stamps)  # the profiles it holds are not parsed again in this process
        return cached
    catalog = _load(directories, sorted({Path(text) for text in texts}))
    catalog_cache.write(directories, key, catalog)
    return catalog


def _profile_candidates(directories: list[Path], below: set[str]) -> list[Path]:
    """Returns every profile file a scenario under ``directories`` could be checked against (and
    where one could appear): those below (``below``, met by the walk for scenario files), those
    above, the built-in ones."""
    found = set(profiles.profile_files(directories, below=below))
    found.update(profiles.builtin_files())
    for directory in directories:
        directory = Path(directory).resolve()
        for ancestor in [directory, *directory.parents][:profiles._MAX_ANCESTORS]:
            found.add(ancestor / profiles.FILE_NAME)
    return sorted(found)


def _load(directories: list[Path], files: list[Path]) -> Catalog:
    catalog = Catalog()
    for profile_file in profiles.profile_files(directories):
        try:
            catalog.profiles.append(profiles.load_cached(profile_file))
        except profiles.ProfileError as exc:
            catalog.problems += exc.problems
            catalog.broken.append(profile_file)
            catalog.broken_profiles.append(profile_file)
    names: dict[str, profiles.Profile] = {}
    for profile in catalog.profiles:
        first = names.setdefault(profile.name, profile)
        if first is not profile and profile.file:
            catalog.problems.append(Problem(profile.file, 1, "name", f"duplicate profile {profile.name!r} "
                                                                    f"(first in {first.file})"))
    for path in files:
        try:
            catalog.scenarios += load_file(path)
        except ScenarioError as exc:
            catalog.problems += exc.problems
            catalog.broken.append(path)
    seen: dict[str, Scenario] = {}
    builtin = builtin_dir().resolve()
    for scenario in catalog.scenarios:
        if scenario.id not in seen:
            seen[scenario.id] = scenario
            continue
        # Blame the copy outside the built-in catalog (a user's folder), whichever was loaded first.
        kept, copy = seen[scenario.id], scenario
        if _inside(copy, builtin) and not _inside(kept, builtin):
            kept, copy = copy, kept
            seen[scenario.id] = kept
        where = " (the built-in catalog)" if _inside(kept, builtin) else ""
        catalog.problems.append(Problem(copy.file or Path("?"), copy.line, "id",
                                        f"duplicate id {copy.id!r}: also in {kept.location}{where}; "
                                        "give this one another id"))
    catalog.scenarios = [s for s in catalog.scenarios if seen[s.id] is s]  # one scenario per id runs
    # A former id names one scenario's past: never another scenario's id, nor two scenarios' past.
    former: dict[str, Scenario] = {}
    for scenario in catalog.scenarios:
        for old in scenario.former_ids:
            other = seen.get(old) if old != scenario.id else scenario
            if other is None:
                other = former.setdefault(old, scenario)
                if other is scenario:
                    continue
            catalog.problems.append(Problem(scenario.file or Path("?"), scenario.line, "former_ids",
                                            f"former id {old!r} is {'its own id' if other is scenario else 'also ' + ('the id' if old == other.id else 'a former id') + ' of ' + other.location}"))
    return catalog


def _inside(scenario: Scenario, folder: Path) -> bool:
    return scenario.file is not None and scenario.file.resolve().is_relative_to(folder)


def load_with(extra: Iterable[Path], *, builtin: bool = True) -> Catalog:
    """Loads the built-in catalog (unless ``builtin`` is False) and the ``extra`` folders."""
    return load(([builtin_dir()] if builtin else []) + list(extra))


@functools.lru_cache(maxsize=16)
def compile_keyword(expression: str) -> Any:
    """Returns a ``-k`` expression compiled by pytest's own grammar (not a copy of it), once for a
    whole catalog; ValueError saying why when it is no expression (a syntax error, or nesting deeper
    than the parser's recursion reaches)."""
    from _pytest.mark.expression import Expression
    try:
        return Expression.compile(expression)
    except SyntaxError as exc:
        raise ValueError(f"not a -k expression: {exc.msg} (column {exc.offset})") from None
    except (RecursionError, MemoryError):
        raise ValueError("not a -k expression: nested too deep") from None


def keyword_matches(expression: str, scenario: Scenario) -> bool:
    """Returns whether a ``-k`` expression selects ``scenario``."""
    haystack = [scenario.id.lower(), scenario.title.lower(), *(t.lower() for t in scenario.tags)]

    def matcher(word: str, **_: object) -> bool:
        word = word.lower()
        return any(word in item for item in haystack)

    return compile_keyword(expression).evaluate(matcher)
