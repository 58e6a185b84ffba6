"""SQLite's scope registry: each (tenant, user, agent) gets a small integer id, and a
fact's keyword-index rowid is ``scope_id << 36 | facts.seq``. Every scope is then one
contiguous rowid range, and FTS5 seeks its posting lists straight into that range
(``rowid BETWEEN lo AND hi``): it never scores another user's matches, however large
either scope is. The lookups back into ``facts`` still filter by tenant, user and agent:
the range is a speed-up, not the guard. Vectors are grouped by the same ids."""

from __future__ import annotations

from ...model import Identity
from ..core.backend import Access
from .engine import SQLiteEngine

SEQ_BITS = 36  # room for 68 billion fact rows per file; scope ids take the high bits
SEQ_MASK = (1 << SEQ_BITS) - 1


def fts_rowid(scope_id: int, seq: int) -> int:
    return scope_id << SEQ_BITS | seq


def scope_range(scope_id: int) -> tuple[int, int]:
    return scope_id << SEQ_BITS, (scope_id << SEQ_BITS) | SEQ_MASK


class Scopes:
    """Ids are read from the table every time, never cached: another process (a server's
    other worker, a CLI forget) may delete a user's scopes, and a new scope of that user
    then has a new id; a cached old id would index the user's new facts where no search
    looks."""

    def __init__(self, db: SQLiteEngine) -> None:
        self.db = db

    def id(self, identity: Identity, *, create: bool = False) -> int | None:
        """The scope's id; created on first write."""
        key = (identity.tenant, identity.user, identity.agent)
        with self.db.lock:
            row = self.db.conn.execute("SELECT id FROM scopes WHERE tenant = ? AND user_id = ? AND agent = ?",
                                       key).fetchone()
            if row is not None:
                return row[0]
            if not create:
                return None
            return self.db.write(Access.of(identity), "INSERT INTO scopes (tenant, user_id, agent) "
                                                      "VALUES (?, ?, ?) RETURNING id", key).fetchone()[0]

    def of_user(self, tenant: str, user: str) -> list[int]:
        """The user's scope ids."""
        return [r[0] for r in self.db.write(Access(tenant, user), "SELECT id FROM scopes WHERE tenant = ? "
                                                                   "AND user_id = ?", (tenant, user)).fetchall()]
