"""Forgetting reaches every copy the store keeps, leaves a tombstone, and never
touches another user."""

from __future__ import annotations

import numpy as np

from ...model import content_hash

__all__ = [
    "test_forgetting_a_fact_removes_it_everywhere",
    "test_a_tombstone_blocks_re_extraction",
    "test_forgetting_a_user_removes_every_row_of_that_user_only",
]


def test_forgetting_a_fact_removes_it_everywhere(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        fact = s.remember("The user's locker code word is zebracorn.")
        keep = s.remember("The user's dentist is in Ghent.")
        mem.store.put_vectors("test-model", 4, [(fact, np.array([1, 0, 0, 0], dtype=np.float32)),
                                                (keep, np.array([0, 1, 0, 0], dtype=np.float32))])
        s.context(f"Is this right? {fact.content}")  # a trace whose query quotes the fact
        receipt = s.forget(fact.id)
        assert receipt.counts.get("facts") == 1 and sum(receipt.counts.values()) >= 3
        assert mem.store.get_fact(s.identity, fact.id) is None
        assert s.search("zebracorn") == [] and "zebracorn" not in s.render().text
        hits = mem.store.vector_search(s.identity, np.array([1, 0, 0, 0], dtype=np.float32), limit=5,
                                       live_at=mem.clock.now())
        assert [f.id for f, _ in hits] == [keep.id]
        assert all(e.content is None or "zebracorn" not in e.content for e in s.audit())
        assert all("zebracorn" not in str(t) for t in s.traces())
        assert mem.store.is_tombstoned(s.identity, content_hash(fact.content))
        assert [h.fact.id for h in s.search("dentist")] == [keep.id]


CANDIDATE = {"key": "response_language", "content": "用户偏好用中文解释技术问题。", "category": "preference",
             "scope": "user", "durability": "durable", "authority": "descriptive", "confidence": 0.9, "evidence_message_id": "u1", "evidence_text": "平时请用中文解释技术问题"}
TURN = [{"id": "u1", "role": "user", "content": "我主要做 Python 后端开发，平时请用中文解释技术问题。"},
        {"id": "a1", "role": "assistant", "content": "好的。"}]


def test_a_tombstone_blocks_re_extraction(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        fact = s.apply([CANDIDATE], TURN).saved[0]
        s.forget(fact.id)
        again = s.apply([CANDIDATE], TURN)
        assert not again.saved and str(again.rejected[0][1]).startswith("forgotten:")
        said_again = s.remember(fact.content)  # an explicit statement lifts the tombstone
        assert said_again.id != fact.id and not mem.store.is_tombstoned(s.identity, content_hash(fact.content))


def test_forgetting_a_user_removes_every_row_of_that_user_only(backend):
    with backend.memory() as mem:
        for user in ("alice", "bob"):
            for agent in ("coder", "writer"):
                s = mem.scope(user=user, agent=agent)
                s.remember(f"The user {user} keeps notes in {agent} mode.", key="notes")
                if agent == "coder":  # preferences are per user, shared by the user's agents
                    s.set_preference("language", "en")
                s.put_evidence(f"ev-{user}-{agent}", f"raw tool output for {user}")
                s.save_task("t", "ship it")
                s.context("notes")
        receipt = mem.forget_user("default", "alice")
        assert receipt.counts["facts"] == 2 and receipt.counts["preferences"] == 1
        for agent in ("coder", "writer"):
            alice, bob = mem.scope(user="alice", agent=agent), mem.scope(user="bob", agent=agent)
            assert alice.facts(include_history=True, include_candidates=True) == []
            assert alice.search("notes") == [] and alice.traces() == [] and alice.task("t") is None
            assert alice.preferences() == [] and mem.store.get_evidence(alice.identity, f"ev-alice-{agent}") is None
            assert len(bob.facts()) == 1 and bob.search("notes") and bob.task("t") is not None
        assert mem.store.users("default") == ["bob"]
