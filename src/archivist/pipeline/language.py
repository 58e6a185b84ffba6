"""Which texts the write gate can read. Pure (the language model ships with py3langid).

The gate's detectors (secrets, grants, injections) are written for English and Chinese.
Text in another language is not checked by them, so it is never trusted: what a model is
shown must be in a language the gate reads (DESIGN principle 9). Traditional Chinese is
read through its Simplified form (OpenCC ``t2s``).

Identification of very short texts is unreliable ("Haha yes!!" scores as Kabyle), so a
text of fewer than :data:`SHORT_WORDS` words written in plain ASCII is taken as readable;
anything longer, or in another script, must score at least :data:`MIN_SHARE` for English
plus Chinese. On LoCoMo's 5,882 turns one English turn scores below it ("Ah ha ha, yeah, JUST DOING
IT!"); none of the 1,214 messages of bench/zh_dailylife does. Identification is the costly
part of keeping a turn, so two plain cases skip it: ASCII text of which a third of the
words are English function words ("the", "I", "is", … — 4,856 of LoCoMo's turns), and text
whose every word is Han characters (no kana, no hangul). Text that mixes an order in
another language with enough English function words passes as English: the detectors then
read it as English, as they would any English text.
"""

from __future__ import annotations

import re
from functools import lru_cache

READ = ("en", "zh")
MIN_SHARE = 0.05
SHORT_WORDS = 4
_WORDS = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_HAN_ONLY = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
# words so common in English that a text made of a third of them is English (identification is
# then skipped: it is the costly part of keeping a turn)
_FUNCTION = frozenset("""the a an and or but of to in on at for with from by as is are was were be been am it
    this that these those i you he she we they me my your his her our their not no do does did have has had
    will would can could should so if what when where who how just very too there here""".split())


def _plainly_english(words: list[str]) -> bool:
    return len(words) >= SHORT_WORDS and sum(w.lower() in _FUNCTION for w in words) * 3 >= len(words)


@lru_cache(maxsize=1)
def _identifier():
    import py3langid.langid as langid

    return langid.LanguageIdentifier.from_modelpath(langid.MODEL_DIR / langid.MODEL_FILE, norm_probs=True)


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """``text`` with Traditional Chinese characters in their Simplified form."""
    return _t2s().convert(text) if _CJK.search(text) else text


def readable(text: str) -> bool:
    """True when the gate can read ``text`` (English or Chinese, or too short to tell in ASCII)."""
    words = _WORDS.findall(text)
    if not words:
        return True  # digits, punctuation, emoji: nothing a detector reads differently by language
    if text.isascii() and (len(words) < SHORT_WORDS or _plainly_english(words)):
        return True
    if all(_HAN_ONLY.fullmatch(w) for w in words):
        return True  # Han characters only (no kana, no hangul): Chinese
    shares = dict(_identifier().rank(text[:2000]))
    return sum(shares.get(lang, 0.0) for lang in READ) >= MIN_SHARE


def language_of(text: str) -> str:
    """The most likely language code of ``text`` (for reasons and reports)."""
    return _identifier().classify(text[:2000])[0]


__all__ = ["MIN_SHARE", "READ", "language_of", "readable", "simplified"]
