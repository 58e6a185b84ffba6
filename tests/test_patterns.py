"""The offline extractor's pattern table: every pattern proves itself with its own examples,
and the pieces around it (clauses, third person, relative times) do what the docs say."""

from datetime import datetime

import pytest

from archivist.model.timerefs import anchor, find_time_refs
from archivist.pipeline.filtering import filter_messages
from archivist.pipeline.patterns import PATTERNS
from archivist.pipeline.rules import clauses, extract_rules

AT = datetime(2024, 3, 5, 10, 0)


def extract(text, at=AT):
    return extract_rules(filter_messages([{"id": "u1", "role": "user", "content": text}], at=at)).facts


EXAMPLES = [(p.name, text, expected) for p in PATTERNS for text, expected in p.examples]


def test_every_pattern_has_examples():
    assert [p.name for p in PATTERNS if not p.examples] == []
    assert len({p.name for p in PATTERNS}) == len(PATTERNS)


@pytest.mark.parametrize("name, text, expected", EXAMPLES, ids=[f"{n}:{t[:30]}" for n, t, _ in EXAMPLES])
def test_pattern_examples(name, text, expected):
    facts = extract(text, at=None)
    mine = [f for f in facts if f["pattern"] == name]
    if expected is None:
        assert mine == [], f"{name} should not fire on {text!r}: {mine}"
        return
    assert expected in [f["content"] for f in mine], [(f["pattern"], f["content"]) for f in facts]
    for fact in mine:  # the quote is the user's words, in the cited message
        assert fact["evidence_message_id"] == "u1"
        assert fact["evidence_text"] in text


@pytest.mark.parametrize("text, expected", [
    ("Hi! I'm a backend engineer at a fintech startup. Can you review this?",
     ["I'm a backend engineer at a fintech startup"]),
    ("好的，不过以后解释代码请先给最小示例", ["以后解释代码请先给最小示例"]),
    ("记住，我对花生过敏。谢谢！", ["记住，我对花生过敏"]),
    ("I prefer concise answers, thanks.", ["I prefer concise answers"]),
    ("```\nI am a robot\n```\nI live in Oslo.", ["I live in Oslo"]),
    ("e.g. this one. I live in Oslo", ["e.g. this one", "I live in Oslo"]),
])
def test_clauses_cut_greetings_politeness_and_pasted_text(text, expected):
    assert [c.quote for c in clauses(text) if not c.question] == expected


def test_a_question_clause_states_nothing_but_its_neighbour_does():
    facts = extract("我主要做 Python 后端开发，你觉得 Go 怎么样？")
    assert [f["content"] for f in facts] == ["用户主要做 Python 后端开发。"]


def test_sarcasm_and_other_peoples_words_are_not_patterns():
    assert extract("Remember Jon, Just do it!") == []
    assert extract("I love it") == []


@pytest.mark.parametrize("text, zh, expected", [
    ("Lost my job yesterday", False, "Lost my job yesterday (on 2024-03-04)"),
    ("I start next month", False, "I start next month (in April 2024)"),
    ("started about five years ago", False, "started about five years ago (around 2019)"),
    ("我上周刚搬到成都", True, "我上周（2024年2月26日那周）刚搬到成都"),
    ("下个月要去东京", True, "下个月（2024年4月）要去东京"),
    ("我三年前去过", True, "我三年前（2021年）去过"),
    ("上周三开始的", True, "上周三（2024年2月28日）开始的"),
    ("nothing relative here", False, "nothing relative here"),
])
def test_relative_times_are_anchored_to_the_message(text, zh, expected):
    assert anchor(text, AT, zh=zh) == expected


def test_year_boundaries_and_leap_days():
    (ref,) = find_time_refs("yesterday", datetime(2024, 1, 1))
    assert ref.day.isoformat() == "2023-12-31"
    (ref,) = find_time_refs("下个月", datetime(2024, 12, 10))
    assert (ref.day.year, ref.day.month, ref.precision) == (2025, 1, "month")
    (ref,) = find_time_refs("yesterday", datetime(2024, 3, 1))
    assert ref.day.isoformat() == "2024-02-29"


def test_a_fact_takes_its_time_from_the_message(tmp_path):
    from archivist import Memory

    memory = Memory.open(tmp_path / "m.db")
    scope = memory.scope("t", "u")
    report = scope.learn([{"id": "m1", "role": "user", "content": "I moved to Lisbon last week.",
                           "metadata": {"timestamp": "2023-05-08T13:56:00Z"}}])
    (fact,) = report.saved
    assert fact.valid_from.isoformat().startswith("2023-05-08")
    assert "2023-05-01" in fact.content
    report = scope.learn([{"id": "m2", "role": "user", "content": "I'm learning Rust."}], at="2023-06-01T09:00:00Z")
    (focus,) = report.saved
    assert focus.valid_from.isoformat().startswith("2023-06-01") and focus.valid_until is not None
    memory.close()


def test_forget_removes_the_fact_it_names(tmp_path):
    from archivist import Memory

    memory = Memory.open(tmp_path / "m.db")
    scope = memory.scope("t", "u")
    scope.learn([{"id": "m1", "role": "user", "content": "I have a cat named Mochi."}])
    report = scope.learn([{"id": "m2", "role": "user", "content": "Please forget that I have a cat."}])
    assert [f.content for f in report.removed] == ["The user has a cat named Mochi."]
    assert scope.facts() == []
    scope.learn([{"id": "m3", "role": "user", "content": "我住在杭州"}])
    report = scope.learn([{"id": "m4", "role": "user", "content": "算了，别记我住在哪了"}])
    assert [f.content for f in report.removed] == ["用户住在杭州。"]
    memory.close()


def test_profile_sections_follow_the_facts(tmp_path):
    from archivist import Memory

    memory = Memory.open(tmp_path / "m.db")
    scope = memory.scope("t", "u")
    scope.learn([{"id": "m1", "role": "user", "content": "I'm a data engineer at Spotify. I live in Berlin."}])
    sections = scope.profile().sections
    assert sections["work_context"].summary == "The user is a data engineer at Spotify."
    assert sections["personal_context"].summary == "The user lives in Berlin."
    assert sections["work_context"].source_message_ids == ("m1",) or list(sections["work_context"].source_message_ids) == ["m1"]
    scope.learn([{"id": "m2", "role": "user", "content": "Actually, I moved to Munich."}])
    assert scope.profile().sections["personal_context"].summary == "The user moved to Munich."
    memory.close()


def test_what_the_extractor_declines_is_audited_with_a_reason(tmp_path):
    from archivist import Memory

    memory = Memory.open(tmp_path / "m.db")
    scope = memory.scope("t", "u")
    scope.learn([{"id": "m1", "role": "user", "content": "My name is Alice."}])
    report = scope.learn([{"id": "m2", "role": "user", "content": "I'm Groot!"},
                          {"id": "m3", "role": "user", "content": "我同事小王对芒果过敏。"},
                          {"id": "m4", "role": "user", "content": "I'm a doctor. Just kidding!"}])
    assert report.saved == []
    codes = sorted(why.code for _, why in report.rejected)
    assert codes == ["not_a_name", "not_real", "someone_else"]
    audited = {(e.message_id, e.code) for e in scope.audit() if e.action == "reject"}
    assert {("m2", "not_a_name"), ("m3", "someone_else"), ("m4", "not_real")} <= audited
    assert [f.content for f in scope.facts()] == ["The user's name is Alice."]
    memory.close()


def test_long_runs_of_blanks_and_odd_characters_are_read(tmp_path):
    from archivist import Memory

    memory = Memory.open(tmp_path / "m.db")
    scope = memory.scope("t", "u")
    for i, text in enumerate(["I'm" + " " * 20000 + "vegan", "Ｉ'ｍ ａｌｌｅｒｇｉｃ ｔｏ ｐｅａｎｕｔｓ", "I\u200b live in Os\u200blo",
                              "我养了一只\u200d猫", "x" * 60000]):
        scope.learn([{"id": f"m{i}", "role": "user", "content": text}])
    assert sorted(f.content for f in scope.facts()) == [
        "The user is allergic to peanuts.", "The user is vegan.", "The user lives in Oslo.", "用户养了一只猫。"]
    memory.close()
