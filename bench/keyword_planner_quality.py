"""Does the keyword scorer's candidate budget cost recall? LoCoMo, one scope per
conversation, one fact per dialog turn (the paper's `{speaker} said, "{text}"` + image
caption), R@5 / R@10 of MemoryScope.search with room for every candidate and with
small budgets (query terms are collected rarest first until the budget is spent; the
rest still add their weight to the candidates that hold them).

    python bench/keyword_planner_quality.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from search_latency import make_fact, shared_dir

from archivist import FixedClock, Memory
from archivist.model import Identity


def turns(conv: dict):
    c = conv["conversation"]
    for key, value in c.items():
        if key.startswith("session_") and isinstance(value, list):
            for turn in value:
                caption = f' {turn["blip_caption"]}' if turn.get("blip_caption") else ""
                yield turn["dia_id"], f'{turn["speaker"]} said, "{turn["text"]}"{caption}'


def recall(data: list, budget: int) -> dict[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(Path(tmp) / "m.db", clock=FixedClock("2026-01-01T00:00:00Z"))
        store = mem.store
        store.keyword_index.scorer.budget = budget
        dia = {}
        with store.transaction():
            for ci, conv in enumerate(data):
                identity = Identity("bench", f"conv{ci}", "default")
                for dia_id, text in turns(conv):
                    fact = make_fact(identity, text, mem.clock.now())
                    store.insert_fact(fact)
                    dia[fact.id] = dia_id
        scores: dict[int, list[float]] = {5: [], 10: []}
        for ci, conv in enumerate(data):
            scope = mem.scope(tenant="bench", user=f"conv{ci}")
            for qa in conv["qa"]:
                gold = set(qa.get("evidence") or [])
                if not gold:
                    continue
                got = [dia[h.fact.id] for h in scope.search(qa["question"], k=10)]
                for k in scores:
                    scores[k].append(len(gold & set(got[:k])) / len(gold))
        mem.close()
        return {k: sum(v) / len(v) for k, v in scores.items()}


def main() -> None:
    data = json.loads((shared_dir() / "bench" / "locomo" / "locomo10.json").read_text())
    print("| candidate budget | R@5 | R@10 |")
    print("|---|---|---|")
    for budget in (10**9, 2_000, 500, 50):
        r = recall(data, budget)
        label = "every candidate" if budget == 10**9 else f"{budget:,} (default)" if budget == 500 else f"{budget:,}"
        print(f"| {label} | {r[5]:.3f} | {r[10]:.3f} |")
    print("\n(recall counts every question with evidence; unresolvable evidence ids simply never match)")


if __name__ == "__main__":
    sys.exit(main())
