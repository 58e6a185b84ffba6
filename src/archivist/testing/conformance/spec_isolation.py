"""Scoping: every read stays inside (tenant, user, agent); the profile and
preferences are per user, shared by that user's agents; nothing crosses tenants."""

from __future__ import annotations

from ...model import Identity

__all__ = [
    "test_reads_never_cross_users_agents_or_tenants",
    "test_ids_from_another_scope_read_as_missing",
    "test_profile_and_preferences_are_per_user",
    "test_users_of_a_tenant",
]

SCOPES = [("t1", "alice", "coder"), ("t1", "alice", "writer"), ("t1", "bob", "coder"), ("t2", "alice", "coder")]


def _fill(mem):
    ids = {}
    for tenant, user, agent in SCOPES:
        s = mem.scope(tenant, user, agent)
        ids[(tenant, user, agent)] = s.remember(f"The shared keyword zanzibar belongs to {tenant} {user} {agent}.").id
    return ids


def test_reads_never_cross_users_agents_or_tenants(backend):
    with backend.memory() as mem:
        ids = _fill(mem)
        for scope in SCOPES:
            s = mem.scope(*scope)
            assert [h.fact.id for h in s.search("zanzibar", k=10)] == [ids[scope]]
            assert [f.id for f in s.facts(include_history=True, include_candidates=True)] == [ids[scope]]
            assert all(h.fact.identity.user == scope[1] for h in s.search("belongs keyword", k=10))
            text = s.render().text
            assert [other for other in SCOPES if "belongs to " + " ".join(other) in text] == [scope]


def test_ids_from_another_scope_read_as_missing(backend):
    with backend.memory() as mem:
        ids = _fill(mem)
        alice = Identity("t1", "alice", "coder")
        for scope, fact_id in ids.items():
            if scope != ("t1", "alice", "coder"):
                assert mem.store.get_fact(alice, fact_id) is None
                assert mem.store.history(alice, fact_id) == []
        mem.scope("t1", "bob", "coder").put_evidence("ev-1", "tool output that belongs to bob")
        assert mem.store.get_evidence(alice, "ev-1") is None
        assert mem.store.get_evidence(Identity("t1", "bob", "other-agent"), "ev-1") is not None


def test_profile_and_preferences_are_per_user(backend):
    with backend.memory() as mem:
        mem.scope("t1", "alice", "coder").update_profile("work_context", "Backend engineer, Python.")
        mem.scope("t1", "alice", "coder").set_preference("language", "zh")
        assert mem.scope("t1", "alice", "writer").profile().get("work_context").summary == "Backend engineer, Python."
        assert [p.key for p in mem.scope("t1", "alice", "writer").preferences()] == ["language"]
        for other in (("t1", "bob", "coder"), ("t2", "alice", "coder")):
            assert mem.scope(*other).profile().get("work_context") is None
            assert mem.scope(*other).preferences() == []


def test_users_of_a_tenant(backend):
    with backend.memory() as mem:
        _fill(mem)
        assert mem.store.users("t1") == ["alice", "bob"]
        assert mem.store.users("t2") == ["alice"]
        assert mem.store.users("t3") == []
