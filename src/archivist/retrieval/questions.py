"""What a question asks for, read offline from its words (en and zh). Pure.

Why: "when did she go to the support group?" is answered by the turn that says "I went
yesterday", which shares few words with the question; preferring facts that carry a
time, for questions that ask for one, finds it (issue 20, temporal questions).
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime

from ..model import Fact
from ..model.timerefs import Period, find_periods, find_time_refs

_ASKS_WHEN = re.compile(
    r"\bwhen\b|\bwhat (?:time|date|day|month|year)\b|\bwhich (?:day|date|month|year|week)\b|\bhow long ago\b"
    r"|\bwhat (?:week|weekend)\b|什么时候|何时|哪天|哪一天|几号|几月|哪年|哪一年|什么时间|多久以前|哪个月|星期几|周几",
    re.IGNORECASE,
)

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATED = re.compile(
    rf"\b(?:{_MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|tonight|today)\b"
    r"|\b(?:19|20)\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\b\d{1,2}(?::\d{2})?\s?[ap]\.?m\b"
    r"|[0-9一二三四五六七八九十两]+(?:年|月|日|号|点)|(?:星期|周|礼拜)[一二三四五六日天]|今天|今晚|前天|后天",
    re.IGNORECASE,
)
_ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)  # any day: only whether a relative time is said matters here


_ASKS_ALL = re.compile(
    r"\bhow (?:many|often|much)\b|\bwhat (?:are|were) (?:all|the)\b|\b(?:all|both|each|every) (?:of )?(?:the )?\w+"
    r"|\bwhich (?:one|of)\b|\b(?:more|less|longer|shorter|bigger|smaller|earlier|later|better|worse) than\b"
    r"|\b(?:compare|difference between|in common|list)\b|\bwhat (?:\w+ ){0,2}(?:has|have|did) \w+ (?:ever )?"
    r"(?:done|tried|visited|read|been)\b|\bwhat (?:kinds? of |types? of )?\w{2,}s (?:does|do|did|has|have|had|are|were)\b"
    r"|几个|几次|几场|几天|多少次|多少个|哪些|哪几|都有|都去|一共|总共|分别|哪个更|哪次更|哪一个更|更长|更短|更远|更近|更贵"
    r"|更便宜|更多|更少|更早|更晚|比较|相比|区别|都是",
    re.IGNORECASE,
)


def asks_for_all(question: str) -> bool:
    """True when the answer gathers several facts: a count, a list, a comparison ("how
    many…", "which one… longer", "有几个…", "哪个更…", "都去过哪些…")."""
    return bool(_ASKS_ALL.search(question))


def asks_when(question: str) -> bool:
    """True when the question asks for a time ("when…", "what year…", "什么时候…")."""
    return bool(_ASKS_WHEN.search(question))


@functools.lru_cache(maxsize=32768)  # a fact's text is read again by every search it is a candidate of
def mentions_time(text: str) -> bool:
    """True when the text says a time: a date, a month, a weekday, a year, or a relative
    time ("yesterday", "last week", "上周三")."""
    return bool(_DATED.search(text)) or bool(find_time_refs(text, _ANCHOR))


def question_periods(question: str, now: datetime) -> list[Period]:
    """The spans of days a question names ("what did I do last May", "上周三去了哪"),
    resolved against the moment it is asked. (Search passes the last line of a query:
    in a conversation so far, earlier lines' times are not what is asked.)"""
    return find_periods(question, now)


def fact_periods(fact: Fact) -> list[Period]:
    """The days a fact is about: the times its text names, resolved against when it was
    said ("下个月我要去深圳", said in February, is about March), else the day it was said."""
    return list(_periods(fact.content, fact.created_at))


@functools.lru_cache(maxsize=32768)
def _periods(text: str, said: datetime) -> tuple[Period, ...]:
    return tuple(find_periods(text, said) or [Period(said.date(), said.date())])


_QUOTES = "\"'“”‘’「」『』 \t\n"


@functools.lru_cache(maxsize=32768)
def only_asks(text: str) -> bool:
    """True when a text is a question and nothing more ("花了多少钱？", 'Mel said, "How
    was it?"'): it states no fact, so it is a poor answer to a question."""
    body = text.strip().rstrip(_QUOTES)
    if not body.endswith(("?", "？")):
        return False
    sentences = [x for x in re.split(r"(?<=[.!?。！？])\s*", body.split('"', 1)[-1]) if x.strip(_QUOTES)]
    return all(x.rstrip(_QUOTES).endswith(("?", "？")) or _interjection(x) for x in sentences)


def _interjection(sentence: str) -> bool:
    """"Wow!", "Hey Mel!", "太好了！" — says nothing."""
    words = sentence.strip(_QUOTES).rstrip("!！.。")
    return sentence.rstrip(_QUOTES).endswith(("!", "！")) and (len(words.split()) <= 3 if words.isascii() else len(words) <= 4)
