"""Path rules on their face: what a scenario's paths may say before anything is opened.

A workspace-relative path that is absolute or climbs above the root with ``..``
(:func:`lexical_problem`), a link target that leads out of the harness's folder
(:func:`link_target_problem`), a tool argument that names a path out of the workspace
(:func:`argument_path_problem`, :func:`file_uri_path`). Pure functions of text: the scenario
checks, the bindings and the watch outside the workspace share them; the walk on disk that
enforces them at run time is harness/containment/paths.py.
"""

from __future__ import annotations

import posixpath


def lexical_problem(rel: str) -> str | None:
    """Returns why a workspace-relative path leaves the workspace on its face, or None.

    ``${workspace}/...`` counts as relative to the root. Absolute paths, NUL bytes and ``..`` that
    climb above the root are problems; ``a/../b`` is not.
    """
    if not isinstance(rel, str):
        return "not a path"
    if "\x00" in rel:
        return "contains a NUL character"
    for prefix in ("${workspace}/", "{workspace}/"):
        if rel.startswith(prefix):
            rel = rel[len(prefix):]
    if rel in ("${workspace}", "{workspace}"):
        return None
    if rel.startswith("/"):
        return f"{rel!r} is absolute: it must be relative to the workspace"
    depth = 0
    for part in rel.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return f"{rel!r} climbs above the workspace with '..'"
        elif part not in ("", "."):
            depth += 1
    return None


def climb_problem(text: str, depth: int, after_name: str | None) -> str | None:
    """Returns why ``text`` (a relative path, read from ``depth`` levels below the root) climbs more
    than one level above the root, or has ``..`` after a name when ``after_name`` says why it may not."""
    named = False
    for part in text.split("/"):
        if part == "..":
            if named and after_name:
                return f"{text!r} has '..' after a name: {after_name}"
            depth -= 1
            if depth < -1:
                return f"{text!r} climbs more than one level above the workspace"
        elif part not in ("", "."):
            depth, named = depth + 1, True
    return None


def link_target_problem(link: str, target: str) -> str | None:
    """Returns why a link a scenario lays out at ``link`` would lead out of the harness's folder
    around the workspace, on its face, or None (the rule of :func:`check_link_target`, lexically).

    An absolute target must start with ``${workspace}``; ``..`` may open a target only, and climb at
    most one level above the root.
    """
    if not isinstance(target, str):
        return "not a path"
    if "\x00" in target:
        return "contains a NUL character"
    depth = len([part for part in posixpath.normpath(link).split("/") if part not in ("", ".")]) - 1
    for prefix in ("${workspace}", "{workspace}"):
        if target == prefix or target.startswith(prefix + "/"):
            target, depth = target[len(prefix):].lstrip("/"), 0
            break
    else:
        if target.startswith("/"):
            return (f"{target!r} is absolute: a link the harness makes leads into the workspace or the folder "
                    "around it (`${workspace}/...`, or a relative path)")
    return climb_problem(target, depth, "'..' may only open a link's target")


#: Parts of an argument's name that make its string values paths (``file_path``, ``paths``, ``source``...).
PATH_KEYS = ("path", "file", "dir", "target", "source", "destination")


def argument_path_problem(value: str, *, links: bool = False) -> str | None:
    """Returns why a path a scenario hands a tool leads, on its face, beyond the harness's folder
    around the workspace, or None.

    A tool that wrongly accepts a path writes where it leads, as the harness's user (often root in
    CI): a path outside the root is written ``${workspace}/../x``, so that such a write lands where
    the harness sees it. ``${workspace}`` (also after one more ``/``, a UNC-like form) counts as the
    root; ``..`` may climb one level above it; other absolute paths are problems. Relative paths
    are resolved by the tool as it likes (that is often the test); only their climb is bounded.
    With ``links`` (the scenario lays out links) ``..`` may not follow a name: the kernel applies it
    where a link leads, so ``l/../../x`` through a link to the folder around the workspace leaves it.

    Some tools read more into a path than the kernel does, and the rule reads it as they would: a
    ``file:`` URI is the path it names (percent escapes decoded; no host but ``localhost``), and a
    path starting with ``~`` names a home folder (Claude Code expands it), where the harness watches
    only the names directly in its own ``$HOME`` (harness/containment/outside.py): so only ``~/name`` is allowed,
    one name there, not hidden (``~/.bashrc``, ``~/.ssh/authorized_keys`` and ``~root/x`` are not).
    A path with white space around it is also read as a tool that trims it would.
    """
    trimmed = value.strip()
    if trimmed != value and trimmed:  # a tool that trims white space off its arguments reads this
        why = argument_path_problem(trimmed, links=links)
        if why:
            return f"{why} (as a tool that trims white space reads {value!r})"
    value, why = _as_a_tool_reads_it(value)
    if why:
        return why
    if value.startswith("~"):
        return _home_problem(value)
    for prefix in ("/${workspace}", "${workspace}"):
        if value == prefix or value.startswith(prefix + "/"):
            value = value[len(prefix):].lstrip("/")
            break
    else:
        if value.startswith("/"):
            return (f"{value!r} is an absolute path outside the workspace: a tool that wrongly accepted it would "
                    "write into the machine; write a path outside the root as `${workspace}/../name`")
    return climb_problem(value, 0, "in a scenario that lays out links, the kernel applies it where a link leads"
                          if links else None)


def file_uri_path(value: str) -> tuple[str | None, str | None]:
    """Returns the path a ``file:`` URI names (percent escapes decoded) and None, or None and why it
    is refused (a host other than ``localhost``); (None, None) when ``value`` is no ``file:`` URI.
    ``${workspace}`` may stand where the URI's path begins (``file://${workspace}/a.txt``)."""
    if value[:5].lower() != "file:":
        return None, None
    rest = value[5:]
    if rest.startswith("//"):
        rest = rest[2:]
        if rest[:9].lower() == "localhost":
            rest = rest[9:]
        if rest and not rest.startswith(("/", "${workspace}")):
            return None, (f"{value!r} is a file URI naming a host: a tool that wrongly accepted it would reach "
                          "beyond this machine's workspace; write `file://${workspace}/name`")
    from urllib.parse import unquote
    return unquote(rest, errors="surrogateescape"), None


def _as_a_tool_reads_it(value: str) -> tuple[str, str | None]:
    """Returns the path a tool that takes ``file:`` URIs reads in ``value`` (``value`` itself when it
    is no URI), or why it is refused."""
    path, why = file_uri_path(value)
    if why:
        return value, why
    return (value if path is None else path), None


def _home_problem(value: str) -> str | None:
    """Returns why a path starting with ``~`` is refused (a tool that expands it writes in a home
    folder), or None for ``~/name``: one name directly in the home folder, not hidden."""
    name = value[2:] if value.startswith("~/") else None
    if name and "/" not in name and not name.startswith("."):
        return None
    return (f"{value!r} leads into a home folder (a tool that expands ~ writes there as its user, often root): "
            "only `~/name` is allowed, one name directly in the home folder and not hidden, which the harness "
            "watches; write a path outside the root as `${workspace}/../name`")
