"""The reference adapter as the user ``nobody`` can run it, for the --run-as tests.

The venv's interpreter lives under /root (mode 0700 here), so ``nobody`` runs the system python3
with the reference and its one dependency on PYTHONPATH. When the checkout itself sits in a folder
``nobody`` cannot traverse (a clone in a home folder or a ``mktemp -d``), the two packages are
copied once into a folder every user can read, so the tests run from any clone location.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path


def reachable_by_others(path: Path) -> bool:
    """Returns True when every folder down to ``path`` is searchable by other users."""
    path = Path(path).resolve()
    for folder in [path, *path.parents]:
        try:
            if not folder.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def code_for_others(packages: list[Path]) -> Path:
    """Returns a folder every user can read holding a copy of ``packages`` (package folders)."""
    folder = Path(tempfile.mkdtemp(prefix="harness-run-as-code-"))
    for package in packages:
        shutil.copytree(package, folder / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    for dirpath, _dirnames, filenames in os.walk(folder):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return folder


@functools.cache
def _python_path() -> str:
    import unidiff

    import reference_impl
    packages = [Path(reference_impl.__file__).parent, Path(unidiff.__file__).parent]
    if all(reachable_by_others(package) for package in packages):
        return os.pathsep.join(str(package.parent) for package in packages)
    folder = code_for_others(packages)
    atexit.register(shutil.rmtree, folder, True)  # once per test process, gone with it
    return str(folder)


def reference_for_nobody() -> tuple[str, dict[str, str]] | None:
    """Returns the cmd: spec and environment of the reference for ``nobody``, or None when impossible."""
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    if os.geteuid() != 0 or python is None or not reachable_by_others(Path(python)):
        return None
    try:
        import pwd
        pwd.getpwnam("nobody")
    except KeyError:
        return None
    return f"cmd:{python} -m reference_impl.serve", dict(os.environ, PYTHONPATH=_python_path())
