"""Profiles as data: each profile is a folder with a ``profile.yaml`` and its scenarios.

``profile.yaml`` names the contract a set of scenarios tests (and where a reader finds it), the
contract's tools with JSON Schemas of their arguments and, where the contract gives one, of their
output, the session options a target is opened with, the shape of its events and its error kinds
(harness/schema/profile.schema.json; docs/scenario-format.md#profiles). The built-in profiles are
the folders of the built-in catalog; ``--scenarios DIR`` adds the profiles found under DIR.

A scenario file belongs to the nearest ``profile.yaml`` above it whose name is the scenario's
``profile``, else to the built-in profile of that name.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scenario.located_errors import (
    FileProblems,
    Problem,
    SchemaChecker,
    located,
    packaged_schema,
    parse_documents,
    read_yaml_text,
)
from harness.scenario.normal_form import ContentSpec, FormError
from harness.scenario.normal_form import parse as parse_content
from harness.util import schemas

FILE_NAME = "profile.yaml"
#: How far above a scenario file a profile.yaml is looked for (a bound, not a policy).
_MAX_ANCESTORS = 16


class ProfileError(FileProblems):
    """A profile file is invalid; ``problems`` lists every problem, file:line:field."""


@dataclass(frozen=True)
class Tool:
    """One tool of a profile."""

    name: str
    arguments: dict[str, Any]
    output: dict[str, Any] | bool | None = None
    summary: str = ""
    source: str = ""
    failure: str = "error"
    outcome: tuple[str, ...] = ()
    #: What of the output is content, and its normal form (harness/normal_form.py): the ``content`` aspect.
    content: ContentSpec = ContentSpec()

    @property
    def argument_names(self) -> tuple[str, ...]:
        """Returns the arguments the contract documents, in the schema's order."""
        return tuple(self.arguments.get("properties", {}))

    def follows(self, args: dict[str, Any]) -> bool:
        """Returns whether ``args`` names documented arguments only and fits the schema (decided fast)."""
        concrete = _concrete(args)
        known = self.argument_names
        return all(name in known for name in concrete) and _is_valid(self.arguments, concrete)

    def argument_problems(self, args: dict[str, Any]) -> list[tuple[list[Any], str]]:
        """Returns what in ``args`` breaks the argument schema, or names no documented argument.

        Each problem is (path inside args, message). A ``{"$content": ...}`` or ``{"$code_points": ...}``
        value stands for a string and ``${...}`` placeholders are taken as written.
        """
        if self.follows(args):
            return []
        concrete = _concrete(args)
        out: list[tuple[list[Any], str]] = []
        known = self.argument_names
        for name in concrete:
            if name not in known:
                import difflib  # the nearest name, only for a name the tool does not have
                close = difflib.get_close_matches(str(name), known, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                out.append(([name], f"{self.name} has no argument {name!r} ({hint}arguments: {', '.join(known) or 'none'})"))
        for error in _errors(self.arguments, concrete):
            path = list(error.instance_path)
            if schemas.keyword(error) == "additionalProperties":
                continue  # reported above, by name
            message = error.message.replace("is a required property", "is required")
            out.append((path, f"{self.name}: {message}"))
        return out


@dataclass(frozen=True)
class Profile:
    """One profile, loaded from its ``profile.yaml``."""

    name: str
    title: str
    contract: dict[str, Any]
    tools: dict[str, Tool]
    options: dict[str, Any] | bool = True
    events: dict[str, Any] | None = None
    errors: tuple[dict[str, Any], ...] = ()
    sections: tuple[dict[str, Any], ...] = ()
    summary: str = ""
    paths: str = "unspecified"
    file: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def directory(self) -> Path | None:
        """Returns the profile's folder (its scenarios are below it)."""
        return self.file.parent if self.file else None

    @property
    def document(self) -> str:
        """Returns the contract document scenarios cite (a seed file name, or ``captured``)."""
        return self.contract["document"]

    def option_problems(self, options: dict[str, Any]) -> list[tuple[list[Any], str]]:
        """Returns what in a scenario's ``options`` the profile's options schema refuses."""
        out: list[tuple[list[Any], str]] = []
        for error in _errors(self.options, options):
            message = error.message
            if schemas.keyword(error) == "additionalProperties":
                allowed = ", ".join(schemas.properties_of(self.options, error)) or "none"
                message = f"{message} (options of {self.name}: {allowed})"
            out.append((list(error.instance_path), message))
        return out


def _is_valid(schema: dict[str, Any] | bool, value: Any) -> bool:
    """Returns whether ``value`` follows a schema of the profile (checked valid when the profile loaded)."""
    return schemas.validator(schema).is_valid(value)


def _errors(schema: dict[str, Any] | bool, value: Any) -> list[Any]:
    """Returns the errors of ``value`` against a schema of the profile, each narrowed (harness.util.schemas)."""
    return schemas.errors(schemas.validator(schema), value)


def _concrete(value: Any) -> Any:
    """Returns args with each ``{"$content": spec}`` or ``{"$code_points": [...]}`` replaced by a string
    (what the call receives)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("$content", "$code_points"):
            return "<content>"
        return {key: _concrete(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_concrete(item) for item in value]
    return value


@functools.cache
def _profile_checker() -> SchemaChecker:
    return SchemaChecker(packaged_schema("profile.schema.json"))


def load_file(path: Path | str) -> Profile:
    """Returns the profile in ``path``; raises ProfileError naming file, line and field."""
    path = Path(path)
    try:
        text = read_yaml_text(path)
    except FileProblems as exc:
        raise ProfileError(exc.problems) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError([Problem(path, 1, "file", f"cannot read: {exc}")]) from None
    try:
        documents, nodes = parse_documents(text, path, "profile")
    except FileProblems as exc:
        raise ProfileError(exc.problems) from None
    if len(documents) > 1:
        raise ProfileError([Problem(path, nodes[1].start_mark.line + 1, "document", "a profile file holds one document")])
    document, node = documents[0], nodes[0]
    errors = _profile_checker().problems(document) or _semantic_problems(document)
    if errors:
        raise ProfileError(located(path, node, errors))
    return _build(document, path)


def _semantic_problems(document: dict[str, Any]) -> list[tuple[list[Any], str, bool]]:
    """Checks what the schema cannot: every embedded JSON Schema is one, outcome fields exist."""
    out: list[tuple[list[Any], str, bool]] = []
    embedded: list[tuple[list[Any], Any]] = [(["options"], document.get("options", True))]
    if "events" in document and "schema" in document["events"]:
        embedded.append((["events", "schema"], document["events"]["schema"]))
    for name, tool in document["tools"].items():
        embedded.append((["tools", name, "arguments"], tool["arguments"]))
        if "output" in tool:
            embedded.append((["tools", name, "output"], tool["output"]))
        if tool.get("outcome") and tool.get("failure", "error") == "error" and "output" not in tool:
            out.append((["tools", name, "outcome"], "outcome fields need an `output` schema naming them", False))
    for field_path, schema in embedded:
        problem = schemas.schema_problem(schema)
        if problem is not None:
            inner, message = problem
            out.append((field_path + inner, f"not a valid JSON Schema: {message}", False))
    options = document.get("options")
    if isinstance(options, dict) and options.get("type", "object") != "object":
        out.append((["options", "type"], "session options are an object", False))
    for name, tool in document["tools"].items():
        props = (tool.get("output") or {}).get("properties", {}) if isinstance(tool.get("output"), dict) else {}
        for index, field_name in enumerate(tool.get("outcome", ())):
            if props and field_name not in props:
                out.append((["tools", name, "outcome", index],
                            f"outcome field {field_name!r} is not a property of the output schema", False))
    for name, tool in document["tools"].items():
        if "content" in tool:
            try:
                parse_content(tool["content"])
            except FormError as exc:
                out.append((["tools", name, "content"], str(exc), False))
            overlap = set((tool.get("content") or {}).get("fields") or ()) & set(tool.get("outcome", ()))
            if overlap:
                out.append((["tools", name, "content", "fields"],
                            f"{', '.join(sorted(overlap))}: a field is content or outcome, not both", False))
    known_tools = set(document["tools"])
    for index, error in enumerate(document.get("errors", ())):
        for position, tool_name in enumerate(error.get("tools", ())):
            if tool_name not in known_tools:
                out.append((["errors", index, "tools", position], f"no tool {tool_name!r} in this profile", False))
    return out


def _build(document: dict[str, Any], path: Path) -> Profile:
    tools = {
        name: Tool(name=name, arguments=raw["arguments"], output=raw.get("output"), summary=raw.get("summary", ""),
                   source=raw.get("source", ""), failure=raw.get("failure", "error"),
                   outcome=tuple(raw.get("outcome", ())), content=parse_content(raw.get("content")))
        for name, raw in document["tools"].items()
    }
    return Profile(
        name=document["name"], title=document["title"], contract=document["contract"], tools=tools,
        options=document.get("options", True), events=document.get("events"),
        errors=tuple(document.get("errors", ())), sections=tuple(document.get("sections", ())),
        summary=document.get("summary", ""), paths=document.get("paths", "unspecified"), file=path, raw=document,
    )


# --- finding profiles ---------------------------------------------------------------------------


def builtin_dir() -> Path:
    """Returns the folder of the built-in catalog (the checkout's scenarios/, else the packaged copy)."""
    package = Path(__file__).resolve().parents[1]  # the harness package
    checkout = package.parent / "scenarios"
    if checkout.is_dir() and (package.parent / "pyproject.toml").is_file():
        return checkout
    return package / "builtin_scenarios"


def profile_files(directories: Iterable[Path], *, below: Iterable[str] | None = None) -> list[Path]:
    """Returns every ``profile.yaml`` under the directories (and above a scenario file given itself).

    ``below``: those under the directories, as a walk of them that found the scenario files met them
    (harness/scenario/catalog.py): not walked for again."""
    found: set[Path] = {Path(path) for path in below} if below is not None else set()
    for directory in directories:
        directory = Path(directory)
        if directory.is_file():
            nearest = _nearest_profile_file(directory.parent)
            if nearest:
                found.add(nearest)
            continue
        if below is None:
            for folder, _, names in os.walk(directory):  # links are not followed into other folders
                if FILE_NAME in names:
                    found.add(Path(folder, FILE_NAME))
        nearest = _nearest_profile_file(directory)
        if nearest:
            found.add(nearest)
    return sorted(found)


def _nearest_profile_file(directory: Path) -> Path | None:
    for ancestor in [directory, *directory.parents][:_MAX_ANCESTORS]:
        candidate = ancestor / FILE_NAME
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=512)
def _load_cached(path: Path, stamp: tuple[int, int]) -> Profile | ProfileError:
    try:
        return load_file(path)
    except ProfileError as exc:
        return exc


#: Profiles a cached catalog holds, by resolved path, mtime and size (see :func:`prime`).
_PRIMED: dict[tuple[Path, tuple[int, int]], Profile] = {}


def prime(loaded: Iterable[Profile], stamps: dict[str, tuple[int, int]]) -> None:
    """Lets :func:`load_cached` answer with profiles a cached catalog holds (harness/scenario/catalog_cache.py):
    ``stamps`` are each file's (mtime, size) as the catalog's fingerprint read them, so a profile is
    kept under the stamp its content had; a file changed since is parsed again. A process that loads
    the catalog from its cache parses no unchanged profile file again."""
    for profile in loaded:
        if profile.file is None:
            continue
        stamp = stamps.get(str(profile.file))
        if stamp is not None:
            _PRIMED[(_place(profile.file), stamp)] = profile


def _place(path: Path | str) -> Path:
    """Returns ``path`` with its folder resolved and its last component as it is: a ``profile.yaml``
    that is a symbolic link (a checkout may bring one, aimed at a file elsewhere) is then refused
    by the reading, which follows no link (harness/scenario/located_errors.py), instead of being read where it
    leads. The folders above are the user's (``--scenarios``) or met by a walk that follows no link."""
    path = Path(path)
    return path.parent.resolve() / path.name


def load_cached(path: Path) -> Profile:
    """Returns the profile in ``path``, parsed once per content (keyed on mtime and size)."""
    path = _place(path)
    try:
        stat = path.lstat()
    except OSError as exc:
        raise ProfileError([Problem(path, 1, "file", f"cannot read: {exc}")]) from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    primed = _PRIMED.get((path, stamp))
    if primed is not None:
        return primed
    loaded = _load_cached(path, stamp)
    if isinstance(loaded, ProfileError):
        raise loaded
    return loaded


def builtin() -> dict[str, Profile]:
    """Returns the built-in profiles by name, in the catalog's order (the order of the contracts).

    A broken built-in profile raises ProfileError: the package itself is broken.
    """
    found = [load_cached(path) for path in builtin_files()]
    return {profile.name: profile for profile in sorted(found, key=_order)}


def builtin_files() -> list[Path]:
    """Returns the built-in catalog's ``<folder>/profile.yaml`` files, a folder that is a symbolic link
    left out (a glob follows it: a checkout's ``scenarios/x`` linked to a folder elsewhere would make
    that folder's ``profile.yaml`` a built-in profile), as the walk for scenario files leaves it."""
    return [path for path in sorted(builtin_dir().glob(f"*/{FILE_NAME}")) if not path.parent.is_symlink()]


def _order(profile: Profile) -> tuple[str, str]:
    # Contracts are numbered (001-..., 002-...): their order is the seeds' order; captured ones follow.
    return (profile.document, profile.name)


def for_scenario(name: str, scenario_file: Path | None) -> Profile | None:
    """Returns the profile a scenario names: the nearest profile.yaml above its file with that
    name, else the built-in one. Raises ProfileError when the profile file that would decide is
    invalid."""
    return _nearest(name, Path(scenario_file).resolve().parent if scenario_file is not None else None)


def for_folder(name: str, folder: Path | None) -> Profile | None:
    """Returns the profile named ``name`` for the scenarios in ``folder``: the nearest profile.yaml
    in it or above it with that name, else the built-in one (see :func:`for_scenario`)."""
    return _nearest(name, Path(folder).resolve() if folder is not None else None)


def _nearest(name: str, folder: Path | None) -> Profile | None:
    if folder is not None:
        for ancestor in [folder, *folder.parents][:_MAX_ANCESTORS]:
            candidate = ancestor / FILE_NAME
            if candidate.is_file():
                try:
                    profile = load_cached(candidate)
                except ProfileError as exc:
                    if _declares(candidate, name):
                        raise exc from None
                    continue
                if profile.name == name:
                    return profile
    return builtin().get(name)


def _declares(path: Path, name: str) -> bool:
    """Returns whether an (invalid) profile file seems to be the one for ``name``: its folder or
    its ``name:`` line says so."""
    if path.parent.name == name:
        return True
    try:  # a regular file within the cap only: an invalid profile file may be a FIFO
        return any(line.strip() in (f"name: {name}", f'name: "{name}"', f"name: '{name}'")
                   for line in read_yaml_text(path).splitlines()[:50])
    except (OSError, UnicodeDecodeError, FileProblems):
        return False


def known(extra: Iterable[Path] = ()) -> dict[str, Profile]:
    """Returns the built-in profiles and those under ``extra`` folders (valid ones only), by name."""
    out = dict(builtin())
    for path in profile_files(extra):
        try:
            profile = load_cached(path)
        except ProfileError:
            continue
        out.setdefault(profile.name, profile)
    return out


def display_order() -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Returns how reports order profiles and tools: built-in profiles in the contracts' order and
    each profile's tools in its file's order (names not found sort after, by the caller)."""
    try:
        found = builtin()
    except ProfileError:
        found = {}
    order = {name: index for index, name in enumerate(found)}
    tool_order = {(name, tool): index for name, profile in found.items() for index, tool in enumerate(profile.tools)}
    return order, tool_order
