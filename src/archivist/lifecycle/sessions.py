"""Short-term memory: one structured summary per session (seed 004 §2, §6).

A summary records goal, done, open items, decisions, errors and next step, linked to
the message range it covers and to the raw transcript kept as cold evidence. Summaries
are lossy and never become facts: long-term memory only grows through governance.

:class:`RuleSessionSummarizer` is the offline default (deterministic, zh + en marker
words, high precision, low recall); any object with ``summarize(messages)`` returning
the same fields can replace it (an LLM, for instance).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from ..context.history import HistoryMessage, to_history_message
from ..model import SessionSummary  # noqa: F401 - a record of the model, used here

FIELDS = ("goal", "done", "open_items", "decisions", "errors", "next_step")


class SessionSummarizer(Protocol):
    name: str

    def summarize(self, messages: Sequence[HistoryMessage]) -> dict[str, Any]:
        """A mapping with the keys of :data:`FIELDS`."""


_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_DONE = re.compile(r"\b(done|finished|fixed|completed|created|added|merged|deployed|resolved)\b|"
                   r"已(经)?(完成|修复|创建|添加|合并|部署|解决)|搞定", re.I)
_DECISION = re.compile(r"\b(decided|we'll use|we will use|let's go with|go with|chose|settled on)\b|"
                       r"决定|就用|采用|选定|定下来", re.I)
_OPEN = re.compile(r"\b(todo|still need|need to|not yet|pending|later|open question)\b|"
                   r"还需要|待办|还没|稍后|回头|未完成|需要再", re.I)
_NEXT = re.compile(r"\b(next|then i will|i'll now|after that)\b|下一步|接下来|然后我会", re.I)
_ERROR = re.compile(r"\b(error|exception|traceback|failed|failure|timeout|denied)\b|失败|报错|错误|超时|异常", re.I)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _unique(items: list[str], limit: int = 8) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(list(seen)[:limit])


class RuleSessionSummarizer:
    """Offline: sentences sorted into the six fields by marker words. It quotes, it
    never paraphrases, and what it cannot place it leaves out."""

    name = "rules"

    def summarize(self, messages: Sequence[HistoryMessage]) -> dict[str, Any]:
        users = [m for m in messages if m.role == "user" and m.content.strip()]
        goal = _clip(_sentences(users[0].content)[0]) if users and _sentences(users[0].content) else ""
        done, decisions, open_items, errors, nexts = [], [], [], [], []
        for m in messages:
            if m.role == "tool":
                first = m.content.strip().splitlines()[0] if m.content.strip() else ""
                if _ERROR.search(m.content):
                    errors.append(_clip(f"{m.tool_call_id or m.id}: {first}"))
                continue
            for s in _sentences(m.content):
                if m.role == "assistant" and _DONE.search(s):
                    done.append(_clip(s))
                if _DECISION.search(s):
                    decisions.append(_clip(s))
                if _OPEN.search(s):
                    open_items.append(_clip(s))
                if m.role == "assistant" and _NEXT.search(s):
                    nexts.append(_clip(s))
                if m.role == "user" and _ERROR.search(s):
                    errors.append(_clip(s))
        last = messages[-1] if messages else None
        if last is not None and last.role == "user" and last.content.strip().endswith(("?", "？")):
            open_items.append(_clip(last.content))  # the last question is still unanswered
        next_step = nexts[-1] if nexts else (open_items[-1] if open_items else "")
        return {"goal": goal, "done": _unique(done), "open_items": _unique(open_items),
                "decisions": _unique(decisions), "errors": _unique(errors), "next_step": next_step}


def to_history(messages: Sequence[Any]) -> list[HistoryMessage]:
    return [to_history_message(m, i) for i, m in enumerate(messages)]


def check_fields(data: Any) -> dict[str, Any]:
    """A summarizer's output, validated: text fields are strings, list fields lists of strings."""
    from ..errors import InvalidInput

    if not isinstance(data, dict):
        raise InvalidInput(f"a session summarizer must return a dict, got {type(data).__name__}")
    out: dict[str, Any] = {}
    for name in FIELDS:
        value = data.get(name, "" if name in ("goal", "next_step") else ())
        if name in ("goal", "next_step"):
            if not isinstance(value, str):
                raise InvalidInput(f"summary field {name} must be a string")
            out[name] = _clip(value, 500)
        else:
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise InvalidInput(f"summary field {name} must be a list of strings")
            out[name] = tuple(_clip(v, 500) for v in value)
    return out


__all__ = ["FIELDS", "RuleSessionSummarizer", "SessionSummarizer", "SessionSummary", "check_fields", "to_history"]
