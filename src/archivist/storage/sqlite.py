"""The embedded default: one SQLite file.

WAL journal, a busy timeout, foreign keys, ordered migrations recorded in
``schema_migrations``. ``facts`` holds every version of every card; ``facts_fts`` is
the derived keyword index (jieba-segmented text, ``unicode61`` + Porter), holding
committed facts only.

Scoping inside FTS5: each indexed row carries a *scope tag* — one token derived
from (tenant, user, agent) — in its own column with bm25 weight 0. A query is
``scope_tag:"<tag>" AND body:(terms)``, so FTS5 intersects posting lists instead of
ranking every user's matches and filtering afterwards. The join back to ``facts``
still filters by tenant, user and agent: the tag is a speed-up, not the guard.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from ..clock import parse_time
from ..errors import SchemaTooNew, StoreCorrupt, StoreError, StoreLocked
from ..index.text import segment_for_index
from ..model import (
    AuditEntry,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Identity,
    Kind,
    Profile,
    ProfileSection,
    Provenance,
    SourceType,
    Status,
)
from .base import Progress, Store

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

    CREATE VIRTUAL TABLE facts_fts USING fts5(
        scope_tag, body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
]

_FACT_COLUMNS = (
    "id, tenant, user_id, agent, project, key, content, content_hash, category, kind, scope, "
    "durability, authority, confidence, status, source_type, thread_id, message_id, evidence_text, "
    "extractor, extractor_version, created_at, updated_at, last_confirmed_at, valid_until, version, supersedes"
)
_F_COLUMNS = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))


def scope_tag(identity: Identity) -> str:
    """One alphanumeric FTS token naming (tenant, user, agent)."""
    raw = "\x1f".join((identity.tenant, identity.user, identity.agent))
    return "s" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


def _ts(value: datetime | None) -> str | None:
    return value.isoformat(timespec="microseconds") if value else None


def _fact_params(f: Fact) -> tuple:
    from ..pipeline.governance import content_hash

    p = f.provenance
    return (
        f.id, f.identity.tenant, f.identity.user, f.identity.agent, f.identity.project, f.key, f.content,
        content_hash(f.content), f.category.value, f.kind.value, f.scope.value, f.durability.value,
        f.authority.value, f.confidence, f.status.value, p.source_type.value, p.thread_id, p.message_id,
        p.evidence_text, p.extractor, p.extractor_version, _ts(f.created_at), _ts(f.updated_at),
        _ts(f.last_confirmed_at), _ts(f.valid_until), f.version, f.supersedes,
    )


def _fact_from_row(r: sqlite3.Row | tuple) -> Fact:
    (fid, tenant, user, agent, project, key, content, _hash, category, kind, scope, durability, authority,
     confidence, status, source_type, thread_id, message_id, evidence_text, extractor, extractor_version,
     created_at, updated_at, last_confirmed_at, valid_until, version, supersedes) = tuple(r)[:27]
    return Fact(
        id=fid,
        identity=Identity(tenant, user, agent, project),
        key=key,
        content=content,
        category=Category(category),
        kind=Kind(kind),
        scope=FactScope(scope),
        durability=Durability(durability),
        authority=Authority(authority),
        confidence=confidence,
        status=Status(status),
        provenance=Provenance(
            SourceType(source_type), thread_id, message_id, evidence_text, extractor, extractor_version
        ),
        created_at=parse_time(created_at),
        updated_at=parse_time(updated_at),
        last_confirmed_at=parse_time(last_confirmed_at),
        valid_until=parse_time(valid_until) if valid_until else None,
        version=version,
        supersedes=supersedes,
    )


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

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._depth = 0
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from exc

    # -- plumbing -------------------------------------------------------------
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
                self._conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
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
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from exc

    # -- facts ------------------------------------------------------------
    def insert_fact(self, fact: Fact) -> None:
        with self.transaction():
            placeholders = ", ".join("?" * 27)
            cur = self._write(f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({placeholders})", _fact_params(fact))
            if fact.status is Status.COMMITTED:
                self._index(cur.lastrowid, fact)

    def _index(self, seq: int, fact: Fact) -> None:
        self._write(
            "INSERT INTO facts_fts (rowid, scope_tag, body) VALUES (?, ?, ?)",
            (seq, scope_tag(fact.identity), segment_for_index(fact.content)),
        )

    def update_fact(self, fact: Fact) -> None:
        with self.transaction():
            row = self._write(
                "SELECT seq FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ?",
                (fact.id, fact.identity.tenant, fact.identity.user, fact.identity.agent),
            ).fetchone()
            if row is None:
                from ..errors import FactNotFound

                raise FactNotFound(fact.id)
            self._write(
                "UPDATE facts SET status = ?, confidence = ?, updated_at = ?, last_confirmed_at = ?, valid_until = ? "
                "WHERE seq = ?",
                (fact.status.value, fact.confidence, _ts(fact.updated_at), _ts(fact.last_confirmed_at),
                 _ts(fact.valid_until), row[0]),
            )
            self._write("DELETE FROM facts_fts WHERE rowid = ?", (row[0],))
            if fact.status is Status.COMMITTED:
                self._index(row[0], fact)

    def get_fact(self, identity: Identity, fact_id: str) -> Fact | None:
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE id = ? AND tenant = ? AND user_id = ? AND agent = ?",
            (fact_id, identity.tenant, identity.user, identity.agent),
        )
        return _fact_from_row(rows[0]) if rows else None

    def list_facts(self, identity, *, statuses=(Status.COMMITTED,), key=None, live_at=None, limit=None):
        sql = [f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ?"]
        params: list = [identity.tenant, identity.user, identity.agent]
        if statuses:
            sql.append(f"AND status IN ({', '.join('?' * len(statuses))})")
            params.extend(Status(s).value for s in statuses)
        if key is not None:
            sql.append("AND key = ?")
            params.append(key)
        if live_at is not None:
            sql.append("AND (valid_until IS NULL OR valid_until > ?)")
            params.append(_ts(live_at))
        sql.append("ORDER BY created_at DESC, seq DESC")
        if limit is not None:
            sql.append("LIMIT ?")
            params.append(int(limit))
        return [_fact_from_row(r) for r in self._read(" ".join(sql), params)]

    def find_by_hash(self, identity, content_hash):
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE tenant = ? AND user_id = ? AND agent = ? "
            "AND content_hash = ? AND status IN ('committed', 'candidate')",
            (identity.tenant, identity.user, identity.agent, content_hash),
        )
        return [_fact_from_row(r) for r in rows]

    def keyword_search(self, identity, match, *, limit, live_at):
        expression = f'scope_tag : "{scope_tag(identity)}" AND body : ({match})'
        rows = self._read(
            f"SELECT {_F_COLUMNS}, bm25(facts_fts, 0.0, 1.0) AS raw FROM facts_fts "
            "JOIN facts f ON f.seq = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND f.tenant = ? AND f.user_id = ? AND f.agent = ? "
            "AND f.status = 'committed' AND (f.valid_until IS NULL OR f.valid_until > ?) "
            "ORDER BY raw LIMIT ?",
            (expression, identity.tenant, identity.user, identity.agent, _ts(live_at), int(limit)),
        )
        return [(_fact_from_row(r), r[27]) for r in rows]

    def history(self, identity, fact_id):
        chain: list[Fact] = []
        current = self.get_fact(identity, fact_id)
        seen = set()
        while current is not None and current.id not in seen:  # walk back
            seen.add(current.id)
            chain.append(current)
            current = self.get_fact(identity, current.supersedes) if current.supersedes else None
        chain.reverse()
        while True:  # walk forward
            rows = self._read(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE supersedes = ? AND tenant = ? AND user_id = ? AND agent = ?",
                (chain[-1].id, identity.tenant, identity.user, identity.agent),
            ) if chain else []
            if not rows or rows[0][0] in seen:
                return chain
            nxt = _fact_from_row(rows[0])
            seen.add(nxt.id)
            chain.append(nxt)

    # -- profile ------------------------------------------------------------
    def get_profile(self, identity):
        rows = self._read(
            "SELECT section, summary, updated_at, source_message_ids FROM profile_sections "
            "WHERE tenant = ? AND user_id = ?",
            (identity.tenant, identity.user),
        )
        return Profile(
            {s: ProfileSection(s, text, parse_time(at), tuple(json.loads(ids))) for s, text, at, ids in rows}
        )

    def put_profile_section(self, identity, section):
        with self.transaction():
            self._write(
                "INSERT INTO profile_sections VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, section) "
                "DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at, "
                "source_message_ids = excluded.source_message_ids",
                (identity.tenant, identity.user, section.name, section.summary, _ts(section.updated_at),
                 json.dumps(list(section.source_message_ids))),
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
        """Drop the keyword index and rebuild it from committed rows, in one transaction."""
        total = self._read("SELECT count(*) FROM facts WHERE status = 'committed'")[0][0]
        done = 0
        with self.transaction():
            self._write("DELETE FROM facts_fts")
            cursor = self._conn.execute(
                "SELECT seq, tenant, user_id, agent, content FROM facts WHERE status = 'committed' ORDER BY seq"
            )
            while batch := cursor.fetchmany(1000):
                self._conn.executemany(
                    "INSERT INTO facts_fts (rowid, scope_tag, body) VALUES (?, ?, ?)",
                    [(seq, scope_tag(Identity(t, u, a)), segment_for_index(text)) for seq, t, u, a, text in batch],
                )
                done += len(batch)
                if progress:
                    progress(done, total)
            self._write("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
        return done

    def integrity_check(self) -> str:
        return self._read("PRAGMA integrity_check")[0][0]

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass


def _split_sql(script: str) -> list[str]:
    """Statements of a migration script (no semicolons inside our statements)."""
    out = []
    for part in script.split(";"):
        lines = [ln for ln in part.splitlines() if ln.strip() and not ln.strip().startswith("--")]
        if lines:
            out.append("\n".join(lines))
    return out
