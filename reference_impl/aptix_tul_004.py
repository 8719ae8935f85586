"""Reference implementation of DDR TUL-004, the Aptix ``workspace_create_file`` client tool.

Follows ``shared/seeds/002-aptix-tul-004-create-file.md`` section by section: the request of §4.2
is validated (§5.1 step 1), the path normalised and confined to the workspace root (§5.1 step 2,
§5.2), an existing file refused unless ``overwrite`` (step 3), the size limit of §5.3 enforced,
parents created (step 4), the content written as UTF-8 without BOM with ``\\n`` line endings through
a temporary file and a rename (step 5, §5.4), hashed (step 6) and reported in the §4.3 payload
(step 7), together with the §6.2 client event ``Tool.CreateFile.Executed``.

The normal form is always ``{"output": <payload>, "events": [<event>]}``: TUL-004 reports failures
inside its payload (``success: false`` and an ``errorCode``), never as a protocol error.

Session options (all optional):

``max_size``
    Maximum file size in bytes (§5.3), compared with the final bytes as they would be written
    (after BOM and line-ending normalisation). ``None`` (the default) means no limit.
``hash``
    The ``hashlib`` algorithm of the content hash. The seed names only "the canonical Aptix content
    hash algorithm"; the reference takes ``sha256`` (lower-case hex digest) until the real one is
    known. Variable-length algorithms (``shake_*``) are refused.
``session_id``, ``conversation_id``, ``turn_id``
    The ids carried by the §6.2 event; defaults ``"session-1"``, ``"conversation-1"``, ``"turn-1"``.

Choices where the seed is silent (each is an ``open_question`` scenario in the catalog):

- A missing or non-string ``path`` is ``InvalidPath`` ("Path is invalid"); a missing or non-string
  ``content`` and a non-boolean ``overwrite`` are ``UnhandledException``, the only canonical code
  left for a malformed request. ``overwrite: null`` counts as omitted. Content that cannot be encoded as UTF-8 (lone surrogates) is
  ``UnhandledException`` too.
- Leading U+FEFF characters in ``content`` are dropped: the file must be "UTF-8 without BOM"
  (§3.3, §5.1), and its first bytes must never read as one.
- ``\\r\\n`` and then a lone ``\\r`` become ``\\n``.
- A path that normalises to the root itself (``.``, ``a/..``) or ends in a separator names no file:
  ``InvalidPath``. A path holding NUL is ``InvalidPath``.
- Symbolic links are resolved; a path whose resolution leaves the root is ``InvalidPath``. A link
  inside the root is followed, so the link stays and its target is written; the response ``path``
  is still the lexically normalised request path.
- Anything already at the path (also a directory) is ``FileExists`` without ``overwrite``; with
  ``overwrite`` a directory cannot be replaced (``WriteFailed``), nor can an existing file the
  process may not write (checked with ``os.access``; an atomic rename would otherwise ignore it).
- The size limit is checked after ``FileExists`` and before any directory is created.
- On failure nothing the call created is left behind: the temporary file is removed, and so are
  the parent directories this call created. ``sizeBytes`` is 0, ``hash`` null, ``created`` and
  ``overwritten`` false, and ``path`` the normalised path when normalisation got that far, else the
  request's path (``""`` when it was not a string). ``HashFailed`` is the exception: the content is
  written (§5.3: "Content written but hash computation failed"), so ``sizeBytes`` and ``created``
  tell what is on disk.
- An overwritten file keeps its permission bits; a new file gets ``0666`` less the umask.

Only plain ``os``/``open`` calls touch the disk, so the module runs unchanged on pyfakefs.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from typing import Any

from reference_impl import UnknownTool

TOOLS = ("workspace_create_file",)

EVENT_NAME = "Tool.CreateFile.Executed"

DEFAULT_OPTIONS: dict[str, Any] = {
    "max_size": None,
    "hash": "sha256",
    "session_id": "session-1",
    "conversation_id": "conversation-1",
    "turn_id": "turn-1",
}

# §5.3 canonical error codes.
FILE_EXISTS = "FileExists"
INVALID_PATH = "InvalidPath"
DIRECTORY_CREATE_FAILED = "DirectoryCreateFailed"
WRITE_FAILED = "WriteFailed"
TOO_LARGE = "TooLarge"
HASH_FAILED = "HashFailed"
UNHANDLED_EXCEPTION = "UnhandledException"

_DRIVE = re.compile(r"^[A-Za-z]:")
_BOM = "\ufeff"


class ToolFailure(Exception):
    """A §5.3 failure: carries the canonical error code and the short message for the payload."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Outcome:
    """What one call did, gathered as the steps of §5.1 run."""

    path: str = ""
    overwrite: Any = False
    size: int = 0
    digest: str | None = None
    created: bool = False
    overwritten: bool = False
    made_dirs: list[str] = field(default_factory=list)


class Session:
    """One Aptix client session rooted at ``workspace``."""

    def __init__(self, workspace: str, options: dict | None = None) -> None:
        self.options = {**DEFAULT_OPTIONS, **(options or {})}
        unknown = set(self.options) - set(DEFAULT_OPTIONS)
        if unknown:
            raise ValueError(f"unknown aptix-tul-004 options: {sorted(unknown)}")
        max_size = self.options["max_size"]
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 0):
            raise ValueError(f"max_size must be a non-negative integer or null, not {max_size!r}")
        try:
            probe = hashlib.new(self.options["hash"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"unknown hash algorithm {self.options['hash']!r}") from exc
        if probe.digest_size == 0:
            raise ValueError(f"hash algorithm {self.options['hash']!r} has no fixed digest length")
        self.root = os.path.realpath(workspace)

    def call(self, tool: str, args: dict) -> dict:
        """Runs one tool call and returns ``{"output": <§4.3 payload>, "events": [<§6.2 event>]}``."""
        if tool not in TOOLS:
            raise UnknownTool(tool)
        outcome = _Outcome()
        try:
            message = self._create_file(args if isinstance(args, dict) else {}, outcome)
            payload = _payload(True, message, outcome, None)
        except ToolFailure as failure:
            payload = _payload(False, failure.message, outcome, failure.code)
        except Exception:  # noqa: BLE001 - §5.3 "UnhandledException — Unexpected error."
            _remove_dirs(outcome.made_dirs)
            payload = _payload(False, "Unexpected error.", outcome, UNHANDLED_EXCEPTION)
        return {"output": payload, "events": [self._event(payload, outcome)]}

    # §5.1 core behaviour, steps 1-7.

    def _create_file(self, args: dict, outcome: _Outcome) -> str:
        raw_path = args.get("path")
        outcome.path = raw_path if isinstance(raw_path, str) else ""
        overwrite = args.get("overwrite", False)
        if overwrite is None:
            overwrite = False
        outcome.overwrite = overwrite

        # Step 1: validate input.
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolFailure(INVALID_PATH, "Path must be a non-empty relative path.")
        content = args.get("content")
        if not isinstance(content, str):
            raise ToolFailure(UNHANDLED_EXCEPTION, "Content must be a string (it may be empty).")
        if not isinstance(overwrite, bool):
            raise ToolFailure(UNHANDLED_EXCEPTION, "Overwrite must be true or false.")

        # Step 2: normalise and validate the path (§5.2).
        relative = normalize_path(raw_path)
        outcome.path = relative
        target = self._resolve(relative)

        # Encode now: the size limit and the write both concern the final bytes.
        data = final_bytes(content)

        # Step 3: check for an existing file.
        existed = os.path.lexists(target)
        if existed and not overwrite:
            raise ToolFailure(FILE_EXISTS, f"File already exists (set overwrite to true to replace it): {relative}")
        if existed and os.path.isdir(target):
            raise ToolFailure(WRITE_FAILED, f"A directory cannot be replaced by a file: {relative}")
        if existed and not os.access(target, os.W_OK, effective_ids=True):  # as this process writes, not its real user
            raise ToolFailure(WRITE_FAILED, f"File is not writable: {relative}")

        # §5.3 size limit: nothing is written.
        max_size = self.options["max_size"]
        if max_size is not None and len(data) > max_size:
            raise ToolFailure(TOO_LARGE, f"Content is {len(data)} bytes; the limit is {max_size} bytes.")

        # Step 4: ensure parent directories exist.
        parent = os.path.dirname(target)
        try:
            _make_dirs(parent, outcome.made_dirs)
        except OSError:
            _remove_dirs(outcome.made_dirs)
            raise ToolFailure(DIRECTORY_CREATE_FAILED, f"Could not create the parent directory of: {relative}") from None

        # Step 5: write atomically (§5.4).
        try:
            _atomic_write(target, data, keep_mode_of=target if existed else None)
        except OSError as exc:
            _remove_dirs(outcome.made_dirs)
            raise ToolFailure(WRITE_FAILED, _write_failure_message(exc, relative)) from None
        outcome.size = len(data)
        outcome.created = not existed

        # Step 6: hash the final bytes as written.
        try:
            outcome.digest = self._hash(data)
        except Exception:  # noqa: BLE001 - any failure here is HashFailed by definition
            raise ToolFailure(HASH_FAILED, f"Content was written but its hash could not be computed: {relative}") from None

        # Step 7: populate the result.
        outcome.overwritten = existed
        return "File overwritten." if existed else "File created."

    def _resolve(self, relative: str) -> str:
        """Returns the absolute target of ``relative``, refusing resolutions outside the root (§5.2)."""
        lexical = os.path.join(self.root, *relative.split("/"))
        resolved = os.path.realpath(lexical)
        if not _inside(resolved, self.root) or resolved == self.root:
            raise ToolFailure(INVALID_PATH, f"Path resolves outside the workspace root: {relative}")
        return resolved

    def _hash(self, data: bytes) -> str:
        """Returns the content hash of ``data`` (lower-case hex) with the configured algorithm."""
        return hashlib.new(self.options["hash"], data).hexdigest()

    # §6.2 client-side logging.

    def _event(self, payload: dict, outcome: _Outcome) -> dict:
        """Returns the ``Tool.CreateFile.Executed`` event for one call."""
        return {
            "name": EVENT_NAME,
            "fields": {
                "SessionId": self.options["session_id"],
                "ConversationId": self.options["conversation_id"],
                "TurnId": self.options["turn_id"],
                "Path": payload["path"],
                "Overwrite": outcome.overwrite,
                "Success": payload["success"],
                "ErrorCode": payload["errorCode"],
                "SizeBytes": payload["sizeBytes"],
                "Hash": payload["hash"],
            },
        }


def normalize_path(raw: str) -> str:
    """Returns ``raw`` as a root-relative path with ``/`` separators, or raises InvalidPath (§5.2)."""
    if "\x00" in raw:
        raise ToolFailure(INVALID_PATH, "Path must not contain NUL characters.")
    path = raw.replace("\\", "/")
    # Absolute POSIX paths, and UNC roots (\\server\share and //server/share) start with "/".
    if path.startswith("/"):
        raise ToolFailure(INVALID_PATH, f"Path must be relative to the workspace root, not absolute: {raw}")
    if _DRIVE.match(path):
        raise ToolFailure(INVALID_PATH, f"Path must not name a drive: {raw}")
    if path.endswith("/"):
        raise ToolFailure(INVALID_PATH, f"Path names a directory, not a file: {raw}")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise ToolFailure(INVALID_PATH, f"Path escapes the workspace root: {raw}")
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise ToolFailure(INVALID_PATH, f"Path names the workspace root, not a file: {raw}")
    normal = "/".join(parts)
    if _DRIVE.match(normal):  # a/../C:x would become a drive-relative path once normalised
        raise ToolFailure(INVALID_PATH, f"Path must not name a drive: {raw}")
    return normal


def final_bytes(content: str) -> bytes:
    """Returns ``content`` as written: no leading BOM, ``\\n`` line endings, UTF-8 (§5.1 step 5)."""
    content = content.lstrip(_BOM)  # all of them: a second U+FEFF would be a BOM once the first is gone
    content = content.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolFailure(UNHANDLED_EXCEPTION, "Content is not valid Unicode text.") from None


def _payload(success: bool, message: str, outcome: _Outcome, code: str | None) -> dict:
    """Returns the §4.3 response payload with every field."""
    return {
        "success": success,
        "message": message,
        "path": outcome.path,
        "sizeBytes": outcome.size,
        "hash": outcome.digest,
        "created": outcome.created,
        "overwritten": outcome.overwritten if success else False,
        "errorCode": code,
    }


def _inside(path: str, root: str) -> bool:
    """Returns True when ``path`` is ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _make_dirs(directory: str, made: list[str]) -> None:
    """Creates ``directory`` and its missing ancestors, recording each one created in ``made``."""
    missing: list[str] = []
    current = directory
    while not os.path.isdir(current):
        if os.path.lexists(current):
            raise FileExistsError(errno.EEXIST, "not a directory", current)
        missing.append(current)
        current = os.path.dirname(current)
    for path in reversed(missing):
        os.mkdir(path)
        made.append(path)


def _remove_dirs(made: list[str]) -> None:
    """Removes the directories this call created, deepest first, where they are still empty."""
    for path in reversed(made):
        try:
            os.rmdir(path)
        except OSError:
            break
    made.clear()


def _atomic_write(target: str, data: bytes, keep_mode_of: str | None) -> None:
    """Writes ``data`` to a temporary file beside ``target`` and renames it over ``target``."""
    directory, name = os.path.split(target)
    temp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
    mode = stat.S_IMODE(os.stat(keep_mode_of).st_mode) if keep_mode_of is not None else 0o666
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            _close_quietly(fd)
        if keep_mode_of is not None:
            os.chmod(temp, mode)  # the umask applied at creation
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _close_quietly(fd: int) -> None:
    """Closes ``fd``; a failure here matters only after a failed write, which is reported already."""
    try:
        os.close(fd)
    except OSError:
        pass


def _write_failure_message(exc: OSError, relative: str) -> str:
    """Returns a short WriteFailed message that names the cause class, never low-level detail."""
    causes = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on device",
        errno.EDQUOT: "disk quota exceeded",
    }
    cause = causes.get(exc.errno or 0, "I/O error")
    return f"Could not write ({cause}): {relative}"
