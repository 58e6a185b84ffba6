"""Tenant-wide and store-wide rows: LangGraph items, API keys, the users of a tenant and
what an export lists. Written once for every backend."""

from __future__ import annotations

import json
from datetime import timedelta

from ..records import GraphItemRow
from ..register import user_tables
from ..rows import api_key_from_row, graph_vector_columns, iso
from .backend import MAINTENANCE, Access
from .scoped import Scoped

_GRAPH_COLUMNS = "namespace, key, value, created_at, updated_at, expires_at, ttl_minutes, vector_paths, vectors"


def _graph_row(r: tuple) -> GraphItemRow:
    """An item row as the adapter reads it on every backend: ISO times, bytes."""
    ns, key, value, created, updated, expires, ttl, paths, blob = r
    return GraphItemRow(ns, key, value, iso(created), iso(updated), iso(expires), ttl, paths,
                        bytes(blob) if blob is not None else None)


class AdminRows(Scoped):
    # -- LangGraph store items (tenant-wide: the namespace names the user) -------------
    def graph_put(self, tenant, namespace, user, key, value_json, now, ttl_minutes, vectors=None):
        self._ids(namespace, key)
        expires = self._ts(now + timedelta(minutes=ttl_minutes)) if ttl_minutes is not None else None
        paths, blob = graph_vector_columns(vectors)
        with self.transaction():
            self._write(Access.tenant_wide(tenant),
                        "INSERT INTO graph_items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (tenant, namespace, key) DO UPDATE SET value = excluded.value, "
                        "updated_at = excluded.updated_at, expires_at = excluded.expires_at, "
                        "ttl_minutes = excluded.ttl_minutes, vector_paths = excluded.vector_paths, "
                        "vectors = excluded.vectors",
                        (tenant, namespace, user, key, value_json, self._ts(now), self._ts(now), expires, ttl_minutes,
                         paths, blob))

    def graph_delete(self, tenant, namespace, key):
        with self.transaction():
            self._write(Access.tenant_wide(tenant), "DELETE FROM graph_items WHERE tenant = ? AND namespace = ? "
                                                    "AND key = ?", (tenant, namespace, key))

    def graph_items(self, tenant, namespace_prefix, now, *, key=None):
        """Unexpired items whose namespace equals or starts with the prefix (or one key)."""
        sql = f"SELECT {_GRAPH_COLUMNS} FROM graph_items WHERE tenant = ? AND (expires_at IS NULL OR expires_at > ?)"
        params: list = [tenant, self._ts(now)]
        if key is not None:
            sql += " AND namespace = ? AND key = ?"
            params += [namespace_prefix, key]
        elif namespace_prefix:
            sql += " AND (namespace = ? OR substr(namespace, 1, ?) = ?)"
            params += [namespace_prefix, len(namespace_prefix) + 1, namespace_prefix + "\x1f"]
        rows = self._read(Access.tenant_wide(tenant), sql + " ORDER BY updated_at DESC, namespace, key", params)
        return [_graph_row(r) for r in rows]

    def graph_touch(self, tenant, keys, now):
        """Refresh the TTL of (namespace, key) pairs that have one."""
        who = Access.tenant_wide(tenant)
        with self.transaction():
            for namespace, key in keys:
                row = self._write(who, "SELECT ttl_minutes FROM graph_items WHERE tenant = ? AND namespace = ? "
                                       "AND key = ?", (tenant, namespace, key)).fetchone()
                if row and row[0] is not None:
                    self._write(who, "UPDATE graph_items SET expires_at = ? WHERE tenant = ? AND namespace = ? "
                                     "AND key = ?", (self._ts(now + timedelta(minutes=row[0])), tenant, namespace, key))

    def graph_sweep(self, tenant, now):
        with self.transaction():
            return self._write(Access.tenant_wide(tenant), "DELETE FROM graph_items WHERE tenant = ? "
                               "AND expires_at IS NOT NULL AND expires_at <= ?", (tenant, self._ts(now))).rowcount

    def graph_namespaces(self, tenant, now):
        return [r[0] for r in self._read(Access.tenant_wide(tenant),
                                         "SELECT DISTINCT namespace FROM graph_items WHERE tenant = ? "
                                         "AND (expires_at IS NULL OR expires_at > ?) ORDER BY namespace",
                                         (tenant, self._ts(now)))]

    # -- users and what an export lists --------------------------------------------------
    def users(self, tenant):
        """Users of the tenant with any row in a table that holds user data (see the register)."""
        union = " UNION ".join(f"SELECT user_id FROM {t} WHERE tenant = ?" for t in user_tables())
        rows = self._read(Access.tenant_wide(tenant), f"{union} ORDER BY 1", (tenant,) * len(user_tables()))
        return [r[0] for r in rows]

    def user_agents(self, tenant, user):
        owner, params = self._owner(tenant, user)
        union = " UNION ".join(f"SELECT agent FROM {t} WHERE {owner}"
                               for t in ("facts", "evidence", "session_summaries", "tombstones"))
        return [r[0] for r in self._read(Access(tenant, user), f"{union} ORDER BY 1", params * 4)]

    def user_projects(self, tenant, user):
        owner, params = self._owner(tenant, user)
        return [r[0] for r in self._read(Access(tenant, user), f"SELECT DISTINCT project FROM facts WHERE {owner} "
                                                               "AND project IS NOT NULL ORDER BY 1", params)]

    # -- API keys (no user data: looked up before any identity exists) -----------------
    def put_api_key(self, key_id, key_hash, tenant, users, agents, role, label, at):
        with self.transaction():
            self._write(MAINTENANCE, "INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                        (key_id, key_hash, tenant, json.dumps(users), json.dumps(agents), role, label, self._ts(at)))

    def find_api_key(self, key_hash):
        rows = self._read(MAINTENANCE, "SELECT id, tenant, users, agents, role, label FROM api_keys "
                                       "WHERE key_hash = ? AND revoked_at IS NULL", (key_hash,))
        return api_key_from_row(rows[0]) if rows else None

    def api_keys(self):
        rows = self._read(MAINTENANCE, "SELECT id, tenant, users, agents, role, label, created_at FROM api_keys "
                                       "WHERE revoked_at IS NULL ORDER BY created_at, id", ())
        return [{**api_key_from_row(r[:6]), "created_at": str(r[6])} for r in rows]

    def revoke_api_key(self, key_id, at):
        with self.transaction():
            return self._write(MAINTENANCE, "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                               (self._ts(at), key_id)).rowcount == 1
