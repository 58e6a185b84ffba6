"""Red team of "what the model sees stays true": the profile as a projection of live
facts, contradictions, keys only from clauses that state the attribute, the agent's view,
the extractor, forgetting, and the REST additions — cases a helper invented against the
change. ``test_finding_*`` were defects it found (each now fixed, or xfail with the reason
the claim was narrowed); the others held from the start and must stay held."""

from __future__ import annotations

import io
import json
import time

import pytest

from archivist import FixedClock, Memory
from archivist.model.attributes import infer_key

W = "Qvzorbatown"


def said(text: str, mid: str = "u1") -> list[dict]:
    return [{"id": mid, "role": "user", "content": text}]


def cand(content: str, mid: str, quote: str, **over) -> dict:
    return {"content": content, "category": "context", "scope": "user", "durability": "durable",
            "authority": "descriptive", "confidence": 0.9, "evidence_message_id": mid, "evidence_text": quote, **over}


def live(s) -> list[str]:
    return sorted(f.content for f in s.facts())


def profile_text(s) -> str:
    return " ".join(sec.summary for sec in s.profile().sections.values())


def api(mem, users=("alice",), role="writer"):
    from fastapi.testclient import TestClient

    from archivist.server.app import create_app
    from archivist.server.keys import create_key

    key = create_key(mem.store, tenant="acme", users=list(users), role=role)[1]
    return TestClient(create_app(mem)), {"Authorization": f"Bearer {key}"}


# =====================================================================================
# 3. Keys only when a clause states the attribute
# =====================================================================================

@pytest.mark.parametrize("text", ["我在下午工作。", "我在凌晨工作。", "我在夜间工作。", "我在假日工作。", "我在高铁上工作。"])
def test_finding_time_or_place_phrase_gets_no_employer_key(text):
    assert infer_key(text) is None, f"{text!r}: a time/place phrase is no employer"


def test_finding_time_phrase_does_not_replace_the_employer(mem):
    s = mem.scope(user="k1")
    s.learn(said("我在腾讯工作。"))
    s.learn(said("我在凌晨工作，效率比较高。", "u2"))
    assert "用户在腾讯工作。" in live(s), "a time phrase superseded the employer"


@pytest.mark.parametrize("text", ["去年我住在伦敦。", "我2019年住在伦敦。", "小时候我住在农村。"])
def test_finding_past_time_phrase_gets_no_home_city_key(text):
    assert infer_key(text) is None, f"{text!r} is a past state"


def test_finding_past_state_does_not_replace_where_the_user_lives(mem):
    s = mem.scope(user="k2")
    s.remember("我住在上海。")
    s.remember("去年我住在伦敦。")
    assert "我住在上海。" in live(s)


NAMED = pytest.mark.xfail(strict=True, reason="a name may be the user's own: an application writes "
                          "'Alice lives in Berlin.' about its user Alice, so a named subject keeps its key")


@pytest.mark.parametrize("text", ["她在阿里巴巴工作。", "他住在北京。", "我哥在阿里巴巴工作。", "我的导师在清华大学工作。",
                                  pytest.param("Tom works at Microsoft.", marks=NAMED),
                                  pytest.param("Alice lives in Berlin.", marks=NAMED), "我是医生的女儿。"])
def test_finding_other_people_get_no_key(text):
    assert infer_key(text) is None, f"{text!r} is about someone else"


def test_finding_someone_elses_employer_does_not_replace_the_users(mem):
    s = mem.scope(user="k3")
    s.remember("我在腾讯工作。")
    s.remember("她在阿里巴巴工作。")
    assert "我在腾讯工作。" in live(s)


@pytest.mark.parametrize("first,second", [("I live in Munich.", "I don't live in Berlin."), ("我住在上海。", "我不住在北京。")])
def test_finding_negated_place_does_not_replace_where_the_user_lives(mem, first, second):
    s = mem.scope(user="k4")
    s.remember(first)
    s.remember(second)
    assert first in live(s), f"{second!r} replaced {first!r}"


@pytest.mark.parametrize("text", ["我下个月搬到深圳。", "我明年搬到深圳。"])
def test_finding_plan_gets_no_home_city_key(text):
    assert infer_key(text) is None, f"{text!r} is a plan, not where the user lives"


@pytest.mark.parametrize("text,wrong", [("I moved to Vim.", "home_city"), ("I moved to Python.", "home_city"),
                                         ("I work in Python mostly.", "work_city"), ("叫我起床", "name"),
                                         ("My birthday is coming up", "birthday"), ("我住在酒店里。", "home_city")])
def test_finding_word_in_passing_gets_no_key(text, wrong):
    assert infer_key(text) != wrong, f"{text!r} does not state {wrong}"


@pytest.mark.parametrize("text", [
    "我想住在成都。", "我希望以后在上海工作。", "我的女朋友住在北京。", "我以前住在杭州。", "I'd love to live in Paris.",
    "My wife works at Google.", "I used to work at Microsoft.", "我在周五工作到很晚。", "我在家工作。", "我在咖啡馆工作。",
    "I work from home on Fridays.", "我在晚上十点以后工作效率最高。", "我在周末加班。", "I dream of moving to Tokyo.",
    "Maybe I'll move to Tokyo.", "I lived in London in 2019.", "I love working in VS Code.", "我想当一名医生。",
    "I want to become a doctor.", "I'm married to a doctor.", "I'm friends with a lawyer.", "I'm visiting Berlin next week.",
    "我这周在北京出差。", "I moved to a new team.", "My daughter's birthday is May 3.", "我女儿生日是五月三日。",
    "My\u200b wife works at Google.", "我的女\u200b朋友住在北京。", "我以\u200b前住在杭州。", "I u\u200bsed to live in Madrid.",
    "我叫了外卖", "我叫车了", "我可能搬到深圳。",
])
def test_near_miss_gets_no_key(text):
    assert infer_key(text) is None


@pytest.mark.parametrize("text,key", [("我住在上海。", "home_city"), ("I live in Berlin.", "home_city"), ("我叫 Erin。", "name"),
                                      ("我在腾讯工作。", "employer"), ("I work at Google.", "employer"),
                                      ("我住在臺北。", "home_city"), ("Ｉ　ｌｉｖｅ　ｉｎ　Ｂｅｒｌｉｎ．", "home_city"),
                                      ("I li\u200bve in Berlin.", "home_city")])
def test_stated_attribute_gets_its_key(text, key):
    assert infer_key(text) == key


def test_keyed_move_supersedes_and_profile_follows(mem):
    s = mem.scope(user="k5")
    s.learn(said("我住在上海。"))
    s.learn(said("我已经搬到北京了。", "u2"))
    assert live(s) == ["用户已经搬到北京了。"] and "上海" not in profile_text(s)


# =====================================================================================
# 2. Contradictions
# =====================================================================================

def test_finding_curly_apostrophe_negation_is_a_contradiction(mem):
    s = mem.scope(user="c1")
    s.remember("The user likes coffee.", category="preference")
    s.remember("The user doesn\u2019t like coffee.", category="preference")
    assert len(s.review_queue()) == 1, "doesn’t (U+2019) is the same negation as doesn't"


def test_finding_simplified_and_traditional_polarity_is_a_contradiction(mem):
    s = mem.scope(user="c2")
    s.remember("我喜欢喝咖啡。", category="preference")
    s.remember("我不喜歡喝咖啡。", category="preference")
    assert len(s.review_queue()) == 1


def test_finding_keyed_side_written_second_is_still_a_contradiction(mem):
    s = mem.scope(user="c3")
    s.remember("I eat meat every day.")
    s.remember("I'm vegetarian.")  # keyed (diet): the write skips the contradiction check
    assert len(s.review_queue()) == 1, "the reverse order (vegetarian first) is found; this order is not"


@pytest.mark.parametrize("first,second", [("I'm not vegetarian.", "I eat meat every day."), ("我不吃素。", "我每天吃肉。"),
                                          ("My sister is vegetarian.", "I eat beef every day."),
                                          ("我滴酒不沾。", "我朋友每天都喝酒。")])
def test_finding_consistent_statements_are_not_disputed(mem, first, second):
    s = mem.scope(user="c4")
    s.remember(first)
    s.remember(second)
    assert s.review_queue() == [], f"{first!r} and {second!r} can both hold"


@pytest.mark.parametrize("first,second", [("I don't eat meat anymore.", "I eat meat every day."),
                                          ("我是素食者。", "我每天都吃肉。")])
def test_finding_exclusive_state_paraphrase_is_a_contradiction(mem, first, second):
    s = mem.scope(user="c5")
    s.remember(first)
    s.remember(second)
    assert len(s.review_queue()) == 1


def test_finding_disputed_preferences_are_marked_in_context(mem):
    s = mem.scope(user="c6")
    s.learn(said("我喜欢喝咖啡。"))
    s.remember("用户不喜欢喝咖啡。", category="preference")
    assert len(s.review_queue()) == 1
    system = s.context("咖啡").system
    assert system.count("[disputed") == 2, system


def test_finding_disputed_preferences_are_marked_in_the_middleware(mem):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from scripted_models import ScriptedToolModel

    from archivist.integrations.langchain import MemoryContext, MemoryMiddleware

    s = mem.scope(user="alice")
    s.remember("用户喜欢喝咖啡。", category="preference")
    s.remember("用户不喜欢喝咖啡。", category="preference")
    mw = MemoryMiddleware(mem, mode="auto")
    model = ScriptedToolModel(messages=iter([AIMessage("ok")]), seen=[], bound=[])
    agent = create_agent(model, tools=[], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [HumanMessage("推荐一杯饮料，咖啡还是茶？")]},
                 context=MemoryContext(user_id="alice", thread_id="t1"))
    mw.queue.wait_idle()
    mw.close()
    assert model.seen[0][0].content.count("[disputed") == 2, model.seen[0][0].content


def test_finding_review_item_closes_when_a_change_statement_settles_it(mem):
    s = mem.scope(user="c7")
    s.learn(said("我喜欢喝咖啡。"))
    s.remember("用户不喜欢喝咖啡。", category="preference")
    s.learn(said("我现在喜欢喝咖啡了。", "u2"))  # retires "不喜欢"; the other side has nothing left to conflict with
    assert "用户不喜欢喝咖啡。" not in live(s)
    assert s.review_queue() == [] and "[disputed" not in s.render().text


def test_finding_traditional_change_statement_retires_the_old_one(mem):
    s = mem.scope(user="c8")
    s.learn(said("我喜歡喝咖啡。"))
    s.learn(said("我現在不喜歡喝咖啡了。", "u2"))
    assert live(s) == ["用戶現在不喜歡喝咖啡了。"]


def test_finding_profile_never_holds_likes_and_no_longer_likes(mem, clock):
    s = mem.scope(user="c9")
    s.learn(said("I like coffee."))
    clock.advance(seconds=1)
    s.learn(said("I don't really like coffee anymore.", "u2"))
    section = s.profile().get("personal_context")
    assert not ("likes coffee" in section.summary and "anymore" in section.summary), section.summary


@pytest.mark.parametrize("first,second", [("用户喜欢喝咖啡。", "用户不喜欢喝咖啡。"), ("I like coffee.", "I DON'T LIKE COFFEE."),
                                          ("I like coffee.", "Ｉ ｄｏｎ'ｔ ｌｉｋｅ ｃｏｆｆｅｅ."),
                                          ("我喜欢喝咖啡。", "我不\u200b喜欢喝咖啡。"), ("I'm vegetarian.", "I eat meat every day."),
                                          ("I never drink alcohol.", "I drink wine every day."),
                                          ("我喜歡喝咖啡。", "我不喜歡喝咖啡。")])
def test_contradiction_is_disputed_and_queued(store_target, clock, first, second):
    with Memory.open(store_target, clock=clock) as mem:
        s = mem.scope(user="d1")
        s.remember(first)
        s.remember(second)
        assert len(s.review_queue()) == 1
        assert s.render().text.count("[disputed") == 2


@pytest.mark.parametrize("first,second", [("用户喜欢猫。", "用户喜欢狗。"), ("The user likes coffee.", "The user likes coffee, not tea."),
                                          ("The user knows Rust.", "The user uses Go at work.")])
def test_unrelated_statements_are_not_disputed(mem, first, second):
    s = mem.scope(user="d2")
    s.remember(first)
    s.remember(second)
    assert s.review_queue() == []


def test_change_statement_retires_instead_of_disputing(mem):
    s = mem.scope(user="d3")
    s.learn(said("I like coffee."))
    s.learn(said("Actually, I don't like coffee anymore.", "u2"))
    assert live(s) == ["The user doesn't like coffee anymore."] and s.review_queue() == []


def test_disputed_context_facts_are_marked_and_profile_states_neither(mem):
    s = mem.scope(user="d4")
    s.remember("The user likes jazz.")
    s.remember("The user doesn't like jazz.")
    assert s.context("jazz").system.count("[disputed") == 2 and "jazz" not in profile_text(s)


def test_resolve_review_keeps_one(mem):
    s = mem.scope(user="d5")
    a = s.remember("用户喜欢喝咖啡。")
    b = s.remember("用户不喜欢喝咖啡。")
    item = s.review_queue()[0]["id"]
    s.resolve_review(item, keep=b.id)
    assert live(s) == ["用户不喜欢喝咖啡。"] and s.review_queue() == [] and a.id not in {f.id for f in s.facts()}


def test_rest_contradiction_and_resolve(mem):
    c, h = api(mem)
    c.post("/v1/users/alice/facts", json={"content": "用户喜欢喝咖啡。"}, headers=h)
    kept = c.post("/v1/users/alice/facts", json={"content": "用户不喜欢喝咖啡。"}, headers=h).json()["id"]
    item = c.get("/v1/users/alice/review", headers=h).json()["conflicts"][0]["id"]
    _, bob = api(mem, users=("bob",))
    assert c.post(f"/v1/users/bob/review/{item}/resolve", json={}, headers=bob).status_code == 404
    assert c.post(f"/v1/users/alice/review/{item}/resolve", json={"keep": "nope"}, headers=h).status_code == 422
    assert c.post(f"/v1/users/alice/review/{item}/resolve", json={"keep": 5}, headers=h).status_code == 422
    assert c.post(f"/v1/users/alice/review/{item}/resolve", json={"x": 1}, headers=h).status_code == 422
    assert c.post(f"/v1/users/alice/review/{item}/resolve", content=b"xx",
                  headers={**h, "content-type": "application/json"}).status_code == 400
    assert c.post("/v1/users/alice/review/nope/resolve", json={}, headers=h).status_code == 404
    assert c.post(f"/v1/users/alice/review/{item}/resolve", json={"keep": kept}, headers=h).status_code == 204
    assert [f["content"] for f in c.get("/v1/users/alice/facts", headers=h).json()["items"]] == ["用户不喜欢喝咖啡。"]
    assert c.post(f"/v1/users/alice/review/{item}/resolve", json={}, headers=h).status_code == 404


def test_cli_resolve_keep(db_path):
    from typer.testing import CliRunner

    from archivist.cli import app

    with Memory.open(db_path) as mem:
        s = mem.scope(user="alice")
        s.remember("用户喜欢喝咖啡。")
        b = s.remember("用户不喜欢喝咖啡。")
        item = s.review_queue()[0]["id"]
    r = CliRunner().invoke(app, ["review", "--user", "alice", "--db", str(db_path), "--resolve", item, "--keep", b.id, "--json"])
    assert r.exit_code == 0 and json.loads(r.output[r.output.index("{"):])["conflicts"] == []
    with Memory.open(db_path) as mem:
        assert live(mem.scope(user="alice")) == ["用户不喜欢喝咖啡。"]


# =====================================================================================
# 1. The profile follows the facts
# =====================================================================================

def test_finding_llm_paraphrase_citing_another_fact_leaves_with_the_forgotten_fact(mem):
    s = mem.scope(user="p1")
    r = s.apply([cand("用户吃素。", "u1", "我吃素")], said("我吃素。"),
                profile_updates=[{"section": "personal_context", "summary": "用户吃素。", "source_message_ids": ["u1"]}])
    veg = r.saved[0]
    s.apply([cand("用户住在上海。", "u2", "我住在上海")], said("我住在上海。", "u2"),
            profile_updates=[{"section": "personal_context", "summary": "用户住在上海。用户不吃任何肉类。",
                              "source_message_ids": ["u2"]}])
    s.forget(veg.id)
    assert "肉" not in profile_text(s) and "肉" not in s.render().text, profile_text(s)


def test_finding_combined_llm_sentence_leaves_with_the_forgotten_fact(mem):
    s = mem.scope(user="p2")
    r = s.apply([cand("用户吃素。", "u1", "我吃素"), cand("用户住在上海。", "u1", "住在上海")], said("我吃素，住在上海。"),
                profile_updates=[{"section": "personal_context", "summary": "用户住在上海，是一位素食主义者。",
                                  "source_message_ids": ["u1"]}])
    veg = next(f for f in r.saved if "素" in f.content)
    s.forget(veg.id)
    assert "素食" not in profile_text(s), profile_text(s)


def test_finding_llm_sentence_no_fact_backs_is_refused(mem):
    s = mem.scope(user="p3")
    r = s.apply([cand("用户住在上海。", "u1", "我住在上海")], said("我住在上海。"),
                profile_updates=[{"section": "personal_context", "summary": "用户住在上海。用户年薪三百万并且有三套房。",
                                  "source_message_ids": ["u1"]}])
    assert "三百万" not in profile_text(s), (profile_text(s), r.rejected)


def test_llm_update_with_no_saved_or_live_fact_is_refused(mem):
    s = mem.scope(user="p4")
    r = s.apply([], said("今天天气不错。"), profile_updates=[{"section": "personal_context", "summary": "用户是亿万富翁。",
                                                           "source_message_ids": ["u1"]}])
    assert [w.code for _, w in r.rejected] == ["profile_unbacked"] and profile_text(s) == ""


def test_llm_paraphrase_in_another_language_is_not_kept_so_it_cannot_outlive_its_fact(mem):
    """No word of "plant-based diet" is in "用户吃素。": nothing says which fact the sentence
    states, so it is left out (it used to be cited through the update's messages)."""
    s = mem.scope(user="p5")
    r = s.apply([cand("用户吃素。", "u1", "我吃素")], said("我吃素。"),
                profile_updates=[{"section": "personal_context", "summary": "The user follows a plant-based diet.",
                                  "source_message_ids": ["u1"]}])
    assert "plant-based" not in profile_text(s) and [c for _, c in r.rejected] and \
        r.rejected[0][1].code == "profile_unbacked"
    s.forget(r.saved[0].id)
    assert profile_text(s) == ""


def test_expired_fact_sentence_leaves_the_profile(mem, clock):
    s = mem.scope(user="p6")
    s.apply([cand("用户这周在东京出差。", "u1", "我这周在东京出差", valid_until="2026-01-05T00:00:00+00:00")],
            said("我这周在东京出差。"),
            profile_updates=[{"section": "top_of_mind", "summary": "用户本周人在东京出差。", "source_message_ids": ["u1"]}])
    assert "东京" in profile_text(s)
    clock.advance(days=10)
    assert profile_text(s) == "" and "本周人在东京" not in s.render().text


def test_disputed_fact_leaves_the_profile_and_returns_after_resolve(mem):
    s = mem.scope(user="p7")
    s.learn(said("我喜欢喝咖啡。"))
    assert "咖啡" in profile_text(s)
    b = s.remember("用户不喜欢喝咖啡。", category="preference")
    assert "咖啡" not in profile_text(s)
    s.resolve_review(s.review_queue()[0]["id"], keep=b.id)
    assert "用户喜欢喝咖啡" not in profile_text(s)


# =====================================================================================
# 5. The extractor
# =====================================================================================

def test_finding_english_correction_of_response_language_is_read(mem):
    s = mem.scope(user="e1")
    r = s.learn(said("No, actually I'd rather you answer in English."))
    assert [f.key for f in r.saved] == ["response_language"], [f.content for f in r.saved]


def test_finding_typographic_apostrophe_no_longer_likes_is_read(mem):
    s = mem.scope(user="e2")
    r = s.learn(said("Actually, I don\u2019t like coffee anymore."))
    assert len(r.saved) == 1, "the same sentence with ' is read; with ’ (smart punctuation) nothing is"


def test_finding_call_me_name_with_space_is_read(mem):
    s = mem.scope(user="e3")
    r = s.learn(said("叫我 Erin 就行。"))
    assert [f.key for f in r.saved] == ["name"]


@pytest.mark.parametrize("text,key,content", [
    ("不对，其实我更希望你用英文回答。", "response_language", "用户偏好用英文回答。"),
    ("不对，其实我更想让你用英文回答。", "response_language", "用户偏好用英文回答。"),
    ("請用英文回答我。", "response_language", "用戶偏好用英文回答。"),
    ("Actually, I don't like coffee anymore.", None, "The user doesn't like coffee anymore."),
    ("我叫 Erin。", "name", "用户叫Erin。"), ("我叫 Ｅｒｉｎ。", "name", "用户叫Erin。"), ("我的名字是 Erin。", "name", "用户叫Erin。"),
    ("Call me Erin.", "name", "The user's name is Erin."),
    ("I use a MacBook with macOS for work.", None, "The user uses a MacBook with macOS for work."),
    ("I use a ThinkPad with Ubuntu for work.", None, "The user uses a ThinkPad with Ubuntu for work."),
    ("我對花生過敏", None, "用戶對花生過敏。"), ("我對海鮮過敏。", None, "用戶對海鮮過敏。"),
    ("I\u2019m allergic to peanuts.", None, "The user is allergic to peanuts."),
    ("我每天早上跑步五公里。", None, "用户每天早上跑步五公里。"),
    ("I have two cats named Mochi and Tofu.", None, "The user has two cats named Mochi and Tofu."),
])
def test_extractor_reads(mem, text, key, content):
    r = mem.scope(user="e4").learn(said(text))
    assert [(f.key, f.content) for f in r.saved] == [(key, content)]


def test_extractor_simplified_change_statement_retires(mem):
    s = mem.scope(user="e5")
    s.learn(said("我喜欢喝咖啡。"))
    s.learn(said("其实我现在不喜欢喝咖啡了。", "u2"))
    assert live(s) == ["用户现在不喜欢喝咖啡了。"]


# =====================================================================================
# 4. Agent calls
# =====================================================================================

@pytest.mark.parametrize("greeting", ["Ｈｅｌｌｏ", "hello\u200b", "早上好呀～", "Hey, good morning!", "晚安", "hi 👋",
                                      "thanks a lot!", "好的👌"])
def test_finding_greeting_only_session_writes_no_summary(mem, greeting):
    s = mem.scope(user="g1")
    assert s.summarize_session("t1", [{"id": "u1", "role": "user", "content": greeting},
                                      {"id": "a1", "role": "assistant", "content": "你好！有什么可以帮你？"}]) is None


@pytest.mark.parametrize("greeting", ["你好！", "hi", "哈喽", "Hi!!!", "谢谢！", "ok", "收到", "Bye!", "Hi. Thanks. Bye."])
def test_greeting_only_session_writes_no_summary(mem, greeting):
    assert mem.scope(user="g2").summarize_session("t1", said(greeting)) is None


@pytest.mark.parametrize("text", ["你好，帮我看看这段 Python 代码为什么报错。", "Hi, can you help me fix a bug in my parser?"])
def test_session_with_a_request_is_summarized(mem, text):
    assert mem.scope(user="g3").summarize_session("t1", said(text)) is not None


def test_finding_traditional_query_finds_simplified_fact(mem):
    s = mem.scope(user="a1")
    s.remember("用户家的猫叫 Mochi。")
    assert "Mochi" in s.context("我的猫叫什么名字？").system
    assert "Mochi" in s.context("我的貓叫什麼名字？").system, "the same question in Traditional drops the fact"


def test_profile_corrections_and_preferences_always_in_context(mem):
    s = mem.scope(user="a2")
    s.learn(said("我对花生过敏。"))
    s.remember("Don't use semicolons in JavaScript examples; the user corrected this before.", category="correction")
    s.remember("用户家的猫叫 Mochi。")
    s.set_preference("tone", "be concise")
    system = s.context("reverse a linked list").system
    assert "花生" in system and "semicolons" in system and "concise" in system and "Mochi" not in system


def test_rest_context_takes_history_tools_evidence_reference_task(mem):
    c, h = api(mem)
    assert c.put("/v1/users/alice/tasks/t1", json={"goal": "Ship the sorter", "criteria": ["tests pass"]},
                 headers=h).status_code == 200
    body = {"query": "写个 Python 排序函数", "budget": 3000,
            "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            "tools": [{"name": "run", "description": "run code", "parameters": {"type": "object"}}],
            "evidence": [{"id": "ev1", "text": "sorted() is stable"}],
            "reference": [{"id": "r1", "text": "Unrelated doc about gardening tomatoes"},
                          {"id": "r2", "text": "Python 排序: use sorted(key=...) 函数"}], "task_id": "t1"}
    r = c.post("/v1/users/alice/context", json=body, headers=h)
    assert r.status_code == 200
    system = r.json()["messages"][0]["content"]
    assert "Ship the sorter" in system and "sorted() is stable" in system
    assert system.index('"r2"') < system.index('"r1"')  # packed by relevance, not in the order given
    assert [m["content"] for m in r.json()["messages"][1:]] == ["hi", "hello", "写个 Python 排序函数"]


def test_project_statements_stay_in_the_project(mem):
    for i, text in enumerate(["这个项目用 pnpm 管理依赖。", "This project uses pnpm; deploy with scripts/deploy.sh."]):
        a = mem.scope(user=f"pr{i}", project="repo-a")
        r = a.learn(said(text))
        assert [f.identity.project for f in r.saved] == ["repo-a"]
        assert mem.scope(user=f"pr{i}", project="repo-b").facts() == [] and mem.scope(user=f"pr{i}").facts() == []


# =====================================================================================
# 6. Forgetting leaves no trace
# =====================================================================================

@pytest.mark.parametrize("first,forget", [
    ("我对花生过敏。", "别记我对花生过敏了。"), ("我对花生过敏。", "忘掉我对花生过敏这件事。"), ("我对花生过敏。", "请忘记我对花生过敏。"),
    ("我对花生过敏。", "不要记我对花生过敏了。"), ("我對花生過敏。", "別記我對花生過敏了。"), ("我對花生過敏。", "别记我对花生过敏了。"),
    ("我对花生过敏。", "別記我對花生過敏了。"), ("I'm allergic to peanuts.", "Please forget that I'm allergic to peanuts."),
    ("I'm allergic to peanuts.", "Forget about my peanut allergy."),
    ("I'm allergic to peanuts.", "Don't remember that I'm allergic to peanuts."),
    ("I'm allergic to peanuts.", "Ｆｏｒｇｅｔ that I'm allergic to peanuts."),
    ("I'm allergic to peanuts.", "Forget\u200b that I'm allergic to peanuts."),
    ("I live in Berlin.", "Forget that I live in Berlin."), ("我住在上海。", "别记我住在上海了。"),
])
def test_forget_that_message_forgets(mem, first, forget):
    s = mem.scope(user="f1")
    s.learn(said(first))
    s.learn(said(forget, "u2"))
    assert live(s) == [] and profile_text(s) == ""


@pytest.mark.parametrize("first,other", [("我对花生过敏。", "别记我喜欢喝咖啡了。"),
                                         ("I'm allergic to peanuts.", "Don't forget that I'm allergic to peanuts."),
                                         ("I'm allergic to peanuts.", "I always forget that I'm allergic to peanuts, lol."),
                                         ("我对花生过敏。", "别忘了我对花生过敏。")])
def test_not_a_forget_request_keeps_the_fact(mem, first, other):
    s = mem.scope(user="f2")
    s.learn(said(first))
    s.learn(said(other, "u2"))
    assert len(live(s)) == 1


def test_finding_assistant_paraphrase_echo_goes_with_the_forgotten_fact(db_path, clock):
    from test_torture_secure_delete import SQLiteFiles

    with Memory.open(db_path, clock=clock) as mem:
        s = mem.scope(user="f3")
        r = s.learn([{"id": "u1", "role": "user", "content": f"I live in {W}."},
                     {"id": "a1", "role": "assistant", "content": f"Oh nice, {W} is beautiful in spring!"}], thread_id="t1")
        s.forget(r.saved[0].id)
        assert [h.fact.content for h in s.search(W)] == []
        assert SQLiteFiles(str(db_path)).rows_with([W]) == set()


def test_finding_llm_session_summary_loses_the_forgotten_fact(db_path, clock):
    from test_torture_secure_delete import SQLiteFiles

    class LLMSummarizer:
        name = "llm"

        def summarize(self, messages):
            return {"goal": f"Talked about the user's hometown {W}", "done": [], "open_items": [], "decisions": [],
                    "errors": [], "next_step": ""}

    with Memory.open(db_path, clock=clock) as mem:
        s = mem.scope(user="f4")
        turns = said(f"I live in {W}.")
        fact = s.learn(turns, thread_id="t1").saved[0]
        s.summarize_session("t1", turns, summarizer=LLMSummarizer())
        s.forget(fact.id)
        assert all(W not in x.goal for x in s.summaries())
        assert mem.store.wait_for_erasure(timeout=60)
        assert SQLiteFiles(str(db_path)).bytes_with([W]) == set()


def test_forget_that_reaches_trace_why_export_and_bytes(db_path, clock):
    from test_torture_secure_delete import SQLiteFiles

    from archivist.lifecycle.transfer import export_jsonl

    with Memory.open(db_path, clock=clock) as mem:
        s = mem.scope(user="f5")
        fact = s.learn(said(f"I'm allergic to {W} berries."), thread_id="t1").saved[0]
        view = s.context("what am I allergic to?")
        assert W in json.dumps(s.trace(view.trace.id))
        s.learn(said(f"Forget that I'm allergic to {W} berries.", "u2"), thread_id="t1")
        buf = io.StringIO()
        export_jsonl(mem, "default", "f5", buf)
        assert W not in buf.getvalue() and W not in json.dumps(s.trace(view.trace.id))
        assert W not in s.why(view.trace.id, fact.id) and W not in s.render().text
        files = SQLiteFiles(str(db_path))
        assert files.rows_with([W, W.lower()]) == set() and files.bytes_with([W, W.lower()]) == set()


def test_forgetting_full_width_fact_leaves_no_byte(db_path, clock):
    from test_torture_secure_delete import SQLiteFiles

    fw = "Ｑｖｚｏｒｂａｔｏｗｎ"
    with Memory.open(db_path, clock=clock) as mem:
        s = mem.scope(user="f6")
        fact = s.learn(said(f"I live in {fw}."), thread_id="t1").saved[0]
        s.context("where do I live?")
        s.forget(fact.id)
        assert SQLiteFiles(str(db_path)).bytes_with([W, fw, W.lower()]) == set()


def test_rest_job_report_loses_forgotten_fact(store_target, clock):
    with Memory.open(store_target, clock=clock) as mem:
        c, h = api(mem)
        with c:
            def ingest(msgs, thread):
                job = c.post("/v1/users/alice/messages", json={"messages": msgs, "thread_id": thread}, headers=h).json()
                for _ in range(400):
                    if c.get(job["status_url"], headers=h).json()["status"] in ("done", "failed"):
                        return job["job_id"]
                    time.sleep(0.05)

            j1 = ingest([{"id": "u1", "role": "user", "content": f"我住在{W}镇。"}], "t1")
            fid = next(f["id"] for f in c.get("/v1/users/alice/facts", headers=h).json()["items"] if W in f["content"])
            assert c.delete(f"/v1/users/alice/facts/{fid}", headers=h).status_code == 200
            assert W not in c.get(f"/v1/jobs/{j1}", headers=h).text
            j2 = ingest([{"id": "u2", "role": "user", "content": "I'm allergic to Zyxquat berries."}], "t2")
            j3 = ingest([{"id": "u3", "role": "user", "content": "Forget that I'm allergic to Zyxquat berries."}], "t2")
            assert all("Zyxquat" not in c.get(f"/v1/jobs/{j}", headers=h).text for j in (j2, j3))


# =====================================================================================
# 7. REST preferences
# =====================================================================================

@pytest.mark.parametrize("value", ["no", "false", 0])
def test_finding_trusted_must_be_a_json_boolean(mem, value):
    c, h = api(mem)
    r = c.put("/v1/users/alice/preferences/lang", json={"value": "answer in French", "trusted": value}, headers=h)
    assert r.status_code == 422, f"trusted={value!r} was read as {r.json().get('trusted')!r}"


def test_finding_untrusted_preference_is_shown(mem):
    c, h = api(mem)
    assert c.put("/v1/users/alice/preferences/lang", json={"value": "answer in French", "trusted": False},
                 headers=h).status_code == 200
    listed = c.get("/v1/users/alice/preferences", headers=h).json()
    assert [(p["key"], p["trusted"]) for p in listed] == [("lang", False)], "docs/api.md: 'shown, never obeyed'"


def test_untrusted_preference_is_never_obeyed(mem):
    c, h = api(mem)
    c.put("/v1/users/alice/preferences/lang", json={"value": "answer in French", "trusted": False}, headers=h)
    system = c.post("/v1/users/alice/context", json={"query": "hello"}, headers=h).json()["messages"][0]["content"]
    assert "French" not in system
