"""Questions that ask for a time prefer facts that say one (issue 20 #3)."""

from datetime import UTC, datetime

import pytest

from archivist import Memory
from archivist.clock import FixedClock
from archivist.retrieval.questions import (asks_for_all, asks_when, fact_periods, mentions_time, only_asks,
                                          question_periods)
from archivist.testing.embedders import HashEmbedder


@pytest.mark.parametrize("question", [
    "When did Caroline go to the support group?", "what year did they move?", "Which day is the party?",
    "How long ago was the trip?", "那个活动是什么时候？", "他哪天回来", "会议在几号", "你们哪一年认识的", "星期几上课？",
])
def test_questions_asking_for_a_time(question):
    assert asks_when(question)


@pytest.mark.parametrize("question", [
    "What did Melanie paint?", "Where does she live?", "Whenever possible, summarise it", "那个活动在哪里？",
    "他喜欢什么运动", "How long is the drive?",
])
def test_questions_not_asking_for_a_time(question):
    assert not asks_when(question)


@pytest.mark.parametrize("text", [
    "I went to a support group yesterday.", "We met on May 7, 2023.", "It was last weekend.", "see you at 3pm",
    "我上周三去了深圳", "活动在10月5号", "去年春节我们回了老家", "The launch is on 2026-05-01.", "next Friday works",
])
def test_texts_that_say_a_time(text):
    assert mentions_time(text)


@pytest.mark.parametrize("text", ["I love painting sunsets.", "她喜欢游泳", "The user prefers tea.", "It lasts seven days."])
def test_texts_that_say_no_time(text):
    assert not mentions_time(text)


def test_a_when_question_puts_the_fact_that_says_a_time_first_among_near_ties(tmp_path):
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        s = mem.scope(user="alice")
        s.remember("Caroline talked about the support group.")
        s.remember("Caroline went to the support group yesterday.")
        when = s.search("When did Caroline go to the support group?", k=2)
        assert "yesterday" in when[0].fact.content
        assert when[0].explanation["dated"] == 1.0 and "dated" in when[1].explanation
        what = s.search("What did Caroline say about the support group?", k=2)
        assert all("dated" not in h.explanation for h in what)


AT = datetime(2024, 6, 10, 9, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize("question, spans", [
    ("What did she do last May?", ["2024-05-01..2024-05-31"]),
    ("Where was she in May 2023?", ["2023-05-01..2023-05-31"]),
    ("What happened on 14 March?", ["2024-03-14"]),
    ("what did we do in 2022", ["2022-01-01..2022-12-31"]),
    ("What is planned for next July?", ["2024-07-01..2024-07-31"]),
    ("What did I do yesterday?", ["2024-06-09"]),
    ("上周三我去了哪里", ["2024-06-05"]),
    ("三月份的体检结果怎么样？", ["2024-03-01..2024-03-31"]),
    ("3月14日那天干嘛了", ["2024-03-14"]),
    ("去年5月去了哪", ["2023-05-01..2023-05-31"]),
    ("十二月去了哪", ["2023-12-01..2023-12-31"]),  # the latest December, not a future one
    ("2023年3月5号我在哪", ["2023-03-05"]),
    ("I may go to the gym", []),  # "may" the verb
    ("What does Caroline like?", []),
])
def test_question_periods(question, spans):
    assert [str(p) for p in question_periods(question, AT)] == spans


def test_a_fact_is_about_the_time_it_names_else_the_day_it_was_said(tmp_path):
    with Memory.open(tmp_path / "m.db") as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": "下个月我要去深圳看无人机展", "created_at": "2024-02-20T10:00:00+00:00"},
                         {"content": "我喜欢看展", "created_at": "2024-02-20T10:00:00+00:00"}])
        by_content = {f.content: f for f in s.facts()}
    assert [str(p) for p in fact_periods(by_content["下个月我要去深圳看无人机展"])] == ["2024-03-01..2024-03-31"]
    assert [str(p) for p in fact_periods(by_content["我喜欢看展"])] == ["2024-02-20"]


def test_a_question_naming_a_time_prefers_facts_about_that_time(tmp_path):
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock("2024-06-10T09:00:00Z")) as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": "我去看了一场话剧。", "created_at": "2024-03-15T10:00:00+00:00"},
                         {"content": "我去看了一场话剧。", "created_at": "2024-05-15T10:00:00+00:00"}]
                        + [{"content": text, "created_at": "2024-04-01T10:00:00+00:00"}
                           for text in ("我养了一只猫", "周末去爬山了", "最近在学吉他", "我喜欢喝绿茶")], dedupe=False)
        hits = s.search("上个月我去看了什么？", k=2)
        assert hits[0].fact.created_at.month == 5
        assert hits[0].explanation["period"] == 1.0 and hits[1].explanation["period"] == 0.0
        hits = s.search("三月份去看了什么？", k=2)
        assert hits[0].fact.created_at.month == 3
        assert all("period" not in h.explanation for h in s.search("我去看了什么？", k=2))


@pytest.mark.parametrize("question", [
    "How many times has Melanie gone to the beach?", "What activities does Melanie partake in?",
    "What books has she read?", "Which one is longer?", "What have Caroline and Melanie both done?",
    "有几个活动在深圳？", "哪个展览持续时间更长？", "我参加过哪些读书会？", "我今年一共去了几次杭州", "杭州和成都哪个更远",
])
def test_questions_that_gather_several_facts(question):
    assert asks_for_all(question)


@pytest.mark.parametrize("question", [
    "What is her name?", "What does she like?", "What was the name of his dog?", "那个展在哪里", "无人机展持续多久？",
])
def test_questions_about_one_fact(question):
    assert not asks_for_all(question)


@pytest.mark.parametrize("text, expected", [
    ("花了多少钱？", True), ("感觉怎么样？", True), ('Mel said, "How was it?"', True),
    ('Caroline said, "Wow! What happened?"', True), ("太好了！你去哪了？", True),
    ('Mel said, "I went camping. How was yours?"', False), ("我去了深圳。", False), ("It was great!", False),
    ("", False),
])
def test_facts_that_only_ask(text, expected):
    assert only_asks(text) is expected


def test_a_fact_that_only_asks_yields_to_one_that_states(tmp_path):
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        s = mem.scope(user="alice")
        s.remember_many([{"content": "油画课花了多少钱？"}, {"content": "油画课花了1800元。"},
                         {"content": "我养了一只猫"}, {"content": "周末去爬山了"}], dedupe=False)
        hits = s.search("油画课花了多少钱", k=2)
        assert hits[0].fact.content == "油画课花了1800元。"
        asking = next(h for h in hits if h.fact.content.endswith("？"))
        assert asking.explanation["only_asks"] == 1.0 and asking.explanation["only_asks_contribution"] < 0
