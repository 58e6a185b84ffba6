"""Staleness: facts that may no longer hold, for a person to re-confirm or retire.

Expiry (``valid_until``) is hard and applies at read time everywhere: an expired fact
is never searched, rendered or assembled, whether or not consolidation has marked it.
Staleness is soft: a fact not confirmed for longer than its category's expected
validity is still used, but listed for review. Corrections never go stale (they exist
to stop a mistake coming back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..model import Category, Fact, Status

EXPECTED_VALIDITY_DAYS: dict[Category, int | None] = {
    Category.GOAL: 90,
    Category.CONTEXT: 180,
    Category.BEHAVIOR: 180,
    Category.PREFERENCE: 365,
    Category.KNOWLEDGE: 365,
    Category.CORRECTION: None,
}


@dataclass(frozen=True, slots=True)
class StalenessPolicy:
    expected_days: dict[Category, int | None] = field(default_factory=lambda: dict(EXPECTED_VALIDITY_DAYS))

    def expected(self, fact: Fact) -> timedelta | None:
        days = self.expected_days.get(fact.category)
        return None if days is None else timedelta(days=days)


@dataclass(frozen=True, slots=True)
class StaleFact:
    fact: Fact
    reason: str
    overdue_days: int

    def as_dict(self) -> dict:
        return {"fact": self.fact.as_dict(), "reason": self.reason, "overdue_days": self.overdue_days}


def stale_facts(facts: list[Fact], now: datetime, policy: StalenessPolicy = StalenessPolicy()) -> list[StaleFact]:
    """Committed facts past their validity (expired, not yet archived) or past their
    expected validity without a confirmation, most overdue first. Pure."""
    out: list[StaleFact] = []
    for f in facts:
        if f.status is not Status.COMMITTED:
            continue
        if f.is_expired(now):
            out.append(StaleFact(f, f"expired {f.valid_until.date().isoformat()}", (now - f.valid_until).days))
            continue
        expected = policy.expected(f)
        if expected is not None and now - f.last_confirmed_at > expected:
            overdue = (now - f.last_confirmed_at - expected).days
            out.append(StaleFact(f, f"not confirmed for {(now - f.last_confirmed_at).days} days "
                                    f"(a {f.category.value} is expected to hold {expected.days})", overdue))
    out.sort(key=lambda s: (-s.overdue_days, s.fact.id))
    return out
