"""What a scenario file may ask of the harness: paths inside the workspace, bounded size, depth and regexes.

Scenario files are untrusted (anyone may contribute one by pull request), so the loader refuses,
with file, line and field, before anything runs:

- a path the harness acts on (``given`` files, dirs, link locations and ``read_only``, action
  paths, ``then.files`` and ``then.absent`` keys) that is absolute or climbs out with ``..``;
- a link target (``given.symlinks`` values, ``symlink`` actions) that leads further than the
  harness's own folder around the workspace;
- a path handed to a tool (a string argument whose name says path, file, dir, target, source or
  destination) that is absolute outside the workspace or climbs more than one level above it;
- more generated content in one scenario than ``limits.MAX_SCENARIO_CONTENT`` bytes (given
  files, action contents, ``$content`` and ``$code_points`` arguments, expected contents, ``$sha256`` specs);
- YAML nested deeper than ``limits.MAX_YAML_DEPTH`` (checked on the text, before a parser that
  recurses can exhaust its stack);
- a ``$regex`` that does not compile.

At run time, ``$regex`` runs with a time bound (harness/scenario/matchers.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from harness.scenario.content_spec import code_points_size, code_points_text, of_given_file, size_of
from harness.util import limits
from harness.util.pathrules import PATH_KEYS, argument_path_problem, file_uri_path, lexical_problem, link_target_problem

_INDENT = re.compile(r"^[ \t]*", re.M)

ErrorList = list[tuple[list[Any], str, bool]]


def depth_problem(text: str) -> tuple[int, str] | None:
    """Returns (line, message) when the YAML text nests deeper than the cap, else None.

    A cheap bound first (indentation, flow brackets, the longest line's room for ``- `` and
    ``k: `` markers): ordinary files never reach the exact check, which walks parser events
    (libyaml's parser keeps its own stack, unlike the composer) and stops at the cap.
    """
    cap = limits.MAX_YAML_DEPTH
    if not text:
        return None
    indent = max(map(len, _INDENT.findall(text)))
    longest = max(map(len, text.splitlines()), default=0)
    if 2 * (indent + 1) + longest // 2 + text.count("[") + text.count("{") <= cap:
        return None
    import yaml  # here: a file that passes the cheap bound (every ordinary one) needs no parser
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > cap:
                    line = event.start_mark.line + 1 if event.start_mark else 1
                    return line, f"nested deeper than {cap} levels (harness/util/limits.py MAX_YAML_DEPTH)"
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None  # the loader reports the syntax error itself, with its line
    return None


def expands_too_far(document: Any, cap: int = 1_000_000) -> bool:
    """Returns True when a document, its aliases expanded, has more than ``cap`` values (a YAML bomb)."""
    count = 0
    stack = [document]
    while stack:
        value = stack.pop()
        count += 1
        if count > cap:
            return True
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def problems(document: dict[str, Any]) -> ErrorList:
    """Returns the containment and size problems of one (schema-valid) scenario document."""
    out: ErrorList = []
    for field_path, rel in _paths(document):
        why = lexical_problem(rel)
        if why:
            out.append((field_path, f"outside the workspace: {why}", False))
    for field_path, link, target in _link_targets(document):
        why = link_target_problem(link, target)
        if why:
            out.append((field_path, f"link target outside the harness's folder around the workspace: {why}", False))
    # With links laid out, '..' after a name is applied where the link leads, not where it reads.
    links = lays_out_links(document)
    for field_path, value in _argument_paths(document):
        why = argument_path_problem(value, links=links)
        if why:
            out.append((field_path, f"path argument outside the harness's folder around the workspace: {why}", False))
    for field_path, mode in _modes(document):
        if isinstance(mode, str) and mode.isdigit() and int(mode, 8) & 0o6000:
            out.append((field_path, f"mode {mode} sets the set-user-ID or set-group-ID bit: a scenario may not make "
                                    "such a file (the harness often runs as root, and with --run-as the "
                                    "candidate's user, who is not, can reach the workspace)", False))
    given = document.get("given") or {}
    laid_out = sum(len(given.get(key) or ()) for key in ("files", "dirs", "symlinks"))
    folders: set[str] = set()  # every folder a path makes on its way (a/b/c makes a and a/b)
    for field_path, rel in _paths(document):
        parts = [part for part in str(rel).replace("${workspace}/", "").split("/") if part not in ("", ".")]
        if len(parts) > limits.MAX_DEPTH:
            out.append((field_path, f"the path has {len(parts)} components, more than the cap of "
                                    f"{limits.MAX_DEPTH} (HARNESS_MAX_DEPTH)", False))
        elif field_path[0] != "then" and len(folders) <= limits.MAX_GIVEN_ENTRIES:
            folders.update("/".join(parts[:end]) for end in range(1, len(parts)))
    if laid_out + len(folders) > limits.MAX_GIVEN_ENTRIES:
        out.append((["given"], f"the scenario lays out {laid_out} entries and {len(folders)} folders on their "
                               f"paths, more than the cap of {limits.MAX_GIVEN_ENTRIES} (HARNESS_MAX_GIVEN_ENTRIES)",
                    False))
    steps = document.get("steps") or ()
    if len(steps) > limits.MAX_STEPS:
        out.append((["steps"], f"the scenario has {len(steps)} steps, more than the cap of {limits.MAX_STEPS} "
                               "(HARNESS_MAX_STEPS)", False))
    sizes = list(_contents(document))
    total = sum(size for _, size in sizes)
    if total > limits.MAX_SCENARIO_CONTENT:
        field_path, size = max(sizes, key=lambda item: item[1])
        out.append((field_path, f"the scenario makes {total} bytes of content (this one {size}), more than the "
                                f"cap of {limits.MAX_SCENARIO_CONTENT} (HARNESS_MAX_SCENARIO_CONTENT)", False))
    return out


def regex_problems(document: Any, spent: list[int] | None = None) -> ErrorList:
    """Returns every ``$regex`` that does not compile (before the schema, whose message is vaguer).

    ``spent`` (one number, kept across the documents of a file) counts the compiled size of the
    file's patterns: past ``HARNESS_MAX_REGEX_TOTAL`` the rest are refused without being compiled,
    so many patterns each under the per-pattern cap cannot take all memory together.
    """
    from harness.scenario.matchers import expanded_size, regex_problem
    out: ErrorList = []
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        return out
    spent = spent if spent is not None else [0]
    for field_path, pattern in _regexes(document):
        spent[0] += min(expanded_size(pattern), limits.MAX_REGEX_SIZE + 1)
        if spent[0] > limits.MAX_REGEX_TOTAL:
            out.append((field_path, f"invalid $regex: the file's patterns compile to more than "
                                    f"{limits.MAX_REGEX_TOTAL} parts together (HARNESS_MAX_REGEX_TOTAL)", False))
            break
        why = regex_problem(pattern)
        if why:
            out.append((field_path, f"invalid $regex: {why}", False))
    return out


def _paths(document: dict[str, Any]) -> Iterator[tuple[list[Any], str]]:
    given = document.get("given") or {}
    for key in ("files", "symlinks"):
        for rel in given.get(key) or {}:
            yield ["given", key, rel], rel
    for index, entry in enumerate(given.get("dirs") or ()):
        yield ["given", "dirs", index], entry if isinstance(entry, str) else entry.get("path", "")
    for index, rel in enumerate(given.get("read_only") or ()):
        yield ["given", "read_only", index], rel
    for index, step in enumerate(document.get("steps") or ()):
        if "action" in step:
            yield ["steps", index, "path"], step.get("path", "")
        yield from _then_paths(step.get("then"), ["steps", index, "then"])
    yield from _then_paths(document.get("then"), ["then"])


def lays_out_links(document: dict[str, Any]) -> bool:
    """Returns whether a scenario document lays out links (``given.symlinks`` or a ``symlink`` action)."""
    return bool((document.get("given") or {}).get("symlinks")) or any(
        isinstance(step, dict) and step.get("action") == "symlink" for step in document.get("steps") or ())


def built_argument_problem(args: Any, root: str, *, links: bool = False) -> str | None:
    """Returns why a path argument built at run time (``${stepN...}``, from what a target answered
    before) leads beyond the harness's folder around the workspace at ``root``, or None.

    The lint reads a placeholder as text, so an answer of ``/etc/passwd`` fed to the next call
    passed it; the built value is held to the rule of :func:`~harness.util.pathrules.argument_path_problem`,
    the workspace's real path read back as ``${workspace}``.
    """
    for where, value in path_values(args):
        why = built_path_problem(value, root, links=links)
        if why:
            return f"args.{'.'.join(str(part) for part in where)}: {why}"
    return None


def built_path_problem(value: str, root: str, *, links: bool = False) -> str | None:
    """Returns why one path value built at run time leads beyond the folder around the workspace at
    ``root`` (the rule of :func:`built_argument_problem`), or None. A ``file:`` URI is read as the
    path it names before the workspace's real path is read back as ``${workspace}``."""
    path, why = file_uri_path(value)
    if why:
        return why
    if path is not None:
        value = path
    top = root.rstrip("/")
    for prefix, name in ((top, "${workspace}"), ("/" + top, "/${workspace}")):
        if value == prefix or value.startswith(prefix + "/"):
            value = name + value[len(prefix):]
            break
    return argument_path_problem(value, links=links)


def path_values(args: Any) -> Iterator[tuple[list[Any], str]]:
    """Yields (where, value) for the string values of an argument tree under a key naming a path."""
    return _argument_values(args, [])


def _argument_values(value: Any, where: list[Any], named: bool = False,
                     code_points: bool = False) -> Iterator[tuple[list[Any], str]]:
    """Yields the string values of an argument tree whose key (or an enclosing key) names a path;
    with ``code_points`` (a scenario's own arguments) a ``$code_points`` value as the text it makes."""
    if code_points and isinstance(value, dict) and len(value) == 1 and "$code_points" in value:
        if named:
            try:
                yield where, code_points_text(value["$code_points"])
            except (ValueError, TypeError):
                pass  # the loader reports the form itself
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _argument_values(inner, where + [key], named or any(p in str(key).lower() for p in PATH_KEYS),
                                        code_points)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _argument_values(inner, where + [index], named, code_points)
    elif named and isinstance(value, str):
        yield where, value


def _argument_paths(document: dict[str, Any]) -> Iterator[tuple[list[Any], str]]:
    for index, step in enumerate(document.get("steps") or ()):
        if isinstance(step, dict) and "tool" in step:
            yield from _argument_values(step.get("args"), ["steps", index, "args"], code_points=True)


def _modes(document: dict[str, Any]) -> Iterator[tuple[list[Any], Any]]:
    given = document.get("given") or {}
    for rel, spec in (given.get("files") or {}).items():
        if isinstance(spec, dict) and "content" in spec and "mode" in spec:
            yield ["given", "files", rel, "mode"], spec["mode"]
    for index, entry in enumerate(given.get("dirs") or ()):
        if isinstance(entry, dict) and "mode" in entry:
            yield ["given", "dirs", index, "mode"], entry["mode"]
    for index, step in enumerate(document.get("steps") or ()):
        if isinstance(step, dict) and "action" in step and "mode" in step:
            yield ["steps", index, "mode"], step["mode"]


def _link_targets(document: dict[str, Any]) -> Iterator[tuple[list[Any], str, Any]]:
    for link, target in ((document.get("given") or {}).get("symlinks") or {}).items():
        yield ["given", "symlinks", link], link, target
    for index, step in enumerate(document.get("steps") or ()):
        if step.get("action") == "symlink":
            yield ["steps", index, "target"], step.get("path", ""), step.get("target", "")


def _then_paths(then: Any, where: list[Any]) -> Iterator[tuple[list[Any], str]]:
    if not isinstance(then, dict):
        return
    for rel in then.get("files") or {}:
        yield where + ["files", rel], rel
    for index, rel in enumerate(then.get("absent") or ()):
        yield where + ["absent", index], rel


def _contents(document: dict[str, Any]) -> Iterator[tuple[list[Any], int]]:
    given = document.get("given") or {}
    for rel, spec in (given.get("files") or {}).items():
        yield ["given", "files", rel], size_of(of_given_file(spec))
    for index, step in enumerate(document.get("steps") or ()):
        if "content" in step:
            yield ["steps", index, "content"], size_of(step["content"])
        for key in ("args", "expect"):
            for path, spec in _specs_in(step.get(key), ["steps", index, key], ("$content", "$sha256")):
                yield path, size_of(spec)
        for path, items in _specs_in(step.get("args"), ["steps", index, "args"], ("$code_points",)):
            yield path, code_points_size(items)
        yield from _then_contents(step.get("then"), ["steps", index, "then"])
    yield from _then_contents(document.get("then"), ["then"])


def _then_contents(then: Any, where: list[Any]) -> Iterator[tuple[list[Any], int]]:
    if not isinstance(then, dict):
        return
    for rel, want in (then.get("files") or {}).items():
        spec = want.get("content") if isinstance(want, dict) and "content" in want else want
        if not (isinstance(want, dict) and "content" not in want and set(want) & {"matches", "sha256", "size",
                                                                               "mode", "type", "target"}):
            yield where + ["files", rel], size_of(spec)
        if isinstance(want, dict) and "matches" in want:
            for path, spec in _specs_in(want["matches"], where + ["files", rel, "matches"], ("$sha256",)):
                yield path, size_of(spec)


def _specs_in(value: Any, path: list[Any], keys: tuple[str, ...]) -> Iterator[tuple[list[Any], Any]]:
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in keys:
            yield path, next(iter(value.values()))
            return
        for key, item in value.items():
            yield from _specs_in(item, path + [key], keys)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _specs_in(item, path + [position], keys)


def _regexes(document: dict[str, Any]) -> Iterator[tuple[list[Any], str]]:
    for index, step in enumerate(document.get("steps") or ()):
        if not isinstance(step, dict):
            continue
        yield from _regexes_in(step.get("expect"), ["steps", index, "expect"])
        yield from _regexes_in(step.get("then"), ["steps", index, "then"])
    yield from _regexes_in(document.get("then"), ["then"])


def _regexes_in(value: Any, path: list[Any]) -> Iterator[tuple[list[Any], str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$regex" and isinstance(item, str):
                yield path + [key], item
            else:
                yield from _regexes_in(item, path + [key])
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _regexes_in(item, path + [position])
