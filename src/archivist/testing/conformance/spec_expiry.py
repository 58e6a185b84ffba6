"""Expiry is enforced at read time on every path, and the past stays queryable."""

from __future__ import annotations

from ...clock import FixedClock
from .backends import T0

__all__ = ["test_expired_facts_are_never_returned_or_rendered", "test_as_of_answers_what_memory_held_then"]


def test_expired_facts_are_never_returned_or_rendered(backend):
    clock = FixedClock(T0)
    with backend.memory(clock) as mem:
        s = mem.scope(user="alice")
        temp = s.remember("The user is on call this week.", valid_until="2026-01-08T00:00:00+00:00")
        keep = s.remember("The user is on the platform team.")
        assert {h.fact.id for h in s.search("user on call team", k=10)} == {temp.id, keep.id}
        clock.set("2026-01-08T00:00:00+00:00")  # the boundary itself counts as expired
        assert [h.fact.id for h in s.search("user on call team", k=10)] == [keep.id]
        assert [f.id for f in s.facts()] == [keep.id]
        assert "on call" not in s.render().text
        assert temp.id in {f.id for f in s.facts(include_expired=True)}


def test_as_of_answers_what_memory_held_then(backend):
    clock = FixedClock(T0)
    with backend.memory(clock) as mem:
        s = mem.scope(user="alice")
        paris = s.remember("The user lives in Paris.", key="home_city")
        clock.set("2026-03-01T00:00:00+00:00")
        ghent = s.remember("The user lives in Ghent.", key="home_city")
        assert [f.id for f in s.as_of("2026-02-01T00:00:00+00:00")] == [paris.id]
        assert [f.id for f in s.as_of("2026-03-02T00:00:00+00:00")] == [ghent.id]
        assert s.as_of("2025-12-31T00:00:00+00:00") == []
