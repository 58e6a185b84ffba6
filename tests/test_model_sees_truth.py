"""What the model sees stays true: the profile is a projection of live facts, keys come
from what a clause states, contradictions surface, and an agent's call gets the profile,
the corrections and the relevant memory — on both backends where storage is involved."""

from __future__ import annotations

import json

import pytest

from archivist import Memory, Status
from archivist.model import PROFILE_SECTIONS
from archivist.model.attributes import infer_key
from archivist.pipeline.contradictions import contradicts


def _said(s) -> str:
    return " ".join(sec.summary for sec in s.profile().sections.values())


# ------------------------------------------------------------------ the profile follows the facts
def test_a_forgotten_fact_leaves_the_profile_in_every_wording(store_target, clock):
    """An LLM's profile sentence in its own words cites the fact it states: forgetting the
    fact takes the sentence, wherever it is and however it is worded."""
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="alice")
    msgs = [{"id": "u1", "role": "user", "content": "我住在杭州西湖区文三路，平时写 Python 后端。"}]
    report = s.apply(
        [{"content": "用户住在杭州西湖区文三路。", "category": "context", "scope": "user", "durability": "durable",
          "authority": "descriptive", "confidence": 0.9, "evidence_message_id": "u1",
          "evidence_text": "我住在杭州西湖区文三路"},
         {"content": "用户平时写 Python 后端。", "category": "context", "scope": "user", "durability": "durable",
          "authority": "descriptive", "confidence": 0.9, "evidence_message_id": "u1",
          "evidence_text": "平时写 Python 后端"}],
        msgs,
        profile_updates=[{"section": "personal_context", "summary": "该用户居住于杭州市西湖区文三路一带。",
                          "source_message_ids": ["u1"]},
                         {"section": "work_context", "summary": "用户是 Python 后端开发者。", "source_message_ids": ["u1"]}])
    home = next(f for f in report.saved if "文三路" in f.content)
    assert "文三路" in _said(s) and "Python" in _said(s)
    cited = s.profile().get("personal_context").sentences[0].facts
    assert home.id in cited
    s.forget(home.id)
    assert "文三路" not in _said(s) and "Python" in _said(s)
    assert "文三路" not in mem.store.get_profile(s.identity).get("personal_context").summary  # the stored row too
    assert "文三路" not in s.render().text and "文三路" not in s.context("我住在哪？").system
    mem.close()


def test_a_forgotten_fact_leaves_no_byte_of_the_profile_in_the_file(tmp_path, clock):
    path = tmp_path / "m.db"
    mem = Memory.open(path, clock=clock)
    s = mem.scope(user="alice")
    r = s.learn([{"id": "u1", "role": "user", "content": "我住在杭州西湖区文三路。"},
                 {"id": "a1", "role": "assistant", "content": "记住了你住在杭州西湖区文三路"}])
    s.forget(r.saved[0].id)
    mem.close()
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert "文三路".encode() not in data


def test_the_profile_follows_a_superseded_and_an_ended_fact(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="bo")
    s.learn([{"id": "m1", "role": "user", "content": "我接下来几个月在系统学习 Agent 上下文工程。"}])
    assert "Agent 上下文工程" in _said(s)
    s.learn([{"id": "m2", "role": "user", "content": "Agent 上下文工程已经学完了，接下来几个月在学 Rust。"}])
    top = s.profile().get("top_of_mind").summary
    assert "Rust" in top and "Agent" not in top  # top of mind replaces what ended
    s.learn([{"id": "m3", "role": "user", "content": "我住在杭州。"}])
    s.learn([{"id": "m5", "role": "user", "content": "我在杭州做前端开发。"}])  # where the user works, not an employer
    assert "杭州做前端开发" in s.profile().get("work_context").summary
    s.learn([{"id": "m4", "role": "user", "content": "我已经搬到上海了。"}])
    assert "上海" in _said(s) and "杭州" not in _said(s)  # the work section follows the move too
    mem.close()


def test_a_section_never_holds_two_contradicting_values(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="cy")
    s.learn([{"id": "m1", "role": "user", "content": "我喜欢喝咖啡。"}])
    clock.advance(seconds=60)
    s.learn([{"id": "m2", "role": "user", "content": "我现在不喜欢喝咖啡了。"}])
    said = _said(s)
    assert "不喜欢喝咖啡" in said and "用户喜欢喝咖啡" not in said
    live = [f.content for f in s.facts()]
    assert live == ["用户现在不喜欢喝咖啡了。"]  # the change retired the old statement
    mem.close()


def test_an_expired_fact_leaves_the_profile_without_a_write(mem, clock):
    s = mem.scope(user="dee")
    s.learn([{"id": "m1", "role": "user", "content": "我接下来几个月在准备雅思考试。"}])
    assert "雅思" in _said(s)
    clock.advance(days=400)  # current focus lasts a season
    assert "雅思" not in _said(s)


def test_the_cognitive_style_section_exists():
    assert "cognitive_style" in PROFILE_SECTIONS


def test_an_application_summary_cites_nothing_and_forgetting_a_fact_it_repeats_still_reaches_it(mem):
    s = mem.scope(user="ed")
    s.update_profile("work_context", "用户在阿里巴巴做后端。用户喜欢 Go。")
    fact = s.remember("用户在阿里巴巴做后端。")
    assert s.profile().get("work_context").sentences[0].facts == ()
    s.forget(fact.id)
    assert s.profile().get("work_context").summary == "用户喜欢 Go。"


# ------------------------------------------------------------------ keys from meaning
NEAR_MISSES = [
    "用户在周末工作时喜欢听古典音乐。", "用户在家工作时喜欢开着窗。", "用户喜欢在咖啡馆工作。", "用户梦想在谷歌工作。",
    "用户想搬到成都。", "用户叫外卖的时候喜欢加辣。", "用户给妈妈买了生日礼物。", "用户喜欢深色的衣服。",
    "用户用空格键跳过广告。", "用户用英文写日记。", "如果在字节工作会很累。", "用户打算入职腾讯。",
    "The user likes working from home on Fridays.", "The user would love to work at Google someday.",
    "The user lived in Paris for a semester in college.", "The user is married to a doctor.",
    "The user's birthday party was fun.", "The user writes poems in English.",
    "The user is thinking about moving to Berlin.", "The user hopes to work at Stripe.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_near_miss_gets_no_key(text):
    assert infer_key(text) is None


@pytest.mark.parametrize("text,key", [
    ("用户在阿里巴巴工作。", "employer"), ("我在字节跳动上班三年了", "employer"), ("用户住在杭州。", "home_city"),
    ("The user lives in Berlin.", "home_city"), ("The user works at Google.", "employer"),
    ("The user is a backend engineer.", "job_role"), ("用户叫王磊。", "name"), ("用户喜欢用深色主题。", "ui_theme"),
    ("用户缩进用空格。", "indentation"), ("The user moved to Seattle.", "home_city"),
])
def test_a_clause_that_states_the_attribute_gets_its_key(text, key):
    assert infer_key(text) == key


def test_a_near_miss_no_longer_retires_the_employer_and_a_superseding_write_names_both(mem):
    s = mem.scope(user="fay")
    job = s.remember("用户在阿里巴巴工作。")
    music = s.remember("用户在周末工作时喜欢听古典音乐。")
    assert {f.id for f in s.facts()} == {job.id, music.id}
    new = s.remember("用户在腾讯工作。")
    entry = next(e for e in s.audit() if e.action == "supersede")
    assert job.id in entry.reason and new.id in entry.reason


def test_sre_is_not_a_name(mem):
    r = mem.scope(user="gus").learn([{"id": "x", "role": "user", "content": "我是 SRE。"}])
    assert not any(f.key == "name" for f in r.saved)


# ------------------------------------------------------------------ contradictions surface
@pytest.mark.parametrize("a,b", [
    ("用户喜欢喝咖啡。", "用户不喜欢喝咖啡。"), ("The user likes coffee.", "The user doesn't like coffee anymore."),
    ("The user is vegetarian.", "The user eats meat every day."), ("用户不吃辣。", "用户吃辣。"),
    ("The user can't swim.", "The user can swim."), ("用户没有养猫。", "用户养猫。"),
])
def test_contradictions_are_recognised(a, b):
    assert contradicts(a, b) and contradicts(b, a)


@pytest.mark.parametrize("a,b", [
    ("用户喜欢喝咖啡。", "用户喜欢喝茶。"), ("The user likes tea.", "The user likes coffee."),
    ("用户不喜欢加班。", "用户喜欢加班时听音乐。"), ("The user likes coffee.", "The user likes coffee."),
])
def test_different_statements_do_not_contradict(a, b):
    assert not contradicts(a, b)


def test_an_app_fact_and_a_chat_fact_that_contradict_are_disputed_and_the_review_settles_them(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="hu")
    app = s.remember("用户不喜欢喝咖啡。")
    chat = s.learn([{"id": "m1", "role": "user", "content": "我喜欢喝咖啡。"}]).saved[0]
    assert {f.id for f in s.facts()} == {app.id, chat.id}  # both kept: nobody said which holds
    (item,) = s.review_queue()
    assert set(item["fact_ids"]) == {app.id, chat.id} and item["kind"] == "conflict"
    text = s.render().text
    assert text.count("[disputed") == 2 and "咖啡" not in _said(s)
    assert "[disputed" in s.context("我喜欢喝什么？").system
    s.resolve_review(item["id"], keep=chat.id)
    assert [f.id for f in s.facts()] == [chat.id] and s.review_queue() == []
    assert s.get(app.id).status is Status.SUPERSEDED and "[disputed" not in s.render().text
    mem.close()


def test_vegetarian_beside_meat_every_day_is_queued_for_review(mem):
    s = mem.scope(user="ivy")
    s.remember("The user is vegetarian.")
    s.remember("The user eats meat every day.")
    assert len(s.review_queue()) == 1 and len(s.facts()) == 2


def test_consolidation_queues_contradictions_written_before_it_knew_them(mem):
    s = mem.scope(user="jo")
    s.remember_many([{"content": "The user likes jazz.", "category": "preference"},
                     {"content": "The user does not like jazz.", "category": "context"}])
    for item in s.review_queue():  # the write path found it already: settle it to test consolidation alone
        s.resolve_review(item["id"])
    plan = s.consolidate(force=True)
    assert any(a.op in ("review", "supersede") for a in plan.actions)


def test_resolving_with_a_fact_outside_the_item_is_refused(mem):
    from archivist.errors import InvalidInput

    s = mem.scope(user="kim")
    s.remember("用户不吃辣。")
    other = s.remember("用户吃辣。")
    (item,) = s.review_queue()
    with pytest.raises(InvalidInput):
        s.resolve_review(item["id"], keep="no-such-fact")
    assert len(s.facts()) == 2 and s.review_queue()[0]["id"] == item["id"]
    assert other.id in item["fact_ids"]


# ------------------------------------------------------------------ the extractor's misses
@pytest.mark.parametrize("said,fact", [
    ("不对，其实我更希望你用英文回答。", "用户偏好用英文回答。"),
    ("Actually, I don't like coffee anymore.", "The user doesn't like coffee anymore."),
    ("我叫 Erin。", "用户叫Erin。"),
    ("I use a MacBook with macOS for work.", "The user uses a MacBook with macOS for work."),
    ("我用的是 macOS。", "用户用的是 macOS。"),
    ("我對花生過敏", "用戶對花生過敏。"),  # read as Simplified, written in the user's own script
])
def test_statements_the_extractor_used_to_drop(mem, said, fact):
    r = mem.scope(user="lu").learn([{"id": "m1", "role": "user", "content": said}])
    assert [f.content for f in r.saved] == [fact]
    assert r.saved[0].provenance.evidence_text in said  # the quote stays as written (Traditional too)


# ------------------------------------------------------------------ what an agent's call gets
def test_a_call_gets_the_profile_and_the_corrections_whatever_it_asks(mem):
    s = mem.scope(user="max")
    s.learn([{"id": "m1", "role": "user", "content": "我主要用 Python 做后端开发。"},
             {"id": "m2", "role": "user", "content": "I use a MacBook with macOS for work."}])
    s.remember("用户希望先给结论，再补充必要解释。", category="correction")
    system = s.context("Explain database transactions.").system
    assert "Python" in system and "macOS" in system and "先给结论" in system


def test_an_unrelated_request_does_not_pull_in_every_fact(tmp_path, clock):
    """With an embedder, a fact that shares no word with the request needs the embedder's
    relevance floor: "reverse a linked list" does not bring up an allergy."""
    from archivist.testing.embedders import HashEmbedder

    class Floored(HashEmbedder):
        relevance_floor = 0.99  # no hashed vector is this close to another

    mem = Memory.open(tmp_path / "m.db", clock=clock, embedder=Floored())
    s = mem.scope(user="ned")
    allergy = s.remember("The user is allergic to peanuts.")
    view = s.context("reverse a linked list")
    assert "peanuts" not in view.system
    entry = next(e for e in view.trace.entries if e.id == allergy.id)
    assert not entry.selected and entry.reason == "not_relevant"
    assert "peanuts" in s.context("Can I eat peanut butter?").system
    mem.close()


def test_a_greeting_only_session_writes_no_summary_and_the_last_session_ranks_by_relevance(mem):
    s = mem.scope(user="oz")
    assert s.summarize_session("t1", [{"id": "u1", "role": "user", "content": "你好！"},
                                      {"id": "a1", "role": "assistant", "content": "你好，有什么可以帮你？"}]) is None
    assert s.summaries() == []
    s.summarize_session("t2", [{"id": "u2", "role": "user", "content": "帮我把部署脚本改成用 systemd 重启服务。"},
                               {"id": "a2", "role": "assistant", "content": "好的，已经改好了 deploy.sh。"}])
    allergy = s.remember("The user is allergic to peanuts.")
    view = s.context("Can I eat peanut butter with my toast?", budget=300)
    assert allergy.id in [e.id for e in view.trace.entries if e.selected]
    session = [e for e in view.trace.entries if e.section == "last_session"]
    assert session and not session[0].selected  # about something else: it goes before a relevant fact does


def test_reference_material_is_packed_by_relevance(mem):
    s = mem.scope(user="pia")
    payment = {"id": "payment-v1", "text": "Payment v1 manual. " + "Refunds are issued by the billing team. " * 40}
    checkout = {"id": "checkout-v2", "text": "Checkout v2 manual: the checkout flow validates the cart, then "
                                             "the checkout v2 service reserves stock. " * 10}
    view = s.context("How does checkout v2 reserve stock?", reference=[payment, checkout], budget=600)
    chosen = [e.id for e in view.trace.entries if e.section == "reference" and e.selected]
    assert chosen and chosen[0] == "checkout-v2"


def test_memory_context_carries_a_project(mem):
    pytest.importorskip("langchain.agents", reason="the langchain extra is not installed (pip install '.[langchain]')")
    from archivist.integrations.langchain import MemoryContext, identity_of

    caller = identity_of(MemoryContext(user_id="alice", project="repo-a"))
    assert caller.project == "repo-a" and caller.user == "alice"


def test_seed_000_opening_example_through_an_agent(mem):
    """Python backend -> the user, PostgreSQL -> the project, "push this time" -> nothing."""
    pytest.importorskip("langchain.agents", reason="the langchain extra is not installed (pip install '.[langchain]')")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from scripted_models import ScriptedToolModel

    from archivist.integrations.langchain import MemoryContext, MemoryMiddleware

    mw = MemoryMiddleware(mem)
    model = ScriptedToolModel(messages=iter([AIMessage("好的。")]), seen=[], bound=[])
    agent = create_agent(model, tools=[], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [HumanMessage("我主要用 Python 做后端。这个项目用 PostgreSQL 做数据库。这次直接 push 吧。")]},
                 context=MemoryContext(user_id="alice", thread_id="t1", project="repo-a"))
    assert mw.queue.wait_idle()
    user_facts = [f.content for f in mem.scope(user="alice").facts()]
    project_facts = [f.content for f in mem.scope(user="alice", project="repo-a").facts() if f.identity.project]
    assert user_facts == ["用户主要用 Python 做后端。"]
    assert project_facts == ["这个项目用 PostgreSQL 做数据库。"]
    assert not any("push" in f for f in user_facts + project_facts)
    assert mem.scope(user="alice", project="repo-b").facts() == [] or \
        all(f.identity.project is None for f in mem.scope(user="alice", project="repo-b").facts())
    mw.close()


# ------------------------------------------------------------------ every copy of a forgotten fact
def test_a_long_or_oddly_spaced_fact_leaves_stored_traces(store_target, clock):
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="quin")
    long = s.remember("The user keeps the spare key to the Lisbon flat under the blue flower pot   by the door,\n"
                      "next to the bicycle that has a broken bell and a red basket.")
    view = s.context("Where is the spare key kept by the door?")
    assert "Lisbon" in json.dumps(s.trace(view.trace.id))
    s.forget(long.id)
    stored = json.dumps(s.trace(view.trace.id), ensure_ascii=False)
    assert "Lisbon" not in stored and "flower pot" not in stored
    assert "Lisbon" not in s.why(view.trace.id, long.id)
    mem.close()


@pytest.mark.parametrize("text", ["I moved from Berlin to Lisbon.", "We moved from Berlin to Lisbon last month.",
                                  "I relocated from Berlin, Germany to Porto in May.",
                                  "My wife and I moved from Berlin to Lisbon.",
                                  "I recently moved from Berlin, Germany, to Lisbon."])
def test_a_move_from_the_home_city_replaces_it(mem, text):
    """A move away from the home city memory holds is its next value (the place left is
    checked against it: "moved from Slack to Discord" names no home)."""
    s = mem.scope(user="nu")
    old = s.remember("I live in Berlin.")
    new = s.remember(text)
    assert new.key == "home_city" and new.supersedes == old.id
    assert [f.content for f in s.facts()] == [text]


@pytest.mark.parametrize("text", [
    "I moved from Slack to Discord.", "My standup moved from Monday to Tuesday.", "I moved from Google to Meta.",
    "I moved from Vim to VS Code.", "Anna moved from Berlin to Porto.", "My sister moved from Berlin to Lisbon.",
    "I moved from Berlin to Porto when I was a kid.", "I'm moving from Berlin to Tokyo next year.",
    "I once moved from Berlin to Rome.", "We're thinking of moving from Berlin to Tokyo.",
    "I moved the meeting from Berlin to Lisbon.",
    # a third red team's
    "I moved from Berlin to Lisbon a decade ago.", "I moved from Berlin to Lisbon in the 90s.",
    "I moved from Berlin to Lisbon at age 20.", "I moved from Berlin to Lisbon as a student.",
    "I moved from Berlin to Lisbon for three months, then returned.",
    "I moved from Berlin to Lisbon in my dream last night.", "I moved from Berlin to Lisbon?",
    "We moved from Berlin to Lisbon—the servers, I mean.",
])
def test_a_move_that_is_not_the_users_home_now_leaves_the_home_city(mem, text):
    s = mem.scope(user="nu")
    home = s.remember("I live in Berlin.")
    s.remember(text)
    assert s.get(home.id).status is Status.COMMITTED and s.get(home.id).key == "home_city"


@pytest.mark.parametrize("old, new", [
    ("My dog is 4 years old.", "Actually, my dog is 5 years old."),
    ("The user runs 5 km on Mondays.", "The user now runs 10 km on Mondays."),
    ("I take 2.5 mg of melatonin at night.", "Actually I take 5 mg of melatonin at night."),
    ("用户的狗4岁了。", "其实用户的狗5岁了。"),
])
def test_a_change_said_with_another_number_replaces_the_statement(mem, old, new):
    """A statement said again with another number, as a correction or a change, leaves
    one live fact: the new one (the old is history), and the model sees only it."""
    s = mem.scope(user="nu")
    first = s.remember(old)
    second = s.remember(new)
    assert [f.id for f in s.facts()] == [second.id]
    assert s.get(first.id).status is Status.SUPERSEDED
    assert old not in str(s.context("How old is my dog and what do I take?", budget=2000).to_messages())


@pytest.mark.parametrize("old, new", [
    ("My dog is 4 years old.", "My cat is 5 years old."),  # another subject
    ("I have 2 cats.", "I now have 3 dogs."),  # another thing counted
    ("My sister is 30.", "Actually my sister is 31."),  # someone else's: another rule's
    ("I sleep 7 hours.", "Actually I sleep 7 hours on weekends."),  # no other number
    ("The user runs 5 km on Mondays.", "The user runs 10 km on Fridays."),  # no change said: both may hold
    # a number that names the thing, or a time: another thing (a red team's cases)
    ("Ticket 4821 is resolved.", "Ticket 4822 is now resolved."),
    ("Chapter 3 of my thesis is done.", "Chapter 4 of my thesis is now done."),
    ("I returned order 5521 to Amazon.", "Now I returned order 7730 to Amazon."),
    ("Flight TP1353 is confirmed.", "Flight TP1354 is now confirmed."),
    ("Version 2.1 of the app is live.", "Version 2.2 of the app is now live."),
    ("Season 1 of Severance is great.", "Season 2 of Severance is actually great."),
    ("I have a dentist appointment on 2025-05-03.", "I now have a dentist appointment on 2025-06-10."),
    ("我在看第3章。", "现在我在看第4章。"), ("我住在3号楼。", "现在我住在5号楼。"),
    ("I watch S02E05 tonight.", "I now watch S02E06 tonight."), ("I use Node 18 LTS.", "I now use Node 20 LTS."),
    ("I have standup at 9am.", "I now have standup at 10am."), ("I wake up at 6:30 daily.", "I now wake up at 7:15 daily."),
    ("I started coding in 2015 professionally.", "Actually I started coding in 2012 professionally."),
])
def test_another_statement_or_no_change_leaves_both(mem, old, new):
    s = mem.scope(user="nu")
    s.remember(old)
    s.remember(new)
    assert len(s.facts()) == 2


def test_correcting_the_role_keeps_the_employer_said_with_it(mem):
    """"I work as a data analyst at Feedzai." is two facts; "No wait, I'm actually a data
    engineer" corrects the role, and the employer stays — in the facts and the profile."""
    s = mem.scope(user="nu")
    s.learn([{"id": "u1", "role": "user", "content": "I work as a data analyst at Feedzai."}], thread_id="t")
    assert sorted((f.key, f.content) for f in s.facts()) == [("employer", "The user works at Feedzai."),
                                                             ("job_role", "The user works as a data analyst.")]
    s.learn([{"id": "u2", "role": "user", "content": "No wait, I'm actually a data engineer, not an analyst."}],
            thread_id="t")
    assert {f.key: f.content for f in s.facts()}["employer"] == "The user works at Feedzai."
    said = s.profile().sections["work_context"].summary
    assert "Feedzai" in said and "data engineer" in said and "data analyst." not in said


def test_a_new_job_retires_the_old_employer_and_role(mem):
    s = mem.scope(user="nu")
    s.learn([{"id": "u1", "role": "user", "content": "I work as a data analyst at Feedzai."}], thread_id="t")
    s.learn([{"id": "u2", "role": "user", "content": "I quit Feedzai and joined Stripe as a staff engineer."}],
            thread_id="t")
    said = " ".join(f.content for f in s.facts())
    assert "Stripe" in said and "Feedzai" not in said and "data analyst" not in said


@pytest.mark.parametrize("held, said", [("I live in New York.", "I moved from York to Leeds."),
                                        ("I live in Berlin, not Hamburg.", "I moved from Hamburg to Munich."),
                                        ("I live in Berlin and work in Potsdam.", "We moved from Potsdam to Leipzig.")])
def test_a_move_from_another_place_named_in_the_home_fact_leaves_it(mem, held, said):
    s = mem.scope(user="nu")
    home = s.remember(held)
    s.remember(said)
    assert s.get(home.id).status is Status.COMMITTED
