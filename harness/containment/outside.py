"""Watching what a candidate can reach besides its workspace, without false escapes on a shared machine.

The canaries and the folder around each workspace (harness/containment/enclosure.py) are the harness's own:
anything that changes there is the candidate's doing. The folders a candidate can also reach --
``$HOME``, the temporary roots (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``$TMPDIR``), the folder that
holds the workspaces, the harness's working folder and its snapshot root -- are shared: other
processes create files there all the time, so "something new appeared" would blame the candidate
for what others did. Two rules attribute an entry to the candidate instead; each looks only at the
entries directly in a watched folder (not below), and only at what happened while the scenario ran:

- **a name the scenario gave**: the last component of every path the scenario passed to the
  candidate (an argument that lies in the workspace, or whose key names a path or a file). A
  candidate that resolves such a path against the wrong folder (its working folder, ``$HOME``,
  two levels up) creates or changes exactly that name there. Each watched folder is looked up for
  those names after the session closes; an entry whose ctime is newer than the session's opening
  (created, replaced or written since) is an escape.
- **the candidate's own user** (``--run-as``): an entry owned by that user, created or changed
  (ctime) since the session opened, is an escape whatever its name; no one else runs as that user.
  The harness's own folders in the folder that holds the workspaces (``harness-*``: the enclosure,
  the candidate's temporary folder, handed to that user) are left out: those that were there when
  the session opened, the same folder (device and inode) still. A ``harness-*`` entry the candidate
  makes during the session is an escape like any other.

Not seen: writes deeper than one level below a watched folder, into folders not watched, and,
without ``--run-as``, under names the scenario did not give. ``--sandbox`` prevents them instead
(docs/security.md, "Escapes").
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Iterable
from typing import Any

from harness.util.pathrules import PATH_KEYS
from harness.util.places import default_snapshot_root

#: Entries of one watched folder looked at by the ``--run-as`` rule at most (a huge /tmp stays cheap).
MAX_SCANNED = 20000
#: How far before the session opened a ctime still counts: file times come from a coarse clock.
CTIME_SLACK_NS = 20_000_000
#: The prefix of the workspace folders the harness makes (harness/run/workspace.py, Workspace).
WORKSPACE_PREFIX = "harness-"
#: Argument keys whose value is a path even when it does not lie in the workspace.


def folders(workspace_parent: str | None, home: str | None = None, snapshot_root: str | None = None) -> list[str]:
    """Returns the folders watched for a run: resolved, existing, each once; the first holds the workspaces.

    ``snapshot_root`` is the run's snapshot folder (None: the default one, harness/util/places.py).
    """
    named = [workspace_parent or tempfile.gettempdir(), os.path.expanduser("~"), home, tempfile.gettempdir(),
             os.environ.get("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm", os.getcwd(), snapshot_root or str(default_snapshot_root())]
    out: list[str] = []
    for folder in named:
        if not folder:
            continue
        real = os.path.realpath(folder)
        if real not in out and os.path.isdir(real) and real != "/":
            out.append(real)
    return out


def given_names(args: Iterable[Any], workspace: str) -> set[str]:
    """Returns the last components of the paths in the calls' ``args`` (mappings of arguments, with
    ``${workspace}`` substituted or not)."""
    names: set[str] = set()
    prefixes = (workspace + "/", "${workspace}/")

    def visit(key: str, value: Any) -> None:
        if isinstance(value, dict):
            for inner_key, inner in value.items():
                visit(str(inner_key), inner)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(key, item)
        elif isinstance(value, str) and 0 < len(value) < 4096 and "\n" not in value and "\0" not in value:
            if value.startswith(prefixes) or any(part in key.lower() for part in PATH_KEYS):
                name = os.path.basename(value.rstrip("/"))
                if name not in ("", ".", "..") and len(name.encode("utf-8", "surrogateescape")) <= 255:
                    names.add(name)

    for arg in args:
        visit("", arg)
    return names


class Watch:
    """One scenario's watch: ``begin`` before the session opens, ``end`` after it closes."""

    def __init__(self, watched: list[str], uid: int | None = None) -> None:
        self.folders = watched  # from folders(): resolved; the first is the one that holds the workspaces
        self.parent = watched[0] if watched else ""
        self.uid = uid  # the candidate's user under --run-as, else None (then only given names count)
        self._names: set[str] = set()
        self._start = 0
        self._own: set[tuple[str, int, int]] = set()  # the harness's folders present at begin (name, dev, ino)

    def begin(self, names: set[str]) -> None:
        """Notes the names the scenario's paths end with, and the time (just before the session opens)."""
        self._start = time.time_ns() - CTIME_SLACK_NS
        self._names = names
        self._own = self._harness_folders() if self.uid is not None else set()

    def _harness_folders(self) -> set[tuple[str, int, int]]:
        """Returns the ``harness-*`` folders in the folder that holds the workspaces, as they are now."""
        out: set[tuple[str, int, int]] = set()
        if not self.parent:
            return out
        try:
            with os.scandir(self.parent) as entries:
                for count, entry in enumerate(entries):
                    if count >= MAX_SCANNED:
                        break
                    if entry.name.startswith(WORKSPACE_PREFIX):
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if stat.S_ISDIR(info.st_mode):
                            out.add((entry.name, info.st_dev, info.st_ino))
        except OSError:
            pass
        return out

    def end(self) -> list[str]:
        """Returns the escapes seen since ``begin``, one line each naming the path and the rule.

        An entry created, replaced or changed since ``begin`` has a newer ctime than that (ctime is
        set by the kernel: a candidate cannot set it back); one left untouched has an older one.
        """
        found: dict[str, str] = {}
        for folder in self.folders:
            for name in self._names:
                path = f"{folder}/{name}"  # folder is resolved, name one component: no join needed
                try:
                    info = os.lstat(path)
                except (OSError, ValueError):
                    continue
                if info.st_ctime_ns >= self._start:
                    found[path] = f"created or changed {path} (named like a path the scenario gave, outside the workspace)"
        if self.uid is not None:
            for folder in self.folders:
                for path in self._owned_since(folder):
                    found.setdefault(path, f"created or changed {path} (by the candidate's user, uid {self.uid})")
        return [found[path] for path in sorted(found)]

    def _owned_since(self, folder: str) -> list[str]:
        out = []
        try:
            with os.scandir(folder) as entries:
                for count, entry in enumerate(entries):
                    if count >= MAX_SCANNED:
                        break
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if folder == self.parent and (entry.name, info.st_dev, info.st_ino) in self._own:
                        continue  # the harness's own folders (the candidate's temporary folder is that user's)
                    if info.st_uid == self.uid and info.st_ctime_ns >= self._start:
                        out.append(entry.path)
        except OSError:
            pass
        return out
