"""Keyword search: jieba segmentation for Chinese, stemming for English, stopwords
ignored, any text is a safe query, better matches first, and a rebuilt index gives
the same results."""

from __future__ import annotations

__all__ = [
    "test_chinese_is_found_by_its_words",
    "test_english_is_stemmed_and_stopwords_ignored",
    "test_facts_holding_more_query_terms_rank_first",
    "test_any_text_is_a_safe_query",
    "test_reindex_gives_identical_results",
    "test_k_bounds_the_results",
]

FACTS = [
    "用户偏好用中文解释技术问题。",
    "The user deploys with Kubernetes on weekdays.",
    "The user is running payment services in Go.",
    "用户的数据库是 PostgreSQL 16。",
    "The user's team reviews database migrations on Fridays.",
]


def _seed(mem):
    s = mem.scope(user="alice")
    report = s.remember_many([{"content": c} for c in FACTS])
    return s, {f.content: f.id for f in report.saved}


def test_chinese_is_found_by_its_words(backend):
    with backend.memory() as mem:
        s, ids = _seed(mem)
        assert [h.fact.id for h in s.search("中文")] == [ids[FACTS[0]]]
        assert [h.fact.id for h in s.search("数据库用的什么")][0] == ids[FACTS[3]]
        assert s.search("北京天气") == []


def test_english_is_stemmed_and_stopwords_ignored(backend):
    with backend.memory() as mem:
        s, ids = _seed(mem)
        assert [h.fact.id for h in s.search("deploying")] == [ids[FACTS[1]]]
        assert [h.fact.id for h in s.search("Who runs the payments?")] == [ids[FACTS[2]]]
        assert s.search("the of and") == [] or all("the" in h.fact.content.lower() for h in s.search("the of and"))


def test_facts_holding_more_query_terms_rank_first(backend):
    with backend.memory() as mem:
        s, ids = _seed(mem)
        hits = [h.fact.id for h in s.search("database migrations PostgreSQL reviews", k=5)]
        assert hits[0] == ids[FACTS[4]]  # three of the four terms
        assert set(hits) == {ids[FACTS[3]], ids[FACTS[4]]}


def test_any_text_is_a_safe_query(backend):
    with backend.memory() as mem:
        s, _ = _seed(mem)
        for query in ['"unbalanced', "a OR b NOT c NEAR(d e)", "col:value*", "^(){}[]!&|<->:*'\\", "\x00\x1f",
                      "' OR 1=1; DROP TABLE facts; --", "中文 AND", "​", "x" * 5000]:
            s.search(query)  # never raises
        assert s.search("中文")  # and the store still answers


def test_reindex_gives_identical_results(backend):
    with backend.memory() as mem:
        s, _ = _seed(mem)
        queries = ["中文", "kubernetes deploy", "payments", "数据库", "PostgreSQL", "database"]
        before = {q: [h.fact.id for h in s.search(q, k=10)] for q in queries}
        assert mem.reindex() == len(FACTS)
        assert {q: [h.fact.id for h in s.search(q, k=10)] for q in queries} == before


def test_k_bounds_the_results(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": f"Project note {i}: the quokka service uses port {8000 + i}."} for i in range(12)])
        assert len(s.search("quokka", k=5)) == 5
        assert len(s.search("quokka", k=50)) == 12
