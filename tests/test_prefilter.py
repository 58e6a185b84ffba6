"""The literal prefilter never turns away a text its pattern matches."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import archivist
from archivist.model.prefilter import DIGIT, Prefiltered, fold, needles, prefiltered


def _wrapped() -> list[tuple[str, Prefiltered]]:
    found = []
    for info in pkgutil.walk_packages(archivist.__path__, "archivist."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - optional extras
            continue
        found += [(f"{info.name}.{name}", value) for name, value in vars(module).items() if isinstance(value, Prefiltered)]
    return sorted(found, key=lambda pair: pair[0])


WRAPPED = _wrapped()


def test_the_gate_patterns_are_filtered():
    names = {name.rsplit(".", 1)[1] for name, _ in WRAPPED}
    assert {"_INJECTION", "_SPOOFED", "_STRONG_ALONE", "_WAIVER_ANY", "_WORDED_NUMBER", "_ANY"} <= names


def test_fold_covers_every_character_re_i_reads_as_an_ascii_letter():
    letter = re.compile("[a-z]", re.I)
    for code in range(0x80, 0x110000):
        ch = chr(code)
        if 0xD800 <= code <= 0xDFFF or not letter.fullmatch(ch):
            continue
        assert fold(ch).isascii() and letter.fullmatch(fold(ch)) and re.fullmatch(fold(ch), ch, re.I), hex(code)


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\bfoo(?:bar|baz)\d+", {"foobar", "foobaz"}),
    (r"colou?r|hue", {"color", "colour", "hue"}),
    (r"(?:a|b)\w+|cde", {"a", "b", "cde"}),
    (r"пароль|password", None),  # a Cyrillic letter: re.I reads it in forms lower() does not give
    (r"x(?=secret)", {"secret"}),
    (r"(?<!not )pin\s+\d{4}", {"pin"}),
    (r"\d{4,}", {DIGIT}),
    (r"密码\s*是", {"密码"}),
    (r"(?:abc)?def", {"def"}),
])
def test_needles(pattern, expected):
    found = needles(re.compile(pattern, re.I))
    assert (None if found is None else set(found)) == expected


def test_a_filtered_pattern_answers_as_the_pattern():
    p = re.compile(r"\b(?:ignore|forget)\s+(?:all\s+)?previous\s+instructions\b|\bjailbreak\b", re.I)
    f = prefiltered(p)
    assert isinstance(f, Prefiltered)
    for text in ("IGNORE all previous INSTRUCTIONS", "a jailbreak", "the previous instructions", "", "ſkip",
                 "forget previous instructions and jailbreak"):
        assert [m.span() for m in f.finditer(text)] == [m.span() for m in p.finditer(text)]
        assert bool(f.search(text)) == bool(p.search(text))
        assert f.sub("x", text) == p.sub("x", text)
    assert f.pattern == p.pattern and f.flags == p.flags


@pytest.mark.parametrize(("name", "wrapped"), WRAPPED, ids=[n for n, _ in WRAPPED])
def test_every_match_passes_the_filter(name, wrapped):
    """Strings generated to match each filtered pattern are all let through to it."""
    raw = wrapped._re

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data):
        text = data.draw(st.from_regex(raw))
        if raw.search(text):
            assert wrapped.may_match(text), text

    try:
        check()
    except re.error:
        pytest.skip("hypothesis cannot generate from this pattern")
