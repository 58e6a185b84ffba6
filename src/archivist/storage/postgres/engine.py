"""PostgreSQL's engine: a ``psycopg_pool`` pool; a transaction is bound to the calling
thread, so nested ``transaction()`` blocks join the outer one, as in SQLite.

* **Row-level security**: every transaction sets ``archivist.tenant`` /
  ``archivist.user`` / ``archivist.maintenance`` (``set_config(..., true)``) from the
  statement's :class:`~archivist.storage.core.backend.Access`, and the policies of the
  tables the register marks admit only those rows. Connecting as a role that bypasses
  RLS (a superuser), pooled connections switch to the unprivileged ``archivist_app``.
* **Writers**: a write transaction takes a transaction-scoped advisory lock per
  (tenant, user) before its first statement for that user, so read-check-write
  sequences are serialised per user exactly as SQLite serialises them per file, while
  different users write in parallel.
* **Round trips**: a write whose result no one reads (:meth:`PostgresEngine.write_later`:
  a fact's row, its keyword entry, a review item) waits in the transaction and goes with
  the others in one pipeline before the next statement that needs an answer, or the
  commit; a fact's ``seq`` comes from a block of the sequence the transaction takes for
  that user, under the user's lock, so inserting one asks the server nothing and ``seq``
  still orders a user's rows as they were written.
* **A server that goes away** (a restart, a dropped connection): the statement fails
  with :class:`~archivist.errors.StoreUnavailable` and its transaction is lost whole
  (the server aborts it); every connection is tried before it is lent, so those the
  server dropped are replaced, and the store carries on once the server is back.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ...clock import ensure_utc
from ...errors import StoreConflict, StoreError, StoreLocked, StoreUnavailable
from ..core.backend import Access, Dialect, Engine
from .dsn import connect_error, redact_dsn, scrub
from .statistics import PlannerStatistics

APP_ROLE = "archivist_app"
#: the pool retries a lost connection with growing pauses (1 s, 2 s, ...) for this long,
#: then gives up and the next caller starts afresh: no pause grows past about 2 s
RECONNECT_TIMEOUT = 5.0
#: while the server is known to be unreachable, a caller waits this long for a connection,
#: not the pool's 30 s: it hears StoreUnavailable soon rather than being held; and longer
#: than those pauses, so a caller that comes once the server is back gets a connection
WAIT_WHILE_DOWN = 3.0
#: SQLSTATEs of a server that went away: connection exceptions (class 08), and a
#: session ended by an administrator, a crash of another backend, or a server starting
GONE = ("57P01", "57P02", "57P03")


class PostgresDialect(Dialect):
    name = "postgres"
    for_update = " FOR UPDATE"
    newest_first = ", seq DESC"

    def ts(self, value):
        return ensure_utc(value) if value else None

    def in_list(self, column, values):
        return f"{column} = ANY(?)", [list(values)]

    def json_array_has(self, column):
        return f"jsonb_exists({column}::jsonb, ?)"

    def json_field(self, column, key):
        return f"({column}::jsonb ->> '{key}')"

    def contains(self, column):
        return f"strpos({column}, ?) > 0"


def _not_pipeline_noise(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("error ignored terminating <psycopg.Pipeline")


logging.getLogger("psycopg").addFilter(_not_pipeline_noise)


@lru_cache(maxsize=2048)
def marks(sql: str) -> str:
    """Shared SQL's ``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    return re.sub(r"\?", "%s", sql.replace("%", "%%"))


def lock_key(tenant: str, user: str) -> int:
    """A stable signed 64-bit advisory lock key for one (tenant, user)."""
    digest = hashlib.blake2b(f"{tenant}\x1f{user}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass
class _Tx:
    """The calling thread's open transaction."""

    conn: Any
    depth: int = 1
    access: Access | None = None
    locked: set[tuple[str, str]] = field(default_factory=set)
    after: list = field(default_factory=list)
    pending: list[tuple[str, Sequence]] = field(default_factory=list)  # writes not sent yet
    seqs: dict[tuple, list[int]] = field(default_factory=dict)  # per table and user: taken, not used, last first
    blocks: dict[tuple, int] = field(default_factory=dict)  # per table and user: the size of the last block
    inserted: int = 0


#: a transaction takes seqs in blocks growing from 8 to this: one round trip per block
SEQ_BLOCK = 512
PENDING_AT_MOST = 1_000  # writes that wait for one pipeline at most
_INSERT_INTO = re.compile(r"INSERT INTO (\w+) \(")


class PostgresEngine(Engine):
    dialect = PostgresDialect()
    concurrent_reads = True  # reads wait on a server: the assembler runs its sources concurrently
    capabilities = frozenset({"row_security"})

    def __init__(self, dsn: str, *, min_size: int, max_size: int, connect_timeout: float,
                 app_role: str | None) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.psycopg = psycopg
        self.dsn = dsn
        self.path = redact_dsn(dsn)
        self.app_role = app_role
        self._local = threading.local()
        self._closed = False
        self._down = False  # the last connection tried failed: wait WAIT_WHILE_DOWN, not the pool's timeout
        self.statistics = PlannerStatistics(self.connect, self.path)
        self._pool = ConnectionPool(dsn, min_size=min_size, max_size=max_size, open=False,
                                    configure=self._configure, kwargs={"autocommit": True}, name="archivist",
                                    reconnect_timeout=RECONNECT_TIMEOUT)
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self._pool.close()
            error = StoreUnavailable if isinstance(exc, PoolTimeout) else StoreError
            raise error(f"{self.path}: cannot open a connection pool ({scrub(str(exc), dsn)})") from exc

    def _configure(self, conn) -> None:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        if self.app_role:
            conn.execute(f"SET ROLE {self.app_role}")

    def connect(self):
        """A connection of the login role outside the pool (DDL, VACUUM, maintenance)."""
        try:
            return self.psycopg.connect(self.dsn, autocommit=True)
        except self.psycopg.Error as exc:
            raise connect_error(self.path, exc, self.dsn) from exc

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection that works. Each is tried first (one round trip): after a
        restart the pool holds connections the server dropped, and each is replaced
        rather than failing a request. A PoolTimeout (no connection in time) is left to
        the caller, which reports it as the server being unavailable."""
        while True:
            conn = self._pool.getconn(timeout=WAIT_WHILE_DOWN if self._down else None)
            try:
                conn.execute("")
                break
            except BaseException as exc:
                self._pool.putconn(conn)  # a broken one is dropped, and the pool connects anew
                if not (isinstance(exc, self.psycopg.Error) and conn.broken):
                    raise
                self._down = True
        self._down = False
        try:
            with conn:  # rolls back on an error; the pool keeps it open
                yield conn
        finally:
            self._pool.putconn(conn)

    def lost(self, exc: Exception, conn: Any = None) -> bool:
        """Whether ``exc`` says the server went away (a restart, a dropped connection, a
        session ended by an administrator), not that the statement is wrong."""
        state = getattr(exc, "sqlstate", None)
        if state:
            return state.startswith("08") or state in GONE
        # the server answers every error it raises with a SQLSTATE: one without is the
        # client's connection failing ("server closed the connection unexpectedly")
        return isinstance(exc, (self.psycopg.OperationalError, self.psycopg.InterfaceError)) or \
            bool(conn is not None and conn.broken)

    def translate(self, exc: Exception, conn: Any = None) -> StoreError:
        """``conn``: the connection ``exc`` came from, if any (is it broken?)."""
        from psycopg_pool import PoolTimeout

        errors = self.psycopg.errors
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, PoolTimeout):  # none in time: the server still away, or every connection busy
            why = "PostgreSQL cannot be reached now" if self._down else "no connection to PostgreSQL came free in time"
            return StoreUnavailable(f"{self.path}: {why}; nothing was written ({text})")
        if self.lost(exc, conn):
            self._down = True
            return StoreUnavailable(f"{self.path}: PostgreSQL cannot be reached now; nothing was written ({text})")
        if isinstance(exc, errors.IntegrityError):
            return StoreConflict(f"{self.path}: {text}")
        if isinstance(exc, (errors.DeadlockDetected, errors.SerializationFailure, errors.LockNotAvailable)):
            return StoreLocked(f"{self.path}: {text}")
        if isinstance(exc, errors.ProgramLimitExceeded):  # an OperationalError, but the server is there
            return StoreError(f"{self.path}: a value is too large for the database ({text})")
        return StoreError(f"{self.path}: {text}")

    def _tx(self) -> _Tx | None:
        return getattr(self._local, "tx", None)

    @property
    def in_transaction(self) -> bool:
        return self._tx() is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        tx = self._tx()
        if tx is not None:
            tx.depth += 1
            try:
                yield
            finally:
                tx.depth -= 1
            return
        committing = False
        try:
            with self._connection() as conn:
                self._local.tx = tx = _Tx(conn)
                try:
                    with conn.transaction():
                        yield
                        self._flush(tx)
                        committing = True
                finally:
                    self._local.tx = None
        except self.psycopg.Error as exc:
            error = self.translate(exc, tx and tx.conn)
            if committing and isinstance(error, StoreUnavailable):  # the COMMIT was sent: it may have been done
                error = StoreUnavailable(f"{self.path}: the connection to PostgreSQL was lost during COMMIT; "
                                         f"the write may or may not have been saved ({str(exc).strip()})")
            raise error from exc
        for action in tx.after:
            action()
        if tx.inserted:
            self.statistics.grew(tx.inserted)

    def after_commit(self, action) -> None:
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: after_commit outside a transaction")
        tx.after.append(action)

    def _enter(self, tx: _Tx, who: Access, *, write: bool) -> None:
        """Apply the RLS settings of ``who`` and, in a write transaction, take the user's
        advisory lock the first time this transaction touches that user."""
        lock = write and who.user not in ("", "*") and (who.tenant, who.user) not in tx.locked
        if tx.access == who and not lock:
            return
        self._flush(tx)
        sql = ("SELECT set_config('archivist.tenant', %s, true), set_config('archivist.user', %s, true), "
               "set_config('archivist.maintenance', %s, true)")
        params: list[Any] = [who.tenant, who.user, "on" if who.maintenance else "off"]
        if lock:
            sql += ", pg_advisory_xact_lock(%s)"
            params.append(lock_key(who.tenant, who.user))
            tx.locked.add((who.tenant, who.user))
        tx.conn.execute(sql, params)
        tx.access = who

    def read(self, who: Access, sql: str, params: Sequence = (), *,
             prelude: tuple[str, Sequence] | None = None) -> list[tuple]:
        """In the current transaction (which then holds the user's lock: a read there
        precedes a write) or a short one. ``prelude``: a statement run first in the same
        transaction (``SET LOCAL``s)."""
        tx = self._tx()
        try:
            if tx is not None:
                self._enter(tx, who, write=True)
                self._flush(tx)
                if prelude:
                    tx.conn.execute(*prelude)
                return tx.conn.execute(marks(sql), params).fetchall()
            with self._connection() as conn, conn.transaction():
                tx = _Tx(conn)
                self._enter(tx, who, write=False)
                if prelude:
                    conn.execute(*prelude)
                return conn.execute(marks(sql), params).fetchall()
        except self.psycopg.Error as exc:
            raise self.translate(exc, tx and tx.conn) from exc

    def write(self, who: Access, sql: str, params: Sequence = ()):
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: a write outside a transaction")
        try:
            self._enter(tx, who, write=True)
            self._flush(tx)
            return tx.conn.execute(marks(sql), params)
        except self.psycopg.Error as exc:
            raise self.translate(exc, tx.conn) from exc

    def write_later(self, who: Access, sql: str, params: Sequence = ()) -> None:
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: a write outside a transaction")
        try:
            self._enter(tx, who, write=True)
            tx.pending.append((marks(sql), params))
            if len(tx.pending) >= PENDING_AT_MOST:
                self._flush(tx)
        except self.psycopg.Error as exc:
            raise self.translate(exc, tx.conn) from exc

    def _flush(self, tx: _Tx) -> None:
        """Send the writes that wait, in one pipeline (a failure raises here: the statement's
        own error; psycopg's note that the aborted pipeline could not end is dropped)."""
        if tx.pending:
            pending, tx.pending = tx.pending, []
            with tx.conn.pipeline():
                for sql, params in pending:
                    tx.conn.execute(sql, params)

    def insert(self, who: Access, sql: str, params: Sequence = ()) -> int:
        """The row waits for the next pipeline; its ``seq`` comes from the transaction's block."""
        tx, into = self._tx(), _INSERT_INTO.match(sql)
        if tx is None or into is None:
            return self.write(who, sql + " RETURNING seq", params).fetchone()[0]
        seq = self._next_seq(tx, who, into[1])
        tx.inserted += 1
        columns, values = sql[into.end():].split(") VALUES (", 1)
        self.write_later(who, f"INSERT INTO {into[1]} (seq, {columns}) OVERRIDING SYSTEM VALUE VALUES (?, {values}",
                         (seq, *params))
        return seq

    def _next_seq(self, tx: _Tx, who: Access, table: str) -> int:
        """A block is taken under the user's lock and used for that user's rows only, so a
        user's rows get increasing seqs across transactions."""
        slot = (table, who.tenant, who.user)
        taken = tx.seqs.setdefault(slot, [])
        if not taken:  # blocks of 8, 16, ... SEQ_BLOCK: a lone write wastes a few numbers, a batch few trips
            tx.blocks[slot] = size = min(SEQ_BLOCK, 2 * tx.blocks.get(slot, 4))
            rows = self.read(who, f"SELECT nextval(pg_get_serial_sequence('{table}', 'seq')) "
                                  "FROM generate_series(1, ?)", (size,))
            taken += sorted((r[0] for r in rows), reverse=True)
        return taken.pop()

    def write_many(self, who: Access, sql: str, rows: Sequence[Sequence]) -> int:
        """One pipeline for every row."""
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: a write outside a transaction")
        try:
            self._enter(tx, who, write=True)
            self._flush(tx)
            with tx.conn.cursor() as cur:
                cur.executemany(marks(sql), rows, returning=False)
                return cur.rowcount
        except self.psycopg.Error as exc:
            raise self.translate(exc, tx.conn) from exc

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.statistics.close()
            self._pool.close()
