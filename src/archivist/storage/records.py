"""The typed records the store contract returns where it once returned bare dicts and
tuples. They are ``TypedDict`` and ``NamedTuple`` so that JSON encoders and callers that
index rows keep working, while every field has a name and a type."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple, NotRequired, TypedDict


class ApiKeyRecord(TypedDict):
    id: str
    tenant: str
    users: list[str]
    agents: list[str]
    role: str
    label: str | None
    created_at: NotRequired[str]  # listed keys only


class ReviewItemRecord(TypedDict):
    id: str
    kind: str
    fact_ids: list[str]
    reason: str
    status: str
    created_at: str | None
    resolved_at: str | None


class ConsolidationRunRecord(TypedDict):
    id: str
    started_at: str | None
    trigger: str
    plan: dict[str, Any]


class Tombstone(NamedTuple):
    content_hash: str
    created_at: datetime


class GraphItemRow(NamedTuple):
    """A LangGraph item as stored: ISO times, the index's field paths (JSON; None: never
    indexed) and vectors (float32 matrix bytes, one row per path)."""

    namespace: str
    key: str
    value: str
    created_at: str
    updated_at: str
    expires_at: str | None
    ttl_minutes: float | None
    vector_paths: str | None
    vectors: bytes | None


__all__ = ["ApiKeyRecord", "ConsolidationRunRecord", "ErasureJobRecord", "GraphItemRow", "IngestJobRecord",
           "ReviewItemRecord", "Tombstone"]


class ErasureJobRecord(NamedTuple):
    """A purge a forget left to the background (:mod:`archivist.storage.core.erasure`):
    ``pending``, ``running``, ``done`` or ``failed`` (``note`` says why; ``archivist
    purge`` finishes it)."""

    id: str
    tenant: str  # whose forget queued it: only that tenant's callers see it
    state: str
    tables: tuple[str, ...]
    whole_user: bool
    attempts: int
    created_at: datetime | None
    finished_at: datetime | None
    note: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "tenant": self.tenant, "state": self.state, "tables": list(self.tables), "whole_user": self.whole_user,
                "attempts": self.attempts, "created_at": self.created_at.isoformat() if self.created_at else None,
                "finished_at": self.finished_at.isoformat() if self.finished_at else None, "note": self.note}


class IngestJobRecord(NamedTuple):
    """An ingest job of ``archivist serve`` (:mod:`archivist.storage.core.jobs`):
    ``queued``, ``running``, ``done``, ``failed`` or ``cancelled``. ``owner`` names the
    process that queued or runs it; ``result`` holds its report once it ended."""

    id: str
    tenant: str
    user: str
    agent: str
    status: str
    cancelled: bool
    owner: str
    created_at: datetime | None
    ended_at: datetime | None
    result: dict | None
