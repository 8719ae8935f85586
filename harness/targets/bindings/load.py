"""Loading bindings: a profile's tools mapped onto a target's tools (``--binding FILE``; docs/bindings.md).

A binding file is YAML, validated against ``harness/schema/binding.schema.json``; every problem is
reported as ``file:line: [field] message``. For each profile tool it says:

- which target tool to call (``tool``);
- how to build the target's arguments from the profile's call (``args``): a profile argument by
  name (a rename), ``{arg, default, add | count}`` (integer offset, boolean to count),
  ``{const}``, ``{template}`` (``{name}`` fields only), and lists and objects of those (nesting,
  e.g. ``files: [{file_path: file_path}]``); profile arguments used nowhere pass through under
  their own names unless listed in ``drop``;
- how to read the result: ``output`` is a JMESPath expression (the ``jmespath`` library) giving the
  profile's output out of the target's; ``failure`` says which signals mean the call failed
  (``isError``, ``jsonrpc-error``, an output ``field``, a ``text`` regular expression), where the
  message comes from, and which code a message stands for.

That closed set is the whole language: nothing here evaluates anything else. ``--tool-map`` and
``--tool-map-file`` are shorthands that produce the same :class:`Binding`. The targets (cmd:, mcp:)
apply a binding; this module knows nothing of how they reach their tools.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jmespath
import re2 as _regex  # linear-time matching (google-re2), as the signals use

from harness.scenario.located_errors import (
    FileProblems,
    Problem,
    SchemaChecker,
    kind_of,
    line_of,
    located,
    packaged_schema,
    parse_documents,
    read_yaml_text,
)
from harness.targets.bindings.apply import (
    _VALUE_KEYS,
    Binding,
    BindingError,
    ToolBinding,
    _names_path,
    _template_fields,
)
from harness.targets.bindings.signals import DEFAULT_SIGNALS, FailureRule, _pattern_problem
from harness.util import limits
from harness.util.pathrules import argument_path_problem


@functools.cache
def _checker() -> SchemaChecker:
    # Its messages name the kind of a wrong value, never the value: a binding may be a file that is
    # not one (a credentials file in its place), and the log of a CI run is public.
    return SchemaChecker(packaged_schema("binding.schema.json"), quote=False)


def load(path: str | Path) -> Binding:
    """Returns the binding in a YAML file; raises BindingError naming file, line and field."""
    path = Path(path)
    try:
        text = read_yaml_text(path, follow_link=True)  # a file the user named
    except FileProblems as exc:
        raise BindingError(exc.problems) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BindingError([Problem(path, 1, "", f"cannot read the binding: {getattr(exc, 'strerror', None) or exc}")]) from None
    document, node = _parse(text, path)
    errors = _checker().problems(document) or _semantic_problems(document)
    if errors:
        raise BindingError(located(path, node, errors))
    return _build_binding(document, node, str(path))


def _parse(text: str, path: Path) -> tuple[Any, Any]:
    try:
        documents, nodes = parse_documents(text, path, "binding")
    except FileProblems as exc:
        raise BindingError(exc.problems) from None
    if len(documents) > 1:
        raise BindingError([Problem(path, nodes[1].start_mark.line + 1, "", "one binding per file (a second YAML document)")])
    return _string_keys(documents[0]), nodes[0]


def _string_keys(value: Any) -> Any:
    """Returns ``value`` with YAML's non-string keys as strings (``count: {true: 0, false: 1}``)."""
    if isinstance(value, dict):
        return {(json.dumps(k) if isinstance(k, bool) or k is None else str(k)): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(item) for item in value]
    return value


def _semantic_problems(document: dict[str, Any]) -> list[tuple[list[Any], str, bool]]:
    """Checks what the schema cannot: the profile's tools, templates, JMESPath and patterns."""
    out: list[tuple[list[Any], str, bool]] = []
    tools = _profile_tools(document.get("profile"))
    for name, spec in document["tools"].items():
        at = ["tools", name]
        if tools is not None and name not in tools:
            out.append((at, f"unknown tool {name!r} for profile {document['profile']} (tools: {', '.join(tools)})", True))
        for where in _arg_specs(spec.get("args", {}), at + ["args"]):
            out.append((where, "`add` and `count` cannot be combined: one transform per value", False))
        for where, template in _templates(spec.get("args", {}), at + ["args"]):
            try:
                _template_fields(template)
            except ValueError as exc:
                out.append((where, f"invalid template: {exc}", False))
        for where, wrong in _path_problems(spec.get("args", {}), at + ["args"]):
            out.append((where, wrong, False))
        for key in ("output",):
            if key in spec:
                problem = _jmespath_problem(spec[key])
                if problem:
                    out.append((at + [key], problem, False))
        failure = spec.get("failure", {})
        if "message" in failure:
            problem = _jmespath_problem(failure["message"])
            if problem:
                out.append((at + ["failure", "message"], problem, False))
        for index, signal in enumerate(failure.get("signals", ())):
            if isinstance(signal, dict) and "field" in signal:
                problem = _jmespath_problem(signal["field"])
            elif isinstance(signal, dict):
                problem = _pattern_problem(signal["text"])
            else:
                problem = None
            if problem:
                out.append((at + ["failure", "signals", index], problem, False))
        for index, entry in enumerate(failure.get("codes", ())):
            problem = _pattern_problem(entry["match"])
            if problem:
                out.append((at + ["failure", "codes", index, "match"], problem, False))
    return out


def _profile_tools(profile: str | None) -> tuple[str, ...] | None:
    """Returns the tools of a known profile, or None when the binding names none (or one we do not know)."""
    if not profile:
        return None
    from harness.scenario import profiles
    known = profiles.builtin().get(profile)
    return tuple(known.tools) if known else None


def _templates(value: Any, where: list[Any]) -> Iterable[tuple[list[Any], str]]:
    if isinstance(value, dict):
        if "template" in value and isinstance(value["template"], str):
            yield where + ["template"], value["template"]
        elif not any(key in value for key in _VALUE_KEYS):
            for key, item in value.items():
                yield from _templates(item, where + [key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _templates(item, where + [index])


def _path_problems(args: Mapping[str, Any], where: list[Any]) -> Iterable[tuple[list[Any], str]]:
    """Yields where a constant, a default or a template's own text under a key naming a path leads
    beyond the folder around the workspace (``pathrules.argument_path_problem``).

    A binding sends these as written, after every check of the scenario's paths: ``/etc/cron.d/x``
    here would reach a tool that takes absolute paths. A binding cannot know whether a scenario lays
    out links, so ``..`` may not follow a name; a template's fields stand for a relative name.
    """
    for key, spec in args.items():
        yield from _spec_paths(spec, where + [key], _names_path(key))


def _spec_paths(spec: Any, where: list[Any], named: bool) -> Iterable[tuple[list[Any], str]]:
    if isinstance(spec, list):
        for index, item in enumerate(spec):
            yield from _spec_paths(item, where + [index], named)
    elif isinstance(spec, dict):
        if "const" in spec:
            yield from _constant_paths(spec["const"], where + ["const"], named)
        elif "template" in spec:
            if named and isinstance(spec["template"], str):
                try:
                    pieces = list(string.Formatter().parse(spec["template"]))
                except ValueError:
                    return  # reported as an invalid template
                text = "".join(literal + ("x" if name is not None else "") for literal, name, _s, _c in pieces)
                problem = _binding_path_problem(text)
                if problem:
                    yield where + ["template"], f"the template's own text: {problem}"
        elif "arg" in spec:
            if "default" in spec:
                yield from _constant_paths(spec["default"], where + ["default"], named)
        else:
            for key, item in spec.items():
                yield from _spec_paths(item, where + [key], named or _names_path(key))
    # a string names a profile argument (checked as the scenario's path, and again when sent)


def _constant_paths(value: Any, where: list[Any], named: bool) -> Iterable[tuple[list[Any], str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _constant_paths(item, where + [key], named or _names_path(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _constant_paths(item, where + [index], named)
    elif named and isinstance(value, str):
        problem = _binding_path_problem(value)
        if problem:
            yield where, problem


def _binding_path_problem(text: str) -> str | None:
    if text.startswith("/"):  # ``${workspace}`` is not filled in here: ``/${workspace}/x`` is absolute too
        return (f"{text!r} is an absolute path: a binding sends it as written, so a tool that wrongly accepted it "
                "would write outside the workspace; give a relative path or take the path from the profile's argument")
    return argument_path_problem(text, links=True)


def _arg_specs(value: Any, where: list[Any]) -> Iterable[list[Any]]:
    """Yields where an ``{arg}`` value asks for two transforms at once."""
    if isinstance(value, dict):
        if "arg" in value:
            if "add" in value and "count" in value:
                yield where
        elif not any(key in value for key in _VALUE_KEYS):
            for key, item in value.items():
                yield from _arg_specs(item, where + [key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _arg_specs(item, where + [index])


def _jmespath_problem(expression: str) -> str | None:
    shown = repr(expression) if len(expression) <= 80 else f"{expression[:60]!r}... ({len(expression)} characters)"
    if len(expression) > limits.MAX_EXPRESSION:
        return f"JMESPath {shown} is longer than {limits.MAX_EXPRESSION} characters (HARNESS_MAX_EXPRESSION)"
    try:
        jmespath.compile(expression)
    except jmespath.exceptions.JMESPathError as exc:
        return f"invalid JMESPath {shown}: {str(exc).splitlines()[0]}"
    except RecursionError:
        return f"JMESPath {shown} nests too deep to parse"
    return None


def _build_binding(document: dict[str, Any], node: Any, source: str) -> Binding:
    tools = {}
    for name, spec in document["tools"].items():
        failure = spec.get("failure", {})
        signals = []
        for signal in failure.get("signals", DEFAULT_SIGNALS):
            if isinstance(signal, dict) and "field" in signal:
                signal = {**signal, "_field": jmespath.compile(signal["field"])}
            elif isinstance(signal, dict):
                signal = {**signal, "_text": _regex.compile(signal["text"])}
            signals.append(signal)
        rule = FailureRule(
            signals=tuple(signals),
            message=jmespath.compile(failure["message"]) if "message" in failure else None,
            codes=tuple((_regex.compile(entry["match"]), entry["code"]) for entry in failure.get("codes", ())),
        )
        tools[name] = ToolBinding(
            name=name, tool=spec.get("tool", name), args=dict(spec.get("args", {})),
            drop=frozenset(spec.get("drop", ())),
            output=jmespath.compile(spec["output"]) if "output" in spec else None, output_text=spec.get("output", ""),
            failure=rule, line=line_of(node, ["tools", name], True) if node is not None else 0)
    return Binding(tools=tools, profile=document.get("profile"), source=source)


# -- the shorthands -----------------------------------------------------------------------------


def from_tool_map(entries: Iterable[str] = (), file: str | Path | None = None) -> Binding:
    """Returns the binding of ``--tool-map`` entries and a ``--tool-map-file``; raises BindingError.

    An entry is ``<tool>=<target tool>`` or ``<tool>.<argument>=<target argument>``; the file holds
    the same as a YAML mapping, flat (``write_text_file: write_file``, ``write_text_file.content:
    text``) or per tool (``write_text_file: {name: write_file, args: {content: text}}``). Command-line
    entries win over the file's.
    """
    renames: dict[str, str] = {}
    args: dict[str, dict[str, str]] = {}
    lines: dict[str, int] = {}
    source = "--tool-map"
    if file:
        source = str(file)
        _tool_map_file(Path(file), renames, args, lines)
    for entry in entries or ():
        key, eq, value = str(entry).partition("=")
        if not eq:
            raise BindingError([Problem(Path("--tool-map"), 0, str(entry),
                                        "expected <tool>=<target tool> or <tool>.<argument>=<name>")])
        _add(key, value, renames, args, Path("--tool-map"), 0)
    tools = {}
    for name in sorted(set(renames) | set(args)):
        tools[name] = ToolBinding(name=name, tool=renames.get(name, name),
                                  args={target: profile for profile, target in args.get(name, {}).items()},
                                  line=lines.get(name, 0))
    return Binding(tools=tools, source=source)


def _add(key: str, value: Any, renames: dict[str, str], args: dict[str, dict[str, str]], path: Path, line: int) -> None:
    key, value = str(key).strip(), str(value).strip() if isinstance(value, str) else value
    if not key or not isinstance(value, str) or not value:
        shown = value if isinstance(value, str) else f"<{kind_of(value)}>"  # a file's values are not printed
        raise BindingError([Problem(path, line, key, f"tool map entry {key}={shown}: both sides must be names")])
    tool, dot, arg = key.partition(".")
    if dot:
        if not tool or not arg:
            raise BindingError([Problem(path, line, key, f"tool map entry {key}={value}: expected <tool>.<argument>=<name>")])
        args.setdefault(tool, {})[arg] = value
    else:
        renames[tool] = value


def _tool_map_file(path: Path, renames: dict[str, str], args: dict[str, dict[str, str]], lines: dict[str, int]) -> None:
    try:  # a regular file within the cap (a link to /dev/zero would never end); the user named it
        text = read_yaml_text(path, follow_link=True)
    except FileProblems as exc:
        raise BindingError(exc.problems) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BindingError([Problem(path, 1, "", f"cannot read the tool map: {getattr(exc, 'strerror', None) or exc}")]) from None
    if not text.strip():
        return
    document, node = _parse(text, path)
    if not isinstance(document, dict):
        raise BindingError([Problem(path, 1, "", "expected a mapping of tool names")])
    for key, value in document.items():
        line = line_of(node, [key], True)
        lines[str(key).partition(".")[0]] = line
        if isinstance(value, dict):
            unknown = set(value) - {"name", "args"}
            if unknown:
                raise BindingError([Problem(path, line, str(key), f"unknown keys {sorted(unknown)} (name, args)")])
            if "name" in value:
                _add(str(key), value["name"], renames, args, path, line)
            for arg, name in (value.get("args") or {}).items():
                _add(f"{key}.{arg}", name, renames, args, path, line)
        else:
            _add(str(key), value, renames, args, path, line)


def from_options(binding: str | Path | None = None, tool_map: Any = (), tool_map_file: str | Path | None = None) -> Binding:
    """Returns the run's binding: a ``--binding`` file, with ``--tool-map(-file)`` renames on top."""
    entries = [tool_map] if isinstance(tool_map, str) else list(tool_map or ())
    base = load(binding) if binding else Binding()
    if not entries and not tool_map_file:
        return base
    extra = from_tool_map(entries, tool_map_file)
    for name, bound in extra.tools.items():
        old = base.tools.get(name)
        if old is None:
            base.tools[name] = bound
            continue
        base.tools[name] = ToolBinding(
            name=name, tool=bound.tool if bound.tool != name else old.tool, args={**old.args, **bound.args},
            drop=old.drop, output=old.output, output_text=old.output_text, failure=old.failure, line=old.line)
    base.source = base.source or extra.source
    return base
