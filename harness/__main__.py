"""``python -m harness`` is the ``harness`` command."""

import sys

from harness.cli import entry

sys.exit(entry())
