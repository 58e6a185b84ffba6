"""PostgreSQL backend: for deployments that outgrow one machine (see the parts:
:mod:`.engine`, :mod:`.schema`, :mod:`.keywords`, :mod:`.vectors`, :mod:`.eraser`).
Same contract and the same shared policy as the SQLite store, checked by the same
conformance suite (:mod:`archivist.testing.conformance`)."""

from __future__ import annotations

from ...errors import StoreError
from ..core import SQLStore
from ..core.backend import MAINTENANCE
from ..core.erasure import erasure_mode
from ..core.migrate import applied, check_known, migrate
from .dsn import connect_error, redact_dsn
from .engine import APP_ROLE, PostgresEngine
from .eraser import PostgresEraser
from .keywords import PostgresKeywords
from .schema import (
    MIGRATIONS,
    POLICY_TABLES,
    POLICY_TABLES_0001,
    TS_CONFIG,
    PostgresMigrations,
)
from .vectors import PostgresVectors

_BYPASSES_RLS = "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database (psycopg 3, pooled). Thread-safe."""

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 8, vacuum_on_forget: bool = True,
                 purge_on_forget: bool = True, connect_timeout: float = 30.0, ef_search: int = 100,
                 erasure: str = "background") -> None:
        """``max_size``: pooled connections; ``vacuum_on_forget``: VACUUM the touched
        tables after a forget so dead rows and index entries go now; ``purge_on_forget``:
        then rebuild the keyword indexes (:meth:`purge`), whose pages would otherwise keep
        forgotten words; ``ef_search``: HNSW candidate list (at least 4 × the requested k);
        ``erasure``: ``background`` or ``inline`` (:mod:`~archivist.storage.core.erasure`)."""
        self.erasure = erasure_mode(erasure)
        try:
            import psycopg
            import psycopg_pool  # noqa: F401 - the pool the engine opens
        except ImportError as exc:  # pragma: no cover - the extra is part of dev installs
            raise StoreError("the PostgreSQL backend needs: pip install 'archivist[postgres]'") from exc
        self.dsn = dsn
        app_role = _prepare(psycopg, dsn)
        self.db = PostgresEngine(dsn, min_size=min_size, max_size=max_size, connect_timeout=connect_timeout,
                                 app_role=app_role)
        self.sql = self.db.dialect
        self.keyword_index = PostgresKeywords(self.db)
        self.vector_store = PostgresVectors(self.db, ef_search=ef_search)
        self.eraser = PostgresEraser(self.db, vacuum_on_forget=vacuum_on_forget, purge_on_forget=purge_on_forget)
        self._resume_erasure()

    @property
    def schema_version(self) -> int:
        """How many named migration steps the database has applied."""
        return self.db.read(MAINTENANCE, "SELECT count(*) FROM archivist_migrations")[0][0]

    @property
    def enforces_rls(self) -> bool:
        """Whether pooled connections are subject to the Row-Level Security policies."""
        rows = self.db.read(MAINTENANCE, "SELECT NOT (rolsuper OR rolbypassrls) FROM pg_roles "
                                         "WHERE rolname = current_user")
        return bool(rows and rows[0][0])


def _prepare(psycopg, dsn: str) -> str | None:
    """Migrate (a replica must already be at this schema) and say which role pooled
    connections take: ``archivist_app`` when the login role would bypass RLS."""
    where = redact_dsn(dsn)
    try:
        conn = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error as exc:
        raise connect_error(where, exc, dsn) from exc
    with conn:
        try:
            target = PostgresMigrations(conn)
            bypass = conn.execute(_BYPASSES_RLS).fetchone()[0]
            if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                _check_replica(target, where)
            else:
                with target.locked():  # the grants too: concurrent GRANTs collide
                    migrate(target, MIGRATIONS, where)
                    if bypass:
                        _ensure_app_role(conn)
        except psycopg.Error as exc:
            raise StoreError(f"{where}: migration failed ({str(exc).strip()})") from exc
    return APP_ROLE if bypass else None


def _check_replica(target: PostgresMigrations, where: str) -> None:
    """A read replica cannot migrate: it must already be at this schema (migrate the
    primary first). Writes through it fail as read-only transactions."""
    if not target.has_table("archivist_migrations"):
        raise StoreError(f"{where}: a read replica without the archivist schema (or an older one); "
                         "open the primary once first")
    done = applied(target)
    check_known(done, MIGRATIONS, where)
    if len(done) != len(MIGRATIONS):
        raise StoreError(f"{where}: the replica is at schema version {len(done)}, this archivist needs "
                         f"{len(MIGRATIONS)}; migrate the primary first")


def _ensure_app_role(conn) -> None:
    """The role pooled connections switch to when the login role would bypass RLS."""
    with conn.transaction():
        conn.execute(f"""
            DO $$ BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                    CREATE ROLE {APP_ROLE} NOLOGIN NOBYPASSRLS;
                END IF;
            END $$""")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {APP_ROLE}")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {APP_ROLE}")
        conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}")


__all__ = ["APP_ROLE", "MIGRATIONS", "POLICY_TABLES", "POLICY_TABLES_0001", "TS_CONFIG", "PostgresStore", "redact_dsn"]
