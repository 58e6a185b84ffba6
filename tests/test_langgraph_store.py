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
    hits = s.search(("alice",), query="green tea")
    assert [h.key for h in hits] == ["m1"] and hits[0].score > 0
    assert [h.key for h in s.search(("alice", "memories"), query="爬山")] == ["m3"]
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
    hits = s.search(("alice",), query="note number 3 about topic 3", limit=10)
    assert hits[0].key == "n3" and len(hits) == 10
    only_vectors = s.search(("alice",), query="zzz qqq", limit=10)
    assert len(only_vectors) == 10  # no keyword matches: the vector ranking alone orders them
    assert s.search(("alice",), query="zzz qqq", limit=10)[0].key == only_vectors[0].key
    mem.close()
    assert ArchivistStore(Memory(SQLiteStore(db_path), clock=clock)).search(("alice",), query="zzz qqq") == []
