"""Loads scenario files: parses YAML, validates against the JSON Schema, and builds Scenario objects.

Every problem is reported with the file, the line and the field it concerns (the YAML and schema
machinery is harness/scenario/located_errors.py, shared with the profile loader). A scenario's tools, arguments
and options are checked against its profile (harness/scenario/profiles.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.scenario import aspects, profiles, static_checks
from harness.scenario.content_spec import check as check_content
from harness.scenario.content_spec import check_code_points, of_given_file
from harness.scenario.located_errors import ErrorList as _ErrorList
from harness.scenario.located_errors import (
    FileProblems,
    Problem,
    SchemaChecker,
    dotted,
    line_of,
    packaged_schema,
    parse_documents,
    read_yaml_text,
)
from harness.scenario.matchers import MATCHER_NAMES
from harness.scenario.model import Action, Call, Scenario
from harness.scenario.placeholders import parse_reference, placeholders_in, references_in, step_reference

if TYPE_CHECKING:
    import yaml

__all__ = ["Problem", "ScenarioError", "load_file", "load_text", "schema"]

KNOWN_PLACEHOLDERS = frozenset({"workspace"})


class ScenarioError(FileProblems):
    """A scenario file is invalid; ``problems`` lists every problem found."""


def schema() -> dict[str, Any]:
    """Returns the scenario JSON Schema shipped in the package."""
    return packaged_schema("scenario.schema.json")


@functools.cache
def _checker() -> SchemaChecker:
    return SchemaChecker(schema(), matchers=MATCHER_NAMES)  # an unknown $ key is a mistyped matcher


def load_file(path: Path | str) -> list[Scenario]:
    """Returns the scenarios in one file; raises ScenarioError naming file, line and field."""
    path = Path(path)
    try:
        text = read_yaml_text(path)
    except FileProblems as exc:
        raise ScenarioError(exc.problems) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([Problem(path, 1, "file", f"cannot read: {exc}")]) from None
    return load_text(text, path)


def load_text(text: str, path: Path) -> list[Scenario]:
    """Returns the scenarios in ``text`` (the content of ``path``)."""
    try:
        documents, nodes = parse_documents(text, path, "scenario")
    except FileProblems as exc:
        raise ScenarioError(exc.problems) from None
    problems: list[Problem] = []
    scenarios = []
    regex_spent = [0]  # the compiled size of the file's patterns so far (static_checks.regex_problems)
    for index, document in enumerate(documents):
        errors = (static_checks.regex_problems(document, regex_spent) or _checker().problems(document)
                  or _semantic_problems(document, path) + static_checks.problems(document))
        if errors:
            for field_path, message, at_key in errors:
                line = line_of(nodes[index], field_path, at_key)
                problems.append(Problem(path, line, dotted(field_path), message))
            continue
        scenarios.append(_build(document, path, nodes[index].start_mark.line + 1, nodes[index]))
    if problems:
        raise ScenarioError(problems)
    return scenarios


def _semantic_problems(document: dict[str, Any], path: Path | None = None) -> _ErrorList:
    """Checks what the schema cannot: the profile, its tools, arguments and options, placeholders,
    content specs, matchers."""
    out: _ErrorList = _profile_problems(document, path)
    for index, step in enumerate(document["steps"]):
        for key in ("args", "expect", "target"):
            for name in sorted(placeholders_in(step.get(key)) - KNOWN_PLACEHOLDERS):
                problem = _placeholder_problem(name, index, document["steps"], allow_steps=key != "target")
                if problem:
                    out.append((["steps", index, key], problem, False))
        for text in references_in(step.get("expect")):
            problem = _reference_problem(text, index, document["steps"])
            if problem:
                out.append((["steps", index, "expect"], problem, False))
        for field_path, spec in _arg_contents(step.get("args"), ["steps", index, "args"]):
            try:
                check_content(spec)
            except (ValueError, LookupError, TypeError) as exc:
                out.append((field_path, f"invalid $content: {exc}", False))
        for field_path, items in _arg_contents(step.get("args"), ["steps", index, "args"], "$code_points"):
            try:
                check_code_points(items)
            except ValueError as exc:
                out.append((field_path + ["$code_points"], f"invalid $code_points: {exc}", True))
        if "aspect" in step:
            out += [(["steps", index, "aspect"], message, True) for message in aspects.override_problems(step)]
        if "answers" in step and not document.get("open_question"):
            out.append((["steps", index, "answers"], "`answers` only applies to an open_question scenario", True))
    for field_path, spec in _content_specs(document):
        try:
            check_content(spec)
        except (ValueError, LookupError) as exc:
            out.append((field_path, f"invalid content: {exc}", False))
    for field_path in _misplaced_absent_in_expectations(document):
        out.append((field_path, "$absent only applies to a key inside a mapping", False))
    if document.get("requires"):
        given = document.get("given", {})
        if "read_only" in given and "read-only-fs" not in document["requires"]:
            out.append((["given", "read_only"], "given.read_only needs `requires: [read-only-fs]`", True))
        if "disk_free" in given and "disk-full" not in document["requires"]:
            out.append((["given", "disk_free"], "given.disk_free needs `requires: [disk-full]`", True))
    else:
        for key, need in (("read_only", "read-only-fs"), ("disk_free", "disk-full")):
            if key in document.get("given", {}):
                out.append((["given", key], f"given.{key} needs `requires: [{need}]`", True))
    return out


def _profile_problems(document: dict[str, Any], path: Path | None) -> _ErrorList:
    """Checks the scenario against its profile: the profile exists, every call names one of its
    tools with arguments its schema accepts (or says ``invalid_args: true`` and breaks it), and the
    session options are the profile's."""
    name = document["profile"]
    try:
        profile = profiles.for_scenario(name, path)
    except profiles.ProfileError as exc:
        where = exc.problems[0].file if exc.problems else "its profile.yaml"
        return [(["profile"], f"profile {name!r} is defined by {where}, which is invalid", False)]
    if profile is None:
        known = ", ".join(profiles.builtin())
        return [(["profile"], f"unknown profile {name!r} (built-in: {known}; a custom profile is a "
                              f"folder with a {profiles.FILE_NAME} above the scenario file)", False)]
    out: _ErrorList = []
    for field_path, message in profile.option_problems(document.get("options", {})):
        out.append((["options", *field_path], message, bool(field_path)))
    for index, step in enumerate(document["steps"]):
        if "tool" not in step:
            continue
        tool = profile.tools.get(step["tool"])
        if tool is None:
            out.append((["steps", index, "tool"], f"unknown tool {step['tool']!r} for profile {name} "
                                                  f"(tools: {', '.join(profile.tools)})", False))
            continue
        if step.get("invalid_args"):
            if tool.follows(step.get("args", {})):
                out.append((["steps", index, "invalid_args"], f"`invalid_args: true`, but the args follow "
                            f"{tool.name}'s argument schema", True))
            continue
        for field_path, message in tool.argument_problems(step.get("args", {})):
            at_key = bool(field_path) and field_path[-1] in step.get("args", {}) and "has no argument" in message
            out.append((["steps", index, "args", *field_path],
                        message + " (a step that breaks it on purpose says `invalid_args: true`)", at_key))
    return out


def _placeholder_problem(name: str, index: int, steps: list[dict[str, Any]], allow_steps: bool) -> str | None:
    """Returns what is wrong with a placeholder used in step ``index`` (0-based), or None."""
    number = step_reference(name)
    if number is None:
        return f"unknown placeholder ${{{name}}} (known: workspace, stepN.output|error|events...)"
    if not allow_steps:
        return f"${{{name}}}: step results cannot be used here"
    if not 1 <= number <= index:
        return f"${{{name}}} refers to step {number}, but only steps 1..{index} come before this one"
    if "tool" not in steps[number - 1]:
        return f"${{{name}}} refers to step {number}, which is an action, not a call"
    return None


def _reference_problem(text: str, index: int, steps: list[dict[str, Any]]) -> str | None:
    """Returns what is wrong with a ``$same_as``/``$differs_from`` path in step ``index`` (0-based), or None."""
    parsed = parse_reference(text)
    if parsed is None:
        return f"{text!r}: not a reference (steps[N].output.a.b, or output.a.b for this call)"
    number = parsed[0]
    if number is None:
        return None
    if not 1 <= number <= index + 1:
        return f"{text!r} refers to step {number}, but only steps 1..{index + 1} are known by then"
    if "tool" not in steps[number - 1]:
        return f"{text!r} refers to step {number}, which is an action, not a call"
    return None


def _arg_contents(value: Any, path: list[Any], key: str = "$content") -> Iterator[tuple[list[Any], Any]]:
    """Yields (field path, spec) for each ``{key: spec}`` value in call arguments (``$content`` or ``$code_points``)."""
    if isinstance(value, dict):
        if len(value) == 1 and key in value:
            yield path, value[key]
            return
        for name, item in value.items():
            yield from _arg_contents(item, path + [name], key)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _arg_contents(item, path + [position], key)


def _content_specs(document: dict[str, Any]) -> Iterator[tuple[list[Any], Any]]:
    given = document.get("given", {})
    for name, spec in given.get("files", {}).items():
        yield ["given", "files", name], of_given_file(spec)
    for index, step in enumerate(document["steps"]):
        if "content" in step:
            yield ["steps", index, "content"], step["content"]


def _misplaced_absent_in_expectations(document: dict[str, Any]) -> Iterator[list[Any]]:
    for index, step in enumerate(document["steps"]):
        expect = step.get("expect") or {}
        for key in ("output", "events"):
            if key in expect:
                yield from _misplaced_absent(expect[key], ["steps", index, "expect", key])
        if isinstance(expect.get("error"), dict):
            for key, value in expect["error"].items():
                yield from _misplaced_absent(value, ["steps", index, "expect", "error", key])


def _misplaced_absent(value: Any, path: list[Any] | None = None, parent_is_mapping: bool = False) -> Iterator[list[Any]]:
    path = path or []
    if isinstance(value, dict):
        if len(value) == 1 and "$absent" in value and not parent_is_mapping:
            yield path
        for key, item in value.items():
            inner_mapping = not (isinstance(key, str) and key in MATCHER_NAMES)
            yield from _misplaced_absent(item, path + [key], inner_mapping)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _misplaced_absent(item, path + [index], False)


def _then(then: Any) -> Any:
    """Returns ``then`` with each ``files`` entry in the content form ``{pattern, size}`` made
    ``{content: {pattern, size}}``: else its ``size`` read it as a size check, and ``pattern`` went
    unchecked (docs/scenario-format.md, then). The schema allows ``pattern`` only in that form."""
    if not isinstance(then, dict) or not isinstance(then.get("files"), dict):
        return then
    files = {name: {"content": want} if isinstance(want, dict) and "pattern" in want else want
             for name, want in then["files"].items()}
    return {**then, "files": files}


def _build(document: dict[str, Any], path: Path, line: int, node: yaml.Node | None) -> Scenario:
    step_lines = _step_lines(node)
    steps: list[Call | Action] = []
    for index, raw in enumerate(document["steps"]):
        step_line = step_lines[index] if index < len(step_lines) else line
        if "tool" in raw:
            steps.append(Call(tool=raw["tool"], args=raw.get("args", {}), expect=raw.get("expect"),
                              then=_then(raw.get("then")), name=raw.get("name"), answers=raw.get("answers", False),
                              line=step_line, aspect=raw.get("aspect"),
                              invalid_args=bool(raw.get("invalid_args", False))))
        else:
            steps.append(Action(action=raw["action"], path=raw["path"], content=raw.get("content"),
                                mode=raw.get("mode"), target=raw.get("target"), name=raw.get("name"),
                                line=step_line, mtime=raw.get("mtime")))
    return Scenario(
        id=document["id"], profile=document["profile"], title=document["title"], source=document["source"],
        steps=tuple(steps), given=document.get("given", {}), then=_then(document.get("then")),
        tags=tuple(document.get("tags", ())), open_question=document.get("open_question"),
        former_ids=tuple(document.get("former_ids", ())),
        requires=_requires(document), options=document.get("options", {}), acp=document.get("acp", {}),
        file=path, line=line, raw=document,
    )


def _requires(document: dict[str, Any]) -> tuple[str, ...]:
    """Returns the scenario's ``requires``; client settings (``acp``) need an ACP client."""
    requires = tuple(document.get("requires", ()))
    return requires + ("acp",) if "acp" in document and "acp" not in requires else requires


def _step_lines(node: yaml.Node | None) -> list[int]:
    import yaml  # a scenario parsed here already imported it
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "steps" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []
