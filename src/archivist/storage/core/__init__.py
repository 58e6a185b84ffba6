"""The store's policy, written once over a small SQL dialect: every backend is an
:class:`~.backend.Engine`, a :class:`~.backend.KeywordIndex`, a
:class:`~.backend.VectorStore` and an :class:`~.backend.Eraser` under :class:`SQLStore`."""

from __future__ import annotations

from ...model import Status
from ..base import Store
from .admin import AdminRows
from .backend import (
    MAINTENANCE,
    Access,
    Dialect,
    Engine,
    Eraser,
    KeywordIndex,
    VectorStore,
)
from .context import ContextRows
from .facts import FactRows
from .forget import Forgetting
from .jobs import IngestJobRows
from .lifecycle import LifecycleRows
from .migrate import Migration, MigrationTarget, migrate


class SQLStore(FactRows, ContextRows, LifecycleRows, AdminRows, IngestJobRows, Forgetting, Store):
    """A :class:`~archivist.storage.base.Store` over a backend's parts. A backend's
    constructor sets ``db``, ``sql``, ``keyword_index``, ``vector_store`` and ``eraser``."""

    @property
    def concurrent_reads(self) -> bool:  # type: ignore[override]
        return self.db.concurrent_reads

    @property
    def capabilities(self) -> frozenset[str]:
        return self.db.capabilities

    @property
    def path(self) -> str:
        return self.db.path

    # -- vectors (derived) ----------------------------------------------------
    def vector_model(self):
        return self.vector_store.model()

    def put_vectors(self, model, dim, rows):
        return self.vector_store.put(model, dim, rows)

    def vector_search(self, identity, query, *, limit, live_at, statuses=(Status.COMMITTED,)):
        return self.vector_store.search(identity, query, limit=self._limit(limit), live_at=live_at, statuses=statuses)

    def vectors_of(self, identity, fact_ids):
        return self.vector_store.of(identity, list(fact_ids)) if fact_ids else {}

    def facts_without_vectors(self, *, limit=1000):
        return self.vector_store.missing(self._limit(limit))

    def drop_vectors(self):
        self.vector_store.drop()

    # -- erasure and closing -----------------------------------------------------
    def purge(self, *, full: bool = False, **options) -> list[str]:
        with self._erasing:  # never beside this process's background eraser (their locks would cross)
            self.run_erasure(failed_too=True)  # the open and failed jobs first
            return self.eraser.purge(full=full, **options)

    def close(self) -> None:
        """Idempotent: a second close (a ``with`` block after an explicit close) does nothing."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self._stop_eraser()  # forgets this process made are erased before it lets go of the store
        self.vector_store.close()
        self.db.close()


__all__ = ["MAINTENANCE", "Access", "Dialect", "Engine", "Eraser", "KeywordIndex", "Migration", "MigrationTarget",
           "SQLStore", "VectorStore", "migrate"]
