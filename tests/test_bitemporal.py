"""Bitemporal facts: superseding closes validity and retires the old version; as_of(t)
answers what memory held at t; a key's history lists every version."""

from datetime import timedelta

from conftest import sqlite_at_version

from archivist.model import Status
from archivist.storage.sqlite import MIGRATIONS, SQLiteStore


def test_supersede_closes_validity_and_as_of_replays_memory(alice, clock):
    t0 = clock.now()
    v1 = alice.remember("The user lives in London.", key="home_city")
    assert v1.valid_from == t0 and v1.recorded_at == t0 and v1.retired_at is None and v1.valid_to is None
    clock.advance(days=10)
    t1 = clock.now()
    v2 = alice.remember("The user lives in Berlin.", key="home_city")
    clock.advance(days=10)
    v3 = alice.remember("The user lives in Lisbon.", key="home_city")

    history = alice.key_history("home_city")
    assert [f.content for f in history] == [v1.content, v2.content, v3.content]
    assert [f.version for f in history] == [1, 2, 3]
    old = history[0]
    assert old.status is Status.SUPERSEDED and old.retired_at == t1 and old.valid_until == t1
    assert history[1].valid_from == t1 and history[1].valid_until == t1 + timedelta(days=10)
    assert history[2].status is Status.COMMITTED and history[2].valid_until is None

    def held(t):
        return [f.content for f in alice.as_of(t)]

    assert held(t0 - timedelta(seconds=1)) == []
    assert held(t0) == [v1.content]
    assert held(t0 + timedelta(days=5)) == [v1.content]
    assert held(t1) == [v2.content]
    assert held(t1 + timedelta(days=15)) == [v3.content]
    # history rows stay listable even though their validity has closed
    assert {f.id for f in alice.facts(include_history=True)} == {v1.id, v2.id, v3.id}


def test_as_of_respects_expiry_and_candidates_are_not_held(alice, clock):
    t0 = clock.now()
    alice.remember("The user is on call this week.", valid_until=t0 + timedelta(days=7))
    cand = alice.remember_many([{"content": "The user probably likes jazz.", "kind": "inference"}])
    assert cand.candidates and not cand.saved
    assert len(alice.as_of(t0 + timedelta(days=6))) == 1
    assert alice.as_of(t0 + timedelta(days=8)) == []
    clock.advance(days=1)
    confirmed = alice.confirm(cand.candidates[0].id)
    assert confirmed.recorded_at == clock.now()
    assert [f.content for f in alice.as_of(clock.now())][0] == "The user probably likes jazz."
    assert "The user probably likes jazz." not in [f.content for f in alice.as_of(t0)]


def test_migration_backfills_record_times(tmp_path):
    """A store created before the bitemporal columns gets them filled from its own rows."""
    path = tmp_path / "old.db"
    conn = sqlite_at_version(path, 5)
    base = ("'default', 'alice', 'default', NULL, {key}, {content}, 'h', 'context', 'fact', 'user', 'durable', "
            "'descriptive', 1.0, {status}, 'explicit', NULL, NULL, NULL, NULL, NULL, "
            "'2026-01-01T00:00:00+00:00', {updated}, '2026-01-01T00:00:00+00:00', NULL, 1, NULL, NULL")
    conn.execute("INSERT INTO facts (id, tenant, user_id, agent, project, key, content, content_hash, category, kind, "
                 "scope, durability, authority, confidence, status, source_type, thread_id, message_id, evidence_text, "
                 "extractor, extractor_version, created_at, updated_at, last_confirmed_at, valid_until, version, "
                 "supersedes, context) VALUES ('a', " + base.format(key="'k'", content="'old'", status="'superseded'",
                 updated="'2026-02-01T00:00:00+00:00'") + ")")
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    from archivist.model import Identity

    (fact,) = store.key_history(Identity("default", "alice", "default"), "k")
    assert fact.recorded_at.isoformat() == "2026-01-01T00:00:00+00:00"
    assert fact.retired_at.isoformat() == "2026-02-01T00:00:00+00:00"
    assert fact.valid_from == fact.created_at
    store.close()
