"""Export and import of one user's memory.

* **JSONL** (lossless, versioned): a header line ``{"format": "archivist", "version": 1,
  "tenant", "user", "exported_at"}``, then one record per line with a ``type``: ``fact``
  (every version, every status, all agents), ``episode`` (a turn as it was said, see
  :mod:`archivist.pipeline.episodes`), ``profile_section``, ``preference``,
  ``evidence``, ``summary`` and ``tombstone``. Audit trails and context traces stay with
  the store that made them.
* **Markdown cards**: ``<dir>/<agent>/<fact id>.md``, YAML front matter plus the content
  as the body; edit the body and import the directory again to write a new version.

Imports are all or nothing: every line or card is validated first (format version,
types, fields, duplicate ids, ids already in the store, a tenant or user other than
the target) and the first problem is raised as :class:`InvalidInput` naming the line or
file; nothing is written unless everything is valid, and then everything is written in
one transaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..clock import parse_time
from ..errors import InvalidInput
from ..index.text import query_terms
from ..jsonl import json_objects
from ..model import (
    PROFILE_SECTIONS,
    Authority,
    Category,
    Durability,
    Evidence,
    Fact,
    FactScope,
    Identity,
    Kind,
    Preference,
    ProfileSection,
    ProfileSentence,
    Provenance,
    SourceType,
    Status,
    content_hash,
)
from ..pipeline.contradictions import contradicts
from ..pipeline.episodes import MAX_EPISODE_CHARS, episode_id, part_label, screen_turn
from ..pipeline.governance import (
    Rejection,
    admit,
    check_text,
    is_held,
    prejudge,
    screen,
    unknown_fields,
    vet_summary,
)
from ..pipeline.recognise import doubt, doubt_preference
from ..pipeline.secrets import find_secret
from ..ports import MemoryPort
from ..storage.base import Store
from .profile import cite_sentences, section, split_sentences, states

FORMAT, VERSION = "archivist", 1
MAX_BAD_LINES = 50  # an import that fails names at most this many of its bad lines
RECORD_TYPES = ("fact", "episode", "profile_section", "preference", "evidence", "summary", "tombstone")
_FACT_FIELDS = frozenset({"type", "id", "tenant", "user", "agent", "project", "key", "content", "category", "kind",
                          "scope", "durability", "authority", "confidence", "status", "provenance", "created_at",
                          "updated_at", "last_confirmed_at", "valid_until", "version", "supersedes", "context",
                          "valid_from", "recorded_at", "retired_at", "role", "speaker"})
#: the fields each record type is written with (import refuses others: a misspelt field
#: would be dropped without a word); the round-trip test holds the export to them
RECORD_FIELDS = {
    "fact": _FACT_FIELDS, "episode": _FACT_FIELDS,
    "profile_section": frozenset({"type", "section", "summary", "updated_at", "source_message_ids", "sentences"}),
    "preference": frozenset({"type", "key", "value", "trusted", "source", "version", "updated_at", "expires_at"}),
    "evidence": frozenset({"type", "agent", "id", "source", "content", "observed_at", "created_at", "version"}),
    "summary": frozenset({"type", "agent", "id", "thread_id", "source_range", "message_count", "goal", "done",
                          "open_items", "decisions", "errors", "next_step", "summarizer", "cited_fact_ids",
                          "evidence_id", "created_at", "stale_reason"}),
    "tombstone": frozenset({"type", "agent", "content_hash", "created_at"}),
}
_PROVENANCE_FIELDS = frozenset({"source_type", "thread_id", "message_id", "evidence_text", "extractor",
                                "extractor_version"})


# ----------------------------------------------------------------------- facts <-> dicts
def _time(value: Any, name: str, *, required: bool = True) -> datetime | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be an ISO-8601 string")
    return parse_time(value)


SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,127}$")  # ids and agent names: also file names


def fact_from_dict(d: dict[str, Any]) -> Fact:
    """The inverse of :meth:`Fact.as_dict`; raises ``ValueError``/``KeyError`` on bad input."""
    p = d.get("provenance") or {}
    if not isinstance(d.get("id"), str) or not SAFE_NAME.match(d["id"]) or ".." in d["id"]:
        raise ValueError(f"id must be 1-128 letters, digits or _.:@- (got {d.get('id')!r})")
    agent = d.get("agent") or "default"
    if not isinstance(agent, str):
        raise ValueError(f"agent must be a name (got {agent!r})")
    try:  # the naming rule every entry point shares (letters and digits of any script)
        Identity("t", "u", agent)
    except InvalidInput as exc:
        raise ValueError(f"agent: {exc}") from None
    if not isinstance(d.get("content"), str) or not d["content"].strip():
        raise ValueError("content must be a non-empty string")
    confidence = d.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise ValueError("confidence must be a number in [0, 1]")
    version = d.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError("version must be an integer >= 1")
    return Fact(
        id=d["id"],
        identity=Identity(d["tenant"], d["user"], d.get("agent") or "default", d.get("project")),
        key=d.get("key"),
        content=d["content"],
        category=_member(Category, d["category"], "category"),
        kind=_member(Kind, d.get("kind", "fact"), "kind"),
        scope=_member(FactScope, d.get("scope", "user"), "scope"),
        durability=_member(Durability, d.get("durability", "durable"), "durability"),
        authority=_member(Authority, d.get("authority", "descriptive"), "authority"),
        confidence=float(confidence),
        status=_member(Status, d.get("status", "committed"), "status"),
        provenance=Provenance(_member(SourceType, p.get("source_type", "explicit"), "source_type"), p.get("thread_id"),
                              p.get("message_id"),
                              p.get("evidence_text"), p.get("extractor"), p.get("extractor_version")),
        created_at=_time(d["created_at"], "created_at"),
        updated_at=_time(d.get("updated_at", d["created_at"]), "updated_at"),
        last_confirmed_at=_time(d.get("last_confirmed_at", d["created_at"]), "last_confirmed_at"),
        valid_until=_time(d.get("valid_until"), "valid_until", required=False),
        version=version,
        supersedes=d.get("supersedes"),
        context=d.get("context"),
        valid_from=_time(d.get("valid_from"), "valid_from", required=False),
        recorded_at=_time(d.get("recorded_at"), "recorded_at", required=False),
        retired_at=_time(d.get("retired_at"), "retired_at", required=False),
        role=_name(d.get("role"), "role"),
        speaker=_name(d.get("speaker"), "speaker"),
    )


def _member(kind: type, value: Any, name: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{name} must be one of {', '.join(m.value for m in kind)} (got {str(value)[:40]!r})") from None


def _name(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 200 or not value.isprintable():
        raise ValueError(f"{name} must be printable text of at most 200 characters")
    return value


# ----------------------------------------------------------------------------- export
def export_records(memory: MemoryPort, tenant: str, user: str) -> Iterator[dict[str, Any]]:
    """The header, then every record of (tenant, user), in a stable order."""
    store = memory.store
    yield {"format": FORMAT, "version": VERSION, "tenant": tenant, "user": user,
           "exported_at": memory.clock.now().isoformat()}
    agents = store.user_agents(tenant, user) or ["default"]
    profile = store.get_profile(Identity(tenant, user, agents[0]))
    for name in sorted(profile.sections):
        s = profile.sections[name]
        if not s.summary.strip():  # every sentence went with the facts it stated: nothing to carry
            continue
        yield {"type": "profile_section", "section": name, "summary": s.summary, "updated_at": s.updated_at.isoformat(),
               "source_message_ids": list(s.source_message_ids),
               "sentences": [{"text": x.text, "facts": list(x.facts)} for x in s.sentences]}
    for pref in store.get_preferences(Identity(tenant, user, agents[0])):
        yield {"type": "preference", "key": pref.key, "value": pref.value, "trusted": pref.trusted,
               "source": pref.source, "version": pref.version, "updated_at": pref.updated_at.isoformat(),
               "expires_at": pref.expires_at.isoformat() if pref.expires_at else None}
    projects = store.user_projects(tenant, user)
    now = memory.clock.now()
    for agent in agents:
        ident = Identity(tenant, user, agent)
        rows = store.list_facts(ident, statuses=tuple(Status))[::-1]  # oldest first, in the order stored
        for project in projects:  # what was kept under a project: each project's own rows
            rows += [f for f in store.list_facts(Identity(tenant, user, agent, project), statuses=tuple(Status))[::-1]
                     if f.identity.project == project]
        rows = [f for f in rows if not (f.is_episode and f.is_expired(now))]  # past their retention: gone
        facts = [f for f in rows if not f.is_episode]
        for fact in sorted(facts, key=lambda f: (f.created_at, f.version, f.id)):
            yield {"type": "fact", **fact.as_dict()}
        for episode in sorted((f for f in rows if f.is_episode), key=lambda e: e.created_at):  # in the order said
            yield {"type": "episode", **episode.as_dict()}
        for ev in store.list_evidence(ident):
            yield {"type": "evidence", "agent": agent, "id": ev.id, "source": ev.source, "content": ev.content,
                   "observed_at": ev.observed_at.isoformat() if ev.observed_at else None,
                   "created_at": ev.created_at.isoformat(), "version": ev.version}
        for summary in sorted(store.list_summaries(ident, limit=1_000_000), key=lambda s: (s.created_at, s.id)):
            yield {"type": "summary", "agent": agent, **summary.as_dict()}
        for chash, at in store.tombstones(ident):
            yield {"type": "tombstone", "agent": agent, "content_hash": chash, "created_at": at.isoformat()}


def export_jsonl(memory: MemoryPort, tenant: str, user: str, out,
                 progress: Callable[[str, int, int | None], None] | None = None) -> int:
    """Write the export to a text stream; returns the number of records (header excluded).
    ``progress(stage, done, total)``: records written so far (the total is not known
    before the end: None)."""
    n = -1
    for n, record in enumerate(export_records(memory, tenant, user)):
        out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        if progress and n % 500 == 0:
            progress("export", n, None)
    if progress:
        progress("export", max(n, 0), max(n, 0))
    return n


# ----------------------------------------------------------------------------- import
@dataclass
class ImportReport:
    facts: int = 0
    episodes: int = 0
    profile_sections: int = 0
    preferences: int = 0
    evidence: int = 0
    summaries: int = 0
    tombstones: int = 0
    unchanged: int = 0
    new_versions: int = 0
    candidates: int = 0  # committed in the file, but without evidence that supports them here
    notes: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "<file>:<line>: <code>: <reason>", nothing written

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def _parse_jsonl(lines: Iterable[str], source: str, tenant: str, user: str | None,
                 bad: list[str]) -> tuple[str, list[tuple[int, dict]]]:
    records: list[tuple[int, dict]] = []
    header: dict | None = None
    for number, data in json_objects(lines, source, InvalidInput, bad):
        where = f"{source}:{number}"
        if header is None:
            if data.get("format") != FORMAT:
                raise InvalidInput(f"{where}: not an archivist export (no header line with format {FORMAT!r})")
            if data.get("version") != VERSION:
                raise InvalidInput(f"{where}: export format version {data.get('version')!r} is not supported "
                                   f"(this archivist reads version {VERSION})")
            if data.get("tenant") != tenant:
                raise InvalidInput(f"{where}: the export belongs to tenant {data.get('tenant')!r}, not {tenant!r}")
            header = data
            continue
        if data.get("type") not in RECORD_TYPES:
            bad.append(f"{where}: unknown record type {str(data.get('type'))[:40]!r}")
            continue
        records.append((number, data))
    if header is None:
        raise InvalidInput("\n".join(bad) or f"{source}: empty file")
    exported_user = header.get("user")
    if not isinstance(exported_user, str) or not exported_user:
        raise InvalidInput(f"{source}:1: the header names no user")
    return (user or exported_user), records


def import_jsonl(memory: MemoryPort, lines: Iterable[str], *, tenant: str, user: str | None = None,
                 source: str = "<input>", progress: Callable[[str, int, int], None] | None = None) -> ImportReport:
    """Import an export into (tenant, user) — the exported user unless ``user`` is given.
    Whole or nothing: when any line is bad (not JSON, malformed, or a record the content
    policy refuses), :class:`InvalidInput` names every bad line by number and reason, and
    nothing is written. Records the gate holds are imported unconfirmed and queued; a
    profile section it would hold is left out and noted (the profile follows the facts).
    ``progress(stage, done, total)``: stages ``check`` (every record through the gate)
    and ``write``."""
    tick = progress or (lambda stage, done, total: None)
    from .sessions import FIELDS, SessionSummary

    bad: list[str] = []
    target, records = _parse_jsonl(lines, source, tenant, user, bad)
    store = memory.store
    facts: list[tuple[int, Fact]] = []
    episodes: list[tuple[int, Fact]] = []
    other: list[tuple[str, Any]] = []
    seen: dict[str, int] = {}
    other_lines: list[int] = []  # the line of each record in ``other``
    skipped_notes: list[str] = []  # records that carry nothing (said so in the report)
    for number, r in records:
        where = f"{source}:{number}"
        kind = r["type"]
        before = len(other)
        unknown = unknown_fields(r, RECORD_FIELDS[kind])
        provenance = r.get("provenance") if kind in ("fact", "episode") else None
        if unknown is None and isinstance(provenance, dict) and (inner := unknown_fields(provenance, _PROVENANCE_FIELDS)):
            unknown = f"provenance: {inner}"
        if unknown:
            bad.append(f"{where}: bad {kind} record: {unknown}")
            continue
        try:
            if kind in ("fact", "episode"):
                if r.get("tenant") != tenant:
                    raise ValueError(f"the {kind} belongs to tenant {r.get('tenant')!r}, not {tenant!r}")
                card = fact_from_dict({**r, "user": target})
                if kind == "episode" and (not card.is_episode or card.role not in ("user", "assistant")):
                    raise ValueError("an episode has status 'episode' and role 'user' or 'assistant'")
                if kind == "fact" and card.is_episode:
                    raise ValueError("status 'episode' belongs to an episode record")
                if kind == "episode" and r.get("user") != target:  # its id names its scope: another user, another id
                    card = card.evolve(id=_rescoped_id(card))
                if card.id in seen:
                    raise ValueError(f"duplicate {kind} id {card.id!r} (first on line {seen[card.id]})")
                seen[card.id] = number
                (episodes if kind == "episode" else facts).append((number, card))
            elif kind == "profile_section":
                if r["section"] not in PROFILE_SECTIONS:
                    raise ValueError(f"section must be one of {', '.join(PROFILE_SECTIONS)} "
                                     f"(got {str(r['section'])[:40]!r})")
                if isinstance(r.get("summary"), str) and not r["summary"].strip():
                    skipped_notes.append(f"{source}:{number}: empty profile section {r.get('section')!r} skipped "
                                         "(its sentences went with their facts)")
                    continue
                summary = check_text(r["summary"], "summary", max_chars=8000)  # as update_profile keeps it
                other.append((kind, ProfileSection(r["section"], summary, _time(r["updated_at"], "updated_at"),
                                                   tuple(r.get("source_message_ids") or ()),
                                                   _sentences(r.get("sentences")))))
            elif kind == "preference":
                if not isinstance(r["trusted"], bool):
                    raise ValueError(f"trusted must be true or false, got {r['trusted']!r}")
                key, value, said_by = (check_text(r[name], name, max_chars=2000) for name in ("key", "value", "source"))
                other.append((kind, Preference(key, value, r["trusted"], said_by, int(r["version"]),
                                               _time(r["updated_at"], "updated_at"),
                                               _time(r.get("expires_at"), "expires_at", required=False))))
            elif kind == "evidence":
                other.append((kind, Evidence(r["id"], Identity(tenant, target, r["agent"]), r["source"], r["content"],
                                             _time(r.get("observed_at"), "observed_at", required=False),
                                             _time(r["created_at"], "created_at"))))
            elif kind == "summary":
                first, last = r["source_range"]
                other.append((r["agent"], SessionSummary(
                    r["id"], r["thread_id"], first, last, int(r["message_count"]), r["goal"], tuple(r["done"]),
                    tuple(r["open_items"]), tuple(r["decisions"]), tuple(r["errors"]), r["next_step"],
                    tuple(r["cited_fact_ids"]), r.get("evidence_id"), r.get("summarizer", "rules"),
                    _time(r["created_at"], "created_at"), r.get("stale_reason"))))
            elif kind == "tombstone":
                other.append(("tombstone", (r["agent"], r["content_hash"], _time(r["created_at"], "created_at"))))
        except (KeyError, TypeError, ValueError, AttributeError, InvalidInput, RecursionError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(getattr(exc, "reason", exc))[:200]
            bad.append(f"{where}: bad {kind} record: {detail}")
            del other[before:]
        other_lines += [number] * (len(other) - before)
    _refuse_if_bad(bad)  # a bad record is named as such, not as a link another record makes to it
    present = store.fact_ids_present([f.id for _, f in facts])
    if present:
        first = next(n for n, f in facts if f.id in present)
        raise InvalidInput(f"{source}:{first}: fact id {next(iter(sorted(present)))!r} is already in the store")
    _check_links(facts, source)
    _check_against_store(store, facts, other, tenant, target, source)
    report = ImportReport()
    report.notes.extend(skipped_notes)
    kept = []
    checking = len(facts) + len(episodes) + len(other)
    prejudge([f for _, f in facts], memory.governance)  # a large file is read on every core
    for done, (number, fact) in enumerate(facts, 1):  # forgotten content stays forgotten; every fact passes the gate
        if done % 200 == 0:
            tick("check", done, checking)
        admitted = admit(fact, memory.governance)
        if isinstance(admitted, Rejection):
            bad.append(f"{source}:{number}: {admitted}")
        elif store.is_tombstoned(fact.identity, content_hash(fact.content)) and fact.status is Status.COMMITTED:
            report.notes.append(f"{source}:{number}: fact {fact.id} was forgotten here; not imported")
        else:
            report.candidates += admitted.status is not fact.status
            kept.append((number, admitted))
    said = []
    taken = store.fact_ids_present([e.id for _, e in episodes])
    for done, (number, episode) in enumerate(episodes, len(facts) + 1):  # screened again (an edited file)
        if done % 200 == 0:
            tick("check", done, checking)
        if episode.id in taken and not _is_episode(store, episode):
            raise InvalidInput(f"{source}:{number}: id {episode.id!r} belongs to a fact in the store, not an episode")
        if len(episode.content) > MAX_EPISODE_CHARS:
            bad.append(f"{source}:{number}: too_long: an episode holds at most {MAX_EPISODE_CHARS:,} "
                       "characters (a longer turn is kept in parts)")
            continue
        text, problem, _ = screen_turn(episode.content, detect_grants=memory.governance.detect_grants)
        problem = problem or next((p for p in (screen(x, detect_grants=memory.governance.detect_grants) for x in
                                               (episode.speaker, episode.context, episode.provenance.evidence_text)
                                               if x) if p), None)
        if problem is not None and is_held(problem.code):  # not kept as said, as it would not be when said
            report.notes.append(f"{source}:{number}: episode not kept as said ({problem})")
        elif problem is not None or text is None:
            bad.append(f"{source}:{number}: {problem}")
        else:
            said.append(episode.evolve(content=text))
    dropped = {f.id for _, f in facts} - {f.id for _, f in kept}
    forgotten_here = [f for _, f in facts if f.id in dropped]
    facts = [(n, f.evolve(supersedes=None) if f.supersedes in dropped else f) for n, f in kept]
    vetted = []
    for number, (kind, item) in zip(other_lines, other):  # every record passes the content policy; doubt holds
        if kind == "evidence":
            problem = screen(item.content, detect_grants=False) if find_secret(item.content) else None
        elif kind == "profile_section":
            problem = screen(item.summary) or _held(doubt(item.summary))
            item = _cited(item, forgotten_here, [f for _, f in facts])
        elif kind == "preference":
            problem = screen(item.key) or screen(item.value)
            if problem is None and item.trusted and doubt_preference(item.key, item.value):
                item = replace(item, trusted=False)  # held: kept, never shown, queued below
        elif isinstance(item, SessionSummary):
            item = replace(item, **vet_summary({f: getattr(item, f) for f in FIELDS}))
            problem = None
        else:
            problem = None
        if problem and kind == "profile_section" and is_held(problem.code):
            # a section is shown as it is, so one the gate would hold is left out; the
            # facts it summed up are imported (held ones unconfirmed) and the profile follows them
            report.notes.append(f"{source}:{number}: profile section {item.name!r} not imported ({problem})")
            continue
        if problem:
            bad.append(f"{source}:{number}: {kind if kind in RECORD_TYPES else 'summary'} refused: {problem}")
        vetted.append((kind, item))
    other = vetted
    tick("check", checking, checking)
    _refuse_if_bad(bad)
    with memory.writer(Identity(tenant, target, "default")) as w:
        for _, fact in _in_link_order(facts):
            w.restore(fact)
            report.facts += 1
            if report.facts % 200 == 0:
                tick("write", report.facts, len(facts))
        tick("write", len(facts), len(facts))
        report.episodes += len(w.keep_episodes(said))  # an episode already here (the same turn) is kept once
        for kind, item in other:
            if kind == "profile_section":
                w.profile(item, reason=f"profile section {item.name} imported")
                report.profile_sections += 1
            elif kind == "preference":
                store.restore_preference(Identity(tenant, target, "default"), item)
                unsure = doubt_preference(item.key, item.value)
                if unsure and not item.trusted:
                    w.hold("preference:" + item.key, *unsure)
                report.preferences += 1
            elif kind == "evidence":
                store.put_evidence(item)
                report.evidence += 1
            elif kind == "tombstone":
                agent, chash, at = item
                store.add_tombstone(Identity(tenant, target, agent), chash, at)
                report.tombstones += 1
            else:  # a summary, keyed by its agent
                store.put_summary(Identity(tenant, target, kind), item)
                report.summaries += 1
    return report


def _refuse_if_bad(bad: list[str]) -> None:
    """Every bad line, in file order, as one :class:`InvalidInput`; nothing is written."""
    if bad:
        bad.sort(key=lambda line: int(m.group(1)) if (m := re.match(r".*?:(\d+):", line)) else 0)
        shown = "\n".join(bad[:MAX_BAD_LINES]) + (f"\n… and {len(bad) - MAX_BAD_LINES} more" if len(bad) > MAX_BAD_LINES else "")
        raise InvalidInput(f"{len(bad)} bad line{'s' if len(bad) > 1 else ''}; nothing was imported:\n{shown}")


MAX_SENTENCES, MAX_CITED = 200, 50  # a section is a short summary: more is no export of this product


def _sentences(raw: Any) -> tuple[ProfileSentence, ...]:
    """A section's sentences as exported: ``[{"text", "facts"}]`` (none in older exports)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, dict) and isinstance(x.get("text"), str)
                                            and isinstance(x.get("facts", []), list)
                                            and all(isinstance(i, str) for i in x.get("facts", [])) for x in raw):
        raise ValueError('sentences must be a list of {"text": "...", "facts": ["fact id", ...]}')
    if len(raw) > MAX_SENTENCES or any(len(x.get("facts", [])) > MAX_CITED for x in raw):
        raise ValueError(f"a section has at most {MAX_SENTENCES} sentences, each citing at most {MAX_CITED} facts")
    return tuple(ProfileSentence(x["text"], tuple(x.get("facts", []))) for x in raw)


def _cited(imported: ProfileSection, forgotten: list[Fact], facts: list[Fact]) -> ProfileSection:
    """The section with the facts each sentence states, so that it follows them here as it
    did where it was exported. A citation holds when it names a fact of this file that the
    sentence states; a sentence that cited facts and keeps none of them goes (what backed it
    is not here). An older export's or an edited summary's sentences cite the imported live
    facts they state, and one that states none stays as the application's words. No
    sentence that states a fact forgotten here is imported."""
    by_id = {f.id: f for f in facts}
    if imported.sentences and " ".join(x.text for x in imported.sentences) == imported.summary:
        kept = []
        for x in imported.sentences:
            held = _backed(x, [by_id[i] for i in x.facts if i in by_id])
            if x.facts and not held:
                continue
            kept.append(ProfileSentence(x.text, held))
    else:
        live = [f for f in facts if f.status is Status.COMMITTED and not f.is_episode]
        kept = [ProfileSentence(text, tuple(f.id for f in live if states(text, f)))
                for text in split_sentences(imported.summary)]
    kept = [x for x in kept if not any(states(x.text, f) for f in forgotten)]
    return section(imported.name, kept, imported.updated_at, imported.source_message_ids)


def _backed(sentence: ProfileSentence, cited: list[Fact]) -> tuple[str, ...]:
    """The cited facts that back ``sentence`` as a conversation's profile write would be
    backed: one sentence, each clause stating one of them, none contradicting it, and
    few words of its own beyond theirs ("…lives in Berlin and owes the mafia 40000 euros"
    says more than the fact it cites)."""
    if len(split_sentences(sentence.text)) != 1 or any(contradicts(sentence.text, f.content) for f in cited):
        return ()
    found, unbacked = cite_sentences(sentence.text, cited)
    if not found or unbacked:
        return ()
    said, backed = set(query_terms(sentence.text)), {w for f in cited for w in query_terms(f.content)}
    return found[0].facts if len(said - backed) <= max(2, len(said) // 3) else ()


def _held(unsure: tuple[str, str] | None) -> Rejection | None:
    return Rejection(*unsure) if unsure else None


def _rescoped_id(episode: Fact) -> str:
    """The id an episode gets in the scope it is imported into (the part it is, kept)."""
    label = part_label(episode.context)
    part = int(label.split()[1]) - 1 if label else 0
    return episode_id(episode.identity, episode.provenance.thread_id, episode.provenance.message_id or episode.id, part)


def _is_episode(store: Store, episode: Fact) -> bool:
    """Whether the row already stored under ``episode``'s id is an episode of its scope."""
    found = store.get_fact(episode.identity, episode.id)
    return found is not None and found.is_episode


def _check_against_store(store: Store, facts, other, tenant: str, user: str, source: str) -> None:
    """What the file cannot know: keys, preferences and summaries the target already has."""
    agents = {f.identity.agent for _, f in facts}
    for agent in agents:
        live = {f.key for f in store.list_facts(Identity(tenant, user, agent)) if f.key}
        for number, f in facts:
            if f.identity.agent == agent and f.key in live and f.status is Status.COMMITTED:
                raise InvalidInput(f"{source}:{number}: the store already holds a live fact for key {f.key!r}")
    prefs = {p.key for p in store.get_preferences(Identity(tenant, user, "default"))}
    for kind, item in other:
        if kind == "preference" and item.key in prefs:
            raise InvalidInput(f"{source}: the store already holds preference {item.key!r} for {user!r}")
        if kind not in ("profile_section", "preference", "evidence", "tombstone"):  # a summary, keyed by agent
            ident = Identity(tenant, user, kind)
            if any(s.id == item.id for s in store.list_summaries(ident, limit=1_000_000)):
                raise InvalidInput(f"{source}: session summary {item.id!r} is already in the store")


def _check_links(facts: list[tuple[int, Fact]], source: str) -> None:
    ids = {f.id for _, f in facts}
    live_keys: dict[tuple[str, str], int] = {}
    for number, f in facts:
        if f.supersedes is not None and f.supersedes not in ids:
            raise InvalidInput(f"{source}:{number}: fact {f.id!r} supersedes {f.supersedes!r}, which is not in the file")
        if f.key and f.status is Status.COMMITTED:
            k = (f.identity.agent, f.key)
            if k in live_keys:
                raise InvalidInput(f"{source}:{number}: a second committed fact for key {f.key!r} "
                                   f"(the first is on line {live_keys[k]})")
            live_keys[k] = number


def _in_link_order(facts: list[tuple[int, Fact]]) -> list[tuple[int, Fact]]:
    """Facts ordered so that a fact comes after the one it supersedes."""
    done: set[str] = set()
    pending = list(facts)
    ordered: list[tuple[int, Fact]] = []
    while pending:
        ready = [(n, f) for n, f in pending if f.supersedes is None or f.supersedes in done]
        if not ready:
            raise InvalidInput(f"a supersedes cycle among {len(pending)} facts")
        ordered += ready
        done |= {f.id for _, f in ready}
        pending = [(n, f) for n, f in pending if f.id not in done]
    return ordered


# --------------------------------------------------------------------- markdown cards
CARD_FIELDS = ("id", "key", "category", "kind", "scope", "durability", "authority", "confidence", "status",
               "version", "supersedes", "created_at", "updated_at", "last_confirmed_at", "valid_from", "valid_until",
               "recorded_at", "retired_at", "context", "provenance")


def card_text(fact: Fact) -> str:
    import yaml

    d = fact.as_dict()
    front = {k: d[k] for k in CARD_FIELDS}
    return "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n\n" + fact.content + "\n"


def export_markdown(memory: MemoryPort, tenant: str, user: str, directory: Path) -> int:
    """One card per live or candidate fact: ``<dir>/<agent>/<id>.md``. Returns cards written."""
    n = 0
    root = Path(directory).resolve()
    for agent in memory.store.user_agents(tenant, user):
        ident = Identity(tenant, user, agent)
        for fact in memory.store.list_facts(ident, statuses=(Status.COMMITTED, Status.CANDIDATE)):
            path = (root / agent / f"{fact.id}.md").resolve()
            if not path.is_relative_to(root):  # a name from an older store cannot lead outside
                raise InvalidInput(f"agent {agent!r} would write outside {root}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(card_text(fact), encoding="utf-8")
            n += 1
    return n


def read_card(path: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a card; ``InvalidInput`` naming the file when malformed."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not text.startswith("---\n"):
        raise InvalidInput(f"{path}: no front matter (the file must start with a '---' line)")
    end = text.find("\n---", 4)
    if end < 0:
        raise InvalidInput(f"{path}: the front matter is not closed by a '---' line")
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: bad front matter: {str(exc).splitlines()[0]}") from None
    if not isinstance(front, dict):
        raise InvalidInput(f"{path}: the front matter must be a mapping")
    body = text[end + 4:].strip()
    if not body:
        raise InvalidInput(f"{path}: the card has no content")
    return front, body


def _stamp(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def import_markdown(memory: MemoryPort, directory: Path, *, tenant: str, user: str) -> ImportReport:
    """Cards whose id is new are imported as they are; a card whose body was edited
    becomes a new version of its fact; unchanged cards are skipped."""
    from ..model import new_id

    cards = sorted(directory.glob("*/*.md"))
    if not cards:
        raise InvalidInput(f"{directory}: no cards (<agent>/<id>.md) found")
    parsed: list[tuple[Path, Fact]] = []
    seen: dict[str, Path] = {}
    for path in cards:
        front, body = read_card(path)
        agent = path.parent.name
        try:
            front = {k: _stamp(v) for k, v in front.items()}
            fact = fact_from_dict({**front, "tenant": tenant, "user": user, "agent": agent, "content": body})
        except (KeyError, TypeError, ValueError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise InvalidInput(f"{path}: bad card: {detail}") from None
        if fact.id != path.stem:
            raise InvalidInput(f"{path}: the file name must be the fact id ({fact.id!r})")
        if fact.id in seen:
            raise InvalidInput(f"{path}: duplicate fact id (also in {seen[fact.id]})")
        seen[fact.id] = path
        parsed.append((path, fact))
    report = ImportReport()
    now = memory.clock.now()
    with memory.writer(Identity(tenant, user, "default")) as w:
        for path, card in parsed:
            existing = memory.store.get_fact(card.identity, card.id)
            if existing is not None and existing.content == card.content:
                report.unchanged += 1
                continue
            admitted = admit(card if existing is None else card.evolve(
                provenance=Provenance(SourceType.EXPLICIT, extractor="markdown-card")), memory.governance)
            if isinstance(admitted, Rejection):
                report.rejected.append(f"{path}: {admitted}")
                continue
            if existing is None:
                if memory.store.fact_ids_present([card.id]):
                    raise InvalidInput(f"{path}: fact id {card.id!r} belongs to another user or agent")
                if admitted.supersedes and memory.store.get_fact(card.identity, admitted.supersedes) is None:
                    admitted = admitted.evolve(supersedes=None)  # cards carry live facts, not their history
                    report.notes.append(f"{path.name}: earlier versions are not in this store; link dropped")
                w.restore(admitted)
                report.facts += 1
                report.candidates += admitted.status is not card.status
            else:
                if existing.status is not Status.COMMITTED:
                    raise InvalidInput(f"{path}: only a live fact can be edited (this one is {existing.status.value})")
                w.retire(existing, Status.SUPERSEDED, code="edited", reason=f"edited in {path.name}", valid_to=now)
                w.restore(existing.evolve(
                    id=new_id(), content=card.content, version=existing.version + 1, supersedes=existing.id,
                    created_at=now, updated_at=now, last_confirmed_at=now, valid_from=now, recorded_at=now,
                    retired_at=None, valid_until=card.valid_until,
                    provenance=Provenance(SourceType.EXPLICIT, extractor="markdown-card", evidence_text=None),
                ), code="edited", reason=f"new version from {path.name}")
                report.new_versions += 1
    return report
