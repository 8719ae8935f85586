"""A file's recorded state from bytes in hand, and what pyfakefs' records tell of a workspace there.

On pyfakefs (a fault scenario of an in-process target, harness/targets/faults.py) each path lookup
of its ``os`` costs what a plain scenario's system calls do. What its records tell for certain
(harness/containment/fake_records.py: no link on the way, folders and files the harness may
enter and read) is read from them here, as the fake ``os`` would give it; the rest is asked of the
fake ``os`` by harness/run/workspace.py, as before.
"""

from __future__ import annotations

import hashlib
import stat
from typing import Any

from harness.containment import fake_records
from harness.util import limits

TEXT_LIMIT = 4096  # text of files up to this size is kept in the recorded state


def finish_file_state(entry: dict[str, Any], data: bytes, limit: int, with_text: bool) -> dict[str, Any]:
    """Completes a file's ``entry`` from the first ``limit`` + 1 of its bytes (``data``): its SHA-256, or
    that of its first ``limit`` bytes when there are more, and its text when asked and short."""
    if len(data) > limit:
        entry["sha256_of_first"] = {"bytes": limit, "sha256": hashlib.sha256(data[:limit]).hexdigest(),
                                    "why": f"read capped at {limit} bytes (harness/util/limits.py)"}
        return entry
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    if with_text and len(data) <= TEXT_LIMIT:
        try:
            entry["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return entry


def recorded_state(path: str, node: Any, cache: dict[tuple[Any, ...], dict[str, Any]]) -> dict[str, Any]:
    """What ``workspace.entry_state`` (with the text, and ``cache``) records of ``path`` on pyfakefs, told by
    its record ``node`` (one :func:`harness.containment.fake_records.plain_tree` gave: a folder, a link,
    or a file the harness may read, its bytes held), as its ``lstat``, ``readlink`` and reading give."""
    info = node.stat_result
    mode = f"0{stat.S_IMODE(info.st_mode):03o}"
    if stat.S_ISLNK(info.st_mode):
        return {"type": "symlink", "target": node.contents}
    if stat.S_ISDIR(info.st_mode):
        return {"type": "dir", "mode": mode}
    key = (path, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns, info.st_nlink, True)
    if key in cache:
        return dict(cache[key])
    limit = limits.MAX_FILE_READ
    entry = finish_file_state({"type": "file", "mode": mode, "size": info.st_size},
                              node.byte_contents[:limit + 1], limit, True)
    if info.st_nlink > 1:
        entry.update(links=info.st_nlink, inode=info.st_ino)
    cache[key] = dict(entry)
    return entry


def fake_kind(path: str) -> str | None:
    """The type ``file_ops.kind_of`` gives of the absolute ``path`` on pyfakefs (``symlink``, ``dir``,
    ``file``, ``<missing>``), where its records tell it for certain; else None (ask the fake ``os``)."""
    fs = fake_records.filesystem()
    node = fake_records.entry(fs, path) if fs is not None else None
    if node is fake_records.MISSING:
        return "<missing>"
    if node is not None:
        mode = node.stat_result.st_mode
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISDIR(mode):
            return "dir"
        if stat.S_ISREG(mode):
            return "file"
    return None


def fake_read(path: str) -> tuple[str, bytes | None] | None:
    """What reading the absolute ``path`` on pyfakefs as ``Workspace.read`` does gives, where its records
    tell it for certain (no link at ``path`` nor on the way; a file the harness may read): its type,
    with its bytes for a file; else None (ask the fake ``os``)."""
    fs = fake_records.filesystem()
    node = fake_records.entry(fs, path) if fs is not None else None
    if node is None:
        return None
    if node is fake_records.MISSING:
        return "<missing>", None
    if stat.S_ISDIR(node.stat_result.st_mode):
        return "dir", None
    data = fake_records.readable_bytes(fs, node)
    return None if data is None else ("file", data)
