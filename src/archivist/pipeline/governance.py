"""The write gate (seed 000 §3, seed 004 §3). Pure and deterministic.

A candidate goes through, in order — the first failing check decides, and every
decision carries a machine code and a human reason that the audit table keeps:

1. shape: labels present and valid, confidence finite in [0, 1], content non-empty,
   not oversized, valid Unicode, no control characters (``invalid_*``);
2. authority: transactional content (grants, one-off permissions) is never stored,
   whatever its label claims (``transactional``); a grant detector backs the label;
3. reach: only ``scope=user`` and ``durability=durable`` enter user memory
   (``scope_thread``, ``scope_project``, ``temporary``);
4. confidence ≥ threshold (``low_confidence``);
5. source: tool or document content never becomes a fact about the user
   (``tool_preference``);
6. evidence: the cited message is a user message among the filtered rows and the
   quote occurs in it, width/case/whitespace-folded (``evidence_*``);
7. kind: ``inference`` and ``heuristic`` are kept as candidates, never injected,
   until the user confirms them.

Comparison with stored facts (duplicate, supersede) needs the store and is done by
:func:`compare` on facts the caller looked up.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Any

from ..clock import ensure_utc, parse_time
from ..errors import InvalidCandidate
from ..index.text import compact, normalize
from ..model import (
    PROFILE_SECTIONS,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Kind,
    SourceType,
    Status,
)
from .filtering import FilterResult
from .grants import find_grant


@dataclass(frozen=True, slots=True)
class GovernanceConfig:
    confidence_threshold: float = 0.7
    max_content_chars: int = 1000
    max_key_chars: int = 80
    near_duplicate_ratio: float = 0.92
    detect_grants: bool = True


@dataclass(frozen=True, slots=True)
class Candidate:
    """A validated fact candidate (seed 000's FactCandidate plus ``kind``)."""

    content: str
    category: Category
    scope: FactScope
    durability: Durability
    authority: Authority
    confidence: float
    key: str | None = None
    kind: Kind = Kind.FACT
    evidence_message_id: str | None = None
    evidence_text: str | None = None
    valid_until: datetime | None = None
    source_type: SourceType = SourceType.USER_MESSAGE
    context: str | None = None
    explicit: bool = False  # the user asked for it to be remembered ("记住…", "remember that…")

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


class Action(StrEnum):
    SAVE = "save"  # a new committed fact
    SUPERSEDE = "supersede"  # a new version of a keyed fact
    CANDIDATE = "candidate"  # kept, but not committed (inference / heuristic)
    DUPLICATE = "duplicate"  # already known: nothing written, confidence unchanged
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    code: str
    reason: str
    candidate: Candidate | None = None
    existing: Fact | None = None  # the fact superseded or duplicated

    @property
    def accepted(self) -> bool:
        return self.action in (Action.SAVE, Action.SUPERSEDE, Action.CANDIDATE)


def reject(code: str, reason: str, candidate: Candidate | None = None) -> Decision:
    return Decision(Action.REJECT, code, reason, candidate)


def content_hash(text: str) -> str:
    """Hash of the folded content: equal for texts that differ only in width/case/spacing."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- shape checks


def _as_mapping(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if hasattr(raw, "model_dump"):  # pydantic models from structured output
        return raw.model_dump()
    if hasattr(raw, "__dataclass_fields__"):
        return {name: getattr(raw, name) for name in raw.__dataclass_fields__}
    raise InvalidCandidate(f"invalid_shape: a candidate must be a mapping, got {type(raw).__name__}")


def _enum(data: Mapping[str, Any], name: str, enum: type[StrEnum], default: StrEnum | None = None) -> Any:
    value = data.get(name)
    if value is None:
        if default is not None:
            return default
        raise InvalidCandidate(f"invalid_label: missing {name!r}")
    if isinstance(value, enum):
        return value
    if not isinstance(value, str):
        raise InvalidCandidate(f"invalid_label: {name} must be a string, got {type(value).__name__}")
    try:
        return enum(value.strip().lower())
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise InvalidCandidate(f"invalid_label: {name}={value!r} is not one of {allowed}") from None


def check_text(value: Any, name: str, *, max_chars: int, required: bool = True) -> str | None:
    """A clean, bounded, valid-Unicode string, or an :class:`InvalidCandidate`."""
    if value is None:
        if required:
            raise InvalidCandidate(f"invalid_{name}: missing {name!r}")
        return None
    if not isinstance(value, str):
        raise InvalidCandidate(f"invalid_{name}: {name} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidCandidate(f"invalid_{name}: {name} is not valid Unicode (lone surrogate)") from None
    if any((ord(c) < 32 and c not in "\t\n\r") or ord(c) == 0x7F for c in value):
        raise InvalidCandidate(f"invalid_{name}: {name} contains control characters")
    text = value.strip()
    if not text:
        if required:
            raise InvalidCandidate(f"invalid_{name}: {name} is empty")
        return None
    if len(text) > max_chars:
        raise InvalidCandidate(f"invalid_{name}: {name} has {len(text)} characters, the limit is {max_chars}")
    return text


def check_confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidCandidate(f"invalid_confidence: confidence must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidCandidate(f"invalid_confidence: confidence must be in [0, 1], got {value!r}")
    return float(value)


def _key(value: Any, max_chars: int) -> str | None:
    key = check_text(value, "key", max_chars=max_chars, required=False)
    if key is None:
        return None
    key = key.lower()
    if not all(c.isalnum() or c in "_.:-" for c in key):
        raise InvalidCandidate(f"invalid_key: {key!r} may only hold letters, digits and _ . : -")
    return key


def _time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return ensure_utc(value) if value else None
    if isinstance(value, str):
        try:
            return parse_time(value)
        except ValueError:
            pass
    raise InvalidCandidate(f"invalid_valid_until: not an ISO-8601 time: {value!r}")


def parse_candidate(
    raw: Any,
    config: GovernanceConfig = GovernanceConfig(),
    *,
    require_evidence: bool = True,
    source_type: SourceType = SourceType.USER_MESSAGE,
) -> Candidate:
    """Validate a raw candidate (dict, pydantic model or dataclass); raises
    :class:`InvalidCandidate` with a ``reason`` that starts with its code."""
    data = _as_mapping(raw)
    content = check_text(data.get("content"), "content", max_chars=config.max_content_chars)
    evidence_id = data.get("evidence_message_id")
    if evidence_id is not None and not isinstance(evidence_id, str):
        raise InvalidCandidate("invalid_evidence: evidence_message_id must be a string")
    evidence_id = check_text(evidence_id, "evidence", max_chars=200, required=False)
    evidence_text = check_text(
        data.get("evidence_text"), "evidence", max_chars=config.max_content_chars * 4, required=False
    )
    if require_evidence and (not evidence_id or not evidence_text):
        raise InvalidCandidate("invalid_evidence: evidence_message_id and evidence_text are required")
    return Candidate(
        content=content,  # type: ignore[arg-type]
        category=_enum(data, "category", Category),
        scope=_enum(data, "scope", FactScope),
        durability=_enum(data, "durability", Durability),
        authority=_enum(data, "authority", Authority),
        confidence=check_confidence(data.get("confidence")),
        key=_key(data.get("key"), config.max_key_chars),
        kind=_enum(data, "kind", Kind, Kind.FACT),
        evidence_message_id=evidence_id,
        evidence_text=evidence_text,
        valid_until=_time(data.get("valid_until")),
        source_type=source_type,
        explicit=_flag(data.get("explicit", False), "explicit"),
    )


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidCandidate(f"invalid_{name}: {name} must be true or false, got {value!r}")
    return value


def forgotten(candidate: Candidate) -> Decision:
    return reject("forgotten", "the user asked to forget this; only an explicit new statement brings it back",
                  candidate)


# ------------------------------------------------------------------ the gate

_ABOUT_THE_USER = frozenset(
    {Category.PREFERENCE, Category.CORRECTION, Category.GOAL, Category.BEHAVIOR, Category.CONTEXT}
)


_INJECTION = re.compile(
    r"(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"((previous|prior|above|earlier|system)\s+)?(instructions?|prompts?|rules?|guidelines?|messages?|restrictions?)|"
    r"system\s+prompt|developer\s+(message|mode)|jailbreak|\byou\s+are\s+now\b|"
    r"\b(you\s+have|with)\s+no\s+(restrictions|limits|rules|filters)\b|"
    r"(忽略|无视|忘掉|忘记|覆盖)(掉)?(之前|以上|上面|前面|先前|所有|系统)的?(的)?(指令|指示|提示|规则|设定|要求)?|系统提示|"
    r"(从现在起|从现在开始|现在)?你(现在)?(是|成为|扮演)(一个)?(管理员|系统|开发者|超级用户|root|不受限制)|"
    r"(不受|没有|无)(任何)?(限制|约束)的?(模式|助手|ai)|"
    r"</?memory\b|</?system\b|<\|(im_start|im_end|system|assistant|user|endoftext)\|>|\[/?inst\]|<</?sys>>",
    re.I,
)


def find_injection(text: str) -> str | None:
    """Text that addresses the model's instructions rather than describing the user."""
    m = _INJECTION.search(text or "")
    return m.group(0) if m else None


def gate(
    candidate: Candidate,
    config: GovernanceConfig = GovernanceConfig(),
    evidence: FilterResult | None = None,
) -> Decision:
    """The store-independent checks. ``evidence`` is required for user-message sources."""
    c = candidate
    if c.authority is Authority.TRANSACTIONAL:
        return reject("transactional", "a grant or one-off instruction is never stored as memory", c)
    if config.detect_grants:
        for text in (c.content, c.evidence_text or ""):
            if find_grant(text):
                return reject("transactional", "reads as a grant or permission; never stored as memory", c)
    if find_injection(c.content):
        return reject("prompt_injection", "addresses the model's instructions; memory only describes the user", c)
    if c.scope is FactScope.THREAD:
        return reject("scope_thread", "thread-scoped: it only holds for this conversation", c)
    if c.scope is FactScope.PROJECT:
        return reject("scope_project", "project-scoped: it belongs to the project, not to user memory", c)
    if c.durability is Durability.TEMPORARY:
        return reject("temporary", "temporary: it will not hold in a later session", c)
    if c.confidence < config.confidence_threshold:
        return reject(
            "low_confidence", f"confidence {c.confidence:.2f} is below the threshold {config.confidence_threshold:.2f}", c
        )
    if c.source_type in (SourceType.TOOL, SourceType.DOCUMENT) and c.category in _ABOUT_THE_USER:
        return reject("tool_preference", f"{c.source_type.value} content never becomes a {c.category.value} of the user", c)
    if c.source_type is SourceType.USER_MESSAGE:
        problem = check_evidence(c, evidence)
        if problem:
            return problem
    if c.kind is not Kind.FACT:
        return Decision(Action.CANDIDATE, c.kind.value, f"{c.kind.value}: kept as a candidate until the user confirms it", c)
    return Decision(Action.SAVE, "accepted", "user-scoped, durable, descriptive, with evidence", c)


def check_evidence(c: Candidate, evidence: FilterResult | None) -> Decision | None:
    if evidence is None:
        return reject("evidence_missing", "no conversation was given to check the evidence against", c)
    row = evidence.by_id().get(c.evidence_message_id or "")
    if row is None:
        why = dict(evidence.dropped).get(c.evidence_message_id or "")
        detail = f"it was filtered out ({why})" if why else "it is not in this conversation"
        return reject("evidence_not_found", f"cited message {c.evidence_message_id!r}: {detail}", c)
    if row.role != "user":
        return reject("evidence_assistant", "the cited message is assistant text, which never proves a user fact", c)
    quote = normalize(c.evidence_text or "")
    if len(compact(quote)) < 2:
        return reject("evidence_too_short", "the quoted evidence is too short to prove anything", c)
    if quote not in normalize(row.content):
        return reject("evidence_mismatch", "the quoted evidence does not occur in the cited user message", c)
    return None


def compare(
    candidate: Candidate,
    decision: Decision,
    *,
    same_key: Fact | None,
    similar: Sequence[Fact],
    config: GovernanceConfig = GovernanceConfig(),
) -> Decision:
    """Turn an accepting gate decision into save / supersede / duplicate, given the
    committed fact holding the same key and facts with similar content."""
    if not decision.accepted:
        return decision
    for fact in ([same_key] if same_key else []) + list(similar):
        if is_near_duplicate(candidate.content, fact.content, config.near_duplicate_ratio):
            return Decision(
                Action.DUPLICATE,
                "duplicate",
                f"already remembered as {fact.id}; nothing written, confidence unchanged",
                candidate,
                fact,
            )
    if same_key is not None and decision.action is Action.SAVE:
        return Decision(
            Action.SUPERSEDE,
            "supersedes",
            f"new version of key {candidate.key!r} (replaces {same_key.id}, kept as history)",
            candidate,
            same_key,
        )
    return decision


_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATIONS = re.compile(r"不|没|别|非|无|未|\bnot\b|\bno\b|\bnever\b|n't|\bnor\b|\bwithout\b")


def is_near_duplicate(a: str, b: str, ratio: float = 0.92) -> bool:
    """Same folded text, or nearly the same — but never when the numbers or the
    negations differ ("fact 3" vs "fact 4", "喜欢" vs "不喜欢" are different facts)."""
    fa, fb = compact(a), compact(b)
    if fa == fb:
        return True
    shorter, longer = sorted((len(fa), len(fb)))
    if shorter < 8 or 2 * shorter / (shorter + longer) < ratio:  # the ratio's upper bound
        return False
    na, nb = normalize(a), normalize(b)
    if _NUMBERS.findall(na) != _NUMBERS.findall(nb) or _NEGATIONS.findall(na) != _NEGATIONS.findall(nb):
        return False
    matcher = SequenceMatcher(None, fa, fb, autojunk=False)
    return matcher.quick_ratio() >= ratio and matcher.ratio() >= ratio


# ----------------------------------------------------------- profile updates


@dataclass(frozen=True, slots=True)
class ProfileUpdate:
    section: str
    summary: str
    source_message_ids: tuple[str, ...] = field(default=())


def parse_profile_update(raw: Any, config: GovernanceConfig = GovernanceConfig()) -> ProfileUpdate:
    data = _as_mapping(raw)
    section = data.get("section")
    if section not in PROFILE_SECTIONS:
        raise InvalidCandidate(f"invalid_section: {section!r} is not one of {', '.join(PROFILE_SECTIONS)}")
    summary = check_text(data.get("summary"), "summary", max_chars=config.max_content_chars * 4)
    scope = _enum(data, "scope", FactScope, FactScope.USER)
    authority = _enum(data, "authority", Authority, Authority.DESCRIPTIVE)
    ids = data.get("source_message_ids") or ([data["evidence_message_id"]] if data.get("evidence_message_id") else [])
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) and i for i in ids):
        raise InvalidCandidate("invalid_evidence: source_message_ids must be a list of message ids")
    if scope is not FactScope.USER:
        raise InvalidCandidate(f"scope_{scope.value}: profile updates must be scope=user")
    if authority is not Authority.DESCRIPTIVE:
        raise InvalidCandidate("transactional: a grant never goes into the profile")
    return ProfileUpdate(section, summary, tuple(ids))  # type: ignore[arg-type]


def gate_profile(update: ProfileUpdate, evidence: FilterResult | None, config: GovernanceConfig = GovernanceConfig()) -> tuple[str, str] | None:
    """``None`` when the update may be written, else ``(code, reason)``."""
    if config.detect_grants:
        if find_grant(update.summary):
            return "transactional", "reads as a grant or permission; never stored in the profile"
    if find_injection(update.summary):
        return "prompt_injection", "addresses the model's instructions; the profile only describes the user"
    if evidence is None:
        return None  # an explicit write by the trusted application
    if not update.source_message_ids:
        return "evidence_missing", "a profile update needs the user messages it rests on"
    rows = evidence.by_id()
    for mid in update.source_message_ids:
        row = rows.get(mid)
        if row is None or row.role != "user":
            return "evidence_not_found", f"source message {mid!r} is not a user message of this conversation"
    return None


def as_status(decision: Decision) -> Status:
    return Status.CANDIDATE if decision.action is Action.CANDIDATE else Status.COMMITTED
