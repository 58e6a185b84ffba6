"""Keyword ranking (seed 000 §7). Pure.

    final = R · decay + 0.2 · C
    R     = −bm25   (SQLite's bm25() is smaller-is-better, so it is negated)
    C     = the fact's confidence
    decay = 1                          when age < 30 days
            exp(−0.01 · (age − 30))    otherwise

``age`` is the number of whole days since the fact's ``last_confirmed_at``: the time
the user last stated or explicitly confirmed it (equal to ``created_at`` until then).
Being read or re-extracted does not move it. Decay orders results; it never decides
that a fact is wrong — expiry (``valid_until``) does that.

Search fetches a bm25 pool of 2 × k and re-sorts it by ``final``, so the result is the
best of that pool, not necessarily the best of the whole store by ``final``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ..model import Fact, SearchHit


@dataclass(frozen=True, slots=True)
class KeywordRanking:
    confidence_weight: float = 0.2
    grace_days: int = 30
    decay_rate: float = 0.01
    pool_factor: int = 2

    def decay(self, fact: Fact, now: datetime) -> float:
        age_days = max(0, (now - fact.last_confirmed_at).days)
        return 1.0 if age_days < self.grace_days else math.exp(-self.decay_rate * (age_days - self.grace_days))

    def score(self, fact: Fact, raw_bm25: float, now: datetime) -> SearchHit:
        relevance = -raw_bm25
        decay = self.decay(fact, now)
        final = relevance * decay + self.confidence_weight * fact.confidence
        return SearchHit(
            fact,
            final,
            {
                "bm25": raw_bm25,
                "relevance": relevance,
                "decay": decay,
                "confidence": fact.confidence,
                "confidence_term": self.confidence_weight * fact.confidence,
                "final": final,
            },
        )

    def rank(self, pool: Iterable[tuple[Fact, float]], now: datetime, k: int) -> list[SearchHit]:
        hits = [self.score(fact, raw, now) for fact, raw in pool]
        hits.sort(key=lambda h: (-h.score, -h.fact.last_confirmed_at.timestamp(), h.fact.id))
        return hits[:k]
