"""The editor's file system as an ACP agent sees it: ``fs/read_text_file`` and ``fs/write_text_file``
served strictly inside one workspace.

Where this module's concern ends: it turns a path an agent sent into an open file inside the
workspace, or into a :class:`FsRefusal` saying why not. Recording the request and answering it over
JSON-RPC is ``client.py``'s job.

Rules, because the agent is a candidate and candidates are hostile:

- the path must be absolute; it is normalised lexically (``a/../b`` is ``b``) and must then lie
  inside the workspace (as the harness named it, or its real path). Anything else is refused as an
  *escape attempt*: nothing outside is ever opened, stat'ed or created;
- every path is resolved from a descriptor of the workspace root opened once, when the session is
  bound (``O_NOFOLLOW``), never from the root's path again: an agent that moves its workspace away
  and puts a link to another folder in its place does not lead the client there. A request after
  such a swap (the root's path no longer names the folder held) is refused as an escape attempt;
- every component is opened relative to the directory before it, without following symbolic
  links (``O_NOFOLLOW``, what ``openat2``'s ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`` would do; a
  link anywhere on the way is refused, even one pointing back inside);
- only regular files are read or written (a FIFO or device is never opened for blocking I/O:
  ``O_NONBLOCK``, then ``fstat``);
- reads are bounded (`READ_LIMIT`) and decoded as strict UTF-8; ``line`` (1-based) and ``limit``
  select whole lines, line endings kept;
- a write creates or truncates the file, content as UTF-8, unchanged; a missing parent directory is
  an error (``file not found``, like ``fs::write``) unless the client was told to create parents
  (``create_parents``, the ``parents=create`` option: what an editor saving a new buffer may do);
- *unsaved buffers* (``buffers``, a scenario's ``acp: {buffers: {<relative path>: <text>}}``): the
  editor has that file open with text it has not saved. ``fs/read_text_file`` serves the buffer's
  text, not the disk's ("including unsaved changes in the editor", ACP's File System section); a
  write of that path replaces the buffer and saves it (the file on disk gets the new content, as
  an editor that saves what the agent wrote). The path is held to the same rules first: a buffer
  never opens a way out of the workspace.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from pathlib import Path

#: How the editor answers a permission request: the option kinds to pick, in order of preference
#: (``cancel`` answers ``{"outcome": "cancelled"}`` without picking any). Here, beside the files the
#: editor serves, rather than in ``client.py``: checking an ``acp:`` option needs no ACP SDK.
PERMISSION_ANSWERS: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "allow_always": ("allow_always", "allow_once"),
    "reject": ("reject_once", "reject_always"),
    "reject_always": ("reject_always", "reject_once"),
    "cancel": (),
}

#: How the editor answers ``terminal/*`` (``client.py`` says what each does); here for the same reason.
TERMINAL_POLICIES = ("none", "refuse", "fake", "running")

#: The largest file served to ``fs/read_text_file`` (bytes); larger ones are refused.
READ_LIMIT = 16 * 1024 * 1024

# JSON-RPC error codes of the replies (ACP names none for fs/*): the package's "Resource not found"
# for a missing file, "Invalid params" for a path the harness will not serve, "Internal error" else.
NOT_FOUND = -32002
REFUSED = -32602
FAILED = -32603


class FsRefusal(Exception):
    """A request the workspace cannot serve: ``code`` and ``message`` for the reply, ``escape`` if outside."""

    def __init__(self, code: int, message: str, *, escape: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.escape = escape


class WorkspaceFiles:
    """Reads and writes files under ``root`` only, never through a link."""

    def __init__(self, root: Path, *, create_parents: bool = False, buffers: dict[str, str] | None = None) -> None:
        self.root = Path(root).absolute()
        self.create_parents = create_parents
        # Unsaved editor buffers, by their components below the root (``a/b.txt`` -> ("a", "b.txt")).
        self.buffers: dict[tuple[str, ...], str] = {
            tuple(posixpath.normpath(name).split("/")): text for name, text in (buffers or {}).items()}
        self._roots = {str(self.root), os.path.realpath(self.root)}
        # The root, held: every request walks from here (raises OSError when it is no folder now).
        self._fd: int | None = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        held = os.fstat(self._fd)
        self._identity = (held.st_dev, held.st_ino)

    def close(self) -> None:
        """Lets go of the root's descriptor (the session is over)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    def relative(self, path: object) -> list[str]:
        """Returns the components of ``path`` below the root; raises FsRefusal for anything else."""
        if not isinstance(path, str) or not path:
            raise FsRefusal(REFUSED, "path must be a non-empty string")
        if "\x00" in path:
            raise FsRefusal(REFUSED, "path contains NUL")
        if not path.startswith("/"):
            raise FsRefusal(REFUSED, f"path must be absolute: {path}")
        normal = posixpath.normpath(path)
        for root in self._roots:
            if normal == root:
                return []
            if normal.startswith(root.rstrip("/") + "/"):
                return normal[len(root.rstrip("/")) + 1:].split("/")
        raise FsRefusal(REFUSED, f"outside the workspace: {path}", escape=True)

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """Returns the text of ``path`` (lines ``line`` .. ``line + limit - 1`` when given)."""
        parts = self.relative(path)
        if not parts:
            raise FsRefusal(FAILED, f"is a directory: {path}")
        if tuple(parts) in self.buffers:
            return select_lines(self.buffers[tuple(parts)], line, limit)
        parent = self._walk(parts[:-1], path, create=False)
        try:
            fd = _open(parts[-1], os.O_RDONLY, parent, path)
            try:
                info = os.fstat(fd)
                _regular(info, path)
                if info.st_size > READ_LIMIT:
                    raise FsRefusal(FAILED, f"file too large to serve ({info.st_size} bytes, limit {READ_LIMIT}): {path}")
                data = _read_all(fd, READ_LIMIT + 1)
            finally:
                os.close(fd)
        finally:
            os.close(parent)
        if len(data) > READ_LIMIT:
            raise FsRefusal(FAILED, f"file too large to serve (limit {READ_LIMIT} bytes): {path}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FsRefusal(FAILED, f"not UTF-8 text (byte {exc.start}): {path}") from None
        return select_lines(text, line, limit)

    def write(self, path: str, content: str) -> int:
        """Creates or truncates ``path`` with ``content`` (UTF-8); returns the bytes written."""
        parts = self.relative(path)
        if not parts:
            raise FsRefusal(FAILED, f"is a directory: {path}")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise FsRefusal(REFUSED, "content is not valid Unicode (lone surrogate)") from None
        parent = self._walk(parts[:-1], path, create=self.create_parents)
        try:
            fd = _open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, parent, path)
            try:
                _regular(os.fstat(fd), path)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except OSError as exc:
                raise _refusal(exc, path) from None
            finally:
                os.close(fd)
        finally:
            os.close(parent)
        if tuple(parts) in self.buffers:
            self.buffers[tuple(parts)] = content  # the editor's buffer holds what it saved
        return len(data)

    def _walk(self, parts: list[str], path: str, *, create: bool) -> int:
        """Returns an fd of the directory ``parts`` below the root, opened component by component."""
        if self._fd is None:
            raise FsRefusal(FAILED, f"the session is over: {path}")
        try:
            now = os.stat(self.root, follow_symlinks=False)
            same = (now.st_dev, now.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            raise FsRefusal(REFUSED, f"the workspace was moved or replaced; not served: {path}", escape=True)
        fd = os.dup(self._fd)
        try:
            for part in parts:
                if create:
                    try:
                        os.mkdir(part, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                    except OSError as exc:
                        raise _refusal(exc, path) from None
                try:
                    child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    raise _refusal(exc, path, link=_is_link(part, fd)) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd


def select_lines(text: str, line: int | None, limit: int | None) -> str:
    """Returns whole lines of ``text`` from ``line`` (1-based) on, at most ``limit`` of them."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = len(lines) if limit is None else start + max(limit, 0)
    return "".join(lines[start:end])


def _open(name: str, flags: int, dir_fd: int, path: str) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(exc, path) from None


def _regular(info: os.stat_result, path: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise FsRefusal(FAILED, f"is a directory: {path}")
    if not stat.S_ISREG(info.st_mode):
        raise FsRefusal(FAILED, f"not a regular file: {path}")


def _read_all(fd: int, limit: int) -> bytes:
    chunks = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _refusal(exc: OSError, path: str, link: bool = False) -> FsRefusal:
    """Returns the reply for an OS error met while serving ``path``."""
    code = exc.errno
    if code == errno.ENOENT:
        return FsRefusal(NOT_FOUND, f"file not found: {path}")
    if code == errno.ELOOP or link:
        return FsRefusal(REFUSED, f"refusing to follow a symbolic link: {path}")
    if code == errno.EISDIR:
        return FsRefusal(FAILED, f"is a directory: {path}")
    if code == errno.ENOTDIR:
        return FsRefusal(FAILED, f"a parent is not a directory: {path}")
    if code in (errno.EACCES, errno.EPERM):
        return FsRefusal(FAILED, f"permission denied: {path}")
    if code == errno.ENXIO:
        return FsRefusal(FAILED, f"not a regular file: {path}")
    return FsRefusal(FAILED, f"{os.strerror(code) if code else exc}: {path}")


def _is_link(name: str, dir_fd: int) -> bool:
    """Returns True when ``name`` in the directory ``dir_fd`` is a symbolic link (O_DIRECTORY says ENOTDIR)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
