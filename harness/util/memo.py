"""Answers remembered per object: what the runner asks about a scenario, a step or an expectation
every time it runs it (their objects live as long as the loaded catalog)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

#: Entries one memo keeps at most; past it, it starts again (each answer is cheap to work out anew).
SIZE = 65536

Answer = TypeVar("Answer")


def by_identity(compute: Callable[..., Answer]) -> Callable[..., Answer]:
    """Returns ``compute`` remembering its answer per identity of its first argument (and the value
    of the others, which must be hashable). The entry holds the object, so its identity is not
    reused while the answer is kept."""
    memo: dict[tuple[Any, ...], tuple[Any, Answer]] = {}

    @functools.wraps(compute)
    def remembered(value: Any, *rest: Any) -> Answer:
        key = (id(value), *rest)
        known = memo.get(key)
        if known is not None and known[0] is value:
            return known[1]
        answer = compute(value, *rest)
        if len(memo) >= SIZE:
            memo.clear()
        memo[key] = (value, answer)
        return answer

    return remembered
