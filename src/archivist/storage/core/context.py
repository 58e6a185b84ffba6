"""What runtime context reads besides facts: evidence kept whole, standing preferences,
task state, per-call traces and the embedding cache. Written once for every backend."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from ...errors import StaleWrite, StoreConflict
from ...model import Evidence, Identity, Preference, TaskState
from ..rows import as_time
from .backend import MAINTENANCE
from .scoped import Scoped

_PREFERENCE = "INSERT INTO preferences VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


class ContextRows(Scoped):
    # -- evidence ---------------------------------------------------------
    def put_evidence(self, evidence):
        self._ids(evidence.id)
        i = evidence.identity
        owner, params = self._owner(i.tenant, i.user)
        with self.transaction():  # the user's write lock is held: versions cannot race
            latest = self._write(i, f"SELECT version, content, source FROM evidence WHERE {owner} AND id = ? "
                                    "ORDER BY version DESC LIMIT 1", (*params, evidence.id)).fetchone()
            if latest is not None and (latest[1], latest[2]) == (evidence.content, evidence.source):
                return latest[0]  # the same text again: no new version
            version = latest[0] + 1 if latest else 1
            self._write(i, "INSERT INTO evidence (tenant, user_id, id, version, agent, source, content, observed_at, "
                           "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (i.tenant, i.user, evidence.id, version, i.agent, evidence.source, evidence.content,
                         self._ts(evidence.observed_at), self._ts(evidence.created_at)))
            return version

    def get_evidence(self, identity, evidence_id, version=None):
        if version is not None:
            self._count(version)
        owner, params = self._owner(identity.tenant, identity.user)
        rows = self._read(identity, "SELECT id, agent, source, content, observed_at, created_at, version FROM evidence "
                                    f"WHERE id = ? AND {owner}" + (" AND version = ?" if version is not None else "")
                                    + " ORDER BY version DESC LIMIT 1",
                          (evidence_id, *params, *([version] if version is not None else [])))
        if not rows:
            return None
        eid, agent, source, content, observed, created, ver = rows[0]
        return Evidence(eid, Identity(identity.tenant, identity.user, agent), source, content,
                        as_time(observed), as_time(created), ver)

    def list_evidence(self, identity):
        scope, params = self._scope(identity)
        rows = self._read(identity, "SELECT id, source, content, observed_at, created_at, version FROM evidence "
                                    f"WHERE {scope} ORDER BY created_at, id, version", params)
        return [Evidence(i, identity, src, c, as_time(o), as_time(cr), v) for i, src, c, o, cr, v in rows]

    # -- preferences and task state (versioned: a stale write fails) -------------------
    def get_preferences(self, identity):
        owner, params = self._owner(identity.tenant, identity.user)
        rows = self._read(identity, "SELECT key, value, trusted, source, version, updated_at, expires_at "
                                    f"FROM preferences WHERE {owner} ORDER BY key", params)
        return [Preference(k, v, bool(t), src, ver, as_time(at), as_time(exp)) for k, v, t, src, ver, at, exp in rows]

    def _expect_version(self, identity, what: str, sql: str, params, based_on: int) -> int:
        """The current version (0: none) if it equals ``based_on``, else :class:`StaleWrite`."""
        row = self._write(identity, sql + self.sql.for_update, params).fetchone()
        current = row[0] if row else 0
        if current != based_on:
            raise StaleWrite(f"{what} is at version {current}; this write was based on version {based_on}",
                             expected=based_on, current=current)
        return current

    def _preference_row(self, identity, pref):
        return (identity.tenant, identity.user, pref.key, pref.value, bool(pref.trusted), pref.source, pref.version,
                self._ts(pref.updated_at), self._ts(pref.expires_at))

    def put_preference(self, identity, pref, *, based_on):
        self._ids(pref.key)
        owner, params = self._owner(identity.tenant, identity.user)
        with self.transaction():
            current = self._expect_version(identity, f"preference {pref.key!r}",
                                           f"SELECT version FROM preferences WHERE {owner} AND key = ?",
                                           (*params, pref.key), based_on)
            stored = replace(pref, version=current + 1)
            self._write(identity, _PREFERENCE + " ON CONFLICT (tenant, user_id, key) DO UPDATE SET "
                        "value = excluded.value, trusted = excluded.trusted, source = excluded.source, "
                        "version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                        self._preference_row(identity, stored))
            return stored

    def restore_preference(self, identity, pref):
        """Write a preference exactly as exported (its version included); imports only."""
        self._ids(pref.key)
        with self.transaction():
            self._write(identity, _PREFERENCE, self._preference_row(identity, pref))

    def get_task(self, identity, task_id):
        scope, params = self._scope(identity)
        rows = self._read(identity, "SELECT goal, criteria, done, missing, version, updated_at FROM task_states "
                                    f"WHERE {scope} AND task_id = ?", (*params, task_id))
        if not rows:
            return None
        goal, criteria, done, missing, version, at = rows[0]
        return TaskState(task_id, goal, tuple(json.loads(criteria)), tuple(json.loads(done)),
                         tuple(json.loads(missing)), version, as_time(at))

    def put_task(self, identity, task, *, based_on):
        self._ids(task.task_id)
        scope, params = self._scope(identity)
        with self.transaction():
            current = self._expect_version(identity, f"task {task.task_id!r}",
                                           f"SELECT version FROM task_states WHERE {scope} AND task_id = ?",
                                           (*params, task.task_id), based_on)
            stored = replace(task, version=current + 1)
            self._write(identity,
                        "INSERT INTO task_states VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (tenant, user_id, agent, task_id) DO UPDATE SET goal = excluded.goal, "
                        "criteria = excluded.criteria, done = excluded.done, missing = excluded.missing, "
                        "version = excluded.version, updated_at = excluded.updated_at",
                        (*params, stored.task_id, stored.goal,
                         *(json.dumps(list(v), ensure_ascii=False) for v in (stored.criteria, stored.done,
                                                                             stored.missing)),
                         stored.version, self._ts(stored.updated_at)))
            return stored

    # -- context traces -------------------------------------------------------
    def put_trace(self, identity, trace_id, created_at, payload, *, cites=()):
        self._ids(trace_id)
        with self.transaction():
            # read in this write transaction (the user's lock on PostgreSQL, the write lock on
            # SQLite): a forget either committed before (its facts are gone here) or redacts
            # this trace after
            missing = set(cites) - self._present(identity, list(cites))
            if missing:
                raise StoreConflict(f"trace {trace_id} not kept: {len(missing)} fact(s) it shows were forgotten "
                                    "while it was assembled")
            self._write(identity, "INSERT INTO context_traces (id, tenant, user_id, agent, created_at, payload) "
                                  "VALUES (?, ?, ?, ?, ?, ?)",
                        (trace_id, identity.tenant, identity.user, identity.agent, self._ts(created_at),
                         json.dumps(payload, ensure_ascii=False)))

    def get_trace(self, identity, trace_id):
        scope, params = self._scope(identity)
        rows = self._read(identity, f"SELECT payload FROM context_traces WHERE id = ? AND {scope}", (trace_id, *params))
        return json.loads(rows[0][0]) if rows else None

    def list_traces(self, identity, *, limit=20, thread_id=None):
        scope, params = self._scope(identity)
        thread = f" AND {self.sql.json_field('payload', 'thread_id')} = ?" if thread_id is not None else ""
        rows = self._read(identity, f"SELECT payload FROM context_traces WHERE {scope}{thread} "
                                    f"ORDER BY created_at DESC{self.sql.newest_first} LIMIT ?",
                          (*params, *([thread_id] if thread else []), self._limit(limit)))
        return [json.loads(r[0]) for r in rows]

    # -- the embedding cache (by model and content hash; no user columns) ----------
    def cached_embeddings(self, model, hashes):
        out: dict[str, np.ndarray] = {}
        hashes = list(hashes)
        for start in range(0, len(hashes), 500):
            cond, values = self.sql.in_list("content_hash", hashes[start: start + 500])
            for h, blob in self._read(MAINTENANCE, f"SELECT content_hash, vector FROM embedding_cache "
                                                   f"WHERE model = ? AND {cond}", (model, *values)):
                out[h] = np.frombuffer(bytes(blob), dtype=np.float32)
        return out

    def cache_embeddings(self, model, items):
        with self.transaction():
            self._write_many(MAINTENANCE, "INSERT INTO embedding_cache VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                             [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items])
