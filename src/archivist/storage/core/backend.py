"""What a backend implements: the narrow contract under :class:`~.store.SQLStore`.

A backend differs from another in four things only, and implements only those:

* an :class:`Engine` — connections, transactions, reads and writes, in its :class:`Dialect`;
* a :class:`KeywordIndex` — the derived keyword index (add, remove, remove a user,
  search, rebuild);
* a :class:`VectorStore` — the derived vectors (put, search, remove, drop);
* an :class:`Eraser` — what makes deleted bytes unrecoverable from its files.

Everything else — facts and versions, profile, audit, evidence, preferences, tasks,
traces, summaries, the review queue, keys, LangGraph items, forgetting — is written once
in :mod:`archivist.storage.core` over the dialect, so the two backends cannot disagree
on policy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from ...model import Fact, Identity, Status
from ..base import KeywordMatch, Progress


@dataclass(frozen=True, slots=True)
class Access:
    """Whose rows a statement may touch. PostgreSQL's row-level security reads it (the
    second guard after every query's own filter); SQLite, one file per deployment, has
    no use for it. ``user`` ``"*"`` is every user of the tenant (LangGraph items, whose
    namespace names the user); ``maintenance`` is store-wide work (reindex, keys)."""

    tenant: str = ""
    user: str = ""
    maintenance: bool = False

    @classmethod
    def of(cls, identity: Identity) -> Access:
        return cls(identity.tenant, identity.user)

    @classmethod
    def tenant_wide(cls, tenant: str) -> Access:
        return cls(tenant, "*")


MAINTENANCE = Access(maintenance=True)


class Dialect(ABC):
    """The few SQL spellings the backends differ in. Shared SQL uses ``?`` placeholders;
    an engine whose driver wants another mark rewrites them."""

    name: str

    @abstractmethod
    def ts(self, value: datetime | None) -> Any:
        """A time as the column stores it (aware UTC)."""

    @abstractmethod
    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``: the condition and its parameters."""

    @abstractmethod
    def json_array_has(self, column: str) -> str:
        """The JSON array text in ``column`` holds the string given as one parameter."""

    @abstractmethod
    def json_field(self, column: str, key: str) -> str:
        """The text of the top-level ``key`` of the JSON object text in ``column``."""

    @abstractmethod
    def contains(self, column: str) -> str:
        """``column`` contains the text given as one parameter."""

    #: appended to a read whose rows a write transaction will change (a row lock)
    for_update: str = ""
    #: ORDER BY tail that breaks ties between rows of the same time, newest first
    newest_first: str = ""


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Engine(ABC):
    """Connections and transactions of one database. ``read`` runs in the caller's
    transaction when one is open (seeing its writes), else in a short one; ``write``
    only inside :meth:`transaction`, whose nested use joins the outer block."""

    dialect: Dialect
    path: str  # what messages name the database by (never a password)
    concurrent_reads: bool = False
    #: what the backend guarantees beyond the contract: ``row_security`` — the database
    #: itself admits only the rows of a statement's Access (a conformance spec checks it);
    #: ``erases_on_forget`` — once a forget's erasure job is done, no byte of the forgotten
    #: text is left in the files (tests/test_register.py reads the files)
    capabilities: frozenset[str] = frozenset()

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]: ...

    @property
    @abstractmethod
    def in_transaction(self) -> bool: ...

    @abstractmethod
    def read(self, who: Access, sql: str, params: Sequence[Any] = ()) -> list[tuple]: ...

    @abstractmethod
    def write(self, who: Access, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    @abstractmethod
    def insert(self, who: Access, sql: str, params: Sequence[Any]) -> int:
        """Run an ``INSERT`` into a table keyed by ``seq``; the new row's ``seq``."""

    @abstractmethod
    def write_many(self, who: Access, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run ``sql`` once per row; the rows changed."""

    def write_later(self, who: Access, sql: str, params: Sequence[Any] = ()) -> None:
        """A write whose result no one reads: it may wait and go to a server with those
        after it, but it runs before any later statement of the transaction, and a failure
        fails the transaction. In process, it runs now."""
        self.write(who, sql, params)

    @abstractmethod
    def after_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the open transaction commits (dropped if it rolls back)."""

    @abstractmethod
    def close(self) -> None: ...


class KeywordIndex(ABC):
    """The derived keyword index of facts and episodes; rows are addressed by ``seq``."""

    #: the table a forget receipt counts its removed entries under
    table: str

    @abstractmethod
    def add(self, identity: Identity, rows: Sequence[tuple[int, Fact]]) -> None: ...

    @abstractmethod
    def remove(self, identity: Identity, seq: int) -> int: ...

    @abstractmethod
    def remove_user(self, tenant: str, user: str) -> int: ...

    @abstractmethod
    def search(self, identity: Identity, terms: Sequence[str], *, limit: int, live_at: datetime,
               statuses: Sequence[Status]) -> list[KeywordMatch]: ...

    @abstractmethod
    def rebuild(self, progress: Progress | None) -> int: ...


class VectorStore(ABC):
    """The derived vectors of facts and episodes (one embedding model per store, named in
    ``vector_meta``). A backend keeps them in its own table keyed by the fact's ``seq``
    (column :attr:`seq_column`) and says how a stored vector reads back (:meth:`decode`)."""

    db: Engine
    seq_column: str

    def model(self) -> tuple[str, int] | None:
        rows = self.db.read(MAINTENANCE, "SELECT model, dim FROM vector_meta WHERE id = 1")
        return (rows[0][0], rows[0][1]) if rows else None

    def missing(self, limit: int) -> list[Fact]:
        """Committed facts and episodes without a vector, oldest first."""
        from ..rows import FACT_COLUMNS, fact_from_row

        rows = self.db.read(MAINTENANCE, f"SELECT {FACT_COLUMNS} FROM facts f WHERE status IN ('committed', 'episode') "
                                         f"AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.{self.seq_column} = f.seq) "
                                         "ORDER BY seq LIMIT ?", (limit,))
        return [fact_from_row(r) for r in rows]

    def of(self, identity: Identity, fact_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of the scope's facts among ``fact_ids``."""
        from ..rows import visible

        ids, values = self.db.dialect.in_list("f.id", list(fact_ids))
        vis, vp = visible(identity, "f.project", "?")
        rows = self.db.read(Access.of(identity),
                            f"SELECT f.id, v.{self.vector_column} FROM facts f JOIN fact_vectors v "
                            f"ON v.{self.seq_column} = f.seq WHERE {ids} AND f.tenant = ? AND f.user_id = ? "
                            f"AND f.agent = ? AND {vis}",
                            (*values, identity.tenant, identity.user, identity.agent, *vp))
        return {fid: self.decode(value) for fid, value in rows}

    vector_column: str

    def query_vector(self, query: np.ndarray) -> np.ndarray | None:
        """The query as float32, None when the store holds no vectors; a query of another
        size than the store's model is :class:`EmbedderMismatch`."""
        from ...errors import EmbedderMismatch

        meta = self.model()
        if meta is None:
            return None
        query = np.asarray(query, dtype=np.float32)
        if query.shape[-1] != meta[1]:
            raise EmbedderMismatch("(query)", int(query.shape[-1]), meta[0], meta[1])
        return query

    @abstractmethod
    def decode(self, value: Any) -> np.ndarray: ...

    @abstractmethod
    def put(self, model: str, dim: int, rows: Sequence[tuple[Fact, np.ndarray]]) -> int: ...

    @abstractmethod
    def search(self, identity: Identity, query: np.ndarray, *, limit: int, live_at: datetime,
               statuses: Sequence[Status]) -> list[tuple[Fact, float]]: ...

    @abstractmethod
    def remove(self, identity: Identity, seq: int, *, erase: bool) -> int:
        """Drop a fact's vector: retired (``erase`` False), or forgotten, when no copy of
        it may stay in any cache either."""

    @abstractmethod
    def remove_user(self, tenant: str, user: str) -> int: ...

    @abstractmethod
    def drop(self) -> None: ...

    def close(self) -> None:
        return None


class Eraser(ABC):
    """Makes deleted rows unrecoverable from the backend's files."""

    @abstractmethod
    def after_forget(self, tables: Sequence[str], *, whole_user: bool) -> str | None:
        """Called after a forget committed; a note for the receipt when the erasure
        could not finish now (the forget stands; ``purge`` finishes it)."""

    @abstractmethod
    def purge(self, *, full: bool = False) -> list[str]: ...


__all__ = ["MAINTENANCE", "Access", "Cursor", "Dialect", "Engine", "Eraser", "KeywordIndex", "VectorStore"]
