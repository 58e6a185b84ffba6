"""Named things read offline from text, and recall that gathers the facts naming them
(archivist.index.entities, issue 20 #2)."""

import pytest

from archivist import Memory
from archivist.index.entities import entities
from archivist.testing.embedders import HashEmbedder


@pytest.mark.parametrize("text, expected", [
    ("What did Melanie paint?", ["Melanie"]),
    ("What is Caroline's identity?", ["Caroline"]),
    ("I loved reading \"Charlotte's Web\" as a kid.", ["Charlotte's Web"]),
    ("Hey Caroline, hope all is good! We went to New York.", ["Caroline", "New York"]),
    ("Bank of America hired me", ["Bank of America"]),
    ("In May I ran", ["May"]),
    ("what did she paint?", []),
    ("有几个活动在深圳？", ["深圳"]),
    ("杭州那次马拉松和成都那次，哪个更远？", ["杭州", "马拉松", "成都"]),
    ("周杰伦演唱会在鸟巢", ["周杰伦", "演唱会"]),
    ("那个drone展多长时间", ["drone"]),
    ("", []),
])
def test_entities(text, expected):
    assert entities(text) == expected


def test_openers_and_pronouns_are_not_names():
    assert entities("Thanks! Yeah, I think so. What do you think? It's great.") == []


def test_the_entities_feature_is_the_share_of_named_things_a_fact_names(tmp_path):
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        s = mem.scope(user="u")
        s.remember_many([{"content": t} for t in (
            "杭州那次马拉松跑了三个半小时，天气很热。", "成都的马拉松路线经过锦江，我跑得比杭州慢。",
            "我最近喜欢喝咖啡。", "周末在家看电影。", "成都的火锅很好吃。", "杭州西湖边的茶很香。")], dedupe=False)
        hits = s.search("杭州那次马拉松和成都那次，哪个更远？", k=2)
        assert {h.fact.content[:2] for h in hits} == {"杭州", "成都"}
        both = next(h for h in hits if h.fact.content.startswith("成都"))
        assert both.explanation["entities"] == 1.0  # names Chengdu, the marathon and Hangzhou
        one = next(h for h in hits if h.fact.content.startswith("杭州"))
        assert one.explanation["entities"] == pytest.approx(2 / 3)
        assert all("entities" not in h.explanation for h in s.search("跑了多久", k=2))
