"""The LangGraph BaseStore adapter over a real archivist store."""

import asyncio

import pytest

pytest.importorskip("langgraph.store.base", reason="the langchain extra is not installed (pip install '.[langchain]')")

from archivist.testing.embedders import HashEmbedder  # noqa: E402

from archivist import Memory  # noqa: E402
from archivist.integrations.langgraph_store import ArchivistStore  # noqa: E402
from archivist.storage.sqlite import SQLiteStore  # noqa: E402


@pytest.fixture
def store(db_path, clock):
    mem = Memory(SQLiteStore(db_path), clock=clock)
    yield ArchivistStore(mem), mem, clock
    mem.close()


def test_put_get_search_list_delete(store):
    s, mem, clock = store
    s.put(("alice", "memories"), "m1", {"content": "Alice drinks green tea every morning.", "kind": "habit"})
    s.put(("alice", "memories"), "m2", {"content": "Alice's dog is called Pixel.", "kind": "pet"})
    s.put(("alice", "memories"), "m3", {"content": "用户喜欢在周末爬山。", "kind": "habit"})
    s.put(("alice", "profile"), "p", {"content": "Backend engineer."})
    s.put(("bob", "memories"), "b1", {"content": "Bob drinks green tea too."})
    item = s.get(("alice", "memories"), "m2")
    assert item.value["content"] == "Alice's dog is called Pixel." and item.namespace == ("alice", "memories")
    hits = s.search(("alice",), query="green tea")  # no embedder: every item, keyword matches first
    assert [h.key for h in hits][0] == "m1" and len(hits) == 4 and {h.score for h in hits} == {None}
    assert [h.key for h in s.search(("alice", "memories"), query="爬山")][0] == "m3"
    assert {h.key for h in s.search(("alice",), filter={"kind": "habit"})} == {"m1", "m3"}
    assert [h.key for h in s.search(("alice",), limit=2, offset=1)] and len(s.search(("alice",))) == 4
    assert s.list_namespaces(prefix=("alice",)) == [("alice", "memories"), ("alice", "profile")]
    assert s.list_namespaces(max_depth=1) == [("alice",), ("bob",)]
    assert s.list_namespaces(suffix=("memories",)) == [("alice", "memories"), ("bob", "memories")]
    s.put(("alice", "memories"), "m2", {"content": "Alice's dog is called Byte."})
    assert s.get(("alice", "memories"), "m2").value["content"].endswith("Byte.")
    s.delete(("alice", "memories"), "m2")
    assert s.get(("alice", "memories"), "m2") is None
    receipt = mem.forget_user("default", "alice")
    assert receipt.counts["graph_items"] == 3 and s.search(("alice",)) == [] and len(s.search(("bob",))) == 1


def test_ttl_and_async(store):
    s, mem, clock = store
    s.put(("alice", "tmp"), "t", {"content": "short lived"}, ttl=60)
    clock.advance(minutes=50)
    assert s.get(("alice", "tmp"), "t", refresh_ttl=True) is not None  # extends to +60 from now
    clock.advance(minutes=50)
    assert s.get(("alice", "tmp"), "t", refresh_ttl=False) is not None
    clock.advance(minutes=20)
    assert s.get(("alice", "tmp"), "t") is None and s.search(("alice",)) == []
    asyncio.run(s.aput(("alice", "x"), "k", {"content": "async"}))
    assert asyncio.run(s.aget(("alice", "x"), "k")).value == {"content": "async"}


def test_query_search_fuses_vectors_when_an_embedder_is_configured(db_path, clock):
    class Symmetric(HashEmbedder):
        def embed_query(self, text):
            return self._one(text)  # a query equal to a document gets that document's vector

    mem = Memory(SQLiteStore(db_path), clock=clock, embedder=Symmetric())
    s = ArchivistStore(mem)
    for i in range(10):
        s.put(("alice", "notes"), f"n{i}", {"content": f"note number {i} about topic {i}"})
    # without index=, the memory's embedder indexes whole values ("$"), as LangGraph's default fields
    hits = s.search(("alice",), query='{"content": "note number 3 about topic 3"}', limit=10)
    assert hits[0].key == "n3" and len(hits) == 10
    only_vectors = s.search(("alice",), query="zzz qqq", limit=10)
    assert len(only_vectors) == 10  # no keyword matches: the vector ranking alone orders them
    assert s.search(("alice",), query="zzz qqq", limit=10)[0].key == only_vectors[0].key
    assert all(-1.0 <= h.score <= 1.0 for h in hits) and hits[0].score > 0.99  # cosine similarity
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    mem.close()
    unindexed = ArchivistStore(Memory(SQLiteStore(db_path), clock=clock)).search(("alice",), query="zzz qqq")
    assert len(unindexed) == 10 and {h.score for h in unindexed} == {None}  # as LangGraph's stores without an index


def test_items_written_before_indexing_existed_are_scored_by_the_configured_fields(db_path, clock):
    import sqlite3

    mem = Memory(SQLiteStore(db_path), clock=clock, embedder=HashEmbedder())
    s = ArchivistStore(mem)
    s.put(("alice", "n"), "old", {"content": "written by an older archivist"})
    s.put(("alice", "n"), "off", {"content": "never indexed"}, index=False)
    mem.close()
    conn = sqlite3.connect(db_path)  # as a schema-12 file left it: no vectors recorded
    conn.execute("UPDATE graph_items SET vector_paths = NULL, vectors = NULL WHERE key = 'old'")
    conn.commit()
    conn.close()
    mem = Memory(SQLiteStore(db_path), clock=clock, embedder=HashEmbedder())
    hits = ArchivistStore(mem).search(("alice",), query="older")
    assert [h.key for h in hits] == ["old", "off"] and hits[0].score is not None and hits[1].score is None
    mem.close()
