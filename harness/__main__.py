"""``python -m harness`` is the ``harness`` command."""

import sys

from harness.cli.main import entry

sys.exit(entry())
