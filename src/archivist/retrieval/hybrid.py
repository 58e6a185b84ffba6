"""Hybrid recall: keyword and vector candidates fused, filtered and re-ranked. Pure.

1. **Pools.** Keyword (bm25 over jieba/Porter tokens) and vector (cosine) candidates,
   each a pool of ``max(pool_factor·k, min_pool)`` — larger than k; ``gather_factor``
   times that for questions whose answer gathers several facts (a count, a list, a
   comparison: ``retrieval.questions.asks_for_all``). The store has
   already applied the hard filters: the caller's scope only, committed status only
   (never candidates, superseded or deleted), unexpired at ``now``.
2. **Fusion** by reciprocal rank: ``rrf = w_kw/(rrf_k + rank_kw) + w_vec/(rrf_k + rank_vec)``
   (a missing rank adds 0), de-duplicated by fact id. A query of several lines (a
   conversation so far) adds a third list: the vector ranking of its last
   ``tail_lines`` lines, weighted ``tail_weight`` — the latest turns say most about what
   is needed now.
3. **Filter**: facts below ``confidence_floor`` go.
4. **Rerank** with four features in [0, 1]:

       final = w_rel·relevance + w_rec·recency + w_imp·importance + w_conf·confidence
       relevance  = (rrf − min rrf) / (max rrf − min rrf) over the candidates (1 when all tie)
       recency    = the seed 000 decay of last_confirmed_at (1 for 30 days, then exp(−0.01·Δ))
       importance = a category prior (correction 1.0, preference 0.8, goal 0.7, behavior 0.7,
                    context 0.5, knowledge 0.5)
       confidence = the fact's confidence

   A question that asks for a time ("when…", "什么时候", see ``retrieval.questions``)
   adds ``w_dated·dated``, ``dated`` = 1 when the fact says a time (a date, weekday,
   "yesterday", "上周三"…): its answer is the turn that says when, which shares few
   words with the question.

   A question that names a time ("last May", "上周三", "三月份") adds ``w_period·period``,
   ``period`` = 1 when the time the fact is about — the times its text names, resolved
   against when it was said, else the day it was said — falls in the question's span
   (resolved against the question's time): a soft filter, a fact outside it still ranks.

   A question that names things (``index.entities``: "Melanie", "深圳", "Charlotte's
   Web") adds ``w_entities·entities``, the share of them a fact names in its words or
   its context (a follow-up that only says "它…" carries the event it points to): a
   question about two things prefers facts about both.

   A fact that only asks a question ("花了多少钱？", "How was it?") states nothing and
   loses ``w_only_asks`` (feature ``only_asks``, contributing its negative).

   Defaults: w_rel 1.0, w_rec 0.02, w_imp 0.01, w_conf 0.02 — relevance decides; the
   others only break near-ties the way a memory should (fresh, important, sure);
   w_dated 0.35 (a sweep on LoCoMo is in docs/retrieval.md).
   Measured on LoCoMo, heavier recency weights cost recall: "when did we talk about X"
   asks for old memories as often as new ones.

``rrf_k`` defaults to 5, not the customary 60: with two or three short candidate lists
a sharper fusion lets a strong first place in one list count (LoCoMo and MADial-Bench
both gained; see the closing notes of the issue).
5. **MMR** (optional, ``mmr_lambda``): greedy re-selection by
   ``λ·final − (1−λ)·max cosine to what is already selected``.

Every hit's explanation carries keyword rank, vector rank, bm25, cosine, each
feature, each weighted contribution and the final score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..model import Category, Fact, SearchHit
from ..storage.base import KeywordMatch
from ..model.timerefs import Period
from .questions import fact_periods, mentions_time, only_asks
from .rank import age_decay

IMPORTANCE = {
    Category.CORRECTION: 1.0,
    Category.PREFERENCE: 0.8,
    Category.GOAL: 0.7,
    Category.BEHAVIOR: 0.7,
    Category.CONTEXT: 0.5,
    Category.KNOWLEDGE: 0.5,
}


@dataclass(frozen=True, slots=True)
class HybridRanking:
    rrf_k: int = 5
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    pool_factor: int = 4
    min_pool: int = 20
    gather_factor: int = 2  # counts, lists and comparisons ("how many…", "哪个更…") draw pools this much larger
    w_relevance: float = 1.0
    w_recency: float = 0.02
    w_importance: float = 0.01
    w_confidence: float = 0.02
    w_dated: float = 0.35  # questions asking "when": facts that say a time
    w_period: float = 0.3  # questions naming a time: facts about a time in it
    confidence_floor: float = 0.0
    mmr_lambda: float | None = None
    tail_lines: int = 2  # multi-line queries also search by their last lines (0: off)
    tail_weight: float = 1.0
    w_entities: float = 0.2  # the share of the question's named things a fact names
    w_only_asks: float = 0.1  # a fact that only asks a question ("花了多少钱？") states nothing
    importance: Mapping[Category, float] = field(default_factory=lambda: dict(IMPORTANCE))

    def pool(self, k: int) -> int:
        return max(self.pool_factor * k, self.min_pool)

    @staticmethod
    def recency(fact: Fact, now: datetime) -> float:
        return age_decay(fact, now)

    def rank(
        self,
        keyword: Sequence[KeywordMatch],
        vector: Sequence[tuple[Fact, float]],
        now: datetime,
        k: int,
        vectors: Mapping[str, np.ndarray] | None = None,
        tail: Sequence[tuple[Fact, float]] = (),
        asks_when: bool = False,
        periods: Sequence[Period] = (),
        named: Sequence[str] = (),
    ) -> list[SearchHit]:
        facts: dict[str, Fact] = {}
        parts: dict[str, dict[str, float]] = {}
        for rank, m in enumerate(keyword, start=1):
            facts[m.fact.id] = m.fact
            parts.setdefault(m.fact.id, {}).update(keyword_rank=rank, bm25=m.bm25, keyword_relevance=m.relevance)
        for rank, (fact, cosine) in enumerate(vector, start=1):
            facts.setdefault(fact.id, fact)
            parts.setdefault(fact.id, {}).update(vector_rank=rank, cosine=cosine)
        for rank, (fact, cosine) in enumerate(tail, start=1):
            facts.setdefault(fact.id, fact)
            parts.setdefault(fact.id, {}).update(tail_vector_rank=rank, tail_cosine=cosine)
        fused: dict[str, float] = {}
        for fid, e in parts.items():
            rrf = 0.0
            if "keyword_rank" in e:
                rrf += self.keyword_weight / (self.rrf_k + e["keyword_rank"])
            if "vector_rank" in e:
                rrf += self.vector_weight / (self.rrf_k + e["vector_rank"])
            if "tail_vector_rank" in e:
                rrf += self.tail_weight / (self.rrf_k + e["tail_vector_rank"])
            fused[fid] = rrf
        low, high = (min(fused.values()), max(fused.values())) if fused else (0.0, 0.0)
        spread = high - low
        weights = {"relevance": self.w_relevance, "recency": self.w_recency, "importance": self.w_importance,
                   "confidence": self.w_confidence, "dated": self.w_dated, "period": self.w_period,
                   "entities": self.w_entities, "only_asks": -self.w_only_asks}
        scored: list[tuple[float, str, dict[str, float]]] = []
        for fid, fact in facts.items():
            if fact.confidence < self.confidence_floor:
                continue
            rrf = fused[fid]
            features = {
                "relevance": (rrf - low) / spread if spread > 0 else 1.0,
                "recency": self.recency(fact, now),
                "importance": self.importance.get(fact.category, 0.5),
                "confidence": fact.confidence,
            }
            if asks_when:
                features["dated"] = 1.0 if mentions_time(fact.content) else 0.0
            if named:
                text = (fact.content + "\n" + (fact.context or "")).casefold()
                features["entities"] = sum(name.casefold() in text for name in named) / len(named)
            if self.w_only_asks:
                features["only_asks"] = 1.0 if only_asks(fact.content) else 0.0
            if periods:
                features["period"] = 1.0 if any(p.overlaps(q) for p in fact_periods(fact) for q in periods) else 0.0
            scored.append((sum(weights[n] * v for n, v in features.items()), fid, features))
        # the explanation is written out only for what can be returned (MMR may reach deeper)
        scored.sort(key=lambda s: (-s[0], s[1]))
        hits: list[SearchHit] = []
        for final, fid, features in scored if self.mmr_lambda is not None and vectors else scored[:k]:
            e = parts[fid]
            e.update(rrf=fused[fid], **features, **{f"{n}_contribution": weights[n] * v for n, v in features.items()})
            e["final"] = final
            hits.append(SearchHit(facts[fid], final, e))
        hits.sort(key=lambda h: (-h.score, h.fact.id))
        if self.mmr_lambda is not None and vectors:
            hits = self._mmr(hits, vectors, k)
        return hits[:k]

    def _mmr(self, hits: list[SearchHit], vectors: Mapping[str, np.ndarray], k: int) -> list[SearchHit]:
        lam = self.mmr_lambda or 0.0
        chosen: list[SearchHit] = []
        rest = list(hits)
        while rest and len(chosen) < k:
            def value(h: SearchHit) -> float:
                v = vectors.get(h.fact.id)
                if v is None or not chosen:
                    return lam * h.score
                sims = [float(v @ vectors[c.fact.id]) for c in chosen if c.fact.id in vectors]
                return lam * h.score - (1 - lam) * (max(sims) if sims else 0.0)

            best = max(rest, key=value)
            best.explanation["mmr"] = value(best)
            chosen.append(best)
            rest.remove(best)
        return chosen
