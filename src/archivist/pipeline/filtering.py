"""Message filtering before extraction (seed 000 §2). Pure.

Only what the user said, and the assistant's plain replies around it, may become
evidence for user memory. Dropped, each with a reason:

* AI messages that call tools, and tool messages (tool output proves task progress,
  not a user's lasting preference);
* system messages;
* messages the runtime injected (``origin`` memory / runtime / upload) or hid from
  the UI — injected memory must never come back as new evidence — except a
  well-formed clarification answer the user typed;
* messages that are only greetings or acknowledgements (full match, so "好的，不过以后
  解释代码请先给最小示例" stays), with the assistant reply that follows them; an
  assistant's bare acknowledgement ("Noted.", "好的，记住了。") too;
* upload blocks are cut out of user messages; the user's own words stay.

Works on LangChain message objects and on plain dicts alike.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..clock import ensure_utc, parse_time
from ..model.folding import sanitize

INJECTED_ORIGINS = frozenset({"memory", "runtime", "upload"})
UPLOAD_BLOCKS = re.compile(
    r"<(current_uploads|uploaded_files)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
TRAILING_PUNCT = " \t\r\n。.!！?？,，;；~～、…"

DEFAULT_ACKNOWLEDGEMENTS: tuple[str, ...] = (
    # zh
    "你好", "您好", "嗨", "哈喽", "早", "早上好", "晚上好", "好的", "好", "好滴", "嗯", "嗯嗯", "哦", "噢",
    "谢谢", "谢谢你", "谢谢您", "多谢", "感谢", "辛苦了", "收到", "明白", "明白了", "了解", "懂了",
    "知道了", "行", "可以", "没问题", "对", "是的", "好吧", "再见", "拜拜", "晚安", "午安", "中午好", "下午好",
    "大家好", "早安", "在吗", "在么", "记住了", "记下了", "已记下", "收到了",
    # en
    "hi", "hello", "hey", "ok", "okay", "k", "kk", "thanks", "thank you", "thx", "ty", "cool",
    "great", "nice", "sure", "got it", "understood", "yes", "yep", "yeah", "bye", "goodbye",
    "sounds good", "perfect", "alright", "all right", "good morning", "good afternoon", "good evening",
    "good night", "morning", "evening", "night", "hey there", "hi there", "thanks a lot", "thank you so much",
    "thanks so much", "many thanks", "cheers", "much appreciated", "appreciate it", "noted", "will do",
)
_PARTICLES = "呀啊哈啦哦喔嘛呢吧~～"  # "早上好呀～": a greeting with a particle is still a greeting

_ROLE_ALIASES = {
    "human": "user", "user": "user",
    "ai": "assistant", "assistant": "assistant",
    "tool": "tool", "function": "tool",
    "system": "system", "developer": "system",
}


@dataclass(frozen=True, slots=True)
class Row:
    """A message that survived filtering: the unit of evidence."""

    id: str
    role: str  # "user" or "assistant"
    content: str
    at: datetime | None = None  # when it was written: its own timestamp, else the session's time
    speaker: str | None = None  # the speaker's name, when the message carries one (``name``)



@dataclass(frozen=True, slots=True)
class FilterResult:
    rows: tuple[Row, ...]
    dropped: tuple[tuple[str, str], ...] = field(default=())  # (message id, reason)

    @property
    def has_user(self) -> bool:
        return any(r.role == "user" for r in self.rows)

    @property
    def roles(self) -> list[str]:
        return [r.role for r in self.rows]

    def by_id(self) -> dict[str, Row]:
        return {r.id: r for r in self.rows}


@dataclass(frozen=True, slots=True)
class Message:
    """The parts of a message that filtering needs, from any representation."""

    id: str
    role: str
    content: str | None  # None when the content is not text at all
    meta: dict[str, Any]
    has_tool_calls: bool
    name: str | None = None  # the speaker's name (LangChain's ``name``, a dict's ``name``)

    @property
    def at(self) -> datetime | None:
        """The message's own timestamp (``timestamp``, ``created_at``, ``time`` or ``date``
        in its metadata), or None when it has none or it does not parse."""
        for name in ("timestamp", "created_at", "time", "date"):
            value = self.meta.get(name)
            try:
                if isinstance(value, datetime):
                    return ensure_utc(value)
                if isinstance(value, str) and value.strip():
                    return parse_time(value.strip())
                if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e11:
                    return datetime.fromtimestamp(value, UTC)  # epoch seconds
            except (ValueError, OverflowError, OSError):
                continue
        return None


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


_MARKERS = {"image": "[image]", "image_url": "[image]", "input_image": "[image]", "file": "[file]",
            "input_file": "[file]", "document": "[file]", "audio": "[audio]", "input_audio": "[audio]",
            "video": "[video]"}


def _text_of(content: Any) -> str | None:
    """Plain text of a message's content. List content keeps its text blocks, and an
    image, file or audio block beside them as a marker ("[image]") — never its bytes or
    URL; content with no text block at all is not text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts, said = [], False
        for block in content:
            if isinstance(block, str):
                parts.append(block)
                said = True
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
                said = True
            elif isinstance(block, dict) and block.get("type") in _MARKERS:
                parts.append(_MARKERS[block["type"]])
        return "\n".join(parts) if said else None
    return None


def message_id(role: str, content: str | None, index: int) -> str:
    """A stable id for a message that has none: the same turn gets the same id from
    every entry point, so it is never counted twice."""
    digest = hashlib.sha256(f"{role}\x1f{content or ''}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"msg-{digest[:24]}"


def to_message(raw: Any, index: int = 0) -> Message:
    """Read a LangChain message or a dict (``role``/``type``, ``content``, ``id``,
    ``metadata`` / ``additional_kwargs`` / ``response_metadata``, ``tool_calls``)."""
    role_raw = _get(raw, "role") or _get(raw, "type") or ""
    role = _ROLE_ALIASES.get(str(role_raw).lower(), str(role_raw).lower() or "unknown")
    content = _text_of(_get(raw, "content"))
    meta: dict[str, Any] = {}
    for name in ("response_metadata", "metadata", "additional_kwargs"):
        value = _get(raw, name)
        if isinstance(value, dict):
            meta.update(value)
    tool_calls = _get(raw, "tool_calls") or meta.get("tool_calls") or []
    raw_id = _get(raw, "id")
    mid = str(raw_id) if raw_id not in (None, "") else message_id(role, content, index)
    name = _get(raw, "name")
    name = name.strip()[:200] if isinstance(name, str) and name.strip() and name.isprintable() else None
    return Message(id=mid, role=role, content=content, meta=meta, has_tool_calls=bool(tool_calls), name=name)


def is_clarification_answer(message: Message) -> bool:
    """A user's answer to a clarification question: kept even when hidden from the UI.

    Well-formed means: from the user, text content, marked ``clarification_answer: true``
    (or ``kind: "clarification_answer"``), and not injected by memory/runtime/uploads.
    """
    marked = message.meta.get("clarification_answer") is True or message.meta.get("kind") == "clarification_answer"
    return (
        marked
        and message.role == "user"
        and isinstance(message.content, str)
        and bool(message.content.strip())
        and message.meta.get("origin") not in INJECTED_ORIGINS
    )


class MessageFilter:
    """Configurable filter; :func:`filter_messages` uses the defaults."""

    def __init__(self, acknowledgements: Iterable[str] = DEFAULT_ACKNOWLEDGEMENTS) -> None:
        words = sorted({a.strip().casefold() for a in acknowledgements if a.strip()}, key=len, reverse=True)
        sep = r"[\s。.!！?？,，;；~～、…]*"
        alternatives = "|".join(re.escape(w) for w in words) or r"(?!x)x"
        # Atomic alternatives and a possessive loop: "kkkk…k lol" or "嗯嗯，"×22 must not be tried every way
        # it can be cut ("k"+"kk"…), which took seconds for a few dozen characters.
        self._ack = re.compile(rf"(?:(?>{alternatives}){sep})++", re.IGNORECASE)

    def is_acknowledgement(self, text: str) -> bool:
        """Only greetings and acknowledgements, read through full-width letters, invisible
        characters, emoji and sentence-final particles ("Ｈｅｌｌｏ", "hi 👋", "早上好呀～")."""
        folded = "".join(ch for ch in unicodedata.normalize("NFKC", sanitize(text))
                         if unicodedata.category(ch) not in ("So", "Sk", "Cf", "Mn"))
        stripped = folded.strip().rstrip(TRAILING_PUNCT + _PARTICLES).strip()
        if stripped and self._ack.fullmatch(stripped) is not None:
            return True
        bare = re.sub(rf"(?<=[\u4e00-\u9fff])[{_PARTICLES}]+", "", stripped)  # 好的呀，谢谢啦
        return bool(bare) and self._ack.fullmatch(bare) is not None

    def __call__(self, messages: Sequence[Any], *, at: datetime | None = None) -> FilterResult:
        """``at`` is when the conversation happened (a session date); a message's own
        timestamp wins over it."""
        rows: list[Row] = []
        dropped: list[tuple[str, str]] = []
        skip_reply = False
        for index, raw in enumerate(messages):
            m = to_message(raw, index)
            origin = str(m.meta.get("origin") or "").strip().lower()  # "MEMORY", " memory " are memory too
            if origin in INJECTED_ORIGINS:
                dropped.append((m.id, f"injected by {origin}"))
                continue
            if (m.meta.get("hide_from_ui") or m.meta.get("hidden") is True) and not is_clarification_answer(m):
                dropped.append((m.id, "hidden from the UI"))
                continue
            if m.role == "user":
                if m.content is None:
                    dropped.append((m.id, "no text content"))
                    skip_reply = True
                    continue
                text = UPLOAD_BLOCKS.sub("", m.content).strip()
                if not text:
                    dropped.append((m.id, "only an upload block"))
                    skip_reply = True
                elif self.is_acknowledgement(text):
                    dropped.append((m.id, "greeting or acknowledgement"))
                    skip_reply = True
                else:
                    rows.append(Row(m.id, "user", text, m.at or at, m.name))
                    skip_reply = False
            elif m.role == "assistant":
                if m.has_tool_calls:
                    dropped.append((m.id, "assistant message with tool calls"))
                elif skip_reply:
                    dropped.append((m.id, "reply to a greeting or upload"))
                elif not m.content or not m.content.strip():
                    dropped.append((m.id, "empty assistant message"))
                elif self.is_acknowledgement(m.content.strip()):  # "Noted.": nothing said worth keeping as said
                    dropped.append((m.id, "greeting or acknowledgement"))
                else:
                    rows.append(Row(m.id, "assistant", m.content.strip(), m.at or at, m.name))
            elif m.role == "tool":
                dropped.append((m.id, "tool message"))
            else:
                dropped.append((m.id, f"{m.role} message"))
        return FilterResult(tuple(rows), tuple(dropped))


_default_filter: MessageFilter | None = None


def filter_messages(messages: Sequence[Any], *, at: datetime | None = None) -> FilterResult:
    """Filter with the default acknowledgement list (zh + en)."""
    global _default_filter
    if _default_filter is None:
        _default_filter = MessageFilter()
    return _default_filter(messages, at=at)
