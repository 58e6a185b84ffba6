"""Ingest jobs as rows, so that every process serving one store sees every job.

``archivist serve --workers N`` runs N processes: a job queued by one is polled through
another, and forgetting a user in one must stop the user's jobs in all. A job row goes
``queued`` → ``running`` → ``done``/``failed``; cancelling it (its user is being
forgotten) is a flag every transition checks, so a job cancelled anywhere never starts,
and one that was running when cancelled learns it when it tries to finish. The row's
result is the job's report: forgetting a fact redacts it there like everywhere else,
and a result written after such a forget has the forgotten words taken out first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...model import Identity, content_hash
from ..records import IngestJobRecord
from ..rows import as_time, redaction_needles
from .backend import MAINTENANCE, Access
from .scoped import Scoped

_COLUMNS = "id, tenant, user_id, agent, status, cancelled, owner, created_at, ended_at, result"
ENDED = ("done", "failed", "cancelled")


class IngestJobRows(Scoped):
    def add_ingest_job(self, identity: Identity, job_id: str, *, owner: str, at: datetime) -> None:
        self._ids(job_id)
        with self.transaction():
            self._write(identity, f"INSERT INTO ingest_jobs ({_COLUMNS}) VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, "
                                  "NULL, NULL)",
                        (job_id, identity.tenant, identity.user, identity.agent, owner, self._ts(at)))

    def ingest_job(self, job_id: str) -> IngestJobRecord | None:
        rows = self._read(MAINTENANCE, f"SELECT {_COLUMNS} FROM ingest_jobs WHERE id = ?", (job_id,))
        return _record(rows[0]) if rows else None

    def ingest_jobs(self, tenant: str, user: str, *, status: str | None = None) -> list[IngestJobRecord]:
        owner, params = self._owner(tenant, user)
        where = f"{owner} AND status = ?" if status else owner
        rows = self._read(Access(tenant, user), f"SELECT {_COLUMNS} FROM ingest_jobs WHERE {where} "
                                                "ORDER BY created_at, id", (*params, *([status] if status else [])))
        return [_record(r) for r in rows]

    def start_ingest_job(self, job_id: str, *, owner: str) -> bool:
        """``queued`` → ``running``; False when the job was cancelled or is gone."""
        with self.transaction():
            return bool(self._write(MAINTENANCE, "UPDATE ingest_jobs SET status = 'running', owner = ? "
                                                 "WHERE id = ? AND status = 'queued' AND cancelled = 0",
                                    (owner, job_id)).rowcount)

    def finish_ingest_job(self, identity: Identity, job_id: str, *, status: str, result: Mapping[str, Any],
                          at: datetime, facts: Mapping[str, Sequence[str]] | None = None,
                          quotes: Sequence[str] = ()) -> bool:
        """Record the job's end and ``result``; False (nothing written) when the job was
        cancelled or is gone: its user was forgotten while it ran. Words a forget took
        since the job read them are taken out of ``result`` first: the quotes of
        ``facts`` (id → the words it holds) no longer stored, and each of ``quotes`` whose
        content the scope has a tombstone for."""
        if status not in ENDED:
            raise ValueError(f"a job ends as one of {', '.join(ENDED)}, not {status!r}")
        text = json.dumps(result, ensure_ascii=False, default=str)
        with self.transaction():
            facts = facts or {}
            gone = [q for fid in sorted(set(facts) - self._present(identity, list(facts))) for q in facts[fid]]
            gone += [q for q in quotes if self.is_tombstoned(identity, content_hash(q))]
            for needle in redaction_needles(gone):
                text = text.replace(needle, "[forgotten]")
            scope, params = self._scope(identity)
            return bool(self._write(identity, f"UPDATE ingest_jobs SET status = ?, ended_at = ?, result = ? "
                                              f"WHERE id = ? AND {scope} AND cancelled = 0",
                                    (status, self._ts(at), text, job_id, *params)).rowcount)

    def cancel_ingest_jobs(self, tenant: str, user: str) -> int:
        """Flag every open job of the user: queued ones never start, running ones find out
        when they finish. Returns how many were open."""
        owner, params = self._owner(tenant, user)
        with self.transaction():
            return self._write(Access(tenant, user),
                               "UPDATE ingest_jobs SET cancelled = 1, status = CASE WHEN status = 'queued' "
                               f"THEN 'cancelled' ELSE status END WHERE {owner} AND status IN ('queued', 'running')",
                               params).rowcount

    def prune_ingest_jobs(self, *, ended_before: datetime, keep: int) -> int:
        """Delete the reports that ended before ``ended_before``, then the oldest ended
        beyond the ``keep`` newest; returns how many went."""
        self._count(keep)
        with self.transaction():
            gone = self._write(MAINTENANCE, "DELETE FROM ingest_jobs WHERE ended_at IS NOT NULL AND ended_at < ?",
                               (self._ts(ended_before),)).rowcount
            gone += self._write(MAINTENANCE, "DELETE FROM ingest_jobs WHERE ended_at IS NOT NULL AND id NOT IN "
                                             "(SELECT id FROM ingest_jobs WHERE ended_at IS NOT NULL "
                                             "ORDER BY ended_at DESC, id DESC LIMIT ?)", (int(keep),)).rowcount
        return gone


def _record(row) -> IngestJobRecord:
    job, tenant, user, agent, status, cancelled, owner, created, ended, result = row
    return IngestJobRecord(id=job, tenant=tenant, user=user, agent=agent, status=status, cancelled=bool(cancelled),
                           owner=owner, created_at=as_time(created), ended_at=as_time(ended),
                           result=json.loads(result) if result else None)


__all__ = ["ENDED", "IngestJobRows"]
