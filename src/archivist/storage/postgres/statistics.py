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
#: one ANALYZE at a time: the eraser's (a forget's) comes after one begun before the forget,
#: so no statistics sampled before a forget outlive it
STATISTICS_LOCK = 0x61726369

log = logging.getLogger("archivist.storage.postgres")


def locked(analyze: str) -> str:
    """``analyze`` under the statistics lock, as one string: one implicit transaction that
    the server ends, lock and all, as the ANALYZE ends, whatever becomes of the client
    (a session lock outlived a stopped process and held every forget's erasure)."""
    return f"SELECT pg_advisory_xact_lock({STATISTICS_LOCK}); {analyze}"


class PlannerStatistics:
    def __init__(self, connect: Callable[[], Any], path: str) -> None:
        self.connect, self.path = connect, path
        self.grown, self.analyze_at = 0, ANALYZE_AFTER
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
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
                conn.execute(locked("ANALYZE facts, fact_terms, term_stats"))
                rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'facts'::regclass").fetchone()[0]
                self.analyze_at = max(ANALYZE_AFTER, int(rows) // 5)
        except Exception as exc:  # noqa: BLE001
            log.info("%s: ANALYZE after bulk writes failed: %s", self.path, exc)

    def close(self) -> None:
        """Wait for a running ANALYZE: its connection must not outlive the store (a DROP
        DATABASE after closing would wait on it)."""
        with self._lock:
            self._closed, thread = True, self._thread
        if thread is not None:
            thread.join(timeout=60)
