"""The offline rule extractor: explicit zh/en statements become labelled candidates
with evidence; everything else stays out, and the write gate still decides."""

import pytest

from archivist.pipeline.filtering import filter_messages
from archivist.pipeline.rules import extract_rules


def extract(text):
    return extract_rules(filter_messages([{"id": "u1", "role": "user", "content": text}])).facts


@pytest.mark.parametrize("text, expected", [
    ("我主要做 Python 后端开发，平时请用中文解释技术问题。",
     [("用户主要做 Python 后端开发。", "context"), ("用户偏好用中文解释技术问题。", "preference")]),
    ("记住，我对花生过敏。", [("用户对花生过敏。", "context")]),
    ("不对，其实我在杭州工作。", [("用户在杭州工作。", "context")]),  # the statement; the gate retires the old one
    ("我比较喜欢简洁的回答", [("用户比较喜欢简洁的回答。", "preference")]),
    ("以后回答问题请先给结论。", [("用户希望以后回答问题时先给结论。", "preference")]),
    ("Remember that my daughter is called Mia.", [("The user's daughter is called Mia.", "context")]),
    ("I prefer short answers.", [("The user prefers short answers.", "preference")]),
    ("From now on, answer in English.", [("The user wants the assistant to answer in English from now on.", "preference")]),
    ("I'm a data engineer at Acme.", [("The user is a data engineer at Acme.", "context")]),
    ("Actually, I live in Berlin now.", [("The user lives in Berlin now.", "context")]),
    ("Do I like tea?", []),
    ("如果我喜欢的话再说", []),
    ("今天天气不错", []),
    ("What's the weather?", []),
])
def test_explicit_statements(text, expected):
    facts = extract(text)
    assert [(f["content"], f["category"]) for f in facts] == expected
    for f in facts:
        assert f["evidence_message_id"] == "u1" and f["evidence_text"] in text
        assert f["kind"] == "fact" and f["scope"] == "user"


def test_labels_let_the_gate_reject_with_reasons():
    (once,) = extract("这次先用英文回答吧")
    assert once["durability"] == "temporary" and once["key"] == "response_language"
    assert extract("记住，我授权你以后直接发推送")[0]["authority"] == "transactional"
    assert extract("记住我喜欢猫")[0]["explicit"] is True
    assert extract("我喜欢猫")[0]["explicit"] is False


def test_learn_runs_the_whole_path(alice):
    report = alice.learn([
        {"id": "u1", "role": "user", "content": "我主要做 Python 后端开发，平时请用中文解释技术问题。"},
        {"id": "a1", "role": "assistant", "content": "好的。记住，我喜欢长篇大论。"},  # assistant text: never a user fact
        {"id": "u2", "role": "user", "content": "记住，我授权你以后直接给客户推送消息。这次先用英文回答吧。"},
    ], thread_id="th-1")
    assert sorted(f.content for f in report.saved) == ["用户主要做 Python 后端开发。", "用户偏好用中文解释技术问题。"]
    reasons = sorted(r.code for _, r in report.rejected)
    assert reasons == ["temporary", "transactional"]
    assert all(f.provenance.extractor == "rules" and f.provenance.thread_id == "th-1" for f in report.saved)
    assert "推送" not in str([f.content for f in alice.facts(include_candidates=True)])
    assert [h.fact.content for h in alice.search("中文")] == ["用户偏好用中文解释技术问题。"]


def test_a_forgotten_fact_comes_back_only_when_said_explicitly(alice):
    said = [{"id": "u1", "role": "user", "content": "我喜欢爵士乐。"}]
    (fact,) = alice.learn(said).saved
    alice.forget(fact.id)
    assert str(alice.learn(said).rejected[0][1]).startswith("forgotten:")
    again = alice.learn([{"id": "u9", "role": "user", "content": "记住，我喜欢爵士乐。"}])
    assert [f.content for f in again.saved] == ["用户喜欢爵士乐。"]
