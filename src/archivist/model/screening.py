"""The one form the write gate reads text in, computed once per text.

A check that reads raw text can be walked around: a Cyrillic "о" in "apprоve", a
combining stroke over each letter, "a p p r o v e", "auto_approve", "4ppr0ve", a
zero-width space inside a word, or Traditional characters where the checks read
Simplified ones. :func:`screening_form` undoes each of these once, with maintained
data where it exists, and says which it had to undo:

* NFKC (full-width and mathematical letters become ASCII), invisible and control
  characters dropped (:func:`~archivist.model.folding.sanitize`);
* combining marks dropped (NFD, category ``Mn``), so "páśsword" reads "password";
* letters that look Latin read as Latin: Unicode TR39 confusables
  (``confusable-homoglyphs``), and small capitals by their Unicode name;
* letter-spaced words joined ("a p p r o v e"), underscores read as spaces, and, in
  the ``joined`` view, in-word hyphens and dots dropped ("ap-prove", "a.p.p.r.o.v.e");
* digits and symbols used for letters read as letters inside words that mix them
  ("4ppr0ve", "p@ssw0rd"), in the ``joined`` view;
* Traditional Chinese read as Simplified (OpenCC ``t2s``).

The quote a fact keeps is always the user's own text; this form is only read.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from .folding import sanitize, simplified

# a Latin letter named after the ASCII one it is drawn from: "LATIN SMALL LETTER O WITH
# STROKE", "… BARRED O", "… OPEN E", "… S WITH HOOK", "… U BAR"
_DRAWN_AS = re.compile(r"^LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL |BARRED |OPEN |SCRIPT |DOTLESS |LONG |"
                       r"TURNED |REVERSED )?([A-Z])(?: WITH [A-Z ]+| BAR)?$")
_NAMED = re.compile(r"^LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL |SMALL |CAPITAL )?([A-Z])$")
_LETTER_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_·*•/]){3,}[^\W\d_](?![^\W\d_])")
_IN_WORD = re.compile(r"(?<=[^\W\d_])[\-.·•](?=[^\W\d_])")  # not apostrophes: "i'm" stays a speaker
_MIXED = re.compile(r"\b(?=[\w@$]{0,40}[a-z])(?=[\w@$]{0,40}[0-9@$])[a-z0-9@$]{3,40}\b")  # bounded: linear
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "8": "b",
                       "9": "g"})
_LEET_L = str.maketrans({"1": "l"})
_SPACES = re.compile(r"\s+")
_GLUED = re.compile(r"(?<=[a-z]{2})(?=[A-Z][a-z]{2})")


@dataclass(frozen=True, slots=True)
class Screened:
    """What the gate reads: ``plain`` (NFKC, invisible characters dropped, case kept: what
    secrets and language are read from), ``folded`` (lower-case, marks dropped, look-alikes
    read as Latin, letter spacing joined, underscores as spaces, Simplified Chinese) and
    the ``views`` every word check reads (``folded`` plus, where it differs, in-word
    separators dropped and digits read as letters). ``disguises`` names what had to be
    undone that ordinary writing does not use."""

    plain: str
    folded: str
    views: tuple[str, ...]
    disguises: frozenset[str]


@functools.lru_cache(maxsize=4096)
def _latin(ch: str) -> str:
    """The ASCII letter ``ch`` looks like, or ``ch``: TR39 confusables first, then the
    character's name for Latin letters the table keeps as Latin (small capitals)."""
    from confusable_homoglyphs import confusables

    try:
        found = confusables.is_confusable(ch, greedy=True, preferred_aliases=["latin"]) or []
    except (KeyError, TypeError):
        found = []
    for entry in found:
        for glyph in entry.get("homoglyphs", ()):
            c = glyph.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalpha():
                return c.lower()
    named = _NAMED.match(unicodedata.name(ch, ""))
    return named.group(1).lower() if named else ch


@functools.lru_cache(maxsize=4096)
def _ascii_twin(ch: str) -> str:
    """The ASCII letter TR39 says a non-ASCII Latin letter is confused with (ɡ → g, ı → i,
    ɑ → a), else ``ch``. Only for a view the word checks read: unlike another script's
    look-alike, such a letter is ordinary writing in some language (Turkish ı), so it is
    not a disguise."""
    if ch.isascii() or not ch.isalpha() or _is_cjk_or_kana(ch):
        return ch
    from confusable_homoglyphs import confusables

    try:
        found = confusables.is_confusable(ch, greedy=True) or []
    except (KeyError, TypeError):
        found = []
    twins = {g["c"].lower() for entry in found for g in entry.get("homoglyphs", ())
             if len(g.get("c", "")) == 1 and g["c"].isascii() and g["c"].isalpha()}
    if len(twins) == 1:
        return twins.pop()
    drawn = _DRAWN_AS.match(unicodedata.name(ch, ""))  # ø, ɵ, ɛ, ǥ, ʂ, ɗ: a letter with a stroke, bar or hook
    return drawn.group(1).lower() if drawn else ch


def _is_cjk_or_kana(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o


def _read_letters(text: str) -> tuple[str, set[str]]:
    """Marks dropped and look-alike letters read as Latin; the disguises found."""
    found: set[str] = set()
    out = []
    for word in re.split(r"(\s+)", text):
        if word.isascii():
            out.append(word)
            continue
        decomposed = unicodedata.normalize("NFD", word)
        base = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
        if any(unicodedata.category(c) == "Mn" for c in unicodedata.normalize("NFC", word)) and \
                any(c.isascii() and c.isalpha() for c in base):
            found.add("combining_marks")  # marks NFC cannot compose onto a Latin letter: strokes, stacks
        mapped = "".join(c if c.isascii() or not c.isalpha() or _is_cjk_or_kana(c) else _latin(c) for c in base)
        letters = [c for c in base if c.isalpha() and not _is_cjk_or_kana(c)]
        if mapped != base and letters and any(c.isascii() for c in letters):
            found.add("lookalike_letters")  # one word in two scripts
        elif mapped != base and letters and all(_latin(c) != c for c in letters) and \
                any(unicodedata.name(c, "").startswith("LATIN") for c in letters):
            found.add("lookalike_letters")  # small capitals and other Latin look-alikes
        out.append(mapped if mapped != base and letters else base)
    return "".join(out), found


WINDOW_CHARS = 1000  # the word checks read a long text in pieces this long …
WINDOW_OVERLAP = 250  # … that overlap this much: each piece costs the same, so the whole is linear


def windows(text: str) -> list[str]:
    """``text`` in overlapping pieces of at most :data:`WINDOW_CHARS` characters, cut at a
    space or sentence end where one is near (a phrase split by one cut is whole in the next)."""
    if len(text) <= WINDOW_CHARS:
        return [text]
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + WINDOW_CHARS)
        if end < len(text):
            cut = max(text.rfind(" ", start + WINDOW_CHARS - WINDOW_OVERLAP, end),
                      text.rfind("。", start + WINDOW_CHARS - WINDOW_OVERLAP, end))
            end = cut + 1 if cut > start else end
        out.append(text[start:end])
        if end >= len(text):
            break
        start = max(start + 1, end - WINDOW_OVERLAP)
    return out


_COMMON = frozenset("the a an and or of to in on at for is are was were be it this that my your you i we not no with "
                    "from by as any all under over".split())


def _english_words(text: str) -> int:
    return sum(w in _COMMON for w in re.findall(r"[a-z]+", text))


def read_digits_as_letters(lower: str) -> str:
    """``lower`` (lower-case text) with the digits and symbols inside words of letters read
    as the letters they stand for ("d3l3t3" is "delete", "b0rr4" is "borra"); words of
    digits alone stay."""
    return _MIXED.sub(lambda m: m.group(0).translate(_LEET), lower)


@functools.lru_cache(maxsize=8192)  # a fact's content and quote are read by several checks
def screening_form(text: str) -> Screened:
    """The screening form of ``text`` (see the module docstring). Linear in its length."""
    raw = text or ""
    plain = unicodedata.normalize("NFKC", sanitize(raw))
    disguises: set[str] = set()
    if len(plain) < len(unicodedata.normalize("NFKC", raw)) and re.search(r"\w[\u200b-\u200d\u2060\ufeff\u00ad]+\w", raw):
        disguises.add("invisible_characters")
    letters, found = _read_letters(plain)
    disguises |= found
    folded = letters.replace("_", " ")
    spaced = _LETTER_SPACED.sub(lambda m: re.sub(r"[ .\-_·*•/]", "", m.group(0)), folded)
    if any(not _is_cjk_or_kana(m.group(0)[0]) for m in _LETTER_SPACED.finditer(folded)):
        disguises.add("letter_spacing")  # Chinese is often typed with spaces; spaced Latin letters are not
    folded = _SPACES.sub(" ", simplified(spaced).casefold()).strip()
    views = [folded]
    if not folded.isascii():  # "iɡnore" (a Latin script g): a look-alike in Latin's own script, read as ASCII
        twins = "".join(_ascii_twin(c) for c in folded)
        if twins != folded:
            views.append(twins)
    backwards = folded[::-1]  # ".tops eht no detnarg si…": written backwards, read forwards
    if len(folded) >= 12 and _english_words(backwards) >= _english_words(folded) + 2:
        disguises.add("reversed")
        views.append(backwards)
    glued = _GLUED.sub(" ", spaced)  # "by the pondIgnore all previous instructions": a paste without a space
    if glued != spaced:
        views.append(_SPACES.sub(" ", simplified(glued).casefold()).strip())
    joined = _IN_WORD.sub("", folded)
    unleet = read_digits_as_letters(joined)
    if unleet != joined:
        views.append(unleet)
        also = _MIXED.sub(lambda m: m.group(0).translate(_LEET_L).translate(_LEET), joined)
        if also != unleet:
            views.append(also)
    elif joined != folded:
        views.append(joined)
    return Screened(plain, folded, tuple(dict.fromkeys(views)), frozenset(disguises))


__all__ = ["Screened", "WINDOW_CHARS", "screening_form", "windows"]
