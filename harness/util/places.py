"""Where the harness keeps its own files when it is not told: the defaults every layer agrees on."""

from __future__ import annotations

import os
from pathlib import Path


def default_snapshot_root() -> Path:
    """Returns the snapshot root when none is given: ``$HARNESS_SNAPSHOTS`` or ``./snapshots``."""
    return Path(os.environ.get("HARNESS_SNAPSHOTS", "snapshots"))
