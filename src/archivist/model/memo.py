"""A per-arguments cache for the gate's pure readings of a text, which answers computed
elsewhere can be put into.

The write gate reads each text several times in one write (screening, recognition,
signatures), so each reading is kept per text, as ``functools.lru_cache`` would. The
difference is :meth:`Memo.seed`: a large batch is read partly in helper processes
(:mod:`archivist.pipeline.batch_reading`), and their answers are put here so the write
that follows finds them as if this process had read the texts itself.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_MISSING = object()


def _nothing_awaited(memo: Memo, args: tuple) -> bool:
    return False


# Set by :mod:`archivist.pipeline.batch_reading` while helpers read a batch: waits for the
# answer to ``memo(*args)`` if a helper is computing it, and says whether it did.
awaited: Callable[[Memo, tuple], bool] = _nothing_awaited


def await_with(wait_for: Callable[[Memo, tuple], bool]) -> None:
    """Let a miss wait for an answer another process is computing (see :data:`awaited`)."""
    global awaited
    awaited = wait_for


class Memo(Generic[T]):
    """``fn`` with its answers kept for the last ``maxsize`` argument tuples (oldest first
    out). Only for pure functions of hashable positional arguments."""

    def __init__(self, fn: Callable[..., T], maxsize: int) -> None:
        self.fn = fn
        self.maxsize = maxsize
        self._kept: dict[tuple, T] = {}
        functools.update_wrapper(self, fn)
        _ALL.add(self)

    def __call__(self, *args: Any) -> T:
        try:
            return self._kept[args]
        except KeyError:
            pass
        if awaited(self, args):  # a helper was reading it: its answer is in now (unless the helper failed)
            kept = self._kept.get(args, _MISSING)
            if kept is not _MISSING:
                return kept
        value = self.fn(*args)
        self.seed(args, value)
        return value

    def __contains__(self, args: tuple) -> bool:
        return args in self._kept

    def seed(self, args: tuple, value: T) -> None:
        """Keep ``value`` as the answer for ``args`` (computed by the same function elsewhere)."""
        kept = self._kept
        if len(kept) >= self.maxsize:
            kept.pop(next(iter(kept), None), None)  # another thread may have taken it: either way one goes
        kept[args] = value

    def cache_clear(self) -> None:
        self._kept.clear()


_ALL: weakref.WeakSet[Memo] = weakref.WeakSet()


def clear_all() -> None:
    """Forget every kept answer in this process (a benchmark reading the same texts again)."""
    for kept in list(_ALL):
        kept.cache_clear()


def memo(maxsize: int) -> Callable[[Callable[..., T]], Memo[T]]:
    """Decorator: ``@memo(8192)`` keeps a pure function's answers per arguments."""
    return lambda fn: Memo(fn, maxsize)


__all__ = ["Memo", "await_with", "clear_all", "memo"]
