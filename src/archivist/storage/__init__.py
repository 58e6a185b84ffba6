"""Storage backends behind one contract (:class:`~archivist.storage.base.Store`), opened
by URL scheme. A new backend is a folder here (engine, schema, keyword index, vectors,
eraser under :class:`~archivist.storage.core.SQLStore`) and one entry in :data:`BACKENDS`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .base import Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _sqlite(target: str, options: dict[str, Any]) -> Store:
    from .sqlite import SQLiteStore

    path = target.removeprefix("sqlite://") if target.startswith("sqlite://") else target
    return SQLiteStore(path, **options)


def _postgres(target: str, options: dict[str, Any]) -> Store:
    from .postgres import PostgresStore

    options.pop("vector_index", None)  # vectors live in the database (pgvector)
    return PostgresStore(target, **options)


#: URL scheme → opener; a target without a scheme is a SQLite file path
BACKENDS: dict[str, Callable[[str, dict[str, Any]], Store]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "postgres": _postgres,
}


def scheme(target: str | Path) -> str | None:
    """The URL scheme of ``target`` (None: a file path)."""
    match = _SCHEME.match(target) if isinstance(target, str) else None
    return match.group(1).lower() if match else None


def is_dsn(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a SQLite file."""
    return scheme(target) in ("postgresql", "postgres")


def open_store(target: str | Path, **options: Any) -> Store:
    """A SQLite file path (or ``sqlite:///path``), or a ``postgresql://`` DSN: the only
    thing that changes between an embedded store and a shared database. Another scheme
    is an error, never a file of that name."""
    name = scheme(target)
    if name is None:
        return _sqlite(str(target), options)
    if name not in BACKENDS:
        raise StoreError(f"no storage backend for {name}:// (known: {', '.join(sorted(BACKENDS))}, or a file path)")
    return BACKENDS[name](str(target), options)


__all__ = ["BACKENDS", "Store", "is_dsn", "open_store", "scheme"]
