"""Consolidation: offline reflection over one scope's memory (seed 004 §7).

Gates (any one): time since the last run ≥ ``min_interval`` (a scope never consolidated
is due), new session summaries since then ≥ ``min_new_sessions``, or an explicit
request. Stages:

1. **orient** — the scope's facts by category and key;
2. **gather** — committed facts and candidates, each with its provenance;
3. **consolidate** — near-duplicates merge into the most trusted copy (confidence,
   then last confirmation; confidence is never raised); versions whose content equals
   their successor's fold away; conflicts (similar statements that differ, e.g. in a
   number, a negation or a place) resolve to the newer one when it is an explicit user
   statement and the older is not newer-confirmed, and otherwise go to the review queue;
   a candidate that contradicts a committed value of its key goes to review too;
4. **prune** — expired facts are marked expired; candidates never confirmed within
   ``candidate_max_age`` and low-confidence facts unconfirmed for ``low_value_age`` are
   archived (cold: kept, never recalled). Evidence is never deleted here.

:func:`plan_consolidation` only reads; :func:`apply_plan` writes the whole plan, the run
record and the audit in one transaction, so a failure or a killed process leaves the
previous state intact. The pair judge is pluggable (:class:`PairJudge`); the default is
deterministic.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from difflib import SequenceMatcher
from typing import Any, Protocol

from ..index.text import compact, query_terms
from ..model import AuditEntry, Fact, Kind, SourceType, Status, new_id
from ..model import content_hash
from ..pipeline.contradictions import contradicts
from ..ports import ScopePort
from ..pipeline.governance import is_near_duplicate


@dataclass(frozen=True, slots=True)
class ConsolidationConfig:
    min_interval: timedelta = timedelta(hours=24)
    min_new_sessions: int = 5
    candidate_max_age: timedelta = timedelta(days=30)
    low_value_confidence: float = 0.75  # just above the write gate's 0.7: the weakest kept facts
    low_value_age: timedelta = timedelta(days=180)
    conflict_ratio: float = 0.7  # similar enough to be about the same thing
    neighbours: int = 8  # keyword neighbours compared per fact


@dataclass(frozen=True, slots=True)
class Action:
    op: str  # merge | supersede | fold | review | expire | archive
    fact_id: str  # the fact acted on (retired, archived, or reviewed)
    reason: str
    keep_id: str | None = None  # the fact that stays (merge, supersede, fold)
    other_ids: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "fact_id": self.fact_id, "keep_id": self.keep_id,
                "other_ids": list(self.other_ids), "reason": self.reason}


@dataclass
class ConsolidationPlan:
    trigger: str  # time | sessions | explicit | not_due
    due: bool
    at: datetime
    last_run: datetime | None
    new_sessions: int
    topics: dict[str, int] = field(default_factory=dict)
    gathered: int = 0
    actions: list[Action] = field(default_factory=list)
    applied: bool = False
    run_id: str | None = None
    skipped: list[str] = field(default_factory=list)  # facts that changed between planning and applying

    def counts(self) -> dict[str, int]:
        return dict(Counter(a.op for a in self.actions))

    def as_dict(self) -> dict[str, Any]:
        return {"trigger": self.trigger, "due": self.due, "at": self.at.isoformat(),
                "last_run": self.last_run.isoformat() if self.last_run else None,
                "new_sessions": self.new_sessions, "topics": self.topics, "gathered": self.gathered,
                "counts": self.counts(), "actions": [a.as_dict() for a in self.actions],
                "applied": self.applied, "run_id": self.run_id, "skipped": self.skipped}


class PairJudge(Protocol):
    """Decides what two facts of a scope are to each other (an LLM can do this)."""

    def judge(self, a: Fact, b: Fact) -> str:
        """``duplicate``, ``conflict`` or ``unrelated``."""


class DeterministicJudge:
    """Near-duplicates by :func:`is_near_duplicate`; a conflict is a pair whose folded
    texts are ``conflict_ratio`` similar but not duplicates (a number, a negation or a
    name differs)."""

    def __init__(self, conflict_ratio: float = 0.7) -> None:
        self.conflict_ratio = conflict_ratio

    def judge(self, a: Fact, b: Fact) -> str:
        if contradicts(a.content, b.content):
            return "conflict"
        if is_near_duplicate(a.content, b.content):
            return "duplicate"
        if a.category == b.category:
            fa, fb = compact(a.content), compact(b.content)
            if min(len(fa), len(fb)) >= 6 and SequenceMatcher(None, fa, fb, autojunk=False).ratio() >= self.conflict_ratio:
                return "conflict"
        return "unrelated"


def _trust(f: Fact) -> tuple:
    return (f.confidence, f.last_confirmed_at, f.created_at, f.id)


def _user_statement(f: Fact) -> bool:
    return f.kind is Kind.FACT and f.provenance.source_type in (SourceType.USER_MESSAGE, SourceType.EXPLICIT)


def gates(scope: ScopePort, now: datetime, config: ConsolidationConfig, *, force: bool) -> tuple[bool, str, datetime | None, int]:
    store = scope.memory.store
    last = store.last_consolidation(scope.identity)
    sessions = len(store.list_summaries(scope.identity, since=last, limit=10_000))
    if force:
        return True, "explicit", last, sessions
    if last is None or now - last >= config.min_interval:
        return True, "time", last, sessions
    if sessions >= config.min_new_sessions:
        return True, "sessions", last, sessions
    return False, "not_due", last, sessions


def plan_consolidation(scope: ScopePort, *, config: ConsolidationConfig = ConsolidationConfig(), force: bool = False,
                       judge: PairJudge | None = None) -> ConsolidationPlan:
    """Read the scope and decide; nothing is written."""
    now = scope.memory.clock.now()
    due, trigger, last, sessions = gates(scope, now, config, force=force)
    plan = ConsolidationPlan(trigger, due, now, last, sessions)
    if not due:
        return plan
    judge = judge or DeterministicJudge(config.conflict_ratio)
    store, ident = scope.memory.store, scope.identity
    # orient + gather
    committed = store.list_facts(ident, statuses=(Status.COMMITTED,))
    candidates = store.list_facts(ident, statuses=(Status.CANDIDATE,))
    plan.topics = dict(Counter(f.category.value for f in committed + candidates).most_common())
    plan.gathered = len(committed) + len(candidates)
    # facts already in an open conflict wait for the review queue: consolidation does not decide twice
    touched: set[str] = {i for item in store.review_items(ident) if item["kind"] == "conflict" for i in item["fact_ids"]}

    def act(action: Action) -> None:
        plan.actions.append(action)
        touched.add(action.fact_id)

    # prune first: what has expired is not merged or compared
    live: list[Fact] = []
    for f in committed:
        if f.is_expired(now):
            act(Action("expire", f.id, f"validity ended {f.valid_until.isoformat()}"))
        elif f.confidence < config.low_value_confidence and now - f.last_confirmed_at >= config.low_value_age:
            act(Action("archive", f.id, f"confidence {f.confidence:.2f} and unconfirmed for "
                                        f"{(now - f.last_confirmed_at).days} days"))
        else:
            live.append(f)
    by_id = {f.id: f for f in live}
    # consolidate: duplicates and conflicts among neighbours
    for f in sorted(live, key=lambda x: (x.created_at, x.id)):
        if f.id in touched:
            continue
        terms = query_terms(f.content)
        if not terms:
            continue
        for match in store.keyword_search(ident, terms, limit=config.neighbours + 1, live_at=now):
            g = by_id.get(match.fact.id)
            if g is None or g.id == f.id or g.id in touched or f.id in touched:
                continue
            verdict = judge.judge(f, g)
            if verdict == "duplicate":
                keep, drop = (f, g) if _trust(f) >= _trust(g) else (g, f)
                act(Action("merge", drop.id, f"near-duplicate of {keep.id}; confidence unchanged", keep.id))
            elif verdict == "conflict":
                older, newer = sorted((f, g), key=lambda x: (x.created_at, x.id))
                if _user_statement(newer) and newer.created_at > older.last_confirmed_at:
                    act(Action("supersede", older.id, f"a newer user statement ({newer.id}) says otherwise",
                               newer.id))
                else:
                    act(Action("review", older.id, "conflicting statements without a clear winner",
                               other_ids=(newer.id,)))
                    touched.add(newer.id)
    # a candidate against the committed value of its key; stale candidates
    keyed = {f.key: f for f in live if f.key}
    for c in candidates:
        if now - c.created_at >= config.candidate_max_age:
            act(Action("archive", c.id, f"a candidate never confirmed in {(now - c.created_at).days} days"))
        elif c.key and c.key in keyed and content_hash(c.content) != content_hash(keyed[c.key].content):
            act(Action("review", c.id, f"candidate contradicts the committed value of {c.key!r}",
                       other_ids=(keyed[c.key].id,)))
    # fold: superseded versions identical to their successor add nothing
    for f in store.list_facts(ident, statuses=(Status.SUPERSEDED,)):
        successor = next((s for s in store.history(ident, f.id) if s.supersedes == f.id), None)
        if successor is not None and content_hash(successor.content) == content_hash(f.content):
            act(Action("fold", f.id, f"version {f.version} repeats version {successor.version}", successor.id))
    return plan


def apply_plan(scope: ScopePort, plan: ConsolidationPlan, *, on_action: Callable[[int, Action], None] | None = None) -> ConsolidationPlan:
    """Write the plan in one transaction (facts, review queue, run record, audit)."""
    if not plan.due:
        return plan
    store, ident, now = scope.memory.store, scope.identity, plan.at
    run_id = new_id()
    live = (Status.COMMITTED, Status.CANDIDATE)
    with scope.memory.writer(ident, now=now) as w:
        for n, a in enumerate(plan.actions):
            fact = store.get_fact(ident, a.fact_id)
            # the plan was made outside this transaction: act only on what is still as planned
            if fact is None or (a.op == "fold") != (fact.status is Status.SUPERSEDED) or \
                    (a.op != "fold" and fact.status not in live):
                plan.skipped.append(a.fact_id)
                continue
            keep = store.get_fact(ident, a.keep_id) if a.keep_id else None
            if a.op in ("merge", "supersede", "fold") and (keep is None or keep.status is not Status.COMMITTED):
                plan.skipped.append(a.fact_id)
                continue
            status = {"expire": Status.EXPIRED, "archive": Status.ARCHIVED, "fold": Status.ARCHIVED,
                      "merge": Status.SUPERSEDED, "supersede": Status.SUPERSEDED}.get(a.op)
            if status is not None:
                valid_to = keep.valid_from if a.op == "supersede" else None
                w.retire(fact, status, code=a.op, reason=a.reason, valid_to=valid_to, action="consolidate")
                if a.op == "supersede":
                    has_successor = any(f.supersedes == fact.id for f in store.history(ident, fact.id))
                    if keep.supersedes is None and not has_successor:  # never fork a version chain
                        w.relink(keep, supersedes=fact.id, version=fact.version + 1)
            elif a.op == "review":
                store.add_review_item(ident, new_id(), "conflict", (a.fact_id, *a.other_ids), a.reason, now)
                w.note(AuditEntry(now, "consolidate", a.op, a.reason, a.fact_id, content_hash(fact.content)))
            if on_action:
                on_action(n, a)
        plan.applied, plan.run_id = True, run_id
        store.record_consolidation(ident, run_id, now, plan.trigger, json.dumps(plan.as_dict(), ensure_ascii=False))
    return plan


def render_plan(plan: ConsolidationPlan, facts: dict[str, Fact] | None = None, limit: int = 50) -> str:
    """The plan as text for a terminal (``archivist consolidate --dry-run``)."""
    facts = facts or {}
    lines = [f"consolidation {'(applied)' if plan.applied else '(plan)'} at {plan.at.isoformat()}",
             f"  gate: {plan.trigger}; last run {plan.last_run.isoformat() if plan.last_run else 'never'}; "
             f"{plan.new_sessions} new sessions since",
             f"  gathered {plan.gathered} facts; topics: "
             + (", ".join(f"{k} {v}" for k, v in plan.topics.items()) or "none")]
    if not plan.due:
        lines.append("  not due (use --force to run anyway)")
        return "\n".join(lines)
    counts = plan.counts()
    lines.append("  actions: " + (", ".join(f"{op} {n}" for op, n in sorted(counts.items())) or "none"))
    for a in plan.actions[:limit]:
        text = facts[a.fact_id].content if a.fact_id in facts else ""
        target = f" -> {a.keep_id}" if a.keep_id else ""
        lines.append(f"  - {a.op:<9} {a.fact_id}{target}: {a.reason}" + (f"  «{text[:60]}»" if text else ""))
    if len(plan.actions) > limit:
        lines.append(f"  … {len(plan.actions) - limit} more")
    return "\n".join(lines)


__all__ = ["Action", "ConsolidationConfig", "ConsolidationPlan", "DeterministicJudge", "PairJudge",
           "apply_plan", "plan_consolidation", "render_plan"]
