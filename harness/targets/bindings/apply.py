"""A binding applied: the profile's call turned into the target's arguments, and its result read back.

:class:`Binding` (one :class:`ToolBinding` per profile tool) builds the target's arguments from the
profile's (renames, defaults, constants, templates, nesting), checks them against the target
tool's input schema and the path rules, and reads the result through ``output`` and ``failure``
(harness/targets/bindings/signals.py). Loading and validating a binding file is
harness/targets/bindings/load.py.
"""

from __future__ import annotations

import copy
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.scenario import static_checks
from harness.scenario.located_errors import FileProblems
from harness.targets.bindings.signals import CHANNEL_SIGNALS, FailureRule, _code_of, _parsed, _search, _signal
from harness.util import schemas
from harness.util.pathrules import PATH_KEYS

_VALUE_KEYS = ("arg", "const", "template")


class BindingError(FileProblems, ValueError):
    """A binding (file or shorthand) is invalid; ``problems`` lists every problem, file:line:field."""


class ArgumentMismatch(Exception):
    """The mapped arguments break the target tool's input schema (see :meth:`Binding.check`)."""


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
        items: list[Any] = []
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
