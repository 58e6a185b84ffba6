"""Updates replace, corrections retire what they contradict, duplicates stay one fact —
through ``remember`` and through ``learn`` with the offline extractor, zh and en."""

from __future__ import annotations

import pytest


def live(scope) -> list[str]:
    return sorted(f.content for f in scope.facts())


@pytest.mark.parametrize("old, new, key", [
    ("用户偏好用中文解释技术问题。", "用户偏好用英文解释技术问题。", "response_language"),
    ("用户偏好深色主题。", "用户偏好浅色主题。", "ui_theme"),
    ("用户习惯早上写代码。", "用户习惯晚上写代码。", "coding_time"),
    ("The user prefers dark mode.", "The user prefers light mode.", "ui_theme"),
])
def test_a_one_character_change_of_a_keyed_value_supersedes(alice, clock, old, new, key):
    first = alice.remember(old, category="preference", key=key)
    clock.advance(minutes=1)
    second = alice.remember(new, category="preference", key=key)
    assert second.id != first.id and second.supersedes == first.id and second.version == 2
    assert live(alice) == [new]
    assert [f.content for f in alice.key_history(key)] == [old, new]
    entry = next(e for e in alice.audit() if e.fact_id == second.id)
    assert entry.code == "supersedes" and first.id in entry.reason  # the audit names both


def test_the_same_value_again_is_a_duplicate(alice):
    first = alice.remember("用户偏好深色主题。", key="ui_theme")
    assert alice.remember("用户偏好深色主题", key="ui_theme").id == first.id
    assert alice.remember("用户每天早上喝绿茶。").id == alice.remember("用户每天早上都喝绿茶").id


@pytest.mark.parametrize("old, new", [
    ("The user lives in London.", "The user lives in Berlin."),
    ("用户住在北京。", "用户住在上海。"),
    ("The user's editor is Vim.", "The user now uses VS Code as their editor."),
    ("The user follows a vegetarian diet.", "The user follows a vegan diet."),
])
def test_a_forgotten_key_is_inferred_so_the_new_value_replaces_the_old(alice, clock, old, new):
    alice.remember(old)
    clock.advance(minutes=1)
    report = alice.remember_many([{"content": new}])
    assert [f.content for f in report.superseded] == [old] and live(alice) == [new]


@pytest.mark.parametrize("turns, expected", [
    (["我住在北京", "不对，我现在在上海工作了"], ["用户现在在上海工作了。"]),
    (["I prefer tabs", "I've switched to spaces"], ["The user has switched to spaces."]),
    (["平时请用中文解释技术问题", "From now on, please answer in English"],
     ["The user wants the assistant to answer in English from now on."]),
    (["I'm a Java engineer", "Actually, I moved to Berlin"], ["The user is a Java engineer.", "The user moved to Berlin."]),
])
def test_corrections_through_learn_retire_what_they_contradict(alice, clock, turns, expected):
    for n, text in enumerate(turns):
        clock.advance(minutes=1)
        alice.learn([{"id": f"m{n}", "role": "user", "content": text}])
    assert live(alice) == sorted(expected)


def test_a_statement_without_a_correction_cue_does_not_retire_another_attribute(alice, clock):
    alice.learn([{"id": "m1", "role": "user", "content": "我住在北京"}])
    clock.advance(minutes=1)
    alice.learn([{"id": "m2", "role": "user", "content": "我现在在上海工作"}])
    assert live(alice) == ["用户住在北京。", "用户现在在上海工作。"]


def test_a_correction_is_stored_as_the_statement_not_as_a_correction_note(alice):
    report = alice.learn([{"id": "m1", "role": "user", "content": "Actually, I moved to Berlin"}])
    assert [(f.content, f.category.value, f.key) for f in report.saved] == [
        ("The user moved to Berlin.", "context", "home_city")]
