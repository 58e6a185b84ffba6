"""Nothing one tenant does is visible to another through the embedding cache (issue 19
#2): writing a sentence another tenant already stored costs the same work as a new one
(counted embedder calls, not a timer), and forgetting never removes another tenant's
cached vector. Both backends."""

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
