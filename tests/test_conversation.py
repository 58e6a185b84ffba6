"""Turns of a conversation are indexed with what they need to be found: the turn they
answer, what their pronouns point to, and their speaker (archivist.index.conversation)."""

import pytest

from archivist import Memory
from archivist.index.conversation import Turn, conversation_contexts, points_back, topics
from archivist.pipeline.governance import GovernanceConfig


def contexts(*turns):
    return conversation_contexts([Turn(t, s) for s, t in turns])


def test_a_follow_up_reaches_the_event_named_before_an_acknowledgement():
    ctx = contexts(("user", "下个月我要去深圳参加一个无人机展览。"), ("assistant", "好的，记下了。"),
                   ("user", "它的持续时间是七天。"))
    assert ctx[0] is None
    assert "好的，记下了。" in ctx[2]
    assert "深圳" in ctx[2] and "无人机" in ctx[2]


def test_a_chain_of_follow_ups_keeps_pointing_at_the_same_thing():
    ctx = contexts(("user", "下个月我要去深圳参加一个无人机展览。"), ("user", "那个展在会展中心，门票180。"),
                   ("user", "它的持续时间是七天。"))
    assert "无人机" in ctx[2] and "会展中心" in ctx[2]  # the event, and the turn it follows


def test_a_turn_that_names_something_new_moves_the_subject():
    ctx = contexts(("user", "下个月我要去深圳参加一个无人机展览。"), ("user", "周末和表姐去杭州看了一场话剧。"),
                   ("assistant", "哈哈，太好了"), ("user", "它的持续时间是两个半小时。"))
    assert "话剧" in ctx[3] and "无人机" not in ctx[3]


def test_english_pronouns_and_named_speakers():
    ctx = contexts(("Caroline", "We adopted a puppy named Max last week."), ("Mel", "Sounds great!"),
                   ("Mel", "What breed is he?"))
    assert ctx[0] == "Caroline"  # the speaker, since the text does not say it
    assert ctx[1] == "Mel"  # an acknowledgement of a statement is not indexed with it
    assert "puppy" in ctx[2] and "Max" in ctx[2]


def test_an_answer_is_indexed_with_the_question_and_an_acknowledgement_is_not():
    ctx = contexts(("user", "下周我要去成都看演唱会。"), ("assistant", "和谁一起呀？"), ("user", "和表姐。"),
                   ("assistant", "好的，记下了。"))
    assert "和谁一起呀？" in ctx[2] and "演唱会" in ctx[2]
    assert ctx[3] is None  # found by nothing the user said before it
    ctx = contexts(("Mel", "Where did you go last weekend?"), ("Caroline", "To the Pride parade with friends."))
    assert ctx[1] == "Caroline\nMel: Where did you go last weekend?"


def test_roles_are_not_indexed_as_speakers():
    assert contexts(("user", "Do you like tea?"), ("assistant", "Yes, green tea"))[1] == "Do you like tea?"


def test_points_back_and_topics():
    assert points_back("它的持续时间是七天") and points_back("It lasted a week") and points_back("那边很热")
    assert not points_back("I ran a marathon in Lisbon") and not points_back("我在杭州跑了马拉松")
    assert "Lisbon" in topics("I ran a marathon in Lisbon") and "the" not in topics("the marathon")
    assert "深圳" in topics("下个月我要去深圳") and topics("") == []


@pytest.fixture()
def scope(tmp_path):
    mem = Memory.open(tmp_path / "m.db", governance=GovernanceConfig(
        confidence_threshold=0.0, detect_grants=True, infer_keys=False, detect_projects=False))
    yield mem.scope(tenant="t", user="u")
    mem.close()


def turn(n, text, speaker="user", **extra):
    return {"content": text, "thread_id": "t1", "turn": n, "speaker": speaker, "category": "context", **extra}


def test_remember_many_derives_context_and_search_finds_the_follow_up(scope):
    report = scope.remember_many([turn(0, "下个月我要去深圳参加一个无人机展览。"), turn(1, "好的，记下了。", "assistant"),
                                  turn(2, "它的持续时间是七天。"), turn(3, "我的猫最近胃口不太好。")], dedupe=False)
    assert not report.rejected
    hits = scope.search("无人机展览持续多久？", k=2)
    assert {h.fact.content for h in hits} == {"下个月我要去深圳参加一个无人机展览。", "它的持续时间是七天。"}
    follow_up = next(f for f in scope.facts() if f.content == "它的持续时间是七天。")
    assert "无人机" in follow_up.context
    assert follow_up.provenance.thread_id == "t1"


def test_turns_are_ordered_by_turn_not_by_list_position(scope):
    scope.remember_many([turn(2, "It lasted three days."), turn(0, "We went to the Lisbon jazz festival.")],
                        dedupe=False)
    follow_up = next(f for f in scope.facts() if f.content.startswith("It lasted"))
    assert "Lisbon jazz festival" in follow_up.context


def test_an_own_context_wins_and_items_without_turns_are_left_alone(scope):
    scope.remember_many([turn(0, "We went to the Lisbon jazz festival."),
                         turn(1, "It lasted three days.", context="the festival trip"),
                         {"content": "I like green tea", "thread_id": "t1", "category": "preference"}], dedupe=False)
    by_content = {f.content: f.context for f in scope.facts()}
    assert by_content["It lasted three days."] == "the festival trip"
    assert by_content["I like green tea"] is None


def test_a_refused_turn_is_never_quoted_into_its_neighbours(scope):
    secret = "my api key is sk-proj-4f9XcQ2LmZ8vT1rB7nK3wY6hJ0pD5sGa"
    report = scope.remember_many([turn(0, "We went to the Lisbon jazz festival."), turn(1, secret),
                                  turn(2, "It was the best trip of the year.")], dedupe=False)
    assert [why.code for _raw, why in report.rejected] == ["secret"]
    assert len(report.saved) == 2
    for fact in scope.facts():
        assert "sk-proj" not in (fact.context or "")
    follow_up = next(f for f in scope.facts() if f.content.startswith("It was"))
    assert "Lisbon" in follow_up.context  # the thread is still read around the gap


@pytest.mark.parametrize("bad, code", [({"turn": -1}, "invalid_turn"), ({"turn": True}, "invalid_turn"),
                                       ({"turn": "3"}, "invalid_turn"), ({"speaker": 5}, "invalid_speaker"),
                                       ({"speaker": "x" * 201}, "invalid_speaker")])
def test_bad_turns_are_refused_with_a_reason_and_the_rest_written(scope, bad, code):
    report = scope.remember_many([{**turn(0, "We went to the Lisbon jazz festival."), **bad},
                                  turn(1, "It lasted three days.")], dedupe=False)
    assert [why.code for _raw, why in report.rejected] == [code]
    assert [f.content for f in report.saved] == ["It lasted three days."]
