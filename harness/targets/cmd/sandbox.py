"""The ``--sandbox`` command line: the candidate sees the whole file system read-only but its workspace.

Built on bubblewrap (``bwrap``, Debian package ``bubblewrap``; ``make sandbox-tools`` installs it).
The candidate runs in its own mount namespace where ``/`` is bound read-only, ``/dev`` and
``/proc`` are fresh, the folder around the workspace is bound read-only again from the host (it may
lie below ``/dev``, as on ``/dev/shm``), and only the scenario's workspace (and the run's temporary
folder it was given as ``TMPDIR``) is bound read-write at the same path, so
the paths in scenarios and answers are the same inside and out. A write anywhere else fails with
``EROFS`` inside the sandbox instead of landing on the host. Because the writable path is fixed
when the sandbox is made, a sandboxed candidate is started once per scenario rather than once per run.
"""

from __future__ import annotations

import shutil
from pathlib import Path


def bwrap_path() -> str:
    """Returns the path of ``bwrap``; raises ValueError (bad usage) when it is not installed."""
    path = shutil.which("bwrap")
    if path is None:
        raise ValueError("--sandbox needs bubblewrap (bwrap); install it with `make sandbox-tools`")
    return path


def wrap(bwrap: str, argv: list[str], *, writable: Path | None, tmp: str | None = None) -> list[str]:
    """Returns ``argv`` run under bubblewrap with everything but ``writable`` (and the candidate's
    temporary folder ``tmp``, the run's, removed after it) read-only."""
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if tmp is not None:
        command += ["--bind", tmp, tmp]
    if writable is not None:
        # The folder around the workspace (the canaries' enclosure) read-only first: under a path that
        # `--dev` or `--proc` replaces (workspaces on /dev/shm, harness run's default) it would
        # otherwise sit in the sandbox's own writable tmpfs, where a write beside the workspace
        # succeeds unseen; bound from the host it is the real enclosure, and such a write fails.
        command += ["--ro-bind", str(writable.parent), str(writable.parent)]
        command += ["--bind", str(writable), str(writable)]
    command += ["--unshare-pid", "--die-with-parent", "--new-session", "--", *argv]
    return command
