"""Read-only folders for real: a bind mount, made read-only, in the calling thread's own mount namespace.

A read-only file system is realised by mounting a folder onto itself and remounting that mount
read-only (mount(2): ``MS_BIND``, then ``MS_REMOUNT | MS_BIND | MS_RDONLY``): every write below it
then fails with EROFS, as on a read-only mount. So that nothing of it reaches the machine, or the
harness's threads already running, the thread first leaves its process's mount namespace for a
copy of its own (unshare(2) ``CLONE_NEWNS``, which the kernel allows a thread of a process with
several, the thread's file-system attributes going with it) whose mounts are slaves of the
machine's: mounts made on the machine still appear in it, none made in it go out. Threads and
processes it starts afterwards share its namespace (a candidate's own threads should see its
folders), so what a candidate it starts mounts is there too: the harness reads each thread's own
mount table (harness/containment/cleanup.py). The mount is taken down (``MNT_DETACH``) when the
block ends, before the folder is removed or moved.

Needs ``CAP_SYS_ADMIN``; :func:`available` tells. Three system calls through ctypes, as
harness/util/processes.py calls ``prctl``: ``os.unshare`` comes with Python 3.12, and the standard
library has no ``mount``; the PyPI bindings for them (python-unshare, unshare) are unmaintained
since 2016-2019.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Iterator

from harness.containment.paths import resolve

_CLONE_NEWNS = 0x00020000
_MS_RDONLY = 1
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_SLAVE = 1 << 19
_MNT_DETACH = 2

_libc: ctypes.CDLL | None = None
_thread = threading.local()


def _calls() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str, path: str | None = None) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}", path)


def own_namespace() -> None:
    """Moves the calling thread to a mount namespace of its own, once per thread (see the module)."""
    if getattr(_thread, "private", False):
        return
    libc = _calls()
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _thread.private = True
    # Mounts made from now on stay in this namespace; the machine's still come in.
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_SLAVE, None), "mount --make-rslave /")


@contextlib.contextmanager
def read_only(root: str, folders: list[str]) -> Iterator[None]:
    """Makes each of ``folders`` (relative to ``root``, ``.`` for ``root`` itself; folders reached
    without a link on the way, refused otherwise) read-only for the block, in the calling thread's
    own mount namespace; raises OSError if one cannot be."""
    own_namespace()
    libc = _calls()
    held: list[int] = []  # the mounts' roots, open: each is taken down through its descriptor
    try:
        for folder in folders:
            below = open_folder(root, folder)
            try:
                path = f"/proc/thread-self/fd/{below}".encode()
                _check(libc.mount(path, path, None, _MS_BIND, None), "mount --bind", folder)
            finally:
                os.close(below)
            top = open_folder(root, folder)  # the same names now lead to the mount just made, on top
            held.append(top)
            _check(libc.mount(b"none", f"/proc/thread-self/fd/{top}".encode(), None,
                              _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None), "mount -o remount,bind,ro", folder)
        yield
    finally:
        try:
            for top in reversed(held):
                _check(libc.umount2(f"/proc/thread-self/fd/{top}".encode(), _MNT_DETACH), "umount")
        finally:
            for top in held:
                os.close(top)


#: A folder opened only to name it, never through a link.
_FOLDER = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def open_folder(root: str, folder: str) -> int:
    """Opens ``folder`` below ``root`` (``.`` is ``root``), walked as every path below a workspace is
    (harness/containment/paths.py: no link followed out of it, Outside otherwise), a link as its own
    last name refused (ELOOP), a file too (ENOTDIR); returns its descriptor (``O_PATH``)."""
    with resolve(root, folder, follow_last=False) as at:
        return os.open(at.name or ".", _FOLDER, dir_fd=at.dir_fd)


_available: bool | None = None


def available(folder: str) -> bool:
    """Whether :func:`read_only` works in this process, tried once on a new folder in ``folder``
    (a write below it must fail with EROFS, and succeed again afterwards)."""
    global _available
    if _available is None:
        _available = _try(folder)
    return _available


def _try(parent: str) -> bool:
    import errno
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix="harness-ro-", dir=parent)
    except OSError:
        return False
    below = os.path.join(folder, "ro")
    probe = os.path.join(below, "probe")
    try:
        os.mkdir(below)
        try:
            with read_only(folder, ["ro"]):
                try:
                    with open(probe, "wb"):
                        return False
                except OSError as exc:
                    if exc.errno != errno.EROFS:
                        return False
        except OSError:
            return False
        with open(probe, "wb"):
            return True
    except OSError:
        return False
    finally:
        for path, remove in ((probe, os.remove), (below, os.rmdir), (folder, os.rmdir)):
            with contextlib.suppress(OSError):
                remove(path)
