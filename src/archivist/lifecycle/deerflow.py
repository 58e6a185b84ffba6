"""Import DeerFlow's memory (DeerMem v2 and the layouts it migrates from), as a sync.

Read as DeerFlow reads it (``root`` is DeerFlow's memory storage path; nothing there is
ever written)::

    users/{user}/memory.json                               profile summaries (v2); a v1 file
                                                           with a ``facts`` list or manifest
    users/{user}/agents/{agent}/facts/{shard}/{id}.md      fact cards, YAML front matter
    users/{user}/agents/{agent}/memory.json                legacy per-agent file (facts, summaries)
    users/{user}/agents/lead-agent/facts/...               the earlier default bucket (no config.yaml)
    users/{user}/.memory.journal.json + .recovery/{op}/    the crash journal of a multi-file write

Like DeerFlow on its next read: a journal left ``prepared`` is rolled back (the new cards
it names are not memory, the cards it backed up are read from their backups, the
manifest from its backup); legacy facts join the agent DeerFlow migrates them into
(``__default__`` for the user's v1 file and ``lead-agent``), and a legacy copy of a
current card is the same fact, while a legacy copy that differs is refused, as DeerFlow
refuses it. Cards DeerFlow itself cannot read (bad front matter, an id that is not the
file name or leaves the card's directory, a user or agent that is not the directory's,
a wrong type, a card that is a link loop) stop the import with :class:`InvalidInput` naming
the file, before anything is written. A shard directory that is a link is read through it
when it stays inside the root, and skipped (counted, noted) when it leads out.

Every field is mapped or counted in ``DeerFlowReport.not_carried``:

================================  =========================================================
DeerFlow                          archivist
================================  =========================================================
id                                fact id (``id.<scope hash>`` if another scope holds it)
content                           content
title (when not the content's)    context ``title: …``
category preference, correction,  the same category
context, goal, behavior
identity, constraint, decision    context; the DeerFlow label kept in the provenance
other + categoryExtension         that category when archivist has it, else context;
                                  ``other/<extension>`` kept in the provenance
topics                            context ``topics: …`` (searched, not shown)
sourceError                       context ``source error: …``
confidence (default 0.5)          confidence (the gate's threshold applies)
createdAt / updatedAt             created_at, valid_from / updated_at (a new version's start)
lastConfirmedAt                   last_confirmed_at
expected_valid_days               valid_until = (lastConfirmedAt or createdAt) + days
confirmationCount                 provenance ``confirmed N times``
consolidatedFrom, consolidatedAt  provenance; sources imported earlier and gone from DeerFlow
                                  are retired as merged into the consolidated fact
source conversation + threadId    a user-message provenance with the thread (a candidate:
                                  DeerFlow keeps no quote); other sources: explicit
revision                          version (first import), provenance; the card fingerprint
schemaVersion                     provenance ``schema N`` (another value than 2 is counted)
status, user_id, agent_name       checked (active; the card's own directory)
scope                             not carried, counted: DeerFlow too takes the scope from
                                  user_id/agent_name and the card's directory
anything else                     not carried, counted per field
memory.json sections              the six profile sections; others not carried, counted
.metadata usage / eviction files  not carried (being read is not being confirmed), counted
================================  =========================================================

Re-importing is an incremental sync. A card whose id has no fact here is added; one whose
DeerFlow fingerprint (content and every carried field) is unchanged is skipped; a changed
one becomes a new version that supersedes the live one (retire + insert, as every update).
Every new card or version passes the write gate (``governance.admit``: secrets, grants,
injection, the confidence threshold, quotes); refusals, forgotten content and versions
dated before the live one are skipped with their reason. The plan is made inside the one
write transaction that carries it out: imports of the same store at the same time run one
after the other, and the later one sees the earlier one's facts. All or nothing. The
report never shows a word the content policy refuses: it reads ``[withheld: <code>]``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..clock import parse_time
from ..errors import InvalidInput, StoreConflict
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
    content_hash,
    new_id,
)
from ..pipeline.governance import Rejection, admit, check_text, screen
from ..ports import MemoryPort
from ..storage.base import Store

SECTION_NAMES = {"".join(w.title() if i else w for i, w in enumerate(name.split("_"))): name
                 for name in PROFILE_SECTIONS}  # workContext -> work_context
DOCUMENT_VERSION = "2.0"
SCHEMA_VERSION = 2  # a card's schemaVersion as DeerMem v2 writes it
DEFAULT_BUCKET, PREVIOUS_DEFAULT = "__default__", "lead-agent"
JOURNAL = ".memory.journal.json"
MAX_CARD_BYTES = 1 << 20  # a card, a legacy card or a journal backup
MAX_JSON_BYTES = 16 << 20  # memory.json (a v1 file holds every fact), the journal, sidecars
MAX_CARD_VALUES = 10_000  # values in a card's front matter once YAML aliases are expanded
CORE_CATEGORIES = frozenset({"preference", "correction", "context", "goal", "behavior", "identity", "constraint",
                             "decision", "other"})
CATEGORY_MAP = {c.value: c for c in Category} | {"identity": Category.CONTEXT, "constraint": Category.CONTEXT,
                                                 "decision": Category.CONTEXT}
CARD_FIELDS = frozenset({"id", "content", "title", "category", "categoryExtension", "topics", "confidence",
                         "createdAt", "updatedAt", "source", "sourceError", "schemaVersion", "status", "scope",
                         "revision", "consolidatedAt", "consolidatedFrom", "lastConfirmedAt", "confirmationCount",
                         "expected_valid_days"})
MANIFEST_FIELDS = frozenset({"version", "revision", "lastUpdated", "user", "history", "facts"})
# what DeerFlow's migration ignores when it compares a legacy fact with the card of the same id
_BOOKKEEPING = frozenset({"revision", "createdAt", "updatedAt", "scope", "title", "schemaVersion", "consolidatedAt"})
_FACT_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_USER_DIR = re.compile(r"[A-Za-z0-9_-]+")
_AGENT_DIR = re.compile(r"[a-z0-9-]+")  # DeerFlow lower-cases agent names in paths
_DESCRIPTOR = re.compile(r"deermem (?P<id>[A-Za-z0-9_-]+) rev (?P<rev>\d+) card (?P<fp>[0-9a-f]{16})")
_LIVE = (Status.COMMITTED, Status.CANDIDATE)
_ATTEMPTS = 3  # plans of one import, when a concurrent write takes an id it chose


@dataclass
class DeerFlowReport:
    """What an import did. Every card found in a directory DeerFlow reads lands in exactly
    one of ``added``, ``updated``, ``unchanged`` and ``skipped`` (reason -> count;
    ``rejected`` lists the gate's refusals file by file; a directory linked out of the root,
    whose cards are not listed, counts once). ``mapped`` and ``not_carried``
    count, per field, the cards whose field went to another place or nowhere."""

    users: list[str] = field(default_factory=list)
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    merged: int = 0  # facts imported earlier, merged away by DeerFlow's consolidation: retired here
    missing: int = 0  # facts imported earlier that DeerFlow no longer has: kept here
    profile_sections: int = 0
    profile_unchanged: int = 0
    mapped: dict[str, int] = field(default_factory=dict)  # "field -> where": cards
    not_carried: dict[str, int] = field(default_factory=dict)  # field: cards (or entries)
    rejected: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def facts(self) -> int:
        return self.added

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {k: (dict(sorted(v.items())) if isinstance(v, dict) else v) for k, v in self.__dict__.items()}


@dataclass
class _Card:
    where: str
    user: str  # the DeerFlow user directory
    agent: str  # the DeerFlow agent bucket it belongs to (after migration)
    data: dict[str, Any]  # normalized as DeerFlow normalizes it
    extras: dict[str, Any]  # fields DeerFlow keeps that archivist has no place for


# ------------------------------------------------------------------------- reading
class _Reader:
    """Reads files of one DeerFlow root: bounded sizes, nothing outside the root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = root.resolve()

    def data(self, path: Path, limit: int) -> bytes:
        real = _real(path)
        if not real.is_relative_to(self.real):
            raise InvalidInput(f"{path}: leads outside the DeerFlow root ({real})")
        try:
            if not real.is_file():
                raise InvalidInput(f"{path}: no such file")
            size = real.stat().st_size
            if size > limit:
                raise InvalidInput(f"{path}: {size} bytes; the limit is {limit}")
            return real.read_bytes()
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot be read ({exc.strerror or exc})") from None

    def json(self, path: Path, raw: bytes | None = None) -> dict[str, Any]:
        raw = self.data(path, MAX_JSON_BYTES) if raw is None else raw
        try:
            doc = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
        except RecursionError:
            raise InvalidInput(f"{path}: nested too deeply") from None
        if not isinstance(doc, dict):
            raise InvalidInput(f"{path}: must hold a JSON object")
        return doc

    def card(self, path: Path, source: Path | None = None) -> dict[str, Any]:
        """The card's fields as DeerFlow parses them: front matter, then ``# title``, a
        blank line and the content. ``source``: read the bytes there (a journal backup)."""
        import yaml

        raw = self.data(source or path, MAX_CARD_BYTES)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start})") from None
        if not text.startswith("---\n") or "\n---\n" not in text[4:]:
            raise InvalidInput(f"{path}: no front matter closed by a '---' line")
        front, body = text[4:].split("\n---\n", 1)
        try:
            meta = yaml.safe_load(front) or {}
        except (yaml.YAMLError, RecursionError) as exc:
            raise InvalidInput(f"{path}: bad front matter: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        if not isinstance(meta, dict):
            raise InvalidInput(f"{path}: the front matter must be a mapping")
        try:
            size = _expanded_size(meta, {})
        except RecursionError:
            size = MAX_CARD_VALUES + 1
        if size > MAX_CARD_VALUES:
            raise InvalidInput(f"{path}: the front matter expands to more than {MAX_CARD_VALUES} values "
                               f"(YAML aliases?); not a card DeerFlow writes")
        lines = body.lstrip("\n").splitlines()
        title = ""
        if lines and lines[0].startswith("# "):
            title = lines.pop(0)[2:].strip()
            if lines and not lines[0].strip():
                lines.pop(0)
        meta["title"], meta["content"] = title, "\n".join(lines).rstrip("\n")
        return meta


def _expanded_size(value: Any, memo: dict[int, int]) -> int:
    """How many values ``value`` holds with shared (aliased) parts counted every time
    they appear, computed once per distinct object."""
    key = id(value)
    if key not in memo:
        memo[key] = 1  # a cycle counts once
        if isinstance(value, dict):
            memo[key] = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in value.items())
        elif isinstance(value, list | tuple | set):
            memo[key] = 1 + sum(_expanded_size(v, memo) for v in value)
    return memo[key]


@dataclass
class _Journal:
    """What DeerFlow's recovery of a ``prepared`` journal would do, as a read overlay."""

    manifest: bytes | None | bool = True  # True: the file as it is; None: absent; bytes: the backup
    absent: dict[Path, str] = field(default_factory=dict)  # card path -> id of an uncommitted new card
    backups: dict[Path, Path] = field(default_factory=dict)  # card path -> its backup

    @classmethod
    def read(cls, reader: _Reader, udir: Path, report: DeerFlowReport) -> _Journal:
        path = udir / JOURNAL
        if not path.exists():
            return cls()
        doc = reader.json(path)
        op, state, agent = doc.get("operationId"), doc.get("state"), doc.get("agentName")
        if not isinstance(op, str | int) or not str(op) or Path(str(op)).name != str(op) or str(op) in (".", ".."):
            raise InvalidInput(f"{path}: operationId must be a plain name, got {op!r}")
        if agent is not None and (not isinstance(agent, str) or not _agent_name_ok(agent)):
            raise InvalidInput(f"{path}: agentName {agent!r} is not a DeerFlow agent name")
        if state == "committed":
            report.notes.append(f"{path}: a committed write whose clean-up did not finish; read as committed")
            return cls()
        if state != "prepared":
            raise InvalidInput(f"{path}: unknown journal state {state!r}")
        recovery = udir / ".recovery" / str(op)
        journal = cls()
        if (recovery / "memory.json").exists():
            journal.manifest = reader.data(recovery / "memory.json", MAX_JSON_BYTES)
        elif not _int_or_zero(doc.get("expectedRevision"), path):
            journal.manifest = None
        old = doc.get("oldEntries", {})
        if not isinstance(old, dict):
            return journal  # DeerFlow restores no card then
        ids = doc.get("factIds", [])
        if not isinstance(ids, list):
            raise InvalidInput(f"{path}: factIds must be a list")
        for fid in ids:
            if fid in old:
                continue
            if agent is None:
                raise InvalidInput(f"{path}: names facts but no agentName")
            journal.absent[_card_path(udir, agent, fid, path)] = fid
        for fid, entry in old.items():
            card = _card_path(udir, agent, fid, path) if agent is not None else None
            if card is None:
                raise InvalidInput(f"{path}: names facts but no agentName")
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            target = _inside(udir, entry["path"], f"{path}: the entry for {fid!r}")
            if target != _real(card):
                raise InvalidInput(f"{path}: the entry for {fid!r} names {entry['path']!r}, not that fact's card")
            if (recovery / f"{fid}.md").exists():
                journal.backups[card] = recovery / f"{fid}.md"
        return journal


def _int_or_zero(value: Any, where: Path) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise InvalidInput(f"{where}: expectedRevision must be an integer, got {value!r}") from None


def _agent_name_ok(name: str) -> bool:
    return name == DEFAULT_BUCKET or bool(re.fullmatch(r"[A-Za-z0-9-]+", name))


def _card_path(udir: Path, agent: str, fid: Any, where: Path) -> Path:
    """Where DeerFlow keeps card ``fid`` of ``agent``: the shard is sha256(id)[:2]."""
    if not isinstance(fid, str) or not _FACT_ID.fullmatch(fid):
        raise InvalidInput(f"{where}: {fid!r} is not a DeerFlow fact id (letters, digits, '_' and '-')")
    return udir / "agents" / agent.lower() / "facts" / hashlib.sha256(fid.encode()).hexdigest()[:2] / f"{fid}.md"


def _inside(base: Path, relative: str, where: str) -> Path:
    candidate = Path(relative)
    resolved = _real(base / candidate)
    if candidate.is_absolute() or not resolved.is_relative_to(_real(base)):
        raise InvalidInput(f"{where}: path {relative!r} leads outside {base}")
    return resolved


def _real(path: Path) -> Path:
    """Where ``path`` leads; a link loop is a typed error naming the file."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError('Symlink loop ...') before Python 3.13
        raise InvalidInput(f"{path}: a symbolic link loop, or a link that cannot be followed ({exc})") from None


def _meaningful(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_meaningful(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_meaningful(v) for v in value)
    return value not in (None, "", False)


def _normalize(raw: Any, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(fields, extras) of one fact, checked as DeerFlow checks it when it loads the card
    or migrates the legacy fact; what DeerFlow refuses is refused here."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: a fact must be an object")

    def bad(message: str) -> InvalidInput:
        return InvalidInput(f"{where}: {message} (DeerFlow cannot read this fact either)")

    f = {k: v for k, v in raw.items() if k in CARD_FIELDS}
    extras = {k: v for k, v in raw.items() if k not in CARD_FIELDS and k not in ("user_id", "agent_name")}
    fid = f["id"] = str(f.get("id") or "")  # DeerFlow reads an id as text (a YAML 7 is "7")
    if not _FACT_ID.fullmatch(fid):
        raise bad(f"id {fid!r} is not 1-100 letters, digits, '_' or '-'")
    content = f.get("content")
    if not isinstance(content, str) or not content.strip():
        raise bad("content must be a non-empty string")
    f["content"] = content.strip()
    category = f.get("category", "context")
    if not isinstance(category, str):
        raise bad("category must be a string")
    category = category or "context"
    if category not in CORE_CATEGORIES:
        f.setdefault("categoryExtension", category)
        category = "other"
    f["category"] = category
    confidence = f.get("confidence", 0.5)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise bad(f"confidence must be a number in [0, 1], got {confidence!r}")
    f["confidence"] = float(confidence)
    if f.get("status", "active") != "active":
        raise bad(f"status {f.get('status')!r} (only active facts are memory)")
    f["status"] = "active"
    for name in ("topics", "consolidatedFrom"):
        value = f.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(f"{name} must be a list of strings")
        f[name] = value
    for name in ("createdAt", "updatedAt", "lastConfirmedAt"):
        if f.get(name) is not None and not isinstance(f[name], str):
            raise bad(f"{name} must be a quoted string, got {type(f[name]).__name__}")
    count = f.get("confirmationCount")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise bad("confirmationCount must be an integer >= 1")
    revision = f.get("revision", 1)
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise bad(f"revision must be an integer >= 1, got {revision!r}")
    f["revision"] = revision
    source = f.get("source")
    if isinstance(source, str):
        source = {"type": source, "threadId": None} if source in ("manual", "consolidation", "import", "unknown") \
            else {"type": "conversation", "threadId": source}
    elif not isinstance(source, dict):
        source = {"type": "unknown", "threadId": None}
    else:
        source = {"type": source.get("type", "unknown"), "threadId": source.get("threadId")}
        if not isinstance(source["type"], str):
            raise bad("source.type must be a string")
        if source["threadId"] is not None and not isinstance(source["threadId"], str):
            raise bad("source.threadId must be a string or null")
    f["source"] = source
    if not isinstance(f.get("title") or "", str):
        extras["title (not text)"] = f.pop("title")
    title = str(f.get("title") or "").strip().replace("\n", " ")[:160]
    f["title"] = title or _default_title(f["content"])
    return f, extras


def _default_title(content: str) -> str:
    return (content.splitlines()[0].strip() if content else "")[:160] or "Memory fact"


def _equivalent(a: _Card, b: _Card) -> bool:
    def material(c: _Card) -> dict[str, Any]:
        return {k: v for k, v in {**c.data, **c.extras}.items() if k not in _BOOKKEEPING}
    return material(a) == material(b)


class _UserStore:
    """One DeerFlow user directory read as DeerFlow reads it after recovery and migration."""

    def __init__(self, reader: _Reader, udir: Path, report: DeerFlowReport, now: datetime) -> None:
        self.reader, self.udir, self.user, self.report, self.now = reader, udir, udir.name, report, now
        self.journal = _Journal.read(reader, udir, report)
        self.cards: dict[tuple[str, str], _Card] = {}  # (agent, id) -> card

    def manifest(self) -> dict[str, Any] | None:
        path = self.udir / "memory.json"
        if self.journal.manifest is None:
            self.report.notes.append(f"{path}: the journal's uncommitted write created it; not read (rolled back)")
            return None
        if isinstance(self.journal.manifest, bytes):
            self.report.notes.append(f"{path}: read from the journal's backup (the uncommitted write is rolled back)")
            return self.reader.json(path, self.journal.manifest)
        return self.reader.json(path) if path.exists() else None

    def read(self) -> tuple[list[ProfileSection], list[_Card]]:
        doc = self.manifest() or {}
        for key in doc:
            if key not in MANIFEST_FIELDS:
                _count(self.report.not_carried, f"memory.json {_shown(key)}")
        groups = {g: doc.get(g) or {} for g in ("user", "history")}
        agents_dir = self.udir / "agents"
        agent_dirs = sorted(p for p in agents_dir.iterdir() if p.is_dir()) if agents_dir.is_dir() else []
        previous = next((p for p in agent_dirs if p.name == PREVIOUS_DEFAULT and not (p / "config.yaml").is_file()),
                        None)
        readable = []
        for adir in agent_dirs:
            if adir is previous:
                continue
            if adir.name != DEFAULT_BUCKET and not _AGENT_DIR.fullmatch(adir.name):
                n = len(self._listing(adir / "facts", quiet=True))
                self.report.notes.append(f"{adir}: not an agent name DeerFlow reads (lower-case letters, digits, "
                                         f"'-'); its {n} cards are not imported")
                _count(self.report.not_carried, "cards of an agent directory DeerFlow does not read", n)
                continue
            readable.append(adir)
            self._cards(adir, adir.name)
            self._sidecars(adir)
        for (path, fid) in sorted(self.journal.absent.items()):
            if path.exists():
                self.report.notes.append(f"{path}: written by a DeerFlow write that never committed (journal "
                                         f"'prepared'); DeerFlow rolls it back, so it is not imported")
                self.report.skip("rolled back: an uncommitted DeerFlow write")
        # DeerFlow's read-time migrations, in its order: the v1 user file, per-agent files, lead-agent
        if "facts" in doc or (doc and doc.get("version") != DOCUMENT_VERSION):
            self._legacy(self._facts_of(doc, self.udir / "memory.json", self.udir), DEFAULT_BUCKET)
        for adir in readable:
            legacy_path = adir / "memory.json"
            if legacy_path.exists():
                legacy = self.reader.json(legacy_path)
                for g in groups:
                    groups[g] = self._adopt(groups[g], legacy.get(g) or {}, legacy_path, g)
                for key in legacy:
                    if key not in MANIFEST_FIELDS:
                        _count(self.report.not_carried, f"memory.json {_shown(key)}")
                self._legacy(self._facts_of(legacy, legacy_path, adir), adir.name)
        if previous is not None:
            unexpected = [p.name for p in previous.iterdir() if p.name != "facts"]
            if (previous / "facts").is_dir():
                unexpected += [p.name for p in (previous / "facts").rglob("*")
                               if p.is_file() and p.suffix.lower() != ".md"]
            if unexpected:
                raise InvalidInput(f"{previous}: the earlier default bucket holds unexpected entries "
                                   f"({', '.join(sorted(unexpected))}); DeerFlow refuses to migrate it")
            found: dict[tuple[str, str], _Card] = {}
            self._cards(previous, PREVIOUS_DEFAULT, into=found)
            self._legacy([c for _, c in sorted(found.items())], DEFAULT_BUCKET)
        return self._sections(groups), [c for _, c in sorted(self.cards.items())]

    def _cards(self, adir: Path, agent: str, into: dict | None = None) -> None:
        into = self.cards if into is None else into
        facts_dir = adir / "facts"
        paths = set(self._listing(facts_dir))
        paths |= {p for p in self.journal.backups if p.is_relative_to(facts_dir)}  # deleted by the uncommitted write
        for path in sorted(paths):
            if path in self.journal.absent:
                continue
            backup = self.journal.backups.get(path)
            if backup is not None:
                self.report.notes.append(f"{path}: read from the journal's backup (the uncommitted write is "
                                         f"rolled back)")
            raw = self.reader.card(path, backup)
            if str(raw.get("id")) != path.stem:
                raise InvalidInput(f"{path}: the id in the card ({raw.get('id')!r}) is not the file name "
                                   f"(DeerFlow refuses the card too)")
            user, owner = raw.get("user_id"), raw.get("agent_name")
            if not isinstance(user, str) or _safe_user_id(user) != self.user:
                raise InvalidInput(f"{path}: the card belongs to user {user!r}, not to {self.user!r} whose "
                                   f"directory holds it (DeerFlow refuses the card too)")
            if not isinstance(owner, str) or owner.lower() != agent.lower():
                raise InvalidInput(f"{path}: the card belongs to agent {owner!r}, not {agent!r} "
                                   f"(DeerFlow refuses the card too)")
            data, extras = _normalize(raw, str(path))
            canonical = _card_path(self.udir, agent, data["id"], path)
            if _real(path) != _real(canonical):
                self.report.notes.append(f"{path}: not at its shard ({canonical.parent.name}/); DeerFlow reads it but "
                                         f"cannot update it")
            into[(agent, data["id"])] = _Card(str(path), self.user, agent, data, extras)

    def _listing(self, facts_dir: Path, *, quiet: bool = False) -> list[Path]:
        """The ``*.md`` entries under ``facts_dir``, found as DeerFlow finds its cards: a
        linked directory (a shard moved elsewhere) is read through its link when it stays
        inside the root; one that leads out of it, to a directory read already or nowhere
        is reported (``quiet``: not), never dropped silently. A link loop named like a card
        stops the import (:func:`_real`)."""
        found: list[Path] = []
        seen: set[Path] = set()
        links: list[Path] = []

        def visit(directory: Path) -> None:
            seen.add(_real(directory))
            try:
                entries = sorted(directory.iterdir())
            except OSError as exc:
                raise InvalidInput(f"{directory}: cannot be listed ({exc.strerror or exc})") from None
            for entry in entries:
                if entry.is_symlink():
                    links.append(entry)  # after every real directory: those are read at their own place
                elif entry.is_dir():
                    visit(entry)
                elif entry.name.endswith(".md"):
                    found.append(entry)

        def tell(note: str, skip: str | None = None) -> None:
            if not quiet:
                self.report.notes.append(note)
                if skip:
                    self.report.skip(skip)

        if facts_dir.is_dir():
            visit(facts_dir)
        while links:
            link = links.pop(0)
            if link.name.endswith(".md"):
                _real(link)  # a loop stops here; where it leads the reader checks
                found.append(link)
                continue
            try:
                real = link.resolve()
            except (OSError, RuntimeError):
                tell(f"{link}: a link loop; nothing read there")
                continue
            if not real.is_dir():
                tell(f"{link}: a link to {'nothing' if not real.exists() else 'a file'} ({real}); nothing read there")
            elif not real.is_relative_to(self.reader.real):
                tell(f"{link}: a directory link leading outside the DeerFlow root ({real}); the cards there are "
                     f"not read", "a directory linked outside the DeerFlow root (not read)")
            elif real in seen:
                tell(f"{link}: the same directory as one read already ({real}); its cards are read once")
            else:
                visit(link)
        return sorted(found)

    def _facts_of(self, doc: dict[str, Any], path: Path, base: Path) -> list[_Card]:
        """The legacy facts of a v1 ``memory.json``: a list of objects, or a manifest
        ``{id: {"path", "contentHash"}}`` of cards relative to the file."""
        facts = doc.get("facts")
        out: list[_Card] = []
        if facts is None:
            return out
        if isinstance(facts, list):
            for n, item in enumerate(facts):
                if isinstance(item, dict) and not item.get("id") and isinstance(item.get("content"), str):
                    # DeerFlow draws a random id when it migrates the fact; a stable one here keeps
                    # re-imports from adding it twice (after DeerFlow's migration, the same content is)
                    seed = f"{path.relative_to(self.udir)}\n{item['content'].strip()}"
                    item = {**item, "id": "fact_" + hashlib.sha256(seed.encode()).hexdigest()[:32]}
                    self.report.notes.append(f"{path} facts[{n}]: no id; imported as {item['id']}")
                data, extras = _normalize(item, f"{path} facts[{n}]")
                out.append(_Card(f"{path} facts[{n}]", self.user, "", data, extras))
        elif isinstance(facts, dict):
            for fid, entry in facts.items():
                if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                    raise InvalidInput(f"{path}: the manifest entry for {fid!r} has no path")
                card_path = _inside(base, entry["path"], f"{path}: the entry for {fid!r}")
                raw = self.reader.card(card_path)
                if str(raw.get("id")) != str(fid):
                    raise InvalidInput(f"{card_path}: id {raw.get('id')!r} is not {fid!r}, the id {path} gives it")
                digest = entry.get("contentHash")
                if digest and digest != "sha256:" + hashlib.sha256(card_path.read_bytes()).hexdigest():
                    raise InvalidInput(f"{card_path}: its content hash is not the one {path} records")
                data, extras = _normalize(raw, str(card_path))
                out.append(_Card(str(card_path), self.user, "", data, extras))
        else:
            raise InvalidInput(f"{path}: facts must be a list or a mapping")
        return out

    def _legacy(self, found: list[_Card], agent: str) -> None:
        """Migrate legacy facts into ``agent`` as DeerFlow does: a copy equal to the card
        of the same id is that card; a copy that differs stops the import."""
        for card in found:
            card.agent = agent
            current = self.cards.get((agent, card.data["id"]))
            if current is None:
                self.cards[(agent, card.data["id"])] = card
            elif _equivalent(card, current):
                self.report.skip("legacy copy of a current card")
            else:
                raise InvalidInput(f"{card.where}: fact {card.data['id']!r} differs from {current.where} "
                                   f"(DeerFlow refuses to migrate it too)")

    def _adopt(self, canonical: Any, legacy: Any, path: Path, group: str) -> Any:
        if canonical == legacy or not _meaningful(legacy):
            return canonical
        if not _meaningful(canonical):
            self.report.notes.append(f"{path}: its {group} summaries are the user's (DeerFlow adopts them)")
            return legacy
        raise InvalidInput(f"{path}: its {group} summaries differ from the user's memory.json "
                           f"(DeerFlow refuses to migrate them too)")

    def _sections(self, groups: dict[str, Any]) -> list[ProfileSection]:
        out = []
        for group in ("user", "history"):
            if not isinstance(groups[group], dict):
                raise InvalidInput(f"{self.udir / 'memory.json'}: {group} must be an object")
            for name, value in groups[group].items():
                target = SECTION_NAMES.get(name)
                if target is None:
                    self.report.notes.append(f"{self.user}: section {_shown(name)!r} has no archivist equivalent; "
                                             f"not carried")
                    _count(self.report.not_carried, f"memory.json section {_shown(name)}")
                    continue
                if not isinstance(value, dict) or not isinstance(value.get("summary", ""), str):
                    raise InvalidInput(f"{self.udir / 'memory.json'}: section {name!r} must be an object with "
                                       f"a summary string")
                for key in value:
                    if key not in ("summary", "updatedAt"):
                        _count(self.report.not_carried, f"memory.json section field {_shown(key)}")
                if value.get("summary", "").strip():
                    at = _time(value.get("updatedAt"), f"{self.udir / 'memory.json'}", f"{name}.updatedAt")
                    out.append(ProfileSection(target, value["summary"].strip(), at or self.now))
        return out

    def _sidecars(self, adir: Path) -> None:
        meta = adir / ".metadata"
        for name, what in (("fact-usage.json", "usage (access counts)"), ("eviction-audit.json", "eviction audit")):
            path = meta / name
            if path.is_file():
                try:
                    n = len(json.loads(self.reader.data(path, MAX_JSON_BYTES)))
                except (ValueError, TypeError):
                    n = 1
                _count(self.report.not_carried, f".metadata {what}", n)


def _safe_user_id(raw: str) -> str:
    """DeerFlow's directory name for a user id (an unsafe id gets a digest suffix)."""
    clean = re.sub(r"[^A-Za-z0-9_\-]", "-", raw)
    return raw if clean == raw and raw else f"{clean}-{hashlib.sha256(raw.encode()).hexdigest()[:16]}"


def _count(counter: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        counter[key] = counter.get(key, 0) + n


def _shown(text: str) -> str:
    """DeerFlow's text as the report may show it (the report is printed, ``archivist import
    --json``): what the content policy refuses (a secret in a field name or a category) is
    withheld, as it is from memory."""
    problem = screen(text)
    return text if problem is None else f"[withheld: {problem.code}]"


_WORD = re.compile(r"[^\s/\\'\",;:()\[\]{}=<>]+")


def _redacted(text: str, root: str) -> str:
    """``text`` with each word the content policy refuses withheld: a file or directory name
    in DeerFlow's store, an id, may look like a secret. Words, not the whole text: the
    report's own sentences (a refusal's reason) must not read as what they describe; and
    ``root``, the path the caller gave, is shown as given."""
    return root.join(_WORD.sub(lambda m: _shown(m.group()), part) for part in text.split(root))


def _withheld(report: DeerFlowReport, root: Path) -> DeerFlowReport:
    """The last look at the report before it is returned: no word in it that memory refuses."""
    for name in ("skipped", "mapped", "not_carried"):
        counts: dict[str, int] = {}
        for key, n in getattr(report, name).items():
            _count(counts, _redacted(key, str(root)), n)
        setattr(report, name, counts)
    report.notes = [_redacted(n, str(root)) for n in report.notes]
    report.rejected = [_redacted(r, str(root)) for r in report.rejected]
    return report


def _time(value: Any, where: str, name: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_time(str(value))
    except (ValueError, OverflowError):
        raise InvalidInput(f"{where}: {name} is not an ISO-8601 time: {value!r}") from None


# ------------------------------------------------------------------------- mapping
def _fingerprint(card: _Card) -> str:
    material = {k: v for k, v in card.data.items() if k not in ("revision", "createdAt", "updatedAt", "scope",
                                                                "schemaVersion", "consolidatedAt")}
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _to_fact(card: _Card, ident: Identity, now: datetime, config, report: DeerFlowReport) -> Fact:
    """The archivist fact for one card (not yet through the gate); counts what is
    mapped where and what is not carried."""
    d, where = card.data, card.where
    raw_category = d["category"]
    extension = d.get("categoryExtension")
    label = raw_category
    if raw_category == "other":
        if isinstance(extension, str) and extension.strip():
            label = f"other/{extension.strip()}"
            category = CATEGORY_MAP.get(extension.strip(), Category.CONTEXT)
            _count(report.mapped, f"categoryExtension {_shown(extension.strip())} -> "
                                  f"{'category' if extension.strip() in CATEGORY_MAP else 'context + provenance'}")
        else:
            category = Category.CONTEXT
            if extension is not None:
                _count(report.not_carried, "categoryExtension (not text)")
    else:
        category = CATEGORY_MAP[raw_category]
        if extension is not None:  # DeerFlow keeps an extension only beside 'other'
            _count(report.not_carried, f"categoryExtension beside category {raw_category}")
    if raw_category in ("identity", "constraint", "decision"):
        _count(report.mapped, f"category {raw_category} -> context + provenance")
    context: list[str] = []

    def carry(name: str, text: str, what: str) -> None:
        try:
            context.append(f"{what}: {check_text(text, name, max_chars=config.max_content_chars)}")
            _count(report.mapped, f"{name} -> context")
        except InvalidInput:
            _count(report.not_carried, f"{name} (longer than {config.max_content_chars} characters)")

    if d["title"] != _default_title(d["content"]):
        carry("title", d["title"], "title")
    topics = [t.strip() for t in d["topics"] if t.strip()]
    if topics:
        carry("topics", ", ".join(topics), "topics")
    error = d.get("sourceError")
    if isinstance(error, str) and error.strip():
        carry("sourceError", error.strip(), "source error")
    elif error is not None and not isinstance(error, str):
        _count(report.not_carried, "sourceError (not text)")
    created = _time(d.get("createdAt"), where, "createdAt") or now
    updated = _time(d.get("updatedAt"), where, "updatedAt") or created
    confirmed = _time(d.get("lastConfirmedAt"), where, "lastConfirmedAt")
    valid_until = None
    if "expected_valid_days" in d:
        days = _valid_days(d["expected_valid_days"])
        if days is None:
            _count(report.not_carried, "expected_valid_days (not a positive number; DeerFlow ignores it too)")
        else:
            try:
                valid_until = (confirmed or created) + timedelta(days=days)
                _count(report.mapped, "expected_valid_days -> valid_until")
                if valid_until <= now:
                    _count(report.mapped, "expected_valid_days -> valid_until (already past: imported expired)")
            except OverflowError:
                _count(report.not_carried, "expected_valid_days (beyond year 9999)")
    source = d["source"]
    descriptor = [f"deermem {d['id']} rev {d['revision']} card {_fingerprint(card)}", f"source {source['type']}",
                  f"category {label}"]
    schema = d.get("schemaVersion")
    if isinstance(schema, int) and not isinstance(schema, bool):
        descriptor.insert(1, f"schema {schema}")
        if schema != SCHEMA_VERSION:
            _count(report.mapped, f"schemaVersion {schema} -> provenance (archivist reads DeerMem schema "
                                  f"{SCHEMA_VERSION}; the card was read as that)")
    elif schema is not None:
        _count(report.not_carried, "schemaVersion (not an integer)")
    if "scope" in d:  # DeerFlow sets a fact's scope from user_id/agent_name and its directory
        _count(report.not_carried, "scope (the card's directory decides it, as in DeerFlow)")
    if d.get("confirmationCount"):
        descriptor.append(f"confirmed {d['confirmationCount']} times")
        _count(report.mapped, "confirmationCount -> provenance")
    at = d.get("consolidatedAt")
    if d["consolidatedFrom"]:
        descriptor.append(f"consolidated from {', '.join(d['consolidatedFrom'])}"
                          + (f" at {at}" if isinstance(at, str) and at else ""))
        _count(report.mapped, "consolidatedFrom -> provenance")
    if at is not None and not (d["consolidatedFrom"] and isinstance(at, str)):
        _count(report.not_carried, "consolidatedAt (not text, or without consolidatedFrom)")
    for key in card.extras:
        _count(report.not_carried, _shown(str(key)))
    conversation = source["type"] == "conversation"
    return Fact(
        id=d["id"], identity=ident, content=d["content"], category=category, kind=Kind.FACT,
        scope=FactScope.USER, durability=Durability.DURABLE, authority=Authority.DESCRIPTIVE,
        confidence=d["confidence"], status=Status.COMMITTED,
        provenance=Provenance(SourceType.USER_MESSAGE if conversation else SourceType.EXPLICIT,
                              source["threadId"], None, None, "deerflow", "; ".join(descriptor)),
        created_at=created, updated_at=updated, last_confirmed_at=confirmed or created,
        valid_until=valid_until, version=d["revision"], context="\n".join(context) or None,
        valid_from=created, recorded_at=now,
    )


def _valid_days(raw: Any) -> int | None:
    """DeerFlow's reading of ``expected_valid_days``: a positive int (a float is truncated first)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, float):
        raw = int(raw) if raw == raw and raw not in (float("inf"), float("-inf")) else None
    return raw if isinstance(raw, int) and raw > 0 else None


def _screen_provenance(fact: Fact) -> Rejection | None:
    """What the gate does not read itself: the thread id and the provenance text."""
    for text in (fact.provenance.thread_id or "", fact.provenance.extractor_version or ""):
        problem = screen(text)
        if problem:
            return problem
    return None


# ------------------------------------------------------------------------- the sync
@dataclass
class _Plan:
    sections: list[tuple[Identity, ProfileSection]] = field(default_factory=list)
    added: list[Fact] = field(default_factory=list)
    updated: list[tuple[Fact, Fact]] = field(default_factory=list)  # (live head, new version)
    merged: list[tuple[Fact, str]] = field(default_factory=list)  # (retired source, consolidated id)


def _scope_alt(deer_id: str, ident: Identity) -> str:
    digest = hashlib.sha256(f"{ident.tenant}/{ident.user}/{ident.agent}".encode()).hexdigest()[:8]
    return f"{deer_id}.{digest}"


def _deer_version(chain: list[Fact]) -> Fact | None:
    """The newest version of a chain that came from DeerFlow."""
    return next((f for f in reversed(chain) if f.provenance.extractor == "deerflow"), None)


def _same(previous: Fact, fact: Fact) -> bool:
    old, new = (_DESCRIPTOR.match(f.provenance.extractor_version or "") for f in (previous, fact))
    if old is not None and new is not None:
        return old["fp"] == new["fp"]
    # imported before cards had a fingerprint: compare what that import kept
    return (content_hash(previous.content), previous.category, previous.confidence) == \
        (content_hash(fact.content), fact.category, fact.confidence)


def _deer_id(fact: Fact) -> str:
    m = _DESCRIPTOR.match(fact.provenance.extractor_version or "")
    return m["id"] if m else fact.id


def import_deerflow(memory: MemoryPort, root: Path, *, tenant: str = "default", users: list[str] | None = None) -> DeerFlowReport:
    """Import (or sync again) DeerFlow's memory under ``root`` into ``tenant``."""
    root = Path(root)
    users_dir = root / "users"
    if not users_dir.is_dir():
        hint = " (a memory.json without users/ is DeerFlow's single-user layout, not read)" \
            if (root / "memory.json").exists() else ""
        raise InvalidInput(f"{root}: no users/ directory (not a DeerFlow memory root){hint}")
    now = memory.clock.now()
    report = DeerFlowReport()
    reader = _Reader(root)
    read: list[tuple[str, list[ProfileSection], list[_Card]]] = []
    for udir in sorted(p for p in users_dir.iterdir() if p.is_dir()):
        if users and udir.name not in users:
            continue
        if not _USER_DIR.fullmatch(udir.name):
            report.notes.append(f"{udir}: not a DeerFlow user directory name; not read")
            continue
        Identity(tenant, udir.name, "default")  # a name archivist cannot hold: a typed error, before any write
        report.users.append(udir.name)
        sections, cards = _UserStore(reader, udir, report, now).read()
        if {c.agent for c in cards} >= {DEFAULT_BUCKET, "default"}:
            raise InvalidInput(f"{udir}: both {DEFAULT_BUCKET} and an agent named 'default' hold facts; "
                               f"both would be archivist's agent 'default'")
        read.append((udir.name, sections, cards))
    read_only = copy.deepcopy(report)  # what reading found; the plan adds to a fresh copy per attempt
    for attempt in range(1, _ATTEMPTS + 1):
        report = copy.deepcopy(read_only)
        try:
            # planned inside the write transaction: a concurrent import (or any writer of these
            # users) waits for it, then plans against what this one wrote
            with memory.writer(Identity(tenant, "_import", "default")) as w:
                plan = _plan(memory, tenant, read, now, report)
                for ident, section in plan.sections:
                    w.profile(section, identity=ident, reason=f"profile section {section.name} imported from DeerFlow")
                for fact in plan.added:
                    w.restore(fact, code="imported", reason="imported from DeerFlow")
                for head, new in plan.updated:
                    w.retire(head, Status.SUPERSEDED, code="deerflow_revision",
                             reason=f"a new revision in DeerFlow ({new.id})", valid_to=new.valid_from)
                    w.restore(new, code="imported", reason=f"revision from DeerFlow, supersedes {head.id}")
                for source, into in plan.merged:
                    w.retire(source, Status.SUPERSEDED, code="merge",
                             reason=f"merged into {into} by DeerFlow's consolidation")
        except StoreConflict as exc:  # another writer took an id this plan chose: plan again
            if attempt == _ATTEMPTS:
                raise StoreConflict(f"{root}: the DeerFlow import collided with concurrent writes {_ATTEMPTS} "
                                    f"times; nothing was written; run it again ({exc})") from exc
            continue
        break
    report.merged = len(plan.merged)
    return _withheld(report, root)


def _plan(memory: MemoryPort, tenant: str, read, now: datetime, report: DeerFlowReport) -> _Plan:
    store, config = memory.store, memory.governance
    plan = _Plan()
    claimed: dict[str, Identity] = {}
    for user, sections, _ in read:
        ident = Identity(tenant, user, "default")
        current = store.get_profile(ident).sections
        for section in sections:
            problem = screen(section.summary)
            if problem:
                raise InvalidInput(f"{user}/memory.json: profile section {section.name} refused: {problem}")
            if section.name in current and current[section.name].summary == section.summary:
                report.profile_unchanged += 1
            else:
                plan.sections.append((ident, section))
                report.profile_sections += 1
    for user, _, cards in read:
        seen: dict[Identity, set[str]] = {}  # archivist ids of the cards, per scope
        hashes: dict[Identity, set[str]] = {}  # their contents
        live: dict[Identity, dict[str, str]] = {}  # DeerFlow id -> archivist id of cards that stay live
        merges: dict[Identity, dict[str, str]] = {}  # DeerFlow source id -> consolidated archivist id
        for card in cards:
            ident = Identity(tenant, user, "default" if card.agent == DEFAULT_BUCKET else card.agent)
            fact = _to_fact(card, ident, now, config, report)
            aid, chain = _resolve(store, ident, card.data["id"], claimed)
            fact = fact.evolve(id=aid)
            seen.setdefault(ident, set()).add(aid)
            hashes.setdefault(ident, set()).add(content_hash(fact.content))
            outcome = _decide(memory, card, fact, chain, plan, report, now)
            if outcome is not None:
                live.setdefault(ident, {})[card.data["id"]] = outcome
                for source in card.data["consolidatedFrom"]:
                    merges.setdefault(ident, {})[source] = outcome
        for agent in store.user_agents(tenant, user):
            ident = Identity(tenant, user, agent)
            for fact in store.list_facts(ident, statuses=_LIVE):
                chain = store.history(ident, fact.id)
                root = chain[0]
                if root.provenance.extractor != "deerflow" or any(f.id in seen.get(ident, ()) for f in chain):
                    continue
                into = merges.get(ident, {}).get(_deer_id(root))
                if into is not None and into != fact.id:
                    plan.merged.append((fact, into))
                elif content_hash(fact.content) not in hashes.get(ident, set()):
                    report.missing += 1
                    report.notes.append(f"{ident.user}/{ident.agent}: {fact.id} is no longer in DeerFlow; kept here")
    return plan


def _resolve(store: Store, ident: Identity, deer_id: str, claimed: dict[str, Identity]) -> tuple[str, list[Fact]]:
    """The archivist id of a DeerFlow card and the chain it already has here (if any).
    DeerFlow ids are unique per agent only: another scope's id gets a scope suffix."""
    options = (deer_id, _scope_alt(deer_id, ident))
    for aid in options:
        if store.get_fact(ident, aid) is not None:
            claimed[aid] = ident
            return aid, store.history(ident, aid)
    for aid in options:
        if claimed.get(aid, ident) == ident and not store.fact_ids_present([aid]):
            claimed[aid] = ident
            return aid, []
    raise InvalidInput(f"fact id {deer_id!r} of {ident.user}/{ident.agent} is held twice in this import")


def _decide(memory: MemoryPort, card: _Card, fact: Fact, chain: list[Fact], plan: _Plan, report: DeerFlowReport,
            now: datetime) -> str | None:
    """Add, update, skip or leave one card; the archivist id that stays live, if any."""
    store = memory.store
    where = card.where
    if chain:
        head, previous = chain[-1], _deer_version(chain)
        if previous is None:
            report.skip("the id belongs to a fact not imported from DeerFlow")
            report.notes.append(f"{where}: {fact.id} is held here by a fact not from DeerFlow; not imported")
            return None
        if _same(previous, fact):
            report.unchanged += 1
            return head.id if head.status in _LIVE else None
        if head.status not in _LIVE and head.status is not Status.EXPIRED:  # a new revision may extend an end
            report.skip(f"retired here ({head.status.value})")
            return None
        when = _time(card.data.get("updatedAt"), where, "updatedAt") or now
        if head.valid_from is not None and when < head.valid_from:
            report.skip("older than the live version here")
            return head.id
        fact = fact.evolve(id=new_id(), version=max(head.version + 1, fact.version), supersedes=head.id,
                           created_at=when, updated_at=when, valid_from=when)
    admitted = _gate(memory, fact, where, report)
    if admitted is None:
        return chain[-1].id if chain and chain[-1].status in _LIVE else None
    if not chain:
        chash = content_hash(fact.content)
        twin = store.find_by_hash(fact.identity, chash)
        if twin or any(content_hash(f.content) == chash and f.identity == fact.identity for f in plan.added):
            report.skip("same content as a fact already here")
            report.notes.append(f"{where}: same content as {twin[0].id if twin else 'another card'}; not added twice")
            return twin[0].id if twin else None
        plan.added.append(admitted)
        report.added += 1
        return admitted.id
    head = chain[-1]
    if admitted.status is Status.CANDIDATE and head.status is Status.COMMITTED and \
            content_hash(head.content) == content_hash(admitted.content):
        # the user already confirmed these words here: the new revision keeps that confirmation
        admitted = admitted.evolve(status=Status.COMMITTED, recorded_at=now,
                                   confidence=max(head.confidence, admitted.confidence))
    plan.updated.append((head, admitted))
    report.updated += 1
    return admitted.id


def _gate(memory: MemoryPort, fact: Fact, where: str, report: DeerFlowReport) -> Fact | None:
    """``fact`` as the gate admits it, or ``None`` (refused or forgotten: reported)."""
    admitted = admit(fact, memory.governance)
    problem = admitted if isinstance(admitted, Rejection) else _screen_provenance(fact)
    if problem is not None:
        report.rejected.append(f"{where}: {problem}")
        report.skip(f"refused by the gate: {problem.code}")
        return None
    if memory.store.is_tombstoned(fact.identity, content_hash(fact.content)):
        report.rejected.append(f"{where}: forgotten: the user asked to forget this")
        report.skip("forgotten here")
        return None
    return admitted


__all__ = ["DeerFlowReport", "import_deerflow"]
