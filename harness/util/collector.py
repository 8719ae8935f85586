"""The garbage collector kept off what lives as long as a run: ``gc.freeze``, and again at exit.

A run's full collections walk every live object, and most of them (modules, the catalog, the
targets, pytest's nodes) live as long as the run: frozen, they are left out of those walks
(forked workers then share their pages untouched). At its exit the interpreter collects the whole
heap once more; frozen, it leaves it alone, as it leaves every object still alive when a process
ends (Python never promises ``__del__`` runs then). Nothing is frozen where something already is
(a caller that froze for its own reasons) or the collector is off. While ``harness`` starts (its
imports, its arguments, the catalog) the collector is held off (:func:`hold`): its collections
there walked what all lives as long as the run, and found next to nothing (about 10 ms of a start
of 110 ms; an uncached catalog leaves some 500 objects of garbage to the freeze).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Whether the collector is off because :func:`hold` put it off (not a caller of ours).
_HELD: list[bool] = []


def hold() -> None:
    """Puts the collector off while a process starts (its imports, its arguments, the catalog: what
    lives as long as the run, where its collections only walk what stays), until :func:`freeze`
    freezes it all or :func:`release` gives the collector back. Where it is off already, nothing."""
    if gc.isenabled() and not _HELD:
        gc.disable()
        _HELD.append(True)


def release() -> None:
    """Puts the collector back on if :func:`hold` put it off."""
    if _HELD:
        _HELD.clear()
        gc.enable()


def freeze() -> bool:
    """Frees the young garbage and freezes what is alive now; returns whether it froze (False where
    the collector is off or something is frozen already). After :func:`hold`, everything made
    since is frozen as it is (a collection would walk all of it, the cost the hold spared) and the
    collector is back on."""
    if _HELD:
        _HELD.clear()
        frozen = not gc.get_freeze_count()
        if frozen:
            gc.freeze()
        gc.enable()
        return frozen
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
