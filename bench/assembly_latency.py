"""Context assembly latency: 200 candidate items at a 4,000-token budget.

Candidates: 60 long-term memories (recalled from a 5,000-fact SQLite store), 40
evidence items (real LoCoMo/MADial text, 200–2,000 characters each) and 100 history
messages (tool calls with their results, user and assistant turns). Printed: p50/p95
of ``MemoryScope.context`` and the share of that time spent counting tokens, with a
cold token-count cache (a new assembler per call) and a warm one (the assembler
reused across turns, as an agent does).

    python bench/assembly_latency.py [--runs 200]
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from search_latency import make_fact, percentiles, shared_dir

from archivist import FixedClock, Memory, TiktokenCounter


class TimedCounter:
    """Wraps a counter and adds up the time spent in it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def count(self, text: str) -> int:
        t0 = time.perf_counter()
        try:
            return self.inner.count(text)
        finally:
            self.seconds += time.perf_counter() - t0
            self.calls += 1


def build_history(rng: random.Random, texts: list[str], n: int) -> list[dict]:
    out: list[dict] = [{"id": "goal", "role": "user", "content": "Goal: " + texts[0]}]
    i = 0
    while len(out) < n:
        i += 1
        if i % 3 == 0:
            out += [{"id": f"a{i}", "role": "assistant", "content": "",
                     "tool_calls": [{"name": "search_logs", "args": {"q": texts[i][:30]}, "id": f"c{i}"}]},
                    {"id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": " ".join(texts[i:i + 4]),
                     "metadata": {"evidence_id": f"ev-{i}"}}]
        else:
            out.append({"id": f"m{i}", "role": "user" if i % 2 else "assistant", "content": texts[i]})
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--budget", type=int, default=4000)
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus

    texts = latency_corpus.facts(str(shared_dir()), 6000)
    queries = latency_corpus.queries(str(shared_dir()), args.runs)
    rng = random.Random(3)
    clock = FixedClock("2026-06-01T00:00:00Z")
    with tempfile.TemporaryDirectory() as tmp:
        counter = TimedCounter(TiktokenCounter())
        mem = Memory.open(Path(tmp) / "a.db", clock=clock, token_counter=counter)
        scope = mem.scope(user="alice")
        with mem.store.transaction():
            for text in texts[:5000]:
                mem.store.insert_fact(make_fact(scope.identity, text, clock.now()))
        scope.set_preference("language", "English")
        scope.update_profile("work_context", "Backend engineer on the checkout service.")
        history = build_history(rng, texts[5000:], 100)
        evidence_pool = texts[5100:5900]

        def request(q: str) -> dict:
            ev = [{"id": f"e{j}", "source": "tool:logs", "text": " ".join(rng.sample(evidence_pool, rng.randint(1, 10)))}
                  for j in range(40)]
            return dict(system="You are the on-call assistant. Give advice only; never restart services.",
                        evidence=ev, history=history, budget=args.budget, reserve=500, memory_k=60,
                        persist_evidence=False, persist=False)

        rows = []
        candidates = []
        # assembly alone: the same candidates fetched once, then planned, filtered, packed, rendered
        from archivist.context.assemble import ContextRequest
        from archivist.context.sources import build_sources

        asm = scope.assembler()
        pack_times, pack_counting = [], []
        for q in queries:
            kwargs = request(q)
            kwargs.pop("persist"), kwargs.pop("persist_evidence")
            req = ContextRequest(query=q, **kwargs)
            fetched = {name: fn() for name, fn in build_sources(scope, req).items()}
            sources = {name: (lambda items=items: [copy.copy(it) for it in items]) for name, items in fetched.items()}
            counter.seconds = 0.0
            t0 = time.perf_counter()
            asm.assemble(scope.identity, req, sources)
            elapsed = time.perf_counter() - t0
            pack_times.append(elapsed * 1000)
            pack_counting.append(counter.seconds / elapsed)
        for label, reuse in (("cold count cache (new assembler per call)", False),
                             ("warm count cache (assembler reused)", True)):
            shared = scope.assembler()
            for q in queries[:10]:  # warm-up: imports, jieba, sqlite page cache
                scope.context(q, assembler=shared, **request(q))
            times, counting = [], []
            for q in queries:
                req = request(q)
                asm = shared if reuse else scope.assembler()
                counter.seconds = 0.0
                t0 = time.perf_counter()
                view = scope.context(q, assembler=asm, **req)
                elapsed = time.perf_counter() - t0
                times.append(elapsed * 1000)
                counting.append(counter.seconds / elapsed)
                candidates.append(len(view.trace.entries))
            rows.append((label, percentiles(times), statistics.median(counting)))
        mem.close()

    print(f"candidates per call: median {statistics.median(candidates):.0f} trace entries "
          f"(60 memories + 40 evidence + 100 history messages + protected), budget {args.budget}, reserve 500, "
          f"{args.runs} calls")
    print()
    print("| what is timed | token-count cache | p50 | p95 | share of time counting tokens (median) |")
    print("|---|---|---|---|---|")
    for label, (p50, p95), share in rows:
        print(f"| MemoryScope.context: fetch (60-memory search) + assembly | {label} | {p50:.2f} ms | {p95:.2f} ms "
              f"| {share:.0%} |")
    p50, p95 = percentiles(pack_times)
    print(f"| Assembler.assemble on prefetched candidates (plan, filter, pack, render) | warm | {p50:.2f} ms "
          f"| {p95:.2f} ms | {statistics.median(pack_counting):.0%} |")


if __name__ == "__main__":
    main()
