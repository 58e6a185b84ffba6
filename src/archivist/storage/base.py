"""The one store contract every backend implements.

The store is the authority: facts (every version is a row), profile sections and the
audit trail. Keyword and vector indexes are derived from those rows, kept in step inside
the same transaction, and :meth:`Store.reindex` rebuilds them with identical results.
Every method that reads or writes user data takes the trusted :class:`Identity`; backends
filter by it in every query. Writes happen inside :meth:`transaction`; an exception
inside the block rolls everything back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..model import (
    AuditEntry,
    Category,
    Evidence,
    Fact,
    Identity,
    Preference,
    Profile,
    ProfileSection,
    Status,
    TaskState,
)
from .background import BackgroundWork
from .records import (
    ApiKeyRecord,
    ConsolidationRunRecord,
    GraphItemRow,
    ReviewItemRecord,
    Tombstone,
)

Progress = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True, slots=True)
class KeywordMatch:
    """A keyword hit. ``bm25`` is the backend's score over the terms it collected
    candidates with (negated: smaller is better, as SQLite reports it); ``bonus`` is
    what the terms it left out add (0 when none were). Both use the scope's own
    statistics only."""

    fact: Fact
    bm25: float
    bonus: float = 0.0
    terms_used: tuple[str, ...] = ()
    terms_dropped: tuple[str, ...] = ()

    @property
    def relevance(self) -> float:
        return -self.bm25 + self.bonus


class Store(BackgroundWork, ABC):
    # Reads wait on a server: the assembler runs its store sources concurrently. An
    # in-process store (SQLite) holds the GIL while it reads, so there they run in turn.
    concurrent_reads: bool = False

    # -- transactions ------------------------------------------------------
    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; nested use joins the outer one."""

    @property
    def in_transaction(self) -> bool:
        """A write transaction is open (another thread would not see it, or would wait)."""
        return False

    # -- facts ------------------------------------------------------------
    @abstractmethod
    def insert_fact(self, fact: Fact) -> None:
        """Insert a new fact row (a new card or a new version) and index it if committed."""

    @abstractmethod
    def update_fact(self, fact: Fact) -> None:
        """Rewrite the mutable fields of an existing row (status, confidence, times,
        version link) and bring the derived index in step. Content never changes:
        a new content is a new version row."""

    @abstractmethod
    def get_fact(self, identity: Identity, fact_id: str) -> Fact | None: ...

    @abstractmethod
    def list_facts(
        self, identity: Identity, *, statuses: Sequence[Status] = (Status.COMMITTED,), key: str | None = None,
        live_at: datetime | None = None, limit: int | None = None, category: Category | str | None = None,
        expired_at: datetime | None = None, message_ids: Sequence[str] | None = None, thread_id: str | None = None,
    ) -> list[Fact]:
        """Facts of the scope, newest first; ``live_at`` drops those expired by then,
        ``expired_at`` keeps only those whose validity ended by then, ``category`` keeps
        one category, ``message_ids`` those resting on one of these messages,
        ``thread_id`` those of one thread."""

    @abstractmethod
    def find_by_hash(self, identity: Identity, content_hash: str) -> list[Fact]:
        """Committed or candidate facts whose folded content hashes equal ``content_hash``."""

    def find_by_signatures(
        self, identity: Identity, *, text: Sequence[int | None] = (), meaning: Sequence[int | None] = (),
        core: Sequence[int | None] = (), live_at: datetime, statuses: Sequence[Status] = (Status.COMMITTED, Status.CANDIDATE),
    ) -> list[Fact]:
        """Unexpired facts of ``statuses`` sharing any of the given gate signatures
        (:class:`~archivist.index.signatures.Signatures`), newest first: the write gate's
        duplicates and contradictions are found by index, never by a search."""
        return [fact for _, _, fact in self.signature_matches(identity, text=text, meaning=meaning, core=core,
                                                              live_at=live_at, statuses=statuses)]

    @abstractmethod
    def signature_matches(self, identity: Identity, *, text: Sequence[int | None] = (),
                          meaning: Sequence[int | None] = (), core: Sequence[int | None] = (), live_at: datetime,
                          statuses: Sequence[Status] = (Status.COMMITTED, Status.CANDIDATE),
                          ) -> list[tuple[int, tuple, Fact]]:
        """:meth:`find_by_signatures` with each fact's ``seq`` and stored signatures (a batch's look-ahead)."""

    @abstractmethod
    def keyword_search(
        self, identity: Identity, terms: Sequence[str], *, limit: int, live_at: datetime,
        statuses: Sequence[Status] = (Status.COMMITTED,),
    ) -> list[KeywordMatch]:
        """Unexpired rows of ``statuses`` (committed facts, and episodes when asked)
        matching any of ``terms`` (already segmented, stopwords removed), best first.
        Backends quote the terms themselves."""

    def history(self, identity: Identity, fact_id: str) -> list[Fact]:
        """The version chain that ends (or passes) at ``fact_id``, oldest first."""
        chain: list[Fact] = []
        seen: set[str] = set()
        current = self.get_fact(identity, fact_id)
        while current is not None and current.id not in seen:  # walk back
            seen.add(current.id)
            chain.append(current)
            current = self.get_fact(identity, current.supersedes) if current.supersedes else None
        chain.reverse()
        while chain:  # walk forward
            nxt = self.successor(identity, chain[-1].id)
            if nxt is None or nxt.id in seen:
                break
            seen.add(nxt.id)
            chain.append(nxt)
        return chain

    @abstractmethod
    def successor(self, identity: Identity, fact_id: str) -> Fact | None:
        """The version that supersedes ``fact_id`` in the scope, if any."""

    @abstractmethod
    def facts_as_of(self, identity: Identity, at: datetime) -> list[Fact]:
        """What memory held at ``at``: facts recorded by then, not yet retired and not
        expired at that time, newest first."""

    @abstractmethod
    def key_history(self, identity: Identity, key: str) -> list[Fact]:
        """Every version ever stored under ``key`` (any status), oldest first."""

    # -- session summaries ----------------------------------------------------------
    @abstractmethod
    def put_summary(self, identity: Identity, summary) -> None:
        """Store a :class:`~archivist.lifecycle.sessions.SessionSummary`."""

    @abstractmethod
    def list_summaries(self, identity: Identity, *, since: datetime | None = None, limit: int = 100) -> list:
        """The scope's session summaries created after ``since``, newest first."""

    # -- export and import ------------------------------------------------------
    @abstractmethod
    def user_agents(self, tenant: str, user: str) -> list[str]: ...

    @abstractmethod
    def user_projects(self, tenant: str, user: str) -> list[str]:
        """The projects the user's facts and episodes were kept under, sorted."""

    @abstractmethod
    def list_evidence(self, identity: Identity) -> list[Evidence]: ...

    @abstractmethod
    def tombstones(self, identity: Identity) -> list[Tombstone]: ...

    @abstractmethod
    def add_tombstone(self, identity: Identity, content_hash: str, at: datetime) -> None: ...

    @abstractmethod
    def fact_ids_present(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` exist anywhere in the store (ids are global)."""

    @abstractmethod
    def restore_preference(self, identity: Identity, pref: Preference) -> None: ...

    # -- LangGraph store items ------------------------------------------------------
    @abstractmethod
    def graph_put(self, tenant: str, namespace: str, user: str, key: str, value_json: str, now: datetime,
                  ttl_minutes: float | None, vectors: Sequence[tuple[str, np.ndarray]] | None = None) -> None:
        """Insert or replace an item; ``ttl_minutes`` 0 expires it at once, None never.
        ``vectors`` are the (field path, embedding) pairs it is indexed by (None: not indexed)."""

    @abstractmethod
    def graph_delete(self, tenant: str, namespace: str, key: str) -> None: ...

    @abstractmethod
    def graph_items(self, tenant: str, namespace_prefix: str, now: datetime, *, key: str | None = None) -> list[GraphItemRow]:
        """(namespace, key, value_json, created_at, updated_at, expires_at, ttl, vector_paths, vectors)
        rows, unexpired, newest first; read the vectors with :func:`graph_item_vectors`."""

    @abstractmethod
    def graph_sweep(self, tenant: str, now: datetime) -> int:
        """Delete the tenant's expired items; how many were deleted."""

    @abstractmethod
    def graph_touch(self, tenant: str, keys: Sequence[tuple[str, str]], now: datetime) -> None: ...

    @abstractmethod
    def graph_namespaces(self, tenant: str, now: datetime) -> list[str]: ...

    @abstractmethod
    def users(self, tenant: str) -> list[str]:
        """Users of a tenant that have memory (for administrators)."""

    # -- API keys (hashes only) ------------------------------------------------------
    @abstractmethod
    def put_api_key(self, key_id: str, key_hash: str, tenant: str, users: list[str], agents: list[str], role: str,
                    label: str | None, at: datetime) -> None: ...

    @abstractmethod
    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    @abstractmethod
    def revoke_api_key(self, key_id: str, at: datetime) -> bool: ...
    @abstractmethod
    def api_keys(self) -> list[ApiKeyRecord]: ...  # active keys, oldest first, with created_at; never a hash

    # -- update queue watermark ---------------------------------------------------
    @abstractmethod
    def processed_messages(self, identity: Identity, thread_id: str) -> list[str]:
        """Ids of the thread's messages already extracted."""

    @abstractmethod
    def mark_processed(self, identity: Identity, thread_id: str, message_ids: Sequence[str]) -> None: ...

    # -- consolidation and review -------------------------------------------------
    @abstractmethod
    def last_consolidation(self, identity: Identity) -> datetime | None: ...

    @abstractmethod
    def record_consolidation(self, identity: Identity, run_id: str, at: datetime, trigger: str, plan_json: str) -> None: ...

    @abstractmethod
    def consolidation_runs(self, identity: Identity, *, limit: int = 20) -> list[ConsolidationRunRecord]:
        """The scope's consolidation runs, newest first: id, started_at, trigger, plan."""

    @abstractmethod
    def add_review_item(self, identity: Identity, item_id: str, kind: str, fact_ids: Sequence[str], reason: str, at: datetime) -> None: ...

    @abstractmethod
    def review_items(self, identity: Identity, *, status: str = "open", kind: str | None = None,
                     naming: str | None = None) -> list[ReviewItemRecord]: ...  # oldest first; only of kind, naming a fact

    @abstractmethod
    def resolve_review_item(self, identity: Identity, item_id: str, at: datetime) -> bool: ...

    # -- forgetting ---------------------------------------------------------------
    @abstractmethod
    def tombstoned(self, identity: Identity, hashes: Iterable[str]) -> set[str]:
        """Which of ``hashes`` are of content forgotten in the scope."""

    def is_tombstoned(self, identity: Identity, content_hash: str) -> bool:
        return content_hash in self.tombstoned(identity, [content_hash])

    @abstractmethod
    def lift_tombstone(self, identity: Identity, content_hash: str) -> None: ...

    @abstractmethod
    def forget_fact(self, identity: Identity, fact_ids: Sequence[str], *, at: datetime) -> dict[str, int]:
        """Delete the facts and every copy of them (indexes, embedding cache, audit text,
        traces, summaries), leave tombstones, and purge the files; counts per table."""

    @abstractmethod
    def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        """Delete every row of the user in every table and purge the files; counts per table."""

    # -- profile ------------------------------------------------------------
    @abstractmethod
    def get_profile(self, identity: Identity) -> Profile:
        """The user-global profile of (tenant, user); shared by the user's agents."""

    @abstractmethod
    def put_profile_section(self, identity: Identity, section: ProfileSection) -> None: ...

    # -- audit ------------------------------------------------------------
    @abstractmethod
    def record_audit(self, identity: Identity, entries: Sequence[AuditEntry]) -> None: ...

    @abstractmethod
    def audit_log(self, identity: Identity, *, limit: int = 100) -> list[AuditEntry]: ...

    # -- vectors (derived; one embedding model per store) ---------------------
    @abstractmethod
    def vector_model(self) -> tuple[str, int] | None:
        """(model name, dimension) of the stored vectors, or None when there are none."""

    @abstractmethod
    def put_vectors(self, model: str, dim: int, rows: Sequence[tuple[Fact, np.ndarray]]) -> int:
        """Store vectors of committed facts; raise :class:`EmbedderMismatch` for another model."""

    @abstractmethod
    def vector_search(
        self, identity: Identity, query: np.ndarray, *, limit: int, live_at: datetime,
        statuses: Sequence[Status] = (Status.COMMITTED,),
    ) -> list[tuple[Fact, float]]:
        """Unexpired rows of ``statuses`` (committed facts, and episodes when asked) of
        the scope by cosine to ``query``, best first."""

    @abstractmethod
    def vectors_of(self, identity: Identity, fact_ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def facts_without_vectors(self, *, limit: int = 1000) -> list[Fact]: ...

    @abstractmethod
    def drop_vectors(self) -> None: ...

    @abstractmethod
    def cached_embeddings(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def cache_embeddings(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None: ...

    # -- runtime context: evidence, preferences, task state, traces -----------
    @abstractmethod
    def put_evidence(self, evidence: Evidence) -> int:
        """Store a raw tool result or document whole under its owner's (tenant, user):
        a new id is version 1, other text (or source) under a known id the next version,
        the same text again changes nothing. Returns the version that holds the text."""

    @abstractmethod
    def get_evidence(self, identity: Identity, evidence_id: str, version: int | None = None) -> Evidence | None:
        """The newest version (or ``version``) if (tenant, user) owns the id, else ``None``."""

    @abstractmethod
    def get_preferences(self, identity: Identity) -> list[Preference]:
        """All of the user's preferences, expired and untrusted ones included (callers filter)."""

    @abstractmethod
    def put_preference(self, identity: Identity, pref: Preference, *, based_on: int) -> Preference:
        """Write if the stored version still equals ``based_on`` (0: none yet), else
        raise :class:`StaleWrite`. Returns the stored preference with its new version."""

    @abstractmethod
    def get_task(self, identity: Identity, task_id: str) -> TaskState | None: ...

    @abstractmethod
    def put_task(self, identity: Identity, task: TaskState, *, based_on: int) -> TaskState:
        """Versioned like :meth:`put_preference`."""

    @abstractmethod
    def put_trace(self, identity: Identity, trace_id: str, created_at: datetime, payload: dict, *,
                  cites: Sequence[str] = ()) -> None:
        """Keep a trace; StoreConflict (nothing kept) if a fact of ``cites`` was forgotten meanwhile."""

    @abstractmethod
    def get_trace(self, identity: Identity, trace_id: str) -> dict | None: ...

    @abstractmethod
    def list_traces(self, identity: Identity, *, limit: int = 20, thread_id: str | None = None) -> list[dict]:
        """The scope's newest context traces, only those of ``thread_id`` when given."""

    # -- derived indexes and housekeeping -----------------------------------
    @abstractmethod
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Rebuild every derived index from authoritative rows; returns rows indexed."""

    def purge(self, *, full: bool = False) -> list[str]:
        """Rewrite storage so that no page keeps bytes of forgotten rows; returns what was
        rewritten. A backend that erases at forget time (SQLite, with ``secure_delete``)
        has nothing to do unless ``full`` asks for a compacting rewrite."""
        return []

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cache_keys(tenant: str, text: str) -> list[str]:
    """The embedding cache keys a forget removes for ``text``: the tenant's own, and the
    unkeyed one stores written before the cache was keyed by tenant may still hold."""
    from ..model.folding import cache_key, content_hash

    return [cache_key(tenant, text), content_hash(text)]
