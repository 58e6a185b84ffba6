"""Keyword ranking (seed 000 §7). Pure.

    final = R · decay + 0.2 · C
    R     = −bm25 + bonus   (bm25 is smaller-is-better, as SQLite reports it, so it
            is negated; ``bonus`` is the weight of the common terms the store did not
            collect candidates with — see ``storage.core.planner`` — and 0
            when every term was collected)
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
from ..storage.base import KeywordMatch


def age_decay(fact: Fact, now: datetime, *, grace_days: int = 30, rate: float = 0.01) -> float:
    """1 for ``grace_days`` after ``last_confirmed_at``, then exp(−rate·(age − grace_days))."""
    age_days = max(0, (now - fact.last_confirmed_at).days)
    return 1.0 if age_days < grace_days else math.exp(-rate * (age_days - grace_days))


@dataclass(frozen=True, slots=True)
class KeywordRanking:
    confidence_weight: float = 0.2
    grace_days: int = 30
    decay_rate: float = 0.01
    pool_factor: int = 2

    def decay(self, fact: Fact, now: datetime) -> float:
        return age_decay(fact, now, grace_days=self.grace_days, rate=self.decay_rate)

    def score(self, match: KeywordMatch, now: datetime) -> SearchHit:
        fact = match.fact
        relevance = match.relevance
        decay = self.decay(fact, now)
        final = relevance * decay + self.confidence_weight * fact.confidence
        return SearchHit(
            fact,
            final,
            {
                "bm25": match.bm25,
                "common_term_bonus": match.bonus,
                "relevance": relevance,
                "decay": decay,
                "confidence": fact.confidence,
                "confidence_term": self.confidence_weight * fact.confidence,
                "final": final,
            },
        )

    def rank(self, pool: Iterable[KeywordMatch], now: datetime, k: int) -> list[SearchHit]:
        hits = [self.score(match, now) for match in pool]
        hits.sort(key=lambda h: (-h.score, -h.fact.last_confirmed_at.timestamp(), h.fact.id))
        return hits[:k]
