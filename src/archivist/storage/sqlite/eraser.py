"""How SQLite makes forgotten text unrecoverable from its files: ``secure_delete``
zeroes deleted rows' bytes; the keyword index is merged into fresh segments (its old
pages then zeroed too); the WAL, which still holds pages written before, is truncated;
forgetting a user also VACUUMs the file. A sqlite-vec sidecar this process is not using
is cleaned as well."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...errors import StoreError, StoreLocked
from ..core.backend import Eraser
from .engine import SQLiteEngine, translate

WAL_BUSY = "wal not truncated (readers active; forget again later)"


class SQLiteEraser(Eraser):
    def __init__(self, db: SQLiteEngine, vectors) -> None:
        self.db, self.vectors = db, vectors

    def after_forget(self, tables, *, whole_user):
        return None if self._purge(vacuum=whole_user) else WAL_BUSY

    def purge(self, *, full=False):
        """Forgetting already zeroes and truncates here; ``full`` also VACUUMs the file
        (compacting it) and truncates the WAL."""
        if not full:
            return []
        if not self._purge(vacuum=True):
            raise StoreLocked(f"{self.db.path}: the WAL is still read by another connection; purge again later")
        return ["database file", "wal"]

    def _purge(self, *, vacuum: bool) -> bool:
        """False while another connection reads: the WAL keeps old pages until reset.
        A file is erased on a connection of its own, so the store's connection goes on
        serving reads meanwhile (WAL); an in-memory store has only the one."""
        db = self.db
        if db.path == ":memory:":
            with db.lock:
                return self._erase_on(db.conn, vacuum=vacuum)
        conn = sqlite3.connect(db.name, isolation_level=None, check_same_thread=False, timeout=db.busy_timeout_s)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(db.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA secure_delete = ON")  # per connection: the merged-away pages are zeroed
            return self._erase_on(conn, vacuum=vacuum)
        finally:
            conn.close()

    def _erase_on(self, conn: sqlite3.Connection, *, vacuum: bool) -> bool:
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if vacuum:
                conn.execute("VACUUM")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:
            raise translate(exc, self.db.path) from exc
        try:
            self._purge_sidecar()
        except Exception as exc:  # noqa: BLE001 - apsw and OS errors of a file this store does not use
            raise StoreError(f"{self.db.path}: the vector sidecar could not be purged ({type(exc).__name__}: {exc})") from exc
        return not busy

    def _purge_sidecar(self) -> None:
        """A sqlite-vec sidecar this process is not using may still hold forgotten vectors."""
        from ...index.vectors import SqliteVecIndex, sidecar_path, sqlite_vec_available

        path = sidecar_path(self.db.path)
        if isinstance(self.vectors.index, SqliteVecIndex) or path == ":memory:" or not Path(path).exists():
            return
        if sqlite_vec_available():
            other = SqliteVecIndex(path)
            try:
                other.forget(0)
            finally:
                other.close()
        else:  # derived data: without the extension nothing can have it open, so remove it
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)
