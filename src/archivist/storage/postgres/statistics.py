"""The planner's statistics after bulk writes.

Autovacuum re-samples a table a minute or more after it grew, and until then PostgreSQL
plans for the few rows it last counted: a batch's signature look-up walked a scope's
5,000 rows (6.5 ms) instead of its indexes (0.7 ms). So once a store's transactions have
inserted :data:`ANALYZE_AFTER` rows, and a fifth of the rows ``facts`` held at the last
count, the tables bulk writes grow are analyzed again, on a thread of their own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

ANALYZE_AFTER = 1_000
FINISH_WITHIN = 5.0  # seconds closing a store gives a running ANALYZE before cancelling it
#: held by an eraser's purge (its REINDEX and ANALYZE) and tried by the ANALYZE after bulk
#: writes: the two never run together, and no statistics sampled before a forget outlive
#: the purge that follows it
STATISTICS_LOCK = 0x61726369

log = logging.getLogger("archivist.storage.postgres")


def analyze_unless_purging(tables: str) -> str:
    """ANALYZE ``tables`` unless an eraser's purge holds the statistics lock (then it is
    skipped: the purge analyzes anyway). The lock is a transaction lock in one statement,
    so the server drops it as the ANALYZE ends, whatever becomes of the client (a session
    lock outlived a stopped process and held every forget's erasure), and it is tried, never
    waited for (waiting beside a purge's REINDEX CONCURRENTLY deadlocked)."""
    return (f"DO $$ BEGIN IF pg_try_advisory_xact_lock({STATISTICS_LOCK}) THEN ANALYZE {tables}; END IF; END $$")


class PlannerStatistics:
    def __init__(self, connect: Callable[[], Any], path: str) -> None:
        self.connect, self.path = connect, path
        self.grown, self.analyze_at = 0, ANALYZE_AFTER
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._conn: Any = None  # the running ANALYZE's connection
        self._closed = False

    def grew(self, rows: int) -> None:
        """A transaction committed ``rows`` new fact rows."""
        with self._lock:
            self.grown += rows
            if self.grown < self.analyze_at or self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            self.grown = 0
            self._thread = threading.Thread(target=self._analyze, name="archivist-analyze", daemon=True)
            self._thread.start()

    def _analyze(self) -> None:
        """An optimisation: a failure is logged and left to autovacuum."""
        try:
            with self.connect() as conn:
                self._conn = conn
                conn.execute(analyze_unless_purging("facts, fact_terms, term_stats"))
                rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'facts'::regclass").fetchone()[0]
                self.analyze_at = max(ANALYZE_AFTER, int(rows) // 5)
        except Exception as exc:  # noqa: BLE001
            log.info("%s: ANALYZE after bulk writes failed or was cancelled: %s", self.path, exc)
        finally:
            self._conn = None

    def close(self) -> None:
        """Let a running ANALYZE finish (an import that closes at once still leaves its
        statistics), cancel it after :data:`FINISH_WITHIN` seconds (one waiting for a table
        another session holds), and wait for its connection to close: it must not outlive
        the store (a DROP DATABASE after closing would wait on it)."""
        with self._lock:
            self._closed, thread = True, self._thread
        if thread is None:
            return
        thread.join(timeout=FINISH_WITHIN)
        conn = self._conn
        if thread.is_alive() and conn is not None:
            conn.cancel_safe(timeout=5)
        thread.join(timeout=30)
