"""The garbage collector kept off what lives as long as a run: ``gc.freeze``, and again at exit.

A run's full collections walk every live object, and most of them (modules, the catalog, the
targets, pytest's nodes) live as long as the run: frozen, they are left out of those walks
(forked workers then share their pages untouched). At its exit the interpreter collects the whole
heap once more; frozen, it leaves it alone, as it leaves every object still alive when a process
ends (Python never promises ``__del__`` runs then). Nothing is frozen where something already is
(a caller that froze for its own reasons) or the collector is off.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def freeze() -> bool:
    """Frees the young garbage and freezes what is alive now; returns whether it froze (False where
    the collector is off or something is frozen already)."""
    if not gc.isenabled() or gc.get_freeze_count():
        return False
    gc.collect(1)
    gc.freeze()
    return True


@contextlib.contextmanager
def frozen(*, added: bool = False) -> Iterator[None]:
    """Runs the block with what is alive before it frozen (:func:`freeze`), given back after it.

    ``added``: frozen also where something is frozen already (a block that forks workers: their
    collections then never walk the objects made since the run's own freeze, the target's modules
    imported for them, the pool's own, whose pages each walk would copy from the parent's); what
    this adds to a caller's freeze is given back with it."""
    owner = freeze()
    if not owner and added and gc.isenabled():
        gc.collect(1)
        gc.freeze()
    try:
        yield
    finally:
        if owner:
            gc.unfreeze()


_AT_EXIT: list[bool] = []


def freeze_at_exit() -> None:
    """Has the heap frozen as the process exits, after the exit handlers registered later; once per process."""
    if not _AT_EXIT:
        import atexit
        _AT_EXIT.append(True)
        atexit.register(gc.freeze)
