"""The sources a memory scope offers the assembler: profile, preferences, long-term
memory, task state, evidence, reference material and project rules.

Inline evidence is validated first (every item needs an id and UTF-8 text); once the
view is built, ``MemoryScope.context`` stores it whole in the evidence store, so that
what the view shows as a bounded excerpt can be read back in full by id — by its
owner only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..clock import ensure_utc, parse_time
from ..errors import InvalidInput
from ..index.text import MAX_QUERY_CHARS, query_terms
from ..lifecycle.profile import read_profile
from ..model import PROFILE_SECTIONS, Category, Identity, Status
from ..ports import ScopePort
from ..storage.base import Store
from .assemble import (
    ContextRequest,
    Item,
    Source,
    ensure_text,
    evidence_item,
    io_source,
    preference_item,
    task_item,
)
from .memory_block import LABELS, escape, fact_line, said_by

ScopeReader = ScopePort  # what the sources read through: a scope's identity, its memory and its search

MAX_EVIDENCE_ID = 200


def parse_inline_evidence(raw: Mapping[str, Any], index: int, now, what: str = "evidence") -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{what} {index} must be a mapping with an id and text, or an id string")
    eid = raw.get("id")
    if not isinstance(eid, str) or not eid.strip():
        raise InvalidInput(f"{what} {index} has no id: every piece of evidence needs one to be read back")
    ensure_text(eid, f"the id of {what} {index}")
    if len(eid) > MAX_EVIDENCE_ID:
        raise InvalidInput(f"{what} {index}: an id has at most {MAX_EVIDENCE_ID} characters, this one {len(eid):,}")
    content = raw.get("text", raw.get("content"))
    if content is None:
        raise InvalidInput(f"{what} {eid!r} has no text")
    content = ensure_text(content, f"{what} {eid!r}")
    observed = raw.get("observed_at")
    try:
        if isinstance(observed, str):  # an empty string is as unknown as none
            observed_at = parse_time(observed) if observed.strip() else None
        else:
            observed_at = ensure_utc(observed) if observed else None
    except ValueError:
        raise InvalidInput(f"{what} {eid!r}: observed_at is not an ISO-8601 time") from None
    owner = raw.get("owner")
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise InvalidInput(f"{what} {eid!r}: required must be true or false, got {required!r}")
    return {
        "id": eid.strip(),
        "source": str(raw.get("source") or "tool"),
        "observed_at": observed_at.isoformat() if observed_at else None,  # None: not known
        "content": content,
        "owner": owner,
        "score": float(raw.get("score", 0.0) or 0.0),
        "required": required,  # protected like the request: the call fails rather than lose it
    }


def inline_evidence(request: ContextRequest, now) -> list[dict[str, Any]]:
    """The request's inline evidence, validated (raises :class:`InvalidInput`)."""
    return [parse_inline_evidence(e, i, now) for i, e in enumerate(request.evidence) if not isinstance(e, str)]


def build_sources(scope: ScopeReader, request: ContextRequest) -> dict[str, Source]:
    """Source callables for the assembler. Inputs are validated here; sources only read."""
    identity = scope.identity
    store = scope.memory.store
    now = scope.memory.clock.now()

    inline = inline_evidence(request, now)
    for meta in inline:  # the version the view cites: the stored one for the same text, else the next
        if not meta.get("owner"):
            try:
                known = store.get_evidence(identity, meta["id"])
            except Exception:  # a store failure shows up in the evidence source; the version stays unsaid
                continue
            same = known is not None and (known.content, known.source) == (meta["content"], meta["source"])
            meta["version"] = known.version if same else (known.version + 1 if known else 1)
    by_id = [e for e in request.evidence if isinstance(e, str)]
    references = [parse_inline_evidence(r, i, now, "reference") for i, r in enumerate(request.reference)]

    def owner_of(meta: dict[str, Any]) -> Identity:
        owner = meta.get("owner")
        if isinstance(owner, Mapping):
            return Identity(str(owner.get("tenant", identity.tenant)), str(owner.get("user", "?")), identity.agent)
        return identity

    @lru_cache(maxsize=1)
    def the_profile() -> Any:  # the profile and the preferences sources both read it: once per call
        return read_profile(store, identity, now)

    @io_source
    def profile() -> list[Item]:
        labels = LABELS["en"]["sections"]
        sections = the_profile().sections
        return [
            Item("profile", f"profile:{name}", "profile", f"- {labels[name]}: {escape(sections[name].summary)}",
                 score=float(len(PROFILE_SECTIONS) - i), owner=identity,
                 meta={"cites": tuple(f for sentence in sections[name].sentences for f in sentence.facts)})
            for i, name in enumerate(PROFILE_SECTIONS) if name in sections and sections[name].summary.strip()
        ]

    @io_source
    def preferences() -> list[Item]:
        """Preferences the application set, then standing preferences the user stated
        (facts of the preference category): both apply to any request."""
        items = [preference_item(p, identity) for p in store.get_preferences(identity)]
        stated = store.list_facts(identity, live_at=now, category=Category.PREFERENCE, limit=PREFERENCE_FACTS)
        if stated:  # what the profile already says is not said twice
            shown = the_profile().cited
            stated = [f for f in stated if f.id not in shown]
        disputed = open_conflicts(store, identity) if stated else {}
        for rank, fact in enumerate(stated):
            items.append(Item("preferences", fact.id, "memory:preference", fact_line(fact, disputed),
                              score=0.5 - rank / 1000, owner=fact.identity, expires_at=fact.valid_until,
                              confidence=fact.confidence,
                              meta={"key": fact.key, "value": fact.content} | memory_meta(fact, disputed)))
        return items

    @lru_cache(maxsize=1)
    def recall() -> list[Any]:  # the memory and evidence sources both read it: one search per call
        if not query_terms(request.query):
            return []
        # a search takes a query of at most MAX_QUERY_CHARS: a longer request (a pasted log,
        # then the question) is searched by its end, where what is asked usually is
        return scope.search(request.query[-MAX_QUERY_CHARS:], k=request.memory_k + BEYOND_K + request.episode_k,
                            kinds=("fact", "episode") if request.episode_k else ("fact",))

    @io_source
    def memory() -> list[Item]:
        """The best ``memory_k`` hits, plus what a reader of the trace would look for and
        not find: the next hits (``beyond_k``), and expired or unconfirmed facts sharing a
        word with the request — each filtered with its reason, never shown to the model."""
        hits = [h for h in recall() if h.kind == "fact"][:request.memory_k + BEYOND_K]
        disputed = open_conflicts(store, identity)
        stated = the_profile().cited  # what the profile says is not said twice
        floor = relevance_floor(scope)
        items = []
        hits = [h for h in hits if h.fact.category is not Category.PREFERENCE  # in the preferences section
                and h.fact.category is not Category.CORRECTION and h.fact.id not in stated]  # always shown below
        for rank, h in enumerate(hits):
            meta = memory_meta(h.fact, disputed)
            if not relevant(h, floor):
                meta["below_floor"] = (f"shares no word with the request and its similarity "
                                       f"{h.explanation.get('cosine', 0):.2f} is below the embedder's floor {floor:.2f}")
            elif rank >= request.memory_k:
                meta.update(beyond_k=rank + 1, memory_k=request.memory_k)
            items.append(Item("memory", h.fact.id, f"memory:{h.fact.category.value}", fact_line(h.fact, disputed),
                              score=h.score, owner=h.fact.identity, expires_at=h.fact.valid_until,
                              confidence=h.fact.confidence,
                              breakdown={k: round(v, 6) for k, v in h.explanation.items()}, meta=meta))
        # the correction pool goes into every call, as render() shows it: past mistakes not to repeat
        for rank, fact in enumerate(store.list_facts(identity, live_at=now, category=Category.CORRECTION,
                                                     limit=CORRECTION_FACTS)):
            items.append(Item("memory", fact.id, "memory:correction", fact_line(fact, disputed),
                              score=2.0 - rank / 1000, owner=fact.identity, expires_at=fact.valid_until,
                              confidence=fact.confidence, meta=memory_meta(fact, disputed) | {"always": "correction"}))
        seen = {h.fact.id for h in hits} | {it.id for it in items}
        for fact in not_live_matches(store, identity, request.query, now, seen):
            meta = {"content": fact.content}
            if fact.status is Status.CANDIDATE:
                meta["unconfirmed"] = True
            elif fact.status is Status.EXPIRED:
                meta["retired"] = "expired"
            items.append(Item("memory", fact.id, f"memory:{fact.category.value}", f"- {escape(fact.content)}",
                              score=-1.0, owner=fact.identity, expires_at=fact.valid_until,
                              confidence=fact.confidence, meta=meta))
        return items

    @io_source
    def last_session() -> list[Item]:
        """The latest session's summary, when the request shares a word with it (or the
        request is a follow-up that names nothing: "继续", "where were we?")."""
        found = [s for s in store.list_summaries(identity, limit=5) if not s.stale][:1]
        items = [summary_item(s, identity) for s in found]
        for item in items:
            item.score = relevance(request.query, item.meta["excerpt_text"])
            if item.score == 0.0 and len(query_terms(request.query)) > 2:
                item.meta["below_floor"] = "shares no word with the request"
        return items

    @io_source
    def task_state() -> list[Item]:
        if not request.task_id:
            return []
        task = store.get_task(identity, request.task_id)
        return [task_item(task, identity)] if task else []

    @io_source
    def evidence() -> list[Item]:
        items = []
        for i, meta in enumerate(inline):  # most relevant to the request first
            items.append(evidence_item(meta, owner_of(meta)))
            items[-1].score = max(items[-1].score, relevance(request.query, str(meta.get("content", "")))) - i / 1e6
        for eid in by_id:
            found = store.get_evidence(identity, eid)
            if found is None:
                items.append(Item("evidence", eid, "evidence:store", "", meta={"missing": True}))
                continue
            meta = {"id": found.id, "source": found.source, "content": found.content, "version": found.version,
                    "observed_at": found.observed_at.isoformat() if found.observed_at else None}
            items.append(evidence_item(meta, found.identity))
        for h in [h for h in recall() if h.kind == "episode"][:request.episode_k]:
            items.append(episode_item(h))
        return items

    def reference() -> list[Item]:
        """Reference material, most relevant to the request first (not in the order given)."""
        items = [evidence_item(meta, owner_of(meta), "reference") for meta in references]
        for i, item in enumerate(items):
            item.score = relevance(request.query, str(item.meta.get("content", ""))) - i / 1e6
        return items

    def project_rules() -> list[Item]:
        return [Item("project_rules", f"rule:{i}", "project_rules", f"- {escape(ensure_text(r, 'a project rule'))}",
                     score=float(len(request.project_rules) - i), owner=identity)
                for i, r in enumerate(request.project_rules)]

    return {"profile": profile, "preferences": preferences, "memory": memory, "task_state": task_state,
            "evidence": evidence, "reference": reference, "project_rules": project_rules,
            "last_session": last_session}


PREFERENCE_FACTS = 20  # stated preferences offered to every call, newest first
CORRECTION_FACTS = 10  # corrections offered to every call, newest first


def relevance(query: str, text: str) -> float:
    """The share of the request's words ``text`` contains: how packing orders items that
    have no search score (reference material, inline evidence, the last session)."""
    wanted = set(query_terms(query))
    return len(wanted & set(query_terms(text))) / len(wanted) if wanted else 0.0


def relevance_floor(scope: ScopePort) -> float | None:
    """The similarity below which a fact that shares no word with the request is not
    shown: the embedder's ``relevance_floor`` (None: no embedder, or none measured)."""
    embedder = scope.memory.embedder
    return getattr(embedder, "relevance_floor", None) if embedder is not None else None


def relevant(hit: Any, floor: float | None) -> bool:
    """A hit the request is about: it shares a word with it, or is similar enough."""
    e = hit.explanation
    return "keyword_rank" in e or floor is None or max(e.get("cosine", 0.0), e.get("tail_cosine", 0.0)) >= floor


def memory_meta(fact: Any, disputed: Mapping[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"content": fact.content}
    if fact.id in disputed:
        meta["note"] = f"in an open conflict ({disputed[fact.id]})"
    return meta

BEYOND_K = 5  # hits fetched past memory_k, so the trace can say "ranked, but beyond k"
NOT_LIVE_LIMIT = 20  # expired or unconfirmed facts the trace reports per call
NOT_LIVE_SCAN = 100  # the newest expired and unconfirmed facts looked at


def open_conflicts(store: Store, identity: Identity) -> dict[str, str]:
    """Fact id -> the open review item's reason, for facts in a conflict nobody settled yet
    (found at write time or by consolidation)."""
    out: dict[str, str] = {}
    for item in store.review_items(identity):
        if item.get("kind") == "conflict":
            for fid in item.get("fact_ids") or ():
                out[fid] = str(item.get("reason") or "conflict")
    return out


def not_live_matches(store: Store, identity: Identity, query: str, now: datetime, skip: set[str]) -> list[Any]:
    """Facts the search would have found were they live, sharing a search term with the
    query: committed facts past their validity, unconfirmed candidates, and facts the
    lifecycle marked expired (the newest of each, NOT_LIVE_SCAN at most)."""
    wanted = set(query_terms(query))
    if not wanted:
        return []
    facts = store.list_facts(identity, expired_at=now, limit=NOT_LIVE_SCAN)
    facts += [f for f in store.list_facts(identity, statuses=(Status.CANDIDATE, Status.EXPIRED), limit=NOT_LIVE_SCAN)
              if f.status is Status.EXPIRED or f.valid_until is None or f.valid_until > now]
    out = [f for f in facts if f.id not in skip and wanted & set(query_terms(f.content))]
    return out[:NOT_LIVE_LIMIT]


def episode_item(hit: Any) -> Item:
    """A recalled turn as evidence: who said it and when, its words as an excerpt tagged
    as external data (cut to fit like any evidence), its search score."""
    e = hit.fact
    meta = {"id": e.id, "source": f"episode:{e.role or 'unknown'}", "content": e.content,
            "observed_at": e.created_at.isoformat(), "said_by": said_by(e),
            "score": hit.score, "episode": True, "thread_id": e.provenance.thread_id,
            "message_id": e.provenance.message_id, "cites": (e.id,)}
    item = evidence_item(meta, e.identity)
    item.breakdown = {k: round(v, 6) for k, v in hit.explanation.items()}
    return item


def summary_item(summary: Any, owner: Identity) -> Item:
    """The previous session's summary as a short block: goal, open items, next step."""
    lines = [f"- Goal: {escape(summary.goal)}"] if summary.goal else []
    if summary.done:
        lines.append("- Done: " + "; ".join(escape(d) for d in summary.done))
    if summary.open_items:
        lines.append("- Still open: " + "; ".join(escape(o) for o in summary.open_items))
    if summary.decisions:
        lines.append("- Decided: " + "; ".join(escape(d) for d in summary.decisions))
    if summary.next_step:
        lines.append(f"- Next step: {escape(summary.next_step)}")
    when = summary.created_at.date().isoformat() if summary.created_at else "unknown date"
    text = f"(session {escape(summary.thread_id)}, {when})\n" + "\n".join(lines)
    return Item("last_session", f"session:{summary.id}", f"summary:{summary.thread_id}", text, score=1.0,
                owner=owner, meta={"excerpt_text": " ".join(lines)})
