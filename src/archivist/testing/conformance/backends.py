"""What a spec needs from a backend: a way to open handles onto one fresh database."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ...clock import FixedClock
from ...memory import Memory
from ...storage.base import Store

T0 = "2026-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class Backend:
    """A fresh, empty database for one test. ``open`` returns a new handle (its own
    connection or pool) onto that same database each time it is called."""

    name: str
    open: Callable[[], Store]

    @contextmanager
    def memory(self, clock: FixedClock | None = None, **options: Any) -> Iterator[Memory]:
        mem = Memory(self.open(), clock=clock or FixedClock(T0), **options)
        try:
            yield mem
        finally:
            mem.close()


def sqlite_backend(path: str | Path) -> Backend:
    from ...storage.sqlite import SQLiteStore

    return Backend("sqlite", lambda: SQLiteStore(path))


def postgres_backend(dsn: str) -> Backend:
    from ...storage.postgres import PostgresStore

    return Backend("postgres", lambda: PostgresStore(dsn, max_size=4))
