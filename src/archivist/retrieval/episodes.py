"""Recall over both layers: facts (what was learned) and episodes (what was said). Pure.

A fact extracted from a turn and the turn itself often both match a question; the
answer is one thing, so it is returned once, as the fact (the governed, third-person
statement), at the better of the two ranks. The turn stays reachable for facts it did
not yield.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import InvalidInput
from ..model import SearchHit, Status

KINDS: tuple[str, ...] = ("fact", "episode")
_STATUS = {"fact": Status.COMMITTED, "episode": Status.EPISODE}


def statuses_of(kinds: Sequence[str] | str) -> tuple[Status, ...]:
    """The stored statuses a search over ``kinds`` reads; raises on an unknown kind."""
    if isinstance(kinds, str):
        kinds = (kinds,)
    if not isinstance(kinds, (list, tuple, set, frozenset)) or not all(isinstance(k, str) for k in kinds):
        raise InvalidInput(f"kinds must be a non-empty list of {' and '.join(KINDS)}, got {kinds!r}")
    unknown = [k for k in kinds if k not in _STATUS]
    if unknown or not kinds:
        raise InvalidInput(f"kinds must be a non-empty list of {' and '.join(KINDS)}, got {list(kinds)!r}")
    return tuple(_STATUS[k] for k in dict.fromkeys(kinds))


def facts_first(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """``hits`` (best first) with each episode that a listed fact was extracted from
    replaced by that fact, which takes the better of the two places; nothing twice."""
    sources: dict[tuple[str | None, str], SearchHit] = {}
    for h in hits:
        mid = h.fact.provenance.message_id
        if h.kind == "fact" and mid:
            sources.setdefault((h.fact.provenance.thread_id, mid), h)
    out: list[SearchHit] = []
    placed: set[str] = set()
    for h in hits:
        p = h.fact.provenance
        fact = sources.get((p.thread_id, p.message_id or "")) if h.kind == "episode" else None
        if fact is not None:
            if fact.fact.id not in placed:
                placed.add(fact.fact.id)
                out.append(replace(fact, score=max(fact.score, h.score),
                                   explanation={**fact.explanation, "source_turn_score": h.score}))
            continue
        if h.fact.id in placed:
            continue
        placed.add(h.fact.id)
        out.append(h)
    return out


__all__ = ["KINDS", "facts_first", "statuses_of"]
