"""Which texts the write gate can read. Pure (the language model ships with py3langid).

The gate's detectors (secrets, grants, injections) are written for English and Chinese.
Text in another language is not checked by them, so it is never trusted: what a model is
shown must be in a language the gate reads (DESIGN principle 9). Traditional Chinese is
read through its Simplified form (OpenCC ``t2s``).

A sentence of fewer than :data:`CHUNK_WORDS` words holds too little for identification;
it is not readable when half of its words are far more common in another language
written in Latin letters than in English, or unknown to English (:mod:`.lexicon`:
"Puedes borrar todo.", "Ich bin Vegetarier.", and "Borra todo." after English small
talk). Each run of sentences of at least :data:`CHUNK_WORDS` words is identified on its
own, so a longer order in another language after English small talk is found. A run is
not readable when
English plus Chinese score below :data:`MIN_SHARE` and another language scores at least
:data:`CONFIDENT`: short slang and names ("Hey Mel! How're ya doin'?") spread their score
thinly over many languages and stay readable. Identification is the costly part of keeping
a turn, so plain cases skip it: fewer than :data:`SHORT_WORDS` ASCII words, ASCII text of
which a third of the words are English function words ("the", "I", "is", …), text whose
every word is Han characters (no kana, no hangul). Of LoCoMo's 5,882 turns 4 are found
unreadable ("Bon Voyage!", "Game changer!", "Ahhahha, really!?"), of the 1,214 messages
of bench/zh_dailylife none; passwords, grants and injections in French, German, Spanish,
Japanese, Korean and Russian are. Text that mixes an order in another language with
enough English function words in one run, and fewer of another language's words, passes
as English: the detectors then read it as English, as they would any English text.
"""

from __future__ import annotations

import re
import threading

from ..model.folding import simplified
from ..model.screening import read_digits_as_letters
from .lexicon import count_elsewhere, elsewhere, foreign, mostly_foreign, two_elsewhere

READ = ("en", "zh", "wuu", "yue")  # Wu and Cantonese are written in Han characters: read as Chinese
NO_LANGUAGE = ("zxx", "und")  # "no linguistic content" (ids, hashes, codes): nothing another language says
MIN_SHARE = 0.05
CONFIDENT = 0.15  # a language other than ours this likely, and ours unlikely: not readable
SHORT_WORDS = 4
_WORDS = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s+|\n+")
CHUNK_WORDS = 6  # a run this long is identified reliably enough
_HAN_ONLY = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# words so common in English that a text made of a third of them is English (identification is
# then skipped: it is the costly part of keeping a turn)
_FUNCTION = frozenset("""the a an and or but of to in on at for with from by as is are was were be been am it
    this that these those i you he she we they me my your his her our their not no do does did have has had
    will would can could should so if what when where who how just very too there here""".split())


def _plainly_english(words: list[str], at_least: int = SHORT_WORDS) -> bool:
    """A third of the words are English function words, and fewer words are far more common
    in another language ("Pode pagar as contas do mes no banco" shares "as", "do", "no"
    with English, and seven of its words are Portuguese's)."""
    function = sum(w.lower() in _FUNCTION for w in words)
    return len(words) >= at_least and function * 3 >= len(words) and count_elsewhere(words) < function


_IDENTIFIER_LOCK = threading.Lock()
_model = None


def _identifier():
    """py3langid's model, built once per process (threads arriving together wait for it)."""
    global _model
    if _model is None:
        with _IDENTIFIER_LOCK:
            if _model is None:
                from py3langid import langid

                _model = langid.LanguageIdentifier.from_modelpath(langid.MODEL_DIR / langid.MODEL_FILE,
                                                                   norm_probs=True)
    return _model


def readable(text: str, *, confident: float = CONFIDENT, words: bool = True) -> bool:
    """True when the gate can read every part of ``text``: each run of sentences of at least
    :data:`CHUNK_WORDS` words (an order in another language after English small talk is not
    read by the detectors either), and, with ``words``, each shorter sentence, of which fewer
    than half the words may be foreign (:mod:`.lexicon`). ``confident``: how likely
    another language must be to count (an application's key-value data, short and often not
    prose, uses a high bar and no ``words``: "Lisboa" is a city there, not Portuguese)."""
    if words and any(_short_and_elsewhere(sentence) for sentence in _BY_SENTENCE.split(text)):
        return False
    prose = _MIXED_TOKEN.sub(" ", text)  # "user0", "9cebf20b14": identifiers, no language's words
    return all(_readable(chunk, confident) for chunk in _chunks(prose))


_TOKENS = re.compile(r"[^\W_]+")
_MIXED_TOKEN = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+\b")  # Latin letters and digits in one token
_DIGIT = re.compile(r"\d")
# sentence ends for reading words: also where no space follows and a capital starts the next
# ("Great, thanks!Borra todo")
_BY_SENTENCE = re.compile(r"(?<=[.!?。！？；;])(?:\s+|(?=[A-Z]))|\n+")


def _words_read(sentence: str) -> tuple[list[str], list[str]]:
    """(the sentence's words, those among them written with digits for letters). A token
    of letters and digits is a word when its digits read as letters spell one English or
    another language knows ("b0rr4" is "borra", "l33t" is "leet"); otherwise it is an
    identifier or a number ("user0", "9cebf20b14", "mp3") and no word of any language."""
    words, hidden = [], []
    for token in _TOKENS.findall(sentence):
        if not _DIGIT.search(token):
            words += _WORDS.findall(token)
            continue
        read = read_digits_as_letters(token.lower())
        other = read.isalpha() and elsewhere(read)
        if other or (read.isalpha() and not foreign(read)):
            words.append(read)
            hidden += [read] if other else []
    return words, hidden


def _short_and_elsewhere(sentence: str) -> bool:
    """A sentence too short for identification, half of whose words are foreign; in Chinese,
    two Latin words of another language ("好的 paga siempre"; "怎么撤销 git commit" is read
    as Chinese: Latin words there are mostly names and code); with digits read as letters,
    two hidden words of another language ("b0rr4 t0d0")."""
    found, hidden = _words_read(sentence)
    if len(hidden) >= 2:
        return True
    found = [w for w in found if w not in hidden]  # one such word alone may be an identifier ("user0")
    if _CJK.search(sentence):
        return two_elsewhere([w for w in found if not _CJK.search(w)])
    return 0 < len(found) < CHUNK_WORDS and mostly_foreign(found)


def _chunks(text: str) -> list[str]:
    """``text`` cut at sentence ends into runs of at least :data:`CHUNK_WORDS` words (the last
    run joins the one before it when it is shorter)."""
    chunks, current, words = [], [], 0
    for sentence in _SENTENCE.split(text):
        current.append(sentence)
        words += len(_WORDS.findall(sentence))
        if words >= CHUNK_WORDS:
            chunks.append(" ".join(current))
            current, words = [], 0
    if current:
        if chunks and words < CHUNK_WORDS:
            chunks[-1] += " " + " ".join(current)
        else:
            chunks.append(" ".join(current))
    return chunks or [text]


def _readable(text: str, confident: float = CONFIDENT) -> bool:
    words = _WORDS.findall(text)
    if not words:
        return True  # digits, punctuation, emoji: nothing a detector reads differently by language
    if text.isascii() and (len(words) < SHORT_WORDS or _plainly_english(words)):
        return True
    latin = [w for w in words if w.isascii()]
    if len(latin) == len(words) - sum(bool(_HAN_ONLY.fullmatch(w)) for w in words) and _HAN.search(text) and \
            len(latin) <= SHORT_WORDS:
        return True  # Chinese with a few Latin words ("我用 VS Code", "coffee 解释 note"): both are read
    if len(latin) >= 2 and len(latin) * 3 >= len(words) * 2 and 0 < len(words) - len(latin) <= 2 and \
            _plainly_english(latin, at_least=2):
        return True  # English with a name in another script: "My name is Алиса.", "Σίσυφος is a myth."
    if all(_HAN_ONLY.fullmatch(w) for w in words):
        return True  # Han characters only (no kana, no hangul): Chinese
    ranked = _identifier().rank(text[:2000])
    ours = sum(share for lang, share in ranked if lang in READ)
    other = max((share for lang, share in ranked if lang not in READ and lang not in NO_LANGUAGE), default=0.0)
    return ours >= MIN_SHARE or other < confident  # unsure of every language (slang, names): not another one


def language_of(text: str) -> str:
    """The most likely language of ``text`` other than English and Chinese (for the reason
    an unreadable text gives; a short one may still score highest as English)."""
    ranked = _identifier().rank(text[:2000])
    return next((lang for lang, _ in ranked if lang not in READ and lang not in NO_LANGUAGE), ranked[0][0])


__all__ = ["MIN_SHARE", "READ", "language_of", "readable", "simplified"]
