"""Relative times in zh and en ("yesterday", "next month", "上周", "五年前"), resolved
against the moment a message was written.

A fact written from "Lost my job yesterday" must still say when after a year in
memory, and an imported history must keep its order: the phrase is found, resolved
against the message's time (not the clock at ingestion) and rendered as an absolute
date at the precision the phrase has — a day, a week, a month or a year. Pure; the
extractor uses it to write facts, recall can use it to read questions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timedelta

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_ZH = "一二三四五六日"
_ZH_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
              "半": 0.5, "几": 3}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
               "a couple of": 2, "a few": 3, "couple of": 2, "few": 3}


@dataclass(frozen=True, slots=True)
class TimeRef:
    """A relative time found in a text: where it is, and the period it names."""

    start: int
    end: int
    phrase: str
    day: date  # the first day of the period
    precision: str  # "day" | "week" | "month" | "year"
    approximate: bool = False  # "about five years ago"

    def render(self, zh: bool) -> str:
        """The period as an absolute date at its own precision."""
        d = self.day
        if zh:
            text = {"day": f"{d.year}年{d.month}月{d.day}日", "week": f"{d.year}年{d.month}月{d.day}日那周",
                    "month": f"{d.year}年{d.month}月", "year": f"{d.year}年"}[self.precision]
            return text + ("前后" if self.approximate else "")
        text = {"day": f"on {d.isoformat()}", "week": f"in the week of {d.isoformat()}",
                "month": f"in {_MONTHS[d.month - 1]} {d.year}", "year": f"in {d.year}"}[self.precision]
        return text.replace("on ", "around ", 1).replace("in ", "around ", 1) if self.approximate else text


def _shift_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _amount(word: str) -> float:
    word = word.strip().lower()
    if word.isdigit():
        return int(word)
    if word in _EN_NUMBERS:
        return _EN_NUMBERS[word]
    if word and all(ch in _ZH_DIGITS for ch in word):
        if word.startswith("十"):
            return 10 + (_ZH_DIGITS[word[1]] if len(word) > 1 else 0)
        if len(word) == 2 and word[1] == "十":
            return _ZH_DIGITS[word[0]] * 10
        if len(word) == 3 and word[1] == "十":
            return _ZH_DIGITS[word[0]] * 10 + _ZH_DIGITS[word[2]]
        return _ZH_DIGITS[word[0]]
    raise ValueError(word)


def _span(today: date, unit: str, n: float, sign: int) -> tuple[date, str]:
    """The period ``n`` units before (sign -1) or after (+1) ``today``."""
    if unit.startswith(("day", "天")):
        return today + timedelta(days=sign * round(n)), "day"
    if unit.startswith(("week", "周", "星期", "礼拜")):
        return _monday(today + timedelta(weeks=sign * n)), "week" if n < 4 else "month"
    if unit.startswith(("month", "月", "个月")):
        shifted = _shift_months(today, sign * round(n)) if n >= 1 else today + timedelta(days=sign * 15)
        return shifted.replace(day=1), "month"
    years = sign * n
    if abs(years) < 1:
        return _shift_months(today, round(years * 12)), "month"
    return date(today.year + round(years), 1, 1), "year"


_NUM_EN = r"(\d+|a couple of|a few|couple of|few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|" \
          r"fifteen|twenty)"
_EN = re.compile(
    rf"\b(?:(?P<about>about|around|roughly|almost|nearly|over|more than|like)\s+)?{_NUM_EN}\s+"
    rf"(?P<unit>days?|weeks?|months?|years?)\s+(?P<dir>ago|from now|later)\b|"
    rf"\bin\s+{_NUM_EN.replace('(', '(?P<n2>', 1)}\s+(?P<unit2>days?|weeks?|months?|years?)\b|"
    r"\b(?P<word>the day before yesterday|yesterday|tomorrow|the day after tomorrow|last night|"
    r"(?P<rel>last|next|this past|this coming|this)\s+(?P<what>week|month|year|weekend|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|spring|summer|fall|autumn|winter))\b",
    re.I,
)
_NUM_ZH = r"([0-9]+|[一两二三四五六七八九十半几]{1,3})"
_ZH = re.compile(
    rf"(?P<n>{_NUM_ZH[1:-1]})(?P<unit>天|周|个星期|个礼拜|个月|年)(?P<half>半)?(?P<dir>前|以前|之前|后|以后|之后)(?P<about>左右)?|"
    r"(?P<word>大前天|前天|昨天|昨晚|明天|后天|大后天|上上周|上周|上个?星期|上个?礼拜|下周|下个?星期|下个?礼拜|这周|本周|"
    r"上个月|下个月|这个月|本月|去年|前年|明年|后年|今年)(?:(?<=[周期拜])(?P<wd>[一二三四五六日天末]))?"
)
_ZH_WORDS = {
    "大前天": ("day", -3), "前天": ("day", -2), "昨天": ("day", -1), "昨晚": ("day", -1), "明天": ("day", 1),
    "后天": ("day", 2), "大后天": ("day", 3), "上上周": ("week", -2), "上周": ("week", -1), "上星期": ("week", -1),
    "上个星期": ("week", -1), "上礼拜": ("week", -1), "上个礼拜": ("week", -1), "下周": ("week", 1),
    "下星期": ("week", 1), "下个星期": ("week", 1), "下礼拜": ("week", 1), "下个礼拜": ("week", 1), "这周": ("week", 0),
    "本周": ("week", 0), "上个月": ("month", -1), "下个月": ("month", 1), "这个月": ("month", 0), "本月": ("month", 0),
    "去年": ("year", -1), "前年": ("year", -2), "明年": ("year", 1), "后年": ("year", 2), "今年": ("year", 0),
}


def _period(today: date, unit: str, offset: int) -> tuple[date, str]:
    if unit == "day":
        return today + timedelta(days=offset), "day"
    if unit == "week":
        return _monday(today) + timedelta(weeks=offset), "week"
    if unit == "month":
        return _shift_months(today, offset), "month"
    return date(today.year + offset, 1, 1), "year"


def _en_ref(m: re.Match[str], today: date) -> tuple[date, str, bool] | None:
    if m.group("unit"):
        sign = -1 if m.group("dir").lower() == "ago" else 1
        day, precision = _span(today, m.group("unit").lower(), _amount(m.group(2)), sign)
        return day, precision, bool(m.group("about"))
    if m.group("unit2"):
        day, precision = _span(today, m.group("unit2").lower(), _amount(m.group("n2")), 1)
        return day, precision, False
    word = m.group("word").lower()
    fixed = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1,
             "the day after tomorrow": 2}
    if word in fixed:
        return today + timedelta(days=fixed[word]), "day", False
    rel, what = m.group("rel").lower(), m.group("what").lower()
    sign = -1 if rel in ("last", "this past") else 1 if rel in ("next", "this coming") else 0
    if what in ("week", "month", "year"):
        return (*_period(today, what, sign), False)
    if what == "weekend":
        saturday = _monday(today) + timedelta(days=5 + 7 * sign)
        return saturday, "day", False
    if what in _WEEKDAYS_EN:
        target = _WEEKDAYS_EN.index(what)
        if sign < 0:
            back = (today.weekday() - target) % 7 or 7
            return today - timedelta(days=back), "day", False
        ahead = (target - today.weekday()) % 7 or 7  # "next Friday": the coming one
        return today + timedelta(days=ahead), "day", False
    return None  # seasons: too vague to pin to a date


def _zh_ref(m: re.Match[str], today: date) -> tuple[date, str, bool] | None:
    if m.group("unit"):
        n = _amount(m.group("n")) + (0.5 if m.group("half") else 0)
        sign = -1 if m.group("dir") in ("前", "以前", "之前") else 1
        day, precision = _span(today, m.group("unit"), n, sign)
        return day, precision, bool(m.group("about")) or m.group("n") in ("几", "半")
    unit, offset = _ZH_WORDS[m.group("word")]
    wd = m.group("wd")
    if unit == "week" and wd:
        monday = _monday(today) + timedelta(weeks=offset)
        if wd == "末":
            return monday + timedelta(days=5), "day", False
        return monday + timedelta(days=_WEEKDAYS_ZH.index("日" if wd == "天" else wd)), "day", False
    return (*_period(today, unit, offset), False)


def find_time_refs(text: str, at: datetime) -> list[TimeRef]:
    """The relative times in ``text``, resolved against ``at`` (the message's time)."""
    today = at.date()
    found: list[TimeRef] = []
    for pattern, resolve in ((_EN, _en_ref), (_ZH, _zh_ref)):
        for m in pattern.finditer(text):
            try:
                resolved = resolve(m, today)
            except (ValueError, KeyError, OverflowError):
                continue
            if resolved is None:
                continue
            day, precision, approx = resolved
            found.append(TimeRef(m.start(), m.end(), m.group(0), day, precision, approx))
    return sorted(found, key=lambda r: r.start)


_MONTH_EN = "|".join(m.lower() for m in _MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_ABS_EN = re.compile(
    rf"\b(?:(?P<rel>last|this|next)\s+)?(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?P<month>{_MONTH_EN})\.?"
    rf"(?:\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b)?(?:,?\s+(?P<year>(?:19|20)\d{{2}}))?\b"
    r"|\bin\s+(?P<only_year>(?:19|20)\d{2})\b",
    re.I,
)
_ZH_NUM = r"[0-9]{1,2}|[一二三四五六七八九十]{1,3}"
_ABS_ZH = re.compile(
    rf"(?:(?P<year>(?:19|20)[0-9]{{2}}|去|今|明|前)年)?(?P<month>{_ZH_NUM})月(?:份)?(?:(?P<day>{_ZH_NUM})[日号])?"
)
_ZH_YEARS = {"去": -1, "今": 0, "明": 1, "前": -2}


@dataclass(frozen=True, slots=True)
class Period:
    """A span of days a text names, first and last day included."""

    first: date
    last: date

    def overlaps(self, other: Period) -> bool:
        return self.first <= other.last and other.first <= self.last

    def __str__(self) -> str:
        return self.first.isoformat() if self.first == self.last else f"{self.first}..{self.last}"


def _month_end(d: date) -> date:
    return _shift_months(d, 1) - timedelta(days=1)


def _period_of(first: date, precision: str) -> Period:
    if precision == "day":
        return Period(first, first)
    if precision == "week":
        return Period(first, first + timedelta(days=6))
    if precision == "month":
        return Period(first, date(first.year, 12, 31) if first.month == 12 else _month_end(first))
    return Period(first, date(first.year, 12, 31))


def _month_period(month: int, day: int | None, year: int | None, today: date, rel: str | None) -> Period:
    """A month (and day) whose year is said, or else the nearest one the words mean:
    "last May"/"May" the latest May not after today, "next May" the first after it."""
    if year is None:
        year = today.year
        if rel == "next":
            year += 1 if (month, day or 1) <= (today.month, today.day) else 0
        elif (month, day or 1) > (today.month, today.day) and rel != "this":
            year -= 1
    if day:
        the_day = date(year, month, day)
        return Period(the_day, the_day)
    return _period_of(date(year, month, 1), "month")


def find_periods(text: str, at: datetime) -> list[Period]:
    """Every span of days ``text`` names, relative ("last week", "上周三") or absolute
    ("May 2023", "3月14日", "去年5月"), resolved against ``at``. Never raises: a span
    that falls off the calendar (next week in the year 9999) is left out."""
    text = unicodedata.normalize("NFKC", text)  # "３月" is 3月
    today = at.date()
    found: list[Period] = []
    for ref in find_time_refs(text, at):
        try:
            found.append(_period_of(ref.day, ref.precision))
        except (ValueError, OverflowError):
            continue
    for m in _ABS_EN.finditer(text):
        try:
            if m.group("only_year"):
                found.append(_period_of(date(int(m.group("only_year")), 1, 1), "year"))
                continue
            name = m.group("month").lower()[:3]
            month = next(i for i, full in enumerate(_MONTHS, 1) if full.lower().startswith(name))
            if name == "may" and not (m.group("year") or m.group("rel") or m.group("d1") or m.group("d2")) \
                    and not re.search(r"\b(?:in|of|since|until|during|by|early|late|mid)\s+$", text[:m.start()], re.I):
                continue  # "may" the verb
            day = m.group("d1") or m.group("d2")
            found.append(_month_period(month, int(day) if day else None,
                                       int(m.group("year")) if m.group("year") else None, today,
                                       (m.group("rel") or "").lower() or None))
        except (ValueError, OverflowError, StopIteration):
            continue
    for m in _ABS_ZH.finditer(text):
        try:
            month = int(_amount(m.group("month")))
            day = int(_amount(m.group("day"))) if m.group("day") else None
            y = m.group("year")
            year = None if y is None else today.year + _ZH_YEARS[y] if y in _ZH_YEARS else int(y)
            if 1 <= month <= 12:
                found.append(_month_period(month, day, year, today, "this" if y else None))
        except (ValueError, KeyError, OverflowError):
            continue
    # "去年5月" names a year and a month in it: the month is what is meant
    return [p for p in dict.fromkeys(found)
            if not any(q != p and p.first <= q.first and q.last <= p.last for q in found)]


def anchor(text: str, at: datetime | None, *, zh: bool) -> str:
    """``text`` with each relative time followed by the absolute date it names:
    "lost my job yesterday" -> "lost my job yesterday (on 2024-03-04)"."""
    if at is None:
        return text
    out, pos = [], 0
    for ref in find_time_refs(text, at):
        if ref.precision == "year" and ref.phrase in ("今年",) or ref.phrase.lower().startswith("this "):
            continue  # "今年", "this week": the fact's own date already says it
        out.append(text[pos:ref.end])
        out.append(f"（{ref.render(True)}）" if zh else f" ({ref.render(False)})")
        pos = ref.end
    out.append(text[pos:])
    return "".join(out)


__all__ = ["Period", "TimeRef", "anchor", "find_periods", "find_time_refs"]
