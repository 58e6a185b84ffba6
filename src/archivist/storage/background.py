"""The part of the store contract that background work needs: erasure jobs after a
forget (:mod:`archivist.storage.core.erasure`) and a server's ingest jobs, seen by
each of its processes (:mod:`archivist.storage.core.jobs`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model import Identity
from .records import ErasureJobRecord, IngestJobRecord


class BackgroundWork(ABC):
    # -- erasure after a forget, off the request path (storage.core.erasure) ------
    @abstractmethod
    def erasure_job(self, job_id: str) -> ErasureJobRecord | None: ...

    @abstractmethod
    def erasure_jobs(self, *, open_only: bool = False, limit: int = 100) -> list[ErasureJobRecord]: ...

    @abstractmethod
    def run_erasure(self, *, failed_too: bool = False) -> list[str]:
        """Run the open erasure jobs now (the background thread does too); the ids done."""

    @abstractmethod
    def wait_for_erasure(self, timeout: float | None = None) -> bool:
        """Block until no erasure job is open; False on timeout or if a job failed."""

    # -- ingest jobs of a server, seen by each of its processes (storage.core.jobs) --
    @abstractmethod
    def add_ingest_job(self, identity: Identity, job_id: str, *, owner: str, at: datetime) -> None:
        """A ``queued`` job of the scope, queued by the process ``owner``."""

    @abstractmethod
    def ingest_job(self, job_id: str) -> IngestJobRecord | None: ...

    @abstractmethod
    def ingest_jobs(self, tenant: str, user: str, *, status: str | None = None) -> list[IngestJobRecord]: ...

    @abstractmethod
    def start_ingest_job(self, job_id: str, *, owner: str) -> bool:
        """``queued`` → ``running``; False if it was cancelled or is gone."""

    @abstractmethod
    def finish_ingest_job(self, identity: Identity, job_id: str, *, status: str, result: Mapping[str, Any],
                          at: datetime, facts: Mapping[str, Sequence[str]] | None = None,
                          quotes: Sequence[str] = ()) -> bool:
        """The job's end and report, with words forgotten meanwhile taken out; False if
        it was cancelled or is gone (nothing written)."""

    @abstractmethod
    def cancel_ingest_jobs(self, tenant: str, user: str) -> int:
        """Flag the user's open jobs; the number flagged."""

    @abstractmethod
    def prune_ingest_jobs(self, *, ended_before: datetime, keep: int) -> int: ...
