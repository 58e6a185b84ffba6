"""The keys the store finds a statement by when the write gate compares it with what is kept.

Two of the gate's comparisons are equalities on a folded form of the text, so the store
can index them instead of searching and comparing every fact:

* **near-duplicate** (:func:`~archivist.pipeline.governance.is_near_duplicate`): the same
  text without spacing and punctuation, or the same meaning-bearing words, numbers and
  negations (:func:`meaning`);
* **polarity contradiction** (:func:`~archivist.pipeline.contradictions.contradicts`):
  the same statement once its subject, negation, tail and adverbs of how often are set
  aside (:func:`statement_core`).

A key is a short hash of that form. The store returns the facts sharing a key and the
gate compares the texts themselves: a collision costs one comparison, never a decision.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from typing import NamedTuple

from ..model.attributes import about_someone_else
from ..model.folding import normalize, simplified
from ..model.memo import memo
from .text import query_terms

# a number as written: its sign, decimal point, separators and unit mark ("-5", ".5", "2.5",
# "1,500", "1/12/1990", "1:30", "10.0.0.1", "50%"): "2.5 mg" and "25 mg" are two doses
_NUMBERS = re.compile(r"(?:(?<![\w.])[-+])?(?:(?<!\w)\.)?\d+(?:[.,:/\-]\d+)*%?")
# a sign that ends a word ("A-", "O−") or a dot that starts one (".NET")
_EDGE_MARKS = re.compile(r"(?<=[^\W\d_])-(?!\w)|(?<![\w.])\.(?=[^\W\d_])")
_NEGATIONS = re.compile(r"不|没|别|非|无|未|\bnot\b|\bno\b|\bnever\b|n't|\bnor\b|\bwithout\b|\bno longer\b|"
                        r"\bcannot\b")
# every dash reads as a minus sign; superscript and subscript digits keep their place
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"})
_SCRIPTS = str.maketrans({**{c: f"^{i}" for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
                          **{c: f"_{i}" for i, c in enumerate("₀₁₂₃₄₅₆₇₈₉")}, "⁺": "^+", "⁻": "^-"})
_INTRA = frozenset(".-_/:'@")  # kept between two letters or digits: "bob.smith", "re-sent", "we'll"
_KEPT_PUNCT = frozenset("#%&@‰*")
# the only words a restatement may add or drop: "an", "the", "their" (the user's, in a
# card about "the user") and the Chinese adverbs 都 and 也. Every other word counts, in its
# order: "prefers Python over Java" is not "prefers Java over Python", "notifications on"
# not "off", "his job" not "her job", "他的" not "她的", "vitamin A" not "the vitamin".
FILLERS = frozenset({"an", "the", "their", "都", "也"})


def _folded_form(text: str) -> str:
    """Case, width and Traditional characters folded; dashes, super- and subscripts kept."""
    return simplified(normalize(text.translate(_SCRIPTS))).translate(_DASHES)


def _kept(ch: str) -> bool:
    """Symbols (maths, currency, emoji, arrows), combining marks, and the punctuation
    that says something (#, %, &, @): what a restatement cannot drop."""
    category = unicodedata.category(ch)
    return category[0] in "SM" or ch in _KEPT_PUNCT


def _marks(folded: str) -> tuple[str, ...]:
    return tuple(ch for ch in folded if _kept(ch)) + tuple(_EDGE_MARKS.findall(folded))


@functools.lru_cache(maxsize=8192)  # a candidate is compared with many stored facts; each is cut once
def text_form(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The text without case, width, spacing and sentence punctuation, with everything
    else as written — numbers, symbols, emoji, combining marks, and the dots, dashes and
    apostrophes inside a word: "The user likes tea." and "the user likes tea" are one
    text; "takes 2.5 mg" / "takes 25 mg", "A+" / "A-", "bob.smith@x" / "bobsmith@x",
    "I like 🍎" / "I like" are two."""
    folded = _folded_form(text)
    last = len(folded) - 1
    tight = "".join(ch for i, ch in enumerate(folded) if ch.isalnum() or _kept(ch) or (
        ch in _INTRA and 0 < i < last and folded[i - 1].isalnum() and folded[i + 1].isalnum()))
    return tight, tuple(_NUMBERS.findall(folded)), _marks(folded)


@functools.lru_cache(maxsize=8192)
def meaning(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The words in order (:data:`FILLERS` aside), numbers, symbols and negations:
    "每天早上喝绿茶" and "每天早上都喝绿茶" have one meaning, "深色" and "浅色" two, and so
    do two statements that name the same things in another order."""
    folded = _folded_form(text)
    words = tuple(query_terms(folded, stopwords=FILLERS, limit=10_000))
    return words, tuple(_NUMBERS.findall(folded)), _marks(folded), tuple(_NEGATIONS.findall(folded))


_SUBJECT = re.compile(r"^(?:the user(?:'s)?|user|用户|该用户|我)\s*", re.I)
EN_NEGATION = re.compile(r"\b(?:not|never|no longer|cannot)\b|n't\b", re.I)
_EN_AUX = re.compile(r"\b(?:do|does|did|is|are|am|was|were|ca|can|wo|will)\b", re.I)
_EN_TAIL = re.compile(r"\b(?:any ?more|any longer|at all)\b|[.!。！]+$", re.I)
ZH_NEGATION = re.compile(r"不再|再也不|从不|从来不|并不|并没有|没有|不|没")
_ZH_TAIL = re.compile(r"了?[。！!.]*$")
# words that say how often or how much, not what: "I eat meat every day" / "I don't eat meat"
_EN_ADVERBS = re.compile(r"\b(?:really|actually|truly|just|so|very|much|quite|that|every ?day|daily|always|usually|often|"
                         r"regularly|all the time|at all)\b", re.I)
_ZH_ADVERBS = re.compile(r"真的|其实|实在|很|非常|太|特别|每天都?|天天|经常|总是|一直|都|也|还")
_STEM = re.compile(r"\b(\w{3,}?)(?:es|s|e)\b")  # "likes" / "like", "smokes" / "smoke"
_CJK = re.compile(r"[\u3400-\u9fff]")


def folded(text: str) -> str:
    """Compared as: Simplified characters, folded case and width, straight apostrophes."""
    return simplified(normalize(text).replace("\u2019", "'").replace("\u2018", "'")).strip()


@functools.lru_cache(maxsize=8192)
def statement_core(text: str) -> tuple[str, bool]:
    """The statement without its subject, negation, tail and adverbs of how often or how
    much, and whether it was negated."""
    t = _SUBJECT.sub("", folded(text))
    if _CJK.search(t):
        negated = bool(ZH_NEGATION.search(t))
        core = _ZH_ADVERBS.sub("", _ZH_TAIL.sub("", ZH_NEGATION.sub("", t)))
        core = re.sub(r"^(?:其实|现在|已经|也|还|都)+", "", core)
    else:
        negated = bool(EN_NEGATION.search(t))
        core = _EN_ADVERBS.sub(" ", _EN_TAIL.sub("", _EN_AUX.sub("", EN_NEGATION.sub(" ", t))))
        core = _STEM.sub(r"\1", " ".join(core.split()))
    return re.sub(r"\s+", "", core), negated


def _key(kind: str, form: str) -> int:
    """A signed 64-bit hash (an integer column on every backend: 8 bytes a row)."""
    return int.from_bytes(hashlib.blake2b(f"{kind}\0{form}".encode(), digest_size=8).digest(), "big", signed=True)


class Signatures(NamedTuple):
    """The lookup keys of one statement; ``None`` where the statement has no such form."""

    text: int  # the text as written, spacing and punctuation aside (:func:`text_form`)
    meaning: int | None  # meaning words, numbers, negations (none without a word)
    core: int | None  # the statement core, when it can take part in a polarity contradiction

    @classmethod
    def of(cls, text: str) -> Signatures:
        return signatures_of(text)


@memo(8192)  # a write asks for them three times: duplicates, the row, contradictions
def signatures_of(text: str) -> Signatures:
    """The keys of ``text``, kept per text (and seeded by :mod:`archivist.pipeline.batch_reading`)."""
    words = meaning(text)
    core = polarity_core(text)
    return Signatures(_key("t", repr(text_form(text))), _key("m", repr(words)) if words[0] else None,
                      _key("c", core) if core is not None else None)


def polarity_core(text: str) -> str | None:
    """The core two statements must share to contradict by polarity, or ``None`` when
    ``text`` cannot (too short, or about someone else)."""
    if about_someone_else(folded(text)):
        return None
    core, _ = statement_core(text)
    return core if len(core) >= 2 else None


__all__ = ["EN_NEGATION", "FILLERS", "ZH_NEGATION", "Signatures", "folded", "meaning", "polarity_core", "signatures_of",
           "statement_core", "text_form"]
