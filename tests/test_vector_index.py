"""The two vector indexes (numpy brute force and sqlite-vec) agree, and both stay in
step with the store: incremental writes, supersedes, other processes, rollbacks."""

import multiprocessing
from datetime import timedelta

import numpy as np
import pytest

from archivist import Memory
from archivist.index.vectors import NumpyIndex, SqliteVecIndex, sidecar_path, sqlite_vec_available
from archivist.storage.sqlite import SQLiteStore
from archivist.testing.embedders import HashEmbedder

needs_vec = pytest.mark.skipif(
    not sqlite_vec_available(), reason="apsw and sqlite-vec are not installed (pip install '.[vec]')"
)




def open_mem(path, clock, index, **kw):
    return Memory(SQLiteStore(path, vector_index=index), clock=clock, embedder=kw.pop("embedder", HashEmbedder()), **kw)


def fill(mem, users=("alice", "bob", "carol"), n=400):
    for user in users:
        mem.scope(user=user).remember_many(
            [{"content": f"{user} fact number {i} about topic {i % 17}"} for i in range(n)], dedupe=False
        )


def top(mem, user, query, k):
    scope = mem.scope(user=user)
    return [(f.id, s) for f, s in mem.store.vector_search(scope.identity, query, limit=k, live_at=mem.clock.now())]


def assert_same_ranking(a, b, tol=1e-5):
    """Same ids in the same order, except that hits whose cosines differ by less than
    float32 noise may swap places (or swap across the k-th boundary)."""
    assert len(a) == len(b)
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=tol)
    b_score = dict(b)
    for (aid, ascore), (bid, _) in zip(a, b):
        if aid != bid:
            assert abs(ascore - b_score.get(aid, b[-1][1])) <= tol, (aid, ascore)


def queries(n=40, dim=48, seed=7):
    q = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@needs_vec
def test_both_indexes_return_the_same_top_k(tmp_path, clock):
    db = tmp_path / "m.db"
    mem = open_mem(db, clock, "sqlite-vec")
    assert isinstance(mem.store.vectors, SqliteVecIndex)
    fill(mem)
    vec_results = {(u, i, k): top(mem, u, q, k) for u in ("alice", "carol") for i, q in enumerate(queries())
                   for k in (1, 10, 50)}
    mem.close()
    mem = open_mem(db, clock, "numpy")
    assert isinstance(mem.store.vectors, NumpyIndex)
    np_results = {(u, i, k): top(mem, u, q, k) for u in ("alice", "carol") for i, q in enumerate(queries())
                  for k in (1, 10, 50)}
    mem.close()
    assert len(vec_results) == 2 * 40 * 3
    exact = 0
    for key, hits in np_results.items():
        assert len(hits) == key[2]
        assert_same_ranking(vec_results[key], hits)
        exact += [h[0] for h in vec_results[key]] == [h[0] for h in hits]
    assert exact >= 0.9 * len(np_results)  # swaps of float-noise ties are rare


@needs_vec
def test_incremental_writes_and_supersedes_reach_the_index(tmp_path, clock):
    mem = open_mem(tmp_path / "m.db", clock, "sqlite-vec")
    alice = mem.scope(user="alice")
    fill(mem, users=("alice",), n=50)
    old = alice.remember("The user's favourite colour is green.", key="favourite_colour")
    probe = mem.embedder.embed_documents([old.embed_text])[0]
    assert top(mem, "alice", probe, 1)[0][0] == old.id
    new = alice.remember("The user's favourite colour is blue.", key="favourite_colour")
    ids = [h[0] for h in top(mem, "alice", probe, 60)]
    assert old.id not in ids and new.id in ids  # superseded: gone from the index, not just filtered
    rows = mem.store.vectors._conn.execute("SELECT count(*) FROM vec_facts").fetchone()[0]
    assert rows == 51
    mem.close()


def _write_from_another_process(path, text):
    from archivist.clock import FixedClock

    m = open_mem(path, FixedClock("2026-06-01T12:00:00Z"), "sqlite-vec")
    m.scope(user="alice").remember(text)
    m.close()


@needs_vec
def test_a_write_by_another_process_is_seen(tmp_path, clock):
    path = tmp_path / "m.db"
    mem = open_mem(path, clock, "sqlite-vec")
    fill(mem, users=("alice",), n=30)
    probe = queries(1)[0]
    before = top(mem, "alice", probe, 5)  # the index is now built and at the current version
    text = "A fact written by a different process."
    p = multiprocessing.get_context("spawn").Process(target=_write_from_another_process, args=(str(path), text))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    written = [f for f in mem.scope(user="alice").facts() if f.content == text]
    assert len(written) == 1
    target = mem.embedder.embed_documents([written[0].embed_text])[0]
    hit_id, score = top(mem, "alice", target, 1)[0]
    assert hit_id == written[0].id and score > 0.999
    assert top(mem, "alice", probe, 5) != [] and len(before) == 5
    mem.close()


@needs_vec
def test_a_rolled_back_write_leaves_the_index_untouched(tmp_path, clock):
    mem = open_mem(tmp_path / "m.db", clock, "sqlite-vec")
    alice = mem.scope(user="alice")
    fill(mem, users=("alice",), n=20)
    probe = queries(1)[0]
    before = top(mem, "alice", probe, 25)
    fact = alice.remember("This fact's vector is written inside a transaction that fails.")
    vector = mem.embedder.embed_documents(["something else entirely"])[0]
    with pytest.raises(RuntimeError):
        with mem.store.transaction():
            mem.store.put_vectors(mem.embedder.name, mem.embedder.dim, [(fact, vector)])
            raise RuntimeError("boom")
    after = top(mem, "alice", mem.embedder.embed_documents([fact.embed_text])[0], 1)
    assert after[0][0] == fact.id and after[0][1] > 0.999  # the original vector, not the rolled-back one
    assert len(before) == 20 and top(mem, "alice", probe, 25)[1:] != []
    mem.close()


@needs_vec
def test_expired_facts_are_skipped_and_large_k_falls_back(tmp_path, clock):
    mem = open_mem(tmp_path / "m.db", clock, "sqlite-vec")
    alice = mem.scope(user="alice")
    fill(mem, users=("alice",), n=30)
    short = alice.remember("This fact expires tomorrow.", valid_until=clock.now() + timedelta(days=1))
    probe = mem.embedder.embed_documents([short.embed_text])[0]
    assert top(mem, "alice", probe, 1)[0][0] == short.id
    clock.advance(days=2)
    assert short.id not in [h[0] for h in top(mem, "alice", probe, 40)]
    assert len(top(mem, "alice", probe, SqliteVecIndex.MAX_K + 1)) == 30
    mem.close()


@needs_vec
def test_a_new_model_rebuilds_the_sidecar_and_a_lost_sidecar_is_rebuilt(tmp_path, clock):
    path = tmp_path / "m.db"
    mem = open_mem(path, clock, "sqlite-vec")
    fill(mem, users=("alice",), n=25)
    mem.close()
    mem = Memory(SQLiteStore(path, vector_index="sqlite-vec"), clock=clock)
    mem.embedder = HashEmbedder("hash-16", 16)  # a model change, as `archivist reindex --vectors` does it
    mem.reindex(vectors=True)
    hits = top(mem, "alice", queries(1, dim=16)[0], 5)
    assert len(hits) == 5
    mem.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"m.db-vec{suffix}").unlink(missing_ok=True)
    assert sidecar_path(str(path)) == str(path) + "-vec"
    mem = open_mem(path, clock, "sqlite-vec", embedder=HashEmbedder("hash-16", 16))
    assert top(mem, "alice", queries(1, dim=16)[0], 5) == hits
    mem.close()


def test_numpy_index_keeps_recent_scopes_within_its_byte_budget(tmp_path, clock):
    index = NumpyIndex(max_bytes=150 * (48 * 4 + 8))  # room for 150 vectors
    mem = Memory(SQLiteStore(tmp_path / "m.db", vector_index=index), clock=clock, embedder=HashEmbedder())
    fill(mem, users=("alice", "bob", "carol"), n=100)
    probe = queries(1)[0]
    expected = {u: top(mem, u, probe, 5) for u in ("alice", "bob", "carol")}
    assert index.cached_bytes <= index.max_bytes and list(index._scopes) == [3]  # only carol's stays
    assert {u: top(mem, u, probe, 5) for u in ("alice", "bob", "carol")} == expected  # evicted ones reload
    mem.close()


def test_auto_is_numpy_and_unknown_names_are_refused(tmp_path):
    from archivist.errors import InvalidInput

    store = SQLiteStore(tmp_path / "m.db")
    assert isinstance(store.vectors, NumpyIndex)
    store.close()
    with pytest.raises(InvalidInput, match="unknown vector index"):
        SQLiteStore(tmp_path / "n.db", vector_index="faiss")


@needs_vec
def test_forgetting_drops_the_sidecar_vectors_and_search_rebuilds(tmp_path, clock):
    mem = open_mem(tmp_path / "m.db", clock, "sqlite-vec")
    alice = mem.scope(user="alice")
    fill(mem, users=("alice", "bob"), n=20)
    gone = alice.facts()[0]
    probe = mem.embedder.embed_documents([gone.embed_text])[0]
    assert top(mem, "alice", probe, 1)[0][0] == gone.id
    alice.forget(gone.id)
    conn = mem.store.vectors._conn
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'vec_facts'").fetchone()[0] == 0
    hits = top(mem, "alice", probe, 25)
    assert len(hits) == 19 and gone.id not in [h[0] for h in hits]
    assert conn.execute("SELECT count(*) FROM vec_facts").fetchone()[0] == 19  # rebuilt for alice only so far
    mem.close()


def clustered(n, dim=48, groups=40, seed=3):
    """Unit vectors around ``groups`` centres: the shape real embeddings have."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((groups, dim)).astype(np.float32)
    m = centres[rng.integers(0, groups, n)] + 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_a_large_scope_is_grouped_and_finds_what_exact_search_finds():
    matrix = clustered(3_000)
    seqs = np.arange(10, 3_010, dtype=np.int64)
    load = lambda: (1, seqs, matrix)
    grouped, exact = NumpyIndex(exact_below=1_000, probe_share=0.12), NumpyIndex(exact_below=None)
    probes = clustered(60, seed=4)
    recall = [len({s for s, _ in grouped.top_k(1, 1, load, q, 10)} & {s for s, _ in exact.top_k(1, 1, load, q, 10)})
              / 10 for q in probes]
    assert grouped._scopes[1].clusters is not None and exact._scopes[1].clusters is None
    assert np.mean(recall) >= 0.95, np.mean(recall)
    for i in range(0, 3_000, 97):  # a stored vector finds itself first, with its own cosine
        seq, score = grouped.top_k(1, 1, load, matrix[i], 1)[0]
        assert seq == seqs[i] and score == pytest.approx(1.0, abs=1e-5)
    # more hits asked for than the nearest groups hold: the scan widens, every row can come back
    everything = grouped.top_k(1, 1, load, probes[0], 5_000)
    assert sorted(s for s, _ in everything) == list(seqs)
    assert [s for s, _ in everything[:50]] == [s for s, _ in exact.top_k(1, 1, load, probes[0], 50)]


def test_a_grouped_scope_takes_this_process_writes_without_reloading(tmp_path, clock):
    index = NumpyIndex(exact_below=300, probe_share=0.1)
    mem = Memory(SQLiteStore(tmp_path / "m.db", vector_index=index), clock=clock, embedder=HashEmbedder())
    alice = mem.scope(user="alice")
    fill(mem, users=("alice",), n=400)
    old = alice.remember("The user's favourite colour is green.", key="favourite_colour")
    top(mem, "alice", queries(1)[0], 5)
    (scope_id, loaded), = index._scopes.items()
    assert loaded.clusters is not None
    new = alice.remember("The user's favourite colour is blue.", key="favourite_colour")
    added = alice.remember("A fact written after the scope was grouped.")
    cached = index._scopes[scope_id]
    assert cached.matrix is loaded.matrix and cached is not loaded  # applied, not reloaded
    vector_of = lambda fact: mem.embedder.embed_documents([fact.embed_text])[0]
    assert top(mem, "alice", vector_of(added), 1)[0][0] == added.id
    assert top(mem, "alice", vector_of(new), 1)[0][0] == new.id
    assert old.id not in [h[0] for h in top(mem, "alice", vector_of(old), 500)]  # superseded: never returned
    loaded_fact = next(f for f in alice.facts() if f.id not in (added.id, new.id))
    for gone in (added, loaded_fact):  # one written after the load (in the tail), one loaded
        alice.forget(gone.id)
        cached = index._scopes[scope_id]  # kept: the forgotten row is blanked in place, not reloaded
        assert cached.matrix is loaded.matrix
        held = np.vstack([cached.matrix, *cached.tail.values()])
        assert not np.any(np.all(np.isclose(held, vector_of(gone), atol=1e-6), axis=1))  # no copy of its vector
        assert not np.any(np.all(np.isclose(loaded.matrix, vector_of(gone), atol=1e-6), axis=1))
        assert gone.id not in [h[0] for h in top(mem, "alice", vector_of(gone), 500)]
    mem.close()


def test_many_writes_after_a_load_make_the_scope_reload(tmp_path, clock):
    index = NumpyIndex(exact_below=None)
    mem = Memory(SQLiteStore(tmp_path / "m.db", vector_index=index), clock=clock, embedder=HashEmbedder())
    fill(mem, users=("alice",), n=20)
    top(mem, "alice", queries(1)[0], 5)
    (scope_id, _), = index._scopes.items()
    mem.scope(user="alice").remember_many([{"content": f"later fact {i} on subject {i % 7}"} for i in range(1_100)],
                                          dedupe=False)
    assert scope_id not in index._scopes  # more written since the load than is worth scanning apart
    assert len(top(mem, "alice", queries(1)[0], 2_000)) == 1_120
    assert index._scopes[scope_id].tail == {}
    mem.close()


def test_exact_is_a_choice(tmp_path):
    store = SQLiteStore(tmp_path / "m.db", vector_index="exact")
    assert isinstance(store.vectors, NumpyIndex) and store.vectors.exact_below is None
    store.close()


def test_an_empty_scope_answers_nothing_whatever_the_index():
    empty = lambda: (0, np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))  # noqa: E731 - no model yet
    for index in (NumpyIndex(), NumpyIndex(exact_below=None), NumpyIndex(exact_below=0)):
        assert index.top_k(1, 0, empty, queries(1)[0], 5) == []


def _two_handles(tmp_path, clock):
    path = tmp_path / "m.db"
    return open_mem(path, clock, "numpy"), open_mem(path, clock, "numpy")


def test_a_forget_by_another_handle_drops_the_cached_vectors_without_a_search(tmp_path, clock):
    """Each process of a server has its own index: a user forgotten through one must not
    stay in another's memory until that one happens to search the user again."""
    import time

    forgetter, holder = _two_handles(tmp_path, clock)
    fill(forgetter, users=("alice", "bob"), n=30)
    top(holder, "alice", queries(1)[0], 5)
    alice_scope = holder.store.vector_store.scopes.id(holder.scope(user="alice").identity)
    assert alice_scope in holder.store.vectors.cached_versions()
    forgetter.forget_user("default", "alice")
    deadline = time.monotonic() + 30
    while alice_scope in holder.store.vectors.cached_versions() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alice_scope not in holder.store.vectors.cached_versions()
    forgetter.close()
    holder.close()


def test_a_search_of_any_scope_drops_a_scope_another_handle_forgot_from(tmp_path, clock):
    forgetter, holder = _two_handles(tmp_path, clock)
    fill(forgetter, users=("alice", "bob"), n=30)
    top(holder, "alice", queries(1)[0], 5)
    (alice_scope, _), = holder.store.vectors.cached_versions().items()
    victim = forgetter.scope(user="alice").facts()[0]
    forgetter.scope(user="alice").forget(victim.id)
    top(holder, "bob", queries(1)[0], 5)
    assert alice_scope not in holder.store.vectors.cached_versions()
    assert victim.id not in [h[0] for h in top(holder, "alice", queries(1)[0], 100)]
    forgetter.close()
    holder.close()


def test_a_scope_id_given_again_never_answers_from_the_forgotten_users_vectors(tmp_path, clock):
    forgetter, holder = _two_handles(tmp_path, clock)
    fill(forgetter, users=("alice", "bob"), n=10)
    bob = forgetter.scope(user="bob")
    bob_scope = holder.store.vector_store.scopes.id(bob.identity)
    top(holder, "bob", queries(1)[0], 5)
    holder.store.vector_store.sweep = lambda: None  # only the version may tell the two users apart here
    forgetter.forget_user("default", "bob")
    carol = forgetter.scope(user="carol")
    fact = carol.remember("Carol keeps bees on the roof of her building.")
    assert holder.store.vector_store.scopes.id(carol.identity) == bob_scope  # the id is given again
    vector = holder.embedder.embed_documents([fact.embed_text])[0]
    hits = top(holder, "carol", vector, 5)
    assert hits[0][0] == fact.id and hits[0][1] > 0.999
    forgetter.close()
    holder.close()


def test_a_scope_searched_inside_a_rolled_back_transaction_is_not_kept_at_its_version(tmp_path, clock):
    """A search inside a transaction sees the transaction's own writes; once it rolls back
    another handle's commit can reach the same version number with other vectors."""
    writer, other = _two_handles(tmp_path, clock)
    fill(writer, users=("alice",), n=20)
    alice = writer.scope(user="alice")
    with pytest.raises(RuntimeError), writer.store.transaction():
        alice.remember("A fact written inside a transaction that fails.")
        top(writer, "alice", queries(1)[0], 5)
        raise RuntimeError("boom")
    kept = other.scope(user="alice").remember("Walruses rest on the ice floe near the harbour.")
    vector = writer.embedder.embed_documents([kept.embed_text])[0]
    hits = top(writer, "alice", vector, 3)
    assert hits[0][0] == kept.id and hits[0][1] > 0.999
    writer.close()
    other.close()
