"""Loads scenario files: parses YAML, validates against the JSON Schema, and builds Scenario objects.

Every problem is reported with the file, the line and the field it concerns. Parsing uses libyaml
when available (once for values, once for the node tree that gives lines). Our YAML loader is a
private subclass: nothing here changes PyYAML for anyone else.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import jsonschema_rs
import yaml

from harness.content import check as check_content
from harness.matchers import MATCHER_NAMES
from harness.model import PROFILE_TOOLS, Action, Call, Scenario
from harness.placeholders import parse_reference, placeholders_in, references_in, step_reference

KNOWN_PLACEHOLDERS = frozenset({"workspace"})

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that refuses duplicate keys (a repeated key must not silently drop a check)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario file, located."""

    file: Path
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f" [{self.field}]" if self.field else ""
        return f"{self.file}:{self.line}:{where} {self.message}"


class ScenarioError(Exception):
    """A scenario file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = problems


@functools.cache
def schema() -> dict[str, Any]:
    """Returns the scenario JSON Schema shipped in the package."""
    text = resources.files("harness").joinpath("schema/scenario.schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    """The explaining validator: slow, but its errors carry the context that locates a problem."""
    cls = jsonschema.validators.validator_for(schema())
    return cls(schema(), format_checker=cls.FORMAT_CHECKER)


@functools.cache
def _fast_validator() -> Any:
    """The deciding validator: jsonschema-rs, hundreds of times faster, used to clear valid files."""
    return jsonschema_rs.validator_for(schema(), validate_formats=True)


def load_file(path: Path | str) -> list[Scenario]:
    """Returns the scenarios in one file; raises ScenarioError naming file, line and field."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([Problem(path, 1, "", f"cannot read: {exc}")]) from None
    return load_text(text, path)


def load_text(text: str, path: Path) -> list[Scenario]:
    """Returns the scenarios in ``text`` (the content of ``path``)."""
    try:
        documents = [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError([Problem(path, line, "", f"invalid YAML: {problem}")]) from None
    if not documents:
        raise ScenarioError([Problem(path, 1, "", "no scenario in file")])
    problems: list[Problem] = []
    nodes = [node for node in yaml.compose_all(text, Loader=_BaseLoader) if node is not None]
    scenarios = []
    for index, document in enumerate(documents):
        errors = _schema_problems(document) or _semantic_problems(document)
        if errors:
            for field_path, message, at_key in errors:
                line = _line_of(nodes[index], field_path, at_key)
                problems.append(Problem(path, line, _dotted(field_path), message))
            continue
        scenarios.append(_build(document, path, nodes[index].start_mark.line + 1, nodes[index]))
    if problems:
        raise ScenarioError(problems)
    return scenarios


_ErrorList = list[tuple[list[Any], str, bool]]


def _schema_problems(document: Any) -> _ErrorList:
    if _fast_validator().is_valid(document):
        return []
    out: _ErrorList = []
    for error in _validator().iter_errors(document):
        error = _most_relevant(error)
        field_path = list(error.absolute_path)
        message = error.message
        at_key = False
        if error.validator == "additionalProperties":
            unexpected = re.findall(r"'([^']+)' (?:was|were) unexpected", message)
            names = re.findall(r"'([^']+)'", message.split("(")[-1]) if not unexpected else unexpected
            if names:
                field_path = field_path + [names[0]]
                at_key = True
                allowed = sorted(error.schema.get("properties", {}))
                message = f"unknown key {names[0]!r}" + (f" (allowed: {', '.join(allowed)})" if allowed else "")
        elif error.validator == "required":
            message = error.message.replace("is a required property", "is required")
        out.append((field_path, message, at_key))
    out.sort(key=lambda item: [str(part) for part in item[0]])
    return out


def _most_relevant(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For oneOf/anyOf failures, descends into the branch the author most likely meant.

    That is the branch with the fewest errors, not counting branches of the wrong type at all;
    within it, the deepest error (an unknown key first).
    """
    while error.context:
        branches: dict[Any, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        chosen = min(branches.values(), key=lambda errs: (
            all(e.validator == "type" and len(e.relative_schema_path) <= 2 for e in errs), len(errs),
            not any(e.validator == "additionalProperties" for e in errs)))
        error = max(chosen, key=lambda e: (len(e.absolute_path), e.validator == "additionalProperties"))
    return error


def _semantic_problems(document: dict[str, Any]) -> _ErrorList:
    """Checks what the schema cannot: tools of the profile, placeholders, content specs, matchers."""
    out: _ErrorList = []
    tools = PROFILE_TOOLS.get(document["profile"], ())
    for index, step in enumerate(document["steps"]):
        if "tool" in step and step["tool"] not in tools:
            out.append((["steps", index, "tool"],
                        f"unknown tool {step['tool']!r} for profile {document['profile']} "
                        f"(tools: {', '.join(tools)})", False))
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


def _arg_contents(value: Any, path: list[Any]) -> Iterator[tuple[list[Any], Any]]:
    if isinstance(value, dict):
        if len(value) == 1 and "$content" in value:
            yield path, value["$content"]
            return
        for key, item in value.items():
            yield from _arg_contents(item, path + [key])
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _arg_contents(item, path + [position])


def _content_specs(document: dict[str, Any]) -> Iterator[tuple[list[Any], Any]]:
    given = document.get("given", {})
    for name, spec in given.get("files", {}).items():
        yield ["given", "files", name], spec["content"] if isinstance(spec, dict) and "content" in spec else spec
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


def _line_of(node: yaml.Node, field_path: list[Any], at_key: bool) -> int:
    """Returns the 1-based line of the node at ``field_path`` (of its key when ``at_key``)."""
    current, key_node = node, None
    for part in field_path:
        if isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                if k.value == str(part):
                    current, key_node = v, k
                    break
            else:
                break
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int) and part < len(current.value):
            current, key_node = current.value[part], None
        else:
            break
    if at_key and key_node is not None:
        return key_node.start_mark.line + 1
    return current.start_mark.line + 1


def _dotted(field_path: list[Any]) -> str:
    out = ""
    for part in field_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _build(document: dict[str, Any], path: Path, line: int, node: yaml.Node | None) -> Scenario:
    step_lines = _step_lines(node)
    steps = []
    for index, raw in enumerate(document["steps"]):
        step_line = step_lines[index] if index < len(step_lines) else line
        if "tool" in raw:
            steps.append(Call(tool=raw["tool"], args=raw.get("args", {}), expect=raw.get("expect"),
                              then=raw.get("then"), name=raw.get("name"), answers=raw.get("answers", False),
                              line=step_line))
        else:
            steps.append(Action(action=raw["action"], path=raw["path"], content=raw.get("content"),
                                mode=raw.get("mode"), target=raw.get("target"), name=raw.get("name"),
                                line=step_line, mtime=raw.get("mtime")))
    return Scenario(
        id=document["id"], profile=document["profile"], title=document["title"], source=document["source"],
        steps=tuple(steps), given=document.get("given", {}), then=document.get("then"),
        tags=tuple(document.get("tags", ())), open_question=document.get("open_question"),
        requires=tuple(document.get("requires", ())), options=document.get("options", {}),
        file=path, line=line, raw=document,
    )


def _step_lines(node: yaml.Node | None) -> list[int]:
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "steps" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []
