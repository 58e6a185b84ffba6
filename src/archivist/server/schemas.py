"""Response models of the REST API: every 2xx body has a named schema, so generated
clients get typed objects and schemathesis's response checks have something to check.
They describe what :meth:`Fact.as_dict`, traces and receipts already produce; a field
added there must be added here, or FastAPI drops it from the response."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from ..model import Category
from ..model.records import Authority, Durability, FactScope, Kind, SourceType, Status


#: an RFC 3339 time, passed through as the store wrote it (offset and precision kept)
datetime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Provenance(Out):
    source_type: SourceType = Field(description="Where the fact came from: a user message, the API, a tool, a document.")
    thread_id: str | None = Field(description="The conversation it was learnt in.")
    message_id: str | None = Field(description="The message it quotes.")
    evidence_text: str | None = Field(description="The words of that message it rests on.")
    extractor: str | None = Field(description="What wrote it: 'api', 'rules', an LLM extractor's name, an import.")
    extractor_version: str | None


class Fact(Out):
    """A versioned fact card."""

    id: str
    tenant: str
    user: str
    agent: str
    project: str | None
    key: str | None = Field(description="The attribute it sets (one live value per key); null for free facts.")
    content: str
    category: Category
    kind: Kind
    scope: FactScope
    durability: Durability
    authority: Authority
    confidence: float = Field(ge=0, le=1)
    status: Status
    provenance: Provenance
    created_at: datetime
    updated_at: datetime
    last_confirmed_at: datetime | None
    valid_until: datetime | None
    version: int = Field(ge=1)
    supersedes: str | None = Field(description="The id of the version this one replaced.")
    context: str | None = Field(description="What it answers or refers to; indexed, never shown in context.")
    valid_from: datetime | None
    recorded_at: datetime | None
    retired_at: datetime | None
    role: Literal["user", "assistant"] | None = Field(default=None, description="An episode's: who spoke.")
    speaker: str | None = Field(default=None, description="An episode's: the speaker's name, when given.")


class FactPage(Out):
    items: list[Fact]
    next_cursor: int | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
    total: int = Field(ge=0)


class SearchHit(Out):
    kind: Literal["fact", "episode"] = Field(description="`fact`: a committed fact card; `episode`: a turn of a "
                                                         "conversation as it was said (status `episode`).")
    fact: Fact
    score: float = Field(description="The final rerank score (higher is better; comparable within one search).")
    explanation: dict[str, float] = Field(description="The parts the score came from, by feature name.")


class ChatMessage(Out):
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class TraceEntry(Out):
    model_config = ConfigDict(extra="allow")

    section: str
    id: str
    source: str | None = None
    tokens: int
    selected: bool
    reason: str = Field(description="Why it was chosen or dropped: protected, selected, over_budget, …")
    excerpt: str | None = Field(None, description="The start of its text.")


class Trace(Out):
    """What one model call saw: what was chosen, what was dropped and why."""

    model_config = ConfigDict(extra="allow")

    id: str
    agent: str = Field(description="The agent whose call it was.")
    thread_id: str | None
    run_id: str | None
    call_index: int | None
    created_at: datetime
    query: str | None
    budget: int
    reserve: int
    available: int
    total_tokens: int
    sections: dict[str, int]
    planned: list[str]
    failures: list[Any]
    overrides: list[Any]
    entries: list[TraceEntry]


class KeptMessage(Out):
    id: str = Field(description="The id the message was sent with (or the one given to it: its position).")
    role: Literal["user", "assistant", "tool"]
    content: str = Field(description="As the view has it: an old tool result may be cleared.")


class ContextView(Out):
    messages: list[ChatMessage] = Field(description="The projection to send to the model, in order.")
    system: str = Field("", description="The view's system message: instructions, tools' prefix, memory, context.")
    history: list[KeptMessage] = Field([], description="The history messages the view kept, in order.")
    steps: list[KeptMessage] = Field([], description="The run's steps after the request, in order (all kept).")
    tokens: int = Field(ge=0, description="Its size in the model's tokens.")
    trace_id: str | None = Field(description="The stored trace (null for a reader key, whose views are not stored).")
    trace_stored: bool
    trace: Trace


class TraceSummary(Out):
    id: str
    created_at: datetime
    thread_id: str | None
    run_id: str | None
    call_index: int | None
    query: str | None
    total_tokens: int
    budget: int
    available: int


class WhyAnswer(Out):
    trace_id: str
    subject: str
    answer: str = Field(description="One line: why the subject was or was not in the view.")


class ForgetReceipt(Out):
    target: str = Field(description="'fact:<id>' or 'user:<tenant>/<user>'.")
    at: datetime
    counts: dict[str, int] = Field(description="Rows removed (or redacted, where the name says so) per table.")
    total: int = Field(ge=0)
    erasure_jobs: list[str] = Field(default_factory=list, description=(
        "Background jobs that make the deleted rows unrecoverable from the store's files (GET /v1/erasure-jobs/{id}); "
        "nothing forgotten is readable through any API once this response is sent."))


class Preference(Out):
    key: str
    value: str
    version: int
    trusted: bool
    updated_at: datetime
    expires_at: datetime | None


class Task(Out):
    task_id: str
    goal: str
    criteria: list[str]
    done: list[str]
    missing: list[str]
    version: int
    updated_at: datetime | None


class ErasureJob(Out):
    id: str
    tenant: str
    state: Literal["pending", "running", "done", "failed"] = Field(
        description="failed: the eraser's note says why; `archivist purge` finishes it.")
    tables: list[str] = Field(description="The tables whose files it erases (never a user or their words).")
    whole_user: bool
    attempts: int = Field(ge=0)
    created_at: datetime | None
    finished_at: datetime | None
    note: str | None


class JobAccepted(Out):
    job_id: str
    status: Literal["queued"]
    status_url: str


class Job(Out):
    id: str
    status: Literal["queued", "running", "done", "failed", "cancelled"] = Field(
        description="cancelled: its user was forgotten before it ran.")
    user: str
    agent: str
    report: dict[str, Any] | None = Field(description="What extraction wrote and refused, once done.")
    error: str | None = None
    consolidation: dict[str, Any] | None = None


class ConsolidationRun(Out):
    id: str
    started_at: datetime
    trigger: str = Field(description="What started it: a write count, a schedule, a manual run.")
    plan: dict[str, Any] = Field(description="What it merged, retired and archived.")


class ReviewItem(Out):
    id: str
    kind: str
    fact_ids: list[str]
    reason: str
    status: Literal["open", "resolved"]
    created_at: datetime
    resolved_at: datetime | None


class StaleFact(Out):
    fact: Fact
    reason: str = Field(description="Why it needs re-confirming: expired, or unconfirmed for too long.")
    overdue_days: int


class Refusal(Out):
    at: datetime
    action: Literal["reject", "candidate"] = Field(description="reject: refused; candidate: held unconfirmed.")
    code: str = Field(description="The gate's code, e.g. transactional, secret, prompt_injection, held_unrecognised.")
    reason: str
    content: str | None = Field(None, description="The text, where the audit keeps it: never a refused secret or grant.")
    fact_id: str | None = None
    message_id: str | None = None


class Review(Out):
    candidates: list[Fact] = Field(description="Facts waiting for confirmation.")
    conflicts: list[ReviewItem] = Field(description="Open conflicts consolidation could not settle.")
    stale: list[StaleFact] = Field(description="Facts to re-confirm, most overdue first.")


class WhoAmI(Out):
    """What the key in use may do, and what this server offers: never the secret or its hash."""

    tenant: str = Field(description="The tenant the key belongs to.")
    role: Literal["reader", "writer", "admin"] = Field(
        description="reader: read, search, context; writer: also write, confirm, forget facts, ingest; "
                    "admin: also forget a whole user, export.")
    users: list[str] = Field(description="The users the key may act for ('*': any).")
    agents: list[str] = Field(description="The agents the key may act for ('*': any).")
    project: str | None = Field(description="The project named by this request's X-Project header, if any.")
    search_modes: list[Literal["keyword", "vector", "hybrid"]] = Field(
        description="The search modes this server accepts: keyword only without an embedder.")


class Health(Out):
    status: Literal["ok"]
