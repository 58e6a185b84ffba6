"""SQLite's keyword index: FTS5 (jieba-segmented text, ``unicode61`` + Porter) finds
candidates inside the scope's rowid range; each is scored with BM25 from the scope's own
statistics (``keyword_docs``, ``keyword_terms``, ``keyword_scopes``), never the table's."""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

from ...index.text import quote_term, segment_for_index
from ...model import Identity, Status
from ..base import KeywordMatch
from ..core.backend import MAINTENANCE, Access, KeywordIndex
from ..core.planner import BUDGET, plan_terms
from ..rows import FACT_COLUMNS, N_FACT_COLUMNS, fact_from_row, index_text, visible
from .engine import SQLiteEngine
from .scopes import SEQ_MASK, Scopes, fts_rowid, scope_range

TOKENIZE = "porter unicode61 remove_diacritics 2"


class SQLiteKeywords(KeywordIndex):
    table = "facts_fts"

    def __init__(self, db: SQLiteEngine, scopes: Scopes) -> None:
        self.db, self.scopes = db, scopes
        self.scorer = KeywordScorer()

    def add(self, identity, rows):
        scope_id = self.scopes.id(identity, create=True)
        self._index_rows([(fts_rowid(scope_id, seq), segment_for_index(index_text(f)), f.identity.project)
                          for seq, f in rows])

    def _index_rows(self, rows: Sequence[tuple[int, str, str | None]]) -> None:
        """Add ``(fts_rowid, body, project)`` rows to the index, and their tokens to
        ``keyword_docs`` (whose triggers count them into the scope's statistics)."""
        tokens = self.scorer.tokens([body for _, body, _ in rows])
        self.db.write_many(MAINTENANCE, "INSERT INTO facts_fts (rowid, body) VALUES (?, ?)",
                           [(rowid, body) for rowid, body, _ in rows])
        self.db.write_many(MAINTENANCE, "INSERT INTO keyword_docs (fts_rowid, project, tokens) VALUES (?, ?, ?)",
                           [(rowid, project or "", json.dumps(t, ensure_ascii=False, separators=(",", ":")))
                            for (rowid, _, project), t in zip(rows, tokens, strict=True)])

    def _unindex(self, where: str, params: Sequence) -> int:
        """Remove index rows (``where`` compares the fts rowid) and their tokens."""
        self.db.write(MAINTENANCE, f"DELETE FROM keyword_docs WHERE fts_rowid {where}", params)
        return self.db.write(MAINTENANCE, f"DELETE FROM facts_fts WHERE rowid {where}", params).rowcount

    def remove(self, identity, seq):
        scope_id = self.scopes.id(identity)
        return self._unindex("= ?", (fts_rowid(scope_id, seq),)) if scope_id is not None else 0

    def remove_user(self, tenant, user):
        return sum(self._unindex("BETWEEN ? AND ?", scope_range(s)) for s in self.scopes.of_user(tenant, user))

    def rebuild(self, progress):
        """Drop the index and rebuild it from committed facts and episodes, in one transaction."""
        db = self.db
        total = db.read(MAINTENANCE, "SELECT count(*) FROM facts WHERE status IN ('committed', 'episode')")[0][0]
        done = 0
        with db.transaction():
            for table in ("keyword_terms", "keyword_scopes", "keyword_docs", "facts_fts"):
                db.write(MAINTENANCE, f"DELETE FROM {table}")
            db.write(MAINTENANCE, "INSERT INTO scopes (tenant, user_id, agent) SELECT DISTINCT tenant, user_id, agent "
                                  "FROM facts WHERE status IN ('committed', 'episode') ON CONFLICT DO NOTHING")
            cursor = db.conn.execute(
                "SELECT f.seq, s.id, f.content || coalesce(char(10) || f.context, ''), f.project FROM facts f "
                "JOIN scopes s ON s.tenant = f.tenant AND s.user_id = f.user_id AND s.agent = f.agent "
                "WHERE f.status IN ('committed', 'episode') ORDER BY f.seq")
            while batch := cursor.fetchmany(1000):
                self._index_rows([(fts_rowid(scope_id, seq), segment_for_index(text), project)
                                  for seq, scope_id, text, project in batch])
                done += len(batch)
                if progress:
                    progress(done, total)
            db.write(MAINTENANCE, "INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
        return done

    def search(self, identity, terms, *, limit, live_at, statuses=(Status.COMMITTED,)):
        """BM25 with the statistics of what this scope sees — its facts outside every
        project, and its project's (see :class:`KeywordScorer`) — best first, expired
        facts skipped."""
        terms = [t for t in dict.fromkeys(terms) if t]
        scope_id = self.scopes.id(identity) if terms else None
        if scope_id is None:
            return []
        who, scorer = Access.of(identity), self.scorer
        stems = dict(zip(terms, scorer.tokens(terms), strict=True))
        wanted = sorted({tok for toks in stems.values() for tok in toks})
        projects = ("", identity.project) if identity.project else ("",)
        seen = f"project IN ({', '.join('?' * len(projects))})"
        scope = self.db.read(who, f"SELECT sum(docs), sum(tokens) FROM keyword_scopes WHERE scope_id = ? AND {seen}",
                             (scope_id, *projects))[0]
        if not wanted or not scope[0]:
            return []
        df = dict(self.db.read(who, f"SELECT term, sum(df) FROM keyword_terms WHERE scope_id = ? AND {seen} AND term IN "
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
            return self.db.read(who, f"WITH c(rowid) AS ({union}) SELECT c.rowid, d.tokens FROM c "
                                     "JOIN keyword_docs d ON d.fts_rowid = c.rowid",
                                [p for expression, room in plan for p in (expression, lo, hi, *projects, room)])

        # first the facts holding every term, then each term rarest first with the room left
        docs = collect([(" AND ".join(quote_term(t) for t in present), scorer.budget // 2)]) if len(present) > 1 else []
        plan, used = plan_terms(present, term_df, budget=scorer.budget, spent=len(docs))
        if plan:
            docs = list(dict(docs + collect([(quote_term(t), room) for t, room in plan])).items())
        dropped = tuple(t for t in terms if t not in used)
        main = {tok for t in used for tok in stems[t]}
        ranked = scorer.rank(docs, scope, main, {tok for t in dropped for tok in stems[t]} - main, df)
        out: list[KeywordMatch] = []
        start, fetch = 0, limit
        while start < len(ranked) and len(out) < limit:  # widen until enough survive the expiry filter
            chunk, start = ranked[start:start + fetch], start + fetch
            rows = {r[N_FACT_COLUMNS]: r for r in live_rows(self.db, identity,
                                                            [rowid & SEQ_MASK for rowid, _, _ in chunk],
                                                            live_at, statuses)}
            out += [KeywordMatch(fact_from_row(rows[rowid & SEQ_MASK]), -m, x, tuple(used), dropped)
                    for rowid, m, x in chunk if rowid & SEQ_MASK in rows]
            fetch *= 4
        return out[:limit]


def live_rows(db: SQLiteEngine, identity: Identity, seqs, live_at, statuses: Sequence[Status]) -> list[tuple]:
    """Unexpired rows of the scope among ``seqs`` whose status is one of ``statuses``
    (fact columns, then seq)."""
    marks = ", ".join("?" * len(seqs))
    vis, vp = visible(identity, "project", "?")
    wanted = ", ".join("?" * len(statuses))
    return db.read(
        Access.of(identity),
        # NOT INDEXED: look rows up by rowid, never scan the scope index of a huge scope
        f"SELECT {FACT_COLUMNS}, seq FROM facts NOT INDEXED WHERE seq IN ({marks}) AND tenant = ? AND user_id = ? "
        f"AND agent = ? AND {vis} AND status IN ({wanted}) AND (valid_until IS NULL OR valid_until > ?)",
        (*seqs, identity.tenant, identity.user, identity.agent, *vp, *(Status(x).value for x in statuses),
         db.dialect.ts(live_at)),
    )


class KeywordScorer:
    """BM25 with the scope's own statistics. Why: FTS5's ``bm25()`` takes document
    counts and lengths from the whole table, so a tenant's scores, and their order,
    would change with the words other tenants hold. Here FTS5 only finds candidates
    inside the scope's rowid range (as :mod:`~archivist.storage.core.planner` plans);
    each is scored from its stored tokens (``keyword_docs``) and the scope's counts
    (``keyword_terms``, ``keyword_scopes``), with FTS5's formula and constants: nothing
    outside the scope changes a score, an order, or which facts are looked at.

    Tokens come from SQLite's own tokenizer (a scratch in-memory FTS5 table with the
    same settings), so they always agree with the index.
    """

    k1, b = 1.2, 0.75

    def __init__(self, *, budget: int = BUDGET) -> None:
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
