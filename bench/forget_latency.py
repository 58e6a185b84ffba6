"""How long forgetting takes on a large store: one fact, and one user. The call returns
once the deletions are committed; the files are erased by a background job (FTS merge,
VACUUM for a user, WAL truncation), timed to its end (``wait_for_erasure``). Before
erasure jobs existed the call did both: the two columns are then equal.

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

        def timed(name: str, forget) -> None:
            t0 = time.perf_counter()
            forget()
            returned = (time.perf_counter() - t0) * 1000
            erased = mem.store.wait_for_erasure(timeout=3600) if hasattr(mem.store, "wait_for_erasure") else True
            rows.append((name, returned, (time.perf_counter() - t0) * 1000 if erased else float("nan")))

        for i in range(5):
            fact = victim.facts()[i]
            timed("forget one fact", lambda: victim.forget(fact.id))
        timed(f"forget one user ({per_user} facts)", lambda: mem.forget_user("default", "u1"))
        mem.close()
    print(f"\n{args.facts:,} facts over {args.users} users; store {size / 1e6:.0f} MB\n")
    print("| operation | the call returns (ms) | files erased (ms, from the call) |")
    print("|---|---|---|")
    for name, returned, erased in rows:
        print(f"| {name} | {returned:,.0f} | {erased:,.0f} |")


if __name__ == "__main__":
    main()
