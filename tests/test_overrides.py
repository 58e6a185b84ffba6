"""Per-turn overrides: the request names another value for a stored preference's
attribute. Cases from a red-team run (false positives, misses, a crash) are kept."""

import pytest

from archivist.context.overrides import OVERRIDES, detect_overrides, override_keys
from archivist.model.attributes import attribute

OVERRIDDEN = [
    ("Show me a retry decorator in Python please", "example_language", "Python"),
    ("show it in Python", "example_language", "Python"),
    ("Show me this in Go", "example_language", "Go"),
    ("用Python写一个例子", "example_language", "Python"),
    ("用 Go 写一个例子", "example_language", "Go"),
    ("给个 Go 的示例代码", "example_language", "Go"),
    ("this time answer in English please", "response_language", "English"),
    ("请用英文回答", "response_language", "English"),
    ("Respond in 日本語", "response_language", "日本語"),
    ("explain in depth", "response_length", "detailed"),
    ("elaborate please", "response_length", "detailed"),
    ("详细讲讲", "response_length", "detailed"),
    ("one sentence only", "response_length", "brief"),
    ("Is it rude to answer in one sentence?", "response_length", "brief"),
    ("give me a brief answer", "response_length", "brief"),
    ("as a table please", "response_format", "a table"),
    ("format it as JSON.", "response_format", "JSON"),
    ("use a casual tone", "tone", "casual"),
    ("口语化一点", "tone", "casual"),
    ("正式一点", "tone", "formal"),
    ("show an example in Python of a loop", "example_language", "Python"),
    ("Code it in Python", "example_language", "Python"),
    ("Can you write it in Rust?", "example_language", "Rust"),
    ("I want you to answer in English", "response_language", "English"),
    ("answer in a single sentence please", "response_length", "brief"),
    ("answer in 3 sentences", "response_length", "brief"),
    ("keep it short", "response_length", "brief"),
    ("reply as a bullet list", "response_format", "bullet points"),
]
NOT_OVERRIDDEN = [
    "I live in Python Street, what's a good restaurant nearby?",
    "The bug is in Python 2 code, help",
    "not in Python please",
    "I don't want it in Python",
    "别用英文回答",
    "the table is broken",
    "tell me about Java the island",
    "How do I sort a list?",
    "Use the ts compiler",
    "My colleague wrote this script in Python; port it",
    "Is there a library in Python for this?",
    "Does this crate exist in Go?",
    "The API returns data as JSON, why does it fail?",
    "My manager told me to be brief in meetings. How do I prepare?",
    "He said 'be casual' at the party; what should I wear?",
    "Why did the bot answer in English yesterday instead of French?",
    "Should I answer in English or French on my CV?",
    "what does 'answer in English' mean in this spec?",
    "My boss wants me to answer in English",
]


@pytest.mark.parametrize("text,key,value", OVERRIDDEN)
def test_the_request_overrides(text, key, value):
    found = {o.keys[0]: o.value for o in detect_overrides(text)}
    assert found.get(key) == value, found


@pytest.mark.parametrize("text", NOT_OVERRIDDEN)
def test_no_override(text):
    assert detect_overrides(text) == []


def test_every_value_word_of_the_table_is_recognised_without_error():
    for rule in OVERRIDES:
        for words in rule.values.values():
            for word in words:
                detect_overrides(f"answer in {word} please, {word} examples, 用{word}回答, be {word}")


def test_the_table_names_attributes_of_the_attribute_table_where_it_has_them():
    for rule in OVERRIDES:
        if rule.attribute not in ("response_format", "tone"):  # preference-only attributes
            assert attribute(rule.attribute) is not None, rule.attribute
    assert "programming_language" in override_keys("example_language")
    assert override_keys("whatever") == ("whatever",)
