"""The C library, for the few system calls the standard library lacks (``capget``/``capset``,
``unshare``, ``mount``/``umount2``), through ctypes; loaded once, at first use.

PyPI's bindings for them (python-prctl, pyprctl, python-unshare) are unmaintained since 2016-2021,
and some need headers to build.
"""

from __future__ import annotations

import ctypes
import os

_libc: ctypes.CDLL | None = None


def libc() -> ctypes.CDLL:
    """The C library, its ``errno`` kept for :func:`check`."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def check(result: int, what: str, path: str | None = None) -> None:
    """Raises OSError (the call's errno, ``what`` failed, about ``path``) where ``result`` is not 0."""
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}", path)
