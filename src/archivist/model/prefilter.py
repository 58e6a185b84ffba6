"""A cheap test that lets a long pattern skip the texts it cannot match.

Python's ``re`` tries every branch of a large alternation at every position of a text,
and under ``re.I`` it cannot skip ahead to a first character. Most texts the gate reads
hold none of the words a screening pattern is built around, so :func:`prefiltered` reads
from the pattern's own parse, for each top-level branch, sets of lower-case literals
each of which a match of that branch must hold one of (one set per literal run or
required group; an alternation's set is the union of its branches'). A text is read by
the pattern only when one pattern of literals finds something and some branch then has
all its sets. The literals are only a necessary condition, so results are the pattern's
own; where the parse is not understood the pattern is used as is."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

try:  # the parser ``re`` itself uses; without it every pattern runs unfiltered
    from re import _constants as _c, _parser as _p
except ImportError:  # pragma: no cover - a Python whose re is laid out differently
    _c = _p = None

# the only characters outside ASCII that re.I equates with an ASCII letter (tests check this)
_TO_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_CAP = 64  # alternatives spelled out when a run of literals is expanded


def fold(text: str) -> str:
    """``text`` as the literals are looked for in: lower case, and the few characters
    ``re.I`` reads as an ASCII letter replaced by it."""
    return text.lower() if text.isascii() else text.translate(_TO_ASCII).lower()


DIGIT = "\\d"  # a needle that stands for any decimal digit (a repeat of ``\d`` needs one)
_DIGIT = re.compile(r"\d")


def _plain(code: int) -> str | None:
    """The character as a literal to look for, or None when case makes it unreliable
    (a non-ASCII letter: re.I matches it in forms lower() does not produce)."""
    ch = chr(code)
    if ch.isascii() or ch.lower() == ch.upper() == ch.casefold():
        return ch.lower()
    return None


def _minimal(needles: frozenset[str]) -> frozenset[str]:
    """The same condition with fewer needles: one that holds another is implied by it."""
    return frozenset(n for n in needles if n == DIGIT or not any(m != n and m != DIGIT and m in n for m in needles))


# words nearly every English text holds: a set of them as a branch's first filters nothing
_COMMON = frozenset("a about all an and any are as be do for have i if in is it me my need no not of ok on or s the "
                    "this to when with you your".split())


def _rank(needles: frozenset[str]) -> tuple[int, int]:
    return min(1 if n == DIGIT or n.strip() in _COMMON else len(n) for n in needles), -len(needles)


def _usable(cands: list[frozenset[str]]) -> list[frozenset[str]]:
    """Each necessary set that says something, most selective first (longest shortest needle)."""
    return sorted({_minimal(c) for c in cands if c and "" not in c}, key=_rank, reverse=True)


def _best(cands: list[frozenset[str]]) -> frozenset[str] | None:
    usable = _usable(cands)
    return usable[0] if usable else None


def _seq(items: Any) -> tuple[frozenset[str] | None, list[frozenset[str]]]:
    """(every string the sequence can match when few, else None; the needle sets each of
    which a match must hold one of)."""
    run: frozenset[str] | None = frozenset({""})
    whole = True
    cands: list[frozenset[str]] = []
    for item in items:
        exact, need = _item(item)
        if need is not None:
            cands.append(need)
        if exact is not None and run is not None and len(run) * len(exact) <= _CAP:
            run = frozenset(a + b for a in run for b in exact)
            continue
        whole = False
        if run is not None:
            cands.append(run)
        run = exact
    if run is not None:
        cands.append(run)
    return (run if whole else None), cands


def _item(item: Any) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(every string the item can match when few, else None; a necessary needle set or None)."""
    op, av = item
    if op is _c.LITERAL:
        ch = _plain(av)
        return (frozenset({ch}) if ch is not None else None), None
    if op is _c.AT or op is _c.ASSERT_NOT:  # zero-width: a run goes on across it
        return frozenset({""}), None
    if op is _c.ASSERT:  # what a lookaround sees is in the text too
        return frozenset({""}), _best(_seq(av[1])[1])
    if op is _c.IN:
        if av == [(_c.CATEGORY, _c.CATEGORY_DIGIT)]:
            return None, frozenset({DIGIT})
        if len(av) <= 8 and all(o is _c.LITERAL for o, _ in av):
            chars = [_plain(code) for _, code in av]
            if all(ch is not None for ch in chars):
                return frozenset(chars), None
        return None, None
    if op is _c.SUBPATTERN:
        exact, cands = _seq(av[3])
        return exact, _best(cands)
    if op is _c.ATOMIC_GROUP:
        exact, cands = _seq(av)
        return exact, _best(cands)
    if op is _c.BRANCH:
        parts = [_seq(alt) for alt in av[1]]
        exact = None
        if all(e is not None for e, _ in parts):
            union = frozenset().union(*(e for e, _ in parts))
            exact = union if len(union) <= _CAP else None
        needs = [_best(cands) for _, cands in parts]
        if any(n is None for n in needs):
            return exact, None
        return exact, _minimal(frozenset().union(*needs))
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        exact, cands = _seq(body)
        if lo == 0:
            return (exact | {""} if exact is not None and hi == 1 else None), None
        return (exact if lo == hi == 1 else None), _best(cands)
    return None, None  # any character, a class, a back-reference, a conditional: nothing known


def conditions(pattern: re.Pattern[str]) -> list[list[frozenset[str]]] | None:
    """For each branch of ``pattern``'s top-level alternation (the whole pattern when it has
    none), the needle sets each of which ``fold(text)`` holds one of wherever that branch
    matches; None when some branch yields none."""
    if _p is None or not isinstance(pattern.pattern, str) or pattern.flags & re.LOCALE:
        return None
    try:
        items = list(_p.parse(pattern.pattern, pattern.flags))
        alts = items[0][1][1] if len(items) == 1 and items[0][0] is _c.BRANCH else [items]
        out = [_usable(_seq(alt)[1])[:4] for alt in alts]
    except Exception:  # noqa: BLE001 - an unreadable parse only means no filter
        return None
    return out if all(out) else None


def needles(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Lower-case literals (or :data:`DIGIT`) one of which is in ``fold(text)`` wherever
    ``pattern`` matches ``text``."""
    found = conditions(pattern)
    return _minimal(frozenset().union(*(conj[0] for conj in found))) if found else None


def _alternation(needles: frozenset[str]) -> str:
    """One pattern finding any of ``needles``, as a trie: ``re`` tries one branch per first
    character instead of every needle at every position."""
    trie: dict[str, Any] = {}
    for n in needles:
        if n == DIGIT:
            continue
        node = trie
        for ch in n:
            node = node.setdefault(ch, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        if "" in node:  # a needle ends here: enough
            return ""
        alts = [re.escape(ch) + render(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    alts = [re.escape(ch) + render(child) for ch, child in sorted(trie.items())]
    if DIGIT in needles:
        alts.append(r"\d")
    return "|".join(alts)


class Prefiltered:
    """``pattern`` behind its necessary literals; the same methods, the same results. A text
    is read by the pattern only when some branch finds every one of its needle sets."""

    __slots__ = ("_re", "needles", "_gate", "_branches", "_digit")

    def __init__(self, pattern: re.Pattern[str], branches: list[list[frozenset[str]]]) -> None:
        self._re = pattern
        self._branches = [[tuple(sorted(s)) for s in conj] for conj in branches]
        self.needles = _minimal(frozenset().union(*(conj[0] for conj in branches)))
        self._gate = re.compile(_alternation(self.needles))
        self._digit = any(DIGIT in s for conj in branches for s in conj)

    def may_match(self, text: str) -> bool:
        folded = fold(text)
        if self._gate.search(folded) is None:
            return False
        if self._digit and _DIGIT.search(folded):
            folded += "\x00" + DIGIT  # the needle then reads as present (an extra hit only costs time)
        return any(all(any(n in folded for n in s) for s in conj) for conj in self._branches)

    def search(self, text: str, *args: Any) -> re.Match[str] | None:
        return self._re.search(text, *args) if self.may_match(text) else None

    def match(self, text: str, *args: Any) -> re.Match[str] | None:
        return self._re.match(text, *args) if self.may_match(text) else None

    def fullmatch(self, text: str, *args: Any) -> re.Match[str] | None:
        return self._re.fullmatch(text, *args) if self.may_match(text) else None

    def finditer(self, text: str, *args: Any) -> Iterator[re.Match[str]]:
        return self._re.finditer(text, *args) if self.may_match(text) else iter(())

    def findall(self, text: str, *args: Any) -> list[Any]:
        return self._re.findall(text, *args) if self.may_match(text) else []

    def __getattr__(self, name: str) -> Any:  # sub, split, flags, groups …: the pattern's own
        return getattr(self._re, name)


def prefiltered(pattern: re.Pattern[str]) -> re.Pattern[str] | Prefiltered:
    """``pattern`` with a literal prefilter when its parse yields one, else ``pattern``."""
    found = conditions(pattern)
    return Prefiltered(pattern, found) if found else pattern


__all__ = ["DIGIT", "Prefiltered", "conditions", "fold", "needles", "prefiltered"]
