"""The ``harness`` command (``harness.cli:entry``): main.py is the entry point and the parser; run.py
``run`` (the run, its reports, snapshots, baseline and exit code); catalog_commands.py ``list``,
``lint``, ``coverage``, ``profiles``, ``show``; compare.py ``diff`` and ``report``; profile_pages.py
the profiles' reference pages; console.py the output console.

Only ``entry`` is re-exported: ``harness.cli.main`` stays the module (``main.main`` is the function), so a
dotted path such as ``harness.cli.run.PROGRESS_AFTER`` names what it says.
"""

#: The exit codes of the harness command: nothing failed, something failed (or nothing ran), bad usage.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

from harness.cli.main import entry  # noqa: E402 - after the exit codes, which main imports

__all__ = ["entry", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE"]
