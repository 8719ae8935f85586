"""Snapshots: what a target did in one scenario, as a stable, human-readable YAML document.

Expectations say what the contract requires; a snapshot says what a target actually did, so that
any change of behaviour, and any difference between two targets, shows as a diff a person can
review. A snapshot holds, for every step: the call with its arguments and its output or error, the
events and the target's extra records, or the action the harness took; and the workspace after the
step (each entry's type and mode, the size and SHA-256 of files, the text of small text files). The
verdict is not part of it: the snapshot is behaviour, expectations live in the scenario. For an
open question the snapshot *is* the recorded answer.

Layout: one file per target and scenario, ``<root>/<target slug>/<scenario id>.yaml`` (ids are
path-like, so folders follow the catalog's). Only observations are stored: a ``skip`` or an
``error`` verdict has nothing stable to record and is neither written nor compared.

Masks -- what is volatile from run to run is replaced, so that two runs give byte-identical files:

=====================  =====================================================  =================
what                   recognised as                                          becomes
=====================  =====================================================  =================
workspace root         ``<any dir>/harness-<8 chars>/ws`` or ``…/ws-<n>``     ``${workspace}``
                       (the runner's temporary workspaces), anywhere in any
                       string or name
workspace base         ``<any dir>/harness-<8 chars>`` (holds the canaries)   ``${base}``
temporary file names   Python ``tempfile`` names ``tmp<8 chars>``; atomic-    ``tmp${random}``,
                       write names ``[.]<name>.<8+ hex digits>.tmp``          ``<name>.${random}.tmp``
UUIDs                  ``8-4-4-4-12`` hex digits                              ``${uuid}``
date-times             ISO 8601 ``2024-05-01T12:00:00[.fff][Z|+hh:mm]``       ``${time}``
                       and JavaScript's ``Sat Nov 28 2026 01:54:06 GMT+0000
                       (Coordinated Universal Time)``
time-valued keys       a key named ``time``, ``timestamp``, ``date``,         ``${time}``
                       ``mtime``/``atime``/``ctime`` (``*_ns`` too),
                       ``*_at``, ``*_time``, ``last_modified``
durations              a key named ``seconds``, ``elapsed``, ``duration``,    ``${duration}``
                       ``*_ms``, ``duration_*``, ``elapsed_*``
=====================  =====================================================  =================

Targets add masks of their own for volatile values only they produce (`register_mask`, applied
before the ones above): the ``claude-code`` target masks the scratch HOME and working directory it
gives the CLI (``${cli-home}``, ``${cli-cwd}``; harness/targets/claude_code/__init__.py).

Nothing else is masked. Version numbers (e.g. gemini-safe-patch's ``version``) are deterministic and
kept. Mapping keys inside observed values are sorted (JSON objects have no order), the document's
own keys are not. Strings longer than ``LONG_TEXT`` characters keep their first and last lines (at
most ``HEAD_CHARS``/``TAIL_CHARS`` characters) with the length and SHA-256 of the whole, so a change
anywhere still shows. File modes depend on the
umask of the machine that ran the target; snapshots are made with the usual ``022``.

Where this module's concern ends: it turns a result (``Result.as_dict()``, the JSON report's shape)
into a document, stores and compares documents. How pytest drives it lives in
``harness/pytest_plugin/syrupy.py``; what the CLI makes of a divergence lives in ``harness/cli/main.py``.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

FORMAT = 1
SUFFIX = ".yaml"
LONG_TEXT = 65536  # characters; longer strings keep head and tail lines plus length and SHA-256
HEAD_LINES, TAIL_LINES = 40, 10
HEAD_CHARS, TAIL_CHARS = 4000, 1000  # and no more characters than these (one huge line stays short)

HEADER = ("# harness snapshot (format 1): what one target did in one scenario.\n"
          "# Regenerate with `harness run --target <target> --snapshot-update`; masks: harness/record/snapshot.py\n")

#: The verdicts whose results carry an observation worth recording.
RECORDED_VERDICTS = frozenset({"pass", "fail", "recorded"})

# -- masks -------------------------------------------------------------------------------------

_BASE = re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-[a-z0-9_]{8}(?![a-z0-9_])""")
_TEXT_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A run's later workspaces beside the first ("…/ws-2") are the workspace as well.
    (re.compile(r"(\$\{base\}/ws)-[0-9]+(?![\w-])"), r"\1"),
    # "…/ws" ends where a name cannot go on: "/ws/a", "/ws'", "/ws." at a sentence's end; not "/ws2", "/ws.bak".
    (re.compile(r"\$\{base\}/ws(?![\w-]|\.\w)"), "${workspace}"),
    (re.compile(r"\btmp[a-z0-9_]{8}\b"), "tmp${random}"),
    (re.compile(r"\.[0-9a-f]{8,}\.tmp\b"), ".${random}.tmp"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "${uuid}"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b"), "${time}"),
    # JavaScript's Date#toString (the MCP filesystem server's get_file_info).
    (re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{4} "
                r"\d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^()\n]{1,64}\))?"), "${time}"),
)
_TIME_KEY = re.compile(r"^(time|timestamp|date|[mac]time(_ns)?|last_?modified|\w+_at|\w+_time)$", re.I)
_DURATION_KEY = re.compile(r"^(seconds|elapsed|duration|\w+_ms|duration_\w+|elapsed_\w+)$", re.I)


# -- target masks: volatile values a particular target puts into its messages --------------------

_TARGET_MASKS: list[tuple[re.Pattern[str], str]] = []


def register_mask(pattern: str, replacement: str) -> None:
    """Adds a target's mask (a regex and its placeholder), applied before the built-in ones; idempotent."""
    if all(known.pattern != pattern for known, _ in _TARGET_MASKS):
        _TARGET_MASKS.append((re.compile(pattern), replacement))


def mask_text(text: str) -> str:
    """Returns ``text`` with every volatile part replaced by its placeholder (see the table above)."""
    for pattern, replacement in _TARGET_MASKS:
        text = pattern.sub(replacement, text)
    if "/harness-" in text:  # the pattern backtracks on long slash-heavy text: only run it where it can match
        text = _BASE.sub("${base}", text)
    for pattern, replacement in _TEXT_MASKS:
        text = pattern.sub(replacement, text)
    return text


def normalise(value: Any, key: str | None = None) -> Any:
    """Returns a JSON-like value with masks applied, mapping keys sorted, long strings shortened."""
    if key is not None and not isinstance(value, (dict, list, tuple)) and value is not None:
        if _TIME_KEY.match(key):
            return "${time}"
        if _DURATION_KEY.match(key):
            return "${duration}"
    if isinstance(value, Mapping):
        items = ((mask_text(str(k)), normalise(v, str(k))) for k, v in value.items())
        return dict(sorted(items, key=lambda item: item[0]))
    if isinstance(value, (list, tuple)):
        return [normalise(item) for item in value]
    if isinstance(value, str):
        return _shorten(mask_text(value))
    if isinstance(value, bytes):
        return {"bytes_sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return mask_text(str(value))


def _shorten(text: str) -> Any:
    if len(text) <= LONG_TEXT:
        return text
    lines = text.splitlines(keepends=True)
    return {"long_text": {"length": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                          "lines": len(lines), "head": "".join(lines[:HEAD_LINES])[:HEAD_CHARS],
                          "tail": "".join(lines[-TAIL_LINES:])[-TAIL_CHARS:]}}


# -- the document ------------------------------------------------------------------------------

def is_recordable(result: Mapping[str, Any]) -> bool:
    """Returns True when a result (JSON shape) carries an observation worth a snapshot."""
    return result.get("verdict") in RECORDED_VERDICTS


def document(result: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the snapshot document of one result given in the JSON report's shape."""
    doc: dict[str, Any] = {"scenario": result["id"], "profile": result.get("profile", "")}
    for key in ("title", "source", "open_question"):
        if result.get(key):
            doc[key] = result[key]
    steps = []
    previous: tuple[int, Any] | None = None
    for number, step in enumerate(result.get("steps", ()), start=1):
        entry, workspace = _step(number, step)
        if workspace is not None:
            if previous is not None and previous[1] == workspace:
                entry["workspace"] = f"same as after step {previous[0]}"
            else:
                entry["workspace"] = workspace
                previous = (number, workspace)
        steps.append(entry)
    doc["steps"] = steps
    if previous is None and result.get("workspace") is not None:
        doc["workspace"] = _workspace(result["workspace"])  # no per-step states: the final one
    return doc


def _step(number: int, step: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    entry: dict[str, Any] = {"step": number}
    if step.get("name"):
        entry["name"] = step["name"]
    extra = dict(step.get("extra") or {})
    workspace = extra.pop("workspace", None)
    if "action" in step:
        entry["action"] = step["action"]
        for key, value in step.items():
            if key not in ("action", "name", "failures", "extra"):
                entry[key] = normalise(value, key)
    else:
        entry["tool"] = step["tool"]
        entry["args"] = normalise(step.get("args", {}))
        if step.get("error") is not None:
            entry["error"] = normalise(step["error"])
        else:
            entry["output"] = normalise(step.get("output"))
        if step.get("events") is not None:
            entry["events"] = normalise(step["events"])
        if extra:
            entry["extra"] = normalise(extra)
    return entry, (_workspace(workspace) if workspace is not None else None)


_ENTRY_ORDER = ("type", "mode", "size", "sha256", "target", "unreadable", "text")


def _workspace(state: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for rel in sorted(state):
        entry = state[rel]
        shaped = {key: entry[key] for key in _ENTRY_ORDER if key in entry}
        shaped.update({key: entry[key] for key in sorted(entry) if key not in shaped})
        if "text" in shaped:
            shaped["text"] = mask_text(shaped["text"])
        if "target" in shaped:
            shaped["target"] = mask_text(shaped["target"])
        out[mask_text(rel)] = shaped
    return out


class _Dumper(yaml.SafeDumper):
    """Our own dumper (PyYAML's globals stay untouched): block text for multi-line strings."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # indent list items under their key, for readability


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text and text.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def render(doc: Mapping[str, Any]) -> str:
    """Returns the document as YAML text, the header comment first."""
    body = yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)
    return HEADER + body


def serialise(result: Mapping[str, Any]) -> str:
    """Returns the snapshot text of a result in the JSON report's shape."""
    return render(document(result))


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # reading may use libyaml; writing never does (stability)
METADATA = ("scenario", "profile", "title", "source", "open_question")


def parse(text: str) -> dict[str, Any]:
    """Returns the document of a snapshot file's text."""
    return yaml.load(text, Loader=_LOADER) or {}


def stored_behaviour(text: str) -> dict[str, Any] | None:
    """Returns the behaviour part of a stored snapshot's text, or None when it is no snapshot document
    (not YAML, nested past the cap, not a mapping): then only its text is compared, and differs."""
    from harness.scenario import static_checks
    if static_checks.depth_problem(text):
        return None
    try:
        doc = parse(text)
    except (yaml.YAMLError, RecursionError):
        return None
    return behaviour(doc) if isinstance(doc, dict) else None


def behaviour(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the behaviour part of a document: everything but the scenario's own words (see ``body``)."""
    return {key: value for key, value in doc.items() if key not in METADATA}


def body(text: str) -> str:
    """Returns the behaviour part of a snapshot's text: from ``steps:`` on (what comparisons look at).

    The scenario's own words (title, source, the question) are kept in the file for a reader and for
    reports, but editing them is not a change of behaviour.
    """
    start = text.find("\nsteps:")
    return text[start + 1:] if start >= 0 else text


# -- storage -----------------------------------------------------------------------------------

class SnapshotUnreadable(OSError):
    """A stored snapshot that is not read or written: a link, not a regular file, too big, not UTF-8."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EPERM, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


#: How a stored snapshot is opened: never through a link, never blocking on a FIFO.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class SnapshotStore:
    """One target's snapshot folder: ``<root>/<slug>/<scenario id>.yaml``.

    The root is the user's (``--snapshots``, ``$HARNESS_SNAPSHOTS`` or ``./snapshots``); what lies
    below it comes with a checkout, from anyone who sent a pull request. Files below the root are
    read, written and removed by a walk from the root that follows no link leading out of it
    (harness/util/safepath.py), only a regular file is read or replaced, and no more than the file cap is
    read: a snapshot that is a link to a secret, or a folder that is a link to ``/etc``, is never
    read or written through (:class:`SnapshotUnreadable`, shown as that scenario's snapshot failure).
    """

    root: Path
    slug: str

    @property
    def folder(self) -> Path:
        """Returns the folder holding this target's snapshots."""
        return Path(self.root) / self.slug

    def path(self, scenario_id: str) -> Path:
        """Returns the file of one scenario's snapshot."""
        parts = [_bounded(part) for part in scenario_id.split("/")]
        parts[-1] += SUFFIX
        return self.folder.joinpath(*parts)

    def _rel(self, scenario_id: str) -> str:
        return self.path(scenario_id).relative_to(self.root).as_posix()

    def read(self, scenario_id: str) -> str | None:
        """Returns the stored text, or None when there is none; raises SnapshotUnreadable."""
        return read_below(self.root, self._rel(scenario_id))

    def write(self, scenario_id: str, text: str) -> bool:
        """Stores ``text``; returns True when the file changed (or is new); raises SnapshotUnreadable."""
        from harness.util.safepath import resolve
        if self.read(scenario_id) == text:
            return False
        rel = self._rel(scenario_id)
        root = Path(self.root)
        _not_a_link(root)
        root.mkdir(parents=True, exist_ok=True)  # the user's folder: made as named
        try:
            with resolve(os.path.abspath(root), rel, follow_last=False, create_parents=True,
                         what="the snapshot folder") as at:
                fd = os.open(at.name, _WRITE_FLAGS, 0o666, dir_fd=at.dir_fd)
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise SnapshotUnreadable(f"{root / rel}: not a regular file: not written")
                    os.ftruncate(fd, 0)
                    data = text.encode("utf-8")
                    while data:
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)
        except SnapshotUnreadable:
            raise
        except OSError as exc:
            raise SnapshotUnreadable(f"{root / rel}: not written: {_why(exc)}") from None
        return True

    def ids(self) -> list[str]:
        """Returns the ids of every stored snapshot, sorted."""
        return folder_ids(self.folder)

    def remove(self, scenario_id: str) -> None:
        """Removes one snapshot (a regular file, never through a link), and the folders it leaves empty."""
        from harness.util.safepath import resolve
        root = os.path.abspath(self.root)
        parts = self._rel(scenario_id).split("/")
        try:
            with resolve(root, "/".join(parts), follow_last=False, what="the snapshot folder") as at:
                if at.name and stat.S_ISREG(os.lstat(at.name, dir_fd=at.dir_fd).st_mode):
                    os.unlink(at.name, dir_fd=at.dir_fd)
            for depth in range(len(parts) - 1, 1, -1):  # the folders below <slug>, deepest first
                with resolve(root, "/".join(parts[:depth]), follow_last=False, what="the snapshot folder") as at:
                    os.rmdir(at.name, dir_fd=at.dir_fd)  # refuses a link, and a folder not empty
        except OSError:
            return


#: Longest file or folder name a snapshot path uses; a longer id part keeps its start and a hash.
MAX_NAME = 100
_HASHED = re.compile(r"-[0-9a-f]{12}$")


def _bounded(part: str) -> str:
    """Returns ``part`` when short enough, else its first 80 characters and 12 hex digits of its SHA-256."""
    if len(part.encode("utf-8")) <= MAX_NAME:
        return part
    return part[:80] + "-" + hashlib.sha256(part.encode("utf-8")).hexdigest()[:12]


def folder_ids(folder: Path) -> list[str]:
    """Returns the scenario ids of the snapshot files under ``folder``, sorted.

    A file whose name was shortened (see :func:`_bounded`) names its id in its ``scenario:`` line.
    """
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink() or folder.parent.is_symlink():
        return []  # a linked root or target folder is not walked (see SnapshotStore)
    out = []
    for path in folder.rglob(f"*{SUFFIX}"):  # rglob walks into no linked folder
        if path.is_symlink() or not path.is_file():
            continue
        found = path.relative_to(folder).as_posix()[: -len(SUFFIX)]
        if any(_HASHED.search(part) for part in found.split("/")):
            try:
                text = read_below(folder, found + SUFFIX) or ""
            except SnapshotUnreadable:
                text = ""
            for line in text.splitlines()[:64]:
                if line.startswith("scenario: "):
                    found = line[len("scenario: "):].strip().strip("'\"")
                    break
        out.append(found)
    return sorted(out)


def read_below(root: Path | str, rel: str) -> str | None:
    """Returns the text of the regular file ``rel`` below ``root`` (walked without leaving it through a
    link), None when it does not exist; raises SnapshotUnreadable for anything else."""
    from harness.util import limits
    from harness.util.safepath import read_capped, resolve
    where = Path(root) / rel
    _not_a_link(root)
    try:
        # The root as named: opened without following a link there either (a checkout's ./snapshots).
        with resolve(os.path.abspath(root), rel, follow_last=False, what="the snapshot folder") as at:
            if not at.name:
                raise SnapshotUnreadable(f"{where}: not a regular file: not read")
            fd = os.open(at.name, _READ_FLAGS, dir_fd=at.dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except SnapshotUnreadable:
        raise
    except OSError as exc:
        raise SnapshotUnreadable(f"{where}: not read: {_why(exc)}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotUnreadable(f"{where}: not a regular file: not read")
        data = read_capped(handle, info.st_size, limits.MAX_SCENARIO_FILE)  # never the whole cap reserved
    if len(data) > limits.MAX_SCENARIO_FILE:
        raise SnapshotUnreadable(f"{where}: more than {limits.MAX_SCENARIO_FILE} bytes "
                                 "(HARNESS_MAX_SCENARIO_FILE): not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotUnreadable(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start}): not read") from None


def _not_a_link(root: Path | str) -> None:
    """Raises SnapshotUnreadable when the snapshot root is a symbolic link (a checkout can bring
    ``./snapshots`` as one): it is not followed, for reading or writing."""
    if os.path.islink(root):
        raise SnapshotUnreadable(f"{root}: the snapshot folder is a symbolic link, not followed "
                                 "(name the folder it leads to with --snapshots)")


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link, not followed"
    if exc.errno == errno.ENXIO:
        return "not a regular file (a FIFO no one reads)"
    return str(exc) if not exc.strerror else exc.strerror


def default_root() -> Path:
    """Returns the snapshot root of the CLI: ``$HARNESS_SNAPSHOTS`` or ``./snapshots``."""
    import os
    return Path(os.environ.get("HARNESS_SNAPSHOTS", "snapshots"))


# -- comparing ---------------------------------------------------------------------------------

def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """Returns the unified diff of two snapshot texts, empty when their behaviours (``body``) agree."""
    if body(old) == body(new):
        return ""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name, n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class Check:
    """What comparing (or updating) one run's snapshots found."""

    diverged: dict[str, str] = field(default_factory=dict)  # id -> unified diff
    matched: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # no stored snapshot (written when updating)
    written: list[str] = field(default_factory=list)  # changed or created by an update
    orphans: list[str] = field(default_factory=list)  # stored, but no scenario has that id
    removed: list[str] = field(default_factory=list)  # orphans removed by an update
    refused: dict[str, str] = field(default_factory=dict)  # id -> why its file was not read or written
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Returns True when a stored snapshot disagrees with what was observed, or was not read or written."""
        return bool(self.diverged or self.refused)


class Checker:
    """Compares (or, with ``update``, writes) one target's snapshots as its results come (``add``).

    Each result is compared the moment it is given and not kept; only what differs (its diff) and the
    ids seen are. ``finish`` lists (and, with ``prune``, removes) the orphans and returns the
    :class:`Check`.
    """

    def __init__(self, store: SnapshotStore, *, update: bool = False) -> None:
        self.store, self.update = store, update
        self.out = Check()

    def add(self, result: Mapping[str, Any]) -> None:
        """Compares (or writes) the snapshot of one result in the JSON report's shape."""
        import time
        started = time.perf_counter()
        try:
            self._add(result)
        finally:
            self.out.seconds += time.perf_counter() - started

    def _add(self, result: Mapping[str, Any]) -> None:
        if not is_recordable(result):
            return
        store, out = self.store, self.out
        scenario_id = result["id"]
        doc = document(result)
        try:
            stored = store.read(scenario_id)
            for former in result.get("former_ids") or () if stored is None else ():
                stored = store.read(former) if isinstance(former, str) else None  # renamed: its old snapshot
                if stored is not None:
                    break
        except SnapshotUnreadable as exc:
            out.refused[scenario_id] = str(exc)
            return
        # The common case, a match, is decided on data (libyaml parses fast); the pure-Python emitter
        # only runs to write a file or to show a difference.
        if stored is not None and not self.update and stored_behaviour(stored) == behaviour(doc):
            out.matched.append(scenario_id)
            return
        if stored is None and not self.update:  # nothing to compare with and nothing to write: no text needed
            out.new.append(scenario_id)
            return
        text = render(doc)
        if self.update:
            try:
                changed = store.write(scenario_id, text)
            except SnapshotUnreadable as exc:
                out.refused[scenario_id] = str(exc)
                return
            if changed:
                out.written.append(scenario_id)
                if stored is None:
                    out.new.append(scenario_id)
            else:
                out.matched.append(scenario_id)
        elif body(stored) == body(text):
            out.matched.append(scenario_id)
        else:
            where = store.path(scenario_id).as_posix()
            out.diverged[scenario_id] = unified_diff(stored, text, f"{where} (stored)", f"{where} (observed)")

    def finish(self, known_ids: Iterable[str], *, prune: bool = False) -> Check:
        """Lists the stored snapshots no id of ``known_ids`` (the catalog's) matches, removes them when
        updating with ``prune``; returns what the whole check found."""
        import time
        started = time.perf_counter()
        out = self.out
        known = set(known_ids)
        out.orphans = [scenario_id for scenario_id in self.store.ids() if scenario_id not in known]
        if self.update and prune:
            for scenario_id in out.orphans:
                self.store.remove(scenario_id)
            out.removed = list(out.orphans)
        out.seconds += time.perf_counter() - started
        return out


def check(store: SnapshotStore, results: Iterable[Mapping[str, Any]], known_ids: Iterable[str], *,
          update: bool = False, prune: bool = False) -> Check:
    """Compares (or, with ``update``, writes) the snapshots of ``results`` (JSON shape).

    ``known_ids`` are all the catalog's ids: a stored snapshot with another id is an orphan, listed,
    and removed when ``update`` and ``prune`` are both given.
    """
    checker = Checker(store, update=update)
    for result in results:
        checker.add(result)
    return checker.finish(known_ids, prune=prune)
