"""A cache of loaded catalogs: a command starts without parsing and checking every scenario file again.

Loading the catalog (YAML, the JSON Schema, each scenario against its profile) is most of what a
command like ``harness list`` costs. The loaded :class:`~harness.scenario.catalog.Catalog` (scenarios,
profiles and problems alike) is kept per set of folders in
``$HARNESS_CACHE_DIR`` (default ``$XDG_CACHE_HOME/file-tool-conformance``, else
``~/.cache/file-tool-conformance``; ``HARNESS_CACHE_DIR=off`` turns the cache off), with a
fingerprint of everything the result depends on: the path, size and mtime of every scenario and
profile file that could be read, of the harness's own modules and schemas, and the Python version.
Any change there loads afresh and replaces the entry.

The entries are pickles, so only a cache the user alone can write is read: the folder and the file
must belong to the user running the harness and be writable by nobody else. A cache that cannot be
read or written is silently skipped: it only ever saves time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path, PosixPath
from typing import Any

from harness.util import processes

ENV = "HARNESS_CACHE_DIR"
_PACKAGE = Path(__file__).resolve().parents[1]  # the harness package


def cache_dir() -> Path | None:
    """Returns the cache folder, or None when the cache is off."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "file-tool-conformance"


def fingerprint(files: Iterable[Path | str], stamps: dict[str, tuple[int, int]] | None = None) -> str:
    """Returns a digest of the files' paths, sizes and mtimes (a missing file counts as missing),
    of the harness's own sources and schemas, and of the Python version. ``stamps``, when given,
    receives each of ``files``' (mtime, size) as read for the digest, by the path as given."""
    digest = hashlib.sha256(sys.version.encode())
    for line, own, stamp in _own():
        digest.update(line)
        if stamps is not None and stamp is not None:
            stamps[own] = stamp
    for path in files:
        try:
            info = os.stat(path)
            digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
            if stamps is not None:
                stamps[str(path)] = (info.st_mtime_ns, info.st_size)
        except OSError:
            digest.update(f"{path}\0-\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


@functools.cache
def _own() -> list[tuple[bytes, str, tuple[int, int] | None]]:
    """The harness's own sources and schemas as :func:`fingerprint` digests them, with their stamps:
    looked at once per process (they are what it runs; a run's caches each asked again, a walk of
    some 200 files)."""
    out: list[tuple[bytes, str, tuple[int, int] | None]] = []
    for path in sorted(os.path.join(folder, name) for folder, _, names in os.walk(_PACKAGE) for name in names
                       if name.endswith(".py") or (name.endswith(".json") and os.path.basename(folder) == "schema")):
        try:
            info = os.stat(path)
            out.append((f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"), path,
                        (info.st_mtime_ns, info.st_size)))
        except OSError:
            out.append((f"{path}\0-\n".encode("utf-8", "surrogateescape"), path, None))
    return out


def _entry(directories: list[Path], kind: str = "catalog") -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    name = hashlib.sha256("\0".join(str(d) for d in directories).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return folder / f"{kind}-{name}.pickle"


def _private(path: Path) -> bool:
    """Returns whether ``path`` belongs to this user and nobody else may write it."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) \
        and not stat.S_ISLNK(info.st_mode)


def read(directories: list[Path], key: str, kind: str = "catalog") -> Any:
    """Returns the cached catalog (or other ``kind`` of entry) of ``directories`` when its fingerprint
    is ``key``, else None."""
    entry = _entry(directories, kind)
    if entry is None or not _private(entry.parent) or not _private(entry):
        return None
    try:
        with open(entry, "rb") as handle:
            stored_key, catalog = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a miss, never a failure
        return None
    return catalog if stored_key == key else None


class _Pickler(pickle.Pickler):
    """Stores a path as its text: pathlib's own way (a part at a time) made loading the built-in
    catalog's entry a third slower. It loads as the same path."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is PosixPath:
            return PosixPath, (str(obj),)
        return NotImplemented


def write(directories: list[Path], key: str, catalog: Any, kind: str = "catalog") -> None:
    """Stores the catalog (or other ``kind`` of entry) of ``directories`` under ``key`` (atomically;
    errors are ignored)."""
    entry = _entry(directories, kind)
    if entry is None:
        return
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(entry.parent):
            return
        with processes.deferred():  # a SIGTERM between mkstemp and the try would leave the temporary file
            handle, temporary = tempfile.mkstemp(dir=entry.parent, prefix=f".{kind}-")
            try:
                with os.fdopen(handle, "wb") as out:
                    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((key, catalog))
                os.replace(temporary, entry)
            except BaseException:
                os.unlink(temporary)
                raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass
