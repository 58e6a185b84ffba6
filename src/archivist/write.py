"""The one writer: every change to facts goes through a :class:`Writer`.

``remember``, ``remember_many``, ``apply``/``learn``, ``confirm``, removals and
reinforcements, consolidation and every import open a writer on one trusted scope, say
what they want written, and leave. The writer owns the unit of work: one store
transaction, the gate's decision for each candidate (:func:`~archivist.pipeline.
governance.gate` then :func:`~archivist.pipeline.governance.compare`, with the look-ups
they need), "retire the old version and bump the version", the audit entry of every
decision, and — only after the transaction committed — the derived vector index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from .index.signatures import Signatures
from .index.text import query_terms
from .model import (
    AuditEntry,
    Fact,
    FactScope,
    Identity,
    ProfileSection,
    Provenance,
    Status,
    content_hash,
    new_id,
)
from .model.attributes import group_keys, moved_from
from .pipeline.contradictions import contradicts, exclusive, other_number, states_change
from .pipeline.filtering import FilterResult
from .pipeline.governance import (
    UNKEPT,
    Action,
    Candidate,
    Decision,
    GovernanceConfig,
    Known,
    Rejection,
    as_status,
    compare,
    forgotten,
    gate,
    held_reason,
    is_held,
    reject,
)
from .pipeline.recognise import HELD, completes_order, order_part
from .storage.base import Store


#: the place a home-city fact names: the first capitalised place after "in" or "to"
_HOME_PLACE = re.compile(r"\b(?:in|to)\s+((?-i:[A-Z])[\w.\-]*(?:\s+(?-i:[A-Z])[\w.\-]*)*)")


def _place(name: str) -> str:
    """A place as compared: "Berlin, Germany." is Berlin."""
    return name.split(",")[0].strip().rstrip(".").lower()


class Writer:
    """A unit of work on one scope. Use as a context manager::

        with Writer(store, identity, now=now, governance=config, after_commit=embed) as w:
            decision, fact = w.propose(candidate, evidence=filtered)
    """

    def __init__(self, store: Store, identity: Identity, *, now: datetime,
                 governance: GovernanceConfig | None = None,
                 after_commit: Callable[[Sequence[Fact]], None] | None = None,
                 before_commit: Callable[[Writer], None] | None = None) -> None:
        self.store = store
        self.identity = identity
        self.now = now
        self.config = governance or GovernanceConfig()
        self.after_commit = after_commit
        self.before_commit = before_commit  # derived state kept in the same unit (the profile follows the facts)
        self.committed: list[Fact] = []  # what the derived indexes need once the unit commits
        self._audit: list[tuple[Identity, AuditEntry]] = []
        self._tx: Any = None
        self._ahead: _Lookahead | None = None

    def look_ahead(self, cands: Sequence[Candidate]) -> None:
        """Read what deciding ``cands`` will look up — the facts sharing a signature with
        them, and which of their texts were forgotten — a statement per chunk of candidates,
        not a few per candidate (each a round trip to a server). Inside the unit of work only."""
        if len(cands) > 1 and self._tx is not None:
            self._ahead = _Lookahead(self.store, self.identity, self.now, cands)

    def __enter__(self) -> Writer:
        self._tx = self.store.transaction()
        self._tx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            try:  # the audit is part of the unit of work: if it cannot be written, nothing is
                if self.before_commit is not None and self._audit:
                    self.before_commit(self)
                by_scope: dict[Identity, list[AuditEntry]] = {}
                for identity, entry in self._audit:
                    by_scope.setdefault(replace(identity, project=None), []).append(entry)
                for identity, entries in by_scope.items():
                    self.store.record_audit(identity, entries)
            except BaseException as failure:
                self._tx.__exit__(type(failure), failure, failure.__traceback__)
                raise
        self._tx.__exit__(*exc)
        if exc[0] is None and self.after_commit is not None:
            self.after_commit(self.committed)

    # ------------------------------------------------------------ decisions
    def target(self, scope: FactScope) -> Identity:
        """Where a fact of ``scope`` lives: project facts under the scope's project,
        user facts outside every project (so every project sees them)."""
        project = self.identity.project if scope is FactScope.PROJECT else None
        return replace(self.identity, project=project)

    def decide(self, cand: Candidate, evidence: FilterResult | None, *, dedupe: bool = True) -> Decision:
        """The gate's decision, settled against what the store holds."""
        decision = gate(cand, self.config, evidence, project=self.identity.project)
        if not decision.accepted:
            return decision
        cand = decision.candidate or cand
        if self._is_tombstoned(cand.content_hash):
            if cand.source_type.value == "explicit" or cand.explicit:
                self.store.lift_tombstone(self.identity, cand.content_hash)  # said again, on purpose
                if self._ahead is not None:
                    self._ahead.tombstoned.discard(cand.content_hash)
            else:
                return forgotten(cand)
        if cand.key is None and (left := moved_from(cand.content)) is not None and self._lives_in(left):
            cand = replace(cand, key="home_city")  # "I moved from Berlin to Lisbon", said where Berlin is home
            decision = replace(decision, candidate=cand)
        settled = compare(cand, decision, self._known(cand, dedupe))
        if settled.action in (Action.SAVE, Action.SUPERSEDE):
            partner = self._completes_order(settled.candidate or cand)
            if partner is not None:
                return Decision(Action.CANDIDATE, "held_split_order", f"completes a standing order with {partner.id} "
                                "(a waiver and an action said apart): held until confirmed", settled.candidate or cand)
        return settled

    def _completes_order(self, cand: Candidate) -> Fact | None:
        """A live fact that, read with ``cand``, makes a standing order (a waiver of the
        user's confirmation in one, an action in the other), on a shared subject."""
        kind = order_part(cand.content)
        if kind is None:
            return None
        for match in self._search(cand.content, 20):
            other = match.fact
            if other.status is Status.COMMITTED and order_part(other.content) not in (None, kind) and \
                    completes_order(other.content, cand.content):
                return other
        return None

    def _lives_in(self, place: str) -> bool:
        """Whether ``place`` is the home city memory holds: the place the live home-city fact
        says the user lives in or moved to ("I live in New York." is not York)."""
        homes = (_HOME_PLACE.search(f.content) for f in self._live_keyed(["home_city"])
                 if f.status is Status.COMMITTED and f.identity.project is None)
        return any(home and _place(home.group(1)) == _place(place) for home in homes)

    def _known(self, cand: Candidate, dedupe: bool) -> Known:
        project = self.target(cand.scope).project
        keyed = [f for f in self._live_keyed(group_keys(cand.key)) if f.identity.project == project]
        same = next((f for f in keyed if f.key == cand.key), None)
        group = [f for f in keyed if f.key != cand.key and not f.is_expired(self.now)]
        similar = self._similar(cand) if dedupe else []
        if dedupe and cand.key and same is None:  # a fact kept before its attribute had a key shares words with it
            similar += [m.fact for m in self._search(cand.content, 5) if m.fact.key is None]
        return Known(same, group, similar, same_key_expired=same is not None and same.is_expired(self.now))

    def _live_keyed(self, keys: Sequence[str]) -> list[Fact]:
        """The committed facts holding ``keys`` — expired ones too: a key has one committed
        row, and a new value takes its place as the next version."""
        found: list[Fact] = []
        for key in keys:
            found += self.store.list_facts(self.identity, key=key)
        return found

    def _similar(self, cand: Candidate) -> list[Fact]:
        """Live facts and candidates that may state ``cand`` again: those sharing its
        text or its meaning signature (:mod:`archivist.index.signatures`), the same folded
        text first."""
        sig = Signatures.of(cand.content)
        found = self._find(text=[sig.text], meaning=[sig.meaning])
        return sorted(found, key=lambda f: content_hash(f.content) != cand.content_hash)

    def _find(self, *, text=(), meaning=(), core=(), statuses=(Status.COMMITTED, Status.CANDIDATE)) -> list[Fact]:
        """``Store.find_by_signatures`` at this unit's time: from the batch's look-ahead
        when it holds the answer."""
        found = self._ahead.find(text, meaning, core, statuses) if self._ahead is not None else None
        if found is None:
            found = self.store.find_by_signatures(self.identity, text=text, meaning=meaning, core=core,
                                                  live_at=self.now, statuses=statuses)
        return found

    def _is_tombstoned(self, digest: str) -> bool:
        if self._ahead is not None and digest in self._ahead.hashes:
            return digest in self._ahead.tombstoned
        return self.store.is_tombstoned(self.identity, digest)

    def _insert(self, fact: Fact) -> None:
        self.store.insert_fact(fact)
        if self._ahead is not None:
            self._ahead.inserted(fact)

    def _update(self, fact: Fact) -> None:
        self.store.update_fact(fact)
        if self._ahead is not None and not self._ahead.updated(fact):
            self._ahead = None  # a fact it did not read now matches: the store answers from here on

    def _search(self, text: str, limit: int) -> list:
        terms = query_terms(text)
        return self.store.keyword_search(self.identity, terms, limit=limit, live_at=self.now) if terms else []

    # ------------------------------------------------------------- writing
    def propose(self, cand: Candidate, *, evidence: FilterResult | None = None, thread_id: str | None = None,
                extractor: tuple[str, str | None] = ("api", None), when: datetime | None = None,
                dedupe: bool = True) -> tuple[Decision, Fact | None]:
        """Decide on ``cand`` and write what the decision says (nothing for a refusal
        or a duplicate). Every decision is audited."""
        decision = self.decide(cand, evidence, dedupe=dedupe)
        c = decision.candidate or cand
        fact = None
        if decision.action is Action.SUPERSEDE and when is not None and decision.existing.valid_from \
                and when < decision.existing.valid_from:
            decision = reject("older_than_current", "a statement dated before the current value of this key does "
                              "not replace it", c)
        if decision.action in (Action.SAVE, Action.SUPERSEDE, Action.CANDIDATE):
            fact = self._build(c, decision, thread_id, extractor, when or self.now)
            if decision.action is Action.SUPERSEDE:
                for old in (decision.existing, *decision.retires):
                    self._update(old.retired(Status.SUPERSEDED, self.now, valid_to=fact.valid_from))
                    self._close_conflicts(old.id)
                    if old.status is Status.CANDIDATE:  # a held candidate stated as a fact leaves the review queue
                        self.release(old.id)
            self._insert(fact)
            if fact.status is Status.COMMITTED:
                self.committed.append(fact)
        self._log(_entry(self.now, decision, c, fact))
        if fact is not None and is_held(decision.code):
            self.hold(fact.id, decision.code, decision.reason)
        if fact is not None and fact.status is Status.COMMITTED:
            self._settle_contradictions(fact, c.evidence_text or c.content)
        return decision, fact

    def hold(self, subject: str, code: str, reason: str) -> None:
        """Queue a held write for review: a fact id, or ``preference:<key>``. It is never
        shown until the application confirms it."""
        self.store.add_review_item(self.identity, new_id(), HELD, (subject,), f"{code}: {reason}", self.now)

    def release(self, subject: str) -> None:
        """A held write was confirmed or is gone: its review items close."""
        for item in self.store.review_items(self.identity, kind=HELD, naming=subject):
            self.store.resolve_review_item(self.identity, item["id"], self.now)

    def _settle_contradictions(self, fact: Fact, said: str) -> None:
        """A new unkeyed fact that contradicts a live one (:func:`~archivist.pipeline.
        contradictions.contradicts`): when it says things changed ("…anymore", "现在不…了")
        it retires the old one; otherwise both stay, marked disputed, and the pair goes to
        the review queue (:meth:`~archivist.memory.MemoryScope.resolve_review` settles it).
        A change said with another number ("actually, my dog is 5") retires the statement
        it gives again (:func:`~archivist.pipeline.contradictions.other_number`)."""
        core = Signatures.of(fact.content).core  # a contradiction by polarity shares the statement's core
        near = self._find(core=[core], statuses=(Status.COMMITTED,)) if core is not None else []
        if exclusive(fact.content):  # a vegetarian who eats meat: no shared word to search by
            near += self.store.list_facts(self.identity, live_at=self.now, limit=500)
        numbered = any(c.isdigit() for c in fact.content)
        changed = bool(near or numbered) and (states_change(said) or states_change(fact.content))
        seen: set[str] = set()
        if changed and numbered:  # "actually, my dog is 5 years old"
            for match in self._search(fact.content, 10):
                old = match.fact
                if old.id != fact.id and old.status is Status.COMMITTED and not (fact.key and old.key == fact.key) \
                        and old.identity.project == fact.identity.project and other_number(old.content, fact.content):
                    seen.add(old.id)
                    self.retire(old, Status.SUPERSEDED, code="contradicted",
                                reason=f"a later statement ({fact.id}) gives another number", valid_to=fact.valid_from,
                                message_id=fact.provenance.message_id)
        for old in near:
            if old.id in seen or old.id == fact.id or old.identity.project != fact.identity.project or \
                    (fact.key and old.key == fact.key) or old.status is not Status.COMMITTED or \
                    not contradicts(old.content, fact.content):
                continue
            seen.add(old.id)
            if changed:
                self.retire(old, Status.SUPERSEDED, code="contradicted",
                            reason=f"a later statement ({fact.id}) says this changed", valid_to=fact.valid_from,
                            message_id=fact.provenance.message_id)
            else:
                reason = f"{old.id} and {fact.id} contradict each other; both kept until one is chosen"
                self.store.add_review_item(self.identity, new_id(), "conflict", (old.id, fact.id), reason, self.now)
                self._log(AuditEntry(self.now, "dispute", "contradiction", reason, fact.id,
                                     content_hash(fact.content)), fact.identity)

    def refuse(self, rejection: Rejection, *, message_id: str | None = None, content: str | None = None) -> None:
        """Audit a refusal that happened before a decision (malformed input)."""
        keep = content if rejection.code not in UNKEPT else None
        self._log(AuditEntry(self.now, Action.REJECT.value, rejection.code, rejection.reason,
                             content_hash=content_hash(content) if content else None, content=keep,
                             message_id=message_id))

    def retire(self, fact: Fact, status: Status, *, code: str, reason: str, valid_to: datetime | None = None,
               message_id: str | None = None, action: str = "retire", keep_text: bool = True) -> Fact:
        retired = fact.retired(status, self.now, valid_to=valid_to)
        self._update(retired)
        self._close_conflicts(fact.id)
        self._log(AuditEntry(self.now, action, code, reason, fact.id, content_hash(fact.content),
                             fact.content if keep_text else None, message_id), fact.identity)
        return retired

    def _close_conflicts(self, fact_id: str) -> None:
        """A conflict a retired fact was in is settled: one side is gone."""
        for item in self.store.review_items(self.identity, kind="conflict", naming=fact_id):
            self.store.resolve_review_item(self.identity, item["id"], self.now)

    def reinforce(self, fact: Fact, *, message_id: str | None) -> Fact:
        """Restated by the user: the confirmation time moves, never the confidence."""
        updated = fact.evolve(last_confirmed_at=self.now, updated_at=self.now)
        self._update(updated)
        self._log(AuditEntry(self.now, "reinforce", "restated", "restated by the user; confidence unchanged",
                             fact.id, content_hash(fact.content), None, message_id), fact.identity)
        return updated

    def confirm(self, fact: Fact, confidence: float) -> Fact:
        """An explicit user confirmation: commits a candidate (replacing the live value of
        its key) and may raise confidence."""
        version, supersedes = fact.version, fact.supersedes
        if fact.status is Status.CANDIDATE and fact.key:
            old = next((f for f in self._live_keyed([fact.key]) if f.identity.project == fact.identity.project
                        and f.id != fact.id), None)
            if old is not None:
                self._update(old.retired(Status.SUPERSEDED, self.now, valid_to=self.now))
                version, supersedes = old.version + 1, old.id
        updated = fact.evolve(status=Status.COMMITTED, confidence=confidence, last_confirmed_at=self.now,
                              updated_at=self.now, version=version, supersedes=supersedes,
                              recorded_at=fact.recorded_at or self.now)
        self._update(updated)
        self.committed.append(updated)
        self.release(fact.id)
        self._log(AuditEntry(self.now, "confirm", "confirmed", "explicitly confirmed by the user", fact.id,
                             content_hash(fact.content), fact.content), fact.identity)
        return updated

    def relink(self, fact: Fact, *, supersedes: str, version: int) -> None:
        """Make ``fact`` the next version of ``supersedes`` (consolidation's supersede)."""
        self._update(fact.evolve(supersedes=supersedes, version=version, updated_at=self.now))

    def restore(self, fact: Fact, *, code: str = "imported", reason: str = "restored from an import") -> None:
        """Insert a fact an import already passed through the gate, as it was exported."""
        self._insert(fact)
        if fact.status is Status.COMMITTED:
            self.committed.append(fact)
        unsure = held_reason(fact) if fact.status is Status.CANDIDATE else None
        if unsure:
            code, reason = unsure
            self.hold(fact.id, *unsure)
        self._log(AuditEntry(self.now, "import", code, reason, fact.id, content_hash(fact.content), fact.content),
                  fact.identity)

    def keep_episodes(self, episodes: Sequence[Fact]) -> list[Fact]:
        """Store what was said (see :mod:`archivist.pipeline.episodes`); an episode
        already kept (the same message delivered again) is left as it is. Returns the
        new ones. Episodes are evidence, not decisions: they pass no gate beyond the
        screening that built them, and are not audited one by one."""
        if not episodes:
            return []
        by_scope: dict[Identity, set[str]] = {}
        for e in episodes:
            by_scope.setdefault(e.identity, set()).add(e.provenance.message_id or "")
        stored = [f for identity, messages in by_scope.items()
                  for f in self.store.list_facts(identity, statuses=(Status.EPISODE,), message_ids=sorted(messages))]
        known = {f.id for f in stored}
        # the same message under another thread name (learn without a thread, then a session summary)
        said = {(f.identity, f.provenance.message_id, f.content) for f in stored}
        fresh = []
        for e in episodes:  # words forgotten at the user's request are not kept again when re-delivered
            if e.id not in known and (e.identity, e.provenance.message_id, e.content) not in said and \
                    not self.store.is_tombstoned(e.identity, content_hash(e.content)):
                known.add(e.id)
                said.add((e.identity, e.provenance.message_id, e.content))
                self._insert(e)
                fresh.append(e)
        self.committed.extend(fresh)
        return fresh

    def profile(self, section: ProfileSection, *, identity: Identity | None = None,
                reason: str | None = None) -> None:
        """Write a profile section (of ``identity``: an import writes several users'), audited."""
        identity = identity or self.identity
        self.store.put_profile_section(identity, section)
        self._log(AuditEntry(self.now, "profile", "accepted",  # the text is the profile's: forgetting reaches it there
                             reason or f"profile section {section.name} updated ({len(section.sentences)} cited "
                                       "sentences)", content_hash=content_hash(section.summary)), identity)

    def note(self, entry: AuditEntry) -> None:
        self._log(entry)

    def _log(self, entry: AuditEntry, identity: Identity | None = None) -> None:
        self._audit.append((identity or self.identity, entry))

    def _build(self, c: Candidate, d: Decision, thread_id: str | None, extractor: tuple[str, str | None],
               when: datetime) -> Fact:
        old = d.existing if d.action is Action.SUPERSEDE else None
        status = as_status(d)
        return Fact(
            id=new_id(), identity=self.target(c.scope), key=c.key, content=c.content, category=c.category,
            kind=c.kind, scope=c.scope, durability=c.durability, authority=c.authority, confidence=c.confidence,
            status=status,
            provenance=Provenance(c.source_type, thread_id, c.evidence_message_id, c.evidence_text, extractor[0],
                                  extractor[1]),
            created_at=when, updated_at=when, last_confirmed_at=when, valid_until=c.valid_until,
            version=old.version + 1 if old else 1, supersedes=old.id if old else None, context=c.context,
            valid_from=when, recorded_at=self.now if status is Status.COMMITTED else None,
        )


class _Lookahead:
    """A batch's look-ups, read a chunk of candidates at a time (a statement for
    :data:`CHUNK` candidates instead of a few each): the live facts and candidates sharing
    a text, meaning or core signature with them, and which of the batch's texts were
    forgotten. Chunks are read as the decisions reach them, so the writer starts before
    the gate's helpers have read the whole batch. The writer tells it every fact it writes,
    so it answers a look-up it covers exactly as the store would at that moment (the same
    facts, newest first); one it does not cover goes to the store."""

    CHUNK = 64
    _KINDS = ("text", "meaning", "core")
    _NEW = 1 << 62  # rows written by this unit come after every row read

    def __init__(self, store: Store, identity: Identity, now: datetime, cands: Sequence[Candidate]) -> None:
        self.store, self.identity, self.now = store, identity, now
        self.unread = [c.content for c in cands]  # texts whose signatures are not read yet, in order
        self.covered: tuple[set[int], ...] = (set(), set(), set())
        self.rows: dict[str, tuple[Fact, int, Signatures]] = {}
        self.by: tuple[dict[int, set[str]], ...] = ({}, {}, {})  # signature → fact ids, per kind
        self.written = 0
        self.hashes = {c.content_hash for c in cands}
        self.tombstoned = store.tombstoned(identity, self.hashes)

    def _read_chunk(self) -> None:
        texts, self.unread = self.unread[:self.CHUNK], self.unread[self.CHUNK:]
        asked = tuple({getattr(Signatures.of(t), kind) for t in texts} - {None} - covered
                      for kind, covered in zip(self._KINDS, self.covered))
        if any(asked):
            for seq, sig, fact in self.store.signature_matches(self.identity, text=asked[0], meaning=asked[1],
                                                               core=asked[2], live_at=self.now):
                if fact.id not in self.rows:  # a row this unit wrote is known already, newer than any read
                    self._add(fact, seq, sig)
        for covered, keys in zip(self.covered, asked):
            covered |= keys

    def _add(self, fact: Fact, rank: int, sig: Signatures) -> None:
        self.rows[fact.id] = (fact, rank, sig)
        for index, key in zip(self.by, sig):
            if key is not None:
                index.setdefault(key, set()).add(fact.id)

    def find(self, text: Sequence, meaning: Sequence, core: Sequence, statuses: Sequence[Status]) -> list[Fact] | None:
        asked = tuple({k for k in keys if k is not None} for keys in (text, meaning, core))
        if not set(statuses) <= {Status.COMMITTED, Status.CANDIDATE}:
            return None
        while any(not keys <= covered for keys, covered in zip(asked, self.covered)):
            if not self.unread:
                return None
            self._read_chunk()
        ids = {i for keys, index in zip(asked, self.by) for key in keys for i in index.get(key, ())}
        hits = [self.rows[i][:2] for i in ids]
        hits = [(f, rank) for f, rank in hits
                if f.status in statuses and (f.valid_until is None or f.valid_until > self.now)]
        # the store's order: newest first, then the later row (a seq; this unit's rows after all)
        return [f for f, _ in sorted(hits, key=lambda hit: (hit[0].created_at, hit[1]), reverse=True)]

    def inserted(self, fact: Fact) -> None:
        i, mine = fact.identity, self.identity  # a row the scope sees: its own, outside every project or in its own
        if fact.status in (Status.COMMITTED, Status.CANDIDATE) and (i.tenant, i.user, i.agent) == \
                (mine.tenant, mine.user, mine.agent) and i.project in (None, mine.project):
            self.written += 1
            self._add(fact, self._NEW + self.written, Signatures.of(fact.content))

    def updated(self, fact: Fact) -> bool:
        """Take in an updated row; False when it is one this look-ahead never read but may now cover."""
        if fact.id in self.rows:
            _, rank, sig = self.rows[fact.id]
            self.rows[fact.id] = (fact, rank, sig)
            return True
        return fact.status not in (Status.COMMITTED, Status.CANDIDATE) or \
            not any(key in covered for key, covered in zip(Signatures.of(fact.content), self.covered))


def _entry(now: datetime, d: Decision, c: Candidate, fact: Fact | None) -> AuditEntry:
    # A refused grant or secret is never stored anywhere, not even in the audit trail.
    reason = d.reason + (f" [{d.detail}]" if d.detail and d.code == "secret" else "")
    if d.action is Action.SUPERSEDE and fact is not None and d.existing is not None:  # both versions, by id
        retired = ", ".join(f.id for f in (d.existing, *d.retires))
        reason += f" (key {fact.key!r}: {retired} → {fact.id})"
    return AuditEntry(at=now, action=d.action.value, code=d.code, reason=reason,
                      fact_id=fact.id if fact else (d.existing.id if d.existing else None),
                      content_hash=c.content_hash, content=c.content if d.code not in UNKEPT else None,
                      message_id=c.evidence_message_id)


__all__ = ["Writer"]
