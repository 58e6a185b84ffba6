"""Nothing one tenant does is visible to another (issue 19 #1, #2). Keyword scores,
their order and their explanations use the scope's own statistics: a word that only
another tenant (or user) holds changes nothing the caller sees. Writing a sentence
another tenant already stored costs the same work as a new one (counted embedder calls,
not a timer), and forgetting never removes another tenant's cached vector. Both
backends."""

import pytest

from archivist import Memory
from archivist.model import cache_key
from archivist.testing.embedders import HashEmbedder


class CountingEmbedder(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.embedded: list[str] = []

    def embed_documents(self, texts):
        self.embedded += list(texts)
        return super().embed_documents(texts)


SENTENCE = "The user's merger code name is Bluebird."


def test_a_sentence_another_tenant_stored_is_embedded_again(store_target):
    embedder = CountingEmbedder()
    with Memory.open(store_target, embedder=embedder) as mem:
        mem.scope("acme", "alice").remember(SENTENCE)
        first = len(embedder.embedded)
        mem.scope("globex", "mallory").remember(SENTENCE)
        assert first >= 1 and len(embedder.embedded) == 2 * first  # no cache hit across tenants
        mem.scope("globex", "mallory2").remember(SENTENCE)
        assert len(embedder.embedded) == 2 * first  # within one tenant, the cache works


def test_forgetting_leaves_other_tenants_cached_vectors(store_target):
    embedder = CountingEmbedder()
    with Memory.open(store_target, embedder=embedder) as mem:
        fact = mem.scope("acme", "alice").remember(SENTENCE)
        mem.scope("globex", "bob").remember(SENTENCE)
        other = mem.store.cached_embeddings(embedder.name, [cache_key("globex", fact.embed_text)])
        mem.scope("acme", "alice").forget(fact.id)
        mem.forget_user("acme", "carol")
        assert mem.store.cached_embeddings(embedder.name, [cache_key("acme", fact.embed_text)]) == {}
        kept = mem.store.cached_embeddings(embedder.name, [cache_key("globex", fact.embed_text)])
        assert list(kept) == list(other) and len(kept) == 1


PROBES = ["The user's code word is zebra.", "The user's code word is walrus.", "The user plans a zebra walrus trip."]


def probe(mem):
    """What tenant acme's alice sees for each probe word: hits, scores, explanations."""
    alice = mem.scope("acme", "alice")
    return [[(h.fact.content, h.score, h.explanation) for h in alice.search(q, k=5, mode="keyword")]
            for q in ("zebra", "walrus", "zebra walrus", "code word trip")]


@pytest.mark.parametrize("other", [("globex", "mallory"), ("acme", "bob")], ids=["other tenant", "other user"])
def test_another_scopes_words_change_no_keyword_score(store_target, other):
    with Memory.open(store_target) as mem:
        mem.scope("acme", "alice").remember_many([{"content": c} for c in PROBES])
        before = probe(mem)
        assert all(before) and before[0][0][2]["bm25"] != 0
        neighbour = mem.scope(*other)
        neighbour.remember_many([{"content": f"zebra zebra herd number {i}"} for i in range(25)])
        assert probe(mem) == before
        neighbour.remember_many([{"content": f"walrus colony {i} with a long description of the code word"}
                                 for i in range(25)])
        assert probe(mem) == before
        for fact in neighbour.facts()[:30]:
            neighbour.forget(fact.id)
        assert probe(mem) == before
