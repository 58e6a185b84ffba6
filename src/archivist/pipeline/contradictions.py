"""Whether two statements about the user contradict each other. Pure, deterministic.

Two kinds are recognised, in Chinese and English:

* **polarity** — the same statement with and without a negation ("用户喜欢喝咖啡。" /
  "用户不喜欢喝咖啡。", "The user likes coffee." / "The user doesn't like coffee
  anymore."), after the subject, "anymore"/"了" and the end mark are set aside;
* **exclusive states** — statements that cannot both hold of one person (a vegetarian
  who eats meat every day). The list is short on purpose: an LLM judge
  (:class:`~archivist.lifecycle.consolidate.PairJudge`) finds the rest.

A contradiction is not settled here: the writer marks both facts disputed and queues
them for review, the profile keeps the newer sentence, consolidation and the review
queue decide.
"""

from __future__ import annotations

import re

from ..index.signatures import EN_NEGATION as _EN_NEGATION
from ..index.signatures import ZH_NEGATION as _ZH_NEGATION
from ..index.signatures import folded as _folded
from ..index.signatures import statement_core
from ..model.attributes import about_someone_else

EXCLUSIVE: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"\b(?:vegetarian|vegan)\b|吃素|素食"),
     re.compile(r"\beats?\s+(?:\w+\s+)?(?:meat|beef|pork|steak|chicken)\b|(?:每天|经常|天天|爱|喜欢)都?吃肉|无肉不欢")),
    (re.compile(r"\b(?:teetotal(?:er)?|(?:does not|doesn't|never) drinks? alcohol)\b|滴酒不沾|不喝酒"),
     re.compile(r"\bdrinks?\s+(?:\w+\s+)?(?:beer|wine|whisk(?:e)?y|alcohol)\s+(?:every|each|daily)|每天(?:都)?喝酒")),
)


_CHANGE = re.compile(r"\b(?:any ?more|any longer|no longer|now|actually|these days|stopped|quit|used to)\b|"
                     r"不再|已经不|再也不|现在|其实|改成|改为|戒了|不.{0,6}了[。！!.]?$", re.I)


def states_change(text: str) -> bool:
    """Whether a statement says that something changed ("I don't like coffee anymore",
    "我现在不吃辣了"): it then replaces what it contradicts instead of disputing it."""
    return bool(_CHANGE.search(_folded(text)))


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_SAID_AGAIN = re.compile(r"^\W*(?:actually|in fact|correction|sorry|no wait|wait|oops)\b\W*|\b(?:now|these days)\b|"
                         r"^(?:其实|实际上|不对|更正)[，,：:]?|现在", re.I)


def _frame(text: str) -> tuple[str, bool]:
    """The statement core with the words that say it again ("actually", "现在") and marks set aside."""
    core, negated = statement_core(_SAID_AGAIN.sub(" ", _folded(text)))
    return re.sub(r"[^\w.,:]|(?<!\d)[.,:]|[.,:](?!\d)", "", core), negated


#: a word before a number that makes the number a name ("ticket 4821", "chapter 3", "version 2.1")
_NAMING = frozenset("""ticket tickets chapter chapters order orders flight flights version versions season seasons
episode episodes lesson lessons level levels room rooms issue issues bug bugs pr invoice invoices case cases step steps
page pages line lines item items id no number numbers gate platform bus route seat row table apartment apt unit suite
floor building block lot track part parts week day round phase sprint release build iteration task question exercise
problem homework assignment module grade class exam test quiz book volume lecture game match node ios android
python java windows macos ubuntu dev""".split())
#: a word after a number that is no unit of it ("… 4822 is resolved", "… 3 of my thesis")
_NOT_A_UNIT = frozenset("is was are were be been of to for in on at and or but the a an with from by as it that this "
                        "now today".split())
_TOKEN = re.compile(r"\d+(?:[.,:/]\d+)*|[a-z]+|[\u4e00-\u9fff]|#")
#: after a number, what makes it a time, a date, a rank or a name, not an amount
_WHEN_OR_WHICH = frozenset("am pm h th st nd rd 号 点 章 楼 层 集 期 年 月 日 届 级 班 版 代 季 号楼".split())


def _quantities(text: str) -> dict[str, bool]:
    """Each number of ``text`` and whether it counts or measures something: followed by a
    unit ("4 years", "10 km", "5岁"), and not a name ("ticket 4821", "#4821", "S02E05",
    "第3章"), a time ("9am", "6:30", "7点") or a year."""
    folded = _folded(text)
    tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(folded)]
    found: dict[str, bool] = {}
    for i, (token, at) in enumerate(tokens):
        if token[0].isdigit():
            before = tokens[i - 1][0] if i else ""
            after = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            glued = at > 0 and folded[at - 1].isascii() and folded[at - 1].isalpha()  # "tp1354", "s02e05"
            found[token] = (bool(after) and not after[0].isdigit() and after not in _NOT_A_UNIT
                            and after not in _WHEN_OR_WHICH and before not in _NAMING and before not in ("#", "第")
                            and not glued and not re.search(r"[:/]", token)
                            and not re.fullmatch(r"(?:19|20)\d\d", token))
    return found


def other_number(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` said again with another quantity ("my dog is 4 years old"
    / "actually, my dog is 5 years old"): the same statement core once numbers are set
    aside, the same polarity, and each number that differs counts or measures something
    (not a ticket's, a chapter's or a date's). Said as a change, it replaces it."""
    if about_someone_else(_folded(old)) or about_someone_else(_folded(new)):
        return False
    (core_a, neg_a), (core_b, neg_b) = _frame(old), _frame(new)
    frame = _NUMBER.sub("#", core_a)
    if not (neg_a == neg_b and core_a != core_b and "#" in frame and frame == _NUMBER.sub("#", core_b)
            and len(frame.replace("#", "")) >= 3):
        return False
    before, now = _quantities(old), _quantities(new)
    changed = [n for n in now if n not in before] + [n for n in before if n not in now]
    return bool(changed) and all(now.get(n, before.get(n, False)) for n in changed)


def exclusive(text: str) -> bool:
    """Whether ``text`` is one side of an exclusive state (it may contradict a fact that
    shares no word with it)."""
    folded = _folded(text)
    return any(x.search(folded) or y.search(folded) for x, y in EXCLUSIVE)


def _holds(pattern: re.Pattern[str], text: str) -> bool:
    """``text`` says the state ``pattern`` names of the user: not negated, not someone else's."""
    m = pattern.search(text)
    return bool(m) and not _ZH_NEGATION.search(text[max(0, m.start() - 3):m.start()]) and \
        not _EN_NEGATION.search(text[max(0, m.start() - 12):m.start()]) and not about_someone_else(text)


def contradicts(a: str, b: str) -> bool:
    """Whether statements ``a`` and ``b`` cannot both be true of the user."""
    if about_someone_else(_folded(a)) or about_someone_else(_folded(b)):
        return False  # "my sister is vegetarian" says nothing against "I eat meat"
    core_a, neg_a = statement_core(a)
    core_b, neg_b = statement_core(b)
    if neg_a != neg_b and core_a and core_a == core_b and len(core_a) >= 2:
        return True
    fa, fb = _folded(a), _folded(b)
    return any((_holds(x, fa) and _holds(y, fb)) or (_holds(y, fa) and _holds(x, fb)) for x, y in EXCLUSIVE)


__all__ = ["EXCLUSIVE", "contradicts", "exclusive", "other_number", "states_change"]
