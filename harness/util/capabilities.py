"""The calling thread's Linux capabilities that let a process past a file's mode, put down and taken up again.

Root passes every mode check through capabilities (``CAP_DAC_OVERRIDE`` and its kin), not
through its uid: with them out of the *effective* set, root is held to a file's owner, group and
other bits like any user, and since they stay *permitted* the same thread can take them up again
afterwards (capabilities(7)). The kernel keeps the sets per thread, so only the thread that puts
them down is affected: the harness's other threads keep theirs.

Two system calls, ``capget`` and ``capset``, which the standard library lacks (harness/util/syscalls.py).
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

from harness.util.syscalls import check, libc

#: The capabilities that let a process past a file's mode bits or ownership (capabilities(7)):
#: CHOWN 0, DAC_OVERRIDE 1, DAC_READ_SEARCH 2, FOWNER 3, FSETID 4.
PAST_MODES = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4)

_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _get() -> tuple[_Header, ctypes.Array[_Data]]:
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()  # pid 0: the calling thread
    check(libc().capget(ctypes.byref(header), data), "capget")
    return header, data


def _set(header: _Header, data: ctypes.Array[_Data]) -> None:
    check(libc().capset(ctypes.byref(header), data), "capset")


def effective_past_modes() -> int:
    """Returns which of :data:`PAST_MODES` the calling thread has in effect now (0: modes bite)."""
    _header, data = _get()
    return data[0].effective & PAST_MODES


@contextlib.contextmanager
def modes_bite() -> Iterator[None]:
    """Runs the block with :data:`PAST_MODES` out of the calling thread's effective set, and puts
    back what was in effect before, also when the block raises. Raises OSError if the kernel refuses."""
    header, data = _get()
    held = data[0].effective & PAST_MODES
    if not held:  # nothing to put down (not root, or root without them)
        yield
        return
    data[0].effective &= ~PAST_MODES
    _set(header, data)
    try:
        yield
    finally:
        header, data = _get()
        data[0].effective |= held
        _set(header, data)
