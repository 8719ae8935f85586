"""pyfakefs' own records of its file system, read where asking its fake ``os`` would look up a path.

A fault scenario of an in-process target runs on pyfakefs (harness/targets/faults.py), whose every
operation resolves its path in Python: a lookup there costs what a whole plain scenario's system
calls do. What the harness asks only to compare (whether anything changed outside the workspace,
whether the workspace changed since it was last read, whether a path has a link on the way) is
read here from pyfakefs' records instead, a walk over its dictionaries: each entry's record (the
one ``os.lstat`` copies) and owner, the root's, and who the harness is there. What the fake ``os``
lists and reads is told by these alone (the entries, their modes and owners, and who asks; a
file's bytes go with its signature, as a write moves its ctime, which nothing sets back), so
where they are as they were, so is anything read through it.

Every function here is a shortcut with the fake ``os`` behind it: the callers ask it whenever the
records cannot be had (not on pyfakefs, too many entries) or differ.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from harness.util import limits

Record = tuple[int, ...]


def filesystem() -> Any | None:
    """The pyfakefs file system this process is patched onto now, or None: while pyfakefs patches,
    this module's ``os`` is its fake one, which holds it."""
    return getattr(os, "filesystem", None)


def record(info: Any) -> Record:
    """An entry's signature as :func:`harness.containment.enclosure._signature` takes it (inode and
    ctime first, then device, mtime, size, mode, links), followed by its owner and group."""
    return (info.st_ino, info.st_ctime_ns, info.st_dev, info.st_mtime_ns, info.st_size, info.st_mode, info.st_nlink,
            info.st_uid, info.st_gid)


def outside(fs: Any, workspace: str) -> tuple[Record, dict[str, Record]] | None:
    """Who the harness is on ``fs`` (user, group) with the root's mode and owner, and every other
    entry but ``workspace`` and what lies below it, by path as ``os.listdir`` names it, with its
    :func:`record`; None past ``limits.MAX_ENTRIES`` entries."""
    root = fs.root.stat_result
    who = (os.getuid(), os.getgid(), root.st_mode, root.st_uid, root.st_gid)
    entries = _walk(fs.root, "/", skip=workspace)
    return None if entries is None else (who, {path: record(node.stat_result) for path, node in entries})


def below(fs: Any, root: str) -> tuple[Any, ...] | None:
    """Who the harness is on ``fs``, the depth cap, the :func:`record` of each folder from the file
    system's root down to ``root`` (an absolute path) and of every entry below it, by its path
    relative to ``root``; None when ``root`` is no folder there (no link followed), or past
    ``limits.MAX_ENTRIES`` entries."""
    node = fs.root
    chain = [record(node.stat_result)]
    for part in root.split("/")[1:]:
        node = node.entries.get(part) if stat.S_ISDIR(node.stat_result.st_mode) else None
        if node is None:
            return None
        chain.append(record(node.stat_result))
    if not stat.S_ISDIR(node.stat_result.st_mode):
        return None
    entries = _walk(node, "")
    if entries is None:
        return None
    return os.getuid(), os.getgid(), limits.MAX_DEPTH, tuple(chain), {rel: record(n.stat_result) for rel, n in entries}


def _walk(top: Any, prefix: str, skip: str | None = None) -> list[tuple[str, Any]] | None:
    """Every entry below the folder record ``top`` with its record, by ``prefix`` and its path below
    ``top`` (``/`` between names), but ``skip`` and what lies below it; None past
    ``limits.MAX_ENTRIES`` entries. Links are entries, never followed."""
    found: list[tuple[str, Any]] = []
    folders = [(prefix, top)]
    while folders:
        at, folder = folders.pop()
        for name, node in folder.entries.items():
            path = at + name
            if path == skip:
                continue
            if len(found) >= limits.MAX_ENTRIES:
                return None
            found.append((path, node))
            if stat.S_ISDIR(node.stat_result.st_mode):
                folders.append((path + "/", node))
    return found


def no_link_on_the_way(fs: Any, path: str) -> bool:
    """Whether every name of the absolute, normalised ``path`` is a folder on ``fs``, no link: the
    path is then its own ``realpath`` there. False for anything else (ask ``realpath``)."""
    if not path.startswith("/"):
        return False
    node = fs.root
    for part in path.rstrip("/").split("/")[1:]:
        if part in ("", ".", ".."):
            return False
        node = node.entries.get(part)
        if node is None or not stat.S_ISDIR(node.stat_result.st_mode):
            return False
    return True


#: What :func:`entry` gives for a path that is certainly not there.
MISSING = object()


def entry(fs: Any, path: str) -> Any | None:
    """The record of the entry at the absolute ``path`` on ``fs`` (never a link followed: the entry
    itself; ``/``: the root), :data:`MISSING` when it is certainly not there, or None when the fake ``os`` must be
    asked: a name that is empty, ``.`` or ``..``, or a folder on the way that is a link, no folder,
    or not the harness's own with read and search for its owner (pyfakefs then lets the harness
    through, as the records say; anything else may be refused, which its ``os`` tells)."""
    if not path.startswith("/"):
        return None
    node = fs.root
    if path == "/":
        return node
    for part in path.split("/")[1:]:
        if part in ("", ".", ".."):
            return None
        if not _enterable(node):
            return None
        node = node.entries.get(part)
        if node is None:
            return MISSING
    return node


def readable_bytes(fs: Any, node: Any) -> bytes | None:
    """A regular file's bytes, as reading it through the fake ``open`` gives them, when the harness may
    read it (its own, readable by its owner) and pyfakefs holds them; else None (ask the fake ``os``)."""
    info = node.stat_result
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or not info.st_mode & 0o400:
        return None
    data = node.byte_contents
    return data if isinstance(data, bytes) else None


def plain_tree(fs: Any, root: str) -> list[tuple[str, Any]] | None:
    """Every entry below the folder ``root`` on ``fs`` with its node, by its path relative to ``root``,
    where the fake ``os`` would list and read them all as the records say: ``root`` reached as
    :func:`entry` reaches a path, every folder below the harness's own with read and search for its
    owner, every file its own and readable with its bytes held, nothing but folders, files and links,
    no folder as deep as ``limits.MAX_DEPTH`` holding anything, at most ``limits.MAX_ENTRIES``
    entries; else None (walk it through the fake ``os``)."""
    top = folder(fs, root)
    entries = _walk(top, "") if top is not None else None
    if entries is None:
        return None
    for rel, node in [("", top), *entries]:  # (the root as deep as a folder right below it)
        mode = node.stat_result.st_mode
        if stat.S_ISDIR(mode):
            if not _enterable(node) or (node.entries and rel.count("/") >= limits.MAX_DEPTH - 1):
                return None  # (as deep as the walk goes: what it passes over there is its own to tell)
        elif not stat.S_ISLNK(mode) and readable_bytes(fs, node) is None:
            return None
    return entries


def folder(fs: Any, path: str) -> Any | None:
    """The record of the folder at the absolute ``path`` on ``fs``, reached as :func:`entry` reaches
    it; None where it is not certainly a folder there (ask the fake ``os``)."""
    node = entry(fs, path)
    return node if node is not None and node is not MISSING and stat.S_ISDIR(node.stat_result.st_mode) else None


def make_folder(fs: Any, parent: Any, name: str, mode: int) -> Any:
    """Makes the folder ``name`` in the folder record ``parent`` on ``fs`` as ``fs.create_dir`` makes
    the last folder of a path (mode ``mode`` less the umask, the harness's own) and returns its record;
    ``parent`` and ``name`` as :func:`folder` and a name not there tell. Raises OSError as ``create_dir``
    does where ``parent`` is not writable for the harness."""
    from pyfakefs.fake_file import FakeDirectory

    made = FakeDirectory(name, filesystem=fs)
    parent.add_entry(made)
    made.st_mode = stat.S_IFDIR | (mode & ~fs.umask)
    return made


def lay_out(fs: Any, root: str, rel: str, data: bytes | None = None) -> bool:
    """Makes ``rel`` below the folder ``root`` on ``fs`` as the layout makes it through the fake ``os``,
    from the records: a folder (``data`` None) as ``Path.mkdir(parents=True, exist_ok=True)`` does, or
    a new file holding ``data`` as ``open(path, "wb")`` does once its folders are made so (each made
    as :func:`make_folder` makes it, mode 0777 less the umask; the file 0666 less the umask, its bytes
    counted on the disk as ``fs.create_file`` counts them). Returns whether it did; where it did not,
    nothing was made, and the fake ``os`` must be asked: a name empty, ``.`` or ``..``, ``root`` or
    a folder on the way not the harness's own with read, write and search for its owner (which
    pyfakefs may refuse), an entry on the way that is no folder (a link among them), a file already
    there, or a umask that would keep the harness out of a folder it makes. The fake ``os`` costs
    a few path lookups per name where this costs a dictionary look-up."""
    from pyfakefs.fake_file import FakeFile

    top = folder(fs, root)
    parts = rel.split("/")
    if top is None or any(part in ("", ".", "..") for part in parts):
        return False
    folders = parts if data is None else parts[:-1]
    node = top
    for index, part in enumerate(folders):
        if not _owned_folder(node):
            return False
        below = node.entries.get(part)
        if below is None:  # this one and the rest made
            if ~fs.umask & 0o700 != 0o700:
                return False
            for name in folders[index:]:
                node = make_folder(fs, node, name, 0o777)
            break
        node = below
    else:  # every folder there already
        if not _owned_folder(node) or (data is not None and parts[-1] in node.entries):
            return False
    if data is not None:
        made = FakeFile(parts[-1], stat.S_IFREG | (0o666 & ~fs.umask), filesystem=fs)
        node.add_entry(made)
        made.set_initial_contents(data)
    return True


def _owned_folder(node: Any) -> bool:
    """Whether the record ``node`` is a folder of the harness's own with read, write and search for its owner."""
    return _enterable(node) and bool(node.stat_result.st_mode & 0o200)


def _enterable(node: Any) -> bool:
    """Whether the folder record ``node`` is the harness's own, with read and search for its owner."""
    info = node.stat_result
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o500 == 0o500
