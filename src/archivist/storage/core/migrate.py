"""One migration runner for every backend. A migration is a named step; the store
records the names it applied (``archivist_migrations``), so a step is never run twice,
and a store holding a name this release does not know was written by a newer one.

Stores made before names existed recorded integer versions (``schema_migrations`` in
SQLite, ``archivist_schema_migrations`` in PostgreSQL); the first open records version
*n* as the names of the first *n* steps, drops the old record, and goes on from there.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime

from ...errors import SchemaTooNew
from ...index.signatures import Signatures

RECORD = "archivist_migrations"
_CREATE_RECORD = f"CREATE TABLE IF NOT EXISTS {RECORD} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"


@dataclass(frozen=True, slots=True)
class Migration:
    name: str  # never changes once released
    sql: str
    # derived values SQL cannot compute (run in the step's transaction, after ``sql``)
    fill: Callable[[MigrationTarget], None] | None = None


class MigrationTarget(ABC):
    """What the runner needs of a backend's connection."""

    legacy_table: str  # where integer versions were recorded before names

    @abstractmethod
    def locked(self) -> AbstractContextManager[None]:
        """Hold off other migrators (across processes) for the whole run."""

    @abstractmethod
    def atomic(self) -> AbstractContextManager[None]:
        """One step: all of it or none."""

    @abstractmethod
    def fetch(self, sql: str, params: Sequence = ()) -> list[tuple]: ...

    @abstractmethod
    def execute(self, sql: str, params: Sequence = ()) -> None: ...

    @abstractmethod
    def run_script(self, script: str) -> None: ...

    @abstractmethod
    def has_table(self, name: str) -> bool: ...


def applied(target: MigrationTarget) -> list[str]:
    if not target.has_table(RECORD):
        return []
    return [r[0] for r in target.fetch(f"SELECT name FROM {RECORD} ORDER BY applied_at, name")]


def check_known(applied_names: Sequence[str], migrations: Sequence[Migration], where: str) -> None:
    unknown = sorted(set(applied_names) - {m.name for m in migrations})
    if unknown:
        raise SchemaTooNew(f"{where} holds migrations this archivist does not know ({', '.join(unknown)}): "
                           "it was written by a newer release. Upgrade archivist.")


def migrate(target: MigrationTarget, migrations: Sequence[Migration], where: str) -> int:
    """Apply the steps not yet recorded, in order; the number of steps recorded after.
    A store this release cannot run is refused before anything in it changes."""
    names = [m.name for m in migrations]
    assert len(set(names)) == len(names), "migration names must be unique"
    with target.locked():
        if target.has_table(target.legacy_table):
            with target.atomic():  # once, however many connections open the store at this moment
                if target.has_table(target.legacy_table):
                    version = target.fetch(f"SELECT coalesce(max(version), 0) FROM {target.legacy_table}")[0][0]
                    if version > len(migrations):  # refused before anything in the store changes
                        raise SchemaTooNew(f"{where} has schema version {version}; this archivist knows up to "
                                           f"{len(migrations)}. Upgrade archivist.")
                    target.execute(_CREATE_RECORD)
                    if not applied(target):
                        for name in names[:version]:
                            _record(target, name)
                    target.execute(f"DROP TABLE {target.legacy_table}")  # one record from now on
        check_known(applied(target), migrations, where)
        target.execute(_CREATE_RECORD)
        done = set(applied(target))
        for m in migrations:
            if m.name in done:  # opening a current store writes nothing (and takes no write lock)
                continue
            with target.atomic():
                # another connection may have applied it while this one waited for the lock
                if target.fetch(f"SELECT 1 FROM {RECORD} WHERE name = ?", (m.name,)):
                    continue
                target.run_script(m.sql)
                if m.fill is not None:
                    m.fill(target)
                _record(target, m.name)
    return len(applied(target))


def fill_signatures(target: MigrationTarget) -> None:
    """Facts kept before the store indexed the gate's signatures get theirs (episodes
    have none: the gate never compares with them)."""
    last = 0
    while True:
        rows = target.fetch("SELECT seq, content FROM facts WHERE seq > ? AND status <> 'episode' "
                            "ORDER BY seq LIMIT 2000", (last,))
        for seq, content in rows:
            target.execute("UPDATE facts SET sig_text = ?, sig_meaning = ?, sig_core = ? WHERE seq = ?",
                           (*Signatures.of(content), seq))
        if len(rows) < 2000:
            return
        last = rows[-1][0]


def _record(target: MigrationTarget, name: str) -> None:
    at = datetime.now(UTC).isoformat(timespec="microseconds")
    target.execute(f"INSERT INTO {RECORD} (name, applied_at) VALUES (?, ?) ON CONFLICT DO NOTHING", (name, at))
