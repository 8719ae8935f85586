"""What every command of the ``harness`` CLI shares for its output: the ``--color`` option and the console
it chooses (rich is imported only when a command prints)."""

from __future__ import annotations

import argparse
from typing import Any


def add_color(parser: argparse.ArgumentParser) -> None:
    """Adds --color: auto (colour on a terminal unless NO_COLOR is set), always, never."""
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output: auto (on a terminal, unless NO_COLOR is set), always, never")


def make_console(color: str = "auto", **kwargs: Any) -> Any:
    """Returns the console for a command's output, coloured as ``--color`` says.

    ``auto`` leaves it to rich: colour on a terminal, none when NO_COLOR is set or output is piped;
    ``always`` forces colour (and terminal output) even then; ``never`` prints plain text.
    """
    from rich.console import Console  # imported here: `harness list` and `lint` never load rich
    kwargs.setdefault("highlight", False)
    if color == "always":
        return Console(force_terminal=True, no_color=False, **kwargs)
    if color == "never":
        return Console(no_color=True, color_system=None, **kwargs)
    return Console(**kwargs)
