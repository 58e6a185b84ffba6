"""Storage backends behind one contract (:class:`~archivist.storage.base.Store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Store


def is_dsn(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path, **options: Any) -> Store:
    """A SQLite file path, or a ``postgresql://`` DSN: the only thing that changes
    between an embedded store and a shared database."""
    if is_dsn(target):
        from .postgres import PostgresStore

        options.pop("vector_index", None)  # vectors live in the database (pgvector)
        return PostgresStore(str(target), **options)
    from .sqlite import SQLiteStore

    return SQLiteStore(target, **options)


__all__ = ["Store", "is_dsn", "open_store"]
