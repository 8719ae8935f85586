"""Turns the command line of a ``cmd:`` or ``mcp:`` target spec into an argv (shared by both)."""

from __future__ import annotations

import shlex
import sys


def split_command_line(spec: str, prefix: str, example: str) -> list[str]:
    """Returns the argv after ``prefix``; ``python`` means this interpreter; ValueError names the problem."""
    if not spec.startswith(prefix):
        raise ValueError(f"not a {prefix} target: {spec!r}")
    try:
        argv = shlex.split(spec[len(prefix):])
    except ValueError as exc:
        raise ValueError(f"cannot split the command line of {spec!r}: {exc}") from None
    if not argv:
        raise ValueError(f"{prefix} needs a command line, e.g. {prefix}{example}")
    # Inside a virtualenv that was not activated, `python` on PATH is some other interpreter.
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv
