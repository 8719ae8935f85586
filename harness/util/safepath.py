"""Containment: every path the harness acts on stays inside the workspace, checked twice.

A scenario file is untrusted input, and so is whatever a candidate leaves in its workspace. Two
checks keep the harness's own operations (laying out ``given``, actions between calls, reading the
workspace back for ``then`` and snapshots) inside the workspace:

- *lexically*, when a scenario is linted: a workspace-relative path that is absolute or climbs
  above the root with ``..`` is an error naming file, line and field (:func:`lexical_problem`);
- *on disk*, at run time: a path is walked one component at a time from a descriptor of the root,
  each opened with ``O_NOFOLLOW`` relative to its parent's descriptor (:func:`resolve`), so a
  symbolic link is never followed by the kernel on the harness's behalf. A link met on the way is
  followed by this module only when its target, read and resolved lexically, stays inside the
  workspace; otherwise the walk stops with :class:`Outside`, naming the link, and the operation is
  not performed. There is no ``realpath``-then-open window: a component swapped for a link after
  the check is refused by the kernel (``ELOOP``/``ENOTDIR``).

A scenario may still lay out links that point out of the workspace (a real test case for a
candidate), but only into the harness's own folder around it (:func:`check_link_target`, and
:func:`link_target_problem` when linted): a candidate that follows links would otherwise write
wherever a scenario file aimed it. Links a candidate makes may lead anywhere; the harness never
acts through them.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat
from contextlib import contextmanager
from typing import BinaryIO, Iterator

#: Symbolic links followed in one resolution at most (as the kernel's own limit).
MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC


class Outside(OSError):
    """An operation would leave the workspace (through ``..`` or a symbolic link); it was not performed."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EXDEV, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


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


def relative_parts(root: str, rel: str) -> list[str]:
    """Returns the normalised components of ``rel`` below ``root``; raises Outside when it leaves it.

    An absolute ``rel`` (after ``${workspace}`` was substituted) counts when it lies under ``root``.
    """
    if rel.startswith("/"):
        if rel == root or rel.startswith(root.rstrip("/") + "/"):
            rel = rel[len(root):]
        else:
            raise Outside(f"{rel!r} is outside the workspace")
    parts: list[str] = []
    for part in rel.split("/"):
        if part == "..":
            if not parts:
                raise Outside(f"{rel!r} climbs above the workspace")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class Resolved:
    """A resolved path: a descriptor of its parent directory (owned) and the last component's name."""

    def __init__(self, dir_fd: int, name: str, parts: list[str], info: os.stat_result | None = None) -> None:
        self.dir_fd = dir_fd
        self.name = name  # "" when the path is the root itself
        self.parts = parts  # the real components from the root, no link among them
        #: The last component's ``lstat`` taken on the way (None when it does not exist, or for the root):
        #: a caller that needs it spares a second system call.
        self.info = info

    @property
    def rel(self) -> str:
        """Returns the real workspace-relative path."""
        return "/".join(self.parts)

    def close(self) -> None:
        """Closes the parent directory's descriptor."""
        _close(self.dir_fd)


@contextmanager
def resolve(root: str, rel: str, *, follow_last: bool = True, create_parents: bool = False,
            what: str = "the workspace") -> Iterator[Resolved]:
    """Yields ``rel`` resolved below ``root`` without the kernel following any link.

    Links among the components are followed only when they lead back inside the workspace (read
    and resolved here, lexically); the last component's link too when ``follow_last``. With
    ``create_parents``, missing directories on the way are made (mode 0777 minus the umask).
    Raises Outside for anything that would leave the workspace, OSError for the rest. ``what`` names
    the tree below ``root`` in messages (the same walk keeps a snapshot folder's files in it).
    """
    pending = relative_parts(root, rel)
    done: list[str] = []
    fds = [os.open(root, _DIR_FLAGS)]  # fds[i] is the directory done[:i]
    hops = 0
    info: os.stat_result | None = None
    try:
        while pending:
            part, last = pending[0], len(pending) == 1
            try:
                info = os.lstat(part, dir_fd=fds[-1])
            except FileNotFoundError:
                info = None
                if last or not create_parents:
                    if last:
                        break
                    raise
                os.mkdir(part, 0o777, dir_fd=fds[-1])
                info = os.lstat(part, dir_fd=fds[-1])
            if stat.S_ISLNK(info.st_mode) and (not last or follow_last):
                hops += 1
                where = "/".join(done + [part])
                if hops > MAX_LINKS:
                    raise Outside(f"{where}: too many levels of symbolic links")
                target = os.readlink(part, dir_fd=fds[-1])
                # The link may lead anywhere in the tree: walk again from the root along its resolution.
                pending = _link_parts(root, done, target, where, what) + pending[1:]
                for fd in fds[1:]:
                    _close(fd)
                del fds[1:]
                done = []
                continue
            if last:
                break
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), "/".join(done + [part]))
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))  # ELOOP if swapped for a link meanwhile
            done.append(part)
            pending.pop(0)
        name = pending[0] if pending else ""
        parent = fds.pop()
        resolved = Resolved(parent, name, done + ([name] if name else []), info if name else None)
        try:
            yield resolved
        finally:
            resolved.close()
    finally:
        for fd in fds:
            _close(fd)


def _link_parts(root: str, done: list[str], target: str, where: str, what: str = "the workspace") -> list[str]:
    """Returns the components (from the root) a link at ``done/<link>`` leads to; Outside if none."""
    if target.startswith("/"):
        normal = posixpath.normpath(target)
        top = root.rstrip("/")
        if normal != top and not normal.startswith(top + "/"):
            raise Outside(f"{where} is a symbolic link to {target!r}, outside {what}: not followed")
        return [p for p in normal[len(top):].split("/") if p]
    parts = list(done)
    for part in target.split("/"):
        if part == "..":
            if not parts:
                raise Outside(f"{where} is a symbolic link to {target!r}, outside {what}: not followed")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts


def _climb_problem(text: str, depth: int, after_name: str | None) -> str | None:
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
    return _climb_problem(target, depth, "'..' may only open a link's target")


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
    return _climb_problem(value, 0, "in a scenario that lays out links, the kernel applies it where a link leads"
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


def check_link_target(root: str, enclosure: str, link: list[str], target: str) -> None:
    """Raises Outside unless a link made at ``link`` (real components below ``root``) to ``target``
    leads into ``enclosure``: the workspace or the harness's own folder around it.

    Scenarios name link targets, and a candidate that follows links writes wherever they lead, so
    a link the harness makes must not lead into the rest of the machine. ``..`` may open a target
    only: after a name it would go up from wherever that name leads, which a link made later can
    move. An absolute target is taken as relative to the root when it starts with the root.
    """
    where = "/".join(link)
    refused = Outside(f"a symbolic link {where} -> {target!r} would lead outside the workspace and the "
                      "harness's folder around it: not made")
    top = root.rstrip("/")
    start = link[:-1]
    rest = target
    if target.startswith("/"):
        if target != top and not target.startswith(top + "/"):
            if ".." in target.split("/"):
                raise refused
            start, rest = [], posixpath.relpath(posixpath.normpath(target), top)
        else:
            start, rest = [], target[len(top):].lstrip("/") or "."
    if _climb_problem(rest, len(link) + 1, "after_name"):  # deep enough that only '..' after a name counts
        raise refused
    normal = posixpath.normpath(posixpath.join(top, *start, rest))
    bound = enclosure.rstrip("/")
    if normal != bound and not normal.startswith(bound + "/"):
        raise refused


def write_replacing(path: str | os.PathLike[str], data: str | bytes | BinaryIO) -> None:
    """Writes a file the harness makes (a report, its state) as a new file beside it, renamed over it.

    A link at ``path`` (one a checkout brought, say) is replaced, never written through; so is a
    stale file. The folder holding ``path`` is taken as given: the user named it. ``data`` may be
    an open binary file, copied in pieces (a whole run's report is not held in memory).
    """
    place = os.fspath(path)
    folder, name = os.path.split(place)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (str, bytes)):
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            else:
                shutil.copyfileobj(data, handle)
        os.replace(temporary, place)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def open_new(path: str | os.PathLike[str]) -> int:
    """Returns a descriptor of a new file at ``path`` (whatever was there, a link too, removed first
    and never written through); OSError when it cannot be made."""
    place = os.fspath(path)
    try:
        os.unlink(place)
    except FileNotFoundError:
        pass
    return os.open(place, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)


_READ_CHUNK = 1024 * 1024  # what read_regular asks for at a time beyond the size the file had


def read_capped(handle: BinaryIO, size: int, cap: int) -> bytes:
    """Returns what the open binary ``handle`` holds up to ``cap + 1`` bytes (more than ``cap``: the
    caller refuses it), ``size`` being what fstat said it holds.

    ``read(n)`` allocates n bytes first: this asks for the size the file has (one more byte tells
    that it grew), never the whole cap (1 GiB for a 28-byte state file); the rest, if any, in chunks.
    """
    want = min(cap, size) + 1
    data = handle.read(want)
    if len(data) < want or want > cap:
        return data
    parts, total = [data], len(data)
    while total <= cap:
        chunk = handle.read(min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def read_regular(path: str | os.PathLike[str], cap: int, *, follow_link: bool = False) -> bytes:
    """Returns the bytes of a regular file of at most ``cap`` bytes; OSError otherwise (a link unless
    ``follow_link``, a FIFO or a device, a larger file), without blocking on what it refuses."""
    place = os.fspath(path)
    try:
        fd = os.open(place, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_link else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, f"a symbolic link, not followed: {place}") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file: {place}")
        data = read_capped(handle, info.st_size, cap)
    if len(data) > cap:
        raise OSError(errno.EFBIG, f"more than {cap} bytes: {place}")
    return data


def entry_lstat(root: str, rel: str) -> os.stat_result | None:
    """Returns the lstat of ``rel`` (links followed only inside the workspace, the last one not); None if missing."""
    with resolve(root, rel, follow_last=False) as at:
        try:
            return os.lstat(at.name, dir_fd=at.dir_fd) if at.name else os.stat(at.dir_fd)
        except FileNotFoundError:
            return None
