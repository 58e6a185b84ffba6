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
  "woohoo", "soooo") lacks it: Swahili, Afrikaans and other languages wordfreq has no
  list for.

Accents are dropped first, as people type them on phones ("esta" is "está"). A sentence
is another language's when at least half of the words that say something are foreign and
one is. Single letters say nothing; nor does a capitalised word after the first: it is a
name ("Thanks Agnieszka", "Hey Mel") or a German noun, and the words around it decide.

The lists are read once per process from the package's own files (no download), about
1 s, and kept as sorted arrays of the words' hashes (about 6 MB).
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


def _hashes(words) -> np.ndarray:
    return np.unique(np.fromiter((hash(w) for w in words), dtype=np.int64))


def _load() -> tuple[np.ndarray, np.ndarray]:
    """(hashes of the words more common elsewhere, hashes of every word English's list has)."""
    from wordfreq import (  # the package's own files: a bucket per centibel
        DATA_PATH,
        read_cBpack,
    )

    english: dict[str, int] = {}
    for centibels, words in enumerate(read_cBpack(str(DATA_PATH / "large_en.msgpack.gz"))):
        for word in words:
            english.setdefault(word.translate(_UNACCENTED), centibels)
    elsewhere: dict[str, int] = {}
    for lang in LATIN:
        for centibels, words in enumerate(read_cBpack(str(DATA_PATH / f"small_{lang}.msgpack.gz"))[:_RAREST + 1]):
            for word in words:
                plain = word.translate(_UNACCENTED)
                if elsewhere.get(plain, _RAREST + 1) > centibels:
                    elsewhere[plain] = centibels
    margin, common, absent = round(MARGIN * 100), 900 - round(COMMON * 100), 900  # centibels: zipf 9 is 0
    ahead = (w for w, c in elsewhere.items() if w.isascii() and len(w) > 1
             and english.get(w, absent) - c >= margin + max(0, common - english.get(w, absent)))
    return _hashes(ahead), _hashes(english)


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


def foreign(word: str) -> bool:
    """True when ``word`` (any case, accents or not) is markedly more common in another
    language written in Latin letters than in English, or has three letters or more and
    is not in English's list."""
    plain = word.lower().translate(_UNACCENTED)
    elsewhere, english = _known()
    h = hash(plain)
    return _holds(elsewhere, h) or (len(plain) >= 3 and plain.isascii() and not _holds(english, h))


def mostly_foreign(words: list[str]) -> bool:
    """True when at least half of the ``words`` of one sentence that say something are
    :func:`foreign`, and one is: words in Latin letters, not single letters, not
    capitalised after the first (names, German nouns)."""
    telling = [w for i, w in enumerate(words) if len(w) > 1 and (i == 0 or not w[0].isupper())
               and w.translate(_UNACCENTED).isascii()]
    found = sum(foreign(w) for w in telling)
    return found > 0 and found * 2 >= len(telling)


__all__ = ["COMMON", "LATIN", "MARGIN", "foreign", "mostly_foreign"]
