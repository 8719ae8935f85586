"""Located problems in YAML files checked against a JSON Schema: the shared machinery of the scenario
and profile loaders.

Every problem names the file, the line and the field. Parsing uses libyaml when available, once per
file: the node tree (which gives lines) is built into values. Our YAML loader is a private subclass: nothing
here changes PyYAML for anyone else.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

# PyYAML and the validators are imported where a file is parsed or checked, never here: a warm start
# takes its catalog from the cache and parses nothing (tests/test_start_imports.py).


@functools.cache
def yaml_loader() -> type:
    """Returns our YAML loader class: PyYAML's safe loader (libyaml's when available) that refuses
    duplicate keys (a repeated key must not silently drop a check). A private subclass: nothing here
    changes PyYAML for anyone else."""
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        """SafeLoader that refuses duplicate keys."""

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    return Loader


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    """Builds a mapping, refusing a repeated key. Its texts (keys and values) are interned: one object
    per text however many files repeat it (``steps``, ``tool``, a profile's name), which the catalog's
    cache then stores, and loads, once (a fifth of a warm start's loading)."""
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if type(key) is str:
            key = sys.intern(key)
        if key in mapping:
            import yaml
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        value = loader.construct_object(value_node, deep=deep)
        mapping[key] = sys.intern(value) if type(value) is str else value
    return mapping


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file, located."""

    file: Path
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f" [{self.field}]" if self.field else ""
        return f"{self.file}:{self.line}:{where} {self.message}"


class FileProblems(Exception):
    """A file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = problems


#: (field path, message, whether the line is the key's rather than the value's)
ErrorList = list[tuple[list[Any], str, bool]]


def packaged_schema(name: str) -> dict[str, Any]:
    """Returns a JSON Schema shipped in the package's ``schema/`` folder."""
    from harness.util import schemas
    return schemas.packaged(name)


class SchemaChecker:
    """Checks documents against one packaged JSON Schema (harness.util.schemas: one validator decides and
    explains), turning each error into (field path, message, whether the line is the key's)."""

    def __init__(self, schema: dict[str, Any], *, matchers: Iterable[str] = (), quote: bool = True) -> None:
        self.schema = schema
        self.matchers = sorted(matchers)  # the names an unknown ``$`` key is suggested from
        # Without ``quote`` a message names the kind of a wrong value (always for a wrong type, and
        # for a mapping, a list or a long string), never the value itself: a file that is not what it
        # claims (a credentials file where a binding was expected) is not printed. A short word
        # (``isErr`` is not one of ...) is still shown: it is what the author mistyped.
        self.quote = quote
        # The regex format as the matchers read it: Python's re, not ECMA's.
        from harness.util import schemas
        self._validator = schemas.validator(schema, formats={"regex": _is_regex})

    def is_valid(self, document: Any) -> bool:
        """Returns whether ``document`` follows the schema."""
        return self._validator.is_valid(document)

    def problems(self, document: Any) -> ErrorList:
        """Returns every schema violation of ``document`` as (field path, message, at_key), sorted."""
        from harness.util import schemas
        out: ErrorList = []
        for error in schemas.errors(self._validator, document):
            field_path = list(error.instance_path)
            message = error.message
            at_key = False
            rule = schemas.keyword(error)
            if rule == "additionalProperties" and schemas.unexpected(error):
                name = schemas.unexpected(error)[0]
                field_path = field_path + [name]
                at_key = True
                message = unknown_key(name, schemas.properties_of(self.schema, error), self.matchers)
            elif rule == "required":
                message = message.replace("is a required property", "is required")
            elif not self.quote and (rule == "type" or not _short_scalar(error.instance)):
                message = unquoted(message, error.instance, rule)
            out.append((field_path, message, at_key))
        out.sort(key=lambda item: [str(part) for part in item[0]])
        return out


def kind_of(value: Any) -> str:
    """Returns what kind of YAML value ``value`` is (``a string``, ``a mapping``, ...), naming no content."""
    if isinstance(value, bool):
        return "a boolean"
    for kind, name in ((str, "a string"), (dict, "a mapping"), (list, "a list"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else f"a {type(value).__name__}"


def unquoted(message: str, instance: Any, rule: str) -> str:
    """Returns a schema message with the value it is about named by its kind (``a string is not of
    type "object"``); when some text of the value would still show, the rule alone."""
    kind = kind_of(instance)
    try:  # as the validator shows a value: compact JSON, keys sorted, other scripts as they are
        shown = json.dumps(instance, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = None
    if shown:
        message = message.replace(shown, kind)
    stack, texts = [instance], []
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            texts.extend(str(key) for key in value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    if any(len(text) >= 4 and text in message for text in texts):
        return f"{kind} breaks the schema's {rule} rule"
    return message


def _short_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list)) and not (isinstance(value, str) and len(value) > 40)


def _is_regex(text: str) -> bool:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def read_yaml_text(path: Path, *, follow_link: bool = False) -> str:
    """Returns the text of a YAML file the harness was given (scenario, profile or binding).

    Only a regular file is read (a FIFO or a device would hang or never end), never through a link
    unless ``follow_link`` (a file the user named: a binding, a tool map, a baseline), and then only
    to a regular file inside the folder that holds the link (a checkout's ``bindings/x.yaml`` made a
    link to a credentials file must not get it read and quoted); no more than the file cap: raises
    FileProblems over it, OSError or UnicodeDecodeError when it cannot be read.
    """
    import errno
    import os

    from harness.util import limits
    from harness.util.fileio import read_regular
    if follow_link and os.path.islink(path):
        path = Path(_link_inside(path))
    try:
        data = read_regular(path, limits.MAX_SCENARIO_FILE)
    except OSError as exc:
        if exc.filename is not None or exc.errno not in (errno.ELOOP, errno.EINVAL, errno.EFBIG):
            raise  # from the system (no such file, permission): as it came
        if exc.errno != errno.EFBIG:
            raise OSError(exc.strerror) from None  # read_regular's own words name the file and why
        raise FileProblems([Problem(path, 1, "", f"the file has more than {limits.MAX_SCENARIO_FILE} bytes, "
                                                 "the cap (HARNESS_MAX_SCENARIO_FILE)")]) from None
    return data.decode("utf-8")


def _link_inside(path: Path) -> str:
    """Returns where the link at ``path`` leads when that is a regular file inside the folder that
    holds the link; raises OSError naming the link otherwise (its target is never opened)."""
    import os
    import stat
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    real = os.path.realpath(path)
    try:  # its kind first (stat opens nothing): a link to /dev/zero is named for what it is
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise OSError(f"not a regular file: {path}")
    except FileNotFoundError:
        raise OSError(f"a symbolic link to nothing: {path}") from None
    if not real.startswith(folder.rstrip(os.sep) + os.sep):
        raise OSError(f"a symbolic link to a file outside its folder {folder}, not followed: {path}")
    return real


def parse_documents(text: str, path: Path, what: str) -> tuple[list[Any], list[yaml.Node]]:
    """Returns the non-empty YAML documents of ``text`` and their node trees (for lines).

    Raises FileProblems for invalid YAML, nesting deeper than the cap (checked before libyaml's
    recursive composer could exhaust the C stack), aliases that expand past a million values, or
    when there is no document (``what`` names the kind).
    """
    import yaml

    from harness.scenario import static_checks
    too_deep = static_checks.depth_problem(text)
    if too_deep:
        raise FileProblems([Problem(path, too_deep[0], "", too_deep[1])])
    try:
        documents, nodes = _parse(text)
    except yaml.YAMLError as exc:
        raise FileProblems([yaml_problem(path, text, exc)]) from None
    if not documents:
        raise FileProblems([Problem(path, 1, "document", f"no {what} in file")])
    if "*" in text and "&" in text and any(static_checks.expands_too_far(doc) for doc in documents):
        raise FileProblems([Problem(path, 1, "", "aliases expand to more than a million values (a YAML bomb)")])
    return documents, nodes


def _parse(text: str) -> tuple[list[Any], list[yaml.Node]]:
    """Returns every non-empty document of ``text`` with its node tree, from one parse: the node
    tree (which gives lines) is built into values."""
    loader = yaml_loader()(text)
    documents, nodes = [], []
    try:
        while loader.check_node():
            node = loader.get_node()
            document = loader.construct_document(node)
            if document is not None:
                documents.append(document)
                nodes.append(node)
    finally:
        loader.dispose()
    return documents, nodes


_KEY_AT_LINE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_$][\w$.-]*)\s*:")


def unknown_key(name: str, allowed: list[str], matchers: list[str] | None = None) -> str:
    """Returns the message for an unknown key: the nearest allowed name, then every allowed one.

    With ``matchers``, a ``$`` key is a mistyped matcher wherever it stands: every matcher is listed.
    """
    import difflib
    if matchers and name.startswith("$"):
        near = difflib.get_close_matches(name, matchers, n=1, cutoff=0.6)
        return (f"unknown matcher {name!r}" + (f"; did you mean {near[0]!r}?" if near else "")
                + f" (matchers: {', '.join(matchers)})")
    near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    return (f"unknown key {name!r}" + (f"; did you mean {near[0]!r}?" if near else "")
            + (f" (allowed: {', '.join(allowed)})" if allowed else ""))


def yaml_problem(path: Path, text: str, exc: yaml.YAMLError) -> Problem:
    """Returns a YAML syntax error as a problem at the line where the mistake is, with that line's key.

    A quote left open makes YAML read on to the next quote, lines later, and complain there; so
    the first line before that point with an unbalanced quote is named instead (``unterminated string``).
    """
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark else 1
    problem = getattr(exc, "problem", None) or str(exc)
    lines = text.splitlines()
    opened = _unbalanced_quote(lines[:line])
    if opened is not None and opened + 1 < line:
        return Problem(path, opened + 1, _key_at(lines[opened]) or "document",
                       f"invalid YAML: unterminated string (the quote opened on this line is not closed; "
                       f"YAML read on to line {line}: {problem})")
    return Problem(path, line, _key_at(lines[line - 1] if 0 < line <= len(lines) else "") or "document",
                   f"invalid YAML: {problem}")


def _unbalanced_quote(lines: list[str]) -> int | None:
    """Returns the index of the first line whose quotes do not pair up (outside comments), or None."""
    for index, line in enumerate(lines):
        quote: str | None = None
        position = 0
        while position < len(line):
            char = line[position]
            if quote is None:
                if char == "#" and (position == 0 or line[position - 1] in " \t"):
                    break
                if char in "\"'" and (position == 0 or line[position - 1] in " \t:[{,-"):
                    quote = char
            elif char == "\\" and quote == '"':
                position += 1
            elif char == quote:
                if quote == "'" and line[position + 1:position + 2] == "'":
                    position += 1  # '' is an escaped quote inside single quotes
                else:
                    quote = None
            position += 1
        if quote is not None:
            return index
    return None


def _key_at(line: str) -> str:
    found = _KEY_AT_LINE.match(line)
    return found.group(1) if found else ""


def located(path: Path, node: yaml.Node, errors: ErrorList) -> list[Problem]:
    """Returns ``errors`` (field paths inside ``node``'s document) as located problems."""
    return [Problem(path, line_of(node, field_path, at_key), dotted(field_path), message)
            for field_path, message, at_key in errors]


def line_of(node: yaml.Node, field_path: list[Any], at_key: bool) -> int:
    """Returns the 1-based line of the node at ``field_path`` (of its key when ``at_key``)."""
    import yaml
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


def dotted(field_path: list[Any]) -> str:
    """Returns a field path as shown in problems: ``steps[2].args.path``."""
    out = ""
    for part in field_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
