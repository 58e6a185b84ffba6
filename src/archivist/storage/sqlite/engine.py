"""SQLite's engine: one connection behind a re-entrant lock, WAL, a busy timeout,
``secure_delete`` (deleted text is zeroed, not left in free pages), and its dialect.

Writers of several processes (``archivist serve --workers N``) take turns through an
advisory lock on a file beside the store (``<store>-lock``, always empty) before they
begin: a waiting writer is woken within a couple of milliseconds of the lock's release,
where SQLite's own busy handler sleeps up to 100 ms between tries and made one write in
a hundred wait seconds under load. SQLite's locks stay the guard of the data; this
lock only orders the writers. (Never an extra descriptor of the store file itself:
closing one would drop the process's SQLite locks on it.)"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ...clock import ensure_utc
from ...errors import StoreConflict, StoreCorrupt, StoreError, StoreLocked
from ..core.backend import Access, Dialect, Engine
from ..core.migrate import MigrationTarget


class SQLiteDialect(Dialect):
    name = "sqlite"
    newest_first = ", rowid DESC"

    def ts(self, value):
        # stored times are UTC text, so that comparing them as text compares instants
        return ensure_utc(value).isoformat(timespec="microseconds") if value else None

    def in_list(self, column, values):
        values = list(values)
        return (f"{column} IN ({', '.join('?' * len(values))})", values) if values else ("false", [])

    def json_array_has(self, column):
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = ?)"

    def json_field(self, column, key):
        return f"json_extract({column}, '$.{key}')"

    def contains(self, column):
        return f"instr({column}, ?) > 0"


def translate(exc: sqlite3.Error, path: str) -> StoreError:
    text = str(exc)
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreConflict(f"{path}: {text}")
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreLocked(f"{path}: the database stayed locked by another writer past the busy timeout")
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text
                                                   or "corrupt" in text):
        return StoreCorrupt(f"{path}: not a valid archivist database ({text})")
    return StoreError(f"{path}: {text}")


class SQLiteEngine(Engine):
    """Thread-safe: one connection; a transaction holds the lock from BEGIN to COMMIT."""

    dialect = SQLiteDialect()
    capabilities = frozenset({"erases_on_forget"})  # secure_delete, FTS merge, WAL truncation

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = str(Path(path).expanduser()) if str(path) != ":memory:" else ":memory:"
        self.busy_timeout_s = busy_timeout_ms / 1000
        self.lock = threading.RLock()
        self._depth = 0
        self._after: list = []
        try:
            if self.path != ":memory:":
                if not Path(self.path).name.strip():
                    raise StoreError(f"{str(path)!r} names no file: give the store a file name")
                try:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:  # a file where a directory should be, no permission, …
                    raise StoreError(f"cannot create the store at {self.path}: {exc.strerror or exc} "
                                     f"({exc.filename or Path(self.path).parent})") from None
            # SQLite reads a name starting "file:" as a URI (another file, or none at all): never here
            self.name = name = f"./{self.path}" if self.path[:5].lower() == "file:" else self.path
            self.conn = sqlite3.connect(name, isolation_level=None, check_same_thread=False,
                                        timeout=busy_timeout_ms / 1000)
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._enter_wal(busy_timeout_ms / 1000)
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA secure_delete = ON")
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        self._turns = os.open(name + "-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600) \
            if self.path != ":memory:" else None

    def _take_turn(self) -> None:
        """The writers' lock of every process, waited for up to the busy timeout."""
        if self._turns is None:
            return
        deadline, pause = time.monotonic() + self.busy_timeout_s, 0.0002
        while True:
            try:
                fcntl.flock(self._turns, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreLocked(f"{self.path}: another process kept writing past the busy timeout") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.002)

    def _end_turn(self) -> None:
        if self._turns is not None:
            fcntl.flock(self._turns, fcntl.LOCK_UN)

    def _enter_wal(self, timeout: float) -> None:
        """Switch a new file to WAL. While several connections create one file at once,
        the switch can fail with "database is locked" at once, without the busy handler
        (SQLite refuses to wait where waiting could deadlock): retry until ``timeout``."""
        deadline = time.monotonic() + timeout
        pause = 0.005
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._take_turn()
            try:
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                except sqlite3.Error as exc:
                    raise translate(exc, self.path) from exc
                self._depth = 1
                try:
                    yield
                except BaseException:
                    self._depth = 0
                    self._after.clear()
                    self.conn.execute("ROLLBACK")
                    raise
                self._depth = 0
                try:
                    self.conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._after.clear()
                    self.conn.execute("ROLLBACK")
                    raise translate(exc, self.path) from exc
            finally:
                self._end_turn()
            actions, self._after = self._after, []
            for action in actions:
                action()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Several reads that see one consistent state (a deferred read transaction)."""
        with self.lock:
            if self._depth:
                yield
                return
            try:
                self.conn.execute("BEGIN DEFERRED")
                try:
                    yield
                finally:
                    self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc

    def after_commit(self, action) -> None:
        if not self._depth:
            raise StoreError("internal: after_commit outside a transaction")
        self._after.append(action)

    def read(self, who: Access, sql: str, params: Sequence = ()) -> list[tuple]:
        with self.lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise translate(exc, self.path) from exc

    def write(self, who: Access, sql: str, params: Sequence = ()):
        if not self._depth:
            raise StoreError("internal: a write outside a transaction")
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def insert(self, who: Access, sql: str, params: Sequence = ()) -> int:
        return self.write(who, sql, params).lastrowid  # cheaper than RETURNING here

    def write_many(self, who: Access, sql: str, rows: Sequence[Sequence]) -> int:
        if not self._depth:
            raise StoreError("internal: a write outside a transaction")
        try:
            return self.conn.executemany(sql, rows).rowcount
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def close(self) -> None:
        with self.lock:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
            if self._turns is not None:
                os.close(self._turns)
                self._turns = None


class SQLiteMigrations(MigrationTarget):
    """The runner's view of the file: no cross-process lock (each step is one
    ``BEGIN IMMEDIATE`` transaction that checks again whether it is still needed)."""

    legacy_table = "schema_migrations"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @contextmanager
    def locked(self) -> Iterator[None]:
        yield

    @contextmanager
    def atomic(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def fetch(self, sql, params=()):
        return self.conn.execute(sql, params).fetchall()

    def execute(self, sql, params=()):
        self.conn.execute(sql, params)

    def run_script(self, script):
        for statement in split_sql(script):
            self.conn.execute(statement)

    def has_table(self, name):
        return bool(self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                      (name,)).fetchone())


def split_sql(script: str) -> list[str]:
    """Statements of a migration script: split at semicolons, joined again until SQLite
    calls the statement complete (a trigger body holds several)."""
    out, pending = [], ""
    for part in script.split(";"):
        lines = [ln for ln in part.splitlines() if ln.strip() and not ln.strip().startswith("--")]
        if not lines and not pending:
            continue
        pending = f"{pending};\n" + "\n".join(lines) if pending else "\n".join(lines)
        if sqlite3.complete_statement(pending + ";"):
            out.append(pending)
            pending = ""
    if pending.strip():
        out.append(pending)
    return out
