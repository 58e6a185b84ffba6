"""PostgreSQL's vectors: pgvector, HNSW (cosine) with iterative index scans, so a
filtered scope still gets ``k`` results."""

from __future__ import annotations

import numpy as np

from ...errors import EmbedderMismatch, StoreError
from ...model import Identity, Status
from ..core.backend import MAINTENANCE, Access, VectorStore
from .engine import PostgresEngine
from .keywords import top_then_facts


class PostgresVectors(VectorStore):
    def __init__(self, db: PostgresEngine, *, ef_search: int = 100) -> None:
        self.db, self.ef_search = db, ef_search

    seq_column, vector_column = "fact_seq", "embedding"

    def decode(self, value):
        return np.asarray(value.to_numpy(), dtype=np.float32)

    def _ensure_model(self, model: str, dim: int) -> None:
        """Record the store's model and give the column its dimension and an HNSW index
        (DDL: done once, as the owner, in its own transaction)."""
        if self.model() is not None:
            return
        with self.db.connect() as conn, conn.transaction():
            conn.execute("LOCK TABLE vector_meta IN EXCLUSIVE MODE")
            if conn.execute("SELECT 1 FROM vector_meta").fetchone():
                return
            conn.execute("INSERT INTO vector_meta VALUES (1, %s, %s)", (model, int(dim)))
            conn.execute(f"ALTER TABLE fact_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
            conn.execute("CREATE INDEX fact_vectors_hnsw ON fact_vectors USING hnsw (embedding vector_cosine_ops)")

    def put(self, model, dim, rows):
        if not self.db.in_transaction:
            self._ensure_model(model, dim)
        with self.db.transaction():
            current = self.db.write(MAINTENANCE, "SELECT model, dim FROM vector_meta WHERE id = 1").fetchone()
            if current is None:
                raise StoreError("internal: vectors written inside a transaction before the store knew their model")
            if tuple(current) != (model, dim):
                raise EmbedderMismatch(model, dim, current[0], current[1])
            by_scope: dict[Identity, list[tuple]] = {}
            for fact, vector in rows:
                i = fact.identity
                by_scope.setdefault(Identity(i.tenant, i.user, i.agent), []).append(
                    (np.asarray(vector, dtype=np.float32), fact.id, i.tenant, i.user, i.agent))
            return sum(self.db.write_many(
                Access.of(identity),
                "INSERT INTO fact_vectors (fact_seq, tenant, user_id, agent, embedding) SELECT seq, tenant, user_id, "
                "agent, ? FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ? "
                "AND status IN ('committed', 'episode') ON CONFLICT (fact_seq) DO UPDATE SET embedding = excluded.embedding",
                params) for identity, params in by_scope.items())

    def remove(self, identity, seq, *, erase):
        return self.db.write(Access.of(identity), "DELETE FROM fact_vectors WHERE fact_seq = ?", (seq,)).rowcount

    def remove_user(self, tenant, user):
        return self.db.write(Access(tenant, user), "DELETE FROM fact_vectors WHERE tenant = ? AND user_id = ?",
                             (tenant, user)).rowcount

    def search(self, identity, query, *, limit, live_at, statuses=(Status.COMMITTED,)):
        query = self.query_vector(query)
        if query is None:
            return []
        ef = min(max(self.ef_search, 4 * int(limit)), 1000)
        hits = top_then_facts(
            self.db, identity,
            "SELECT fact_seq, embedding <=> ? AS score FROM fact_vectors WHERE tenant = ? AND user_id = ? "
            "AND agent = ? ORDER BY embedding <=> ?, fact_seq LIMIT ?",
            [query, identity.tenant, identity.user, identity.agent, query], limit, live_at, best_first=False,
            # iterative scans: the index keeps walking until enough rows pass the scope filter
            prelude=("SELECT set_config('hnsw.iterative_scan', 'strict_order', true), "
                     "set_config('hnsw.ef_search', %s, true)", (str(ef),)), statuses=statuses,
        )
        return [(fact, 1.0 - distance) for fact, distance in hits]

    def drop(self):
        """Forget every vector and the model they came from (before a re-embed)."""
        with self.db.connect() as conn, conn.transaction():
            conn.execute("SELECT set_config('archivist.maintenance', 'on', true)")
            conn.execute("DELETE FROM fact_vectors")
            conn.execute("DELETE FROM vector_meta")
            conn.execute("DROP INDEX IF EXISTS fact_vectors_hnsw")
            conn.execute("ALTER TABLE fact_vectors ALTER COLUMN embedding TYPE vector")
