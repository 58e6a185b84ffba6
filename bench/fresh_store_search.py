"""Keyword search in a store that was just filled, before and after PostgreSQL has taken
its planner statistics, against SQLite in the same run.

A bulk load (an import, a first ``learn`` of a long history) leaves PostgreSQL planning
for the rows it last counted until autovacuum samples the tables, a minute or more later;
a plan made for a few rows may walk the whole scope instead of its indexes. This prints,
for one scope of each size: SQLite; PostgreSQL with no statistics ever taken (the store's
own ANALYZE after bulk writes is held back for this row); PostgreSQL after ANALYZE.

Corpus and questions as in bench/search_latency.py (real LoCoMo and MADial-Bench text).

    python bench/fresh_store_search.py                        # 500, 3,000 and 20,000 facts
    python bench/fresh_store_search.py --sizes 3000 --queries 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from search_latency import make_fact, percentiles, shared_dir

from archivist import FixedClock, Memory
from archivist.index.text import query_terms
from archivist.model import Identity


def timed(mem: Memory, who: Identity, questions: list[str], k: int) -> tuple[float, float]:
    now, samples = mem.clock.now(), []
    for q in questions:
        terms = query_terms(q)
        started = time.perf_counter()
        mem.store.keyword_search(who, terms, limit=k, live_at=now)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500,3000,20000", help="facts in the scope, comma-separated")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    from archivist.testing.postgres import fresh_database

    try:  # hold back the store's own ANALYZE after bulk writes (absent before it was added)
        from archivist.storage.postgres import statistics as planner

        planner.ANALYZE_AFTER = 1 << 62
    except ImportError:
        pass
    sizes = [int(s) for s in args.sizes.split(",")]
    clock, who = FixedClock("2026-06-01T00:00:00Z"), Identity("default", "u", "default")
    rows = []
    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        for size in sizes:
            texts = latency_corpus.facts(str(shared_dir()), size + args.queries)
            questions, texts = texts[size:], texts[:size]
            for backend in ("sqlite", "postgres"):
                target = str(Path(tmp) / f"{size}.db") if backend == "sqlite" else fresh_database()
                with Memory.open(target, clock=clock, embedder=None) as mem:
                    with mem.store.transaction():
                        for text in texts:
                            mem.store.insert_fact(make_fact(who, text, clock.now()))
                    if backend == "sqlite":
                        rows.append((size, "SQLite", *timed(mem, who, questions, args.k)))
                        continue
                    rows.append((size, "PostgreSQL, no statistics yet", *timed(mem, who, questions, args.k)))
                    with mem.store.db.connect() as conn:
                        conn.execute("ANALYZE facts, fact_terms, term_stats")
                    rows.append((size, "PostgreSQL, analyzed", *timed(mem, who, questions, args.k)))
                print(f"  {size:,} facts, {backend}: done", file=sys.stderr, flush=True)
    print()
    print(f"keyword search, one scope, k={args.k}, {args.queries} real questions each")
    print()
    print("| facts in the scope | store | p50 (ms) | p95 (ms) |")
    print("|---|---|---|---|")
    for size, store, p50, p95 in rows:
        print(f"| {size:,} | {store} | {p50:.2f} | {p95:.2f} |")


if __name__ == "__main__":
    main()
