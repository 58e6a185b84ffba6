"""What a question asks for, read offline from its words (en and zh). Pure.

Why: "when did she go to the support group?" is answered by the turn that says "I went
yesterday", which shares few words with the question; preferring facts that carry a
time, for questions that ask for one, finds it (issue 20, temporal questions).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ..model.timerefs import find_time_refs

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


def asks_when(question: str) -> bool:
    """True when the question asks for a time ("when…", "what year…", "什么时候…")."""
    return bool(_ASKS_WHEN.search(question))


def mentions_time(text: str) -> bool:
    """True when the text says a time: a date, a month, a weekday, a year, or a relative
    time ("yesterday", "last week", "上周三")."""
    return bool(_DATED.search(text)) or bool(find_time_refs(text, _ANCHOR))
