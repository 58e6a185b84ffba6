"""Whether a short sentence is English: word frequencies from ``wordfreq``.

Language identification reads character n-grams, and a sentence of one to five words
holds too few of them: "Puedes borrar todo." and "Stay safe!" score alike. Words say
more. A word is *foreign* when

* it is at least :data:`MARGIN` zipf more common in some language written in Latin
  letters than in English ("borrar": English 0, Spanish 4.1), and a word English itself
  uses often must be further ahead elsewhere: the bar rises one for one above zipf
  :data:`COMMON` ("tu": English 3.8, French 6.5, foreign; "hi": English 5.0, Catalan
  6.5, and "ya", "yo", "ha" are English chat words too); or
* it has three letters or more and English's large list (which holds chat words, "cya",
  "woohoo", "soooo") lacks it: some words of languages wordfreq has no list for
  (Swahili's "kufuta"), and some jargon ("crashlooping").

Accents are dropped first, as people type them on phones ("esta" is "está"). A short
sentence is another language's when at least half of the words that say something are
foreign and one is, or two are far more common elsewhere. Single letters other than "I"
say nothing; nor does one name (:func:`telling`).

The lists are read once per process from the package's own files (no download) and
kept as sorted arrays of the words' hashes.
"""

from __future__ import annotations

import threading
import unicodedata

import numpy as np

MARGIN = 1.5  # zipf: this much more common elsewhere than in English
COMMON = 3.5  # zipf: an English word more common than this needs a margin larger by the difference
# languages written in Latin letters that wordfreq has lists for (the others are in other
# scripts, which are not ASCII and go to language identification)
LATIN = ("ca", "cs", "da", "de", "es", "fi", "fil", "fr", "hu", "id", "is", "it", "lt", "lv", "ms", "nb", "nl", "pl",
         "pt", "ro", "sh", "sk", "sl", "sv", "tr", "vi")
_RAREST = 600  # centibels below the most common: zipf 3.0, the end of wordfreq's small lists
_LOCK = threading.Lock()
_lists: tuple[np.ndarray, np.ndarray] | None = None


def _unaccented() -> dict[int, str]:
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[0]
        if base.isascii() and base.isalpha():
            table[code] = base
    table.update({ord("ß"): "ss", ord("ł"): "l", ord("đ"): "d", ord("ø"): "o", ord("æ"): "ae", ord("ı"): "i",
                  ord("œ"): "oe", ord("þ"): "th", ord("ð"): "d"})
    return table


_UNACCENTED = _unaccented()


def _table(path: str, rarest: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, centibels) of one list's words of two letters or more, read without accents,
    each at its most common spelling's frequency; sorted by hash."""
    from wordfreq import (
        read_cBpack,  # the package's own file: a bucket of words per centibel
    )

    buckets = read_cBpack(path)[: None if rarest is None else rarest + 1]
    words = [w if w.isascii() else w.translate(_UNACCENTED) for bucket in buckets for w in bucket]
    centibels = np.repeat(np.arange(len(buckets)), [len(b) for b in buckets])
    keep = np.fromiter((len(w) > 1 and w.isascii() for w in words), dtype=bool, count=len(words))
    hashes = np.fromiter((hash(w) for w in words), dtype=np.int64, count=len(words))
    return hashes[keep], centibels[keep]


def _most_common(hashes: np.ndarray, centibels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One row per hash, with its smallest centibels (its most common spelling or language)."""
    order = np.lexsort((centibels, hashes))
    hashes, centibels = hashes[order], centibels[order]
    first = np.r_[True, hashes[1:] != hashes[:-1]]
    return hashes[first], centibels[first]


def _load() -> tuple[np.ndarray, np.ndarray]:
    """(hashes of the words more common elsewhere, hashes of every word English's list has),
    built with arrays, one list at a time (the words themselves are not kept)."""
    from wordfreq import DATA_PATH

    english, english_cb = _most_common(*_table(str(DATA_PATH / "large_en.msgpack.gz")))
    tables = [_table(str(DATA_PATH / f"small_{lang}.msgpack.gz"), _RAREST) for lang in LATIN]
    other, other_cb = _most_common(np.concatenate([h for h, _ in tables]), np.concatenate([c for _, c in tables]))
    at = np.minimum(np.searchsorted(english, other), len(english) - 1)
    in_english = np.where(english[at] == other, english_cb[at], 900)  # a word English never uses: zipf 0
    margin, common = round(MARGIN * 100), 900 - round(COMMON * 100)  # centibels: zipf 9 is 0
    ahead = in_english - other_cb >= margin + np.maximum(0, common - in_english)
    return other[ahead], english


def _known() -> tuple[np.ndarray, np.ndarray]:
    global _lists
    if _lists is None:
        with _LOCK:
            if _lists is None:
                _lists = _load()
    return _lists


def _holds(hashes: np.ndarray, h: int) -> bool:
    i = int(np.searchsorted(hashes, h))
    return i < len(hashes) and int(hashes[i]) == h


def elsewhere(word: str) -> bool:
    """True when ``word`` (any case, accents or not) is markedly more common in another
    language written in Latin letters than in English."""
    return _holds(_known()[0], hash(word.lower().translate(_UNACCENTED)))


def count_elsewhere(words: list[str]) -> int:
    """How many of ``words`` are :func:`elsewhere` (read together: a long text's words)."""
    if not words:
        return 0
    ahead = _known()[0]
    hashes = np.fromiter((hash(w.lower().translate(_UNACCENTED)) for w in words), dtype=np.int64, count=len(words))
    at = np.minimum(np.searchsorted(ahead, hashes), len(ahead) - 1)
    return int(np.count_nonzero(ahead[at] == hashes))


def foreign(word: str) -> bool:
    """:func:`elsewhere`, or a word of three letters or more that English's list lacks."""
    plain = word.lower().translate(_UNACCENTED)
    ahead, english = _known()
    h = hash(plain)
    return _holds(ahead, h) or (len(plain) >= 3 and plain.isascii() and not _holds(english, h))


def telling(words: list[str]) -> list[str]:
    """The words of one sentence that say which language it is in: in Latin letters, not
    single letters other than "I", and without one name. The name is the first capitalised word after the
    first word, in a sentence written in ordinary case (some later word in lower case, or
    two words in all: "Thanks Agnieszka", "Hey Mel"); Title Case and capitals hide no name
    ("Ok Borra Todo", "OK BORRA TODO")."""
    latin = [w for w in words if (len(w) > 1 or w == "I") and w.translate(_UNACCENTED).isascii()]
    later = words[1:]
    ordinary = len(words) == 2 or any(w[0].islower() for w in later)
    name = next((w for w in later if w[0].isupper() and not w.isupper()), None) if ordinary else None
    if name is not None and name in latin:
        latin.remove(name)
    return latin


def mostly_foreign(words: list[str]) -> bool:
    """True when, among the :func:`telling` ``words`` of one sentence, at least half are
    :func:`foreign` (and one is), or two are :func:`elsewhere` ("lol ok fine borra todo")."""
    told = telling(words)
    found = sum(foreign(w) for w in told)
    return (found > 0 and found * 2 >= len(told)) or _two_elsewhere(told)


def two_elsewhere(words: list[str]) -> bool:
    """Two of the :func:`telling` ``words`` are :func:`elsewhere`: a phrase of another
    language among words English and Chinese also use ("好的 paga siempre", "b0rr4 t0d0")."""
    return _two_elsewhere(telling(words))


def _two_elsewhere(told: list[str]) -> bool:
    return sum(elsewhere(w) for w in told) >= 2


__all__ = ["COMMON", "LATIN", "MARGIN", "count_elsewhere", "elsewhere", "foreign", "mostly_foreign", "telling", "two_elsewhere"]
