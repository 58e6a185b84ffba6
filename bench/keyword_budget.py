"""What the keyword scorer's candidate budget costs and keeps. One scope of --facts
real facts (LoCoMo / MADial-Bench text, as bench/search_latency.py); 300 real
questions; for each budget, keyword search p50/p95 and the share of the exact top 10
(bm25 over every matching fact of the scope) that it returns. Same run, same store.

    python bench/keyword_budget.py [--facts 100000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from search_latency import make_fact, percentiles, shared_dir

from archivist import FixedClock, Memory
from archivist.model import Identity

EXACT = 10**9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    texts = latency_corpus.facts(str(shared_dir()), args.facts)
    queries = latency_corpus.queries(str(shared_dir()), args.queries)
    clock = FixedClock("2026-06-01T00:00:00Z")
    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        mem = Memory.open(Path(tmp) / "bench.db", clock=clock)
        owner = Identity("default", "big", "default")
        for start in range(0, args.facts, 1000):
            with mem.store.transaction():
                for text in texts[start : start + 1000]:
                    mem.store.insert_fact(make_fact(owner, text, clock.now()))
        scope = mem.scope(user="big")
        keywords = mem.store.keyword_index.scorer
        default = keywords.budget
        rows = []
        keywords.budget = EXACT
        exact = [[h.fact.id for h in scope.search(q, k=10, mode="keyword")] for q in queries]
        for budget in (EXACT, 2_000, 1_000, default, 200):
            keywords.budget = budget
            times, kept = [], []
            for q, truth in zip(queries, exact, strict=True):
                started = time.perf_counter()
                got = scope.search(q, k=10, mode="keyword")
                times.append((time.perf_counter() - started) * 1000)
                if truth:
                    kept.append(len({h.fact.id for h in got} & set(truth)) / len(truth))
            rows.append((budget, percentiles(times), statistics.mean(kept)))
        keywords.budget = default
        mem.close()
    print(f"\none scope of {args.facts:,} facts, {len(queries)} queries, k=10\n")
    print("| candidate budget | keyword p50 | p95 | share of the exact top 10 |")
    print("|---|---|---|---|")
    for budget, (p50, p95), kept in rows:
        label = "every match (exact)" if budget == EXACT else f"{budget:,}" + (" (default)" if budget == default else "")
        print(f"| {label} | {p50:.2f} ms | {p95:.2f} ms | {kept:.3f} |")


if __name__ == "__main__":
    main()
