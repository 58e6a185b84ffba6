"""How a fact maps to a table row: one column list and one conversion each way,
shared by every SQL backend so that they cannot drift apart."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np

from ..clock import parse_time
from ..index.text import indexed_text
from ..model import (
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Identity,
    Kind,
    Provenance,
    SourceType,
    Status,
)
from .records import ApiKeyRecord, ConsolidationRunRecord, ReviewItemRecord

FACT_COLUMNS = (
    "id, tenant, user_id, agent, project, key, content, content_hash, category, kind, scope, "
    "durability, authority, confidence, status, source_type, thread_id, message_id, evidence_text, "
    "extractor, extractor_version, created_at, updated_at, last_confirmed_at, valid_until, version, supersedes, context, "
    "valid_from, recorded_at, retired_at, role, speaker"
)
N_FACT_COLUMNS = 33  # seq follows them in queries that select it


def index_text(fact: Fact) -> str:
    """What the keyword index holds for a fact: its content, then its context."""
    return indexed_text(fact.content, fact.context)


def fact_params(f: Fact, ts: Callable[[datetime | None], Any]) -> tuple:
    """The row values of ``f`` in :data:`FACT_COLUMNS` order; ``ts`` encodes times."""
    from ..model import content_hash

    p = f.provenance
    return (
        f.id, f.identity.tenant, f.identity.user, f.identity.agent, f.identity.project, f.key, f.content,
        content_hash(f.content), f.category.value, f.kind.value, f.scope.value, f.durability.value,
        f.authority.value, f.confidence, f.status.value, p.source_type.value, p.thread_id, p.message_id,
        p.evidence_text, p.extractor, p.extractor_version, ts(f.created_at), ts(f.updated_at),
        ts(f.last_confirmed_at), ts(f.valid_until), f.version, f.supersedes, f.context,
        ts(f.valid_from), ts(f.recorded_at), ts(f.retired_at), f.role, f.speaker,
    )


_ENUMS = {
    enum: {member.value: member for member in enum}
    for enum in (Category, Kind, FactScope, Durability, Authority, Status, SourceType)
}


@lru_cache(maxsize=4096)
def _identity(tenant: str, user: str, agent: str, project: str | None) -> Identity:
    return Identity(tenant, user, agent, project)  # rows repeat the same few scopes: build each once


def as_time(value: str | datetime | None) -> datetime | None:
    """A stored time (ISO text in SQLite, ``timestamptz`` in PostgreSQL) as aware UTC."""
    if value is None or value == "":
        return None
    return parse_time(value) if isinstance(value, str) else parse_time(value.isoformat())


def fact_from_row(r: Any) -> Fact:
    (fid, tenant, user, agent, project, key, content, _hash, category, kind, scope, durability, authority,
     confidence, status, source_type, thread_id, message_id, evidence_text, extractor, extractor_version,
     created_at, updated_at, last_confirmed_at, valid_until, version, supersedes, context,
     valid_from, recorded_at, retired_at, role, speaker) = tuple(r)[:N_FACT_COLUMNS]
    return Fact(
        id=fid,
        identity=_identity(tenant, user, agent, project),
        key=key,
        content=content,
        category=_ENUMS[Category][category],
        kind=_ENUMS[Kind][kind],
        scope=_ENUMS[FactScope][scope],
        durability=_ENUMS[Durability][durability],
        authority=_ENUMS[Authority][authority],
        confidence=confidence,
        status=_ENUMS[Status][status],
        provenance=Provenance(
            _ENUMS[SourceType][source_type], thread_id, message_id, evidence_text, extractor, extractor_version
        ),
        created_at=as_time(created_at),
        updated_at=as_time(updated_at),
        last_confirmed_at=as_time(last_confirmed_at),
        valid_until=as_time(valid_until),
        version=version,
        supersedes=supersedes,
        context=context,
        valid_from=as_time(valid_from),
        recorded_at=as_time(recorded_at),
        retired_at=as_time(retired_at),
        role=role,
        speaker=speaker,
    )


PROFILE_COLUMNS = "section, summary, updated_at, source_message_ids, sentences"


def profile_section_from_row(row: Any):
    """A :class:`~archivist.model.ProfileSection` from :data:`PROFILE_COLUMNS`."""
    import json

    from ..model import ProfileSection, ProfileSentence

    name, summary, at, ids, sentences = row
    return ProfileSection(name, summary, as_time(at), tuple(json.loads(ids)),
                          tuple(ProfileSentence(s["text"], tuple(s["facts"])) for s in json.loads(sentences or "[]")))


def profile_section_params(identity: Identity, section: Any, ts: Callable[[datetime | None], Any]) -> tuple:
    """The row values of a profile section: (tenant, user) and :data:`PROFILE_COLUMNS`."""
    import json

    sentences = [{"text": s.text, "facts": list(s.facts)} for s in section.sentences]
    return (identity.tenant, identity.user, section.name, section.summary, ts(section.updated_at),
            json.dumps(list(section.source_message_ids)), json.dumps(sentences, ensure_ascii=False))


SUMMARY_COLUMNS = ("id, thread_id, first_message_id, last_message_id, message_count, payload, cited_fact_ids, "
                   "evidence_id, stale_reason, created_at")


# what a session summary that rested on a forgotten fact says from then on: an LLM's summary
# words the fact its own way, so no quote of it can be found and taken out: all of it goes
FORGOTTEN_SUMMARY = ('{"goal": "[forgotten]", "done": [], "open_items": [], "decisions": [], "errors": [], '
                     '"next_step": "", "summarizer": "forgotten"}')


def summary_from_row(row: Any):
    """A :class:`~archivist.lifecycle.sessions.SessionSummary` from :data:`SUMMARY_COLUMNS`."""
    import json

    from ..model import SessionSummary

    sid, thread, first, last, count, payload, cited, evidence, stale, created = row
    p = json.loads(payload)
    return SessionSummary(
        sid, thread, first, last, count, p["goal"], tuple(p["done"]), tuple(p["open_items"]),
        tuple(p["decisions"]), tuple(p["errors"]), p["next_step"], tuple(json.loads(cited)), evidence,
        p.get("summarizer", "rules"), as_time(created), stale)


def iso(value: str | datetime | None) -> str | None:
    """A stored time as the ISO text the API returns (UTC, microseconds)."""
    t = as_time(value)
    return t.isoformat(timespec="microseconds") if t else None


def consolidation_run_from_row(row: Any) -> ConsolidationRunRecord:
    import json

    run_id, started, trigger, plan = row
    return ConsolidationRunRecord(id=run_id, started_at=iso(started), trigger=trigger, plan=json.loads(plan))


def review_item_from_row(row: Any) -> ReviewItemRecord:
    import json

    item_id, kind, fact_ids, reason, status, created, resolved = row
    return ReviewItemRecord(id=item_id, kind=kind, fact_ids=json.loads(fact_ids), reason=reason, status=status,
                            created_at=iso(created), resolved_at=iso(resolved))


def api_key_from_row(row: Any) -> ApiKeyRecord:
    import json

    kid, tenant, users, agents, role, label = row
    return ApiKeyRecord(id=kid, tenant=tenant, users=json.loads(users), agents=json.loads(agents), role=role,
                        label=label)


def redaction_needles(quotes: list[str]) -> list[str]:
    """What forgetting replaces in free text, longest first: each quote as written, with
    its whitespace collapsed (views and excerpts keep one line), HTML-escaped (as a view
    shows it), as a trace's excerpt (its first characters), and each of those as JSON
    string content. Quotes under 4 characters are too short to redact."""
    import json

    from ..model.folding import EXCERPT_CHARS, excerpt

    forms: set[str] = set()
    for q in quotes:
        if len(q.strip()) < 4:
            continue
        flat = " ".join(q.split())
        escaped = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        short = excerpt(q)
        forms |= {q, flat, escaped, short.removesuffix("…") if len(flat) > EXCERPT_CHARS else short}
    needles = {n for f in forms if len(f.strip()) >= 4 for n in (f, json.dumps(f, ensure_ascii=False)[1:-1])}
    return sorted(needles, key=len, reverse=True)


class Counts(dict):
    """Rows removed or changed per table, for a forget receipt (zeros left out), and
    the erasure jobs that make them unrecoverable from the files."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.erasure_jobs: list[str] = []

    def add(self, table: str, n: int) -> None:
        if n:
            self[table] = self.get(table, 0) + n


def visible(identity: Identity, column: str = "project", mark: str = "?") -> tuple[str, tuple]:
    """The SQL condition for the facts a scope sees: user facts always, project facts of
    its own project only (``mark`` is the dialect's placeholder)."""
    if identity.project is None:
        return f"{column} IS NULL", ()
    return f"({column} IS NULL OR {column} = {mark})", (identity.project,)


def graph_vector_columns(vectors: Sequence[tuple[str, np.ndarray]] | None) -> tuple[str | None, bytes | None]:
    """The (vector_paths JSON, float32 matrix bytes) an item's index vectors are stored as."""
    if vectors is None:
        return None, None
    if not vectors:
        return "[]", None
    matrix = np.vstack([np.asarray(v, dtype=np.float32).ravel() for _, v in vectors])
    return json.dumps([p for p, _ in vectors], ensure_ascii=False), matrix.tobytes()


def graph_item_vectors(row: tuple) -> tuple[list[str] | None, np.ndarray | None]:
    """An item row's index paths and vectors (one row per path); paths None = never indexed."""
    paths_json, blob = row[7], row[8]
    if paths_json is None:
        return None, None
    paths = json.loads(paths_json)
    if not paths or blob is None:
        return paths, None
    return paths, np.frombuffer(blob, dtype=np.float32).reshape(len(paths), -1)
