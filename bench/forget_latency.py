"""How long forgetting takes on a large store: one fact, and one user, with every purge
step (FTS merge, VACUUM for a user, WAL truncation).

    python bench/forget_latency.py [--facts 100000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from search_latency import make_fact, shared_dir

from archivist import FixedClock, Memory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=100)
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    texts = latency_corpus.facts(str(shared_dir()), args.facts)
    clock = FixedClock("2026-06-01T00:00:00Z")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        mem = Memory.open(path, clock=clock)
        per_user = args.facts // args.users
        for u in range(args.users):
            scope = mem.scope(user=f"u{u}")
            with mem.store.transaction():
                for t in texts[u * per_user:(u + 1) * per_user]:
                    mem.store.insert_fact(make_fact(scope.identity, t, clock.now()))
        size = path.stat().st_size
        victim = mem.scope(user="u0")
        for i in range(5):
            fact = victim.facts()[i]
            t0 = time.perf_counter()
            victim.forget(fact.id)
            rows.append(("forget one fact", (time.perf_counter() - t0) * 1000))
        t0 = time.perf_counter()
        receipt = mem.forget_user("default", "u1")
        rows.append((f"forget one user ({receipt.counts['facts']} facts)", (time.perf_counter() - t0) * 1000))
        mem.close()
    print(f"\n{args.facts:,} facts over {args.users} users; store {size / 1e6:.0f} MB\n")
    print("| operation | ms |")
    print("|---|---|")
    for name, ms in rows:
        print(f"| {name} | {ms:,.0f} |")


if __name__ == "__main__":
    main()
