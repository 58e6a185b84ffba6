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


def project_facts(scope, texts):
    """Write ``texts`` as the scope's facts: project facts when the scope has a project."""
    kind = {"scope": "project"} if scope.identity.project else {}
    saved = scope.remember_many([{"content": t, **kind} for t in texts]).saved
    assert len(saved) == len(texts) and all(f.identity.project == scope.identity.project for f in saved)


def probe(mem):
    """What tenant acme's alice sees for each probe word, outside every project and in
    project p1: hits, scores, explanations."""
    return [[(h.fact.content, h.score, h.explanation) for h in alice.search(q, k=5, mode="keyword")]
            for alice in (mem.scope("acme", "alice"), mem.scope("acme", "alice", project="p1"))
            for q in ("zebra", "walrus", "zebra walrus", "code word trip")]


@pytest.mark.parametrize("other", [("globex", "mallory"), ("acme", "bob"), ("acme", "alice", "default", "p2")],
                         ids=["other tenant", "other user", "other project"])
def test_another_scopes_words_change_no_keyword_score(store_target, other):
    """Another project of the same user counts too: a scope without a project, or in
    project p1, must not learn what project p2 holds."""
    with Memory.open(store_target) as mem:
        mem.scope("acme", "alice").remember_many([{"content": c} for c in PROBES])
        project_facts(mem.scope("acme", "alice", project="p1"), ["In this project the launch code word is zebra."])
        before = probe(mem)
        assert all(before) and before[0][0][2]["bm25"] != 0
        neighbour = mem.scope(*other[:3], project=other[3] if len(other) > 3 else None)
        project_facts(neighbour, [f"zebra zebra herd number {i}" for i in range(25)])
        assert probe(mem) == before
        project_facts(neighbour, [f"walrus colony {i} with a long description of the code word" for i in range(25)])
        assert probe(mem) == before
        for fact in neighbour.facts()[:30]:
            neighbour.forget(fact.id)
        assert probe(mem) == before
