"""The base every part of the shared store builds on: the engine, the dialect, and the
scope filters written once."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ...errors import InvalidInput
from ...model import Identity
from ..rows import visible
from .backend import Access, Dialect, Engine, Eraser, KeywordIndex, VectorStore

MAX_ROWS = 1 << 62  # a limit above it is no limit
# a NUL escaped in JSON text (an even run of backslashes before it escapes them, not it):
# PostgreSQL's JSON operators refuse it, so JSON-held text with one is refused everywhere
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
MAX_ID_CHARS = 512  # 4 bytes a character at most: 2,048 bytes, under PostgreSQL's b-tree entry limit


def storable(params: Sequence[Any]) -> Sequence[Any]:
    """``params`` unchanged, or :class:`InvalidInput` for text holding a NUL character
    (raw, or escaped in JSON-held text), in them or in a list among them."""
    for value in params:
        if type(value) is str:
            if "\x00" in value or ("u0000" in value and value[:1] in "[{" and _JSON_NUL.search(value)):
                raise InvalidInput("text with a NUL character (U+0000) cannot be stored or looked up")
        elif isinstance(value, (list, tuple)):
            storable(value)
    return params


class Scoped:
    """Holds the backend's parts; every shared query filters through these helpers."""

    db: Engine
    sql: Dialect
    keyword_index: KeywordIndex
    vector_store: VectorStore
    eraser: Eraser

    def _ts(self, value: datetime | None) -> Any:
        return self.sql.ts(value)  # the dialect maps None to NULL

    @staticmethod
    def _scope(identity: Identity, alias: str = "") -> tuple[str, tuple[str, str, str]]:
        """The rows of one (tenant, user, agent)."""
        return (f"{alias}tenant = ? AND {alias}user_id = ? AND {alias}agent = ?",
                (identity.tenant, identity.user, identity.agent))

    @staticmethod
    def _owner(tenant: str, user: str) -> tuple[str, tuple[str, str]]:
        """The rows of one (tenant, user): user-global tables, and forgetting a user."""
        return "tenant = ? AND user_id = ?", (tenant, user)

    def _seen(self, identity: Identity, alias: str = "") -> tuple[str, tuple]:
        """The facts a scope sees: its own, outside every project and in its project."""
        scope, params = self._scope(identity, alias)
        vis, vp = visible(identity, f"{alias}project", "?")
        return f"{scope} AND {vis}", (*params, *vp)

    @staticmethod
    def _limit(limit: int) -> int:
        """A row limit, the same on every backend (SQLite reads a negative one as none;
        neither stores more rows than a 64-bit count)."""
        if int(limit) < 0:
            raise InvalidInput(f"a limit cannot be negative (got {limit})")
        return min(int(limit), MAX_ROWS)

    @staticmethod
    def _count(value: int) -> None:
        """A count or version column (32 bits on PostgreSQL): the same refusal everywhere."""
        if not 0 <= int(value) < 1 << 31:
            raise InvalidInput(f"a count or version is between 0 and 2,147,483,647 (got {value})")

    @staticmethod
    def _ids(*values: str | None) -> None:
        """Identifiers (keys, thread, message, task, evidence and trace ids) fit every
        backend's indexes: PostgreSQL's b-tree holds about 2,700 bytes an entry."""
        for value in values:
            if isinstance(value, str) and len(value) > MAX_ID_CHARS:
                raise InvalidInput(f"an identifier has at most {MAX_ID_CHARS} characters, this one {len(value):,}")

    @staticmethod
    def _storable(params: Sequence[Any]) -> Sequence[Any]:
        """Text PostgreSQL cannot hold is refused on every backend, before anything is written."""
        return storable(params)

    def _read(self, identity: Identity | Access, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        who = Access.of(identity) if isinstance(identity, Identity) else identity
        return self.db.read(who, sql, self._storable(params))

    def _present(self, who: Identity | Access, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are fact rows, read as ``who`` (in a transaction, as a user: under
        that user's write lock)."""
        found: set[str] = set()
        for cond, values in self._in_chunks("id", ids):
            found |= {r[0] for r in self._read(who, f"SELECT id FROM facts WHERE {cond}", values)}
        return found

    def _in_chunks(self, column: str, values) -> Iterator[tuple[str, list]]:
        """``column IN`` the distinct ``values``, a condition per 500 (a driver's parameter limit)."""
        values = sorted(set(values))
        for start in range(0, len(values), 500):
            yield self.sql.in_list(column, values[start: start + 500])

    def _write(self, identity: Identity | Access, sql: str, params: Sequence[Any] = ()):
        who = Access.of(identity) if isinstance(identity, Identity) else identity
        return self.db.write(who, sql, self._storable(params))

    def _write_later(self, identity: Identity | Access, sql: str, params: Sequence[Any] = ()) -> None:
        """A write whose result is not read (:meth:`Engine.write_later`)."""
        who = Access.of(identity) if isinstance(identity, Identity) else identity
        self.db.write_later(who, sql, self._storable(params))

    def _write_many(self, identity: Identity | Access, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        if not rows:
            return 0
        who = Access.of(identity) if isinstance(identity, Identity) else identity
        return self.db.write_many(who, sql, [self._storable(row) for row in rows])

    def transaction(self):
        return self.db.transaction()

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction
