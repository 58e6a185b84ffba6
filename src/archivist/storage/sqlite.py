"""The embedded default: one SQLite file.

WAL journal, a busy timeout, foreign keys, ordered migrations recorded in
``schema_migrations``. ``facts`` holds every version of every card; ``facts_fts`` is
the derived keyword index (jieba-segmented text, ``unicode61`` + Porter), holding
committed facts only.

Scoping inside FTS5: each (tenant, user, agent) gets a small integer id in
``scopes``, and a fact's FTS rowid is ``scope_id << 36 | facts.seq``. Every scope is
then one contiguous rowid range, and FTS5 seeks its posting lists straight into that
range (``rowid BETWEEN lo AND hi``): it never scores another user's matches, however
large either scope is. The lookup back into ``facts`` still filters by tenant, user
and agent: the range is a speed-up, not the guard.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from ..clock import ensure_utc, parse_time
from ..errors import EmbedderMismatch, StoreConflict, SchemaTooNew, StaleWrite, StoreCorrupt, StoreError, StoreLocked
from ..index.text import quote_term, segment_for_index
from ..index.vectors import VectorIndex, open_index
from ..model import (
    AuditEntry,
    Category,
    Evidence,
    Fact,
    Identity,
    Preference,
    Profile,
    INDEXED,
    Status,
    TaskState,
)
from .base import KeywordMatch, Progress, Store, cache_keys, graph_vector_columns
from .rows import (
    FACT_COLUMNS,
    N_FACT_COLUMNS,
    PROFILE_COLUMNS,
    SUMMARY_COLUMNS,
    FORGOTTEN_SUMMARY,
    Counts,
    api_key_from_row,
    fact_from_row,
    fact_params,
    profile_section_from_row,
    profile_section_params,
    index_text,
    visible,
    redaction_needles,
    consolidation_run_from_row,
    review_item_from_row,
    summary_from_row,
)

MIGRATIONS: list[str] = [
    # 1: facts, profile, audit, keyword index
    """
    CREATE TABLE facts (
        seq               INTEGER PRIMARY KEY,
        id                TEXT NOT NULL UNIQUE,
        tenant            TEXT NOT NULL,
        user_id           TEXT NOT NULL,
        agent             TEXT NOT NULL,
        project           TEXT,
        key               TEXT,
        content           TEXT NOT NULL,
        content_hash      TEXT NOT NULL,
        category          TEXT NOT NULL,
        kind              TEXT NOT NULL,
        scope             TEXT NOT NULL,
        durability        TEXT NOT NULL,
        authority         TEXT NOT NULL,
        confidence        REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        status            TEXT NOT NULL,
        source_type       TEXT NOT NULL,
        thread_id         TEXT,
        message_id        TEXT,
        evidence_text     TEXT,
        extractor         TEXT,
        extractor_version TEXT,
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL,
        last_confirmed_at TEXT NOT NULL,
        valid_until       TEXT,
        version           INTEGER NOT NULL DEFAULT 1,
        supersedes        TEXT REFERENCES facts(id)
    );
    CREATE INDEX facts_by_scope ON facts(tenant, user_id, agent, status, created_at);
    CREATE INDEX facts_by_hash ON facts(tenant, user_id, agent, content_hash);
    CREATE INDEX facts_by_supersedes ON facts(supersedes);
    -- one committed fact per key and scope: a stale concurrent write fails here
    CREATE UNIQUE INDEX facts_one_live_key ON facts(tenant, user_id, agent, key)
        WHERE key IS NOT NULL AND status = 'committed';

    CREATE TABLE profile_sections (
        tenant             TEXT NOT NULL,
        user_id            TEXT NOT NULL,
        section            TEXT NOT NULL,
        summary            TEXT NOT NULL,
        updated_at         TEXT NOT NULL,
        source_message_ids TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant, user_id, section)
    );

    CREATE TABLE audit (
        seq          INTEGER PRIMARY KEY,
        tenant       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        agent        TEXT NOT NULL,
        at           TEXT NOT NULL,
        action       TEXT NOT NULL,
        code         TEXT NOT NULL,
        reason       TEXT NOT NULL,
        fact_id      TEXT,
        content_hash TEXT,
        content      TEXT,
        message_id   TEXT
    );
    CREATE INDEX audit_by_scope ON audit(tenant, user_id, agent, seq);

    CREATE TABLE scopes (
        id      INTEGER PRIMARY KEY,
        tenant  TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent   TEXT NOT NULL,
        UNIQUE (tenant, user_id, agent)
    );

    -- rowid = scope id << 36 | facts.seq: each scope is one rowid range
    CREATE VIRTUAL TABLE facts_fts USING fts5(
        body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 2: document frequencies of indexed terms, for query planning (a view, no data)
    """
    CREATE VIRTUAL TABLE facts_vocab USING fts5vocab(facts_fts, 'row');
    """,
    # 3: runtime context: evidence (cold, whole), preferences, task state, traces
    """
    CREATE TABLE evidence (
        id          TEXT PRIMARY KEY,
        tenant      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        agent       TEXT NOT NULL,
        source      TEXT NOT NULL,
        content     TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX evidence_by_owner ON evidence(tenant, user_id, created_at);

    CREATE TABLE preferences (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        trusted    INTEGER NOT NULL,
        source     TEXT NOT NULL,
        version    INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT,
        PRIMARY KEY (tenant, user_id, key)
    );

    CREATE TABLE task_states (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        goal       TEXT NOT NULL,
        criteria   TEXT NOT NULL DEFAULT '[]',
        done       TEXT NOT NULL DEFAULT '[]',
        missing    TEXT NOT NULL DEFAULT '[]',
        version    INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, task_id)
    );

    CREATE TABLE context_traces (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        payload    TEXT NOT NULL
    );
    CREATE INDEX traces_by_scope ON context_traces(tenant, user_id, agent, created_at);
    """,
    # 4: vectors (derived, one model per store) and the embedding cache
    """
    CREATE TABLE vector_meta (
        id    INTEGER PRIMARY KEY CHECK (id = 1),
        model TEXT NOT NULL,
        dim   INTEGER NOT NULL
    );
    CREATE TABLE fact_vectors (
        seq      INTEGER PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        scope_id INTEGER NOT NULL,
        vector   BLOB NOT NULL
    );
    CREATE INDEX fact_vectors_by_scope ON fact_vectors(scope_id);
    CREATE TABLE vector_versions (
        scope_id INTEGER PRIMARY KEY,
        version  INTEGER NOT NULL
    );
    CREATE TABLE embedding_cache (
        model        TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (model, content_hash)
    );
    """,
    # 5: the words around a fact (e.g. the message it answered): indexed, never shown
    """
    ALTER TABLE facts ADD COLUMN context TEXT;
    """,
    # 6: lifecycle — bitemporal facts, tombstones, session summaries, review queue, consolidation runs
    """
    ALTER TABLE facts ADD COLUMN valid_from TEXT;
    ALTER TABLE facts ADD COLUMN recorded_at TEXT;
    ALTER TABLE facts ADD COLUMN retired_at TEXT;
    UPDATE facts SET valid_from = created_at;
    UPDATE facts SET recorded_at = created_at WHERE status != 'candidate';
    UPDATE facts SET retired_at = updated_at WHERE status NOT IN ('candidate', 'committed');
    CREATE INDEX facts_by_key ON facts(tenant, user_id, agent, key, version);

    -- forgotten content: its hash blocks re-extraction until the user states it again
    CREATE TABLE tombstones (
        tenant       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        agent        TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, content_hash)
    );

    CREATE TABLE session_summaries (
        id               TEXT PRIMARY KEY,
        tenant           TEXT NOT NULL,
        user_id          TEXT NOT NULL,
        agent            TEXT NOT NULL,
        thread_id        TEXT NOT NULL,
        first_message_id TEXT,
        last_message_id  TEXT,
        message_count    INTEGER NOT NULL,
        payload          TEXT NOT NULL,
        cited_fact_ids   TEXT NOT NULL DEFAULT '[]',
        evidence_id      TEXT,
        stale_reason     TEXT,
        created_at       TEXT NOT NULL
    );
    CREATE INDEX summaries_by_scope ON session_summaries(tenant, user_id, agent, created_at);

    CREATE TABLE review_items (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        kind       TEXT NOT NULL,
        fact_ids   TEXT NOT NULL,
        reason     TEXT NOT NULL,
        status     TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL,
        resolved_at TEXT
    );
    CREATE INDEX review_by_scope ON review_items(tenant, user_id, agent, status);

    CREATE TABLE consolidation_runs (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        started_at TEXT NOT NULL,
        trigger    TEXT NOT NULL,
        plan       TEXT NOT NULL
    );
    CREATE INDEX runs_by_scope ON consolidation_runs(tenant, user_id, agent, started_at);
    """,
    # 7: the update queue's per-thread watermark: message ids already extracted
    """
    CREATE TABLE processed_messages (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        thread_id  TEXT NOT NULL,
        message_id TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, thread_id, message_id)
    ) WITHOUT ROWID;
    """,
    # 8: items of the LangGraph store adapter (namespace[0] is the user, for forgetting)
    """
    CREATE TABLE graph_items (
        tenant     TEXT NOT NULL,
        namespace  TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT,
        ttl_minutes REAL,
        PRIMARY KEY (tenant, namespace, key)
    );
    """,
    # 9: service API keys (only a hash of the secret is stored)
    """
    CREATE TABLE api_keys (
        id         TEXT PRIMARY KEY,
        key_hash   TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        users      TEXT NOT NULL,
        agents     TEXT NOT NULL,
        role       TEXT NOT NULL,
        label      TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    """,
    # 10: project memory — one live value per key in each project (and outside every project)
    """
    DROP INDEX facts_one_live_key;
    CREATE UNIQUE INDEX facts_one_live_key ON facts(tenant, user_id, agent, IFNULL(project, ''), key)
        WHERE key IS NOT NULL AND status = 'committed';
    """,
    # 11: evidence ids belong to their (tenant, user) and keep versions (observed_at may be unknown);
    #     facts by category
    """
    CREATE TABLE evidence_versions (
        tenant      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        id          TEXT NOT NULL,
        version     INTEGER NOT NULL,
        agent       TEXT NOT NULL,
        source      TEXT NOT NULL,
        content     TEXT NOT NULL,
        observed_at TEXT,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, id, version)
    );
    INSERT INTO evidence_versions SELECT tenant, user_id, id, 1, agent, source, content, observed_at, created_at
        FROM evidence;
    DROP TABLE evidence;
    ALTER TABLE evidence_versions RENAME TO evidence;
    CREATE INDEX evidence_by_owner ON evidence(tenant, user_id, created_at);
    -- stated preferences are read on every model call
    CREATE INDEX facts_by_category ON facts(tenant, user_id, agent, category, status, created_at);
    """,
    # 12: keyword statistics per scope and project. FTS5's bm25() reads document counts
    #     and lengths of the whole table, so one tenant's scores would reveal another's
    #     words; each indexed fact's tokens and each (scope, project)'s counts are kept
    #     here instead ('' = no project; the triggers keep them exact on every insert and
    #     delete). 36 = SEQ_BITS.
    """
    CREATE TABLE keyword_docs (
        fts_rowid INTEGER PRIMARY KEY,
        project   TEXT NOT NULL,
        tokens    TEXT NOT NULL
    );
    CREATE TABLE keyword_terms (
        scope_id INTEGER NOT NULL,
        project  TEXT NOT NULL,
        term     TEXT NOT NULL,
        df       INTEGER NOT NULL,
        PRIMARY KEY (scope_id, project, term)
    ) WITHOUT ROWID;
    CREATE TABLE keyword_scopes (
        scope_id INTEGER NOT NULL,
        project  TEXT NOT NULL,
        docs     INTEGER NOT NULL,
        tokens   INTEGER NOT NULL,
        PRIMARY KEY (scope_id, project)
    );
    CREATE TRIGGER keyword_doc_added AFTER INSERT ON keyword_docs BEGIN
        INSERT INTO keyword_terms (scope_id, project, term, df)
            SELECT NEW.fts_rowid >> 36, NEW.project, value, 1
            FROM (SELECT DISTINCT value FROM json_each(NEW.tokens)) WHERE true
            ON CONFLICT (scope_id, project, term) DO UPDATE SET df = df + 1;
        INSERT INTO keyword_scopes (scope_id, project, docs, tokens)
            VALUES (NEW.fts_rowid >> 36, NEW.project, 1, json_array_length(NEW.tokens))
            ON CONFLICT (scope_id, project) DO UPDATE SET docs = docs + 1, tokens = tokens + excluded.tokens;
    END;
    CREATE TRIGGER keyword_doc_removed AFTER DELETE ON keyword_docs BEGIN
        UPDATE keyword_terms SET df = df - 1 WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project
            AND term IN (SELECT value FROM json_each(OLD.tokens));
        DELETE FROM keyword_terms WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project AND df <= 0
            AND term IN (SELECT value FROM json_each(OLD.tokens));
        UPDATE keyword_scopes SET docs = docs - 1, tokens = tokens - json_array_length(OLD.tokens)
            WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project;
        DELETE FROM keyword_scopes WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project AND docs <= 0;
    END;
    CREATE VIRTUAL TABLE temp.facts_instances USING fts5vocab(main, facts_fts, instance);
    INSERT INTO keyword_docs (fts_rowid, project, tokens)
        SELECT v.doc, coalesce(f.project, ''), json_group_array(v.term) FROM temp.facts_instances v
        JOIN facts f ON f.seq = (v.doc & 68719476735) GROUP BY v.doc;
    DROP TABLE temp.facts_instances;
    DROP TABLE facts_vocab;
    """,
    # 13: LangGraph store items keep the vectors of the fields they were indexed by
    #     (vector_paths NULL = written before indexing existed; '[]' = not indexed)
    """
    ALTER TABLE graph_items ADD COLUMN vector_paths TEXT;
    ALTER TABLE graph_items ADD COLUMN vectors BLOB;
    """,
    # 14: episodes — what was said, kept as rows of status 'episode' beside the facts
    #     (indexed and forgotten like them): who said it, and a look-up by message
    """
    ALTER TABLE facts ADD COLUMN role TEXT;
    ALTER TABLE facts ADD COLUMN speaker TEXT;
    CREATE INDEX facts_by_message ON facts(tenant, user_id, agent, message_id);
    """,
    # 15: a profile section keeps its sentences and the facts each one states
    """
    ALTER TABLE profile_sections ADD COLUMN sentences TEXT NOT NULL DEFAULT '[]';
    """,
]

TOKENIZE = "porter unicode61 remove_diacritics 2"

_FACT_COLUMNS = FACT_COLUMNS
_F_COLUMNS = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))


SEQ_BITS = 36  # room for 68 billion fact rows per file; scope ids take the high bits
SEQ_MASK = (1 << SEQ_BITS) - 1


def _visible(identity: Identity, column: str = "project") -> tuple[str, tuple]:
    return visible(identity, column, "?")


def fts_rowid(scope_id: int, seq: int) -> int:
    return scope_id << SEQ_BITS | seq


def scope_range(scope_id: int) -> tuple[int, int]:
    return scope_id << SEQ_BITS, (scope_id << SEQ_BITS) | SEQ_MASK


def _ts(value: datetime | None) -> str | None:
    """Stored times are UTC text, so that comparing them as text compares instants."""
    return ensure_utc(value).isoformat(timespec="microseconds") if value else None


def _fact_params(f: Fact) -> tuple:
    return fact_params(f, _ts)


_fact_from_row = fact_from_row


def _translate(exc: sqlite3.Error, path: str) -> StoreError:
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreLocked(f"{path}: the database stayed locked by another writer past the busy timeout")
    if isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "corrupt" in text
    ):
        return StoreCorrupt(f"{path}: not a valid archivist database ({text})")
    return StoreError(f"{path}: {text}")


class SQLiteStore(Store):
    """A store in one SQLite file. Thread-safe: one connection behind a re-entrant lock."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000,
                 vector_index: str | VectorIndex = "auto") -> None:
        """``vector_index``: ``auto`` (numpy), ``numpy``, ``sqlite-vec``, or a
        :class:`~archivist.index.vectors.VectorIndex`."""
        self.path = str(path)
        self.vectors = vector_index if isinstance(vector_index, VectorIndex) else open_index(vector_index, self.path)
        self._lock = threading.RLock()
        self._depth = 0
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._enter_wal(busy_timeout_ms / 1000)
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute("PRAGMA secure_delete = ON")  # deleted text is zeroed, not left in free pages
            self._migrate()
            self._keywords = KeywordScorer()
            self._scope_ids: dict[tuple[str, str, str], int] = {}
            # committed vector changes wait here until their transaction commits
            self._vector_changes: list[tuple[int, int, int, list[tuple[int, np.ndarray]], list[int]]] = []
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from exc

    # -- plumbing -------------------------------------------------------------
    def _enter_wal(self, timeout: float) -> None:
        """Switch a new file to WAL. While several connections create one file at once,
        the switch can fail with "database is locked" at once, without the busy handler
        (SQLite refuses to wait where waiting could deadlock): retry until ``timeout``."""
        deadline = time.monotonic() + timeout
        pause = 0.005
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    def _migrate(self) -> None:
        c = self._conn
        c.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        current = c.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]
        if current > len(MIGRATIONS):
            raise SchemaTooNew(
                f"{self.path} has schema version {current}; this archivist knows up to {len(MIGRATIONS)}. Upgrade archivist."
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            c.execute("BEGIN IMMEDIATE")
            try:
                # another connection may have migrated while this one waited for the lock
                if c.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone():
                    c.execute("COMMIT")
                    continue
                for statement in _split_sql(MIGRATIONS[version - 1]):
                    c.execute(statement)
                c.execute(
                    "INSERT INTO schema_migrations VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))", (version,)
                )
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        return self._read("SELECT max(version) FROM schema_migrations")[0][0]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from exc
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                self._vector_changes.clear()
                self._conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._vector_changes.clear()
                self._conn.execute("ROLLBACK")
                raise _translate(exc, self.path) from exc
            changes, self._vector_changes = self._vector_changes, []
            for change in changes:
                self.vectors.apply(*change)

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Several reads that see one consistent state (a deferred read transaction)."""
        with self._lock:
            if self._depth:
                yield
                return
            try:
                self._conn.execute("BEGIN DEFERRED")
                try:
                    yield
                finally:
                    self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from exc

    def _read(self, sql: str, params: Sequence = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from exc

    def _write(self, sql: str, params: Sequence = ()) -> sqlite3.Cursor:
        if not self._depth:
            raise StoreError("internal: a write outside a transaction")
        try:
            return self._conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            raise StoreConflict(f"{self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from exc

    # -- facts ------------------------------------------------------------
    def insert_fact(self, fact: Fact) -> None:
        with self.transaction():
            placeholders = ", ".join("?" * N_FACT_COLUMNS)
            cur = self._write(f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({placeholders})", _fact_params(fact))
            if fact.status in INDEXED:
                self._index(cur.lastrowid, fact)

    def _index(self, seq: int, fact: Fact) -> None:
        self._index_rows([(fts_rowid(self._scope_id(fact.identity, create=True), seq),
                           segment_for_index(index_text(fact)), fact.identity.project)])

    def _index_rows(self, rows: Sequence[tuple[int, str, str | None]]) -> None:
        """Add ``(fts_rowid, body, project)`` rows to the keyword index, and their tokens
        to ``keyword_docs`` (whose triggers count them into the scope's statistics)."""
        tokens = self._keywords.tokens([body for _, body, _ in rows])
        try:
            self._conn.executemany("INSERT INTO facts_fts (rowid, body) VALUES (?, ?)",
                                   [(rowid, body) for rowid, body, _ in rows])
            self._conn.executemany("INSERT INTO keyword_docs (fts_rowid, project, tokens) VALUES (?, ?, ?)",
                                   [(rowid, project or "", json.dumps(t, ensure_ascii=False, separators=(",", ":")))
                                    for (rowid, _, project), t in zip(rows, tokens, strict=True)])
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from exc

    def _unindex(self, where: str, params: Sequence) -> int:
        """Remove keyword index rows (``where`` compares the fts rowid) and their tokens."""
        self._write(f"DELETE FROM keyword_docs WHERE fts_rowid {where}", params)
        return self._write(f"DELETE FROM facts_fts WHERE rowid {where}", params).rowcount

    def _scope_id(self, identity: Identity, *, create: bool = False) -> int | None:
        """The scope's id; created on first write. Only ids read outside a
        transaction are cached, so a rolled-back id is never remembered."""
        key = (identity.tenant, identity.user, identity.agent)
        cached = self._scope_ids.get(key)
        if cached is not None:
            return cached
        row = self._conn.execute(
            "SELECT id FROM scopes WHERE tenant = ? AND user_id = ? AND agent = ?", key
        ).fetchone()
        if row is None:
            if not create:
                return None
            return self._write("INSERT INTO scopes (tenant, user_id, agent) VALUES (?, ?, ?)", key).lastrowid
        if not self._depth:
            self._scope_ids[key] = row[0]
        return row[0]

    def update_fact(self, fact: Fact) -> None:
        with self.transaction():
            vis, vp = _visible(fact.identity)
            row = self._write(
                f"SELECT seq FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ? AND {vis}",
                (fact.id, fact.identity.tenant, fact.identity.user, fact.identity.agent, *vp),
            ).fetchone()
            if row is None:
                from ..errors import FactNotFound

                raise FactNotFound(fact.id)
            self._write(
                "UPDATE facts SET status = ?, confidence = ?, updated_at = ?, last_confirmed_at = ?, valid_until = ?, "
                "version = ?, supersedes = ?, valid_from = ?, recorded_at = ?, retired_at = ?, context = ? WHERE seq = ?",
                (fact.status.value, fact.confidence, _ts(fact.updated_at), _ts(fact.last_confirmed_at),
                 _ts(fact.valid_until), fact.version, fact.supersedes, _ts(fact.valid_from),
                 _ts(fact.recorded_at), _ts(fact.retired_at), fact.context, row[0]),
            )
            scope_id = self._scope_id(fact.identity, create=True)
            self._unindex("= ?", (fts_rowid(scope_id, row[0]),))
            if fact.status in INDEXED:
                self._index(row[0], fact)
            elif self._write("DELETE FROM fact_vectors WHERE seq = ?", (row[0],)).rowcount:
                self._bump_vectors(scope_id, deletes=[row[0]])

    def get_fact(self, identity: Identity, fact_id: str) -> Fact | None:
        vis, vp = _visible(identity)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ? AND {vis}",
            (fact_id, identity.tenant, identity.user, identity.agent, *vp),
        )
        return _fact_from_row(rows[0]) if rows else None

    def list_facts(self, identity, *, statuses=(Status.COMMITTED,), key=None, live_at=None, limit=None, category=None,
                   expired_at=None, message_ids=None, thread_id=None):
        vis, vp = _visible(identity)
        sql = [f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ? AND {vis}"]
        params: list = [identity.tenant, identity.user, identity.agent, *vp]
        if statuses:
            sql.append(f"AND status IN ({', '.join('?' * len(statuses))})")
            params.extend(Status(s).value for s in statuses)
        if key is not None:
            sql.append("AND key = ?")
            params.append(key)
        if thread_id is not None:
            sql.append("AND thread_id = ?")
            params.append(thread_id)
        if message_ids is not None:
            sql.append(f"AND message_id IN ({', '.join('?' * len(message_ids))})" if message_ids else "AND false")
            params.extend(message_ids)
        if category is not None:
            sql.append("AND category = ?")
            params.append(Category(category).value)
        if expired_at is not None:
            sql.append("AND valid_until IS NOT NULL AND valid_until <= ?")
            params.append(_ts(expired_at))
        if live_at is not None:  # history rows closed their validity when retired: keep them
            sql.append("AND (status NOT IN ('committed', 'candidate', 'episode') OR valid_until IS NULL OR valid_until > ?)")
            params.append(_ts(live_at))
        sql.append("ORDER BY created_at DESC, seq DESC")
        if limit is not None:
            sql.append("LIMIT ?")
            params.append(int(limit))
        return [_fact_from_row(r) for r in self._read(" ".join(sql), params)]

    def find_by_hash(self, identity, content_hash):
        vis, vp = _visible(identity)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ? AND {vis} "
            "AND content_hash = ? AND status IN ('committed', 'candidate')",
            (identity.tenant, identity.user, identity.agent, *vp, content_hash),
        )
        return [_fact_from_row(r) for r in rows]

    def keyword_search(self, identity, terms, *, limit, live_at, statuses=(Status.COMMITTED,)):
        """BM25 with the statistics of what this scope sees — its facts outside every
        project, and its project's (see :class:`KeywordScorer`) — best first, expired
        facts skipped."""
        terms = [t for t in dict.fromkeys(terms) if t]
        with self._lock:
            scope_id = self._scope_id(identity) if terms else None
        if scope_id is None:
            return []
        scorer = self._keywords
        stems = dict(zip(terms, scorer.tokens(terms), strict=True))
        wanted = sorted({tok for toks in stems.values() for tok in toks})
        projects = ("", identity.project) if identity.project else ("",)
        seen = f"project IN ({', '.join('?' * len(projects))})"
        scope = self._read(f"SELECT sum(docs), sum(tokens) FROM keyword_scopes WHERE scope_id = ? AND {seen}",
                           (scope_id, *projects))[0]
        if not wanted or not scope[0]:
            return []
        df = dict(self._read(f"SELECT term, sum(df) FROM keyword_terms WHERE scope_id = ? AND {seen} AND term IN "
                             f"({', '.join('?' * len(wanted))}) GROUP BY term", (scope_id, *projects, *wanted)))
        # a term's count is its rarest token's: no fact holds the term if one token is missing
        term_df = {t: min((df.get(tok, 0) for tok in toks), default=0) for t, toks in stems.items()}
        present = [t for t in terms if term_df[t]]
        if not present:
            return []
        lo, hi = scope_range(scope_id)

        def collect(plan: list[tuple[str, int]]) -> list[tuple[int, str]]:
            """The oldest ``room`` facts this scope sees for each expression, with their
            tokens (FTS5 seeks forward to the scope's range; reading backwards would walk
            every later rowid of the table)."""
            union = " UNION ".join(["SELECT rowid FROM (SELECT f.rowid FROM facts_fts f JOIN keyword_docs k "
                                    "ON k.fts_rowid = f.rowid WHERE facts_fts MATCH ? AND f.rowid BETWEEN ? AND ? "
                                    f"AND k.{seen} ORDER BY f.rowid LIMIT ?)"] * len(plan))
            return self._read(f"WITH c(rowid) AS ({union}) SELECT c.rowid, d.tokens FROM c "
                              "JOIN keyword_docs d ON d.fts_rowid = c.rowid",
                              [p for expression, room in plan for p in (expression, lo, hi, *projects, room)])

        # first the facts holding every term, then each term rarest first with the room left
        docs = collect([(" AND ".join(quote_term(t) for t in present), scorer.budget // 2)]) if len(present) > 1 else []
        plan, used = scorer.plan(present, term_df, spent=len(docs))
        if plan:
            docs = list(dict(docs + collect(plan)).items())
        dropped = tuple(t for t in terms if t not in used)
        main = {tok for t in used for tok in stems[t]}
        ranked = scorer.rank(docs, scope, main, {tok for t in dropped for tok in stems[t]} - main, df)
        out: list[KeywordMatch] = []
        start, fetch = 0, limit
        while start < len(ranked) and len(out) < limit:  # widen until enough survive the expiry filter
            chunk, start = ranked[start:start + fetch], start + fetch
            rows = {r[N_FACT_COLUMNS]: r for r in self._live_rows(identity, [rowid & SEQ_MASK for rowid, _, _ in chunk],
                                                                 live_at, statuses)}
            out += [KeywordMatch(_fact_from_row(rows[rowid & SEQ_MASK]), -m, x, tuple(used), dropped)
                    for rowid, m, x in chunk if rowid & SEQ_MASK in rows]
            fetch *= 4
        return out[:limit]

    def successor(self, identity, fact_id):
        vis, vp = _visible(identity)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE supersedes = ? AND tenant = ? AND user_id = ? AND agent = ? "
            f"AND {vis} ORDER BY seq LIMIT 1",
            (fact_id, identity.tenant, identity.user, identity.agent, *vp),
        )
        return _fact_from_row(rows[0]) if rows else None

    def facts_as_of(self, identity, at):
        t = _ts(at)
        vis, vp = _visible(identity)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ? AND {vis} "
            "AND recorded_at IS NOT NULL AND recorded_at <= ? AND (retired_at IS NULL OR retired_at > ?) "
            "AND (retired_at IS NOT NULL OR valid_until IS NULL OR valid_until > ?) ORDER BY created_at DESC, seq DESC",
            (identity.tenant, identity.user, identity.agent, *vp, t, t, t),
        )
        return [_fact_from_row(r) for r in rows]

    def key_history(self, identity, key):
        vis, vp = _visible(identity)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ? AND {vis} AND key = ? "
            "ORDER BY version, created_at, seq",
            (identity.tenant, identity.user, identity.agent, *vp, key),
        )
        return [_fact_from_row(r) for r in rows]

    # -- profile ------------------------------------------------------------
    def get_profile(self, identity):
        rows = self._read(f"SELECT {PROFILE_COLUMNS} FROM profile_sections WHERE tenant = ? AND user_id = ?",
                          (identity.tenant, identity.user))
        return Profile({r[0]: profile_section_from_row(r) for r in rows})

    def put_profile_section(self, identity, section):
        with self.transaction():
            self._write(
                f"INSERT INTO profile_sections (tenant, user_id, {PROFILE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, user_id, section) DO UPDATE SET summary = excluded.summary, "
                "updated_at = excluded.updated_at, source_message_ids = excluded.source_message_ids, "
                "sentences = excluded.sentences",
                profile_section_params(identity, section, _ts),
            )

    # -- audit ------------------------------------------------------------
    def record_audit(self, identity, entries):
        with self.transaction():
            for e in entries:
                self._write(
                    "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, content_hash, "
                    "content, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (identity.tenant, identity.user, identity.agent, _ts(e.at), e.action, e.code, e.reason,
                     e.fact_id, e.content_hash, e.content, e.message_id),
                )

    def audit_log(self, identity, *, limit=100):
        rows = self._read(
            "SELECT at, action, code, reason, fact_id, content_hash, content, message_id FROM audit "
            "WHERE tenant = ? AND user_id = ? AND agent = ? ORDER BY seq DESC LIMIT ?",
            (identity.tenant, identity.user, identity.agent, int(limit)),
        )
        return [AuditEntry(parse_time(r[0]), *r[1:]) for r in rows]

    # -- derived index ------------------------------------------------------
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Drop the keyword index and rebuild it from committed facts and episodes, in one transaction."""
        total = self._read("SELECT count(*) FROM facts WHERE status IN ('committed', 'episode')")[0][0]
        done = 0
        with self.transaction():
            for table in ("keyword_terms", "keyword_scopes", "keyword_docs", "facts_fts"):
                self._write(f"DELETE FROM {table}")
            self._write(
                "INSERT OR IGNORE INTO scopes (tenant, user_id, agent) "
                "SELECT DISTINCT tenant, user_id, agent FROM facts WHERE status IN ('committed', 'episode')"
            )
            cursor = self._conn.execute(
                "SELECT f.seq, s.id, f.content || coalesce(char(10) || f.context, ''), f.project FROM facts f JOIN scopes s "
                "ON s.tenant = f.tenant AND s.user_id = f.user_id AND s.agent = f.agent "
                "WHERE f.status IN ('committed', 'episode') ORDER BY f.seq"
            )
            while batch := cursor.fetchmany(1000):
                self._index_rows([(fts_rowid(scope_id, seq), segment_for_index(text), project)
                                  for seq, scope_id, text, project in batch])
                done += len(batch)
                if progress:
                    progress(done, total)
            self._write("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
        return done

    # -- session summaries (short-term memory) ----------------------------------
    def put_summary(self, identity, summary):
        with self.transaction():
            self._write(
                "INSERT INTO session_summaries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (summary.id, identity.tenant, identity.user, identity.agent, summary.thread_id,
                 summary.first_message_id, summary.last_message_id, summary.message_count,
                 json.dumps(summary.payload(), ensure_ascii=False), json.dumps(list(summary.cited_fact_ids)),
                 summary.evidence_id, summary.stale_reason, _ts(summary.created_at)),
            )

    def list_summaries(self, identity, *, since=None, limit=100):
        rows = self._read(
            f"SELECT {SUMMARY_COLUMNS} FROM session_summaries WHERE tenant = ? AND user_id = ? "
            "AND agent = ? AND created_at > ? ORDER BY created_at DESC LIMIT ?",
            (identity.tenant, identity.user, identity.agent, _ts(since) if since else "", int(limit)),
        )
        return [summary_from_row(r) for r in rows]

    # -- what an export needs ----------------------------------------------------
    def user_agents(self, tenant: str, user: str) -> list[str]:
        rows = self._read(
            "SELECT agent FROM facts WHERE tenant = ? AND user_id = ? UNION SELECT agent FROM evidence "
            "WHERE tenant = ? AND user_id = ? UNION SELECT agent FROM session_summaries WHERE tenant = ? AND user_id = ? "
            "UNION SELECT agent FROM tombstones WHERE tenant = ? AND user_id = ? ORDER BY 1",
            (tenant, user) * 4,
        )
        return [r[0] for r in rows]

    def user_projects(self, tenant: str, user: str) -> list[str]:
        return [r[0] for r in self._read("SELECT DISTINCT project FROM facts WHERE tenant = ? AND user_id = ? "
                                         "AND project IS NOT NULL ORDER BY 1", (tenant, user))]

    def list_evidence(self, identity: Identity) -> list[Evidence]:
        rows = self._read(
            "SELECT id, source, content, observed_at, created_at, version FROM evidence WHERE tenant = ? AND user_id = ? "
            "AND agent = ? ORDER BY created_at, id, version",
            (identity.tenant, identity.user, identity.agent),
        )
        return [Evidence(i, identity, src, c, parse_time(o) if o else None, parse_time(cr), v)
                for i, src, c, o, cr, v in rows]

    def tombstones(self, identity: Identity) -> list[tuple[str, datetime]]:
        rows = self._read("SELECT content_hash, created_at FROM tombstones WHERE tenant = ? AND user_id = ? "
                          "AND agent = ? ORDER BY content_hash", (identity.tenant, identity.user, identity.agent))
        return [(h, parse_time(at)) for h, at in rows]

    def add_tombstone(self, identity: Identity, content_hash: str, at: datetime) -> None:
        with self.transaction():
            self._write("INSERT OR IGNORE INTO tombstones VALUES (?, ?, ?, ?, ?)",
                        (identity.tenant, identity.user, identity.agent, content_hash, _ts(at)))

    def fact_ids_present(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found |= {r[0] for r in self._read(f"SELECT id FROM facts WHERE id IN ({', '.join('?' * len(chunk))})",
                                               chunk)}
        return found

    # -- LangGraph store items ------------------------------------------------------
    _GRAPH_COLUMNS = "namespace, key, value, created_at, updated_at, expires_at, ttl_minutes, vector_paths, vectors"

    def graph_put(self, tenant, namespace, user, key, value_json, now, ttl_minutes, vectors=None):
        expires = _ts(now + timedelta(minutes=ttl_minutes)) if ttl_minutes is not None else None
        paths, blob = graph_vector_columns(vectors)
        with self.transaction():
            self._write(
                "INSERT INTO graph_items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, namespace, key) "
                "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, "
                "expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes, "
                "vector_paths = excluded.vector_paths, vectors = excluded.vectors",
                (tenant, namespace, user, key, value_json, _ts(now), _ts(now), expires, ttl_minutes, paths, blob),
            )

    def graph_delete(self, tenant, namespace, key):
        with self.transaction():
            self._write("DELETE FROM graph_items WHERE tenant = ? AND namespace = ? AND key = ?", (tenant, namespace, key))

    def graph_items(self, tenant, namespace_prefix, now, *, key=None):
        """Unexpired items whose namespace equals or starts with the prefix (or one key)."""
        sql = (f"SELECT {self._GRAPH_COLUMNS} FROM graph_items WHERE tenant = ? "
               "AND (expires_at IS NULL OR expires_at > ?)")
        params: list = [tenant, _ts(now)]
        if key is not None:
            sql += " AND namespace = ? AND key = ?"
            params += [namespace_prefix, key]
        elif namespace_prefix:
            sql += " AND (namespace = ? OR substr(namespace, 1, ?) = ?)"
            params += [namespace_prefix, len(namespace_prefix) + 1, namespace_prefix + "\x1f"]
        return self._read(sql + " ORDER BY updated_at DESC, namespace, key", params)

    def graph_touch(self, tenant, keys, now):
        """Refresh the TTL of (namespace, key) pairs that have one."""
        with self.transaction():
            for namespace, key in keys:
                row = self._write("SELECT ttl_minutes FROM graph_items WHERE tenant = ? AND namespace = ? AND key = ?",
                                  (tenant, namespace, key)).fetchone()
                if row and row[0] is not None:
                    self._write("UPDATE graph_items SET expires_at = ? WHERE tenant = ? AND namespace = ? AND key = ?",
                                (_ts(now + timedelta(minutes=row[0])), tenant, namespace, key))

    def graph_sweep(self, tenant, now):
        with self.transaction():
            return self._write("DELETE FROM graph_items WHERE tenant = ? AND expires_at IS NOT NULL AND expires_at <= ?",
                               (tenant, _ts(now))).rowcount

    def graph_namespaces(self, tenant, now):
        return [r[0] for r in self._read("SELECT DISTINCT namespace FROM graph_items WHERE tenant = ? "
                                         "AND (expires_at IS NULL OR expires_at > ?) ORDER BY namespace",
                                         (tenant, _ts(now)))]

    def users(self, tenant: str) -> list[str]:
        return [r[0] for r in self._read("SELECT DISTINCT user_id FROM scopes WHERE tenant = ? ORDER BY user_id",
                                         (tenant,))]

    # -- API keys -------------------------------------------------------------------
    def put_api_key(self, key_id, key_hash, tenant, users, agents, role, label, at):
        with self.transaction():
            self._write("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                        (key_id, key_hash, tenant, json.dumps(users), json.dumps(agents), role, label, _ts(at)))

    def find_api_key(self, key_hash):
        rows = self._read("SELECT id, tenant, users, agents, role, label FROM api_keys WHERE key_hash = ? "
                          "AND revoked_at IS NULL", (key_hash,))
        return api_key_from_row(rows[0]) if rows else None

    def revoke_api_key(self, key_id, at):
        with self.transaction():
            return self._write("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                               (_ts(at), key_id)).rowcount == 1

    # -- the update queue's watermark -------------------------------------------
    def processed_messages(self, identity: Identity, thread_id: str) -> list[str]:
        rows = self._read("SELECT message_id FROM processed_messages WHERE tenant = ? AND user_id = ? AND agent = ? "
                          "AND thread_id = ?", (identity.tenant, identity.user, identity.agent, thread_id))
        return [r[0] for r in rows]

    def mark_processed(self, identity: Identity, thread_id: str, message_ids: Sequence[str]) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT OR IGNORE INTO processed_messages VALUES (?, ?, ?, ?, ?)",
                [(identity.tenant, identity.user, identity.agent, thread_id, m) for m in message_ids],
            )

    # -- consolidation and the review queue -----------------------------------
    def last_consolidation(self, identity):
        rows = self._read("SELECT max(started_at) FROM consolidation_runs WHERE tenant = ? AND user_id = ? AND agent = ?",
                          (identity.tenant, identity.user, identity.agent))
        return parse_time(rows[0][0]) if rows and rows[0][0] else None

    def record_consolidation(self, identity, run_id, at, trigger, plan_json):
        with self.transaction():
            self._write("INSERT INTO consolidation_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (run_id, identity.tenant, identity.user, identity.agent, _ts(at), trigger, plan_json))

    def consolidation_runs(self, identity, *, limit=20):
        rows = self._read("SELECT id, started_at, trigger, plan FROM consolidation_runs WHERE tenant = ? AND user_id = ? "
                          "AND agent = ? ORDER BY started_at DESC LIMIT ?",
                          (identity.tenant, identity.user, identity.agent, int(limit)))
        return [consolidation_run_from_row(r) for r in rows]

    def add_review_item(self, identity, item_id, kind, fact_ids, reason, at):
        with self.transaction():
            self._write("INSERT INTO review_items (id, tenant, user_id, agent, kind, fact_ids, reason, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (item_id, identity.tenant, identity.user, identity.agent, kind, json.dumps(list(fact_ids)),
                         reason, _ts(at)))

    def review_items(self, identity, *, status="open"):
        rows = self._read("SELECT id, kind, fact_ids, reason, status, created_at, resolved_at FROM review_items "
                          "WHERE tenant = ? AND user_id = ? AND agent = ? AND status = ? ORDER BY created_at, id",
                          (identity.tenant, identity.user, identity.agent, status))
        return [review_item_from_row(r) for r in rows]

    def resolve_review_item(self, identity, item_id, at):
        with self.transaction():
            return self._write("UPDATE review_items SET status = 'resolved', resolved_at = ? WHERE id = ? "
                               "AND tenant = ? AND user_id = ? AND agent = ? AND status = 'open'",
                               (_ts(at), item_id, identity.tenant, identity.user, identity.agent)).rowcount == 1

    # -- forgetting (seed 003: deletion reaches every copy) --------------------
    def is_tombstoned(self, identity: Identity, content_hash: str) -> bool:
        return bool(self._read(
            "SELECT 1 FROM tombstones WHERE tenant = ? AND user_id = ? AND agent = ? AND content_hash = ?",
            (identity.tenant, identity.user, identity.agent, content_hash),
        ))

    def lift_tombstone(self, identity: Identity, content_hash: str) -> None:
        with self.transaction():
            self._write("DELETE FROM tombstones WHERE tenant = ? AND user_id = ? AND agent = ? AND content_hash = ?",
                        (identity.tenant, identity.user, identity.agent, content_hash))

    def forget_fact(self, identity, fact_ids, *, at):
        from ..model import content_hash

        counts = Counts()
        count = counts.add
        scope = (identity.tenant, identity.user, identity.agent)
        with self.transaction():
            scope_id = self._scope_id(identity, create=True)
            for fact_id in fact_ids:
                vis, vp = _visible(identity)
                row = self._write(
                    f"SELECT {_FACT_COLUMNS}, seq FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ? "
                    f"AND {vis}", (fact_id, *scope, *vp),
                ).fetchone()
                if row is None:
                    continue
                fact, seq = _fact_from_row(row), row[N_FACT_COLUMNS]
                chash = content_hash(fact.content)
                count("facts_fts", self._unindex("= ?", (fts_rowid(scope_id, seq),)))
                if self._write("DELETE FROM fact_vectors WHERE seq = ?", (seq,)).rowcount:
                    count("fact_vectors", 1)
                    self._bump_vectors(scope_id, deletes=[seq])
                count("embedding_cache", sum(self._write("DELETE FROM embedding_cache WHERE content_hash = ?",
                                                         (h,)).rowcount for h in cache_keys(identity.tenant, fact.embed_text)))
                count("facts (links cleared)", self._write(
                    "UPDATE facts SET supersedes = NULL WHERE supersedes = ? AND tenant = ? AND user_id = ? AND agent = ?",
                    (fact_id, *scope)).rowcount)
                count("facts", self._write("DELETE FROM facts WHERE seq = ?", (seq,)).rowcount)
                count("audit (text redacted)", self._write(
                    "UPDATE audit SET content = NULL, reason = replace(reason, ?, '[forgotten]') "
                    "WHERE tenant = ? AND user_id = ? AND agent = ? AND (fact_id = ? OR content_hash = ?)",
                    (fact.content, *scope, fact_id, chash),
                ).rowcount)
                quotes = [fact.content] + ([fact.provenance.evidence_text] if fact.provenance.evidence_text else [])
                count("context_traces (redacted)", self._redact("context_traces", "payload", identity, quotes))
                count("session_summaries (redacted)", self._redact("session_summaries", "payload", identity, quotes))
                count("evidence (redacted)", self._redact("evidence", "content", identity, quotes))
                count("session_summaries (marked stale)", self._write(
                    "UPDATE session_summaries SET stale_reason = ? WHERE tenant = ? AND user_id = ? AND agent = ? "
                    "AND stale_reason IS NULL AND EXISTS (SELECT 1 FROM json_each(cited_fact_ids) WHERE value = ?)",
                    (f"cites forgotten fact {fact_id}", *scope, fact_id),
                ).rowcount)
                count("session_summaries (text forgotten)", self._write(
                    "UPDATE session_summaries SET payload = ? WHERE tenant = ? AND user_id = ? AND agent = ? "
                    "AND payload <> ? AND EXISTS (SELECT 1 FROM json_each(cited_fact_ids) WHERE value = ?)",
                    (FORGOTTEN_SUMMARY, *scope, FORGOTTEN_SUMMARY, fact_id),
                ).rowcount)
                count("tombstones", self._write("INSERT OR IGNORE INTO tombstones VALUES (?, ?, ?, ?, ?)",
                                                (*scope, chash, _ts(at))).rowcount)
                self._write(
                    "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, content_hash) "
                    "VALUES (?, ?, ?, ?, 'forget', 'forgotten', 'forgotten at the user''s request', ?, ?)",
                    (*scope, _ts(at), fact_id, chash),
                )
        if counts:
            self.vectors.forget(scope_id)
            if not self._purge(vacuum=False):
                counts["wal not truncated (readers active; forget again later)"] = 1
        return dict(counts)

    def _redact(self, table: str, column: str, identity: Identity, quotes: Sequence[str]) -> int:
        """Replace the quotes (as plain text and as JSON string content) inside the
        scope's rows of ``table``; returns the rows changed."""
        changed = 0
        for needle in redaction_needles(quotes):
            rows = self._write(
                f"SELECT rowid, {column} FROM {table} WHERE tenant = ? AND user_id = ? AND agent = ? "
                f"AND instr({column}, ?) > 0",
                (identity.tenant, identity.user, identity.agent, needle),
            ).fetchall()
            for rowid, text in rows:
                self._write(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (text.replace(needle, "[forgotten]"), rowid))
            changed += len(rows)
        return changed

    USER_TABLES = ("facts", "profile_sections", "audit", "evidence", "preferences", "task_states",
                   "context_traces", "tombstones", "session_summaries", "review_items", "consolidation_runs",
                   "processed_messages", "graph_items")

    def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        with self.transaction():
            scopes = [r[0] for r in self._write("SELECT id FROM scopes WHERE tenant = ? AND user_id = ?",
                                                (tenant, user)).fetchall()]
            rows = self._write(f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ?",
                               (tenant, user)).fetchall()
            hashes = {h for r in rows for h in cache_keys(tenant, _fact_from_row(r).embed_text)}
            fts = vectors = 0
            for scope_id in scopes:
                lo, hi = scope_range(scope_id)
                fts += self._unindex("BETWEEN ? AND ?", (lo, hi))
                vectors += self._write("DELETE FROM fact_vectors WHERE scope_id = ?", (scope_id,)).rowcount
                self._write("DELETE FROM vector_versions WHERE scope_id = ?", (scope_id,))
            counts["facts_fts"], counts["fact_vectors"] = fts, vectors
            cache = 0
            for h in hashes:
                cache += self._write("DELETE FROM embedding_cache WHERE content_hash = ?", (h,)).rowcount
            counts["embedding_cache"] = cache
            for table in self.USER_TABLES:
                counts[table] = self._write(f"DELETE FROM {table} WHERE tenant = ? AND user_id = ?",
                                            (tenant, user)).rowcount
            counts["scopes"] = self._write("DELETE FROM scopes WHERE tenant = ? AND user_id = ?",
                                           (tenant, user)).rowcount
        self._scope_ids = {k: v for k, v in self._scope_ids.items() if (k[0], k[1]) != (tenant, user)}
        for scope_id in scopes:
            self.vectors.forget(scope_id)
        if not self._purge(vacuum=True):
            counts["wal not truncated (readers active; forget again later)"] = 1
        return counts

    def purge(self, *, full: bool = False) -> list[str]:
        """Forgetting already zeroes and truncates here; ``full`` also VACUUMs the file
        (compacting it) and truncates the WAL."""
        if not full:
            return []
        if not self._purge(vacuum=True):
            raise StoreLocked(f"{self.path}: the WAL is still read by another connection; purge again later")
        return ["database file", "wal"]

    def _purge(self, *, vacuum: bool) -> bool:
        """Make deleted text unrecoverable from the files: merge the keyword index into
        fresh segments (its old pages are zeroed by secure_delete), optionally VACUUM,
        and truncate the WAL, which still holds the pages written before."""
        with self._lock:
            try:
                with self.transaction():
                    self._write("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
                if vacuum:
                    self._conn.execute("VACUUM")
                busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from exc
        self._purge_sidecar()
        return not busy  # busy: another connection is reading, and the WAL keeps old pages until reset

    def _purge_sidecar(self) -> None:
        """A sqlite-vec sidecar this process is not using may still hold forgotten vectors."""
        from ..index.vectors import SqliteVecIndex, sidecar_path, sqlite_vec_available

        path = sidecar_path(self.path)
        if isinstance(self.vectors, SqliteVecIndex) or path == ":memory:" or not Path(path).exists():
            return
        if sqlite_vec_available():
            other = SqliteVecIndex(path)
            try:
                other.forget(0)
            finally:
                other.close()
        else:  # derived data: without the extension nothing can have it open, so remove it
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)

    # -- vectors (derived) ----------------------------------------------------
    def vector_model(self) -> tuple[str, int] | None:
        rows = self._read("SELECT model, dim FROM vector_meta WHERE id = 1")
        return (rows[0][0], rows[0][1]) if rows else None

    def _bump_vectors(self, scope_id: int, *, upserts=(), deletes=()) -> None:
        """Advance the scope's vector version; the index hears of the change after commit."""
        new = self._write(
            "INSERT INTO vector_versions VALUES (?, 1) ON CONFLICT (scope_id) DO UPDATE SET version = version + 1 "
            "RETURNING version",
            (scope_id,),
        ).fetchone()[0]
        self._vector_changes.append((scope_id, new - 1, new, list(upserts), list(deletes)))

    def put_vectors(self, model: str, dim: int, rows: Sequence[tuple[Fact, np.ndarray]]) -> int:
        """Store vectors of committed facts; refuses a model other than the store's."""
        with self.transaction():
            current = self._write("SELECT model, dim FROM vector_meta WHERE id = 1").fetchone()
            if current is None:
                self._write("INSERT INTO vector_meta VALUES (1, ?, ?)", (model, dim))
            elif tuple(current) != (model, dim):
                raise EmbedderMismatch(model, dim, current[0], current[1])
            written, scopes = 0, {}
            for fact, vector in rows:
                row = self._write(
                    "SELECT seq FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ? "
                    "AND status IN ('committed', 'episode')",
                    (fact.id, fact.identity.tenant, fact.identity.user, fact.identity.agent),
                ).fetchone()
                if row is None:
                    continue
                scope_id = self._scope_id(fact.identity, create=True)
                vector = np.asarray(vector, dtype=np.float32)
                self._write("INSERT OR REPLACE INTO fact_vectors VALUES (?, ?, ?)", (row[0], scope_id, vector.tobytes()))
                scopes.setdefault(scope_id, []).append((row[0], vector))
                written += 1
            for scope_id, upserts in scopes.items():
                self._bump_vectors(scope_id, upserts=upserts)
            return written

    def vectors_of(self, identity: Identity, fact_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not fact_ids:
            return {}
        marks = ", ".join("?" * len(fact_ids))
        vis, vp = _visible(identity, "f.project")
        rows = self._read(
            f"SELECT f.id, v.vector FROM facts f JOIN fact_vectors v ON v.seq = f.seq WHERE f.id IN ({marks}) "
            f"AND f.tenant = ? AND f.user_id = ? AND f.agent = ? AND {vis}",
            (*fact_ids, identity.tenant, identity.user, identity.agent, *vp),
        )
        return {fid: np.frombuffer(blob, dtype=np.float32) for fid, blob in rows}

    def facts_without_vectors(self, *, limit: int = 1000) -> list[Fact]:
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts f WHERE status IN ('committed', 'episode') "
            "AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.seq = f.seq) ORDER BY seq LIMIT ?",
            (int(limit),),
        )
        return [_fact_from_row(r) for r in rows]

    def drop_vectors(self) -> None:
        """Forget every vector and the model they came from (before a re-embed)."""
        with self.transaction():
            self._write("DELETE FROM fact_vectors")
            self._write("DELETE FROM vector_meta")
            self._write("UPDATE vector_versions SET version = version + 1")
        self.vectors.clear()

    def cached_embeddings(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 500):
            chunk = list(hashes[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for h, blob in self._read(
                f"SELECT content_hash, vector FROM embedding_cache WHERE model = ? AND content_hash IN ({marks})",
                (model, *chunk),
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def cache_embeddings(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        with self.transaction():
            for h, vector in items:
                self._write("INSERT OR IGNORE INTO embedding_cache VALUES (?, ?, ?)",
                            (model, h, np.asarray(vector, dtype=np.float32).tobytes()))

    def _scope_vectors(self, scope_id: int) -> tuple[int, np.ndarray, np.ndarray]:
        """(version, seqs, normalised float32 matrix) of one scope, read in one snapshot."""
        with self._snapshot():
            version = self._conn.execute("SELECT version FROM vector_versions WHERE scope_id = ?",
                                         (scope_id,)).fetchone()
            rows = self._conn.execute("SELECT seq, vector FROM fact_vectors WHERE scope_id = ? ORDER BY seq",
                                      (scope_id,)).fetchall()
            meta = self._conn.execute("SELECT dim FROM vector_meta WHERE id = 1").fetchone()
        dim = meta[0] if meta else 0
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim) \
            if rows else np.zeros((0, dim), dtype=np.float32)
        return (version[0] if version else 0), seqs, matrix

    def _live_rows(self, identity: Identity, seqs, live_at: datetime,
                   statuses: Sequence[Status] = (Status.COMMITTED,)) -> list[tuple]:
        """Unexpired rows of the scope among ``seqs`` whose status is one of ``statuses``
        (fact columns, then seq)."""
        marks = ", ".join("?" * len(seqs))
        vis, vp = _visible(identity)
        wanted = ", ".join("?" * len(statuses))
        return self._read(
            # NOT INDEXED: look rows up by rowid, never scan the scope index of a huge scope
            f"SELECT {_FACT_COLUMNS}, seq FROM facts NOT INDEXED WHERE seq IN ({marks}) AND tenant = ? AND user_id = ? "
            f"AND agent = ? AND {vis} AND status IN ({wanted}) AND (valid_until IS NULL OR valid_until > ?)",
            (*seqs, identity.tenant, identity.user, identity.agent, *vp, *(Status(x).value for x in statuses),
             _ts(live_at)),
        )

    def vector_search(self, identity, query, *, limit, live_at, statuses=(Status.COMMITTED,)):
        with self._lock:
            scope_id = self._scope_id(identity)
        if scope_id is None:
            return []
        meta = self.vector_model()
        if meta is None:
            return []
        query = np.asarray(query, dtype=np.float32)
        if query.shape[-1] != meta[1]:
            raise EmbedderMismatch("(query)", int(query.shape[-1]), meta[0], meta[1])
        version = self._read("SELECT version FROM vector_versions WHERE scope_id = ?", (scope_id,))
        version = version[0][0] if version else 0
        fetch = limit
        while True:
            hits = self.vectors.top_k(scope_id, version, lambda: self._scope_vectors(scope_id), query, fetch)
            if not hits:
                return []
            wanted = dict(hits)
            rows = self._live_rows(identity, wanted, live_at, statuses)
            if len(rows) >= limit or len(hits) < fetch:
                rows.sort(key=lambda r: (-wanted[r[N_FACT_COLUMNS]], r[N_FACT_COLUMNS]))
                return [(_fact_from_row(r), wanted[r[N_FACT_COLUMNS]]) for r in rows[:limit]]
            fetch *= 4

    # -- evidence ---------------------------------------------------------
    def put_evidence(self, evidence: Evidence) -> int:
        with self.transaction():
            i = evidence.identity
            latest = self._write(
                "SELECT version, content, source FROM evidence WHERE tenant = ? AND user_id = ? AND id = ? "
                "ORDER BY version DESC LIMIT 1", (i.tenant, i.user, evidence.id)).fetchone()
            if latest is not None and (latest[1], latest[2]) == (evidence.content, evidence.source):
                return latest[0]  # the same text again: no new version
            version = latest[0] + 1 if latest else 1
            self._write(
                "INSERT INTO evidence (tenant, user_id, id, version, agent, source, content, observed_at, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (i.tenant, i.user, evidence.id, version, i.agent, evidence.source, evidence.content,
                 _ts(evidence.observed_at), _ts(evidence.created_at)),
            )
            return version

    def get_evidence(self, identity: Identity, evidence_id: str, version: int | None = None) -> Evidence | None:
        rows = self._read(
            "SELECT id, agent, source, content, observed_at, created_at, version FROM evidence "
            "WHERE id = ? AND tenant = ? AND user_id = ?" + (" AND version = ?" if version is not None else "")
            + " ORDER BY version DESC LIMIT 1",
            (evidence_id, identity.tenant, identity.user, *([version] if version is not None else [])),
        )
        if not rows:
            return None
        eid, agent, source, content, observed, created, ver = rows[0]
        return Evidence(eid, Identity(identity.tenant, identity.user, agent), source, content,
                        parse_time(observed) if observed else None, parse_time(created), ver)

    # -- preferences --------------------------------------------------------
    def get_preferences(self, identity: Identity) -> list[Preference]:
        rows = self._read(
            "SELECT key, value, trusted, source, version, updated_at, expires_at FROM preferences "
            "WHERE tenant = ? AND user_id = ? ORDER BY key",
            (identity.tenant, identity.user),
        )
        return [Preference(k, v, bool(t), src, ver, parse_time(at), parse_time(exp) if exp else None)
                for k, v, t, src, ver, at, exp in rows]

    def _expect_version(self, what: str, sql: str, params: Sequence, based_on: int) -> int:
        """The current version (0: none) if it equals ``based_on``, else :class:`StaleWrite`."""
        row = self._write(sql, params).fetchone()
        current = row[0] if row else 0
        if current != based_on:
            raise StaleWrite(f"{what} is at version {current}; this write was based on version {based_on}",
                             expected=based_on, current=current)
        return current

    def put_preference(self, identity: Identity, pref: Preference, *, based_on: int) -> Preference:
        with self.transaction():
            current = self._expect_version(
                f"preference {pref.key!r}",
                "SELECT version FROM preferences WHERE tenant = ? AND user_id = ? AND key = ?",
                (identity.tenant, identity.user, pref.key), based_on,
            )
            stored = replace(pref, version=current + 1)
            self._write(
                "INSERT INTO preferences VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, key) DO UPDATE "
                "SET value = excluded.value, trusted = excluded.trusted, source = excluded.source, "
                "version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                (identity.tenant, identity.user, stored.key, stored.value, int(stored.trusted), stored.source,
                 stored.version, _ts(stored.updated_at), _ts(stored.expires_at)),
            )
            return stored

    def restore_preference(self, identity: Identity, pref: Preference) -> None:
        """Write a preference exactly as exported (its version included); imports only."""
        with self.transaction():
            self._write(
                "INSERT INTO preferences VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (identity.tenant, identity.user, pref.key, pref.value, int(pref.trusted), pref.source,
                 pref.version, _ts(pref.updated_at), _ts(pref.expires_at)),
            )

    # -- task state -----------------------------------------------------------
    def get_task(self, identity: Identity, task_id: str) -> TaskState | None:
        rows = self._read(
            "SELECT goal, criteria, done, missing, version, updated_at FROM task_states "
            "WHERE tenant = ? AND user_id = ? AND agent = ? AND task_id = ?",
            (identity.tenant, identity.user, identity.agent, task_id),
        )
        if not rows:
            return None
        goal, criteria, done, missing, version, at = rows[0]
        return TaskState(task_id, goal, tuple(json.loads(criteria)), tuple(json.loads(done)),
                         tuple(json.loads(missing)), version, parse_time(at))

    def put_task(self, identity: Identity, task: TaskState, *, based_on: int) -> TaskState:
        with self.transaction():
            current = self._expect_version(
                f"task {task.task_id!r}",
                "SELECT version FROM task_states WHERE tenant = ? AND user_id = ? AND agent = ? AND task_id = ?",
                (identity.tenant, identity.user, identity.agent, task.task_id), based_on,
            )
            stored = replace(task, version=current + 1)
            self._write(
                "INSERT INTO task_states VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, user_id, agent, task_id) DO UPDATE SET goal = excluded.goal, "
                "criteria = excluded.criteria, done = excluded.done, missing = excluded.missing, "
                "version = excluded.version, updated_at = excluded.updated_at",
                (identity.tenant, identity.user, identity.agent, stored.task_id, stored.goal,
                 json.dumps(list(stored.criteria), ensure_ascii=False), json.dumps(list(stored.done), ensure_ascii=False),
                 json.dumps(list(stored.missing), ensure_ascii=False), stored.version, _ts(stored.updated_at)),
            )
            return stored

    # -- context traces -------------------------------------------------------
    def put_trace(self, identity: Identity, trace_id: str, created_at: datetime, payload: dict) -> None:
        with self.transaction():
            self._write(
                "INSERT INTO context_traces VALUES (?, ?, ?, ?, ?, ?)",
                (trace_id, identity.tenant, identity.user, identity.agent, _ts(created_at),
                 json.dumps(payload, ensure_ascii=False)),
            )

    def get_trace(self, identity: Identity, trace_id: str) -> dict | None:
        rows = self._read(
            "SELECT payload FROM context_traces WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ?",
            (trace_id, identity.tenant, identity.user, identity.agent),
        )
        return json.loads(rows[0][0]) if rows else None

    def list_traces(self, identity: Identity, *, limit: int = 20, thread_id: str | None = None) -> list[dict]:
        thread = " AND json_extract(payload, '$.thread_id') = ?" if thread_id is not None else ""
        rows = self._read(
            f"SELECT payload FROM context_traces WHERE tenant = ? AND user_id = ? AND agent = ?{thread} "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (identity.tenant, identity.user, identity.agent, *([thread_id] if thread else []), int(limit)),
        )
        return [json.loads(r[0]) for r in rows]

    def integrity_check(self) -> str:
        return self._read("PRAGMA integrity_check")[0][0]

    def close(self) -> None:
        with self._lock:
            self.vectors.close()
            try:
                self._conn.close()
            except sqlite3.Error:
                pass


class KeywordScorer:
    """BM25 with the scope's own statistics. Why: FTS5's ``bm25()`` takes document
    counts and lengths from the whole table, so a tenant's scores, and their order,
    would change with the words other tenants hold. Here FTS5 only finds candidates
    inside the scope's rowid range; each is scored from its stored tokens
    (``keyword_docs``) and the scope's counts (``keyword_terms``, ``keyword_scopes``),
    with FTS5's formula and constants: nothing outside the scope changes a score, an
    order, or which facts are looked at.

    Cost is bounded by the scope's own data: the facts holding every query term come
    first (up to half the budget), then query terms are taken rarest first, each adding
    the oldest facts that hold it, until ``budget`` candidates are collected. A term
    left out or cut short still adds its exact weight (reported as the common-term bonus)
    to every candidate that holds it; only facts holding none of the collected terms
    are not looked at. A project's facts count only where that project is seen. What
    the budget keeps of the exact top 10, and what it costs: ``bench/keyword_budget.py``;
    on LoCoMo it changes nothing (``bench/keyword_planner_quality.py``).

    Tokens come from SQLite's own tokenizer (a scratch in-memory FTS5 table with the
    same settings), so they always agree with the index.
    """

    k1, b = 1.2, 0.75

    def __init__(self, *, budget: int = 500) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._scratch = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._scratch.execute(f"CREATE VIRTUAL TABLE q USING fts5(body, tokenize = '{TOKENIZE}')")
        self._scratch.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, 'instance')")

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Index tokens of each text (repeated as often as they occur), as FTS5 stores them."""
        out: list[list[str]] = [[] for _ in texts]
        with self._lock:
            self._scratch.execute("BEGIN")
            try:
                self._scratch.executemany("INSERT INTO q (rowid, body) VALUES (?, ?)", list(enumerate(texts)))
                for term, doc in self._scratch.execute("SELECT term, doc FROM qv"):
                    out[doc].append(term)
            finally:
                self._scratch.execute("ROLLBACK")
        return out

    def plan(self, terms: Sequence[str], df: dict[str, int], *, spent: int = 0
             ) -> tuple[list[tuple[str, int]], list[str]]:
        """FTS5 expressions that collect candidates, and how many each may add (its
        oldest facts): each term, rarest first, while the budget (less what is
        ``spent``) lasts — from the scope's counts alone. Also the terms collected whole
        (the others are scored as the common-term bonus)."""
        plan, used = [], []
        for term in sorted((t for t in terms if df[t]), key=lambda t: df[t]):
            room = self.budget - spent
            if room <= 0:
                break
            plan.append((quote_term(term), room))
            if df[term] <= room:
                used.append(term)
            spent += df[term]
        return plan, used

    def rank(self, docs: Sequence[tuple[int, str]], scope: tuple[int, int], main: set[str], extra: set[str],
             df: dict[str, int]) -> Ranking:
        """BM25 of each fact over ``main`` tokens and over ``extra`` tokens, best first
        (ties: older first). ``docs`` are ``(fts_rowid, tokens as compact JSON)``;
        ``scope`` is the scope's (indexed facts, tokens); ``df`` its token counts.
        Tokens never hold a quote or a comma (the tokenizer splits there), so a quoted
        token occurs in the JSON once per occurrence, and '","' separates tokens."""
        scope_docs, scope_tokens = scope
        avgdl = max(scope_tokens / max(scope_docs, 1), 1e-9)
        rowids = np.fromiter((rowid for rowid, _ in docs), dtype=np.int64, count=len(docs))
        texts = [tokens for _, tokens in docs]
        dl = np.fromiter((t.count('","') + (len(t) > 2) for t in texts), dtype=np.float64, count=len(texts))
        norm = self.k1 * (1 - self.b + self.b * dl / avgdl)
        parts = np.zeros((2, len(docs)))
        for row, group in ((0, main), (1, extra)):
            for tok in sorted(group):
                n = min(df.get(tok, 0), scope_docs)  # counts read a moment apart may disagree under concurrent writes
                idf = max(math.log((scope_docs - n + 0.5) / (n + 0.5)), 1e-6)
                needle = f'"{tok}"'
                tf = np.fromiter((t.count(needle) for t in texts), dtype=np.float64, count=len(texts))
                parts[row] += idf * tf * (self.k1 + 1) / (tf + norm)
        return Ranking(rowids, parts, np.lexsort((rowids, -(parts[0] + parts[1]))))


class Ranking(Sequence):
    """Ranked ``(fts_rowid, main score, extra score)`` tuples, built only when read."""

    def __init__(self, rowids: np.ndarray, parts: np.ndarray, order: np.ndarray) -> None:
        self._rowids, self._parts, self._order = rowids, parts, order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = self._order[index]
        return int(self._rowids[i]), float(self._parts[0][i]), float(self._parts[1][i])


def _split_sql(script: str) -> list[str]:
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
