"""The reference adapter as the user ``nobody`` can run it, for the --run-as tests.

The venv's interpreter lives under /root (mode 0700 here), so ``nobody`` runs the system python3
with the reference and its one dependency on PYTHONPATH.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def reference_for_nobody() -> tuple[str, dict[str, str]] | None:
    """Returns the cmd: spec and environment of the reference for ``nobody``, or None when impossible."""
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    if os.geteuid() != 0 or python is None:
        return None
    try:
        import pwd
        pwd.getpwnam("nobody")
    except KeyError:
        return None
    import reference_impl
    import unidiff
    paths = [str(Path(reference_impl.__file__).parents[1]), str(Path(unidiff.__file__).parents[1])]
    return f"cmd:{python} -m reference_impl.serve", dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
