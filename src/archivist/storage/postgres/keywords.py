"""PostgreSQL's keyword index: jieba-segmented text (the same segmentation as SQLite)
in a ``tsvector`` over ``archivist_text`` (a copy of ``simple`` whose ASCII words are
Snowball-stemmed; SQLite uses Porter), with a GIN index, and each scope's lexeme counts
in ``term_stats``. Ranking is idf-weighted term coverage over the candidates the shared
planner (:mod:`archivist.storage.core.planner`) collects."""

from __future__ import annotations

import math
from typing import Any

from ...index.text import segment_for_index
from ...model import Status
from ..base import KeywordMatch
from ..core.backend import MAINTENANCE, Access, KeywordIndex
from ..core.planner import BUDGET, plan_terms
from ..rows import FACT_COLUMNS, N_FACT_COLUMNS, fact_from_row, index_text, visible
from .engine import PostgresEngine
from .schema import TS_CONFIG

F_COLUMNS = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))


def lexemes(column: str = "tsv") -> str:
    """A fact's lexemes, and '' (which counts the scope's facts)."""
    return f"tsvector_to_array({column}) || '{{\"\"}}'::text[]"


# Scopes of up to this many indexed facts are searched by reading the scope's rows.
SCAN_SCOPE_UP_TO = 5_000


class PostgresKeywords(KeywordIndex):
    table = "fact_terms"

    def __init__(self, db: PostgresEngine, *, budget: int = BUDGET) -> None:
        self.db, self.budget = db, budget

    def add(self, identity, rows):
        i = identity
        for seq, fact in rows:  # nothing is read back: the entries go with the next pipeline
            self.db.write_later(
                Access.of(i),
                "WITH t AS (INSERT INTO fact_terms (fact_seq, tenant, user_id, agent, project, tsv) "
                f"VALUES (?, ?, ?, ?, ?, to_tsvector('{TS_CONFIG}', ?)) RETURNING tenant, user_id, agent, project, tsv) "
                "INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df) "
                f"SELECT t.tenant, t.user_id, t.agent, t.project, l, 1 FROM t, unnest({lexemes('t.tsv')}) "
                "AS l ON CONFLICT (tenant, user_id, agent, project, lexeme) DO UPDATE SET df = term_stats.df + 1",
                (seq, i.tenant, i.user, i.agent, fact.identity.project or "", segment_for_index(index_text(fact))))

    def remove(self, identity, seq):
        """Remove a fact from the index; lexemes no fact holds any more go too."""
        who = Access.of(identity)
        row = self.db.write(who, f"DELETE FROM fact_terms WHERE fact_seq = ? RETURNING {lexemes()}, project",
                            (seq,)).fetchone()
        if row is None:
            return 0
        scope = (identity.tenant, identity.user, identity.agent, row[1])
        where = "tenant = ? AND user_id = ? AND agent = ? AND project = ? AND lexeme = ANY(?)"
        self.db.write(who, f"DELETE FROM term_stats WHERE {where} AND df <= 1", (*scope, row[0]))
        self.db.write(who, f"UPDATE term_stats SET df = df - 1 WHERE {where}", (*scope, row[0]))
        return 1

    def remove_user(self, tenant, user):
        who = Access(tenant, user)
        self.db.write(who, "DELETE FROM term_stats WHERE tenant = ? AND user_id = ?", (tenant, user))
        return self.db.write(who, "DELETE FROM fact_terms WHERE tenant = ? AND user_id = ?", (tenant, user)).rowcount

    def rebuild(self, progress):
        """Rebuild the index from committed facts and episodes, in one transaction."""
        db = self.db
        total = db.read(MAINTENANCE, "SELECT count(*) FROM facts WHERE status IN ('committed', 'episode')")[0][0]
        done = last = 0
        with db.transaction():
            db.write(MAINTENANCE, "DELETE FROM fact_terms")
            db.write(MAINTENANCE, "DELETE FROM term_stats")
            while True:
                batch = db.write(MAINTENANCE, "SELECT seq, tenant, user_id, agent, coalesce(project, ''), content, "
                                              "context FROM facts WHERE status IN ('committed', 'episode') AND seq > ? "
                                              "ORDER BY seq LIMIT 1000", (last,)).fetchall()
                if not batch:
                    break
                db.write_many(MAINTENANCE, "INSERT INTO fact_terms (fact_seq, tenant, user_id, agent, project, tsv) "
                                           f"VALUES (?, ?, ?, ?, ?, to_tsvector('{TS_CONFIG}', ?))",
                              [(seq, t, u, a, pr, segment_for_index(c + ("\n" + ctx if ctx else "")))
                               for seq, t, u, a, pr, c, ctx in batch])
                last = batch[-1][0]
                done += len(batch)
                if progress:
                    progress(done, total)
            db.write(MAINTENANCE, "INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df) "
                                  f"SELECT tenant, user_id, agent, project, l, count(*) FROM fact_terms, "
                                  f"unnest({lexemes()}) AS l GROUP BY 1, 2, 3, 4, 5")
        return done

    def search(self, identity, terms, *, limit, live_at, statuses=(Status.COMMITTED,)):
        """Idf-weighted term coverage: a fact scores ``Σ idf(t)`` over the query terms it
        holds (idf from the term's document count in the scope), plus a small ``ts_rank``
        share that breaks ties by term frequency and length. Candidates: the facts of
        the terms the planner collects whole, or of the rarest term when none fits (a
        fact holding every term holds that one too). ``KeywordMatch.bm25`` is the
        negated score."""
        terms = [t for t in dict.fromkeys(terms) if t and any(ch.isalnum() for ch in t)]
        if not terms:
            return []
        who = Access.of(identity)
        scope = (identity.tenant, identity.user, identity.agent, ["", identity.project or ""])
        stats = self.db.read(
            who,
            # per term: its tsquery, and the fewest facts holding any one of its lexemes
            # (and the scope's indexed fact count, under the empty lexeme). Each lexeme is
            # one key look-up: a join let the planner read the scope's whole vocabulary
            # whenever its statistics were stale (3,600 rows for a 16-term query).
            f"SELECT q::text, numnode(q), (SELECT coalesce(min((SELECT coalesce(sum(s.df), 0) FROM term_stats s "
            "WHERE s.tenant = ? AND s.user_id = ? AND s.agent = ? AND s.project = ANY(?) AND s.lexeme = l)), 0) "
            f"FROM unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', t.term))) AS l), "
            "(SELECT sum(df) FROM term_stats WHERE tenant = ? AND user_id = ? AND agent = ? AND project = ANY(?) "
            "AND lexeme = '') "
            f"FROM unnest(?::text[]) WITH ORDINALITY AS t(term, n), LATERAL plainto_tsquery('{TS_CONFIG}', t.term) AS q "
            "ORDER BY n",
            (*scope, *scope, terms),
        )
        docs = int(stats[0][3] or 0) if stats else 0
        weighted = {term: (query, df, max(math.log((docs - df + 0.5) / (df + 0.5) + 1.0), 1e-6))
                    for (query, nodes, df, _), term in zip(stats, terms, strict=True) if nodes and df}
        if not weighted:
            return []
        plan, whole = plan_terms(list(weighted), {t: w[1] for t, w in weighted.items()}, budget=self.budget)
        collected = whole or [plan[0][0]]
        match = " || ".join(["?::tsquery"] * len(collected))
        score = " + ".join(["? * (tsv @@ ?::tsquery)::int"] * len(weighted))
        params: list[Any] = [p for _, (query, _, idf) in weighted.items() for p in (idf, query)]
        queries = [weighted[t][0] for t in collected]
        in_scope = "tenant = ? AND user_id = ? AND agent = ? AND project = ANY(?)"
        # A small scope is read whole through the scope index and each row matched: the
        # text index's matches span every scope, and grow with the store, not the scope
        # (measured: 0.7 ms against 3.6 ms for 1,000 facts of 200,000; bench/backends.py).
        # The OFFSET 0 fence keeps the planner from merging the two.
        source = (f"(SELECT fact_seq, tsv FROM fact_terms WHERE {in_scope} OFFSET 0) s WHERE"
                  if docs <= SCAN_SCOPE_UP_TO else f"fact_terms WHERE {in_scope} AND")
        hits = top_then_facts(
            self.db, identity,
            f"SELECT fact_seq, {score} + 0.01 * ts_rank(tsv, ({match}), 1) AS score FROM {source} "
            f"tsv @@ ({match}) ORDER BY score DESC, fact_seq LIMIT ?",
            [*params, *queries, *scope, *queries], limit, live_at, best_first=True, statuses=statuses)
        dropped = tuple(t for t in weighted if t not in collected)
        return [KeywordMatch(fact, -score, 0.0, tuple(collected), dropped) for fact, score in hits]


def top_then_facts(db: PostgresEngine, identity, top_sql: str, params: list, limit: int, live_at, *,
                   best_first: bool, prelude=None, statuses=(Status.COMMITTED,)) -> list[tuple[Any, float]]:
    """Rank in the derived table first (``top_sql`` yields ``fact_seq, score`` and ends
    with ``LIMIT ?``), then look each hit up by primary key in ``facts`` (the key is the
    fenced subquery's only condition, so the planner has no other index to choose), keep
    the live ones, and widen the fetch until ``limit`` survive or the ranking has
    nothing more."""
    fetch = limit
    vis, vp = visible(identity, "f.project", "?")
    while True:
        rows = db.read(
            Access.of(identity),
            # the row by its key alone, fenced: with the scope's conditions beside it, stale
            # statistics let the planner walk the scope's rows through another index per hit
            f"SELECT {F_COLUMNS}, h.score FROM ({top_sql}) h LEFT JOIN LATERAL (SELECT * FROM facts "
            "WHERE seq = h.fact_seq OFFSET 0) f ON f.tenant = ? AND f.user_id = ? AND f.agent = ? "
            f"AND {vis} AND f.status = ANY(?) AND (f.valid_until IS NULL OR f.valid_until > ?) "
            "ORDER BY h.score " + ("DESC" if best_first else "ASC") + ", h.fact_seq",
            (*params, fetch, identity.tenant, identity.user, identity.agent, *vp,
             [Status(x).value for x in statuses], db.dialect.ts(live_at)),
            prelude=prelude,
        )
        live = [(fact_from_row(r), float(r[N_FACT_COLUMNS])) for r in rows if r[0] is not None]
        if len(live) >= limit or len(rows) < fetch:  # enough, or nothing more to fetch
            return live[:limit]
        fetch *= 4
