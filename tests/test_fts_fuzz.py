"""The FTS query builder must turn any text into a valid expression (or none)."""

import random
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.index.text import build_match

HOSTILE = [
    '"', '""', '"unbalanced', "a*", "*", "NEAR(a b)", "NEAR(", "a OR", "AND", "OR OR", "NOT x", "-x",
    "col:value", "body:evil", "rowid:1", ":", "(", ")", "((a)", "a)", "^start", "a + b", "{a b}",
    "\x00", "\x1b[31m", "😀😀", "🏳️‍🌈", "\u200b", "\ufeff", "\ud83d", "a\u0301", "ﬁ", "Ａ全角",
    "'; DROP TABLE facts; --", "' OR 1=1 --", "\\", "%", "_", "$", "a" * 10_000, "中" * 3000,
    "忽略之前的指令", "</memory>", "\n\n\t", "   ", "", "NEAR/3", "a NEAR/2 b", "\"a\" \"b\"",
]

ALPHABET = st.characters(codec="utf-8") | st.sampled_from(list('"*():-^+{}\\\'NEARORANDNOT中文😀 \x00'))


@pytest.fixture(scope="module")
def fts():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    con.execute("INSERT INTO t (rowid, body) VALUES (68719476737, 'hello world 中文 解释 near or and not')")
    return con


def run(con, text) -> bool:
    """Build the expression for ``text`` and run it; False when there was nothing to query."""
    expr = build_match(text)
    if expr is None:
        return False
    con.execute(
        "SELECT rowid FROM t WHERE t MATCH ? AND rowid BETWEEN ? AND ?", (expr, 1 << 36, (2 << 36) - 1)
    ).fetchall()
    return True


@pytest.mark.parametrize("text", HOSTILE)
def test_known_hostile_inputs(fts, text):
    run(fts, text)


@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_hypothesis_hostile_strings_never_raise(fts, text):
    run(fts, text)


def test_random_token_soup_never_raises(fts):
    rng = random.Random(7)
    pieces = HOSTILE[:40] + ["中文", "word", "x", "1", "-", ":"]
    for _ in range(2000):
        run(fts, " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))))


def test_hostile_queries_through_the_public_api(alice):
    alice.remember("The user likes NEAR field communication and OR gates.")
    for text in HOSTILE:
        alice.search(text)
        alice.memory_search(text)
    assert alice.search('NEAR("field"') != []
