"""Read-only folders and a full disk for real, as mounts in the calling thread's own mount namespace.

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

A full disk (:func:`full_disk`) is a memory file system (tmpfs) of its own mounted on the
workspace, shrunk once ``given`` is laid out to the blocks then in use, so that no byte more can be
written there; it is taken down the same way.

Needs ``CAP_SYS_ADMIN``; :func:`available` and :func:`full_disk_available` tell. ``unshare``,
``mount`` and ``umount2`` come from the C library (harness/util/syscalls.py): ``os.unshare`` comes
with Python 3.12, and the standard library has no ``mount``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator

from harness.containment import cleanup
from harness.containment.paths import resolve
from harness.util import syscalls
from harness.util.syscalls import check

_CLONE_NEWNS = 0x00020000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_SLAVE = 1 << 19
_MNT_DETACH = 2

_thread = threading.local()


def own_namespace() -> None:
    """Moves the calling thread to a mount namespace of its own, once per thread (see the module)."""
    if getattr(_thread, "private", False):
        return
    libc = syscalls.libc()
    try:
        check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    finally:  # (a failed unshare moves nothing; the namespace is looked up again all the same)
        cleanup.left_namespace()
    # Mounts made from now on stay in this namespace; the machine's still come in. Only then is it
    # the thread's own: where this is refused, the next call tries again rather than mount in a
    # namespace whose mounts the machine would see.
    check(libc.mount(b"none", b"/", None, _MS_REC | _MS_SLAVE, None), "mount --make-rslave /")
    _thread.private = True


@contextlib.contextmanager
def read_only(root: str, folders: list[str]) -> Iterator[None]:
    """Makes each of ``folders`` (relative to ``root``, ``.`` for ``root`` itself; folders reached
    without a link on the way, refused otherwise) read-only for the block, in the calling thread's
    own mount namespace; raises OSError if one cannot be."""
    own_namespace()
    libc = syscalls.libc()
    held: list[int] = []  # the mounts' roots, open: each is taken down through its descriptor
    try:
        for folder in folders:
            below = open_folder(root, folder)
            try:
                path = f"/proc/thread-self/fd/{below}".encode()
                check(libc.mount(path, path, None, _MS_BIND, None), "mount --bind", folder)
            finally:
                os.close(below)
            top = open_folder(root, folder)  # the same names now lead to the mount just made, on top
            held.append(top)
            check(libc.mount(b"none", f"/proc/thread-self/fd/{top}".encode(), None,
                              _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None), "mount -o remount,bind,ro", folder)
        yield
    finally:
        _take_down(held)


def _take_down(held: list[int]) -> None:
    """Takes down the mounts whose roots ``held`` holds open, the last made first (``MNT_DETACH``),
    and closes them; each is tried where one before it was refused (one taken down already: EINVAL),
    and the first refusal raised afterwards, so that none below it is left mounted."""
    libc = syscalls.libc()
    refused: OSError | None = None
    try:
        for top in reversed(held):
            try:
                check(libc.umount2(f"/proc/thread-self/fd/{top}".encode(), _MNT_DETACH), "umount")
            except OSError as exc:
                refused = refused or exc
    finally:
        for top in held:
            os.close(top)
    if refused is not None:
        raise refused


#: The flags of a full disk's mount (and of its remount, which would otherwise clear them).
_FULL_FLAGS = _MS_NOSUID | _MS_NODEV


def _layout_size() -> int:
    """The size a full disk's file system has while ``given`` is laid out on it: room for as many
    links as ``given`` may hold, a block each (its files hold no byte; memory is taken only as
    written, and the file system is shrunk afterwards)."""
    from harness.util import limits
    return (limits.MAX_GIVEN_ENTRIES + 16) * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def full_disk(root: str) -> Iterator[Callable[[], None]]:
    """Mounts a file system of its own on the folder ``root`` (empty; the calling thread's own mount
    namespace) for the block, and yields the function that fills it: called once ``given`` is laid
    out, it shrinks the file system to the blocks then in use, so that a byte more written anywhere
    below ``root`` fails with ENOSPC. Raises OSError if either cannot be done.

    The file system is a tmpfs, and below ``root`` is its folder ``ws`` (bound onto ``root``, with
    ``root``'s owner and mode): one block is written beside that folder before the file system is
    shrunk, out of the workspace's sight, as a tmpfs given no size at all would have no limit.
    A tmpfs counts whole blocks, so a file's last block may have room left: a full disk is exact
    only where no file holds a byte (harness/targets/faults.py chooses it only then)."""
    own_namespace()
    libc = syscalls.libc()
    at = os.open(root, _FOLDER)
    try:
        info = os.fstat(at)
        target = f"/proc/thread-self/fd/{at}".encode()
        options = f"size={_layout_size()},mode=0700".encode()
        check(libc.mount(b"harness-full-disk", target, b"tmpfs", _FULL_FLAGS, options), "mount -t tmpfs", root)
    finally:
        os.close(at)
    held: list[int] = []  # the two mounts' roots, the bound folder on top: taken down in reverse
    try:
        try:
            disk = open_folder(root, ".")  # the new file system's own root, where the block goes
        except BaseException:
            libc.umount2(root.encode(), _MNT_DETACH)  # (the harness's own folder, reached by its path)
            raise
        held.append(disk)
        os.mkdir("ws", 0o700, dir_fd=disk)
        os.chown("ws", info.st_uid, info.st_gid, dir_fd=disk, follow_symlinks=False)
        os.chmod("ws", stat.S_IMODE(info.st_mode), dir_fd=disk, follow_symlinks=False)
        folder = f"/proc/thread-self/fd/{disk}/ws".encode()
        check(libc.mount(folder, f"/proc/thread-self/fd/{disk}".encode(), None, _MS_BIND, None), "mount --bind", root)
        held.append(open_folder(root, "."))

        def fill() -> None:
            block = os.statvfs(f"/proc/thread-self/fd/{disk}").f_frsize
            spare = os.open("block", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                            dir_fd=disk)
            try:
                os.write(spare, b"\0" * block)
            finally:
                os.close(spare)
            now = os.statvfs(f"/proc/thread-self/fd/{disk}")
            used = (now.f_blocks - now.f_bfree) * now.f_frsize
            check(libc.mount(b"none", f"/proc/thread-self/fd/{disk}".encode(), None, _MS_REMOUNT | _FULL_FLAGS,
                              f"size={used}".encode()), "mount -o remount,size", root)
            if os.statvfs(f"/proc/thread-self/fd/{held[-1]}").f_bavail != 0:
                raise OSError(errno.ENOSPC, "the file system mounted as a full disk still has room", root)

        yield fill
    finally:
        _take_down(held)


#: A folder opened only to name it, never through a link.
_FOLDER = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def open_folder(root: str, folder: str) -> int:
    """Opens ``folder`` below ``root`` (``.`` is ``root``), walked as every path below a workspace is
    (harness/containment/paths.py: no link followed out of it, Outside otherwise), a link as its own
    last name refused (ELOOP), a file too (ENOTDIR); returns its descriptor (``O_PATH``)."""
    with resolve(root, folder, follow_last=False) as at:
        return os.open(at.name or ".", _FOLDER, dir_fd=at.dir_fd)


#: What :func:`available` and :func:`full_disk_available` found, tried once per process.
_tried: dict[str, bool] = {}


def available(folder: str) -> bool:
    """Whether :func:`read_only` works in this process, tried once on a new folder in ``folder``
    (a write below it must fail with EROFS, and succeed again afterwards)."""
    return _once("read-only", folder, _read_only_works)


def full_disk_available(folder: str) -> bool:
    """Whether :func:`full_disk` works in this process, tried once on a new folder in ``folder`` (a
    byte written there must fail with ENOSPC, and the folder be empty and writable afterwards)."""
    return _once("full-disk", folder, _full_disk_works)


def _once(name: str, parent: str, works: Callable[[str], bool]) -> bool:
    """Returns ``works(folder)`` for a new folder in ``parent`` (False if it raises OSError), found
    once per process; the folder is removed afterwards with whatever it holds."""
    if name not in _tried:
        import shutil
        import tempfile

        try:
            folder = tempfile.mkdtemp(prefix="harness-mounts-", dir=parent)
        except OSError:
            _tried[name] = False
        else:
            try:
                _tried[name] = works(folder)
            except OSError:
                _tried[name] = False
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return _tried[name]


def _read_only_works(folder: str) -> bool:
    os.mkdir(os.path.join(folder, "ro"))
    probe = os.path.join(folder, "ro", "probe")
    with read_only(folder, ["ro"]):
        if _refused(probe) != errno.EROFS:
            return False
    return _refused(probe) is None


def _full_disk_works(folder: str) -> bool:
    probe = os.path.join(folder, "probe")
    with full_disk(folder) as fill:
        fill()
        if _refused(probe) != errno.ENOSPC:
            return False
    return not os.listdir(folder) and _refused(probe) is None


def _refused(path: str) -> int | None:
    """Writes one byte to a new file ``path``; returns the error number it was refused with, or None."""
    try:
        with open(path, "wb", buffering=0) as handle:
            handle.write(b"x")
    except OSError as exc:
        return exc.errno
    return None
