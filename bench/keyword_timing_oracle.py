"""Does another tenant's data change how long a keyword search takes? One SQLite file:
tenant "victim" holds 100 facts with "zebra", 100 with "quokka" and 300 others; then
tenant "other" writes "zebra" into N facts. The victim's median search time for each
word, before and after, in the same run (the difference is what an attacker could
time; scores and results are covered by tests/test_tenant_oracles.py).

    python bench/keyword_timing_oracle.py [--other 20000] [--rounds 1000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from archivist import Memory


def medians(scope, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"zebra": [], "quokka": []}
    for _ in range(rounds):  # interleaved, so machine noise hits both words alike
        for word, samples in times.items():
            started = time.perf_counter()
            scope.search(word, k=5, mode="keyword")
            samples.append((time.perf_counter() - started) * 1000)
    return {word: statistics.median(samples) for word, samples in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--other", type=int, default=20_000, help="facts of the other tenant holding 'zebra'")
    ap.add_argument("--rounds", type=int, default=1_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        mem = Memory.open(Path(tmp) / "m.db")
        victim = mem.scope("victim", "alice")
        victim.remember_many([{"content": f"zebra note {i} about things"} for i in range(100)]
                             + [{"content": f"quokka note {i} about things"} for i in range(100)]
                             + [{"content": f"misc entry {i}"} for i in range(300)], dedupe=False)
        before = medians(victim, args.rounds)
        other = mem.scope("other", "mallory")
        for start in range(0, args.other, 2_000):
            other.remember_many([{"content": f"zebra zebra stuff {i}"} for i in range(start, min(args.other, start + 2_000))],
                                dedupe=False)
        after = medians(victim, args.rounds)
        mem.close()
    print("| other tenant's 'zebra' facts | victim 'zebra' p50 | victim 'quokka' p50 | difference |")
    print("|---|---|---|---|")
    for label, m in (("0", before), (f"{args.other:,}", after)):
        print(f"| {label} | {m['zebra']:.3f} ms | {m['quokka']:.3f} ms | {m['zebra'] - m['quokka']:+.3f} ms |")


if __name__ == "__main__":
    main()
