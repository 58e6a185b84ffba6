"""Instructions in the current request that override a stored preference for this
turn only ("this time answer in English" beats a stored "中文"). Pure, rule-based;
the application may also pass overrides explicitly."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..index.text import normalize

LANGUAGE_KEYS = ("language", "response_language", "reply_language")
LENGTH_KEYS = ("verbosity", "answer_length", "reply_length")

_LANGUAGES = {
    "english": "English", "英文": "English", "英语": "English",
    "chinese": "中文", "中文": "中文", "汉语": "中文", "简体中文": "中文",
    "japanese": "日本語", "日文": "日本語", "日语": "日本語",
    "french": "Français", "法语": "Français", "german": "Deutsch", "德语": "Deutsch",
    "spanish": "Español", "西班牙语": "Español", "korean": "한국어", "韩语": "한국어",
}
_LANG_WORDS = "|".join(sorted((re.escape(k) for k in _LANGUAGES), key=len, reverse=True))
_LANGUAGE_PATTERNS = [
    re.compile(rf"\b(?:answer|reply|respond|write|explain|speak|talk)\b[^.!?。！？]{{0,30}}?\bin ({_LANG_WORDS})\b"),
    re.compile(rf"\bin ({_LANG_WORDS})\b[^.!?。！？]{{0,20}}?\b(?:please|this time|for now)\b"),
    re.compile(rf"(?:用|以|请用|改用|换成)({_LANG_WORDS})(?:来)?(?:回答|回复|解释|写|说|讲|作答)?"),
    re.compile(rf"({_LANG_WORDS})(?:回答|回复|作答)"),
]
_SHORT = re.compile(r"简短|简要|简洁|一句话|\bbrief(ly)?\b|\bshort answer\b|\bconcise(ly)?\b|\bin one sentence\b")
_LONG = re.compile(r"详细|展开讲|\bin detail\b|\bdetailed\b|\bthorough(ly)?\b")


@dataclass(frozen=True, slots=True)
class Override:
    keys: tuple[str, ...]  # the preference keys it overrides
    value: str
    phrase: str  # the words of the request that asked for it


def detect_overrides(request: str) -> list[Override]:
    text = normalize(request)
    found: list[Override] = []
    for pattern in _LANGUAGE_PATTERNS:
        m = pattern.search(text)
        if m:
            found.append(Override(LANGUAGE_KEYS, _LANGUAGES[m.group(1)], m.group(0)))
            break
    for pattern, value in ((_SHORT, "brief"), (_LONG, "detailed")):
        m = pattern.search(text)
        if m:
            found.append(Override(LENGTH_KEYS, value, m.group(0)))
            break
    return found
