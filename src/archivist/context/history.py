"""History trimming (seed 004 §6). Pure but for the summarizer and the flush hook.

Messages are grouped into *units*: an assistant message that calls tools together
with the tool results answering it is one unit and is kept or dropped whole, so a
tool call is never separated from its result. To fit a token budget:

1. old tool results are cleared first, oldest first: the body becomes a stub that
   keeps the evidence id (``metadata.evidence_id``, else the tool call id), so the
   full result can be read back from the evidence store;
2. then the oldest units are dropped — never the original goal (the first user
   message, or one marked ``metadata.goal``), never the newest unit, never an
   unfinished tool call (a call whose results are not all there yet);
3. the dropped messages go to the flush hook *before* they are dropped, and a
   summary of them (pluggable; deterministic offline) takes their place, carrying
   its source message range, generation time, summarizer name and version.

Token counts are real: each message is its content plus a per-message overhead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ..pipeline.filtering import _ROLE_ALIASES, _get, _text_of, message_id
from ..tokens import TokenCounter

MESSAGE_OVERHEAD = 4  # role and separators per chat message (OpenAI chat format)
# an image, audio or file part of a message: its text is not there to count, so a fixed
# conservative size stands in (a 1024×1024 image at high detail in OpenAI's accounting)
MEDIA_PART_TOKENS = 765


MEDIA_TYPES = frozenset({"image", "image_url", "input_image", "audio", "input_audio", "file", "input_file", "video"})


def media_parts(content: Any) -> int:
    """How many parts of a list content are media (images, audio, files, video)."""
    if not isinstance(content, list):
        return 0
    return sum(1 for block in content if isinstance(block, dict) and block.get("type") in MEDIA_TYPES)


def unseen_text(raw: Any, content: Any) -> str:
    """What a model is sent besides the plain text and media of a message, as JSON to
    count: other content blocks (reasoning, thinking, JSON, tool use, plain-text files),
    tool calls the provider could not parse, and legacy function calls."""
    extra: list[Any] = []
    if isinstance(content, list):
        extra += [b for b in content if isinstance(b, dict) and b.get("type") not in MEDIA_TYPES | {"text"}]
    extra += list(_get(raw, "invalid_tool_calls") or [])
    kwargs = _get(raw, "additional_kwargs")
    if isinstance(kwargs, dict) and kwargs.get("function_call"):
        extra.append(kwargs["function_call"])
    return json.dumps(extra, ensure_ascii=False, default=str) if extra else ""


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """A message as the model view carries it."""

    id: str
    role: str  # user | assistant | tool | system
    content: str
    tool_calls: tuple[dict, ...] = ()
    tool_call_id: str | None = None
    evidence_id: str | None = None
    goal: bool = False
    calls_json: str = ""  # tool calls and other non-text parts as the model sees them (counted with it)
    media: int = 0  # parts that are not text (images, files), counted as MEDIA_PART_TOKENS each

    def as_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.get("id"), "type": "function",
                 "function": {"name": c.get("name"), "arguments": json.dumps(c.get("args", {}), ensure_ascii=False)}}
                for c in self.tool_calls
            ]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        return out


def to_history_message(raw: Any, index: int) -> HistoryMessage:
    if isinstance(raw, HistoryMessage):  # converted already (the agent middleware does it once per call)
        return raw
    role_raw = _get(raw, "role") or _get(raw, "type") or ""
    role = _ROLE_ALIASES.get(str(role_raw).lower(), "user")
    content = _text_of(_get(raw, "content")) or ""
    meta: dict[str, Any] = {}
    for name in ("metadata", "additional_kwargs"):
        value = _get(raw, name)
        if isinstance(value, dict):
            meta.update(value)
    calls = tuple(dict(c) for c in (_get(raw, "tool_calls") or meta.get("tool_calls") or []))
    raw_id = _get(raw, "id")
    mid = str(raw_id) if raw_id not in (None, "") else message_id(role, content, index)
    call_id = _get(raw, "tool_call_id")
    evidence = meta.get("evidence_id") or (str(call_id) if call_id else None)
    calls_json = json.dumps(list(calls), ensure_ascii=False) if calls else ""
    raw_content = _get(raw, "content")
    calls_json += unseen_text(raw, raw_content)
    return HistoryMessage(mid, role, content, calls, str(call_id) if call_id else None, evidence,
                          bool(meta.get("goal")), calls_json, media_parts(raw_content))


@dataclass(slots=True)
class Unit:
    """Messages that live or die together (a tool call and its results, or one message)."""

    messages: list[HistoryMessage]
    unfinished: bool = False

    @property
    def is_tool_exchange(self) -> bool:
        return bool(self.messages[0].tool_calls)


def group_units(messages: Sequence[HistoryMessage]) -> list[Unit]:
    units: list[Unit] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.role == "assistant" and m.tool_calls:
            wanted = {c.get("id") for c in m.tool_calls}
            unit = Unit([m])
            j = i + 1
            while j < len(messages) and messages[j].role == "tool" and messages[j].tool_call_id in wanted:
                unit.messages.append(messages[j])
                j += 1
            unit.unfinished = {x.tool_call_id for x in unit.messages[1:]} != wanted
            units.append(unit)
            i = j
        else:
            units.append(Unit([m]))
            i += 1
    return units


@dataclass(frozen=True, slots=True)
class Summary:
    text: str
    first_message_id: str
    last_message_id: str
    message_count: int
    generated_at: datetime
    summarizer: str
    version: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "source_range": [self.first_message_id, self.last_message_id],
            "message_count": self.message_count,
            "generated_at": self.generated_at.isoformat(),
            "summarizer": self.summarizer,
            "version": self.version,
        }


class Summarizer(Protocol):
    name: str
    version: str

    def summarize(self, messages: Sequence[HistoryMessage], *, max_tokens: int, counter: TokenCounter) -> str: ...


class StructuredSummarizer:
    """Offline and deterministic: who asked what, which tools ran, what was answered —
    each line cut to fit, the user's words first. It never turns a question or a
    hypothesis into a finding: lines say who said it."""

    name = "structured"
    version = "1"

    def summarize(self, messages: Sequence[HistoryMessage], *, max_tokens: int, counter: TokenCounter) -> str:
        lines = [f"Earlier conversation ({len(messages)} messages, summarised):"]
        for m in messages:
            if m.role == "tool":
                lines.append(f"- tool result {m.tool_call_id or m.id} (evidence {m.evidence_id or m.id})")
            elif m.tool_calls:
                names = ", ".join(str(c.get("name")) for c in m.tool_calls)
                lines.append(f"- assistant called {names}")
            elif m.content.strip():
                who = {"user": "user said", "assistant": "assistant said", "system": "system"}.get(m.role, m.role)
                lines.append(f"- {who}: {' '.join(m.content.split())[:160]}")
        text = "\n".join(lines)
        while lines and counter.count(text) > max_tokens:
            lines.pop()
            text = "\n".join(lines)
        return text


class ChatModelSummarizer:
    """Summaries by any LangChain chat model (``invoke(messages) -> AIMessage``)."""

    name = "chat_model"
    version = "1"
    PROMPT = (
        "Summarise the conversation below for the assistant's own later use. Keep who said what; "
        "keep questions as questions and hypotheses as hypotheses; keep ids of tool results and "
        "every open item. Reply with the summary only, at most {max_tokens} tokens."
    )

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = f"chat_model:{getattr(model, 'model_name', None) or type(model).__name__}"

    def summarize(self, messages: Sequence[HistoryMessage], *, max_tokens: int, counter: TokenCounter) -> str:
        transcript = "\n".join(f"[{m.id}] {m.role}: {m.content}" for m in messages)
        reply = self.model.invoke(
            [{"role": "system", "content": self.PROMPT.format(max_tokens=max_tokens)},
             {"role": "user", "content": transcript}]
        )
        text = _text_of(getattr(reply, "content", reply)) or ""
        return StructuredSummarizer().summarize(messages, max_tokens=max_tokens, counter=counter) \
            if counter.count(text) > max_tokens else text


FlushHook = Callable[[list[HistoryMessage]], None]


@dataclass
class TrimResult:
    messages: list[HistoryMessage]
    tokens: int
    cleared: list[str] = field(default_factory=list)  # ids of tool results replaced by stubs
    dropped: list[str] = field(default_factory=list)  # ids of messages removed
    summary: Summary | None = None


def stub_for(m: HistoryMessage) -> HistoryMessage:
    ref = m.evidence_id or m.tool_call_id or m.id
    return HistoryMessage(m.id, m.role, f"[tool result cleared to save space; evidence id: {ref}]",
                          m.tool_calls, m.tool_call_id, m.evidence_id, m.goal, m.calls_json)  # media gone too


def message_tokens(m: HistoryMessage, counter: TokenCounter) -> int:
    extra = counter.count(m.calls_json) if m.calls_json else 0
    return counter.count(m.content) + extra + MESSAGE_OVERHEAD + m.media * MEDIA_PART_TOKENS


def protected_units(units: Sequence[Unit]) -> set[int]:
    """Indices never dropped: the goal, the newest unit, unfinished tool calls."""
    keep = {i for i, u in enumerate(units) if u.unfinished or any(m.goal for m in u.messages)}
    if not any(m.goal for u in units for m in u.messages):
        first_user = next((i for i, u in enumerate(units) if u.messages[0].role == "user"), None)
        if first_user is not None:
            keep.add(first_user)
    if units:
        keep.add(len(units) - 1)
    return keep


def trim_history(
    messages: Sequence[HistoryMessage],
    budget: int,
    *,
    counter: TokenCounter,
    now: datetime,
    summarizer: Summarizer | None = None,
    summary_tokens: int = 200,
    summary_framing: int = 0,
    flush: FlushHook | None = None,
    strict: bool = False,
    pinned: frozenset[str] = frozenset(),
) -> TrimResult:
    """Fit ``messages`` into ``budget`` tokens (see the module docstring for the order).
    ``strict`` keeps only unfinished tool calls (for when the goal and the newest
    turn do not fit either); ``summary_framing`` is what wrapping the summary costs
    where it is shown (its block's tags); units holding a ``pinned`` message id are untouchable
    like unfinished tool calls."""
    units = group_units(messages)
    for unit in units:
        if any(m.id in pinned for m in unit.messages):
            unit.unfinished = True  # kept whole, never cleared or dropped
    keep = {i for i, u in enumerate(units) if u.unfinished} if strict else protected_units(units)
    originals = {m.id: m for m in messages}
    order = {m.id: n for n, m in enumerate(messages)}
    cost = {id(m): message_tokens(m, counter) for u in units for m in u.messages}
    total = sum(cost.values())
    result = TrimResult([], 0)

    # 1. clear old tool results, oldest first (the newest unit keeps its results)
    for unit in units[:-1]:
        if total <= budget:
            break
        if not unit.is_tool_exchange or unit.unfinished:
            continue
        for j, m in enumerate(unit.messages[1:], start=1):
            stub = stub_for(m)
            saved = cost[id(m)] - message_tokens(stub, counter)
            if saved > 0:
                unit.messages[j] = stub
                cost[id(stub)] = cost.pop(id(m)) - saved
                total -= saved
                result.cleared.append(m.id)

    # 2. drop the oldest droppable units, making room for their summary as well; if that
    #    is not enough, the goal and the newest turn go too (oldest first) — never an
    #    unfinished tool call
    dropped: list[HistoryMessage] = []
    alive = list(range(len(units)))
    target = budget
    if total > budget and summarizer is not None:
        target = budget - min(summary_tokens, budget // 4) - summary_framing
    last_resort = [] if strict else [i for i in sorted(keep) if not units[i].unfinished]
    order_of_drops = [(i, target) for i in range(len(units)) if i not in keep] + [(i, budget) for i in last_resort]
    for i, goal_line in order_of_drops:
        if total <= goal_line:
            continue
        for m in units[i].messages:
            total -= cost[id(m)]
            dropped.append(originals[m.id])
        alive.remove(i)
    # an answer whose question went reads as the answer to whatever now precedes it: it goes too
    for i in list(alive):
        unit = units[i]
        lone_answer = len(unit.messages) == 1 and unit.messages[0].role == "assistant" and not unit.messages[0].tool_calls
        if lone_answer and i > 0 and i - 1 not in alive and i not in keep:
            total -= cost[id(unit.messages[0])]
            dropped.append(originals[unit.messages[0].id])
            alive.remove(i)
    dropped.sort(key=lambda m: order[m.id])

    kept = [m for i in alive for m in units[i].messages]
    if dropped:
        if flush is not None:
            flush(list(dropped))  # before they are gone
        result.dropped = [m.id for m in dropped]
        if summarizer is not None:
            room = min(summary_tokens, budget - total - MESSAGE_OVERHEAD - summary_framing)
            if room > 20:
                text = summarizer.summarize(dropped, max_tokens=room, counter=counter)
                if text:
                    result.summary = Summary(text, dropped[0].id, dropped[-1].id, len(dropped), now,
                                             summarizer.name, summarizer.version)
                    total += counter.count(text) + MESSAGE_OVERHEAD + summary_framing
    result.messages = kept
    result.tokens = total
    return result
