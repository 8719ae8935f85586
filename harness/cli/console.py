"""What every command of the ``harness`` CLI shares for its output: the ``--color`` option and the console
it chooses (rich is imported only when a command prints)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def add_color(parser: argparse.ArgumentParser) -> None:
    """Adds --color: auto (colour on a terminal unless NO_COLOR is set), always, never."""
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output: auto (on a terminal, unless NO_COLOR is set), always, never")


def make_console(color: str = "auto", **kwargs: Any) -> Any:
    """Returns the console for a command's output, coloured as ``--color`` says.

    ``auto`` leaves it to rich: colour on a terminal, none when NO_COLOR is set or output is piped;
    ``always`` forces colour (and terminal output) even then; ``never`` prints plain text.
    The console is made (and rich imported, about 16 ms) when something is printed, not before.
    """
    return _Console(color, kwargs)


class _Console:
    """A rich console made at its first use; whether it writes to a terminal is told without rich
    where the answer is certainly no (``harness run``'s progress bar asks before the run)."""

    def __init__(self, color: str, kwargs: dict[str, Any]) -> None:
        self._color, self._kwargs = color, kwargs
        self._made: Any = None

    def made(self) -> Any:
        """The rich console itself, for what rich does with it (a progress bar enters it as a context)."""
        return self._console()

    def _console(self) -> Any:
        if self._made is None:
            from rich.console import Console  # imported here: `harness list` and `lint` never load rich
            kwargs = {"highlight": False, **self._kwargs}
            if self._color == "always":
                self._made = Console(force_terminal=True, no_color=False, **kwargs)
            elif self._color == "never":
                self._made = Console(no_color=True, color_system=None, **kwargs)
            else:
                self._made = Console(**kwargs)
        return self._made

    @property
    def is_terminal(self) -> bool:
        file = self._kwargs.get("file") or (sys.stderr if self._kwargs.get("stderr") else sys.stdout)
        if self._made is None and self._color != "always" and not _may_be_terminal(file):
            return False
        return bool(self._console().is_terminal)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console(), name)


def _may_be_terminal(file: Any) -> bool:
    """False only where rich's Console would certainly say it writes to no terminal: nothing in the
    environment says otherwise (TTY_COMPATIBLE, FORCE_COLOR: https://force-color.org/) and the file
    is not a tty."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    isatty = getattr(file, "isatty", None)
    try:
        return isatty is not None and bool(isatty())
    except ValueError:  # closed
        return False
