"""Bindings: a profile's tools mapped onto a target's tools (``--binding FILE``; docs/bindings.md).

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

import copy
import functools
import json
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import jmespath
import jmespath.functions
import jmespath.visitor

from harness.scenario import static_checks
from harness.util import limits
from harness.util import schemas
from harness.scenario.located_errors import (FileProblems, Problem, SchemaChecker, kind_of, line_of, located, packaged_schema, parse_documents,
                              read_yaml_text)
from harness.util.safepath import PATH_KEYS, argument_path_problem

import re2 as _regex  # linear-time matching (google-re2): a binding's pattern cannot backtrack without end

REGEX_ENGINE = "re2"

#: Failure signals are matched on at most this many characters of a result's text.
TEXT_CAP = 64 * 1024
#: What one JMESPath evaluation may build: values (as the harness walks the result: one reached
#: twice counts twice) and characters made by ``to_string`` or ``join``. Each ``[@, @]`` stage of an
#: expression doubles what it holds, so a 192-character expression asked for about 130 GB.
MAX_RESULT_VALUES = 200_000
MAX_RESULT_TEXT = 16 * TEXT_CAP
#: The failure channels of a protocol, each a signal a binding may list.
CHANNEL_SIGNALS = ("isError", "jsonrpc-error")
DEFAULT_SIGNALS: tuple[Any, ...] = CHANNEL_SIGNALS
_VALUE_KEYS = ("arg", "const", "template")


class BindingError(FileProblems, ValueError):
    """A binding (file or shorthand) is invalid; ``problems`` lists every problem, file:line:field."""


class ArgumentMismatch(Exception):
    """The mapped arguments break the target tool's input schema (see :meth:`Binding.check`)."""


@dataclass(frozen=True)
class FailureRule:
    """How a target tool signals failure, and what its failures mean."""

    signals: tuple[Any, ...] = DEFAULT_SIGNALS
    message: Any = None  # compiled JMESPath, or None
    codes: tuple[tuple[Any, Any], ...] = ()  # (compiled pattern, code)

    def channel_fails(self, channel: str) -> bool:
        """Returns True when a result on ``channel`` (isError, jsonrpc-error) means failure."""
        return channel in self.signals


@dataclass(frozen=True)
class ToolBinding:
    """One profile tool's mapping."""

    name: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    drop: frozenset[str] = frozenset()
    output: Any = None  # compiled JMESPath, or None
    output_text: str = ""
    failure: FailureRule = FailureRule()
    line: int = 0

    @property
    def changes_result(self) -> bool:
        """Returns True when results are read differently from the default."""
        return self.output is not None or self.failure != FailureRule()


@dataclass
class Binding:
    """A profile's tools mapped onto a target's; tools not mentioned pass through unchanged."""

    tools: dict[str, ToolBinding] = field(default_factory=dict)
    profile: str | None = None
    source: str = ""  # the file, or "--tool-map"

    # -- names -----------------------------------------------------------------------------------

    def tool(self, name: str) -> str:
        """Returns the target's name for the profile's tool ``name``."""
        bound = self.tools.get(name)
        return bound.tool if bound else name

    def describe(self, name: str) -> str:
        """Returns ``name`` and, when renamed, ``(as <target name>)``."""
        mapped = self.tool(name)
        return name if mapped == name else f"{name} (as {mapped})"

    def where(self, name: str) -> str:
        """Returns where ``name``'s mapping is written (``file:line``), or the binding's source."""
        bound = self.tools.get(name)
        if bound and bound.line and self.source:
            return f"{self.source}:{bound.line}"
        return self.source or "no binding"

    def skip_reason(self, profile: str | None) -> str | None:
        """Returns why a scenario of ``profile`` cannot run through this binding, or None."""
        if self.profile and profile and profile != self.profile:
            return f"the binding {self.source} maps profile {self.profile}, not {profile}"
        return None

    # -- calls ------------------------------------------------------------------------------------

    def arguments(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Returns the target's arguments for the profile's call of ``name`` with ``args``."""
        bound = self.tools.get(name)
        if bound is None:
            return dict(args)
        used: set[str] = set()
        out: dict[str, Any] = {}
        for key, spec in bound.args.items():
            value = _build(spec, args, used)
            if value is not _OMIT:
                out[key] = value
        for key, value in args.items():
            if key not in used and key not in bound.drop and key not in out:
                out[key] = value
        return out

    def result(self, name: str, output: Any, error: dict[str, Any] | None, channel: str,
               text: str | None) -> tuple[Any, dict[str, Any] | None, dict[str, Any]]:
        """Reads one result the binding's way.

        ``output``/``error`` are the target's normal form, ``channel`` how it answered (``isError``,
        ``jsonrpc-error``, ``result``; a cmd: adapter's ``error`` member is always a failure) and
        ``text`` its text, if any. Returns ``(output, error, extra)``: ``extra`` records what the
        binding changed (the signal that made a success a failure, the output before projection).
        """
        bound = self.tools.get(name)
        if bound is None:
            return output, error, {}
        rule = bound.failure
        extra: dict[str, Any] = {}
        if error is not None and channel in CHANNEL_SIGNALS and not rule.channel_fails(channel):
            # The binding says this channel is no failure for this tool: its text is the output.
            output, error = (_parsed(text) if text is not None else error), None
            extra["signal"] = f"{channel} (not a failure here)"
        if error is None:
            signal = _signal(rule, output, text)
            if signal is not None:
                message = _search(rule.message, output) if rule.message is not None else None
                if message is None:
                    message = text if text is not None else (output if isinstance(output, str) else
                                                             json.dumps(output, ensure_ascii=False))
                error = {"code": None, "message": message if isinstance(message, str) else
                         json.dumps(message, ensure_ascii=False)}
                extra["signal"] = signal
                extra["output"] = output
                output = None
        if error is not None:
            if error.get("code") is None and rule.codes:
                code = _code_of(rule.codes, str(error.get("message", "")))
                if code is not None:
                    error = {**error, "code": code}
            return None, error, extra
        if bound.output is not None:
            extra["output"] = output
            output = _search(bound.output, output)
        return output, None, extra

    def check(self, name: str, original: Mapping[str, Any], schema: Any, *, deliberate: bool = False) -> None:
        """Raises ArgumentMismatch when the mapped call of ``name`` breaks ``schema`` (the tool's inputSchema) because of the mapping.

        A scenario may make a bad call on purpose (an argument left out, a value of the wrong
        type): that is its question to the tool, and the call is sent as it is. So each rule the
        mapped arguments break is traced to where its value came from: a profile argument passed
        on unchanged, or left out by the call, is the scenario's; a constant, a template, a
        transformed value, a required argument nothing produces, or a profile argument passed on
        that the tool does not take, is the binding's -- unless the step says its arguments break the
        schema on purpose (``deliberate``, the step's ``invalid_args: true``): then an argument the
        scenario sent and the binding passed on is the scenario's question, and the call is sent.
        """
        if not isinstance(schema, dict) or not schema:
            return
        mapped, origins = self.trace(name, original)
        for error in _schema_errors(schema, mapped):
            if _blames_binding(error, origins, original, name in self.tools, deliberate):
                where = "/".join(str(p) for p in error.instance_path) or "the arguments"
                rule = "/".join(str(p) for p in error.schema_path) or "top level"
                raise ArgumentMismatch(
                    f"the binding {self.where(name)} maps {self.describe(name)} to arguments the tool's inputSchema "
                    f"rejects: at {where}: {error.message} (schema rule {rule})")

    def check_paths(self, name: str, args: Mapping[str, Any], root: str) -> None:
        """Raises ArgumentMismatch when the mapped call of ``name`` hands the tool a path beyond the
        harness's folder around the workspace at ``root``; the targets call it just before sending.

        The scenario's paths are held to that rule before the binding maps them (the lint, the
        runner), and the binding's own constants and templates when it is loaded; this check holds
        what the two make together at run time. A value the scenario gave as a path and the binding
        passes on unchanged is checked as it stands; any other value under a key naming a path (a
        template filled in, a profile argument that is no path moved under one) is held to the rule
        for scenarios that lay out links (no ``..`` after a name), since the binding cannot know
        whether the scenario does.
        """
        if name not in self.tools:
            return  # the arguments go as the scenario wrote them, already checked
        mapped, origins = self.trace(name, args)
        for where, value in static_checks.path_values(mapped):
            why = static_checks.built_path_problem(value, root, links=not _given_as_path(where, origins))
            if why:
                raise ArgumentMismatch(
                    f"the binding {self.where(name)} maps {self.describe(name)} to a path beyond the harness's folder "
                    f"around the workspace: args.{'.'.join(str(part) for part in where)}: {why}; not sent")

    def trace(self, name: str, args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[tuple, tuple]]:
        """Returns the mapped arguments and, per target path, where its value came from."""
        origins: dict[tuple, tuple] = {}
        bound = self.tools.get(name)
        if bound is None:
            for key in args:
                origins[(key,)] = ("pass", key)
            return dict(args), origins
        used: set[str] = set()
        out: dict[str, Any] = {}
        for key, spec in bound.args.items():
            value = _build(spec, args, used, origins, (key,))
            if value is not _OMIT:
                out[key] = value
        for key, value in args.items():
            if key not in used and key not in bound.drop and key not in out:
                out[key] = value
                origins[(key,)] = ("pass", key)
        origins[()] = ("consumed", frozenset(used))
        return out, origins


def _names_path(key: Any) -> bool:
    return isinstance(key, str) and any(part in key.lower() for part in PATH_KEYS)


def _given_as_path(where: list[Any], origins: dict[tuple, tuple]) -> bool:
    """Returns True when the mapped value at ``where`` is a profile argument passed on unchanged that
    the scenario gave as a path (its name, or a key inside it, names one): checked before mapping."""
    for depth in range(len(where), 0, -1):
        origin = origins.get(tuple(where[:depth]))
        if origin is None:
            continue
        if origin[0] in ("arg", "pass"):
            return any(_names_path(part) for part in [origin[1], *where[depth:]])
        return False
    return False


def _schema_errors(schema: dict[str, Any], instance: Any) -> list[Any]:
    try:
        return schemas.errors(schemas.validator(schema), instance)
    except schemas.SchemaInvalid:
        return []  # a server's broken schema is not the binding's fault


def _blames_binding(error: Any, origins: dict[tuple, tuple], original: Mapping[str, Any], bound: bool,
                    deliberate: bool = False) -> bool:
    """Returns True when schema ``error`` on the mapped arguments comes from the binding, not the scenario.

    A required argument nothing produces is the binding's to produce when it builds the tool's
    arguments (``args``), and the scenario's to pass when the arguments pass through as they are.
    """
    path = tuple(error.instance_path)
    builds = bound and any(kind not in ("pass", "consumed") for kind, *_ in origins.values())
    consumed = origins.get((), ("consumed", frozenset()))[1]
    rule = schemas.keyword(error)
    if rule == "required":
        missing = [schemas.missing(error)] if isinstance(error.instance, dict) else []
        for key in missing:
            origin = origins.get(path + (key,))
            if origin is not None and origin[0] == "absent":
                continue  # the scenario left the profile's argument out
            if origin is None and not path and not builds and key not in original and key not in consumed:
                continue  # arguments pass through as they are: the scenario's own argument, left out
            return True
        return False
    if rule in ("additionalProperties", "unevaluatedProperties"):
        for key in schemas.unexpected(error):
            origin = origins.get(path + (key,))
            if origin is None or origin[0] != "pass" or (bound and not deliberate):
                return True
        return False
    for depth in range(len(path), -1, -1):
        origin = origins.get(path[:depth])
        if origin is not None and origin[0] != "consumed":
            return origin[0] in ("binding", "transformed", "object")
    return False


class _Omit:
    def __repr__(self) -> str:
        return "<omitted>"


_OMIT = _Omit()


def _build(spec: Any, args: Mapping[str, Any], used: set[str],
           origins: dict[tuple, tuple] | None = None, path: tuple = ()) -> Any:
    """Returns the value ``spec`` makes of the profile's ``args`` (``_OMIT`` when it makes none).

    ``origins``, when given, records per target path where its value came from: ``arg`` (a profile
    argument unchanged), ``transformed``, ``binding`` (a constant or a template), ``absent`` (the
    profile's call left the argument out).
    """
    note = origins.__setitem__ if origins is not None else (lambda *_: None)
    if isinstance(spec, str):
        used.add(spec)
        note(path, ("arg", spec) if spec in args else ("absent", spec))
        return copy.deepcopy(args[spec]) if spec in args else _OMIT
    if isinstance(spec, list):
        note(path, ("object",))
        items = []
        for item in spec:
            value = _build(item, args, used, origins, path + (len(items),))
            if value is not _OMIT:
                items.append(value)
        return items
    if not isinstance(spec, dict):
        note(path, ("binding",))
        return copy.deepcopy(spec)
    if "const" in spec:
        note(path, ("binding",))
        return copy.deepcopy(spec["const"])
    if "template" in spec:
        value = _fill(spec["template"], args, used)
        note(path, ("binding",) if value is not _OMIT else ("absent", spec["template"]))
        return value
    if "arg" in spec:
        name = spec["arg"]
        used.add(name)
        if name in args:
            value, kind = copy.deepcopy(args[name]), "arg"
        elif "default" in spec:
            value, kind = copy.deepcopy(spec["default"]), "binding"
        else:
            note(path, ("absent", name))
            return _OMIT
        if "add" in spec and isinstance(value, int) and not isinstance(value, bool):
            value, kind = value + spec["add"], "transformed"
        if "count" in spec and isinstance(value, bool):
            value, kind = spec["count"]["true" if value else "false"], "transformed"
        note(path, (kind, name))
        return value
    note(path, ("object",))
    out = {}
    for key, item in spec.items():
        value = _build(item, args, used, origins, path + (key,))
        if value is not _OMIT:
            out[key] = value
    return out


def _fill(template: str, args: Mapping[str, Any], used: set[str]) -> Any:
    """Returns the template with its ``{name}`` fields filled (``_OMIT`` when a field's argument is absent)."""
    pieces = list(string.Formatter().parse(template))
    names = [name for _literal, name, _spec, _conversion in pieces if name is not None]
    used.update(names)
    if any(name not in args for name in names):
        return _OMIT
    parts = []
    for literal, name, _spec, _conversion in pieces:
        parts.append(literal)
        if name is not None:
            value = args[name]
            parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return "".join(parts)


def _template_fields(template: str) -> list[str]:
    """Returns the template's field names; raises ValueError for anything but plain ``{name}`` fields."""
    names = []
    for _literal, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name or spec or conversion or not all(c.isalnum() or c in "_-" for c in name):
            raise ValueError(f"only {{name}} fields are allowed, not {{{name}{'!' + conversion if conversion else ''}"
                             f"{':' + spec if spec else ''}}}")
        names.append(name)
    return names


def _signal(rule: FailureRule, output: Any, text: str | None) -> str | None:
    """Returns the signal that makes a successful-looking result a failure, or None."""
    for signal in rule.signals:
        if not isinstance(signal, dict):
            continue
        if "field" in signal:
            value = _search(signal["_field"], output)
            hit = value == signal["equals"] if "equals" in signal else bool(value)
            if hit:
                return f"field {signal['field']}"
        elif "text" in signal:
            subject = text if text is not None else (output if isinstance(output, str) else None)
            if subject is not None and signal["_text"].search(subject[:TEXT_CAP]):
                return f"text {signal['text']!r}"
    return None


def _code_of(codes: Iterable[tuple[Any, Any]], message: str) -> Any:
    for pattern, code in codes:
        if pattern.search(message[:TEXT_CAP]):
            return code
    return None


class ResultTooLarge(ValueError):
    """A binding's JMESPath expression built more than the harness takes from one result."""


def _search(expression: Any, data: Any) -> Any:
    try:
        found = _BoundedInterpreter().visit(expression.parsed, data)
    except (jmespath.exceptions.JMESPathError, RecursionError):
        return None  # a projection that does not apply to this result (or nests past the stack): nothing there
    _count_values(found, expression.expression)
    return found


def _count_values(value: Any, expression: str) -> None:
    """Raises ResultTooLarge when walking ``value`` (shared parts once per path) meets too many values."""
    left, stack = MAX_RESULT_VALUES, [value]
    while stack:
        item = stack.pop()
        left -= 1
        if left < 0:
            raise ResultTooLarge(f"the binding's JMESPath {expression[:80]!r} built more than "
                                 f"{MAX_RESULT_VALUES} values from one result")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class _BoundedFunctions(jmespath.functions.Functions):
    """JMESPath's functions, with the two that make text bounded in what they make."""

    @jmespath.functions.signature({"types": []})
    def _func_to_string(self, arg: Any) -> str:
        if isinstance(arg, str):
            return arg
        _count_values(arg, "to_string(...)")
        text = json.dumps(arg, separators=(",", ":"))
        return _bounded_text(text, "to_string")

    @jmespath.functions.signature({"types": ["string"]}, {"types": ["array-string"]})
    def _func_join(self, separator: str, array: list[str]) -> str:
        if len(separator) * len(array) + sum(len(item) for item in array) > MAX_RESULT_TEXT:
            raise ResultTooLarge(f"a binding's JMESPath join(...) would make more than {MAX_RESULT_TEXT} characters")
        return separator.join(array)


def _bounded_text(text: str, name: str) -> str:
    if len(text) > MAX_RESULT_TEXT:
        raise ResultTooLarge(f"a binding's JMESPath {name}(...) made more than {MAX_RESULT_TEXT} characters")
    return text


_OPTIONS = jmespath.Options(custom_functions=_BoundedFunctions())


class _BoundedInterpreter(jmespath.visitor.TreeInterpreter):
    """JMESPath's evaluation, counting the elements the list-making steps build (flatten, projections,
    multi-selects): an expression doubling a list per stage is stopped at about twice the bound."""

    def __init__(self) -> None:
        super().__init__(_OPTIONS)
        self._left = MAX_RESULT_VALUES

    def _spend(self, built: Any) -> Any:
        if isinstance(built, (list, dict)):
            self._left -= len(built)
            if self._left < 0:
                raise ResultTooLarge(f"a binding's JMESPath expression built more than {MAX_RESULT_VALUES} values "
                                     "from one result")
        return built

    def visit_flatten(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_flatten(node, value))

    def visit_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_projection(node, value))

    def visit_value_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_value_projection(node, value))

    def visit_filter_projection(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_filter_projection(node, value))

    def visit_multi_select_list(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_multi_select_list(node, value))

    def visit_multi_select_dict(self, node: Any, value: Any) -> Any:
        return self._spend(super().visit_multi_select_dict(node, value))


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- loading ------------------------------------------------------------------------------------


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
        for where, problem in _path_problems(spec.get("args", {}), at + ["args"]):
            out.append((where, problem, False))
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
    beyond the folder around the workspace (``safepath.argument_path_problem``).

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


def _pattern_problem(pattern: str) -> str | None:
    try:
        _regex.compile(pattern)
    except Exception as exc:  # re.error, re2.error: the engine's own message
        return f"invalid regular expression {pattern!r}: {exc}"
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
