"""Questions that ask for a time prefer facts that say one (issue 20 #3)."""

import pytest

from archivist import Memory
from archivist.retrieval.questions import asks_when, mentions_time
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
