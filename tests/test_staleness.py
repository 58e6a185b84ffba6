"""Staleness is listed for review; expiry applies at read time on every read path."""

import json
from datetime import timedelta

from archivist.testing.embedders import HashEmbedder

from archivist import Memory
from archivist.storage.sqlite import SQLiteStore


def test_stale_and_expired_facts_are_listed_for_review(alice, clock):
    goal = alice.remember("The user wants to run a marathon.", category="goal")
    pref = alice.remember("The user prefers tea.", category="preference")
    corr = alice.remember("The user's name is spelled Ann, not Anne.", category="correction")
    oncall = alice.remember("The user is on call.", valid_until=clock.now() + timedelta(days=5))
    clock.advance(days=100)
    stale = alice.stale()
    assert [s.fact.id for s in stale] == [oncall.id, goal.id]
    assert stale[0].reason.startswith("expired") and "expected to hold 90" in stale[1].reason
    alice.confirm(goal.id)
    assert [s.fact.id for s in alice.stale()] == [oncall.id]
    clock.advance(days=400)
    ids = [s.fact.id for s in alice.stale()]
    assert pref.id in ids and goal.id in ids and corr.id not in ids


def test_expiry_applies_on_every_read_path(db_path, clock):
    mem = Memory(SQLiteStore(db_path), clock=clock, embedder=HashEmbedder())
    s = mem.scope(user="alice")
    s.remember("The user's parking spot is P7 near the elevator.", valid_until=clock.now() + timedelta(days=1))
    s.remember("The user's desk is on floor three.")
    reads = {
        "keyword": lambda: [h.fact.content for h in s.search("parking spot", mode="keyword")],
        "vector": lambda: [h.fact.content for h in s.search("parking spot", k=10, mode="vector")],
        "hybrid": lambda: [h.fact.content for h in s.search("parking spot", k=10)],
        "facts": lambda: [f.content for f in s.facts()],
        "render": lambda: [s.render().text],
        "memory_search": lambda: [s.memory_search("parking spot")],
        "context": lambda: [s.context("where do I park?", persist=False).system],
        "as_of": lambda: [f.content for f in s.as_of(clock.now())],
    }
    before = {name: json.dumps(read(), ensure_ascii=False) for name, read in reads.items()}
    assert all("P7" in text for text in before.values()), before
    clock.advance(days=2)
    after = {name: json.dumps(read(), ensure_ascii=False) for name, read in reads.items()}
    assert not [name for name, text in after.items() if "P7" in text], after
    assert "floor three" in after["facts"] and "floor three" in after["render"]
    assert "P7" in json.dumps([f.content for f in s.facts(include_expired=True)])
    mem.close()
