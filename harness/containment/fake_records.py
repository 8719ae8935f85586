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
    found: dict[str, Record] = {}
    folders: list[tuple[str, Any]] = [("/", fs.root)]
    while folders:
        folder, directory = folders.pop()
        for name, entry in list(directory.entries.items()):
            path = f"{folder}{name}" if folder.endswith("/") else f"{folder}/{name}"
            if path == workspace:
                continue
            if len(found) >= limits.MAX_ENTRIES:
                return None
            info = entry.stat_result
            found[path] = record(info)
            if stat.S_ISDIR(info.st_mode):
                folders.append((path, entry))
    return who, found


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
    found: dict[str, Record] = {}
    folders = [("", node)]
    while folders:
        prefix, folder = folders.pop()
        for name, entry in list(folder.entries.items()):
            if len(found) >= limits.MAX_ENTRIES:
                return None
            info = entry.stat_result
            found[prefix + name] = record(info)
            if stat.S_ISDIR(info.st_mode):
                folders.append((f"{prefix}{name}/", entry))
    return os.getuid(), os.getgid(), limits.MAX_DEPTH, tuple(chain), found


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
    itself), :data:`MISSING` when it is certainly not there, or None when the fake ``os`` must be
    asked: a name that is empty, ``.`` or ``..``, or a folder on the way that is a link, no folder,
    or not the harness's own with read and search for its owner (pyfakefs then lets the harness
    through, as the records say; anything else may be refused, which its ``os`` tells)."""
    if not path.startswith("/"):
        return None
    uid = os.getuid()
    node = fs.root
    for part in path.split("/")[1:]:
        if part in ("", ".", ".."):
            return None
        info = node.stat_result
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o500 != 0o500:
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
    top = entry(fs, root)
    if top is None or top is MISSING:
        return None
    uid = os.getuid()
    found: list[tuple[str, Any]] = []
    folders: list[tuple[str, Any]] = [("", top)]
    while folders:
        prefix, folder = folders.pop()
        info = folder.stat_result
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o500 != 0o500:
            return None
        if folder.entries and prefix[:-1].count("/") >= limits.MAX_DEPTH - 1:
            return None  # (as deep as the walk goes: what it passes over there is its own to tell)
        for name, node in list(folder.entries.items()):
            if len(found) >= limits.MAX_ENTRIES:
                return None
            mode = node.stat_result.st_mode
            if stat.S_ISDIR(mode):
                folders.append((f"{prefix}{name}/", node))
            elif not stat.S_ISLNK(mode) and readable_bytes(fs, node) is None:
                return None
            found.append((prefix + name, node))
    return found
