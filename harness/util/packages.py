"""Imports a package's submodules without first running the package's own ``__init__``.

A package's ``__init__`` runs before any submodule of it is imported. The MCP SDK's imports all of
the SDK (its servers, their HTTP stack: about 0.6 s of processor time), where a client needs
three submodules. :func:`deferred_init` puts the package in place with its ``__init__`` not yet
run: its submodules import as usual, and the first use of any other name of the package runs the
``__init__`` then, so ``from mcp import ClientSession`` anywhere else still works.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

_lock = threading.Lock()


def deferred_init(*names: str) -> None:
    """Registers each package of ``names`` (parents first) with its ``__init__`` deferred; one
    already imported, or not found, is left as it is."""
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            continue
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = _initialiser(module, spec)  # type: ignore[method-assign]
        sys.modules[name] = module


def _initialiser(module: Any, spec: Any) -> Any:
    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # probes such as __wrapped__ or __path__ do not need the package's names
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
        with _lock:
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)
        return getattr(module, attr)
    return __getattr__
