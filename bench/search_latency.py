"""Keyword search latency on the embedded SQLite store.

Corpus: real text from ../shared/bench/latency_corpus.py (80% LoCoMo English, 20%
MADial-Bench Chinese). One user holds --big facts; --users other users hold
--per-user facts each; all in one table. Queries are real questions.

Printed side by side, in the same run, on the same table and the same FTS
expression: archivist's ``MemoryScope.search`` (scoped, filtered, 2·k pool,
re-ranked) and a raw ``MATCH … ORDER BY bm25 LIMIT k`` over the whole table.

    python bench/search_latency.py                     # the full size (≈ 200k facts)
    python bench/search_latency.py --big 10000 --users 10 --per-user 500   # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from archivist import FixedClock, Memory
from archivist.index.text import query_terms, quote_term
from archivist.model import (
    Authority, Category, Durability, Fact, FactScope, Identity, Kind, Provenance, SourceType, Status, new_id,
)

ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    for candidate in (os.environ.get("ARCHIVIST_SHARED"), ROOT.parent / "shared", ROOT / "shared"):
        if candidate and (Path(candidate) / "bench" / "latency_corpus.py").exists():
            return Path(candidate)
    sys.exit("cannot find shared/bench/latency_corpus.py; set ARCHIVIST_SHARED")


def make_fact(identity: Identity, content: str, now) -> Fact:
    return Fact(
        id=new_id(), identity=identity, content=content, category=Category.CONTEXT, kind=Kind.FACT,
        scope=FactScope.USER, durability=Durability.DURABLE, authority=Authority.DESCRIPTIVE, confidence=0.8,
        status=Status.COMMITTED, provenance=Provenance(SourceType.EXPLICIT, extractor="bench"),
        created_at=now, updated_at=now, last_confirmed_at=now,
    )


def raw_query(conn, terms: list[str], k: int) -> None:
    expr = " OR ".join(quote_term(t) for t in terms)
    conn.execute("SELECT rowid, bm25(facts_fts) AS r FROM facts_fts WHERE facts_fts MATCH ? ORDER BY r LIMIT ?", (expr, k)).fetchall()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", type=int, default=100_000, help="facts of the big user")
    ap.add_argument("--users", type=int, default=100, help="other users")
    ap.add_argument("--per-user", type=int, default=1_000, help="facts per other user")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--governed", type=int, default=2_000, help="facts written through remember_many (ingest rate)")
    ap.add_argument("--db", type=Path, help="keep the store here (reused when it exists; default: a temp dir)")
    args = ap.parse_args()

    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    total = args.big + args.users * args.per_user
    texts = latency_corpus.facts(str(shared_dir()), total + args.governed)
    queries = latency_corpus.queries(str(shared_dir()), args.queries)
    clock = FixedClock("2026-06-01T00:00:00Z")

    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        path = args.db or Path(tmp) / "bench.db"
        reuse = path.exists()
        mem = Memory.open(path, clock=clock)
        store = mem.store
        big = Identity("default", "big", "default")
        owners = [big] * args.big + [
            Identity("default", f"user{u:03d}", "default") for u in range(args.users) for _ in range(args.per_user)
        ]
        started = time.perf_counter()
        for start in range(0, 0 if reuse else total, 1000):
            with store.transaction():
                for i in range(start, min(start + 1000, total)):
                    store.insert_fact(make_fact(owners[i], texts[i], clock.now()))
            done = min(start + 1000, total)
            if done % 20_000 == 0 or done == total:
                rate = done / (time.perf_counter() - started)
                print(f"  loaded {done:>7,}/{total:,} facts ({rate:,.0f}/s)", file=sys.stderr)
        raw_rate = total / (time.perf_counter() - started)

        # governed ingest: the full write gate (validation, duplicate check, audit) per fact
        gov = mem.scope(user="governed")
        started = time.perf_counter()
        for start in range(0, 0 if reuse else args.governed, 100):
            gov.remember_many({"content": t} for t in texts[total + start : total + start + 100])
        governed_rate = args.governed / (time.perf_counter() - started)
        if reuse:
            print(f"  reused {path}: ingest rates not measured", file=sys.stderr)

        small = mem.scope(user="user000")
        big_scope = mem.scope(user="big")
        conn = store.db.conn
        rows = []
        for label, scope in (("big user (%s facts)" % f"{args.big:,}", big_scope), (f"small user ({args.per_user:,} facts)", small)):
            ours, raw, raw_rare = [], [], []
            for q in queries:  # interleave the paths so machine noise hits them alike
                terms = query_terms(q)
                if not terms:
                    continue
                found = store.keyword_search(scope.identity, terms, limit=args.k, live_at=clock.now())
                rare = list(found[0].terms_used) if found and found[0].terms_used else terms
                t0 = time.perf_counter()
                scope.search(q, k=args.k)
                t1 = time.perf_counter()
                raw_query(conn, terms, args.k)
                t2 = time.perf_counter()
                raw_query(conn, rare, args.k)
                t3 = time.perf_counter()
                ours.append((t1 - t0) * 1000)
                raw.append((t2 - t1) * 1000)
                raw_rare.append((t3 - t2) * 1000)
            rows.append((label, percentiles(ours), percentiles(raw), percentiles(raw_rare)))
        mem.close()

    print()
    print(f"corpus: {total:,} facts in one table ({args.big:,} for one user + {args.users} users × {args.per_user:,}); "
          f"{len(queries)} queries, k={args.k}; SQLite {__import__('sqlite3').sqlite_version}")
    print()
    print("| scope | archivist search p50 | p95 | raw FTS5, all query terms p50 | p95 | ratio p50 "
          "| raw FTS5, the terms archivist collects p50 | p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (o50, o95), (r50, r95), (q50, q95) in rows:
        print(f"| {label} | {o50:.2f} ms | {o95:.2f} ms | {r50:.2f} ms | {r95:.2f} ms | {o50 / r50:.2f}× "
              f"| {q50:.2f} ms | {q95:.2f} ms |")
    print()
    print("raw FTS5 = SELECT rowid, bm25(facts_fts) FROM facts_fts WHERE facts_fts MATCH ? ORDER BY 2 LIMIT k over the "
          "whole table (every user), stopwords removed; archivist = MemoryScope.search (scoped, expiry-filtered, "
          "2·k pool, common-term bonus, re-ranked, Fact objects built)")
    if not reuse:
        print(f"ingest: {raw_rate:,.0f} facts/s through Store.insert_fact (segment + index, 1,000 per transaction); "
              f"{governed_rate:,.0f} facts/s through remember_many (full write gate, 100 per batch)")


if __name__ == "__main__":
    main()
