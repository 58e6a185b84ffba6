"""What a turn of a conversation needs in order to be found later. Pure.

Why: people name a thing once and then point at it. "下个月我要去深圳看无人机展" is
followed by "它的持续时间是七天"; "We adopted a puppy" by "She loves the beach". A
question names the thing ("无人机展持续多久？"), and neither its keywords nor its
meaning reach a turn that only says "它". So a turn taken from a conversation is
indexed (and embedded) with:

* the turn it answers — the one before it in the thread, with its speaker — when that
  turn asked something ("和谁一起呀？" → "和表姐。") or this one leans on it; a turn after
  a statement is not indexed with it (an acknowledgement would otherwise be found for
  everything the statement says);
* what its pronouns refer to — when it points back (它/他/她/这个/那个/这次/那里…,
  it/they/this/that/there/he/she…) and names little itself, the topics of the latest
  earlier turn that named things; such a turn keeps pointing at the same thing, so a
  chain of follow-ups ("那个展在会展中心" → "它持续七天") all reach the event, while
  a long turn that says "it" in passing names its own subject;
* its speaker, when the text does not already say it.

This is the fact's ``context``: searched, never shown. Topics are offline and cheap:
jieba part-of-speech nouns for Chinese, words that are not stopwords for other text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .text import STOPWORDS, _CJK_RUN, _WORD, pos_tagger

_POINTS_BACK_ZH = re.compile(r"它|他|她|这个|那个|这次|那次|这场|那场|这里|那里|那边|这边|该|此|其")
_POINTS_BACK_EN = re.compile(
    r"\b(?:it|its|it's|they|them|their|this|that|these|those|there|he|him|his|she|her)\b", re.IGNORECASE)
# jieba's tags are rough ("展览" comes out a verb, "无人机" an idiom), so what names a
# thing is taken broadly: nouns, names, idioms, abbreviations, verbs, foreign words
_TOPIC_TAGS = ("n", "v", "l", "i", "j", "eng")
_NOT_TOPICS = frozenset("""时候 时间 事情 东西 感觉 觉得 问题 样子 地方 今天 明天 昨天 上次 下次 知道 记下 记住
    喜欢 希望 打算 准备 开始 需要 应该 可能 听起来 看起来 起来 谢谢 好像 没事 不错""".split())
_ROLES = frozenset({"user", "assistant", "human", "ai", "system", "bot", "用户", "助手"})
_SHORT = 6  # a turn this short ("好的，记下了。", "Sounds great!") acknowledges; it names nothing new
ANSWERED_CHARS = 300  # how much of the turn being answered is kept
TOPIC_CHARS = 2000  # topics are read from a turn's opening (jieba's tagger is not free)
MAX_TOPICS = 8
DEPENDENT_TOPICS = 3  # a pointing turn naming this few things leans on what came before


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a thread, in order."""

    text: str
    speaker: str | None = None


def points_back(text: str) -> bool:
    """True when the text refers to something named before (a pronoun or demonstrative)."""
    return bool(_POINTS_BACK_ZH.search(text) or _POINTS_BACK_EN.search(text))


def topics(text: str) -> list[str]:
    """What a later pronoun may point to: nouns and names (zh), content words (other)."""
    found: list[str] = []
    pos = 0
    for run in _CJK_RUN.finditer(text):
        found += _latin_topics(text[pos:run.start()])
        for word, tag in pos_tagger().cut(run.group()):
            if tag.startswith(_TOPIC_TAGS) and len(word) > 1 and word not in STOPWORDS and word not in _NOT_TOPICS:
                found.append(word)
        pos = run.end()
    found += _latin_topics(text[pos:])
    return list(dict.fromkeys(found))[:MAX_TOPICS]


def _latin_topics(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in STOPWORDS and not w.isdigit()]


SHORT_REPLY = 6  # words: a reply this short may complete what was said two turns before it


def quotable(turns: Sequence[Turn], refused: Sequence[bool],
             refuses: Callable[[str], bool]) -> tuple[list[Turn], list[int | None]]:
    """What may be quoted into contexts: ``turns`` with the text of every refused turn
    blanked, and of both turns of a pair that the content policy (``refuses``) refuses
    only when read together ("我的密码是" + "Tr0ub4dor&3") — the turn before, or, for a
    short reply, the turn before that ("Can you keep my bank password?" — "Sure, what is
    it?" — "it's Tr0ub4dor&3"). Also returns, per turn, the index of the turn it completes
    such a pair with, else ``None``."""
    texts = [("" if no else t.text) for t, no in zip(turns, refused)]
    partner: list[int | None] = [None] * len(turns)
    for i in range(1, len(turns)):
        if not texts[i]:
            continue
        before = [i - 1] + ([i - 2] if i >= 2 and len(_WORD.findall(texts[i])) <= SHORT_REPLY else [])
        partner[i] = next((j for j in before if texts[j] and refuses(texts[j] + "\n" + texts[i])), None)
    for i, j in enumerate(partner):
        if j is not None:
            texts[j] = texts[i] = ""
    return [Turn(text, t.speaker) for t, text in zip(turns, texts)], partner


def conversation_contexts(turns: Sequence[Turn]) -> list[str | None]:
    """The retrieval context of every turn of one thread (in order); ``None`` when a
    turn has nothing to add (the first turn of a thread, said by no one)."""
    contexts: list[str | None] = []
    subject: list[str] = []  # what the conversation is about at this turn
    previous: list[str] = []  # the topics of the turn before
    for i, turn in enumerate(turns):
        parts: list[str] = []
        if _named(turn.speaker) and turn.speaker.casefold() not in turn.text.casefold():
            parts.append(turn.speaker)
        own = topics(turn.text[:TOPIC_CHARS])
        before = turns[i - 1] if i > 0 else None
        answers = before is not None and asks(before.text)
        # it points back ("它…", "that…"), or answers a question ("和表姐。"), naming little itself
        dependent = (points_back(turn.text) or answers) and len(own) <= DEPENDENT_TOPICS
        if before is not None and before.text and (answers or dependent):
            said = before.text[:ANSWERED_CHARS]
            parts.append(f"{before.speaker}: {said}" if _named(before.speaker) and before.speaker not in said else said)
        if dependent and subject:
            missing = [t for t in subject if t not in previous and t not in own]
            if missing:
                parts.append(" ".join(missing))
        elif own and _length(turn.text) > _SHORT:
            subject = own  # a turn that names things itself becomes what later pronouns mean
        previous = own
        contexts.append("\n".join(parts) or None)
    return contexts


_ASKS = re.compile(r"[?？]|吗|呢|谁|什么|哪|几|多少|多久|怎么")


def asks(text: str) -> bool:
    """True when a turn asks something (the next turn answers it)."""
    return bool(_ASKS.search(text))


def _length(text: str) -> int:
    """Words of Latin text plus characters of CJK text."""
    cjk = "".join(_CJK_RUN.findall(text))
    return len(cjk) + len(_WORD.findall(_CJK_RUN.sub(" ", text)))


def _named(speaker: str | None) -> bool:
    """A speaker worth indexing: a name, not a role every turn shares."""
    return bool(speaker) and speaker.strip().casefold() not in _ROLES
