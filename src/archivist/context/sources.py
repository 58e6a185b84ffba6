"""The sources a memory scope offers the assembler: profile, preferences, long-term
memory, task state, evidence, reference material and project rules.

Inline evidence is validated first (every item needs an id and UTF-8 text); once the
view is built, ``MemoryScope.context`` stores it whole in the evidence store, so that
what the view shows as a bounded excerpt can be read back in full by id — by its
owner only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..clock import ensure_utc, parse_time
from ..errors import InvalidInput
from ..model import PROFILE_SECTIONS, Identity
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
from .memory_block import LABELS, escape



class ScopeReader(Protocol):
    """What the sources read through: a scope's identity, its memory (store, clock,
    profile) and its search. ``MemoryScope`` is one; a test double can be another."""

    identity: Any
    memory: Any

    def search(self, query: str, k: int = 5) -> list[Any]: ...


def parse_inline_evidence(raw: Mapping[str, Any], index: int, now, what: str = "evidence") -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{what} {index} must be a mapping with an id and text, or an id string")
    eid = raw.get("id")
    if not isinstance(eid, str) or not eid.strip():
        raise InvalidInput(f"{what} {index} has no id: every piece of evidence needs one to be read back")
    content = raw.get("text", raw.get("content"))
    if content is None:
        raise InvalidInput(f"{what} {eid!r} has no text")
    content = ensure_text(content, f"{what} {eid!r}")
    observed = raw.get("observed_at")
    try:
        observed_at = parse_time(observed) if isinstance(observed, str) else ensure_utc(observed) if observed else now
    except ValueError:
        raise InvalidInput(f"{what} {eid!r}: observed_at is not an ISO-8601 time") from None
    owner = raw.get("owner")
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise InvalidInput(f"{what} {eid!r}: required must be true or false, got {required!r}")
    return {
        "id": eid.strip(),
        "source": str(raw.get("source") or "tool"),
        "observed_at": observed_at.isoformat(),
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
    by_id = [e for e in request.evidence if isinstance(e, str)]
    references = [parse_inline_evidence(r, i, now, "reference") for i, r in enumerate(request.reference)]

    def owner_of(meta: dict[str, Any]) -> Identity:
        owner = meta.get("owner")
        if isinstance(owner, Mapping):
            return Identity(str(owner.get("tenant", identity.tenant)), str(owner.get("user", "?")), identity.agent)
        return identity

    @io_source
    def profile() -> list[Item]:
        labels = LABELS["en"]["sections"]
        sections = store.get_profile(identity).sections
        return [
            Item("profile", f"profile:{name}", "profile", f"- {labels[name]}: {escape(sections[name].summary)}",
                 score=float(len(PROFILE_SECTIONS) - i), owner=identity)
            for i, name in enumerate(PROFILE_SECTIONS) if name in sections and sections[name].summary.strip()
        ]

    @io_source
    def preferences() -> list[Item]:
        return [preference_item(p, identity) for p in store.get_preferences(identity)]

    @io_source
    def memory() -> list[Item]:
        return [
            Item("memory", h.fact.id, f"memory:{h.fact.category.value}", f"- {escape(h.fact.content)}", score=h.score,
                 owner=h.fact.identity, expires_at=h.fact.valid_until, confidence=h.fact.confidence,
                 breakdown={k: round(v, 6) for k, v in h.explanation.items()})
            for h in scope.search(request.query, k=request.memory_k)
        ]

    @io_source
    def task_state() -> list[Item]:
        if not request.task_id:
            return []
        task = store.get_task(identity, request.task_id)
        return [task_item(task, identity)] if task else []

    @io_source
    def evidence() -> list[Item]:
        items = []
        for meta in inline:
            items.append(evidence_item(meta, owner_of(meta)))
        for eid in by_id:
            found = store.get_evidence(identity, eid)
            if found is None:
                items.append(Item("evidence", eid, "evidence:store", "", meta={"missing": True}))
                continue
            meta = {"id": found.id, "source": found.source, "observed_at": found.observed_at.isoformat(),
                    "content": found.content}
            items.append(evidence_item(meta, found.identity))
        return items

    def reference() -> list[Item]:
        return [evidence_item(meta, owner_of(meta), "reference") for meta in references]

    def project_rules() -> list[Item]:
        return [Item("project_rules", f"rule:{i}", "project_rules", f"- {escape(ensure_text(r, 'a project rule'))}",
                     score=float(len(request.project_rules) - i), owner=identity)
                for i, r in enumerate(request.project_rules)]

    return {"profile": profile, "preferences": preferences, "memory": memory, "task_state": task_state,
            "evidence": evidence, "reference": reference, "project_rules": project_rules}
