import math
import re

import pytest

from archivist import Memory
from archivist.retrieval.rank import KeywordRanking


def test_chinese_is_segmented_with_jieba(alice):
    alice.remember("用户偏好用中文解释技术问题。", category="preference")
    alice.remember("用户喜欢喝咖啡。")
    assert [h.fact.content for h in alice.search("中文")] == ["用户偏好用中文解释技术问题。"]
    assert [h.fact.content for h in alice.search("技术问题应该怎么解释")] == ["用户偏好用中文解释技术问题。"]


def test_english_uses_stemming_and_ignores_stopwords(alice):
    alice.remember("The user runs integration tests before every release.")
    alice.remember("The user likes tea.")
    assert [h.fact.content for h in alice.search("running the tests")][:1] == [
        "The user runs integration tests before every release."
    ]
    assert alice.search("the") != []  # all-stopword queries still search


def test_mixed_language_query(alice):
    alice.remember("用户在用 PostgreSQL 做多租户隔离。")
    assert alice.search("postgresql 隔离")[0].fact.content == "用户在用 PostgreSQL 做多租户隔离。"


def test_score_formula_with_injected_clock(mem, clock):
    s = mem.scope(user="alice")
    old = s.remember("The user prefers dark roast coffee.", confidence=0.8)
    clock.advance(days=100)
    fresh = s.remember("The user prefers green tea over coffee.", confidence=0.8)
    hits = {h.fact.id: h for h in s.search("coffee", k=5)}
    e_old, e_new = hits[old.id].explanation, hits[fresh.id].explanation
    assert e_new["decay"] == 1.0
    assert e_old["decay"] == pytest.approx(math.exp(-0.01 * 70))
    for e in (e_old, e_new):
        assert e["final"] == pytest.approx(-e["bm25"] * e["decay"] + 0.2 * 0.8)
    assert hits[old.id].score == e_old["final"]


def test_decay_boundary_is_thirty_days():
    r = KeywordRanking()
    from datetime import timedelta

    from archivist import FixedClock

    now = FixedClock("2026-03-01T00:00:00Z").now()

    class F:
        last_confirmed_at = now - timedelta(days=29, hours=23)

    assert r.decay(F, now) == 1.0
    F.last_confirmed_at = now - timedelta(days=31)
    assert r.decay(F, now) == pytest.approx(math.exp(-0.01))


def test_expiry_is_checked_at_read_time(mem, clock):
    s = mem.scope(user="alice")
    s.remember("The user is on call this week.", valid_until="2026-01-08T00:00:00Z")
    assert s.search("call")
    assert "on call" in s.render().text
    clock.set("2026-01-08T00:00:01Z")
    assert s.search("call") == []
    assert "on call" not in s.render().text
    assert s.facts() == [] and len(s.facts(include_expired=True)) == 1


def test_pool_is_two_k_then_resorted(db_path, clock):
    calls = []
    with Memory.open(db_path, clock=clock) as mem:
        original = mem.store.keyword_search

        def spy(identity, terms, *, limit, live_at, **options):
            calls.append(limit)
            return original(identity, terms, limit=limit, live_at=live_at, **options)

        mem.store.keyword_search = spy
        s = mem.scope(user="alice")
        s.remember_many([{"content": f"apple fact {i}", "confidence": 0.7 + i / 100} for i in range(20)])
        calls.clear()
        hits = s.search("apple", k=3, kinds=["fact"])
        assert calls == [6] and len(hits) == 3
        calls.clear()  # with episodes too, the pool is that of k + min(k, 10): a fact takes its turn's place
        assert len(s.search("apple", k=3)) == 3 and calls == [12]
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_other_scopes_never_leak(mem):
    mem.scope(user="alice").remember("alice secret marmalade")
    mem.scope(user="alice", agent="other").remember("agent-two marmalade")
    mem.scope(tenant="t2", user="alice").remember("tenant-two marmalade")
    assert [h.fact.content for h in mem.scope(user="alice").search("marmalade")] == ["alice secret marmalade"]
    assert mem.scope(user="bob").search("marmalade") == []


def test_memory_search_json_is_bounded(alice, mem):
    import json

    for i in range(12):
        alice.remember(f"The user collects vintage synthesizer model {i} " + "with long notes " * 20)
    out = json.loads(alice.memory_search("synthesizer", limit=50))
    assert 0 < len(out) <= 10
    assert set(out[0]) == {"id", "kind", "content", "category", "confidence", "score", "date"}  # facts: no said_by
    small = alice.memory_search("synthesizer", limit=10, budget=200)
    assert mem.token_counter.count(small) <= 200
    assert alice.memory_search("") == "[]"


def planned_scope(mem, budget=14):
    """54 facts: 8 hold "notebook", 6 hold "bonsai"; at most ``budget`` are scored."""
    mem.store.keyword_index.scorer.budget = budget
    s = mem.scope(user="alice")
    rows = [{"content": f"The user likes topic {i}."} for i in range(40)]
    rows += [{"content": f"The user keeps notebook {i} about gardening."} for i in range(8)]
    rows += [
        {"content": "The user grows bonsai trees."},
        {"content": "The user grows bonsai trees in a notebook-sized pot."},
        {"content": "The user dislikes bonsai shows."},
        {"content": "The user bought a bonsai saw."},
        {"content": "The user's bonsai is a juniper."},
        {"content": "The user waters the bonsai daily."},
    ]
    s.remember_many(rows)
    return s


def fts5_bm25(mem, terms):
    """FTS5's own bm25() for each indexed fact id (whole-table statistics)."""
    from archivist.index.text import match_expression
    from archivist.storage.sqlite import SEQ_MASK

    rows = mem.store.db.conn.execute(
        "SELECT f.id, bm25(facts_fts) FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid & ? "
        "WHERE facts_fts MATCH ?", (SEQ_MASK, match_expression(terms))).fetchall()
    return dict(rows)


def test_common_terms_are_left_out_of_the_query_but_still_count(mem):
    s = planned_scope(mem)
    matches = mem.store.keyword_search(s.identity, ["notebook", "bonsai"], limit=6, live_at=mem.clock.now())
    assert len(matches) == 6
    assert all(m.terms_used == ("bonsai",) and m.terms_dropped == ("notebook",) for m in matches)
    hits = s.search("notebook bonsai", k=3)
    assert hits[0].fact.content == "The user grows bonsai trees in a notebook-sized pot."
    assert hits[0].explanation["common_term_bonus"] > 0
    assert hits[0].explanation["relevance"] == pytest.approx(-hits[0].explanation["bm25"] + hits[0].explanation["common_term_bonus"])


def test_with_room_for_every_candidate_scores_equal_fts5_bm25_on_a_one_scope_store(mem):
    """One scope: its statistics are the table's, so the scores must be FTS5's own."""
    s = planned_scope(mem, budget=2000)
    matches = mem.store.keyword_search(s.identity, ["notebook", "bonsai", "gardening"], limit=50, live_at=mem.clock.now())
    truth = fts5_bm25(mem, ["notebook", "bonsai", "gardening"])
    assert len(matches) == len(truth) == 14
    assert all(m.bonus == 0 and m.terms_dropped == () for m in matches)
    for m in matches:
        assert m.bm25 == pytest.approx(truth[m.fact.id], rel=1e-9)
    assert [m.bm25 for m in matches] == sorted(m.bm25 for m in matches)


def test_a_small_budget_keeps_the_exact_score_of_every_candidate(mem):
    s = planned_scope(mem, budget=7)
    truth = fts5_bm25(mem, ["notebook", "bonsai"])
    for m in mem.store.keyword_search(s.identity, ["notebook", "bonsai"], limit=7, live_at=mem.clock.now()):
        assert m.bm25 - m.bonus == pytest.approx(truth[m.fact.id], rel=1e-9)


def test_planning_stems_like_the_index(mem):
    tokens = mem.store.keyword_index.scorer.tokens(["running", "中文 解释", "Don't", "run running ran"])
    assert tokens == [["run"], ["中文", "解释"], ["don", "t"], ["ran", "run", "run"]]


@pytest.mark.parametrize("alice_facts", [5, 20, 60])
def test_scoped_recall_uses_the_scopes_own_statistics(mem, alice_facts):
    """Another user's facts change neither alice's hits nor their scores."""
    from archivist import Memory

    def run(m):
        alice = m.scope(user="alice")
        alice.remember_many([{"content": f"apple pie recipe card number {i} with extra words"} for i in range(alice_facts)])
        alice.remember_many([{"content": f"apple crumble {i}"} for i in range(3)])
        # equal scores may come in either order (ties go by fact id, which is random): compare the kind of fact
        return [(re.sub(r"\d+", "#", h.fact.content), h.explanation["bm25"], h.score)
                for h in alice.search("apple crumble recipe", k=5)]

    mem.scope(user="bob").remember_many([{"content": f"apple apple crumble orchard note {i}"} for i in range(40)])
    with_bob = run(mem)
    with Memory.open(mem.store.path + ".alone", clock=mem.clock) as alone:
        alone_hits = run(alone)
    assert alone_hits == with_bob
    assert len(with_bob) == 5 and [b for _, b, _ in with_bob] == sorted(b for _, b, _ in with_bob)


def test_expired_rows_do_not_shrink_the_result(mem, clock):
    s = mem.scope(user="alice")
    s.remember_many([{"content": f"kiwi kiwi kiwi note {i}", "valid_until": "2026-01-02T00:00:00Z"} for i in range(30)])
    s.remember_many([{"content": f"kiwi long note number {i} with many more words in it"} for i in range(5)])
    clock.set("2026-01-03T00:00:00Z")
    assert len(s.search("kiwi", k=5)) == 5


def test_long_queries_keep_their_latest_terms():
    from archivist.index.text import query_terms

    words = [f"word{i}" for i in range(200)]
    terms = query_terms(" ".join(words))
    assert len(terms) == 64 and terms[-1] == "word199" and terms[0] == "word136"


@pytest.mark.parametrize("query, expected", [
    ("Hauptstraße", "Hauptstraße"), ("HAUPTSTRASSE", None), ("İstanbul", "İstanbul"), ("İSTANBUL", "İstanbul"),
    ("istanbul", "İstanbul"), ("ca\u200bfé", "café"), ("cafe", "café"), ("ΣΊΣΥΦΟΣ", "Σίσυφος"), ("ﬁle", "file"),
])
def test_queries_fold_like_the_index(store_target, query, expected):
    """A query is lowercased, not case-folded ("ß" stays "ß", as the index keeps it), loses
    invisible characters as stored text did, and the dot of a lowercased "İ" goes."""
    with Memory.open(store_target) as mem:
        s = mem.scope(user="alice")
        for text in ("Alice lives on Hauptstraße in Berlin.", "Bob moved to İstanbul last year.",
                     "The café opens at nine.", "Σίσυφος is a myth.", "The config file is large."):
            s.remember(text)
        if query == "cafe" and type(mem.store).__name__ == "PostgresStore":
            expected = None  # PostgreSQL's text search keeps diacritics (no unaccent); FTS5 removes them
        found = [h.fact.content for h in s.search(query, k=1, mode="keyword")]
        assert found == [] if expected is None else expected in found[0], found


def test_a_fact_holding_every_term_is_found_when_each_term_is_common(mem):
    """Issue 19 red team: each term alone fills the candidate budget; the facts holding
    both are collected first, so the best match is never left out."""
    mem.store.keyword_index.scorer.budget = 20
    s = mem.scope(user="alice")
    s.remember("The user's apple banana smoothie recipe uses oat milk.")
    s.remember_many([{"content": f"apple note {i}"} for i in range(30)] + [{"content": f"banana note {i}"} for i in range(30)],
                    dedupe=False)
    for query in ("apple banana", "banana apple"):
        assert "smoothie" in s.search(query, k=3, mode="keyword")[0].fact.content


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_k_must_be_a_whole_number_of_hits(alice, k):
    from archivist.errors import InvalidInput

    alice.remember("The user likes tea.")
    with pytest.raises(InvalidInput):
        alice.search("tea", k=k)
