"""The ``--sandbox`` command line of a ``cmd:`` candidate: :class:`harness.containment.sandbox.Sandbox`.

The candidate sees its workspace and its temporary folder writable, the folder around the
workspace (the canaries' enclosure) and the folders of its own command read-only, the rest of the
file system read-only with the shared temporary folders and sockets covered; it has no capability,
no network but its own loopback, and only the environment the target names. Because the writable
path is fixed when the sandbox is made, a sandboxed candidate is started once per scenario rather
than once per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.containment import sandbox


def bwrap_path() -> str:
    """Returns the path of ``bwrap``; raises ValueError (bad usage) when no sandbox can be made here."""
    ok, why = sandbox.available()
    if not ok:
        raise ValueError(f"--sandbox: {why}")
    return sandbox.bwrap_path()


def wrap(bwrap: str, argv: list[str], *, writable: Path | None, tmp: str | None = None,
         env: Mapping[str, str] | None = None, cwd: str | None = None) -> list[str]:
    """Returns ``argv`` run in the sandbox with ``writable`` (the workspace) and ``tmp`` writable and
    ``env`` (what the target names: ``--run-as``'s user, the spec's) on top of the allowlist."""
    del bwrap  # the sandbox finds its own
    # The working folder the run gives the candidate (harness/run/working_folder.py) is writable too: a
    # relative-path write lands there and is reported as what it is, as without the sandbox.
    return sandbox.Sandbox.around(argv, workspace=writable, tmp=tmp, env=env, cwd=cwd,
                                  writable=[cwd] if cwd else []).wrap(argv)
