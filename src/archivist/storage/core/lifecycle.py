"""Session summaries, tombstones, the update queue's watermark, consolidation runs and
the review queue. Written once for every backend."""

from __future__ import annotations

import json
import re

from ..records import Tombstone
from ..rows import (
    SUMMARY_COLUMNS,
    as_time,
    consolidation_run_from_row,
    review_item_from_row,
    summary_from_row,
)
from .scoped import Scoped


class LifecycleRows(Scoped):
    # -- session summaries ------------------------------------------------------
    def put_summary(self, identity, summary):
        self._ids(summary.id, summary.thread_id, summary.first_message_id, summary.last_message_id)
        self._count(summary.message_count)
        with self.transaction():
            self._write(identity, "INSERT INTO session_summaries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (summary.id, identity.tenant, identity.user, identity.agent, summary.thread_id,
                         summary.first_message_id, summary.last_message_id, summary.message_count,
                         json.dumps(summary.payload(), ensure_ascii=False), json.dumps(list(summary.cited_fact_ids)),
                         summary.evidence_id, summary.stale_reason, self._ts(summary.created_at)))

    def list_summaries(self, identity, *, since=None, limit=100):
        scope, params = self._scope(identity)
        after = " AND created_at > ?" if since is not None else ""
        rows = self._read(identity, f"SELECT {SUMMARY_COLUMNS} FROM session_summaries WHERE {scope}{after} "
                                    "ORDER BY created_at DESC, id DESC LIMIT ?",
                          (*params, *([self._ts(since)] if after else []), self._limit(limit)))
        return [summary_from_row(r) for r in rows]

    # -- tombstones ----------------------------------------------------------------
    def tombstones(self, identity):
        scope, params = self._scope(identity)
        rows = self._read(identity, f"SELECT content_hash, created_at FROM tombstones WHERE {scope} "
                                    "ORDER BY content_hash", params)
        return [Tombstone(h, as_time(at)) for h, at in rows]

    def add_tombstone(self, identity, content_hash, at):
        with self.transaction():
            self._add_tombstone(identity, content_hash, at)

    def _add_tombstone(self, identity, content_hash, at) -> int:
        self._ids(content_hash)
        return self._write(identity, "INSERT INTO tombstones VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                           (identity.tenant, identity.user, identity.agent, content_hash, self._ts(at))).rowcount

    def tombstoned(self, identity, hashes):
        scope, params = self._scope(identity)
        found: set[str] = set()
        for cond, values in self._in_chunks("content_hash", hashes):
            found |= {r[0] for r in self._read(identity, f"SELECT content_hash FROM tombstones WHERE {scope} AND {cond}",
                                               (*params, *values))}
        return found

    def lift_tombstone(self, identity, content_hash):
        scope, params = self._scope(identity)
        with self.transaction():
            self._write(identity, f"DELETE FROM tombstones WHERE {scope} AND content_hash = ?", (*params, content_hash))

    # -- the update queue's watermark -------------------------------------------
    def processed_messages(self, identity, thread_id):
        scope, params = self._scope(identity)
        rows = self._read(identity, f"SELECT message_id FROM processed_messages WHERE {scope} AND thread_id = ?",
                          (*params, thread_id))
        return [r[0] for r in rows]

    def mark_processed(self, identity, thread_id, message_ids):
        self._ids(thread_id, *message_ids)
        with self.transaction():
            self._write_many(identity, "INSERT INTO processed_messages VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                             [(identity.tenant, identity.user, identity.agent, thread_id, m) for m in message_ids])

    # -- consolidation and the review queue -----------------------------------
    def last_consolidation(self, identity):
        scope, params = self._scope(identity)
        rows = self._read(identity, f"SELECT max(started_at) FROM consolidation_runs WHERE {scope}", params)
        return as_time(rows[0][0]) if rows else None

    def record_consolidation(self, identity, run_id, at, trigger, plan_json):
        self._ids(run_id, trigger)
        with self.transaction():
            self._write(identity, "INSERT INTO consolidation_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (run_id, identity.tenant, identity.user, identity.agent, self._ts(at), trigger, plan_json))

    def consolidation_runs(self, identity, *, limit=20):
        scope, params = self._scope(identity)
        rows = self._read(identity, f"SELECT id, started_at, trigger, plan FROM consolidation_runs WHERE {scope} "
                                    "ORDER BY started_at DESC, id DESC LIMIT ?", (*params, self._limit(limit)))
        return [consolidation_run_from_row(r) for r in rows]

    def add_review_item(self, identity, item_id, kind, fact_ids, reason, at):
        self._ids(item_id)
        with self.transaction():
            self._write_later(identity, "INSERT INTO review_items (id, tenant, user_id, agent, kind, fact_ids, reason, "
                                  "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (item_id, identity.tenant, identity.user, identity.agent, kind, json.dumps(list(fact_ids)),
                         reason, self._ts(at)))

    def review_items(self, identity, *, status="open", kind=None, naming=None):
        scope, params = self._scope(identity)
        where, args = [scope, "status = ?"], [*params, status]
        if kind is not None:
            where.append("kind = ?")
            args.append(kind)
        if naming is not None:  # the id as the JSON list holds it; the match is checked exactly below
            where.append("fact_ids LIKE ? ESCAPE '!'")
            args.append("%" + re.sub(r"([!%_])", r"!\1", json.dumps(naming)) + "%")
        rows = self._read(identity, "SELECT id, kind, fact_ids, reason, status, created_at, resolved_at FROM review_items "
                                    f"WHERE {' AND '.join(where)} ORDER BY created_at, id", tuple(args))
        items = [review_item_from_row(r) for r in rows]
        return [i for i in items if naming in i["fact_ids"]] if naming is not None else items

    def resolve_review_item(self, identity, item_id, at):
        scope, params = self._scope(identity)
        with self.transaction():
            return self._write(identity, "UPDATE review_items SET status = 'resolved', resolved_at = ? "
                                         f"WHERE id = ? AND {scope} AND status = 'open'",
                               (self._ts(at), item_id, *params)).rowcount == 1
