"""The embedded default: one SQLite file (see the parts: :mod:`.engine`, :mod:`.schema`,
:mod:`.keywords`, :mod:`.vectors`, :mod:`.eraser`). ``facts`` holds every version of
every card; the keyword index and the vectors are derived from it."""

from __future__ import annotations

from pathlib import Path

from ...index.vectors import VectorIndex, open_index
from ..core import SQLStore
from ..core.backend import MAINTENANCE
from ..core.erasure import erasure_mode
from ..core.migrate import migrate
from .engine import SQLiteEngine, SQLiteMigrations, split_sql, translate
from .eraser import SQLiteEraser
from .keywords import KeywordScorer, SQLiteKeywords
from .schema import MIGRATIONS
from .scopes import SEQ_BITS, SEQ_MASK, Scopes, fts_rowid, scope_range
from .vectors import SQLiteVectors


class SQLiteStore(SQLStore):
    """A store in one SQLite file. Thread-safe: one connection behind a re-entrant lock."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000,
                 vector_index: str | VectorIndex = "auto", erasure: str = "background") -> None:
        """``vector_index``: ``auto`` (numpy), ``numpy``, ``sqlite-vec``, or a
        :class:`~archivist.index.vectors.VectorIndex`; ``erasure``: ``background`` or
        ``inline`` (:mod:`~archivist.storage.core.erasure`)."""
        import sqlite3

        self.erasure = erasure_mode(erasure)
        self.db = SQLiteEngine(path, busy_timeout_ms=busy_timeout_ms)
        self.sql = self.db.dialect
        try:
            self._version = migrate(SQLiteMigrations(self.db.conn), MIGRATIONS, self.db.path)
        except sqlite3.Error as exc:
            self.db.close()
            raise translate(exc, self.db.path) from exc
        except BaseException:
            self.db.close()
            raise
        index = vector_index if isinstance(vector_index, VectorIndex) else open_index(vector_index, self.db.path)
        scopes = Scopes(self.db)
        self.keyword_index = SQLiteKeywords(self.db, scopes)
        self.vector_store = SQLiteVectors(self.db, scopes, index)
        self.eraser = SQLiteEraser(self.db, self.vector_store)
        self._resume_erasure()

    @property
    def vectors(self) -> VectorIndex:
        """The vector search index (numpy or sqlite-vec) over ``fact_vectors``."""
        return self.vector_store.index

    @property
    def schema_version(self) -> int:
        """How many named migration steps the file has applied."""
        return self.db.read(MAINTENANCE, "SELECT count(*) FROM archivist_migrations")[0][0]

    def integrity_check(self) -> str:
        return self.db.read(MAINTENANCE, "PRAGMA integrity_check")[0][0]


__all__ = ["MIGRATIONS", "SEQ_BITS", "SEQ_MASK", "KeywordScorer", "SQLiteStore", "fts_rowid", "scope_range",
           "split_sql"]
