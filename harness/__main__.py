"""``python -m harness`` is the ``harness`` command."""

import sys

from harness.cli import main

sys.exit(main())
