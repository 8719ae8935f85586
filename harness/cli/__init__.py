"""The ``harness`` command (``harness.cli:entry``): main.py builds the parser and runs ``run``, ``list``,
``lint``, ``show``...; compare.py ``diff`` and ``report``; postrun.py what follows a run (snapshots, baseline,
Markdown and HTML); profile_pages.py the profiles' reference pages; console.py the output console.

Only ``entry`` is re-exported: ``harness.cli.main`` stays the module (``main.main`` is the function), so a
dotted path such as ``harness.cli.main.PROGRESS_AFTER`` names what it says.
"""

from harness.cli.main import entry

__all__ = ["entry"]
