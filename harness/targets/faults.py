"""Realises the faults a scenario ``requires`` for an in-process target, on pyfakefs.

The tests run as root, so a mode cannot deny anything on the real file system, and neither a
read-only mount nor a full disk can be made here. For a target that runs in this process (the
reference), the whole scenario then runs on a pyfakefs file system instead: modes bite
(``allow_root_user=False``), ``disk_free`` sets the free space, and writes under ``read_only``
directories fail with EROFS. Out-of-process targets realise these conditions their own way or
skip the scenario (see ``Target.realises``).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FAKEABLE = frozenset({"permissions", "read-only-fs", "disk-full"})


@contextlib.contextmanager
def fake_filesystem() -> Iterator[Any]:
    """Runs the enclosed code on a fresh pyfakefs file system where modes apply; yields it."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    with Patcher(allow_root_user=False) as patcher:
        yield patcher.fs


def apply(fs: Any, given: dict[str, Any], root: Path) -> None:
    """Applies ``given.read_only`` and ``given.disk_free`` to the fake file system ``fs``."""
    read_only = [str(root / rel) for rel in given.get("read_only", ())]
    if read_only:
        _make_read_only(fs, read_only)
    if "disk_free" in given:
        # pyfakefs counts usage only once a total is set: set a large one, then read what is used.
        fs.set_disk_usage(1 << 40, str(root))
        used = fs.get_disk_usage(str(root)).used
        fs.set_disk_usage(used + given["disk_free"], str(root))


def _make_read_only(fs: Any, directories: list[str]) -> None:
    """Denies writes under ``directories`` and reports them as EROFS, as a read-only mount would."""
    for top in directories:
        for dirpath, _dirnames, filenames in os.walk(top):
            for name in filenames:
                os.chmod(os.path.join(dirpath, name), 0o444)
        for dirpath, _dirnames, _ in sorted(os.walk(top), key=lambda item: -len(item[0])):
            os.chmod(dirpath, 0o555)
    original = fs.raise_os_error

    def raise_os_error(err_no: int, filename: Any = None, winerror: Any = None) -> Any:
        if err_no in (errno.EACCES, errno.EPERM) and _under(filename, directories):
            err_no = errno.EROFS
        return original(err_no, filename, winerror)

    fs.raise_os_error = raise_os_error


def _under(filename: Any, directories: list[str]) -> bool:
    if filename is None:
        return False
    name = os.fsdecode(filename)
    return any(name == top or name.startswith(top.rstrip("/") + "/") for top in directories)
