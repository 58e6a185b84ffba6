"""Facts and versions: what is written is read back whole; a new value under a key
is a new version that supersedes the old one; the chain and the per-key history are
complete and ordered."""

from __future__ import annotations

import pytest

from ...clock import FixedClock
from ...errors import FactNotFound, StoreConflict
from ...model import Identity, Status, new_id
from .backends import T0

__all__ = [
    "test_facts_round_trip_every_field",
    "test_a_new_value_under_a_key_is_a_new_version",
    "test_duplicates_are_not_stored_twice",
    "test_facts_survive_a_new_handle",
    "test_one_committed_fact_per_key_is_enforced_by_the_store",
    "test_updating_an_unknown_fact_is_an_error",
]


def test_facts_round_trip_every_field(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice", agent="coder")
        fact = s.remember("用户的数据库是 PostgreSQL 16。", category="context", key="database", confidence=0.8,
                          valid_until="2027-01-01T00:00:00+00:00", thread_id="t1")
        back = mem.store.get_fact(s.identity, fact.id)
        assert back == fact
        assert back.valid_until.isoformat() == "2027-01-01T00:00:00+00:00"
        assert back.identity == Identity("default", "alice", "coder")
        assert [f.id for f in s.facts()] == [fact.id]


def test_a_new_value_under_a_key_is_a_new_version(backend):
    clock = FixedClock(T0)
    with backend.memory(clock) as mem:
        s = mem.scope(user="alice")
        v1 = s.remember("The user lives in Paris.", key="home_city")
        clock.advance(days=1)
        v2 = s.remember("The user lives in Lyon.", key="home_city")
        clock.advance(days=1)
        v3 = s.remember("The user lives in Ghent.", key="home_city")
        assert (v2.version, v2.supersedes, v3.version, v3.supersedes) == (2, v1.id, 3, v2.id)
        assert [f.id for f in s.facts()] == [v3.id]
        assert s.get(v1.id).status is Status.SUPERSEDED
        assert [f.id for f in s.history(v1.id)] == [v1.id, v2.id, v3.id]
        assert [f.id for f in s.history(v3.id)] == [v1.id, v2.id, v3.id]
        assert [f.version for f in s.key_history("home_city")] == [1, 2, 3]
        assert [h.fact.id for h in s.search("lives", k=10)] == [v3.id]


def test_duplicates_are_not_stored_twice(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        first = s.remember("The user prefers dark mode.")
        again = s.remember("the user prefers  dark mode.")
        assert again.id == first.id
        assert len(s.facts()) == 1


def test_facts_survive_a_new_handle(backend):
    with backend.memory() as mem:
        fact = mem.scope(user="alice").remember("The user's cat is called Miso.")
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        assert s.get(fact.id) == fact
        assert [h.fact.id for h in s.search("Miso")] == [fact.id]


def test_one_committed_fact_per_key_is_enforced_by_the_store(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        live = s.remember("The user lives in Paris.", key="home_city")
        rogue = live.evolve(id=new_id(), content="The user lives in Rome.")
        with pytest.raises(StoreConflict):
            mem.store.insert_fact(rogue)
        assert [f.id for f in s.facts()] == [live.id]
        assert mem.store.get_fact(s.identity, rogue.id) is None


def test_updating_an_unknown_fact_is_an_error(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        ghost = s.remember("A stored fact.").evolve(id=new_id())
        with pytest.raises(FactNotFound):
            mem.store.update_fact(ghost)
