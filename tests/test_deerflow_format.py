"""A small re-implementation of DeerFlow's memory files (DeerMem v2 and the layouts it
migrates from), written for archivist's tests from DeerFlow's documented behaviour, and
tests that it writes what DeerFlow writes. The importer tests build their stores with it.

What it reproduces: ``users/{user}/memory.json`` (summaries only, ``version`` "2.0",
a ``revision`` bumped by every write); one card per fact at
``users/{user}/agents/{agent lower-cased}/facts/{sha256(id)[:2]}/{id}.md`` with YAML front
matter (the scope as ``user_id``/``agent_name``), a ``# title`` line, a blank line and the
content; per-fact ``revision`` bumped only when something besides bookkeeping changed;
categories outside the core set stored as ``other`` + ``categoryExtension``; the crash
journal ``.memory.journal.json`` with backups under ``.recovery/{operationId}/``; the legacy
v1 ``memory.json`` with a ``facts`` list, the legacy per-agent ``agents/{a}/memory.json``
and the earlier ``lead-agent`` default bucket; the ``.metadata`` usage sidecar.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import Any

import yaml

CORE = {"preference", "correction", "context", "goal", "behavior", "identity", "constraint", "decision", "other"}
SOURCE_WORDS = {"manual", "consolidation", "import", "unknown"}
UNCOMPARED = {"revision", "updatedAt"}  # what a rewrite of an unchanged fact may differ in
USER_SECTIONS = ("workContext", "personalContext", "topOfMind")
HISTORY_SECTIONS = ("recentMonths", "earlierContext", "longTermBackground")


def dir_name(user: str) -> str:
    """The directory of a user id: itself when it is [A-Za-z0-9_-]+, else a digest-suffixed form."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "-", user)
    return user if clean == user else f"{clean}-{hashlib.sha256(user.encode()).hexdigest()[:16]}"


class DeerMem:
    """Writes a DeerFlow memory root the way DeerFlow's file storage lays it out."""

    def __init__(self, root: Path, now: str = "2025-06-01T08:00:00Z") -> None:
        self.root = Path(root)
        self.now = now

    # ----------------------------------------------------------------- paths
    def user_dir(self, user: str) -> Path:
        return self.root / "users" / dir_name(user)

    def card_path(self, user: str, agent: str, fid: str) -> Path:
        shard = hashlib.sha256(fid.encode()).hexdigest()[:2]
        return self.user_dir(user) / "agents" / agent.lower() / "facts" / shard / f"{fid}.md"

    # ------------------------------------------------------------- the files
    def manifest(self, user: str) -> dict[str, Any] | None:
        path = self.user_dir(user) / "memory.json"
        return json.loads(path.read_text("utf-8")) if path.exists() else None

    def _empty_manifest(self) -> dict[str, Any]:
        blank = {"summary": "", "updatedAt": ""}
        return {"version": "2.0", "revision": 0, "lastUpdated": self.now,
                "user": {s: dict(blank) for s in USER_SECTIONS},
                "history": {s: dict(blank) for s in HISTORY_SECTIONS}}

    def _write_manifest(self, user: str, doc: dict[str, Any]) -> None:
        path = self.user_dir(user) / "memory.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")

    def read_card(self, path: Path) -> dict[str, Any]:
        text = path.read_text("utf-8")
        front, body = text[4:].split("\n---\n", 1)
        fact = yaml.safe_load(front) or {}
        lines = body.lstrip("\n").splitlines()
        title = lines.pop(0)[2:].strip() if lines and lines[0].startswith("# ") else ""
        if lines and not lines[0].strip():
            lines.pop(0)
        fact["title"], fact["content"] = title, "\n".join(lines).rstrip("\n")
        fact["scope"] = {"userId": fact.pop("user_id", None), "agentName": fact.pop("agent_name", None)}
        return fact

    def render(self, fact: dict[str, Any]) -> str:
        front = {k: copy.deepcopy(v) for k, v in fact.items() if k not in ("content", "title", "scope")}
        front["user_id"], front["agent_name"] = fact["scope"]["userId"], fact["scope"]["agentName"]
        dumped = yaml.safe_dump(front, allow_unicode=True, sort_keys=False).strip()
        return f"---\n{dumped}\n---\n\n# {fact['title']}\n\n{fact['content'].rstrip()}\n"

    def normalize(self, fact: dict[str, Any], user: str, agent: str, existing: dict | None = None) -> dict[str, Any]:
        """One fact as DeerFlow stores it (defaults, categories, source, title, revision)."""
        f = copy.deepcopy(fact)
        f["id"] = str(f.get("id") or f"fact_{uuid.uuid4().hex[:8]}")
        f["schemaVersion"] = 2
        f["content"] = f["content"].strip()
        category = f.get("category", "context") or "context"
        if category not in CORE:
            f.setdefault("categoryExtension", category)
            category = "other"
        f["category"] = category
        f["confidence"] = float(f.get("confidence", 0.5))
        f["status"] = "active"
        f["scope"] = {"userId": user, "agentName": agent}
        f.setdefault("topics", [])
        f.setdefault("consolidatedFrom", [])
        source = f.get("source")
        if isinstance(source, str):
            f["source"] = {"type": source, "threadId": None} if source in SOURCE_WORDS \
                else {"type": "conversation", "threadId": source}
        elif not isinstance(source, dict):
            f["source"] = {"type": "unknown", "threadId": None}
        title = str(f.get("title") or "").strip()
        first_line = f["content"].splitlines()[0].strip() or "Memory fact"
        f["title"] = (title.replace("\n", " ") if title else first_line)[:160]
        if existing is None:
            f.setdefault("createdAt", self.now)
            f.setdefault("updatedAt", f["createdAt"])
            f["revision"] = f.get("revision", 1)
        else:
            f["createdAt"] = existing["createdAt"]
            f["revision"] = existing["revision"]
            same = {k: v for k, v in f.items() if k not in UNCOMPARED} == \
                {k: v for k, v in existing.items() if k not in UNCOMPARED}
            if same:
                f["updatedAt"] = existing["updatedAt"]
            else:
                f["revision"], f["updatedAt"] = existing["revision"] + 1, self.now
        if f["consolidatedFrom"]:
            f.setdefault("consolidatedAt", f["updatedAt"])
        return f

    # ------------------------------------------------------------ operations
    def summaries(self, user: str, **sections: str) -> None:
        doc = self.manifest(user) or self._empty_manifest()
        for name, summary in sections.items():
            group = "user" if name in USER_SECTIONS else "history"
            doc[group][name] = {"summary": summary, "updatedAt": self.now}
        self._commit(user, doc)

    def _commit(self, user: str, doc: dict[str, Any]) -> None:
        doc = {**doc, "version": "2.0", "revision": int(doc.get("revision") or 0) + 1, "lastUpdated": self.now}
        doc.pop("facts", None)
        self._write_manifest(user, doc)

    def existing(self, user: str, agent: str, fid: str) -> dict[str, Any] | None:
        path = self.card_path(user, agent, fid)
        return self.read_card(path) if path.exists() else None

    def put(self, user: str, agent: str = "__default__", **fact: Any) -> dict[str, Any]:
        """Add or change one fact (a committed write: card, then the manifest's revision)."""
        existing = self.existing(user, agent, fact["id"]) if fact.get("id") else None
        if existing is not None:
            fact = {**{k: v for k, v in existing.items() if k != "title"}, **fact}
        normalized = self.normalize(fact, user, agent, existing)
        path = self.card_path(user, agent, normalized["id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.render(normalized), "utf-8")
        self._commit(user, self.manifest(user) or self._empty_manifest())
        return normalized

    def delete(self, user: str, agent: str, fid: str) -> None:
        self.card_path(user, agent, fid).unlink()
        self._commit(user, self.manifest(user) or self._empty_manifest())

    def crash(self, user: str, agent: str, upserts: list[dict] = (), deletes: list[str] = (),
              stage: str = "prepared") -> dict[str, Any]:
        """A multi-file write that stops after its files: the journal stays ``prepared``
        (or ``committed`` when the crash hits the clean-up)."""
        udir = self.user_dir(user)
        current = self.manifest(user)
        prepared = {}
        for fact in upserts:
            old = self.existing(user, agent, fact["id"])
            merged = {**{k: v for k, v in old.items() if k != "title"}, **fact} if old else fact
            prepared[fact["id"]] = (self.normalize(merged, user, agent, old), old)
        old_entries = {fid: {"path": self.card_path(user, agent, fid).relative_to(udir).as_posix()}
                       for fid, (_, old) in prepared.items() if old is not None}
        old_entries |= {fid: {"path": self.card_path(user, agent, fid).relative_to(udir).as_posix()} for fid in deletes}
        revision = int((current or {}).get("revision") or 0)
        journal = {"operationId": uuid.uuid4().hex, "state": "prepared", "agentName": agent,
                   "expectedRevision": revision, "nextRevision": revision + 1,
                   "factIds": list(prepared) + list(deletes), "oldEntries": old_entries}
        recovery = udir / ".recovery" / journal["operationId"]
        recovery.mkdir(parents=True)
        if current is not None:
            (recovery / "memory.json").write_bytes((udir / "memory.json").read_bytes())
        for fid, entry in old_entries.items():
            (recovery / f"{fid}.md").write_bytes((udir / entry["path"]).read_bytes())
        (udir / ".memory.journal.json").write_text(json.dumps(journal, indent=2), "utf-8")
        for fid, (fact, _) in prepared.items():
            path = self.card_path(user, agent, fid)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.render(fact), "utf-8")
        for fid in deletes:
            self.card_path(user, agent, fid).unlink()
        if stage == "committed":
            self._commit(user, current or self._empty_manifest())
            journal["state"] = "committed"
            (udir / ".memory.journal.json").write_text(json.dumps(journal, indent=2), "utf-8")
        return journal

    # --------------------------------------------------------------- legacy
    def legacy_v1(self, user: str, facts: list[dict], **sections: str) -> None:
        """The v1 user file: summaries and a ``facts`` list (DeerFlow moves them into __default__)."""
        doc = self._empty_manifest()
        doc["version"], doc["revision"] = "1.0", 3
        for name, summary in sections.items():
            doc["user" if name in USER_SECTIONS else "history"][name] = {"summary": summary, "updatedAt": self.now}
        doc["facts"] = facts
        self._write_manifest(user, doc)

    def legacy_agent(self, user: str, agent: str, facts: list[dict] | dict, **sections: str) -> Path:
        """The legacy per-agent file ``agents/{agent}/memory.json`` (facts and summaries)."""
        doc = {"version": "1.0", "lastUpdated": self.now, "user": {}, "history": {}, "facts": facts}
        for name, summary in sections.items():
            doc["user" if name in USER_SECTIONS else "history"][name] = {"summary": summary, "updatedAt": self.now}
        path = self.user_dir(user) / "agents" / agent.lower() / "memory.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")
        return path

    def usage(self, user: str, agent: str, entries: dict[str, dict]) -> None:
        path = self.user_dir(user) / "agents" / agent.lower() / ".metadata" / "fact-usage.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entries), "utf-8")


# ------------------------------------------------------------- the writer itself
def test_a_card_sits_at_its_shard_with_the_scope_in_front(tmp_path):
    deer = DeerMem(tmp_path)
    fact = deer.put("alice", "Coder", id="fact_3f2a9c1b", content="User prefers tea", category="hobby",
                    source="thread-1", confidence=0.9)
    path = tmp_path / "users/alice/agents/coder/facts" / hashlib.sha256(b"fact_3f2a9c1b").hexdigest()[:2] / \
        "fact_3f2a9c1b.md"
    text = path.read_text("utf-8")
    assert text.startswith("---\nid: fact_3f2a9c1b\n") and "\n---\n\n# User prefers tea\n\nUser prefers tea\n" in text
    assert "createdAt: '2025-06-01T08:00:00Z'" in text  # timestamps stay strings
    assert "user_id: alice\nagent_name: Coder\n" in text
    assert fact["category"] == "other" and fact["categoryExtension"] == "hobby"
    assert fact["source"] == {"type": "conversation", "threadId": "thread-1"}
    assert deer.read_card(path)["content"] == "User prefers tea"
    assert deer.manifest("alice")["revision"] == 1 and "facts" not in deer.manifest("alice")


def test_a_revision_moves_only_when_the_fact_changed(tmp_path):
    deer = DeerMem(tmp_path)
    deer.put("alice", id="fact_a", content="User likes jazz", confidence=0.9)
    deer.now = "2025-07-01T00:00:00Z"
    assert deer.put("alice", id="fact_a", content="User likes jazz", confidence=0.9)["revision"] == 1
    changed = deer.put("alice", id="fact_a", content="User likes bebop jazz")
    assert changed["revision"] == 2 and changed["updatedAt"] == "2025-07-01T00:00:00Z"
    assert changed["createdAt"] == "2025-06-01T08:00:00Z"


def test_a_crash_leaves_a_prepared_journal_with_backups(tmp_path):
    deer = DeerMem(tmp_path)
    deer.put("alice", id="fact_a", content="User likes jazz")
    journal = deer.crash("alice", "__default__", upserts=[{"id": "fact_a", "content": "User likes opera"},
                                                          {"id": "fact_b", "content": "User has a cat"}])
    udir = tmp_path / "users/alice"
    assert journal["state"] == "prepared" and set(journal["factIds"]) == {"fact_a", "fact_b"}
    assert set(journal["oldEntries"]) == {"fact_a"}
    assert "User likes jazz" in (udir / ".recovery" / journal["operationId"] / "fact_a.md").read_text()
    assert deer.read_card(deer.card_path("alice", "__default__", "fact_a"))["content"] == "User likes opera"
    assert deer.manifest("alice")["revision"] == 1  # the manifest was never rewritten
