"""SQLite's vectors: rows in ``fact_vectors`` (the authority for the derived index),
grouped by scope id, with a per-scope version; the search index
(:mod:`archivist.index.vectors`: numpy or sqlite-vec) hears of a change after its
transaction commits, and rebuilds a scope it has not seen at the current version."""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ...errors import EmbedderMismatch
from ...index.vectors import VectorIndex
from ...model import Status
from ..core.backend import MAINTENANCE, Access, VectorStore
from ..rows import N_FACT_COLUMNS, fact_from_row
from .engine import SQLiteEngine
from .keywords import live_rows
from .scopes import Scopes


def _sweep_while_open(vectors: weakref.ref[SQLiteVectors], closed: threading.Event) -> None:
    """Sweep until the store is closed, or dropped unclosed (the thread holds no reference)."""
    while not closed.wait(SWEEP_SECONDS):
        store = vectors()
        if store is None:
            return
        try:
            store.sweep()
        except Exception:  # noqa: BLE001 - the store is closing, or busy: the next round retries
            pass
        del store


# The version a scope loaded inside an open transaction is cached under (committed ones are >= 0).
UNCOMMITTED = -1
# How often a process holding cached vectors looks for another process's forgets.
SWEEP_SECONDS = 2.0


class SQLiteVectors(VectorStore):
    def __init__(self, db: SQLiteEngine, scopes: Scopes, index: VectorIndex) -> None:
        self.db, self.scopes, self.index = db, scopes, index
        self._forgets_seen: tuple | None = None
        self._closed = threading.Event()
        self._sweeper: threading.Thread | None = None

    def sweep(self) -> None:
        """Drop the cached scopes the store has moved past once a forget was committed
        (by any process): another process's forget must not leave the forgotten vectors
        in this one's memory until its next search of that scope. Every forget commits
        an erasure job, so a new job is the sign to compare versions."""
        cached = self.index.cached_versions()
        if not cached:
            return
        forgets = tuple(self.db.read(MAINTENANCE, "SELECT count(*), max(created_at) FROM erasure_jobs")[0])
        if forgets == self._forgets_seen:
            return
        ids, current = list(cached), {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            current.update(self.db.read(MAINTENANCE, "SELECT scope_id, version FROM vector_versions WHERE scope_id IN "
                                                     f"({', '.join('?' * len(chunk))})", chunk))
        for scope_id, version in cached.items():
            if current.get(scope_id) != version:
                self.index.drop_cached(scope_id)
        self._forgets_seen = forgets

    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            self._sweeper = threading.Thread(target=_sweep_while_open, args=(weakref.ref(self), self._closed),
                                             name="archivist-vector-sweep", daemon=True)
            self._sweeper.start()

    seq_column, vector_column = "seq", "vector"

    def decode(self, value):
        return np.frombuffer(value, dtype=np.float32)

    def _bump(self, scope_id: int, *, upserts=(), deletes=()) -> None:
        """Advance the scope's vector version; the index hears of the change after commit."""
        new = self.db.write(MAINTENANCE, "INSERT INTO vector_versions VALUES (?, 1) ON CONFLICT (scope_id) "
                                         "DO UPDATE SET version = version + 1 RETURNING version", (scope_id,)).fetchone()[0]
        change = (scope_id, new - 1, new, list(upserts), list(deletes))
        self.db.after_commit(lambda: self.index.apply(*change))

    def put(self, model, dim, rows):
        """Store vectors of committed facts; refuses a model other than the store's."""
        db = self.db
        with db.transaction():
            current = db.write(MAINTENANCE, "SELECT model, dim FROM vector_meta WHERE id = 1").fetchone()
            if current is None:
                db.write(MAINTENANCE, "INSERT INTO vector_meta VALUES (1, ?, ?)", (model, dim))
            elif tuple(current) != (model, dim):
                raise EmbedderMismatch(model, dim, current[0], current[1])
            written, scopes = 0, {}
            for fact, vector in rows:
                i = fact.identity
                row = db.write(Access.of(i), "SELECT seq FROM facts WHERE id = ? AND tenant = ? AND user_id = ? "
                                             "AND agent = ? AND status IN ('committed', 'episode')",
                               (fact.id, i.tenant, i.user, i.agent)).fetchone()
                if row is None:
                    continue
                scope_id = self.scopes.id(i, create=True)
                vector = np.asarray(vector, dtype=np.float32)
                db.write(MAINTENANCE, "INSERT OR REPLACE INTO fact_vectors VALUES (?, ?, ?)",
                         (row[0], scope_id, vector.tobytes()))
                scopes.setdefault(scope_id, []).append((row[0], vector))
                written += 1
            for scope_id, upserts in scopes.items():
                self._bump(scope_id, upserts=upserts)
            return written

    def remove(self, identity, seq, *, erase):
        if not self.db.write(MAINTENANCE, "DELETE FROM fact_vectors WHERE seq = ?", (seq,)).rowcount:
            return 0
        scope_id = self.scopes.id(identity, create=True)
        self._bump(scope_id, deletes=[seq])
        if erase:
            self.db.after_commit(lambda: self.index.erase(scope_id))  # no cached matrix keeps the forgotten vector
        return 1

    def remove_user(self, tenant, user):
        removed = 0
        for scope_id in self.scopes.of_user(tenant, user):
            removed += self.db.write(MAINTENANCE, "DELETE FROM fact_vectors WHERE scope_id = ?", (scope_id,)).rowcount
            # bumped, not deleted: a scope id can be given again to a new user, whose
            # versions must never equal one an index cached for the forgotten one
            self.db.write(MAINTENANCE, "UPDATE vector_versions SET version = version + 1 WHERE scope_id = ?",
                          (scope_id,))
            self.db.after_commit(lambda s=scope_id: self.index.forget(s))
        return removed

    def drop(self):
        """Forget every vector and the model they came from (before a re-embed)."""
        with self.db.transaction():
            self.db.write(MAINTENANCE, "DELETE FROM fact_vectors")
            self.db.write(MAINTENANCE, "DELETE FROM vector_meta")
            self.db.write(MAINTENANCE, "UPDATE vector_versions SET version = version + 1")
        self.index.clear()

    def _scope_matrix(self, scope_id: int) -> tuple[int, np.ndarray, np.ndarray]:
        """(version, seqs, float32 matrix) of one scope, read in one snapshot."""
        conn = self.db.conn
        with self.db.snapshot():
            version = conn.execute("SELECT version FROM vector_versions WHERE scope_id = ?", (scope_id,)).fetchone()
            rows = conn.execute("SELECT seq, vector FROM fact_vectors WHERE scope_id = ? ORDER BY seq",
                                (scope_id,)).fetchall()
            meta = conn.execute("SELECT dim FROM vector_meta WHERE id = 1").fetchone()
        dim = meta[0] if meta else 0
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        # writable: a forget blanks its row in place (index.vectors.ScopeCache.changed)
        matrix = np.frombuffer(bytearray(b"".join(r[1] for r in rows)), dtype=np.float32).reshape(len(rows), dim) \
            if rows else np.zeros((0, dim), dtype=np.float32)
        return (version[0] if version else 0), seqs, matrix

    def search(self, identity, query, *, limit, live_at, statuses=(Status.COMMITTED,)):
        scope_id = self.scopes.id(identity)
        if scope_id is None:
            return []
        query = self.query_vector(query)
        if query is None:
            return []
        self.sweep()
        self._start_sweeper()
        version = self.db.read(MAINTENANCE, "SELECT version FROM vector_versions WHERE scope_id = ?", (scope_id,))
        version = version[0][0] if version else 0
        # what an open transaction wrote may yet be rolled back: what it loads is kept
        # under a version no committed state has, so it is reloaded once outside
        uncommitted = self.db.in_transaction

        def load():
            loaded, seqs, matrix = self._scope_matrix(scope_id)
            return (UNCOMMITTED if uncommitted else loaded), seqs, matrix
        fetch = limit
        while True:
            hits = self.index.top_k(scope_id, version, load, query, fetch)
            if not hits:
                return []
            wanted = dict(hits)
            rows = live_rows(self.db, identity, wanted, live_at, statuses)
            if len(rows) >= limit or len(hits) < fetch:
                rows.sort(key=lambda r: (-wanted[r[N_FACT_COLUMNS]], r[N_FACT_COLUMNS]))
                return [(fact_from_row(r), wanted[r[N_FACT_COLUMNS]]) for r in rows[:limit]]
            fetch *= 4

    def close(self):
        self._closed.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=10)
        self.index.close()
