"""Import DeerFlow's memory (DeerMem v2 layout) with its provenance.

Layout read (``root`` is DeerFlow's memory storage path)::

    users/{user}/memory.json                                  user/history summaries
    users/{user}/agents/{agent}/facts/{shard}/{fact_id}.md    fact cards, YAML front matter

``memory.json`` sections map one to one onto profile sections (``workContext`` →
``work_context``, …, ``longTermBackground`` → ``long_term_background``); other sections
(``cognitiveStyle``) are reported, not imported. Cards: ``category`` outside archivist's
six becomes ``context`` (``knowledge`` through ``categoryExtension`` is kept), ``source``
``conversation`` becomes a user-message provenance with its ``threadId``, other sources an
explicit one; ``createdAt``/``lastConfirmedAt`` keep their times; the agent
``__default__`` becomes ``default``. Every card still passes the write gate (grants,
confidence threshold) — a rejected card is reported, not imported. A v1 ``memory.json``
with a ``facts`` list is read the same way. All or nothing, like every import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import parse_time
from ..errors import InvalidInput
from ..model import (
    PROFILE_SECTIONS,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Identity,
    Kind,
    ProfileSection,
    Provenance,
    SourceType,
    Status,
)
from ..model import content_hash
from ..pipeline.governance import Rejection, admit, screen

SECTION_NAMES = {"".join(w.title() if i else w for i, w in enumerate(name.split("_"))): name
                 for name in PROFILE_SECTIONS}  # workContext -> work_context
CATEGORIES = {c.value for c in Category}


@dataclass
class DeerFlowReport:
    users: list[str] = field(default_factory=list)
    facts: int = 0
    profile_sections: int = 0
    rejected: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _card(path: Path) -> tuple[dict[str, Any], str]:
    from .transfer import read_card

    front, body = read_card(path)
    lines = body.splitlines()
    if lines and lines[0].startswith("# "):  # DeerFlow writes the title as a heading, then the content
        rest = "\n".join(lines[1:]).strip()
        body = rest or lines[0][2:].strip()
    return front, body


def _time(value: Any, where: str, name: str):
    if value in (None, ""):
        return None
    try:
        return parse_time(value.isoformat() if hasattr(value, "isoformat") else str(value))
    except ValueError:
        raise InvalidInput(f"{where}: {name} is not an ISO-8601 time: {value!r}") from None


def _fact(front: dict[str, Any], body: str, where: str, tenant: str, user: str, agent: str, now) -> Fact:
    fid = front.get("id")
    if not isinstance(fid, str) or not fid:
        raise InvalidInput(f"{where}: the front matter has no id")
    raw_category = str(front.get("category") or "context")
    if raw_category == "other" and front.get("categoryExtension") in CATEGORIES:
        raw_category = str(front["categoryExtension"])
    category = Category(raw_category) if raw_category in CATEGORIES else Category.CONTEXT
    confidence = front.get("confidence", 0.0)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise InvalidInput(f"{where}: confidence must be a number in [0, 1], got {confidence!r}")
    source = front.get("source")
    if isinstance(source, str):
        source = {"type": source, "threadId": None} if source in ("manual", "consolidation", "import", "unknown") \
            else {"type": "conversation", "threadId": source}
    if not isinstance(source, dict):
        source = {"type": "unknown", "threadId": None}
    conversation = source.get("type") == "conversation"
    created = _time(front.get("createdAt"), where, "createdAt") or now
    revision = front.get("revision", 1) or 1
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise InvalidInput(f"{where}: revision must be an integer >= 1, got {revision!r}")
    status = front.get("status", "active")
    if status != "active":
        raise InvalidInput(f"{where}: status {status!r} (only active cards are memory)")
    return Fact(
        id=fid, identity=Identity(tenant, user, agent), content=body, category=category, kind=Kind.FACT,
        scope=FactScope.USER, durability=Durability.DURABLE, authority=Authority.DESCRIPTIVE,
        confidence=float(confidence), status=Status.COMMITTED,
        provenance=Provenance(SourceType.USER_MESSAGE if conversation else SourceType.EXPLICIT,
                              source.get("threadId"), None, None, "deerflow",
                              f"schema {front.get('schemaVersion', 1)}; source {source.get('type')}; "
                              f"category {front.get('category')}"),
        created_at=created, updated_at=_time(front.get("updatedAt"), where, "updatedAt") or created,
        last_confirmed_at=_time(front.get("lastConfirmedAt"), where, "lastConfirmedAt") or created,
        version=revision, valid_from=created, recorded_at=now,
    )


def import_deerflow(memory, root: Path, *, tenant: str = "default", users: list[str] | None = None) -> DeerFlowReport:
    root = Path(root)
    users_dir = root / "users"
    if not users_dir.is_dir():
        raise InvalidInput(f"{root}: no users/ directory (not a DeerFlow memory root)")
    now = memory.clock.now()
    report = DeerFlowReport()
    sections: list[tuple[str, ProfileSection]] = []
    facts: list[tuple[Path, Fact]] = []
    seen: dict[str, Path] = {}
    for udir in sorted(p for p in users_dir.iterdir() if p.is_dir()):
        user = udir.name
        if users and user not in users:
            continue
        report.users.append(user)
        manifest = udir / "memory.json"
        legacy_facts: list[dict] = []
        if manifest.exists():
            try:
                doc = json.loads(manifest.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{manifest}: not JSON ({exc.msg}, line {exc.lineno})") from None
            if not isinstance(doc, dict):
                raise InvalidInput(f"{manifest}: must hold a JSON object")
            for group in ("user", "history"):
                for name, value in (doc.get(group) or {}).items():
                    target = SECTION_NAMES.get(name)
                    if target is None:
                        report.notes.append(f"{user}: section {name!r} has no archivist equivalent; skipped")
                        continue
                    if not isinstance(value, dict) or not isinstance(value.get("summary", ""), str):
                        raise InvalidInput(f"{manifest}: section {name!r} must be an object with a summary string")
                    if value.get("summary", "").strip():
                        at = _time(value.get("updatedAt"), str(manifest), f"{name}.updatedAt") or now
                        sections.append((user, ProfileSection(target, value["summary"].strip(), at)))
            legacy_facts = doc.get("facts") or []
        for n, item in enumerate(legacy_facts):
            where = f"{manifest} facts[{n}]"
            if not isinstance(item, dict) or not isinstance(item.get("content"), str):
                raise InvalidInput(f"{where}: a fact must be an object with a content string")
            facts.append((manifest, _fact(item, item["content"], where, tenant, user, "default", now)))
        for card in sorted(udir.glob("agents/*/facts/*/*.md")):
            agent = card.parts[-4]
            front, body = _card(card)
            fact = _fact(front, body, str(card), tenant, user, "default" if agent == "__default__" else agent, now)
            if fact.id != card.stem:
                raise InvalidInput(f"{card}: the file name must be the fact id ({fact.id!r})")
            facts.append((card, fact))
    for path, fact in facts:
        if fact.id in seen:
            raise InvalidInput(f"{path}: duplicate fact id {fact.id!r} (also in {seen[fact.id]})")
        seen[fact.id] = path
    present = memory.store.fact_ids_present(list(seen))
    if present:
        raise InvalidInput(f"{seen[sorted(present)[0]]}: fact id {sorted(present)[0]!r} is already in the store")
    accepted: list[Fact] = []
    for path, fact in facts:
        admitted = admit(fact, memory.governance)
        if isinstance(admitted, Rejection):
            report.rejected.append(f"{path}: {admitted}")
        elif memory.store.is_tombstoned(fact.identity, content_hash(fact.content)):
            report.rejected.append(f"{path}: forgotten: the user asked to forget this")
        else:
            accepted.append(admitted)
    for user, section in sections:
        problem = screen(section.summary)
        if problem:
            raise InvalidInput(f"{users_dir / user / 'memory.json'}: profile section {section.name} refused: {problem}")
    with memory.writer(Identity(tenant, "_import", "default")) as w:
        for user, section in sections:
            memory.store.put_profile_section(Identity(tenant, user, "default"), section)
            report.profile_sections += 1
        for fact in accepted:
            w.restore(fact, code="imported", reason="imported from DeerFlow")
            report.facts += 1
    return report
