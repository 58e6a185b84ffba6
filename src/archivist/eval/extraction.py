"""Extraction evaluation: labelled conversations through ``learn``, scored as a user would.

A case is a conversation fed turn by turn to ``scope.learn(messages, at=...)`` and what
must be true of memory afterwards (format in ``docs/extraction.md``):

* ``remember``: facts that must be live at the end (each a list of fragments that must
  all occur in one live fact) — **recall**;
* ``replaced``: a value that was live after some turn and must be gone at the end, with
  its new value live (or nothing, for a retraction) — **replaced rate**;
* ``forbid`` and ``also_ok``: every live fact must match a required, new or tolerated
  fact and no forbidden fragment — **precision** over the live facts;
* ``dated``: a fact whose text must carry the date its relative time resolves to.

Fragments are compared after NFKC folding and case folding. Pure apart from the memory
it is given; the caller chooses the store and the extractor.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memory import MemoryScope

import yaml

from ..errors import InvalidInput
from ..model.folding import normalize

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


class CaseFormatError(InvalidInput):
    code = "invalid_cases"


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    """Read a YAML list of cases; a malformed file raises :class:`CaseFormatError`."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CaseFormatError(f"{path}: {exc}") from exc
    if not isinstance(data, list):
        raise CaseFormatError(f"{path}: expected a list of cases")
    seen: set[str] = set()
    for i, case in enumerate(data):
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not isinstance(case.get("turns"), list):
            raise CaseFormatError(f"{path}: case {i} needs an id and a list of turns")
        if case["id"] in seen:
            raise CaseFormatError(f"{path}: duplicate case id {case['id']!r}")
        seen.add(case["id"])
    return data


def _has(fact: str, fragments: Sequence[str]) -> bool:
    folded = normalize(fact)
    return all(normalize(str(f)) in folded for f in fragments)


def date_forms(value: str) -> list[str]:
    """The ways a fact may write a date: ISO, zh and English month names."""
    parts = [int(p) for p in str(value).split("-")]
    if len(parts) == 3:
        d = date(*parts)
        month = _MONTHS[d.month - 1]
        return [d.isoformat(), f"{d.year}年{d.month}月{d.day}日", f"{d.day} {month} {d.year}", f"{month} {d.day}, {d.year}"]
    if len(parts) == 2:
        year, m = parts
        return [f"{year}-{m:02d}", f"{year}年{m}月", f"{_MONTHS[m - 1]} {year}"]
    return [f"{parts[0]}年", str(parts[0])]


@dataclass
class CaseResult:
    id: str
    lang: str
    live: list[str]
    remembered: list[tuple[list[str], bool]] = field(default_factory=list)
    replaced: list[tuple[dict[str, Any], bool, str]] = field(default_factory=list)  # (item, ok, why not)
    extra: list[str] = field(default_factory=list)  # live facts nothing in the labels allows
    forbidden: list[str] = field(default_factory=list)  # live facts with a forbidden fragment
    dated: list[tuple[dict[str, Any], bool]] = field(default_factory=list)

    @property
    def wrong(self) -> list[str]:
        return list(dict.fromkeys(self.forbidden + self.extra))


def run_case(case: dict[str, Any], learn: Callable[..., Any], live: Callable[[], list[str]]) -> CaseResult:
    """Feed the case's turns to ``learn(messages, at=...)`` and judge ``live()`` after each."""
    seen_old: dict[int, bool] = {}
    olds = [item.get("old") or [] for item in case.get("replaced") or []]
    for turn in case["turns"]:
        learn(turn.get("messages") or [], at=turn.get("at"))
        now = live()
        for i, old in enumerate(olds):
            if old and any(_has(f, old) for f in now):
                seen_old[i] = True
    facts = live()
    result = CaseResult(case["id"], case.get("lang", "?"), facts)
    allowed: list[list[str]] = []
    for fragments in case.get("remember") or []:
        result.remembered.append((list(fragments), any(_has(f, fragments) for f in facts)))
        allowed.append(list(fragments))
    for i, item in enumerate(case.get("replaced") or []):
        old, new = item.get("old") or [], item.get("new")
        if not seen_old.get(i):
            result.replaced.append((item, False, "the old value was never stored"))
        elif any(_has(f, old) for f in facts):
            result.replaced.append((item, False, "the old value is still live"))
        elif new and not any(_has(f, new) for f in facts):
            result.replaced.append((item, False, "the new value is not live"))
        else:
            result.replaced.append((item, True, ""))
        if new:
            allowed.append(list(new))
    allowed += [list(f) for f in case.get("also_ok") or []]
    for item in case.get("dated") or []:
        forms = date_forms(item["date"])
        ok = any(_has(f, item["fact"]) and any(normalize(x) in normalize(f) for x in forms) for f in facts)
        result.dated.append((item, ok))
        allowed.append(list(item["fact"]))
    forbid = [str(x) for x in case.get("forbid") or []]
    for fact in facts:
        if any(normalize(x) in normalize(fact) for x in forbid):
            result.forbidden.append(fact)
        elif not any(_has(fact, fragments) for fragments in allowed):
            result.extra.append(fact)
    return result


@dataclass
class Score:
    cases: int
    recall: float
    precision: float
    replaced: float
    dated: float
    counts: dict[str, int]
    misses: list[str]  # one line per miss: what was expected and what memory held


def score(results: Iterable[CaseResult]) -> Score:
    results = list(results)
    remembered = [ok for r in results for _, ok in r.remembered]
    replaced = [ok for r in results for _, ok, _ in r.replaced]
    dated = [ok for r in results for _, ok in r.dated]
    stored = sum(len(r.live) for r in results)
    wrong = sum(len(r.wrong) for r in results)
    misses: list[str] = []
    for r in results:
        for fragments, ok in r.remembered:
            if not ok:
                misses.append(f"{r.id}: not remembered {fragments} — live: {r.live}")
        for item, ok, why in r.replaced:
            if not ok:
                misses.append(f"{r.id}: not replaced {item} ({why}) — live: {r.live}")
        for item, ok in r.dated:
            if not ok:
                misses.append(f"{r.id}: not dated {item} — live: {r.live}")
        for fact in r.wrong:
            misses.append(f"{r.id}: stored what it should not: {fact!r}")

    def rate(values: list[bool]) -> float:
        return sum(values) / len(values) if values else 1.0

    return Score(
        cases=len(results), recall=rate(remembered), precision=(stored - wrong) / stored if stored else 1.0,
        replaced=rate(replaced), dated=rate(dated),
        counts={"remember": len(remembered), "replaced": len(replaced), "dated": len(dated), "stored": stored,
                "wrong": wrong},
        misses=misses,
    )


def evaluate_cases(cases: Sequence[dict[str, Any]], scope_for: Callable[[str], Any], *,
                   extractor: Any = None, clock: Any = None) -> tuple[Score, list[CaseResult]]:
    """Run every case in a fresh scope (``scope_for(case_id)``) and score them. With a
    settable ``clock`` (``FixedClock``) memory's time follows each turn's ``at``, so what
    lasts a season (current focus) is judged on the day it was said."""
    results = []

    def learn(scope: MemoryScope, messages: list[Any], at: str | None = None) -> Any:
        if at is not None and clock is not None:
            clock.set(str(at))
        return scope.learn(messages, at=at, extractor=extractor)

    for case in cases:
        scope = scope_for(re.sub(r"[^A-Za-z0-9_.-]", "-", case["id"]))
        results.append(run_case(
            case,
            lambda messages, at=None, s=scope: learn(s, messages, at),
            lambda s=scope: [f.content for f in s.facts()],
        ))
    return score(results), results


__all__ = ["CaseFormatError", "CaseResult", "Score", "date_forms", "evaluate_cases", "load_cases", "run_case", "score"]
