"""What LangGraph's own store suites expect of a BaseStore, checked on ArchivistStore
over both backends: LangGraph's ``index=``/``ttl=`` settings, per-put indexing, scores
that are similarities, TTL sweeping, InMemoryStore's filters, and the archivist rules
on top (content policy, whole-batch checks, tenant isolation)."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

pytest.importorskip("langgraph.store.base", reason="the langchain extra is not installed (pip install '.[langchain]')")

from langchain_core.embeddings import Embeddings  # noqa: E402
from langgraph.store.base import PutOp, SearchOp  # noqa: E402

from archivist import Memory  # noqa: E402
from archivist.errors import InvalidInput, WriteRejected  # noqa: E402
from archivist.integrations.langgraph_store import ArchivistStore, AsyncArchivistStore  # noqa: E402
from archivist.testing.embedders import HashEmbedder  # noqa: E402


class LetterCounts(Embeddings):
    """Counts of a–z and digits: equal texts give similarity 1, shared letters raise it."""

    dims = 36

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def _one(self, text: str) -> list[float]:
        v = np.zeros(self.dims)
        for ch in text.lower():
            if "a" <= ch <= "z":
                v[ord(ch) - 97] += 1
            elif "0" <= ch <= "9":
                v[26 + ord(ch) - 48] += 1
        return v.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


@pytest.fixture
def open_store(store_target, clock):
    opened: list[Memory] = []

    def make(**kwargs):
        mem = Memory.open(store_target, clock=clock)
        opened.append(mem)
        return ArchivistStore(mem, **kwargs)

    yield make
    for mem in opened:
        mem.close()


# -- index= ---------------------------------------------------------------------------

def test_a_langchain_embeddings_index_scores_by_cosine_similarity(open_store):
    emb = LetterCounts()
    s = open_store(index={"dims": LetterCounts.dims, "embed": emb, "fields": ["text"]})
    s.put(("u", "docs"), "a", {"text": "apples and oranges"})
    s.put(("u", "docs"), "b", {"text": "zebra quiz"})
    s.put(("u", "docs"), "c", {"text": "apples"})
    hits = s.search(("u",), query="apples")
    assert [h.key for h in hits] == ["c", "a", "b"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert 0 < hits[2].score < hits[1].score < 1.0
    assert emb.calls and all(len(batch) == 1 for batch in emb.calls)  # embedded at put time, one text each


def test_an_embedding_function_and_an_archivist_embedder_both_index(open_store):
    letters = LetterCounts()
    s = open_store(index={"dims": 36, "embed": lambda texts: [letters._one(t) for t in texts]})
    s.put(("u", "n"), "k", {"text": "hello"})
    assert s.search(("u",), query='{"text": "hello"}')[0].score == pytest.approx(1.0, abs=1e-6)
    h = open_store(index={"dims": 48, "embed": HashEmbedder()})
    h.put(("v", "n"), "k", {"text": "hello"})
    assert h.search(("v",), query="anything")[0].score is not None


def test_an_async_only_embedding_function_works_through_the_async_api(open_store):
    letters = LetterCounts()

    async def embed(texts):
        return [letters._one(t) for t in texts]

    s = open_store(index={"dims": 36, "embed": embed, "fields": ["text"]})

    async def go():
        await s.aput(("u", "n"), "k", {"text": "kiwi"})
        await s.aput(("u", "n"), "j", {"text": "banana"})
        return await s.asearch(("u",), query="kiwi")

    hits = asyncio.run(go())
    assert hits[0].key == "k" and hits[0].score == pytest.approx(1.0, abs=1e-6)


def test_bad_index_settings_are_refused_with_the_reason(open_store):
    with pytest.raises(InvalidInput, match="needs 'embed'"):
        open_store(index={"dims": 3})
    with pytest.raises(InvalidInput, match="unknown index setting"):
        open_store(index={"dims": 3, "embed": LetterCounts(), "feilds": ["x"]})
    with pytest.raises(InvalidInput, match="positive integer"):
        open_store(index={"dims": 0, "embed": LetterCounts()})
    with pytest.raises(InvalidInput, match="cosine, inner_product, l2"):
        open_store(index={"dims": 36, "embed": LetterCounts(), "distance_type": "hamming"})
    with pytest.raises(InvalidInput, match="not both"):
        open_store(index={"dims": 36, "embed": LetterCounts(), "fields": ["a"], "text_fields": ["b"]})
    s = open_store(index={"dims": 12, "embed": LetterCounts()})  # the embedder gives 36
    with pytest.raises(InvalidInput, match="36 dimensions"):
        s.put(("u", "n"), "k", {"text": "x"})
    assert s.get(("u", "n"), "k") is None


def test_a_put_can_choose_its_fields_or_stay_unindexed(open_store):
    emb = LetterCounts()
    s = open_store(index={"dims": 36, "embed": emb, "fields": ["body"]})
    s.put(("u", "n"), "own-field", {"title": "xylophone", "body": "qqqq"}, index=["title"])
    s.put(("u", "n"), "default", {"title": "qqqq", "body": "xylophone"})
    s.put(("u", "n"), "none", {"title": "xylophone", "body": "xylophone"}, index=False)
    hits = s.search(("u",), query="xylophone")
    assert {h.key for h in hits[:2]} == {"own-field", "default"} and hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert hits[2].key == "none" and hits[2].score is None  # unindexed items come last, unscored
    assert ["xylophone"] in emb.calls and all("xylophone" not in b or len(b) == 1 for b in emb.calls)


def test_list_fields_index_every_element_and_the_best_one_scores(open_store):
    s = open_store(index={"dims": 36, "embed": LetterCounts(), "fields": ["tags[*]"]})
    s.put(("u", "n"), "k", {"tags": ["mmmm", "zzzz"]})
    s.put(("u", "n"), "j", {"tags": ["mzmz"]})
    hits = s.search(("u",), query="zzzz")
    assert hits[0].key == "k" and hits[0].score == pytest.approx(1.0, abs=1e-6) and hits[1].score < 1.0


def test_the_memorys_embedder_indexes_whole_values_when_no_index_is_given(store_target, clock):
    mem = Memory.open(store_target, clock=clock, embedder=HashEmbedder())
    try:
        s = ArchivistStore(mem)
        s.put(("u", "n"), "k", {"content": "x"})
        assert s.index_config["fields"] == ["$"] and s.search(("u",), query="x")[0].score is not None
    finally:
        mem.close()


# -- queries without an index --------------------------------------------------------------

def test_without_an_index_a_query_returns_every_item_keyword_matches_first(open_store):
    s = open_store()
    s.put(("u", "n"), "tea", {"content": "green tea in the morning"})
    s.put(("u", "n"), "dog", {"content": "a dog called Pixel"})
    s.put(("u", "n"), "hike", {"content": "周末去爬山"})
    hits = s.search(("u",), query="green tea")
    assert [h.key for h in hits][0] == "tea" and len(hits) == 3 and {h.score for h in hits} == {None}
    assert [h.key for h in s.search(("u",), query="爬山")][0] == "hike"
    assert len(s.search(("u",), query="nothing matches this")) == 3


# -- filters -------------------------------------------------------------------------------

def test_filters_follow_in_memory_store_semantics(open_store):
    s = open_store()
    s.put(("u", "n"), "a", {"kind": "pet", "meta": {"color": "red", "size": 3}, "tags": ["x", "y"], "n": 1})
    s.put(("u", "n"), "b", {"kind": "pet", "meta": {"color": "blue", "size": 9}, "tags": ["x"], "n": 5})
    s.put(("u", "n"), "c", {"kind": "car", "n": "5"})

    def keys(flt):
        return sorted(h.key for h in s.search(("u",), filter=flt))

    assert keys({"kind": "pet"}) == ["a", "b"]
    assert keys({"meta": {"color": "red"}}) == ["a"]  # a nested dict matches field by field
    assert keys({"meta.color": "blue"}) == ["b"]  # a dotted path reaches into objects
    assert keys({"meta.size": {"$gte": 3, "$lt": 9}}) == ["a"]
    assert keys({"tags": ["x", "y"]}) == ["a"]  # lists match whole
    assert keys({"n": {"$gt": 2}}) == ["b"]  # the text "5" is not a number
    assert keys({"n": {"$ne": 1}}) == ["b", "c"]
    assert keys({"missing": None}) == ["a", "b", "c"]
    with pytest.raises(InvalidInput, match="mixes"):
        s.search(("u",), filter={"meta": {"$gt": 1, "color": "red"}})
    with pytest.raises(InvalidInput, match="unsupported filter"):
        s.search(("u",), filter={"n": {"$in": [1]}})


# -- TTL -----------------------------------------------------------------------------------

def test_ttl_zero_expires_at_once_and_none_never(open_store, clock):
    s = open_store()
    s.put(("u", "t"), "zero", {"v": 1}, ttl=0)
    s.put(("u", "t"), "never", {"v": 2}, ttl=None)
    assert s.get(("u", "t"), "zero") is None
    clock.advance(days=3650)
    assert s.get(("u", "t"), "never") is not None


def test_default_ttl_and_refresh_on_read_come_from_the_ttl_setting(open_store, clock):
    s = open_store(ttl={"default_ttl": 10, "refresh_on_read": False})
    s.put(("u", "t"), "k", {"v": 1})
    s.put(("u", "t"), "long", {"v": 1}, ttl=100)
    clock.advance(minutes=6)
    assert s.get(("u", "t"), "k") is not None  # read, but not refreshed
    clock.advance(minutes=6)
    assert s.get(("u", "t"), "k") is None and s.get(("u", "t"), "long") is not None
    r = open_store(ttl={"default_ttl": 10})  # refresh_on_read defaults to True
    r.put(("w", "t"), "k", {"v": 1})
    clock.advance(minutes=6)
    assert r.search(("w",))[0].key == "k"  # a search refreshes too
    clock.advance(minutes=6)
    assert r.get(("w", "t"), "k") is not None


def test_sweep_deletes_expired_items_and_only_them(open_store, clock):
    s = open_store(ttl={"default_ttl": 5})
    for i in range(3):
        s.put(("u", "t"), f"short{i}", {"v": i})
    s.put(("u", "t"), "kept", {"v": 9}, ttl=None)
    clock.advance(minutes=10)
    assert s.sweep_ttl() == 3 and s.sweep_ttl() == 0
    assert [h.key for h in s.search(("u",))] == ["kept"]
    assert asyncio.run(s.asweep_ttl()) == 0


def test_the_background_sweeper_deletes_and_stops(open_store, clock):
    s = open_store(ttl={"default_ttl": 1, "sweep_interval_minutes": 0.002})  # every 0.12 s
    assert open_store().start_ttl_sweeper().done()  # no ttl setting: nothing to sweep
    s.put(("u", "t"), "k", {"v": 1})
    clock.advance(minutes=2)
    rows_left = lambda: len(s.memory.store.graph_items(s.tenant, "", clock.now() - __import__("datetime").timedelta(days=1)))  # noqa: E731
    future = s.start_ttl_sweeper()
    deadline = time.monotonic() + 10
    while rows_left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rows_left() == 0
    assert s.stop_ttl_sweeper(timeout=5) is True and future.done() and s.stop_ttl_sweeper() is True


def test_bad_ttl_settings_are_refused(open_store):
    with pytest.raises(InvalidInput, match="unknown ttl setting"):
        open_store(ttl={"default_tll": 5})
    with pytest.raises(InvalidInput, match="non-negative"):
        open_store(ttl={"default_ttl": -1})


# -- archivist's rules on top ----------------------------------------------------------------

def test_a_refused_value_stops_the_whole_batch_before_it_reaches_the_embedder(open_store):
    emb = LetterCounts()
    s = open_store(index={"dims": 36, "embed": emb, "fields": ["text"]})
    secret = "my password is Tr0ub4dor&3-horse"
    with pytest.raises(WriteRejected):
        s.batch([PutOp(("u", "n"), "ok", {"text": "fine"}), PutOp(("u", "n"), "bad", {"text": secret})])
    assert s.get(("u", "n"), "ok") is None and emb.calls == []
    with pytest.raises(InvalidInput):
        s.batch([PutOp(("u", "n"), "ok", {"text": "fine"}), SearchOp(("u",), {"n": {"$regex": "."}})])
    assert s.get(("u", "n"), "ok") is None


def test_results_in_one_batch_follow_the_op_order(open_store):
    s = open_store()
    s.put(("u", "n"), "k", {"v": 1})
    from langgraph.store.base import GetOp

    got = s.batch([GetOp(("u", "n"), "k"), PutOp(("u", "n"), "k", {"v": 2}), GetOp(("u", "n"), "k"),
                   PutOp(("u", "n"), "k", None), GetOp(("u", "n"), "k")])
    assert got[0].value == {"v": 1} and got[1] is None and got[2].value == {"v": 2} and got[4] is None


def test_adapters_of_two_tenants_share_a_store_and_nothing_else(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    try:
        a = ArchivistStore(mem, tenant="acme", ttl={"default_ttl": 1})
        b = ArchivistStore(mem, tenant="globex")
        a.put(("alice", "n"), "k", {"content": "acme secret plan"})
        b.put(("alice", "n"), "k", {"content": "globex note"}, ttl=1)
        assert b.search(("alice",), query="secret plan")[0].value == {"content": "globex note"}
        assert b.list_namespaces() == [("alice", "n")] and len(a.search(("alice",))) == 1
        clock.advance(minutes=5)
        assert a.sweep_ttl() == 1 and b.sweep_ttl() == 1  # each sweeps its own tenant
    finally:
        mem.close()


def test_each_distance_type_scores_as_langgraphs_stores_do(open_store):
    def store(distance):
        s = open_store(index={"dims": 36, "embed": LetterCounts(), "text_fields": ["t"], "distance_type": distance})
        s.put(("u", distance), "near", {"t": "aab"})
        s.put(("u", distance), "far", {"t": "zzzz"})
        return {h.key: h.score for h in s.search(("u", distance), query="aab")}

    inner, l2, cosine = store("inner_product"), store("l2"), store("cosine")
    assert inner == {"near": pytest.approx(5.0), "far": pytest.approx(0.0)}  # a·a + a·a + b·b
    assert l2["near"] == pytest.approx(0.0, abs=1e-6) and l2["far"] == pytest.approx(-(5 + 16) ** 0.5)
    assert cosine["near"] == pytest.approx(1.0, abs=1e-6) and cosine["far"] == pytest.approx(0.0)


def test_a_namespace_may_be_any_sequence_of_labels_and_filter_keys_are_names(open_store):
    s = open_store()
    s.put(["u", "n"], "k", {"kind": "pet", "meta": {"color": "red"}})
    assert [h.key for h in s.search(["u"])] == ["k"] and s.get(["u", "n"], "k").namespace == ("u", "n")
    assert [h.key for h in s.search(("u",), filter={"meta.color": "red", "种类-x": None})] == ["k"]
    for bad in ("kind'; DROP TABLE store; --", "a b", "$.kind", ""):
        with pytest.raises(InvalidInput, match="Invalid filter key"):
            s.search(("u",), filter={bad: "pet"})
    with pytest.raises(InvalidInput):
        s.put("un", "k", {"v": 1})  # a string is not a namespace


def test_a_title_after_the_word_secret_is_not_taken_for_a_password(open_store):
    s = open_store()
    s.put(("u", "docs"), "k", {"title": "Secret Document", "note": "Top Secret Plans for the party"})
    assert s.get(("u", "docs"), "k").value["title"] == "Secret Document"
    with pytest.raises(WriteRejected):
        s.put(("u", "docs"), "p", {"note": "my password is Sunflower"})


def test_the_async_store_offers_langgraphs_async_ttl_interface(store_target, clock):
    mem = Memory.open(store_target, clock=clock)

    async def go():
        async with AsyncArchivistStore(mem, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.002}) as s:
            await s.aput(("u", "t"), "k", {"v": 1})
            clock.advance(minutes=2)
            assert await s.sweep_ttl() == 1
            await s.aput(("u", "t"), "j", {"v": 2})
            clock.advance(minutes=2)
            task = await s.start_ttl_sweeper()
            for _ in range(200):
                if not s.memory.store.graph_items(s.tenant, "", clock.now() - __import__("datetime").timedelta(days=1)):
                    break
                await asyncio.sleep(0.05)
            assert await s.stop_ttl_sweeper(timeout=5) is True
            await asyncio.wait_for(task, 5)
            return s

    s = asyncio.run(go())
    assert s._sweeper is None and s.memory.store.graph_items(s.tenant, "", clock.now()) == []
    mem.close()


def test_the_sweeper_stops_when_its_memory_is_closed(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    s = ArchivistStore(mem, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.001})
    future = s.start_ttl_sweeper()
    mem.close()
    assert future.result(timeout=10) is None and s.stop_ttl_sweeper(timeout=5) is True


# -- namespaces, pagination, updates (what LangGraph's suites check of every store) -----------

def test_namespace_prefixes_match_whole_labels_literally(open_store):
    s = open_store()
    for ns in [("a",), ("ab",), ("a", "b"), ("a%",), ("a_",), ("a*",), ("A",), ("a\n",), ("x", "a")]:
        s.put(ns, "k", {"ns": list(ns)})

    def found(prefix):
        return sorted(tuple(h.namespace) for h in s.search(prefix, limit=50))

    assert found(("a",)) == [("a",), ("a", "b")]  # not ("ab",), ("a%",), ("a\n",) ...
    assert found(("a%",)) == [("a%",)] and found(("a_",)) == [("a_",)] and found(("a*",)) == [("a*",)]
    assert found(("A",)) == [("A",)] and found(("a\n",)) == [("a\n",)]
    assert len(found(())) == 9  # an empty prefix is every item
    assert s.list_namespaces(prefix=("a",)) == [("a",), ("a", "b")]
    assert s.list_namespaces(prefix=("a_",)) == [("a_",)]


def test_list_namespaces_pages_and_cuts_at_a_depth(open_store):
    s = open_store()
    for i in range(7):
        s.put(("u", f"n{i}", "leaf"), "k", {"v": i})
    everything = s.list_namespaces()
    assert everything == sorted(everything) and len(everything) == 7
    assert s.list_namespaces(limit=3, offset=2) == everything[2:5]
    assert s.list_namespaces(max_depth=2, limit=100) == [("u", f"n{i}") for i in range(7)]
    assert s.list_namespaces(prefix=("u", "*", "leaf"), limit=2) == everything[:2]
    assert s.list_namespaces(suffix=("leaf",), max_depth=1) == [("u",)]


def test_query_results_page_in_score_order_and_an_update_re_embeds(open_store):
    s = open_store(index={"dims": 36, "embed": LetterCounts(), "fields": ["t"]})
    texts = ["aaaa", "aaab", "aabb", "abbb", "bbbb"]
    for i, t in enumerate(texts):
        s.put(("u", "n"), f"k{i}", {"t": t})
    full = s.search(("u",), query="aaaa", limit=5)
    assert [h.key for h in full] == ["k0", "k1", "k2", "k3", "k4"]
    pages = s.search(("u",), query="aaaa", limit=2) + s.search(("u",), query="aaaa", limit=2, offset=2) \
        + s.search(("u",), query="aaaa", limit=2, offset=4)
    assert [h.key for h in pages] == [h.key for h in full] and [h.score for h in pages] == [h.score for h in full]
    s.put(("u", "n"), "k4", {"t": "aaaa"})  # the update is embedded again
    assert s.search(("u",), query="aaaa", limit=1)[0].score == pytest.approx(1.0, abs=1e-6)
    assert {h.key for h in s.search(("u",), query="aaaa", limit=2)} == {"k0", "k4"}
    assert s.search(("u",), query="", limit=5)[0].score is None  # an empty query ranks nothing


def test_non_ascii_values_and_queries_round_trip(open_store):
    s = open_store()
    value = {"content": "用户喜欢周末爬山 🏔️ — café, naïve, Ελληνικά", "tags": ["中文", "émoji"]}
    s.put(("用户", "记忆"), "键", value)
    assert s.get(("用户", "记忆"), "键").value == value
    assert s.search(("用户",), query="爬山")[0].key == "键"
    assert s.search(("用户",), filter={"tags": ["中文", "émoji"]})[0].key == "键"


def test_concurrent_async_searches_each_get_their_own_answer(open_store):
    s = open_store(index={"dims": 36, "embed": LetterCounts(), "fields": ["t"]})
    for word in ("apple", "kiwi", "mango", "zebra"):
        s.put(("u", "n"), word, {"t": word})

    async def go():
        return await asyncio.gather(*(s.asearch(("u",), query=w, limit=1) for w in ("apple", "kiwi", "mango", "zebra")))

    assert [hits[0].key for hits in asyncio.run(go())] == ["apple", "kiwi", "mango", "zebra"]
