"""How every target starts a candidate's process: in the sandbox (unless the run opted out), under a keeper.

Each kind of target that starts a process (``cmd:`` and ``gemini-cli`` through
:class:`~harness.targets.channel.Channel`, ``mcp:`` stdio servers, ``acp:`` agents, ``claude-code``,
``acp:claude-code``) builds what the process may see with :func:`confine` and starts
:func:`command`'s argv: the candidate's command wrapped in bubblewrap
(harness/containment/sandbox.py) when the run is sandboxed, the whole under a keeper
(harness/util/processes.py), so its process tree ends with it. The run decides once whether it is
sandboxed (harness/run/assemble.py, :func:`decide`), never a target.

A sandbox binds its workspace writable when it is made, so a process started for one workspace
serves the scenarios of that workspace folder only. Under the sandbox the runner keeps one
workspace folder for the run (``<enclosure>/ws``, emptied between scenarios:
harness/containment/enclosure.py, ``fixed``), and a target keeps its process while
:meth:`Slot.fits` the next scenario's workspace: one sandbox per run, not one per scenario.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from harness.containment import sandbox as sandbox_mod
from harness.containment.sandbox import Sandbox, SandboxError
from harness.util import processes

__all__ = ["OPTED_OUT", "Sandbox", "SandboxError", "Slot", "command", "confine", "decide", "port_of"]

#: What the run says once when it runs unsandboxed because the user opted out.
OPTED_OUT = "sandbox: off (--no-sandbox): candidates run with the harness's user, files, network and environment"


def decide(asked: bool | None) -> tuple[bool, str | None]:
    """Returns whether the run's candidates are sandboxed, and the one line the run says about it.

    ``asked``: True for ``--sandbox``, False for ``--no-sandbox``, None when neither was given (the
    default: sandboxed wherever a sandbox can be made here). Raises ValueError (a usage error) when
    ``--sandbox`` was named and no sandbox can be made here.
    """
    if asked is False:
        return False, OPTED_OUT
    ok, why = sandbox_mod.available()
    if ok:
        return True, None
    if asked:
        raise ValueError(f"--sandbox: {why}")
    return False, f"sandbox: off, it cannot be made here ({why}); candidates run unconfined (--no-sandbox silences this)"


def confine(enabled: bool, argv: Sequence[str], *, workspace: str | os.PathLike[str] | None = None,
            tmp: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
            cwd: str | os.PathLike[str] | None = None, forward: Sequence[int] = (),
            writable: Sequence[str | os.PathLike[str]] = (),
            readable: Sequence[str | os.PathLike[str]] = ()) -> Sandbox | None:
    """Returns the sandbox ``argv`` is started in (None when the run is not sandboxed): ``workspace``
    and ``tmp`` and ``writable`` writable, ``env`` (what the target names) on top of the allowlist,
    ``forward`` the ports of the harness's own services on loopback (a fake model API)."""
    if not enabled:
        return None
    return Sandbox.around(argv, workspace=workspace, tmp=tmp, env=env, cwd=cwd, forward=forward,
                          writable=[path for path in writable if path], readable=readable)


def command(argv: Sequence[str], box: Sandbox | None, *, for_others: bool = False) -> tuple[list[str], str | None]:
    """Returns what to start for ``argv``: run in ``box`` when given, under a keeper; and the keeper's tag."""
    wrapped = box.wrap(argv, for_others=for_others) if box is not None else list(argv)
    return processes.kept(wrapped, for_others=for_others)


def port_of(url: str) -> int:
    """Returns the TCP port of a loopback URL (a fake model API's ``http://127.0.0.1:PORT``)."""
    parts = urlsplit(url)
    if parts.port is None:
        raise ValueError(f"no port in {url!r}")
    return parts.port


@dataclass(frozen=True)
class Slot:
    """The workspace folder a sandboxed process was started with (bound writable at that moment)."""

    path: str
    device: int
    inode: int

    @classmethod
    def of(cls, workspace: str | os.PathLike[str] | None) -> Slot | None:
        """Returns the slot of ``workspace`` as it is now, or None (no workspace, or gone)."""
        if workspace is None:
            return None
        path = os.path.abspath(os.fspath(workspace))
        try:
            info = os.lstat(path)
        except OSError:
            return None
        return cls(path, info.st_dev, info.st_ino)

    def fits(self, workspace: str | os.PathLike[str] | Path) -> bool:
        """Returns True when ``workspace`` is the very folder this process was started with."""
        return Slot.of(workspace) == self
