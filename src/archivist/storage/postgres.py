"""PostgreSQL backend: for deployments that outgrow one machine.

Same contract as the SQLite store (:class:`~archivist.storage.base.Store`), checked
by the same conformance suite (:mod:`archivist.testing.conformance`).

* **Connections**: a ``psycopg_pool`` pool; a transaction is bound to the calling
  thread, so nested ``transaction()`` blocks join the outer one, as in SQLite.
* **Isolation in the database**: every table holding user data has Row-Level
  Security (``FORCE``d, so the owner is bound too) with one policy: a row is
  visible only when its tenant and user equal the settings ``archivist.tenant`` /
  ``archivist.user``, which each transaction sets with ``set_config(..., true)``
  (``SET LOCAL``). Queries still filter by tenant, user and agent themselves: the
  policy is the second guard, against a query that forgot its filter. Connecting
  as a role that bypasses RLS (a superuser), the store switches each pooled
  connection to the unprivileged role ``archivist_app`` so the policies hold.
  Maintenance (reindex, re-embedding, key lookups) says so explicitly with
  ``archivist.maintenance``. One derived table has no policy: ``fact_terms``, the
  keyword index (PostgreSQL will not use a GIN index for ``@@`` under RLS, because
  ``@@`` is not leakproof); it holds lexemes and row numbers only, and every query
  joins it to ``facts``, where the policy applies.
* **Writers**: a write transaction takes a transaction-scoped advisory lock per
  (tenant, user) before its first statement for that user, so read-check-write
  sequences (dedupe, supersede, versioned preferences, consolidation) are
  serialised per user exactly as SQLite serialises them per file, while different
  users write in parallel.
* **Keyword search**: jieba-segmented text (the same segmentation as SQLite) in a
  ``tsvector`` over ``archivist_text``, a copy of the ``simple`` configuration
  whose ASCII words are Snowball-stemmed (SQLite uses Porter), with a GIN index.
  Ranking is idf-weighted term coverage (see :meth:`PostgresStore.keyword_search`).
* **Vectors**: pgvector, HNSW (cosine) with iterative index scans, so a filtered
  scope still gets ``k`` results.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from ..clock import ensure_utc
from ..errors import EmbedderMismatch, FactNotFound, SchemaTooNew, StaleWrite, StoreConflict, StoreError, StoreLocked
from ..index.text import segment_for_index
from ..model import (INDEXED, AuditEntry, Category, Evidence, Fact, Identity, Preference, Profile, Status,
                     TaskState)
from .base import KeywordMatch, Progress, Store, cache_keys, graph_vector_columns
from .rows import (
    FACT_COLUMNS,
    N_FACT_COLUMNS,
    PROFILE_COLUMNS,
    SUMMARY_COLUMNS,
    FORGOTTEN_SUMMARY,
    Counts,
    api_key_from_row,
    as_time,
    fact_from_row,
    fact_params,
    profile_section_from_row,
    profile_section_params,
    index_text,
    iso,
    redaction_needles,
    consolidation_run_from_row,
    review_item_from_row,
    summary_from_row,
    visible,
)

F_COLUMNS = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))

APP_ROLE = "archivist_app"
TS_CONFIG = "archivist_text"
MIGRATION_LOCK = 0x61726368  # "arch": one migrator at a time across processes

log = logging.getLogger(__name__)

USER_TABLES = ("facts", "profile_sections", "audit", "evidence", "preferences", "task_states", "context_traces",
               "tombstones", "session_summaries", "review_items", "consolidation_runs", "processed_messages",
               "graph_items", "fact_vectors", "term_stats")

def _visible(identity: Identity, column: str = "project") -> tuple[str, tuple]:
    return visible(identity, column, "%s")


MIGRATIONS: list[str] = [
    # 1: everything the SQLite schema holds at its version 9, in PostgreSQL terms
    f"""
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TEXT SEARCH DICTIONARY archivist_english_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION {TS_CONFIG} (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION {TS_CONFIG}
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH archivist_english_stem;

    CREATE TABLE facts (
        seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id                text NOT NULL UNIQUE,
        tenant            text NOT NULL,
        user_id           text NOT NULL,
        agent             text NOT NULL,
        project           text,
        key               text,
        content           text NOT NULL,
        content_hash      text NOT NULL,
        category          text NOT NULL,
        kind              text NOT NULL,
        scope             text NOT NULL,
        durability        text NOT NULL,
        authority         text NOT NULL,
        confidence        double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        status            text NOT NULL,
        source_type       text NOT NULL,
        thread_id         text,
        message_id        text,
        evidence_text     text,
        extractor         text,
        extractor_version text,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        last_confirmed_at timestamptz NOT NULL,
        valid_until       timestamptz,
        version           integer NOT NULL DEFAULT 1,
        supersedes        text REFERENCES facts(id),
        context           text,
        valid_from        timestamptz,
        recorded_at       timestamptz,
        retired_at        timestamptz
    );
    CREATE INDEX facts_by_scope ON facts (tenant, user_id, agent, status, created_at);
    CREATE INDEX facts_by_hash ON facts (tenant, user_id, agent, content_hash);
    CREATE INDEX facts_by_supersedes ON facts (supersedes);
    CREATE INDEX facts_by_key ON facts (tenant, user_id, agent, key, version);
    CREATE UNIQUE INDEX facts_one_live_key ON facts (tenant, user_id, agent, key)
        WHERE key IS NOT NULL AND status = 'committed';
    -- the derived keyword index: one row per committed fact. It has no RLS policy:
    -- PostgreSQL will not use a GIN index under RLS for @@, which is not leakproof.
    -- Its rows are lexemes and a row number; every query joins them to facts, where
    -- the policy applies.
    CREATE TABLE fact_terms (
        fact_seq bigint PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        tenant   text NOT NULL,
        user_id  text NOT NULL,
        agent    text NOT NULL,
        tsv      tsvector NOT NULL
    );
    CREATE INDEX fact_terms_by_scope ON fact_terms (tenant, user_id, agent);
    CREATE INDEX fact_terms_tsv ON fact_terms USING gin (tsv);
    -- document frequency of each lexeme per scope, kept in step with fact_terms (the
    -- empty lexeme counts the scope's indexed facts): idf and query planning without
    -- counting matches at query time
    CREATE TABLE term_stats (
        tenant  text NOT NULL,
        user_id text NOT NULL,
        agent   text NOT NULL,
        lexeme  text NOT NULL,
        df      integer NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, lexeme)
    );

    CREATE TABLE profile_sections (
        tenant text NOT NULL, user_id text NOT NULL, section text NOT NULL, summary text NOT NULL,
        updated_at timestamptz NOT NULL, source_message_ids text NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant, user_id, section)
    );
    CREATE TABLE audit (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, at timestamptz NOT NULL,
        action text NOT NULL, code text NOT NULL, reason text NOT NULL, fact_id text, content_hash text,
        content text, message_id text
    );
    CREATE INDEX audit_by_scope ON audit (tenant, user_id, agent, seq);
    CREATE TABLE evidence (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        source text NOT NULL, content text NOT NULL, observed_at timestamptz NOT NULL, created_at timestamptz NOT NULL
    );
    CREATE INDEX evidence_by_owner ON evidence (tenant, user_id, created_at);
    CREATE TABLE preferences (
        tenant text NOT NULL, user_id text NOT NULL, key text NOT NULL, value text NOT NULL,
        trusted boolean NOT NULL, source text NOT NULL, version integer NOT NULL,
        updated_at timestamptz NOT NULL, expires_at timestamptz,
        PRIMARY KEY (tenant, user_id, key)
    );
    CREATE TABLE task_states (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, task_id text NOT NULL,
        goal text NOT NULL, criteria text NOT NULL DEFAULT '[]', done text NOT NULL DEFAULT '[]',
        missing text NOT NULL DEFAULT '[]', version integer NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, task_id)
    );
    CREATE TABLE context_traces (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        created_at timestamptz NOT NULL, payload text NOT NULL
    );
    CREATE INDEX traces_by_scope ON context_traces (tenant, user_id, agent, created_at);
    CREATE TABLE vector_meta (
        id integer PRIMARY KEY CHECK (id = 1), model text NOT NULL, dim integer NOT NULL
    );
    CREATE TABLE fact_vectors (
        fact_seq  bigint PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        tenant    text NOT NULL,
        user_id   text NOT NULL,
        agent     text NOT NULL,
        embedding vector NOT NULL  -- typed vector(dim) and HNSW-indexed once the model is known
    );
    CREATE INDEX fact_vectors_by_scope ON fact_vectors (tenant, user_id, agent);
    CREATE TABLE embedding_cache (
        model text NOT NULL, content_hash text NOT NULL, vector bytea NOT NULL,
        PRIMARY KEY (model, content_hash)
    );
    CREATE TABLE tombstones (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, content_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, content_hash)
    );
    CREATE TABLE session_summaries (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        thread_id text NOT NULL, first_message_id text, last_message_id text, message_count integer NOT NULL,
        payload text NOT NULL, cited_fact_ids text NOT NULL DEFAULT '[]', evidence_id text, stale_reason text,
        created_at timestamptz NOT NULL
    );
    CREATE INDEX summaries_by_scope ON session_summaries (tenant, user_id, agent, created_at);
    CREATE TABLE review_items (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        kind text NOT NULL, fact_ids text NOT NULL, reason text NOT NULL, status text NOT NULL DEFAULT 'open',
        created_at timestamptz NOT NULL, resolved_at timestamptz
    );
    CREATE INDEX review_by_scope ON review_items (tenant, user_id, agent, status);
    CREATE TABLE consolidation_runs (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        started_at timestamptz NOT NULL, trigger text NOT NULL, plan text NOT NULL
    );
    CREATE INDEX runs_by_scope ON consolidation_runs (tenant, user_id, agent, started_at);
    CREATE TABLE processed_messages (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, thread_id text NOT NULL,
        message_id text NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, thread_id, message_id)
    );
    CREATE TABLE graph_items (
        tenant text NOT NULL, namespace text NOT NULL, user_id text NOT NULL, key text NOT NULL,
        value text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        expires_at timestamptz, ttl_minutes double precision,
        PRIMARY KEY (tenant, namespace, key)
    );
    CREATE TABLE api_keys (
        id text PRIMARY KEY, key_hash text NOT NULL UNIQUE, tenant text NOT NULL, users text NOT NULL,
        agents text NOT NULL, role text NOT NULL, label text, created_at timestamptz NOT NULL,
        revoked_at timestamptz
    );

    -- Row-Level Security: the second guard of tenant and user isolation
    CREATE FUNCTION archivist_visible(row_tenant text, row_user text) RETURNS boolean
        LANGUAGE sql STABLE AS $$
        SELECT coalesce(current_setting('archivist.maintenance', true), '') = 'on'
            OR (row_tenant = current_setting('archivist.tenant', true)
                AND (row_user = current_setting('archivist.user', true)
                     OR current_setting('archivist.user', true) = '*'))
    $$;
    """
    + "".join(
        f"""
    ALTER TABLE {t} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE {t} FORCE ROW LEVEL SECURITY;
    CREATE POLICY {t}_scoped ON {t} USING (archivist_visible(tenant, user_id))
        WITH CHECK (archivist_visible(tenant, user_id));
    """
        for t in USER_TABLES
    ),
    # 2: project memory — one live value per key in each project (and outside every project)
    """
    DROP INDEX facts_one_live_key;
    CREATE UNIQUE INDEX facts_one_live_key ON facts (tenant, user_id, agent, coalesce(project, ''), key)
        WHERE key IS NOT NULL AND status = 'committed';
    """,
    # 3: evidence ids belong to their (tenant, user) and keep versions (observed_at may be unknown);
    #    facts by category
    """
    ALTER TABLE evidence DROP CONSTRAINT evidence_pkey;
    ALTER TABLE evidence ADD COLUMN version integer NOT NULL DEFAULT 1;
    ALTER TABLE evidence ALTER COLUMN observed_at DROP NOT NULL;
    ALTER TABLE evidence ADD PRIMARY KEY (tenant, user_id, id, version);
    -- stated preferences are read on every model call
    CREATE INDEX facts_by_category ON facts (tenant, user_id, agent, category, status, created_at);
    """,
    # 4: keyword statistics per project too ('' = no project): a scope outside every
    #    project, or in one, must not learn from its scores what another project holds
    """
    ALTER TABLE fact_terms ADD COLUMN project text NOT NULL DEFAULT '';
    UPDATE fact_terms t SET project = f.project FROM facts f WHERE f.seq = t.fact_seq AND f.project IS NOT NULL;
    ALTER TABLE term_stats ADD COLUMN project text NOT NULL DEFAULT '';
    ALTER TABLE term_stats DROP CONSTRAINT term_stats_pkey;
    DELETE FROM term_stats;
    INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df)
        SELECT tenant, user_id, agent, project, l, count(*) FROM fact_terms,
        unnest(tsvector_to_array(tsv) || '{""}'::text[]) AS l GROUP BY 1, 2, 3, 4, 5;
    ALTER TABLE term_stats ADD PRIMARY KEY (tenant, user_id, agent, project, lexeme);
    """,
    # 5: LangGraph store items keep the vectors of the fields they were indexed by
    #    (vector_paths NULL = written before indexing existed; '[]' = not indexed)
    """
    ALTER TABLE graph_items ADD COLUMN vector_paths text;
    ALTER TABLE graph_items ADD COLUMN vectors bytea;
    """,
    # 6: episodes — what was said, kept as rows of status 'episode' beside the facts
    #    (indexed and forgotten like them): who said it, and a look-up by message
    """
    ALTER TABLE facts ADD COLUMN role text;
    ALTER TABLE facts ADD COLUMN speaker text;
    CREATE INDEX facts_by_message ON facts (tenant, user_id, agent, message_id);
    """,
    # 7: a profile section keeps its sentences and the facts each one states
    """
    ALTER TABLE profile_sections ADD COLUMN sentences text NOT NULL DEFAULT '[]';
    """,
]

def _ts(value: datetime | None) -> datetime | None:
    return ensure_utc(value) if value else None


def _lock_key(tenant: str, user: str) -> int:
    """A stable signed 64-bit advisory lock key for one (tenant, user)."""
    digest = hashlib.blake2b(f"{tenant}\x1f{user}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for messages and ``store.path``."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - a malformed DSN is reported by connect()
        return "postgresql://(unparsable DSN)"
    if "password" in parts:
        parts["password"] = "***"
    return make_conninfo(**parts)


MAINTENANCE = ("", "", "on")  # (tenant, user, maintenance) settings of admin/maintenance work


@dataclass
class _Tx:
    """The calling thread's open transaction."""

    conn: Any
    depth: int = 1
    settings: tuple[str, str, str] | None = None
    locked: set[tuple[str, str]] = field(default_factory=set)


class PostgresStore(Store):
    """A store in a PostgreSQL database (psycopg 3, pooled). Thread-safe."""

    concurrent_reads = True

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 8, vacuum_on_forget: bool = True,
                 purge_on_forget: bool = True, connect_timeout: float = 30.0, ef_search: int = 100) -> None:
        """``max_size``: pooled connections; ``vacuum_on_forget``: VACUUM the touched
        tables after a forget so dead rows and index entries go now; ``purge_on_forget``:
        then rebuild the keyword indexes (:meth:`purge`), whose pages would otherwise keep
        forgotten words; ``ef_search``: HNSW candidate list (at least 4 × the requested k)."""
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - the extra is part of dev installs
            raise StoreError("the PostgreSQL backend needs: pip install 'archivist[postgres]'") from exc
        self._psycopg = psycopg
        self.dsn = dsn
        self.path = redact_dsn(dsn)
        self.vacuum_on_forget = vacuum_on_forget
        self.purge_on_forget = purge_on_forget
        self.ef_search = ef_search
        self._local = threading.local()
        self._closed = False
        self._migrate()
        self._pool = ConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False, configure=self._configure,
            kwargs={"autocommit": True}, name="archivist",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreError(f"{self.path}: cannot open a connection pool ({exc})") from exc

    # -- plumbing ---------------------------------------------------------------
    def _connect(self):
        try:
            return self._psycopg.connect(self.dsn, autocommit=True)
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.path}: cannot connect to PostgreSQL ({str(exc).strip()})") from exc

    def _migrate(self) -> None:
        with self._connect() as conn:
            if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                self._check_replica(conn)
                return
            conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS archivist_schema_migrations "
                             "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                current = conn.execute("SELECT coalesce(max(version), 0) FROM archivist_schema_migrations").fetchone()[0]
                if current > len(MIGRATIONS):
                    raise SchemaTooNew(f"{self.path} has schema version {current}; this archivist knows up to "
                                       f"{len(MIGRATIONS)}. Upgrade archivist.")
                for version in range(current + 1, len(MIGRATIONS) + 1):
                    with conn.transaction():
                        conn.execute(MIGRATIONS[version - 1])
                        conn.execute("INSERT INTO archivist_schema_migrations (version) VALUES (%s)", (version,))
                bypass = conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
                                      ).fetchone()[0]
                self._app_role = APP_ROLE if bypass else None
                if bypass:
                    self._ensure_app_role(conn)
            except self._psycopg.Error as exc:
                raise StoreError(f"{self.path}: migration failed ({str(exc).strip()})") from exc
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))

    def _check_replica(self, conn) -> None:
        """A read replica cannot migrate: it must already be at this schema (migrate
        the primary first). Writes through it fail as read-only transactions."""
        try:
            current = conn.execute("SELECT coalesce(max(version), 0) FROM archivist_schema_migrations").fetchone()[0]
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.path}: a read replica without the archivist schema; open the primary "
                             "once first") from exc
        if current != len(MIGRATIONS):
            raise StoreError(f"{self.path}: the replica is at schema version {current}, this archivist needs "
                             f"{len(MIGRATIONS)}; migrate the primary first")
        bypass = conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        self._app_role = APP_ROLE if bypass else None

    def _ensure_app_role(self, conn) -> None:
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

    def _configure(self, conn) -> None:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        if self._app_role:
            conn.execute(f"SET ROLE {self._app_role}")

    @property
    def schema_version(self) -> int:
        return self._read(MAINTENANCE, "SELECT max(version) FROM archivist_schema_migrations")[0][0]

    @property
    def enforces_rls(self) -> bool:
        """Whether pooled connections are subject to the Row-Level Security policies."""
        rows = self._read(MAINTENANCE, "SELECT NOT (rolsuper OR rolbypassrls) FROM pg_roles WHERE rolname = current_user")
        return bool(rows and rows[0][0])

    def _tx(self) -> _Tx | None:
        return getattr(self._local, "tx", None)

    def _translate(self, exc: Exception) -> StoreError:
        errors = self._psycopg.errors
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, errors.IntegrityError):
            return StoreConflict(f"{self.path}: {text}")
        if isinstance(exc, (errors.DeadlockDetected, errors.SerializationFailure, errors.LockNotAvailable)):
            return StoreLocked(f"{self.path}: {text}")
        if isinstance(exc, self._psycopg.OperationalError):
            return StoreError(f"{self.path}: cannot reach PostgreSQL ({text})")
        return StoreError(f"{self.path}: {text}")

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
        try:
            with self._pool.connection() as conn:
                self._local.tx = _Tx(conn)
                try:
                    with conn.transaction():
                        yield
                finally:
                    self._local.tx = None
        except self._psycopg.Error as exc:
            raise self._translate(exc) from exc

    def _enter(self, tx: _Tx, settings: tuple[str, str, str], *, write: bool) -> None:
        """Apply the RLS settings of ``settings`` and, in a write transaction, take the
        user's advisory lock the first time this transaction touches that user."""
        tenant, user, maintenance = settings
        lock = write and user not in ("", "*") and (tenant, user) not in tx.locked
        if tx.settings == settings and not lock:
            return
        sql = ("SELECT set_config('archivist.tenant', %s, true), set_config('archivist.user', %s, true), "
               "set_config('archivist.maintenance', %s, true)")
        params: list[Any] = [tenant, user, maintenance]
        if lock:
            sql += ", pg_advisory_xact_lock(%s)"
            params.append(_lock_key(tenant, user))
            tx.locked.add((tenant, user))
        tx.conn.execute(sql, params)
        tx.settings = settings

    @staticmethod
    def _settings(who: Identity | tuple[str, str, str]) -> tuple[str, str, str]:
        return (who.tenant, who.user, "off") if isinstance(who, Identity) else who

    def _read(self, who: Identity | tuple[str, str, str], sql: str, params: Sequence = (), *,
              prelude: tuple[str, Sequence] | None = None) -> list[tuple]:
        """Run a read as ``who`` (an identity, or settings) in the current transaction
        (which then holds the user's lock: a read there precedes a write) or a short one.
        ``prelude``: a statement run first in the same transaction (``SET LOCAL``s)."""
        settings = self._settings(who)
        tx = self._tx()
        try:
            if tx is not None:
                self._enter(tx, settings, write=True)
                if prelude:
                    tx.conn.execute(*prelude)
                return tx.conn.execute(sql, params).fetchall()
            with self._pool.connection() as conn, conn.transaction():
                self._enter(_Tx(conn), settings, write=False)
                if prelude:
                    conn.execute(*prelude)
                return conn.execute(sql, params).fetchall()
        except self._psycopg.Error as exc:
            raise self._translate(exc) from exc

    def _write(self, who: Identity | tuple[str, str, str], sql: str, params: Sequence = ()):
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: a write outside a transaction")
        self._enter(tx, self._settings(who), write=True)
        try:
            return tx.conn.execute(sql, params)
        except self._psycopg.Error as exc:
            raise self._translate(exc) from exc

    def _write_many(self, who, sql: str, rows: Sequence[Sequence]) -> int:
        """Run ``sql`` once per row in one pipeline; returns the rows it changed."""
        tx = self._tx()
        if tx is None:
            raise StoreError("internal: a write outside a transaction")
        self._enter(tx, self._settings(who), write=True)
        try:
            with tx.conn.cursor() as cur:
                cur.executemany(sql, rows, returning=False)
                return cur.rowcount
        except self._psycopg.Error as exc:
            raise self._translate(exc) from exc

    # -- facts ------------------------------------------------------------
    def insert_fact(self, fact: Fact) -> None:
        marks = ", ".join(["%s"] * N_FACT_COLUMNS)
        with self.transaction():
            seq = self._write(fact.identity, f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({marks}) RETURNING seq",
                              fact_params(fact, _ts)).fetchone()[0]
            if fact.status in INDEXED:
                self._index(seq, fact)

    def _index(self, seq: int, fact: Fact) -> None:
        """Add the fact to the keyword index and its lexemes to the scope's counts."""
        i = fact.identity
        self._write(
            i,
            "WITH t AS (INSERT INTO fact_terms (fact_seq, tenant, user_id, agent, project, tsv) "
            f"VALUES (%s, %s, %s, %s, %s, to_tsvector('{TS_CONFIG}', %s)) RETURNING tenant, user_id, agent, project, tsv) "
            "INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df) "
            "SELECT t.tenant, t.user_id, t.agent, t.project, l, 1 FROM t, "
            "unnest(tsvector_to_array(t.tsv) || '{\"\"}'::text[]) AS l "
            "ON CONFLICT (tenant, user_id, agent, project, lexeme) DO UPDATE SET df = term_stats.df + 1",
            (seq, i.tenant, i.user, i.agent, i.project or "", segment_for_index(index_text(fact))),
        )

    def _unindex(self, identity: Identity, seq: int) -> int:
        """Remove a fact from the keyword index; lexemes no fact holds any more go too."""
        row = self._write(identity, "DELETE FROM fact_terms WHERE fact_seq = %s "
                                    "RETURNING tsvector_to_array(tsv) || '{\"\"}'::text[], project", (seq,)).fetchone()
        if row is None:
            return 0
        scope = (identity.tenant, identity.user, identity.agent, row[1])
        self._write(identity, "DELETE FROM term_stats WHERE tenant = %s AND user_id = %s AND agent = %s "
                              "AND project = %s AND lexeme = ANY(%s) AND df <= 1", (*scope, row[0]))
        self._write(identity, "UPDATE term_stats SET df = df - 1 WHERE tenant = %s AND user_id = %s AND agent = %s "
                              "AND project = %s AND lexeme = ANY(%s)", (*scope, row[0]))
        return 1

    def update_fact(self, fact: Fact) -> None:
        i = fact.identity
        with self.transaction():
            vis, vp = _visible(i)
            row = self._write(i, f"SELECT seq FROM facts WHERE id = %s AND tenant = %s AND user_id = %s AND agent = %s "
                              f"AND {vis}", (fact.id, i.tenant, i.user, i.agent, *vp)).fetchone()
            if row is None:
                raise FactNotFound(fact.id)
            self._write(
                i,
                "UPDATE facts SET status = %s, confidence = %s, updated_at = %s, last_confirmed_at = %s, "
                "valid_until = %s, version = %s, supersedes = %s, valid_from = %s, recorded_at = %s, retired_at = %s, "
                "context = %s WHERE seq = %s",
                (fact.status.value, fact.confidence, _ts(fact.updated_at), _ts(fact.last_confirmed_at),
                 _ts(fact.valid_until), fact.version, fact.supersedes, _ts(fact.valid_from), _ts(fact.recorded_at),
                 _ts(fact.retired_at), fact.context, row[0]),
            )
            self._unindex(i, row[0])
            if fact.status in INDEXED:
                self._index(row[0], fact)
            else:
                self._write(i, "DELETE FROM fact_vectors WHERE fact_seq = %s", (row[0],))

    def get_fact(self, identity, fact_id):
        vis, vp = _visible(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE id = %s AND tenant = %s AND user_id = %s "
                                    f"AND agent = %s AND {vis}", (fact_id, identity.tenant, identity.user, identity.agent,
                                                                  *vp))
        return fact_from_row(rows[0]) if rows else None

    def list_facts(self, identity, *, statuses=(Status.COMMITTED,), key=None, live_at=None, limit=None, category=None,
                   expired_at=None, message_ids=None, thread_id=None):
        vis, vp = _visible(identity)
        sql = [f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant = %s AND user_id = %s AND agent = %s AND {vis}"]
        params: list = [identity.tenant, identity.user, identity.agent, *vp]
        if statuses:
            sql.append("AND status = ANY(%s)")
            params.append([Status(s).value for s in statuses])
        if key is not None:
            sql.append("AND key = %s")
            params.append(key)
        if thread_id is not None:
            sql.append("AND thread_id = %s")
            params.append(thread_id)
        if message_ids is not None:
            sql.append("AND message_id = ANY(%s)")
            params.append(list(message_ids))
        if category is not None:
            sql.append("AND category = %s")
            params.append(Category(category).value)
        if expired_at is not None:
            sql.append("AND valid_until IS NOT NULL AND valid_until <= %s")
            params.append(_ts(expired_at))
        if live_at is not None:  # history rows closed their validity when retired: keep them
            sql.append("AND (status NOT IN ('committed', 'candidate', 'episode') OR valid_until IS NULL OR valid_until > %s)")
            params.append(_ts(live_at))
        sql.append("ORDER BY created_at DESC, seq DESC")
        if limit is not None:
            sql.append("LIMIT %s")
            params.append(int(limit))
        return [fact_from_row(r) for r in self._read(identity, " ".join(sql), params)]

    def find_by_hash(self, identity, content_hash):
        vis, vp = _visible(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant = %s AND user_id = %s AND agent = %s "
                                    f"AND {vis} AND content_hash = %s AND status IN ('committed', 'candidate')",
                          (identity.tenant, identity.user, identity.agent, *vp, content_hash))
        return [fact_from_row(r) for r in rows]

    # -- keyword search ---------------------------------------------------------
    #: planning starts at this many indexed facts in the scope (as in SQLite)
    plan_min_docs = 20_000
    #: a term in more than this share of the scope's facts is "common"
    common_ratio = 0.01

    def keyword_search(self, identity, terms, *, limit, live_at, statuses=(Status.COMMITTED,)):
        """Idf-weighted term coverage: a fact scores ``Σ idf(t)`` over the query terms
        it holds (idf from the term's document count in the scope, read from
        ``term_stats``), plus a small ``ts_rank`` share that breaks ties by term frequency and
        length. Like SQLite's planner, when the scope is large and a query holds rare
        terms, only those select rows; the common ones still add their weight.
        ``KeywordMatch.bm25`` carries the negated score (smaller is better)."""
        terms = [t for t in dict.fromkeys(terms) if t and any(ch.isalnum() for ch in t)]
        if not terms:
            return []
        # what the scope sees: its facts outside every project, and its project's
        scope = (identity.tenant, identity.user, identity.agent, ["", identity.project or ""])
        stats = self._read(
            identity,
            # per term: its tsquery, and the fewest facts holding any one of its lexemes
            # (and the scope's indexed fact count, under the empty lexeme)
            f"SELECT q::text, numnode(q), (SELECT coalesce(min(d), 0) FROM (SELECT coalesce(sum(s.df), 0) AS d "
            f"FROM unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', t.term))) AS l LEFT JOIN term_stats s "
            "ON s.tenant = %s AND s.user_id = %s AND s.agent = %s AND s.project = ANY(%s) AND s.lexeme = l "
            "GROUP BY l) x), "
            "(SELECT sum(df) FROM term_stats WHERE tenant = %s AND user_id = %s AND agent = %s AND project = ANY(%s) "
            "AND lexeme = '') "
            f"FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, n), LATERAL plainto_tsquery('{TS_CONFIG}', t.term) AS q "
            "ORDER BY n",
            (*scope, *scope, terms),
        )
        docs = int(stats[0][3] or 0) if stats else 0
        weighted = []
        for (query, nodes, df, _), term in zip(stats, terms, strict=True):
            if nodes and df:
                idf = max(math.log((docs - df + 0.5) / (df + 0.5) + 1.0), 1e-6)
                weighted.append((term, query, df, idf))
        if not weighted:
            return []
        common = [w for w in weighted if docs >= self.plan_min_docs and w[2] > self.common_ratio * docs]
        rare = [w for w in weighted if w not in common]
        selecting = rare or weighted
        match = " || ".join(["%s::tsquery"] * len(selecting))
        score = " + ".join(["%s * (tsv @@ %s::tsquery)::int"] * len(weighted))
        params: list[Any] = []
        for _, query, _, idf in weighted:
            params += [idf, query]
        queries = [q for _, q, _, _ in selecting]
        hits = self._top_then_facts(
            identity,
            f"SELECT fact_seq, {score} + 0.01 * ts_rank(tsv, ({match}), 1) AS score FROM fact_terms "
            f"WHERE tenant = %s AND user_id = %s AND agent = %s AND project = ANY(%s) AND tsv @@ ({match}) "
            "ORDER BY score DESC, fact_seq LIMIT %s",
            [*params, *queries, *scope, *queries], limit, live_at, best_first=True, statuses=statuses,
        )
        used = tuple(t for t, *_ in selecting)
        dropped = tuple(t for t, *_ in common) if rare else ()
        return [KeywordMatch(fact, -score, 0.0, used, dropped) for fact, score in hits]

    def _top_then_facts(self, identity: Identity, top_sql: str, params: list, limit: int, live_at: datetime, *,
                        best_first: bool, prelude: tuple[str, Sequence] | None = None,
                        statuses: Sequence[Status] = (Status.COMMITTED,)) -> list[tuple[Fact, float]]:
        """Rank in the derived table first (``top_sql`` yields ``fact_seq, score`` and
        ends with ``LIMIT %s``), then look each hit up by primary key in ``facts``
        (the ``OFFSET 0`` fence keeps the planner on the key whatever its statistics
        say), keep the live ones, and widen the fetch until ``limit`` survive or the
        ranking has nothing more."""
        fetch = limit
        vis, vp = _visible(identity)
        while True:
            rows = self._read(
                identity,
                f"SELECT {F_COLUMNS}, h.score FROM ({top_sql}) h LEFT JOIN LATERAL (SELECT * FROM facts "
                f"WHERE seq = h.fact_seq AND tenant = %s AND user_id = %s AND agent = %s AND {vis} "
                "AND status = ANY(%s) AND (valid_until IS NULL OR valid_until > %s) OFFSET 0) f ON true "
                "ORDER BY h.score " + ("DESC" if best_first else "ASC") + ", h.fact_seq",
                (*params, fetch, identity.tenant, identity.user, identity.agent, *vp,
                 [Status(x).value for x in statuses], _ts(live_at)),
                prelude=prelude,
            )
            live = [(fact_from_row(r), float(r[N_FACT_COLUMNS])) for r in rows if r[0] is not None]
            if len(live) >= limit or len(rows) < fetch:  # enough, or nothing more to fetch
                return live[:limit]
            fetch *= 4

    # -- versions and time ------------------------------------------------------
    def successor(self, identity, fact_id):
        vis, vp = _visible(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE supersedes = %s AND tenant = %s "
                                    f"AND user_id = %s AND agent = %s AND {vis} ORDER BY seq LIMIT 1",
                          (fact_id, identity.tenant, identity.user, identity.agent, *vp))
        return fact_from_row(rows[0]) if rows else None

    def facts_as_of(self, identity, at):
        t = _ts(at)
        rows = self._read(
            identity,
            f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant = %s AND user_id = %s AND agent = %s AND "
            f"{_visible(identity)[0]} "
            "AND recorded_at IS NOT NULL AND recorded_at <= %s AND (retired_at IS NULL OR retired_at > %s) "
            "AND (retired_at IS NOT NULL OR valid_until IS NULL OR valid_until > %s) ORDER BY created_at DESC, seq DESC",
            (identity.tenant, identity.user, identity.agent, *_visible(identity)[1], t, t, t),
        )
        return [fact_from_row(r) for r in rows]

    def key_history(self, identity, key):
        vis, vp = _visible(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant = %s AND user_id = %s AND agent = %s "
                                    f"AND {vis} AND key = %s ORDER BY version, created_at, seq",
                          (identity.tenant, identity.user, identity.agent, *vp, key))
        return [fact_from_row(r) for r in rows]

    # -- profile and audit --------------------------------------------------------
    def get_profile(self, identity):
        rows = self._read(identity, f"SELECT {PROFILE_COLUMNS} FROM profile_sections "
                                    "WHERE tenant = %s AND user_id = %s", (identity.tenant, identity.user))
        return Profile({r[0]: profile_section_from_row(r) for r in rows})

    def put_profile_section(self, identity, section):
        with self.transaction():
            self._write(identity,
                        f"INSERT INTO profile_sections (tenant, user_id, {PROFILE_COLUMNS}) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, user_id, section) "
                        "DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at, "
                        "source_message_ids = excluded.source_message_ids, sentences = excluded.sentences",
                        profile_section_params(identity, section, _ts))

    def record_audit(self, identity, entries):
        if not entries:
            return
        with self.transaction():
            self._write_many(identity,
                             "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, content_hash, "
                             "content, message_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                             [(identity.tenant, identity.user, identity.agent, _ts(e.at), e.action, e.code, e.reason,
                               e.fact_id, e.content_hash, e.content, e.message_id) for e in entries])

    def audit_log(self, identity, *, limit=100):
        rows = self._read(identity, "SELECT at, action, code, reason, fact_id, content_hash, content, message_id FROM audit "
                                    "WHERE tenant = %s AND user_id = %s AND agent = %s ORDER BY seq DESC LIMIT %s",
                          (identity.tenant, identity.user, identity.agent, int(limit)))
        return [AuditEntry(as_time(r[0]), *r[1:]) for r in rows]

    # -- derived indexes ------------------------------------------------------------
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Rebuild the keyword index from committed facts and episodes, in one transaction."""
        total = self._read(MAINTENANCE, "SELECT count(*) FROM facts WHERE status IN ('committed', 'episode')")[0][0]
        done = 0
        with self.transaction():
            self._write(MAINTENANCE, "DELETE FROM fact_terms")
            self._write(MAINTENANCE, "DELETE FROM term_stats")
            last = 0
            while True:
                batch = self._write(MAINTENANCE, "SELECT seq, tenant, user_id, agent, coalesce(project, ''), content, "
                                                 "context FROM facts "
                                                 "WHERE status IN ('committed', 'episode') AND seq > %s ORDER BY seq LIMIT 1000",
                                    (last,)).fetchall()
                if not batch:
                    break
                self._write_many(MAINTENANCE, "INSERT INTO fact_terms (fact_seq, tenant, user_id, agent, project, tsv) "
                                              f"VALUES (%s, %s, %s, %s, %s, to_tsvector('{TS_CONFIG}', %s))",
                                 [(seq, t, u, a, pr, segment_for_index(c + ("\n" + ctx if ctx else "")))
                                  for seq, t, u, a, pr, c, ctx in batch])
                last = batch[-1][0]
                done += len(batch)
                if progress:
                    progress(done, total)
            self._write(MAINTENANCE, "INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df) "
                                     "SELECT tenant, user_id, agent, project, l, count(*) FROM fact_terms, "
                                     "unnest(tsvector_to_array(tsv) || '{\"\"}'::text[]) AS l GROUP BY 1, 2, 3, 4, 5")
        return done

    # -- session summaries ----------------------------------------------------------
    def put_summary(self, identity, summary):
        with self.transaction():
            self._write(identity,
                        "INSERT INTO session_summaries VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (summary.id, identity.tenant, identity.user, identity.agent, summary.thread_id,
                         summary.first_message_id, summary.last_message_id, summary.message_count,
                         json.dumps(summary.payload(), ensure_ascii=False), json.dumps(list(summary.cited_fact_ids)),
                         summary.evidence_id, summary.stale_reason, _ts(summary.created_at)))

    def list_summaries(self, identity, *, since=None, limit=100):
        rows = self._read(
            identity,
            f"SELECT {SUMMARY_COLUMNS} FROM session_summaries WHERE tenant = %s AND user_id = %s "
            "AND agent = %s AND (%s::timestamptz IS NULL OR created_at > %s) ORDER BY created_at DESC LIMIT %s",
            (identity.tenant, identity.user, identity.agent, _ts(since), _ts(since), int(limit)),
        )
        return [summary_from_row(r) for r in rows]

    # -- export and import ------------------------------------------------------------
    def user_agents(self, tenant, user):
        who = (tenant, user, "off")
        rows = self._read(who, "SELECT agent FROM facts WHERE tenant = %s AND user_id = %s UNION SELECT agent FROM evidence "
                               "WHERE tenant = %s AND user_id = %s UNION SELECT agent FROM session_summaries "
                               "WHERE tenant = %s AND user_id = %s UNION SELECT agent FROM tombstones "
                               "WHERE tenant = %s AND user_id = %s ORDER BY 1", (tenant, user) * 4)
        return [r[0] for r in rows]

    def user_projects(self, tenant, user):
        return [r[0] for r in self._read((tenant, user, "off"), "SELECT DISTINCT project FROM facts WHERE tenant = %s "
                                         "AND user_id = %s AND project IS NOT NULL ORDER BY 1", (tenant, user))]

    def list_evidence(self, identity):
        rows = self._read(identity, "SELECT id, source, content, observed_at, created_at, version FROM evidence "
                                    "WHERE tenant = %s AND user_id = %s AND agent = %s ORDER BY created_at, id, version",
                          (identity.tenant, identity.user, identity.agent))
        return [Evidence(i, identity, src, c, as_time(o), as_time(cr), v) for i, src, c, o, cr, v in rows]

    def tombstones(self, identity):
        rows = self._read(identity, "SELECT content_hash, created_at FROM tombstones WHERE tenant = %s AND user_id = %s "
                                    "AND agent = %s ORDER BY content_hash", (identity.tenant, identity.user, identity.agent))
        return [(h, as_time(at)) for h, at in rows]

    def add_tombstone(self, identity, content_hash, at):
        with self.transaction():
            self._write(identity, "INSERT INTO tombstones VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (identity.tenant, identity.user, identity.agent, content_hash, _ts(at)))

    def fact_ids_present(self, ids):
        ids = list(ids)
        if not ids:
            return set()
        return {r[0] for r in self._read(MAINTENANCE, "SELECT id FROM facts WHERE id = ANY(%s)", (ids,))}

    def restore_preference(self, identity, pref):
        with self.transaction():
            self._write(identity, "INSERT INTO preferences VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (identity.tenant, identity.user, pref.key, pref.value, bool(pref.trusted), pref.source,
                         pref.version, _ts(pref.updated_at), _ts(pref.expires_at)))

    # -- LangGraph store items (tenant-wide: the namespace names the user) -------------
    _GRAPH_COLUMNS = "namespace, key, value, created_at, updated_at, expires_at, ttl_minutes, vector_paths, vectors"

    @staticmethod
    def _tenant(tenant: str) -> tuple[str, str, str]:
        return (tenant, "*", "off")

    @staticmethod
    def _graph_row(r: tuple) -> tuple:
        ns, key, value, created, updated, expires, ttl, paths, blob = r
        return (ns, key, value, iso(created), iso(updated), iso(expires), ttl, paths,
                bytes(blob) if blob is not None else None)

    def graph_put(self, tenant, namespace, user, key, value_json, now, ttl_minutes, vectors=None):
        expires = _ts(now + timedelta(minutes=ttl_minutes)) if ttl_minutes is not None else None
        paths, blob = graph_vector_columns(vectors)
        with self.transaction():
            self._write(self._tenant(tenant),
                        "INSERT INTO graph_items VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT (tenant, namespace, key) "
                        "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, "
                        "expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes, "
                        "vector_paths = excluded.vector_paths, vectors = excluded.vectors",
                        (tenant, namespace, user, key, value_json, _ts(now), _ts(now), expires, ttl_minutes,
                         paths, blob))

    def graph_delete(self, tenant, namespace, key):
        with self.transaction():
            self._write(self._tenant(tenant), "DELETE FROM graph_items WHERE tenant = %s AND namespace = %s AND key = %s",
                        (tenant, namespace, key))

    def graph_items(self, tenant, namespace_prefix, now, *, key=None):
        sql = f"SELECT {self._GRAPH_COLUMNS} FROM graph_items WHERE tenant = %s AND (expires_at IS NULL OR expires_at > %s)"
        params: list = [tenant, _ts(now)]
        if key is not None:
            sql += " AND namespace = %s AND key = %s"
            params += [namespace_prefix, key]
        elif namespace_prefix:
            sql += " AND (namespace = %s OR left(namespace, %s) = %s)"
            params += [namespace_prefix, len(namespace_prefix) + 1, namespace_prefix + "\x1f"]
        rows = self._read(self._tenant(tenant), sql + " ORDER BY updated_at DESC, namespace, key", params)
        return [self._graph_row(r) for r in rows]

    def graph_touch(self, tenant, keys, now):
        with self.transaction():
            for namespace, key in keys:
                self._write(self._tenant(tenant),
                            "UPDATE graph_items SET expires_at = %s + ttl_minutes * interval '1 minute' WHERE tenant = %s "
                            "AND namespace = %s AND key = %s AND ttl_minutes IS NOT NULL",
                            (_ts(now), tenant, namespace, key))

    def graph_sweep(self, tenant, now):
        with self.transaction():
            return self._write(self._tenant(tenant), "DELETE FROM graph_items WHERE tenant = %s "
                               "AND expires_at IS NOT NULL AND expires_at <= %s", (tenant, _ts(now))).rowcount

    def graph_namespaces(self, tenant, now):
        return [r[0] for r in self._read(self._tenant(tenant),
                                         "SELECT DISTINCT namespace FROM graph_items WHERE tenant = %s "
                                         "AND (expires_at IS NULL OR expires_at > %s) ORDER BY namespace",
                                         (tenant, _ts(now)))]

    def users(self, tenant):
        rows = self._read(self._tenant(tenant),
                          "SELECT user_id FROM facts WHERE tenant = %s UNION SELECT user_id FROM profile_sections "
                          "WHERE tenant = %s UNION SELECT user_id FROM preferences WHERE tenant = %s ORDER BY 1",
                          (tenant, tenant, tenant))
        return [r[0] for r in rows]

    # -- API keys (no user data: looked up before any identity exists) -----------------
    def put_api_key(self, key_id, key_hash, tenant, users, agents, role, label, at):
        with self.transaction():
            self._write(MAINTENANCE, "INSERT INTO api_keys VALUES (%s, %s, %s, %s, %s, %s, %s, %s, NULL)",
                        (key_id, key_hash, tenant, json.dumps(users), json.dumps(agents), role, label, _ts(at)))

    def find_api_key(self, key_hash):
        rows = self._read(MAINTENANCE, "SELECT id, tenant, users, agents, role, label FROM api_keys WHERE key_hash = %s "
                                       "AND revoked_at IS NULL", (key_hash,))
        return api_key_from_row(rows[0]) if rows else None

    def revoke_api_key(self, key_id, at):
        with self.transaction():
            return self._write(MAINTENANCE, "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                               (_ts(at), key_id)).rowcount == 1

    # -- the update queue's watermark -------------------------------------------
    def processed_messages(self, identity, thread_id):
        rows = self._read(identity, "SELECT message_id FROM processed_messages WHERE tenant = %s AND user_id = %s "
                                    "AND agent = %s AND thread_id = %s",
                          (identity.tenant, identity.user, identity.agent, thread_id))
        return [r[0] for r in rows]

    def mark_processed(self, identity, thread_id, message_ids):
        if not message_ids:
            return
        with self.transaction():
            self._write_many(identity, "INSERT INTO processed_messages VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                             [(identity.tenant, identity.user, identity.agent, thread_id, m) for m in message_ids])

    # -- consolidation and the review queue -----------------------------------
    def last_consolidation(self, identity):
        rows = self._read(identity, "SELECT max(started_at) FROM consolidation_runs WHERE tenant = %s AND user_id = %s "
                                    "AND agent = %s", (identity.tenant, identity.user, identity.agent))
        return as_time(rows[0][0]) if rows else None

    def record_consolidation(self, identity, run_id, at, trigger, plan_json):
        with self.transaction():
            self._write(identity, "INSERT INTO consolidation_runs VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (run_id, identity.tenant, identity.user, identity.agent, _ts(at), trigger, plan_json))

    def consolidation_runs(self, identity, *, limit=20):
        rows = self._read(identity, "SELECT id, started_at, trigger, plan FROM consolidation_runs WHERE tenant = %s "
                                    "AND user_id = %s AND agent = %s ORDER BY started_at DESC LIMIT %s",
                          (identity.tenant, identity.user, identity.agent, int(limit)))
        return [consolidation_run_from_row(r) for r in rows]

    def add_review_item(self, identity, item_id, kind, fact_ids, reason, at):
        with self.transaction():
            self._write(identity, "INSERT INTO review_items (id, tenant, user_id, agent, kind, fact_ids, reason, created_at) "
                                  "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        (item_id, identity.tenant, identity.user, identity.agent, kind, json.dumps(list(fact_ids)),
                         reason, _ts(at)))

    def review_items(self, identity, *, status="open"):
        rows = self._read(identity, "SELECT id, kind, fact_ids, reason, status, created_at, resolved_at FROM review_items "
                                    "WHERE tenant = %s AND user_id = %s AND agent = %s AND status = %s ORDER BY created_at, id",
                          (identity.tenant, identity.user, identity.agent, status))
        return [review_item_from_row(r) for r in rows]

    def resolve_review_item(self, identity, item_id, at):
        with self.transaction():
            return self._write(identity, "UPDATE review_items SET status = 'resolved', resolved_at = %s WHERE id = %s "
                                         "AND tenant = %s AND user_id = %s AND agent = %s AND status = 'open'",
                               (_ts(at), item_id, identity.tenant, identity.user, identity.agent)).rowcount == 1

    # -- forgetting ---------------------------------------------------------------
    def is_tombstoned(self, identity, content_hash):
        return bool(self._read(identity, "SELECT 1 FROM tombstones WHERE tenant = %s AND user_id = %s AND agent = %s "
                                         "AND content_hash = %s",
                               (identity.tenant, identity.user, identity.agent, content_hash)))

    def lift_tombstone(self, identity, content_hash):
        with self.transaction():
            self._write(identity, "DELETE FROM tombstones WHERE tenant = %s AND user_id = %s AND agent = %s "
                                  "AND content_hash = %s", (identity.tenant, identity.user, identity.agent, content_hash))

    def forget_fact(self, identity, fact_ids, *, at):
        from ..model import content_hash

        counts = Counts()
        count = counts.add
        scope = (identity.tenant, identity.user, identity.agent)
        with self.transaction():
            for fact_id in fact_ids:
                vis, vp = _visible(identity)
                row = self._write(identity, f"SELECT {FACT_COLUMNS}, seq FROM facts WHERE id = %s "
                                            f"AND tenant = %s AND user_id = %s AND agent = %s AND {vis} FOR UPDATE",
                                  (fact_id, *scope, *vp)).fetchone()
                if row is None:
                    continue
                fact, seq = fact_from_row(row), row[N_FACT_COLUMNS]
                chash = content_hash(fact.content)
                count("fact_terms", self._unindex(identity, seq))
                count("fact_vectors", self._write(identity, "DELETE FROM fact_vectors WHERE fact_seq = %s", (seq,)).rowcount)
                count("embedding_cache", self._write(identity, "DELETE FROM embedding_cache WHERE content_hash = ANY(%s)",
                                                     (cache_keys(identity.tenant, fact.embed_text),)).rowcount)
                count("facts (links cleared)", self._write(
                    identity, "UPDATE facts SET supersedes = NULL WHERE supersedes = %s AND tenant = %s AND user_id = %s "
                              "AND agent = %s", (fact_id, *scope)).rowcount)
                count("facts", self._write(identity, "DELETE FROM facts WHERE seq = %s", (seq,)).rowcount)
                count("audit (text redacted)", self._write(
                    identity, "UPDATE audit SET content = NULL, reason = replace(reason, %s, '[forgotten]') "
                              "WHERE tenant = %s AND user_id = %s AND agent = %s AND (fact_id = %s OR content_hash = %s)",
                    (fact.content, *scope, fact_id, chash)).rowcount)
                quotes = [fact.content] + ([fact.provenance.evidence_text] if fact.provenance.evidence_text else [])
                count("context_traces (redacted)", self._redact("context_traces", "payload", identity, quotes))
                count("session_summaries (redacted)", self._redact("session_summaries", "payload", identity, quotes))
                count("evidence (redacted)", self._redact("evidence", "content", identity, quotes))
                count("session_summaries (marked stale)", self._write(
                    identity, "UPDATE session_summaries SET stale_reason = %s WHERE tenant = %s AND user_id = %s "
                              "AND agent = %s AND stale_reason IS NULL AND cited_fact_ids::jsonb ? %s",
                    (f"cites forgotten fact {fact_id}", *scope, fact_id)).rowcount)
                count("session_summaries (text forgotten)", self._write(
                    identity, "UPDATE session_summaries SET payload = %s WHERE tenant = %s AND user_id = %s "
                              "AND agent = %s AND payload <> %s AND cited_fact_ids::jsonb ? %s",
                    (FORGOTTEN_SUMMARY, *scope, FORGOTTEN_SUMMARY, fact_id)).rowcount)
                count("tombstones", self._write(identity, "INSERT INTO tombstones VALUES (%s, %s, %s, %s, %s) "
                                                          "ON CONFLICT DO NOTHING", (*scope, chash, _ts(at))).rowcount)
                self._write(identity, "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, "
                                      "content_hash) VALUES (%s, %s, %s, %s, 'forget', 'forgotten', "
                                      "'forgotten at the user''s request', %s, %s)", (*scope, _ts(at), fact_id, chash))
        touched = ("facts", "fact_terms", "term_stats", "fact_vectors", "audit", "context_traces", "session_summaries",
                   "evidence", "embedding_cache")
        if counts and not self._clean_up_after_forget(touched):
            count("keyword index not rebuilt (run archivist purge)", 1)
        return dict(counts)

    def _redact(self, table: str, column: str, identity: Identity, quotes: Sequence[str]) -> int:
        """Replace the quotes (as plain text and as JSON string content) in the scope's rows."""
        changed = 0
        for needle in redaction_needles(quotes):
            changed += self._write(
                identity, f"UPDATE {table} SET {column} = replace({column}, %s, '[forgotten]') WHERE tenant = %s "
                          f"AND user_id = %s AND agent = %s AND strpos({column}, %s) > 0",
                (needle, identity.tenant, identity.user, identity.agent, needle)).rowcount
        return changed

    def forget_user(self, tenant, user):
        who = (tenant, user, "off")
        counts: dict[str, int] = {}
        with self.transaction():
            rows = self._write(who, f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant = %s AND user_id = %s",
                               (tenant, user)).fetchall()
            hashes = sorted({h for r in rows for h in cache_keys(tenant, fact_from_row(r).embed_text)})
            counts["fact_terms"] = self._write(who, "DELETE FROM fact_terms WHERE tenant = %s AND user_id = %s",
                                               (tenant, user)).rowcount
            counts["embedding_cache"] = self._write(who, "DELETE FROM embedding_cache WHERE content_hash = ANY(%s)",
                                                    (hashes,)).rowcount
            counts["fact_vectors"] = self._write(who, "DELETE FROM fact_vectors WHERE tenant = %s AND user_id = %s",
                                                 (tenant, user)).rowcount
            for table in USER_TABLES:
                if table != "fact_vectors":
                    counts[table] = self._write(who, f"DELETE FROM {table} WHERE tenant = %s AND user_id = %s",
                                                (tenant, user)).rowcount
        if not self._clean_up_after_forget(USER_TABLES + ("fact_terms", "embedding_cache")):
            counts["keyword index not rebuilt (run archivist purge)"] = 1
        return counts

    def _clean_up_after_forget(self, tables: Sequence[str]) -> bool:
        """Remove the dead row versions (and their index entries) of forgotten rows now,
        rather than when autovacuum gets to them, then purge. Runs outside any
        transaction, after the forget committed: False when the purge did not complete
        (the forget stands; ``archivist purge`` finishes the job)."""
        if self.vacuum_on_forget:
            with self._connect() as conn:
                conn.execute(f"VACUUM (INDEX_CLEANUP ON) {', '.join(tables)}")
        if self.purge_on_forget:
            try:
                self.purge()
            except StoreError as exc:
                log.warning("forgotten, but the keyword index was not rebuilt: %s", exc)
                return False
        return True

    def purge(self, *, full: bool = False, wait_seconds: float = 60.0) -> list[str]:
        """Rewrite what VACUUM leaves behind; returns the relations rewritten.

        VACUUM removes dead rows and their index entries, but a GIN index never drops a
        key once made, and freed b-tree and heap space keeps its old bytes until reused:
        the words of forgotten text would stay readable in the keyword index files. This
        rebuilds the keyword tables' indexes (``REINDEX … CONCURRENTLY``: reads and writes
        go on). It also re-samples the planner statistics (``ANALYZE``): those autovacuum
        took before a forget, whenever it ran, keep forgotten values in ``pg_statistic``
        (most common values, histogram bounds, tsvector lexemes), and ANALYZE leaves an
        emptied table's old ones in place, so those are cleared. ``full`` also rewrites
        every table holding user data and all their indexes (``VACUUM FULL``: an exclusive
        lock per table, for maintenance windows), then ``pg_statistic`` (superuser or
        MAINTAIN on it), so no page of the database keeps a forgotten byte. A rewrite
        copies the row versions a running transaction may still see, so each first waits
        up to ``wait_seconds`` for the transactions begun before it (StoreError if one
        is still running)."""
        tables = list(dict.fromkeys(USER_TABLES + ("fact_terms", "embedding_cache")))
        try:
            with self._connect() as conn:
                if full:
                    self._wait_for_older_transactions(conn, wait_seconds)
                    conn.execute(f"VACUUM FULL {', '.join(tables)}")
                    done = list(tables)
                else:
                    for table in ("fact_terms", "term_stats"):
                        conn.execute(f"REINDEX TABLE CONCURRENTLY {table}")
                    done = ["fact_terms indexes", "term_stats indexes"]
                self._resample_statistics(conn, tables)
                if full:
                    if self._may_rewrite_statistics(conn):
                        self._wait_for_older_transactions(conn, wait_seconds)
                        conn.execute("VACUUM FULL pg_catalog.pg_statistic")
                        done.append("pg_statistic")
                    else:
                        log.warning("%s: pg_statistic not rewritten (needs superuser or MAINTAIN on it): superseded "
                                    "planner statistics may keep bytes of forgotten values", self.path)
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.path}: purge failed ({str(exc).strip()})") from exc
        return done

    def _resample_statistics(self, conn, tables: Sequence[str]) -> None:
        """Planner statistics from the rows there are now; none for a table left empty
        (ANALYZE of an empty table keeps its old ones)."""
        conn.execute(f"ANALYZE {', '.join(tables)}")
        empty = [r[0] for r in conn.execute(
            "SELECT DISTINCT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname "
            "WHERE c.oid = ANY(%s::regclass[]) AND c.reltuples = 0", (list(tables),))]
        if not empty:
            return
        if conn.info.server_version >= 180000:
            conn.execute("SELECT pg_catalog.pg_clear_attribute_stats(n.nspname, c.relname, a.attname, false) "
                         "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "JOIN pg_attribute a ON a.attrelid = c.oid "
                         "WHERE c.oid = ANY(%s::regclass[]) AND a.attnum > 0 AND NOT a.attisdropped", (empty,))
        elif conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            conn.execute("DELETE FROM pg_catalog.pg_statistic WHERE starelid = ANY(%s::regclass[])", (empty,))
        else:
            log.warning("%s: the old planner statistics of the emptied tables %s stay (clearing them needs "
                        "PostgreSQL 18 or a superuser)", self.path, ", ".join(empty))

    @staticmethod
    def _may_rewrite_statistics(conn) -> bool:
        if conn.info.server_version >= 170000:
            return bool(conn.execute("SELECT has_table_privilege('pg_catalog.pg_statistic', 'MAINTAIN')").fetchone()[0])
        return bool(conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0])

    def _wait_for_older_transactions(self, conn, wait_seconds: float) -> None:
        """Wait until no transaction begun before now still runs: one holding an xid in
        any database of the server (the rewrite's own snapshot would keep the row
        versions it may see), a snapshot in this database, a prepared transaction, a
        replication slot or a standby's feedback. Autovacuum's plain VACUUMs hold back
        nothing. StoreError naming what still runs after ``wait_seconds``."""
        import time

        # an xid of our own: every transaction given one before it has a smaller one
        target = int(conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0])
        params = {"t": str(target), "x": str(target % 2**32)}
        deadline = time.monotonic() + wait_seconds
        while True:
            older = conn.execute("""
                SELECT 'pid ' || pid || ' (' || coalesce(datname, backend_type) || ', ' || coalesce(state, '') || ': '
                       || left(coalesce(query, ''), 60) || ')'
                  FROM pg_stat_activity
                 WHERE pid <> pg_backend_pid()
                   AND (age(backend_xid) > age(%(x)s::xid)
                        OR (age(backend_xmin) > age(%(x)s::xid) AND (datname = current_database() OR datname IS NULL)
                            AND NOT (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM%%'
                                     AND query NOT LIKE '%%ANALYZE%%')))
                UNION ALL
                SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts WHERE age(transaction) > age(%(x)s::xid)
                UNION ALL
                SELECT 'replication slot ' || slot_name FROM pg_replication_slots
                 WHERE age(xmin) > age(%(x)s::xid) OR age(catalog_xmin) > age(%(x)s::xid)
                UNION ALL
                SELECT 'the oldest running transaction (xid ' || pg_snapshot_xmin(pg_current_snapshot()) || ')'
                 WHERE pg_snapshot_xmin(pg_current_snapshot()) < %(t)s::xid8""", params).fetchall()
            if not older:
                return
            if time.monotonic() >= deadline:
                raise StoreError(f"{self.path}: purge waited {wait_seconds:g}s for transactions older than it, "
                                 f"still running: {'; '.join(dict.fromkeys(r[0] for r in older))}")
            time.sleep(0.1)

    # -- vectors (pgvector) -------------------------------------------------------
    def vector_model(self):
        rows = self._read(MAINTENANCE, "SELECT model, dim FROM vector_meta WHERE id = 1")
        return (rows[0][0], rows[0][1]) if rows else None

    def _ensure_vector_model(self, model: str, dim: int) -> None:
        """Record the store's model and give the column its dimension and an HNSW
        index (DDL: done once, as the owner, in its own transaction)."""
        if self.vector_model() is not None:
            return
        with self._connect() as conn, conn.transaction():
            conn.execute("LOCK TABLE vector_meta IN EXCLUSIVE MODE")
            if conn.execute("SELECT 1 FROM vector_meta").fetchone():
                return
            conn.execute("INSERT INTO vector_meta VALUES (1, %s, %s)", (model, int(dim)))
            conn.execute(f"ALTER TABLE fact_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
            conn.execute("CREATE INDEX fact_vectors_hnsw ON fact_vectors USING hnsw (embedding vector_cosine_ops)")

    def put_vectors(self, model, dim, rows):
        if self._tx() is None:
            self._ensure_vector_model(model, dim)
        with self.transaction():
            current = self._write(MAINTENANCE, "SELECT model, dim FROM vector_meta WHERE id = 1").fetchone()
            if current is None:
                raise StoreError("internal: vectors written inside a transaction before the store knew their model")
            if tuple(current) != (model, dim):
                raise EmbedderMismatch(model, dim, current[0], current[1])
            by_scope: dict[Identity, list[tuple]] = {}
            for fact, vector in rows:
                i = fact.identity
                by_scope.setdefault(Identity(i.tenant, i.user, i.agent), []).append(
                    (np.asarray(vector, dtype=np.float32), fact.id, i.tenant, i.user, i.agent))
            written = 0
            for identity, params in by_scope.items():
                written += self._write_many(
                    identity,
                    "INSERT INTO fact_vectors (fact_seq, tenant, user_id, agent, embedding) SELECT seq, tenant, user_id, "
                    "agent, %s FROM facts WHERE id = %s AND tenant = %s AND user_id = %s AND agent = %s "
                    "AND status IN ('committed', 'episode') ON CONFLICT (fact_seq) DO UPDATE SET embedding = excluded.embedding",
                    params)
            return written

    def vector_search(self, identity, query, *, limit, live_at, statuses=(Status.COMMITTED,)):
        meta = self.vector_model()
        if meta is None:
            return []
        query = np.asarray(query, dtype=np.float32)
        if query.shape[-1] != meta[1]:
            raise EmbedderMismatch("(query)", int(query.shape[-1]), meta[0], meta[1])
        ef = min(max(self.ef_search, 4 * int(limit)), 1000)
        hits = self._top_then_facts(
            identity,
            "SELECT fact_seq, embedding <=> %s AS score FROM fact_vectors WHERE tenant = %s AND user_id = %s "
            "AND agent = %s ORDER BY embedding <=> %s, fact_seq LIMIT %s",
            [query, identity.tenant, identity.user, identity.agent, query], limit, live_at, best_first=False,
            # iterative scans: the index keeps walking until enough rows pass the scope filter
            prelude=("SELECT set_config('hnsw.iterative_scan', 'strict_order', true), "
                     "set_config('hnsw.ef_search', %s, true)", (str(ef),)), statuses=statuses,
        )
        return [(fact, 1.0 - distance) for fact, distance in hits]

    def vectors_of(self, identity, fact_ids):
        if not fact_ids:
            return {}
        vis, vp = _visible(identity, "f.project")
        rows = self._read(identity, "SELECT f.id, v.embedding FROM facts f JOIN fact_vectors v ON v.fact_seq = f.seq "
                                    f"WHERE f.id = ANY(%s) AND f.tenant = %s AND f.user_id = %s AND f.agent = %s AND {vis}",
                          (list(fact_ids), identity.tenant, identity.user, identity.agent, *vp))
        return {fid: np.asarray(vec.to_numpy(), dtype=np.float32) for fid, vec in rows}

    def facts_without_vectors(self, *, limit=1000):
        rows = self._read(MAINTENANCE, f"SELECT {FACT_COLUMNS} FROM facts f WHERE status IN ('committed', 'episode') AND NOT EXISTS "
                                       "(SELECT 1 FROM fact_vectors v WHERE v.fact_seq = f.seq) ORDER BY seq LIMIT %s",
                          (int(limit),))
        return [fact_from_row(r) for r in rows]

    def drop_vectors(self):
        """Forget every vector and the model they came from (before a re-embed)."""
        with self._connect() as conn, conn.transaction():
            conn.execute("SELECT set_config('archivist.maintenance', 'on', true)")
            conn.execute("DELETE FROM fact_vectors")
            conn.execute("DELETE FROM vector_meta")
            conn.execute("DROP INDEX IF EXISTS fact_vectors_hnsw")
            conn.execute("ALTER TABLE fact_vectors ALTER COLUMN embedding TYPE vector")

    def cached_embeddings(self, model, hashes):
        if not hashes:
            return {}
        rows = self._read(MAINTENANCE, "SELECT content_hash, vector FROM embedding_cache WHERE model = %s "
                                       "AND content_hash = ANY(%s)", (model, list(hashes)))
        return {h: np.frombuffer(bytes(blob), dtype=np.float32) for h, blob in rows}

    def cache_embeddings(self, model, items):
        if not items:
            return
        with self.transaction():
            self._write_many(MAINTENANCE, "INSERT INTO embedding_cache VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                             [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items])

    # -- evidence, preferences, tasks, traces ---------------------------------------
    def put_evidence(self, evidence):
        i = evidence.identity
        with self.transaction():  # the user's lock is held: versions cannot race
            latest = self._write(i, "SELECT version, content, source FROM evidence WHERE tenant = %s AND user_id = %s "
                                    "AND id = %s ORDER BY version DESC LIMIT 1",
                                 (i.tenant, i.user, evidence.id)).fetchone()
            if latest is not None and (latest[1], latest[2]) == (evidence.content, evidence.source):
                return latest[0]  # the same text again: no new version
            version = latest[0] + 1 if latest else 1
            self._write(i, "INSERT INTO evidence (tenant, user_id, id, version, agent, source, content, observed_at, "
                           "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (i.tenant, i.user, evidence.id, version, i.agent, evidence.source, evidence.content,
                         _ts(evidence.observed_at), _ts(evidence.created_at)))
            return version

    def get_evidence(self, identity, evidence_id, version=None):
        rows = self._read(identity, "SELECT id, agent, source, content, observed_at, created_at, version FROM evidence "
                                    "WHERE id = %s AND tenant = %s AND user_id = %s"
                                    + (" AND version = %s" if version is not None else "")
                                    + " ORDER BY version DESC LIMIT 1",
                          (evidence_id, identity.tenant, identity.user, *([version] if version is not None else [])))
        if not rows:
            return None
        eid, agent, source, content, observed, created, ver = rows[0]
        return Evidence(eid, Identity(identity.tenant, identity.user, agent), source, content,
                        as_time(observed), as_time(created), ver)

    def get_preferences(self, identity):
        rows = self._read(identity, "SELECT key, value, trusted, source, version, updated_at, expires_at FROM preferences "
                                    "WHERE tenant = %s AND user_id = %s ORDER BY key", (identity.tenant, identity.user))
        return [Preference(k, v, bool(t), src, ver, as_time(at), as_time(exp)) for k, v, t, src, ver, at, exp in rows]

    def _expect_version(self, identity, what: str, sql: str, params: Sequence, based_on: int) -> int:
        row = self._write(identity, sql + " FOR UPDATE", params).fetchone()
        current = row[0] if row else 0
        if current != based_on:
            raise StaleWrite(f"{what} is at version {current}; this write was based on version {based_on}",
                             expected=based_on, current=current)
        return current

    def put_preference(self, identity, pref, *, based_on):
        with self.transaction():
            current = self._expect_version(identity, f"preference {pref.key!r}",
                                           "SELECT version FROM preferences WHERE tenant = %s AND user_id = %s AND key = %s",
                                           (identity.tenant, identity.user, pref.key), based_on)
            stored = replace(pref, version=current + 1)
            self._write(identity,
                        "INSERT INTO preferences VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, user_id, key) "
                        "DO UPDATE SET value = excluded.value, trusted = excluded.trusted, source = excluded.source, "
                        "version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                        (identity.tenant, identity.user, stored.key, stored.value, bool(stored.trusted), stored.source,
                         stored.version, _ts(stored.updated_at), _ts(stored.expires_at)))
            return stored

    def get_task(self, identity, task_id):
        rows = self._read(identity, "SELECT goal, criteria, done, missing, version, updated_at FROM task_states "
                                    "WHERE tenant = %s AND user_id = %s AND agent = %s AND task_id = %s",
                          (identity.tenant, identity.user, identity.agent, task_id))
        if not rows:
            return None
        goal, criteria, done, missing, version, at = rows[0]
        return TaskState(task_id, goal, tuple(json.loads(criteria)), tuple(json.loads(done)),
                         tuple(json.loads(missing)), version, as_time(at))

    def put_task(self, identity, task, *, based_on):
        with self.transaction():
            current = self._expect_version(identity, f"task {task.task_id!r}",
                                           "SELECT version FROM task_states WHERE tenant = %s AND user_id = %s AND agent = %s "
                                           "AND task_id = %s",
                                           (identity.tenant, identity.user, identity.agent, task.task_id), based_on)
            stored = replace(task, version=current + 1)
            self._write(identity,
                        "INSERT INTO task_states VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT (tenant, user_id, agent, task_id) DO UPDATE SET goal = excluded.goal, "
                        "criteria = excluded.criteria, done = excluded.done, missing = excluded.missing, "
                        "version = excluded.version, updated_at = excluded.updated_at",
                        (identity.tenant, identity.user, identity.agent, stored.task_id, stored.goal,
                         json.dumps(list(stored.criteria), ensure_ascii=False),
                         json.dumps(list(stored.done), ensure_ascii=False),
                         json.dumps(list(stored.missing), ensure_ascii=False), stored.version, _ts(stored.updated_at)))
            return stored

    def put_trace(self, identity, trace_id, created_at, payload):
        with self.transaction():
            self._write(identity, "INSERT INTO context_traces VALUES (%s, %s, %s, %s, %s, %s)",
                        (trace_id, identity.tenant, identity.user, identity.agent, _ts(created_at),
                         json.dumps(payload, ensure_ascii=False)))

    def get_trace(self, identity, trace_id):
        rows = self._read(identity, "SELECT payload FROM context_traces WHERE id = %s AND tenant = %s AND user_id = %s "
                                    "AND agent = %s", (trace_id, identity.tenant, identity.user, identity.agent))
        return json.loads(rows[0][0]) if rows else None

    def list_traces(self, identity, *, limit=20, thread_id=None):
        thread = " AND (payload::jsonb ->> 'thread_id') = %s" if thread_id is not None else ""
        rows = self._read(identity, "SELECT payload FROM context_traces WHERE tenant = %s AND user_id = %s AND agent = %s"
                                    f"{thread} ORDER BY created_at DESC LIMIT %s",
                          (identity.tenant, identity.user, identity.agent, *([thread_id] if thread else []),
                           int(limit)))
        return [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()
