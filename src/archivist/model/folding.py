"""Text folding for comparisons, and the content hash built on it.

Every policy check (grants, secrets, injection, evidence, duplicates) compares folded
text, so that a zero-width space, a bidi mark, full-width letters or a run of spaces
can neither hide a phrase from a check nor make two equal statements differ.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any
import unicodedata

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # + terminal escapes
_SPACE = re.compile(r"\s+")
# Brackets that read like "<" and ">" to a model but survive NFKC as other characters
# (angle quotation marks, ornaments, mathematical and CJK angle brackets, Canadian
# syllabics PA/PO, which look exactly like them; « » and Chinese title marks 《 》 too, for
# checks — rendering keeps title marks unless they wrap a tag name).
_LT, _GT = "‹〈〈⟨⟪❬❮❰⦑⧼﹤＜˂ᐸᑉ⟬⦉⋖≺⊰⦓⦕«《", "›〉〉⟩⟫❭❯❱⦒⧽﹥＞˃ᐳᑊ⟭⦊⋗≻⊱⦔⦖»》"
LOOKALIKE_BRACKETS = str.maketrans({**{c: "<" for c in _LT}, **{c: ">" for c in _GT}})
# Letters of other scripts that look like Latin ones ("fоrce-push" with a Cyrillic о):
# folded for checks, so a look-alike spelling reads as what it shows.
LOOKALIKE_LETTERS = str.maketrans(
    "аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХІЈЅαβεικνορτυχοΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlqwvABEKMHOPCTXIJSabeiknoptuxoABEZHIKMNOPTYX",
)
# Default-ignorable code points that are not format characters: the combining grapheme
# joiner, Hangul fillers, variation selectors, Mongolian free variation selectors.
_IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0"
                        "\U000e0100-\U000e01ef]")


# Format characters (Unicode 14 general category Cf: zero-width, bidi controls, soft
# hyphen, tags, …), as ranges: one regex pass instead of a category look-up per character.
_FORMAT = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def sanitize(text: str) -> str:
    """What is stored of user text: NFC, without control characters (form feeds,
    vertical tabs, NULs from copy-paste; tab and newline stay) and without invisible
    format characters. Lone surrogates are left for the caller's validity check."""
    text = _CONTROL.sub("", text)
    if text.isascii():  # nothing invisible, nothing to compose
        return text
    return unicodedata.normalize("NFC", _FORMAT.sub("", _IGNORABLE.sub("", text)))


@functools.lru_cache(maxsize=8192)  # the same texts are compared again and again in one write
def normalize(text: str) -> str:
    """The folded form every check compares: NFKC, invisible characters removed,
    look-alike brackets and letters mapped to ASCII, case-folded, whitespace runs collapsed."""
    folded = unicodedata.normalize("NFKC", sanitize(text)).translate(LOOKALIKE_BRACKETS)
    folded = folded.translate(LOOKALIKE_LETTERS).casefold()
    return _SPACE.sub(" ", folded).strip()


def compact(text: str) -> str:
    """:func:`normalize` without whitespace or punctuation: "好的, 谢谢!" == "好的谢谢"."""
    return "".join(ch for ch in normalize(text) if ch.isalnum())


def unspaced(text: str) -> str:
    """:func:`normalize` without any whitespace: quotes match whatever the spacing."""
    return _SPACE.sub("", normalize(text))


def content_hash(text: str) -> str:
    """Hash of the folded content: equal for texts that differ only in width/case/spacing."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def cache_key(tenant: str, text: str) -> str:
    """The embedding cache's key for ``text`` embedded for ``tenant``: one tenant never
    hits (or, forgetting, deletes) another's cached vector, so how fast a write is says
    nothing about what other tenants stored."""
    return content_hash(f"{tenant}\x1f{text}")


EXCERPT_CHARS = 80  # a trace names what it chose or dropped by this much of its text


def excerpt(text: str) -> str:
    """The start of a text for a trace: enough to recognise it, never the whole (one line)."""
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@functools.lru_cache(maxsize=2)
def _opencc(config: str) -> Any:
    import opencc  # a core dependency: conversion tables ship with the package, nothing downloads

    return opencc.OpenCC(config)


def simplified(text: str) -> str:
    """``text`` with Traditional Chinese characters in their Simplified form (OpenCC t2s):
    what matching reads, so "我對花生過敏" is read as "我对花生过敏"."""
    return _convert("t2s", text)


def _convert(config: str, text: str) -> str:
    if not _HAN.search(text):
        return text
    try:
        return _opencc(config).convert(text)
    except UnicodeError:  # a lone surrogate: not text OpenCC can read; matched as it is
        return text


def traditional(text: str) -> str:
    """``text`` in Traditional characters (OpenCC s2t): a fact read from a Traditional
    message is written back in the user's own script."""
    return _convert("s2t", text)
