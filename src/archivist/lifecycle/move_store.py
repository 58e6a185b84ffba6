"""Move a whole SQLite store into PostgreSQL: every user's memory and what the service
keeps beside it — API keys, context traces, the audit, review items, consolidation runs,
the LangGraph store's items, the embedding cache — then the derived indexes rebuilt on
the new side, and every table counted on both sides.

Rows are copied as stored (ids, versions, times; the target numbers rows in the same
order), so nothing passes the
write gate again and nothing is re-extracted. The copy is resumable: after each batch
commits in the target, the last row copied of each table is noted in a file beside the
source (``<store>.move.json``), and a killed run goes on from there; a batch copied again
is a no-op (every table has a key the insert keeps). The note goes once the counts match. What is not carried: erasure jobs (they name the old store's files; forgetting
already removed the rows) and ingest jobs (a queue of the old server).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidInput, StoreNotFound
from ..storage.core.backend import MAINTENANCE

#: the tables that hold what the store knows, in an order that keeps links whole
TABLES = ("api_keys", "facts", "audit", "evidence", "preferences", "profile_sections", "task_states",
          "session_summaries", "review_items", "consolidation_runs", "context_traces", "tombstones",
          "processed_messages", "graph_items", "embedding_cache", "vector_meta")
#: row numbers the target gives itself, in the order rows arrive (the source's order)
NUMBERED = {"facts", "audit", "context_traces"}


@dataclass
class MoveReport:
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # table → (source, target)
    vectors: tuple[int, int] = (0, 0)
    reindexed: int = 0
    resumed: bool = False

    @property
    def verified(self) -> bool:
        return all(a == b for a, b in self.counts.values()) and self.vectors[0] == self.vectors[1]

    def as_dict(self) -> dict[str, Any]:
        return {"verified": self.verified, "resumed": self.resumed, "reindexed": self.reindexed,
                "tables": {t: {"source": a, "target": b} for t, (a, b) in self.counts.items()},
                "vectors": {"source": self.vectors[0], "target": self.vectors[1]}}


def move_store(source: str | Path, target: Any, *, batch: int = 1000,
               progress: Callable[[str, int, int], None] | None = None) -> MoveReport:
    """Copy the SQLite store at ``source`` into ``target``, an open, migrated
    :class:`~archivist.storage.postgres.PostgresStore`. The target must be empty, or hold
    a move of the same source that stopped part-way (it then resumes)."""
    path = Path(source)
    if not path.is_file():
        raise StoreNotFound(f"no store at {path}")
    note = Progress(path.with_name(path.name + ".move.json"), str(target.path))
    src = sqlite3.connect(path.resolve(), timeout=5.0, isolation_level=None)
    try:
        try:  # the source's write lock, held to the end: a write during the move would not be carried
            src.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise InvalidInput(f"{path} is being written ({exc}); stop the processes that write to it "
                               "(serve, mcp, agents) and run the move again") from None
        fingerprint = _fingerprint(src)
        report = MoveReport(resumed=_begin(target, note, fingerprint))
        kinds = _column_kinds(target)
        for table in TABLES:
            report.counts[table] = _copy(src, target, table, kinds[table], note, batch, progress)
        report.vectors = _copy_vectors(src, target, note, batch, progress)
        report.reindexed = target.reindex()
        if report.verified:
            note.path.unlink(missing_ok=True)
        return report
    finally:
        src.close()  # the lock goes with the connection (nothing was written)


def _fingerprint(src: sqlite3.Connection) -> dict[str, Any]:
    """Rows and the highest row number of each table, and a digest of every fact and audit
    row: what a resumed move checks the source still is, since rows written, forgotten or
    edited between two runs (or another store put in its place) would be missed."""
    import hashlib

    tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    found: dict[str, Any] = {}
    for table in ("facts", "audit"):
        if table in tables:
            digest = hashlib.sha256()
            for row in src.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                digest.update(repr(row).encode("utf-8", "surrogatepass"))
            found[f"{table} (content)"] = digest.hexdigest()
    for table in (*TABLES, "fact_vectors"):
        if table in tables:
            try:
                found[table] = list(src.execute(f"SELECT count(*), coalesce(max(rowid), 0) FROM {table}").fetchone())
            except sqlite3.OperationalError:  # WITHOUT ROWID: its rows
                found[table] = [src.execute(f"SELECT count(*) FROM {table}").fetchone()[0], 0]
    return found


class Progress:
    """The last source row copied, per table, for one target (a JSON file, rewritten whole)."""

    def __init__(self, path: Path, target: str) -> None:
        self.path, self.target = path, target
        self.last: dict[str, int] = {}
        self.source: dict[str, Any] | None = None
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("target") != target:
                raise InvalidInput(f"{path} notes a move of this store into {data.get('target')} that did not finish; "
                                   "finish that one, or remove the note")
            self.last = {k: int(v) for k, v in data.get("last", {}).items()}
            self.source = data.get("source")

    def save(self, table: str, last: int) -> None:
        self.last[table] = last
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"target": self.target, "last": self.last, "source": self.source}),
                       encoding="utf-8")
        os.replace(tmp, self.path)


def _begin(target: Any, note: Progress, fingerprint: dict[str, Any]) -> bool:
    """True when resuming; refuses a target that holds anything without a note of this
    move, and a resume after the source changed (what was forgotten there meanwhile
    would stay in the target)."""
    if note.path.exists():
        if note.source is not None and note.source != fingerprint:
            changed = sorted(t for t in set(note.source) | set(fingerprint) if note.source.get(t) != fingerprint.get(t))
            raise InvalidInput(f"the source changed since this move began ({', '.join(changed[:4])}): empty the "
                               f"target database, remove {note.path}, and move the store again")
        return True
    note.source = fingerprint
    used = [t for t in TABLES if t != "vector_meta"
            and target.db.read(MAINTENANCE, f"SELECT EXISTS (SELECT 1 FROM {t})")[0][0]]
    if used:
        raise InvalidInput(f"the target is not empty (it has {', '.join(used[:3])} rows): "
                           "a store is moved into an empty database")
    note.save("facts", -1)
    return False


def _column_kinds(target: Any) -> dict[str, dict[str, str]]:
    rows = target.db.read(MAINTENANCE, "SELECT table_name, column_name, data_type FROM information_schema.columns "
                                       "WHERE table_schema = current_schema()")
    kinds: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        kinds.setdefault(table, {})[column] = kind
    return kinds


def _adapt(value: Any, kind: str) -> Any:
    """A SQLite value as the PostgreSQL column takes it."""
    if value is None:
        return None
    if kind == "boolean":
        return bool(value)
    if kind == "bytea":
        return bytes(value)
    if kind in ("integer", "bigint"):
        return int(value)
    if kind in ("double precision", "real", "numeric"):
        return float(value)
    return value  # text, and times as the RFC 3339 text SQLite keeps (PostgreSQL reads it)


def _copy(src: sqlite3.Connection, target: Any, table: str, kinds: dict[str, str], note: Progress, batch: int,
          progress: Callable[[str, int, int], None] | None) -> tuple[int, int]:
    """Copy ``table`` in batches, by rowid (or, for a table without one, by its key's order
    and an offset: the source is not written to during a move)."""
    columns = [r[1] for r in src.execute(f"PRAGMA table_info('{table}')")
               if r[1] in kinds and not (table in NUMBERED and r[1] == "seq")]
    key = [r[1] for r in sorted(src.execute(f"PRAGMA table_info('{table}')"), key=lambda r: r[5]) if r[5]]
    try:
        src.execute(f"SELECT rowid FROM {table} LIMIT 0")
        by_rowid = True
    except sqlite3.OperationalError:  # WITHOUT ROWID
        by_rowid = False
    total = src.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    last = note.last.get(table, -1 if by_rowid else 0)
    copied = src.execute(f"SELECT count(*) FROM {table} WHERE rowid <= ?", (last,)).fetchone()[0] if by_rowid else last
    insert = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
              "ON CONFLICT DO NOTHING")
    while True:
        if by_rowid:
            rows = src.execute(f"SELECT rowid, {', '.join(columns)} FROM {table} WHERE rowid > ? ORDER BY rowid "
                               "LIMIT ?", (last, batch)).fetchall()
        else:
            rows = src.execute(f"SELECT 0, {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)} "
                               "LIMIT ? OFFSET ?", (batch, last)).fetchall()
        if not rows:
            break
        with target.transaction():
            target.db.write_many(MAINTENANCE, insert,
                                 [[_adapt(v, kinds[c]) for v, c in zip(r[1:], columns, strict=True)] for r in rows])
        last = rows[-1][0] if by_rowid else last + len(rows)
        note.save(table, last)
        copied += len(rows)
        if progress:
            progress(table, copied, total)
    moved = target.db.read(MAINTENANCE, f"SELECT count(*) FROM {table}")[0][0]
    return total, moved


def _copy_vectors(src: sqlite3.Connection, target: Any, note: Progress, batch: int,
                  progress: Callable[[str, int, int], None] | None) -> tuple[int, int]:
    """Each fact's vector, under the number the target gave the fact (found by its id)."""
    total = src.execute("SELECT count(*) FROM fact_vectors v JOIN facts f ON f.seq = v.seq").fetchone()[0]
    last = note.last.get("fact_vectors", -1)
    done = src.execute("SELECT count(*) FROM fact_vectors v JOIN facts f ON f.seq = v.seq WHERE v.seq <= ?",
                       (last,)).fetchone()[0]
    while True:
        rows = src.execute("SELECT v.seq, f.id, f.tenant, f.user_id, f.agent, v.vector FROM fact_vectors v "
                           "JOIN facts f ON f.seq = v.seq WHERE v.seq > ? ORDER BY v.seq LIMIT ?",
                           (last, batch)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        with target.transaction():
            target.db.write_many(MAINTENANCE, "INSERT INTO fact_vectors (fact_seq, tenant, user_id, agent, embedding) "
                                              "SELECT seq, ?, ?, ?, ? FROM facts WHERE id = ? "
                                              "ON CONFLICT DO NOTHING",
                                 [(t, u, a, np.frombuffer(blob, dtype=np.float32), fid) for _, fid, t, u, a, blob in rows])
        note.save("fact_vectors", last)
        done += len(rows)
        if progress:
            progress("fact_vectors", done, total)
    return total, target.db.read(MAINTENANCE, "SELECT count(*) FROM fact_vectors")[0][0]

