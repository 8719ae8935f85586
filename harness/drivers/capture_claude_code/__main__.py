"""``python -m harness.drivers.capture_claude_code``: see main.py."""

import sys

from harness.drivers.capture_claude_code.main import main

sys.exit(main())
