"""Storage backends behind one contract (:class:`~archivist.storage.base.Store`), opened
by URL scheme. A new backend is a folder here (engine, schema, keyword index, vectors,
eraser under :class:`~archivist.storage.core.SQLStore`) and one entry in :data:`BACKENDS`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import StoreError, StoreNotFound
from .base import Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")  # two letters at least: C:\ is a drive


def _sqlite(target: str | Path, options: dict[str, Any]) -> Store:
    from .sqlite import SQLiteStore

    if isinstance(target, str) and scheme(target) == "sqlite":
        path = target[len("sqlite:"):]
        if not path.startswith("//") or not path[2:]:
            raise StoreError(f"{target!r}: a SQLite URL is sqlite://PATH (sqlite:///abs/path.db)")
        target = path[2:]
    if str(target) in ("/:memory:", "//:memory:"):  # sqlite:///:memory: means the in-memory store, not a file at /
        target = ":memory:"
    if not options.pop("create", True) and str(target) != ":memory:" and (
            not Path(target).is_file() or Path(target).stat().st_size == 0):  # an empty file is no store either
        raise StoreNotFound(f"no store at {target}: create it with `archivist init --db {target}`, "
                            "or name the store you meant (--db, $ARCHIVIST_DB)")
    return SQLiteStore(target, **options)


def _postgres(target: str, options: dict[str, Any]) -> Store:
    from .postgres import PostgresStore

    name = scheme(target)
    if not target[len(name) + 1:].startswith("//"):
        raise StoreError(f"{target.split('@')[-1]!r}: a PostgreSQL DSN is postgresql://[user@]host/dbname")
    options.pop("vector_index", None)  # vectors live in the database (pgvector)
    options.pop("create", None)  # a database is created by its administrator, never here
    return PostgresStore(name + target[len(name):], **options)


#: URL scheme → opener; a target without a scheme is a SQLite file path
BACKENDS: dict[str, Callable[[str, dict[str, Any]], Store]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "postgres": _postgres,
}


def scheme(target: str | Path) -> str | None:
    """The URL scheme of ``target``, lower-cased (None: a file path; a ``Path`` always is)."""
    match = _SCHEME.match(target.strip()) if isinstance(target, str) else None
    return match.group(1).lower() if match else None


def is_dsn(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than a SQLite file."""
    return scheme(target) in ("postgresql", "postgres")


def open_store(target: str | Path, **options: Any) -> Store:
    """A SQLite file path (or ``sqlite://PATH``), or a ``postgresql://`` DSN: the only
    thing that changes between an embedded store and a shared database. A string that
    starts like another scheme (``mysql:``, ``file:``) is an error, never a file of that
    name: a file whose name has a colon is written ``./name:with:colons.db``.
    ``create=False`` raises :class:`~archivist.errors.StoreNotFound` instead of creating
    a SQLite file that does not exist (what a command that only reads wants)."""
    if isinstance(target, Path):  # always a file, whatever its name looks like
        return _sqlite(target, options)
    target = target.strip()
    name = scheme(target)
    if name is None:
        if not target:
            raise StoreError("no store given: a file path, sqlite://PATH or postgresql://…")
        return _sqlite(target, options)
    if name not in BACKENDS:
        raise StoreError(f"no storage backend for {name}: (known: {', '.join(sorted(BACKENDS))}, or a file path; "
                         "a file whose name has a colon is written ./name)")
    return BACKENDS[name](target, options)


__all__ = ["BACKENDS", "Store", "is_dsn", "open_store", "scheme"]
