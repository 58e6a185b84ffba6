"""Records and enums of the memory domain. Pure: no I/O, no clock, no store.

A *fact card* is one remembered statement with its labels, its provenance and its
place in a version chain. A *profile* is the user-global summary rendered before
facts. Identity (tenant, user, agent, project) always comes from the trusted
caller and is carried by :class:`Identity`, never by a model's output.
"""

from __future__ import annotations

import re

import secrets
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any


class Category(StrEnum):
    PREFERENCE = "preference"
    CONTEXT = "context"
    GOAL = "goal"
    CORRECTION = "correction"
    KNOWLEDGE = "knowledge"
    BEHAVIOR = "behavior"


class Kind(StrEnum):
    """How a statement is known (seed 004 §3)."""

    FACT = "fact"  # direct evidence: the user said it, a config value, a test result
    INFERENCE = "inference"  # the system concluded it; stays a candidate until confirmed
    HEURISTIC = "heuristic"  # a rule of thumb learned over tasks; also a candidate first


class FactScope(StrEnum):
    """Where a statement applies (not who may read it: that is :class:`Identity`)."""

    USER = "user"
    THREAD = "thread"
    PROJECT = "project"


class Durability(StrEnum):
    DURABLE = "durable"
    TEMPORARY = "temporary"


class Authority(StrEnum):
    """Descriptive statements describe; transactional ones grant or order an action."""

    DESCRIPTIVE = "descriptive"
    TRANSACTIONAL = "transactional"


class Status(StrEnum):
    CANDIDATE = "candidate"
    COMMITTED = "committed"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DELETED = "deleted"
    ARCHIVED = "archived"  # moved to cold storage by consolidation: kept, never recalled
    EPISODE = "episode"  # what was said: a turn kept as evidence, recalled beside facts, never a fact


# what the keyword and vector indexes hold: committed facts and episodes (recalled apart by status)
INDEXED: tuple[Status, ...] = (Status.COMMITTED, Status.EPISODE)


class SourceType(StrEnum):
    """Where the words of a fact came from."""

    USER_MESSAGE = "user_message"  # quoted from a user message of the conversation
    EXPLICIT = "explicit"  # written through the API by the trusted application
    TOOL = "tool"  # a tool result
    DOCUMENT = "document"  # an external document or upload
    ASSISTANT_MESSAGE = "assistant_message"  # what the assistant said: an episode's source, never a fact's


PROFILE_SECTIONS: tuple[str, ...] = (
    "work_context",
    "personal_context",
    "top_of_mind",
    "cognitive_style",  # how the user thinks and wants things explained (seed 000)
    "recent_months",
    "earlier_context",
    "long_term_background",
)


# letters and digits of any script, and _ . : @ - after the first character
SAFE_NAME = re.compile(r"\w[\w.:@-]{0,127}")


@dataclass(frozen=True, slots=True)
class Identity:
    """The trusted scope of every read and write. Every name matches :data:`SAFE_NAME`,
    checked here once for every entry point: names become file and directory names
    (a Markdown export) and key parts, so no slash, no ``..`` path, no control or
    format character, no space."""

    tenant: str
    user: str
    agent: str
    project: str | None = None

    def __post_init__(self) -> None:
        from ..errors import InvalidIdentity

        for name in ("tenant", "user", "agent", "project"):
            value = getattr(self, name)
            if value is None and name == "project":
                continue
            if not isinstance(value, str) or not value.strip():
                raise InvalidIdentity(f"{name} must be a non-empty string, got {value!r}")
            if not SAFE_NAME.fullmatch(value):
                raise InvalidIdentity(
                    f"{name} {value!r} is not a valid name: 1–128 letters, digits or _ . : @ -, starting with a "
                    "letter, digit or _ (no spaces, slashes or '..' paths)")


@dataclass(frozen=True, slots=True)
class Provenance:
    """What a fact rests on: the message and the quoted words, and who extracted it."""

    source_type: SourceType
    thread_id: str | None = None
    message_id: str | None = None
    evidence_text: str | None = None
    extractor: str | None = None
    extractor_version: str | None = None


_HAN = re.compile(r"[\u3400-\u9fff]")


def embed_text(content: str, context: str | None, said_by: str | None = None) -> str:
    """What embedders see of a fact: the content, then its context. An episode's words
    are quoted after who said them ('Caroline said, "…"', '小林说：“…”'), as questions ask
    about them ("What did Caroline research?"): on LoCoMo this form recalls best."""
    if said_by:
        content = f"{said_by}说：“{content}”" if _HAN.search(content) else f'{said_by} said, "{content}"'
    return content + (f"\n(context: {context})" if context else "")


@dataclass(frozen=True, slots=True)
class Fact:
    """One version of a fact card. A new version is a new row that ``supersedes`` the old.

    Bitemporal: ``valid_from``/``valid_until`` say when the statement was true in the
    world (``valid_until`` is also the expiry), ``recorded_at``/``retired_at`` when
    memory held it as a committed fact. Superseding closes the old version's validity
    and retires it; nothing is overwritten."""

    id: str
    identity: Identity
    content: str
    category: Category
    kind: Kind
    scope: FactScope
    durability: Durability
    authority: Authority
    confidence: float
    status: Status
    provenance: Provenance
    created_at: datetime
    updated_at: datetime
    last_confirmed_at: datetime
    key: str | None = None
    valid_until: datetime | None = None
    version: int = 1
    supersedes: str | None = None
    context: str | None = None  # words around the fact (e.g. the message it answered): indexed, not shown
    valid_from: datetime | None = None
    recorded_at: datetime | None = None  # when it became committed memory (None while a candidate)
    retired_at: datetime | None = None  # when memory stopped holding it (superseded, expired, archived)
    role: str | None = None  # an episode's: "user" or "assistant"
    speaker: str | None = None  # an episode's: the speaker's name when the message gave one

    @property
    def is_episode(self) -> bool:
        return self.status is Status.EPISODE

    @property
    def valid_to(self) -> datetime | None:
        return self.valid_until

    @property
    def embed_text(self) -> str:
        return embed_text(self.content, self.context, (self.speaker or self.role) if self.is_episode else None)

    def evolve(self, **changes: Any) -> Fact:
        return replace(self, **changes)

    def is_expired(self, now: datetime) -> bool:
        return self.valid_until is not None and self.valid_until <= now

    def retired(self, status: Status, now: datetime, *, valid_to: datetime | None = None) -> Fact:
        """This fact no longer held by memory from ``now``: its validity closes at
        ``valid_to`` (if that is earlier than its own end) and the row stays, as history."""
        end = self.valid_until
        if valid_to is not None and (end is None or valid_to < end):
            end = valid_to
        if end is not None and self.valid_from is not None and end < self.valid_from:
            end = self.valid_from  # validity never ends before it starts
        return replace(self, status=status, updated_at=now, retired_at=self.retired_at or now, valid_until=end)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the shape used by exports, the CLI and the API)."""
        return {
            "id": self.id,
            "tenant": self.identity.tenant,
            "user": self.identity.user,
            "agent": self.identity.agent,
            "project": self.identity.project,
            "key": self.key,
            "content": self.content,
            "category": self.category.value,
            "kind": self.kind.value,
            "scope": self.scope.value,
            "durability": self.durability.value,
            "authority": self.authority.value,
            "confidence": self.confidence,
            "status": self.status.value,
            "provenance": {
                "source_type": self.provenance.source_type.value,
                "thread_id": self.provenance.thread_id,
                "message_id": self.provenance.message_id,
                "evidence_text": self.provenance.evidence_text,
                "extractor": self.provenance.extractor,
                "extractor_version": self.provenance.extractor_version,
            },
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "last_confirmed_at": self.last_confirmed_at.isoformat(),
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "version": self.version,
            "supersedes": self.supersedes,
            "context": self.context,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "recorded_at": self.recorded_at.isoformat() if self.recorded_at else None,
            "retired_at": self.retired_at.isoformat() if self.retired_at else None,
            "role": self.role,
            "speaker": self.speaker,
        }


@dataclass(frozen=True, slots=True)
class ProfileSentence:
    """One sentence of a profile section and the live facts it states. A sentence with
    no facts was written by the trusted application (``update_profile``) and rests on
    nothing else; every other sentence goes when one of its facts stops being live."""

    text: str
    facts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileSection:
    name: str
    summary: str
    updated_at: datetime
    source_message_ids: tuple[str, ...] = ()
    sentences: tuple[ProfileSentence, ...] = ()  # the summary, sentence by sentence, with what each cites

    @property
    def cited(self) -> frozenset[str]:
        return frozenset(i for s in self.sentences for i in s.facts)


@dataclass(frozen=True, slots=True)
class Profile:
    """The user-global summary: ``work_context``, ``personal_context``, ``top_of_mind``,
    ``cognitive_style`` and the history sections ``recent_months``, ``earlier_context``,
    ``long_term_background``. A projection of live facts: see :mod:`archivist.lifecycle.profile`."""

    sections: dict[str, ProfileSection] = field(default_factory=dict)

    def get(self, name: str) -> ProfileSection | None:
        return self.sections.get(name)

    @property
    def cited(self) -> frozenset[str]:
        """The facts the profile states."""
        return frozenset(i for s in self.sections.values() for i in s.cited)

    def as_dict(self) -> dict[str, Any]:
        return {
            name: {
                "summary": s.summary,
                "updated_at": s.updated_at.isoformat(),
                "source_message_ids": list(s.source_message_ids),
                "sentences": [{"text": x.text, "facts": list(x.facts)} for x in s.sentences],
            }
            for name, s in self.sections.items()
        }


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A recalled fact or episode with its final score and the parts the score came from."""

    fact: Fact
    score: float
    explanation: dict[str, float] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``"fact"`` (a committed fact card) or ``"episode"`` (a turn as it was said)."""
        return "episode" if self.fact.status is Status.EPISODE else "fact"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One decision of the write gate. Refused grants and secrets keep only the content hash."""

    at: datetime
    action: str
    code: str
    reason: str
    fact_id: str | None = None
    content_hash: str | None = None
    content: str | None = None
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """A raw tool result or document, kept whole (cold). Its id belongs to its owner
    (tenant, user): the same id in two scopes is two items, and reading it by id
    re-checks the owner. Putting an id again with other text adds a version."""

    id: str
    identity: Identity  # owner (tenant, user) and the agent that recorded it
    source: str  # e.g. "tool:read_file", "doc:runbook-v2"
    content: str
    observed_at: datetime | None  # None: when it was observed is not known
    created_at: datetime
    version: int = 1


@dataclass(frozen=True, slots=True)
class Preference:
    """A per-user key/value with an optional expiry. Untrusted entries (from external
    material) are kept for audit but never enter a model view."""

    key: str
    value: str
    trusted: bool
    source: str
    version: int
    updated_at: datetime
    expires_at: datetime | None = None

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True, slots=True)
class TaskState:
    """The goal of a task, how to know it is done, and where it stands."""

    task_id: str
    goal: str
    criteria: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    version: int = 0
    updated_at: datetime | None = None


def new_id() -> str:
    """A UUIDv7 string: time-ordered (sorts by creation) and collision-safe (74 random bits)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    rand_a = rand >> 68  # 12 bits
    rand_b = rand & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


__all__ = [
    "embed_text",
    "SessionSummary",
    "Evidence",
    "Preference",
    "TaskState",
    "AuditEntry",
    "Authority",
    "Category",
    "Durability",
    "Fact",
    "FactScope",
    "INDEXED",
    "Identity",
    "Kind",
    "PROFILE_SECTIONS",
    "Profile",
    "ProfileSection",
    "ProfileSentence",
    "Provenance",
    "SearchHit",
    "SourceType",
    "Status",
    "new_id",
]


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """Short-term memory of one session (see :mod:`archivist.lifecycle.sessions`)."""

    id: str
    thread_id: str
    first_message_id: str | None
    last_message_id: str | None
    message_count: int
    goal: str
    done: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    next_step: str = ""
    cited_fact_ids: tuple[str, ...] = ()
    evidence_id: str | None = None  # the raw transcript, kept whole as evidence
    summarizer: str = "rules"
    created_at: datetime | None = None
    stale_reason: str | None = None  # set when a fact it cited was forgotten

    @property
    def stale(self) -> bool:
        return self.stale_reason is not None

    def payload(self) -> dict[str, Any]:
        return {"goal": self.goal, "done": list(self.done), "open_items": list(self.open_items),
                "decisions": list(self.decisions), "errors": list(self.errors), "next_step": self.next_step,
                "summarizer": self.summarizer}

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "thread_id": self.thread_id,
                "source_range": [self.first_message_id, self.last_message_id],
                "message_count": self.message_count, **self.payload(),
                "cited_fact_ids": list(self.cited_fact_ids), "evidence_id": self.evidence_id,
                "created_at": self.created_at.isoformat() if self.created_at else None,
                "stale_reason": self.stale_reason}


@dataclass(frozen=True, slots=True)
class ForgetReceipt:
    """What forgetting removed, per table, so the caller can show and keep proof of it.
    ``counts`` are rows deleted (or, where the table name says so, redacted or marked)."""

    target: str  # "fact:<id>" or "user:<tenant>/<user>"
    at: datetime
    counts: dict[str, int]
    # the background jobs that make the deleted rows unrecoverable from the store's files
    # (``Store.erasure_job``); nothing forgotten is readable through any API meanwhile
    erasure_jobs: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "at": self.at.isoformat(), "counts": dict(self.counts), "total": self.total,
                "erasure_jobs": list(self.erasure_jobs)}
