"""Offline rule extractor (zh + en): explicit statements only.

High precision, low recall, and the default when no model is configured. It reads the
user's own sentences after filtering and recognises a few explicit forms — "记住…",
"以后…请…", "我是/我主要做…", "我喜欢/偏好…", "不对，其实…", "remember that…",
"I prefer…", "from now on…", "I'm a…", "actually, …" — and turns each into a labelled
candidate quoting the clause it came from and citing its message. It never guesses:
questions and conditionals are skipped; one-off wording ("这次", "today", "for now")
is labelled temporary and grant wording ("允许", "授权", "allowed to") transactional, so
the write gate rejects them with a reason instead of the extractor hiding them.
Everything it returns still goes through governance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .filtering import FilterResult, Row
from .statements import names_project

NAME, VERSION = "rules", "1"

_CLAUSE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]?")
_QUESTION = re.compile(
    r"[?？]\s*$|^(请问|能不能|do |does |can |could |would |is |are |what |how |why |who |where |when )|"
    r"是不是|要不要|对不对|好不好|有没有|什么|怎么|为什么|哪里|哪个|多少|[吗呢么]\s*[。！!]?\s*$|来着|"
    r"\b(can you|could you|would you|do you)\b",
    re.I,
)
_CONDITIONAL = re.compile(r"^(如果|假如|要是|万一)|^(if|when|unless)\b", re.I)
_ONE_OFF = re.compile(r"这次|这一次|今天|今晚|刚才|暂时|本次|\b(this time|today|tonight|for now|right now|just now)\b", re.I)
_GRANT = re.compile(r"允许|授权|批准|同意你|不用再确认|\b(allowed to|authori[sz]e|permission|you may|you can go ahead)\b", re.I)
_LANG = re.compile(r"(中文|汉语|英文|英语|日语|Chinese|English|Japanese)", re.I)


@dataclass
class Extraction:
    """What an extractor proposes; the memory core decides (``MemoryScope.apply``)."""

    facts: list[dict[str, Any]] = field(default_factory=list)
    profile_updates: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    reinforcements: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # output the parser could not use, with reasons


def _zh_subject(text: str) -> str:
    """First person to "用户": "我对花生过敏" -> "用户对花生过敏"."""
    text = text.strip().strip("，,：:、 ")
    text = re.sub(r"^我们?", "用户", text)
    return text if text.startswith("用户") else "用户" + text


def _en_subject(text: str) -> str:
    text = text.strip().strip(",:; ").rstrip(".!")
    lone_i = re.match(r"^i\s+(?:(really|mainly|mostly|also|usually|always|never)\s+)?([a-z']+)\b", text, re.I)
    if lone_i and lone_i.group(2).lower() not in ("am", "'m"):
        adverb = f"{lone_i.group(1)} " if lone_i.group(1) else ""
        text = f"The user {adverb}{_third_person(lone_i.group(2))}" + text[lone_i.end():]
    rules = [(r"^i am\b|^i'm\b", "The user is"), (r"^my\b", "The user's"), (r"^the user\b", "The user"),
             (r"^we are\b|^we're\b", "The user's team is"), (r"^we\b", "The user's team")]
    for pattern, repl in rules:
        new, n = re.subn(pattern, repl, text, count=1, flags=re.I)
        if n:
            text = new
            break
    else:
        text = "The user: " + text
    text = re.sub(r"\bme\b", "the user", text, flags=re.I)
    text = re.sub(r"\bmy\b", "the user's", text, flags=re.I)
    return text[0].upper() + text[1:] + "."


def _end(text: str) -> str:
    text = text.rstrip("。.！!；;，, ")
    text = re.sub(r"[吧呀啊哦呢嘛啦]+$", "", text)
    return text + "。"


_IRREGULAR = {"have": "has", "do": "does", "don't": "doesn't", "am": "is", "was": "was", "can": "can",
              "will": "will", "would": "would", "should": "should", "must": "must", "might": "might"}


def _third_person(verb: str) -> str:
    """"like" -> "likes" after "The user" (a light conjugation; enough for these patterns).
    A past tense ("moved", "left") stays as it is."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ed") or low in ("left", "quit", "got", "went", "made", "took", "began", "became", "bought"):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# (pattern over a clause, builder(match, clause) -> (content, category, key, explicit))
def _zh_rules():
    def remember(m, c):
        return _end(_zh_subject(m.group(1))), None, None, True

    def lang(m, c):
        rest = m.group(0)
        body = re.sub(r"^(以后|之后|今后|平时|往后)?(都|也)?请?(你)?", "", rest).rstrip("。.！!")
        return _end("用户偏好" + body), "preference", "response_language", False

    def later(m, c):
        return _end("用户希望以后" + m.group(2)), "preference", None, False

    def identity(m, c):
        return _end("用户" + m.group(1) + m.group(2)), "context", None, False

    def likes(m, c):
        return _end("用户" + m.group(1) + m.group(2)), "preference", None, False

    def correction(m, c):  # the corrected statement itself; the gate retires what it contradicts
        return _end(_zh_subject(m.group(1))), None, None, False

    def lives(m, c):
        return _end("用户" + m.group(1)), "context", None, False

    return [
        (re.compile(r"^(?:请)?记住[：:，,]?\s*(.{2,})"), remember),
        (re.compile(r"(?:以后|之后|今后|平时|往后)?(?:都|也)?请?(?:你)?(?:用|使用)(?:中文|汉语|英文|英语|日语|Chinese|English)[^，,。；;]*",
                    re.I), lang),
        (re.compile(r"^(以后|之后|今后|往后)[^，,。]*?请(.{2,})"), later),
        (re.compile(r"^我(是|主要做|主要负责|从事|负责)(.{2,})"), identity),
        (re.compile(r"^我(?:现在|目前|已经|一直|平时)?(在)(.{1,30}(?:工作|上班|读书|上学|生活|实习|任职))"), identity),
        (re.compile(r"^我(?:现在|目前|已经)?((?:住在|居住在|家在|搬到了?|搬去了?|定居在?).{2,30})"), lives),
        (re.compile(r"^我(?:比较|更|很|特别)?(喜欢|偏好|偏爱|讨厌|不喜欢|习惯)(.{1,})"), likes),
        (re.compile(r"^(?:不对|不是|错了)[，,]?\s*(?:其实|实际上)?(.{2,})"), correction),
        (re.compile(r"^(?:其实|实际上)[，,]?\s*(我.{2,})"), correction),
    ]


def _en_rules():
    def remember(m, c):
        return _en_subject(m.group(1)), None, None, True

    def prefer(m, c):
        return f"The user prefers {m.group(1).strip().rstrip('.!')}.", "preference", None, False

    def from_now(m, c):
        return f"From now on, the user wants: {m.group(1).strip().rstrip('.!')}.", "preference", None, False

    def identity(m, c):
        return _en_subject(m.group(0)), "context", None, False

    def likes(m, c):
        return _en_subject(m.group(0)), "preference", None, False

    def correction(m, c):  # the corrected statement itself; the gate retires what it contradicts
        return _en_subject(m.group(1)), None, None, False

    def switched(m, c):
        return f"The user has switched to {m.group(1).strip().rstrip('.!')}.", None, None, False

    return [
        (re.compile(r"^(?:please\s+)?remember(?:\s+that)?[,:]?\s+(.{3,})", re.I), remember),
        (re.compile(r"^i(?: would|'d)? prefer\s+(.{3,})", re.I), prefer),
        (re.compile(r"^from now on[,:]?\s*(?:please\s+)?(.{3,})", re.I), from_now),
        (re.compile(r"^(?:i am|i'm)\s+(?:a|an)\s+(?!bit\b|little\b|lot\b)[a-z].{2,}|"
                    r"^i (?:mainly |mostly )?work (?:on|as|at|in)\s+.{3,}", re.I),
         identity),
        (re.compile(r"^i (?:really )?(?:like|love|hate|dislike|enjoy)\s+.{3,}", re.I), likes),
        (re.compile(r"^(?:no[,.]?\s+)?actually[,]?\s+(.{3,})", re.I), correction),
        (re.compile(r"^i(?:'ve| have)?\s+(?:now\s+)?(?:switched|moved|changed|gone over)\s+to\s+(.{2,})", re.I), switched),
    ]


ZH_RULES, EN_RULES = _zh_rules(), _en_rules()
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _categorise(content: str) -> str:
    if _LANG.search(content) or re.search(r"喜欢|偏好|prefer|like", content, re.I):
        return "preference"
    return "context"


def _labels(clause: str) -> dict[str, Any]:
    return {
        "scope": "user",
        "durability": "temporary" if _ONE_OFF.search(clause) else "durable",
        "authority": "transactional" if _GRANT.search(clause) else "descriptive",
    }


def extract_rules(filtered: FilterResult) -> Extraction:
    """Candidates from the user's explicit statements in ``filtered`` (already filtered)."""
    out = Extraction()
    for row in filtered.rows:
        if row.role == "user":
            out.facts.extend(_from_row(row))
    return out


_LEAD_IN = re.compile(r"^(请?记住|不对|不是|错了|其实|实际上|以后|之后|今后|往后|另外|还有)$")


def clauses(text: str) -> list[tuple[str, bool]]:
    """(clause, whether its sentence is a question). Chinese sentences are also cut at
    "，" — a lead-in such as "记住" or "不对" stays with what follows it, as written."""
    out: list[tuple[str, bool]] = []
    for sentence in (c.strip() for c in _CLAUSE.findall(text)):
        question = bool(re.search(r"[?？]\s*$", sentence))
        if not _HAN.search(sentence):
            out.append((sentence, question))
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(r"[^，、,]+", sentence) if m.group().strip()]
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and _LEAD_IN.match(sentence[merged[-1][0]:merged[-1][1]].strip().rstrip("：:")):
                merged[-1] = (merged[-1][0], end)  # keep the original text between them
            else:
                merged.append((start, end))
        out.extend((sentence[a:b].strip(), question) for a, b in merged)
    return out


def _from_row(row: Row) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for clause, in_question in clauses(row.content):
        if len(clause) < 3 or in_question or _QUESTION.search(clause) or _CONDITIONAL.search(clause):
            continue
        rules = ZH_RULES if _HAN.search(clause) else EN_RULES
        for pattern, build in rules:
            m = pattern.search(clause)
            if not m:
                continue
            content, category, key, explicit = build(m, clause)
            project = names_project(clause)
            if project:  # "记住：这个项目的部署脚本在…" describes the project, not the user
                body = re.sub(r"^(?:请)?记住[：:，,]?\s*|^(?:please\s+)?remember(?:\s+that)?[,:]?\s+", "", clause,
                              flags=re.I).strip()
                content = body.rstrip("。.！!") + ("。" if _HAN.search(body) else ".")
            if content in seen:
                break
            seen.add(content)
            quote = m.group(0).strip().rstrip("。.！!；;，, ")
            found.append({
                "content": content,
                "category": category or _categorise(content),
                "key": key,
                "kind": "fact",
                "confidence": 0.95 if explicit else 0.9,
                "explicit": explicit,
                "evidence_message_id": row.id,
                "evidence_text": quote,
                **_labels(clause),
                **({"scope": "project"} if project else {}),
            })
            break
    return found


class RuleExtractor:
    """The offline extractor behind the same interface as the LLM one."""

    name, version = NAME, VERSION

    def extract(self, filtered: FilterResult, *, profile: Any = None, existing: Sequence[Any] = ()) -> Extraction:
        return extract_rules(filtered)
