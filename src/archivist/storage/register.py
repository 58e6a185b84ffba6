"""The register of where a user's text lives, and how forgetting reaches each copy.

Every column of the store that can hold words a user said (or words derived from them)
is listed here with what forgetting one fact and forgetting the whole user do to it.
Every other text column is listed in :data:`NOT_USER_TEXT` with what it holds instead
(ids, codes, hashes, times). ``tests/test_register.py`` reads the schema of both
backends and fails on a column that is in neither list, so a new place for user text
cannot be added without saying how it is forgotten; the same test plants a word in each
copy through the product's own paths and checks that no byte of it survives.

Copies outside the store (the service's ingest-job reports, kept in memory for an hour)
are listed in :data:`OUTSIDE_THE_STORE`.

:data:`TABLES` lists every table of both backends: who owns its rows (the shared store,
or a backend's keyword index, vector store or scope registry), which columns scope them,
and on which backends it exists. ``forget_user``, ``users()`` and PostgreSQL's row-level
security policies derive from it; ``tests/test_register.py`` fails on a table of either
backend's schema that is not listed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Copy:
    table: str
    columns: tuple[str, ...]
    holds: str  # what user text is there
    fact: str  # what forgetting one fact does to it
    user: str = "rows deleted"  # what forgetting the user does to it


REGISTER: tuple[Copy, ...] = (
    Copy("facts", ("content", "evidence_text", "context", "key", "speaker"),
         "facts and their versions (content, quoted words, context), episodes (turns as said)",
         "the fact's rows (every version with all_versions) are deleted, and so are the episodes that said it, "
         "the assistant's reply after them that names a word of it, and turns repeating most of it; the "
         "contexts of the thread's other turns and facts are recomputed without it"),
    Copy("facts_fts", ("*",), "the keyword index of facts and episodes",
         "entries deleted with their rows; the index is rebuilt when the store purges"),
    Copy("fact_terms", ("tsv",), "the keyword index of facts and episodes (PostgreSQL)", "deleted with the fact"),
    Copy("term_stats", ("lexeme",), "the terms of a scope's keyword statistics (PostgreSQL)",
         "the fact's terms are counted out; a term no fact holds any more is deleted"),
    Copy("keyword_docs", ("tokens",), "the tokens of each indexed fact", "deleted with the fact"),
    Copy("keyword_terms", ("term",), "the terms of a scope's keyword statistics",
         "the fact's terms are counted out; a term no fact holds any more is deleted"),
    Copy("fact_vectors", ("vector", "embedding"), "vectors made from facts' text", "deleted with the fact"),
    Copy("embedding_cache", ("vector",), "vectors by content hash", "the fact's entry is deleted"),
    Copy("profile_sections", ("summary", "sentences"), "the profile, sentence by sentence",
         "sentences citing the fact, or stating it, are removed before the rows are erased"),
    Copy("audit", ("content", "reason"), "what was written or refused, in the words it had",
         "the fact's words are redacted ([forgotten]) in every form (one-lined, escaped, JSON)"),
    Copy("context_traces", ("payload",), "what each model call was shown, with excerpts",
         "redacted in every form, including the 80-character excerpts"),
    Copy("session_summaries", ("payload", "stale_reason"), "session summaries",
         "a summary citing the fact is marked stale and its text replaced by [forgotten]; others are redacted "
         "where they quote it"),
    Copy("evidence", ("content", "source"), "tool results and documents kept whole",
         "the fact's words are redacted where quoted"),
    Copy("task_states", ("goal", "criteria", "done", "missing"), "task state the application saved",
         "kept (the application's own words); the user's rows go with the user"),
    Copy("preferences", ("key", "value", "source"), "standing preferences the application set",
         "kept (the application's own words); the user's rows go with the user"),
    Copy("review_items", ("reason",), "why two facts were queued for review (fact ids, never their words)",
         "an open item naming the fact is closed (it names ids only)"),
    Copy("consolidation_runs", ("plan",), "what consolidation decided (fact ids and reasons, never words)",
         "kept: it names ids only"),
    Copy("graph_items", ("namespace", "key", "value", "vector_paths", "vectors"),
         "LangGraph store items (the application's documents)", "kept: not facts of archivist's"),
    Copy("tombstones", ("content_hash",), "hashes of forgotten words (never the words)",
         "a hash is added, so extraction does not bring the words back"),
    Copy("ingest_jobs", ("result",), "what a background ingest of archivist serve saved or refused",
         "the fact's words are redacted in the scope's reports; a report written after the forget leaves them out"),
)

OUTSIDE_THE_STORE: tuple[Copy, ...] = (
    Copy("running ingest jobs (archivist serve)", ("report",), "the report of a job still running, in its process",
         "the fact's words are redacted in the user's running reports (JobRunner.discard_words)",
         "the user's jobs are cancelled in every process and waited for (JobRunner.discard_user)"),
)

NOT_USER_TEXT: dict[str, tuple[str, ...]] = {
    "*": ("id", "tenant", "user_id", "agent", "project", "created_at", "updated_at", "content_hash"),
    "schema_migrations": ("applied_at",),
    "archivist_migrations": ("name", "applied_at"),
    "facts": ("category", "kind", "scope", "durability", "authority", "status", "source_type", "thread_id",
              "message_id", "extractor", "extractor_version", "last_confirmed_at", "valid_until", "supersedes",
              "valid_from", "recorded_at", "retired_at", "role",
              "sig_text", "sig_meaning", "sig_core"),  # 64-bit integer hashes of folded forms (the gate's look-ups)
    "profile_sections": ("section", "source_message_ids"),
    "audit": ("at", "action", "code", "fact_id", "message_id"),
    "scopes": (),
    "preferences": ("expires_at",),
    "task_states": ("task_id",),
    "vector_meta": ("model",),
    "embedding_cache": ("model",),
    "session_summaries": ("thread_id", "first_message_id", "last_message_id", "cited_fact_ids", "evidence_id"),
    "review_items": ("kind", "fact_ids", "status", "resolved_at"),
    "consolidation_runs": ("started_at", "trigger"),
    "processed_messages": ("thread_id", "message_id"),
    "graph_items": ("expires_at",),
    "api_keys": ("key_hash", "users", "agents", "role", "label", "revoked_at"),
    "evidence": ("observed_at",),
    "keyword_docs": (),
    "keyword_terms": (),
    "keyword_scopes": (),
    "tombstones": (),
    "erasure_jobs": ("tables", "state", "claimed_at", "claimed_by", "finished_at", "note"),  # table names and the eraser's note
    "ingest_jobs": ("status", "cancelled", "owner", "ended_at"),  # the report is the registered copy
}


def registered(table: str, column: str) -> bool:
    """Whether ``table.column`` is in the register or known to hold no user text."""
    if column in NOT_USER_TEXT["*"] or column in NOT_USER_TEXT.get(table, ()):
        return True
    return any(c.table == table and (column in c.columns or "*" in c.columns) for c in REGISTER)


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    owner: str  # STORE: the shared store's rows; else the backend part that keeps it in step
    keyed_by: tuple[str, ...]  # the columns that scope its rows (() = store-wide)
    backends: tuple[str, ...] = ("sqlite", "postgres")
    row_security: bool = False  # PostgreSQL: a row-level security policy guards it

    def holds_users(self) -> bool:
        return "user_id" in self.keyed_by


STORE, KEYWORDS, VECTORS, SCOPES = "store", "keyword index", "vector store", "scope registry"
USER, SCOPE = ("tenant", "user_id"), ("tenant", "user_id", "agent")
SQLITE, POSTGRES = ("sqlite",), ("postgres",)

TABLES: tuple[Table, ...] = (
    # authoritative rows: the same table on every backend, read and written by the shared store
    Table("facts", STORE, SCOPE, row_security=True),
    Table("profile_sections", STORE, USER, row_security=True),
    Table("audit", STORE, SCOPE, row_security=True),
    Table("evidence", STORE, USER, row_security=True),
    Table("preferences", STORE, USER, row_security=True),
    Table("task_states", STORE, SCOPE, row_security=True),
    Table("context_traces", STORE, SCOPE, row_security=True),
    Table("tombstones", STORE, SCOPE, row_security=True),
    Table("session_summaries", STORE, SCOPE, row_security=True),
    Table("review_items", STORE, SCOPE, row_security=True),
    Table("consolidation_runs", STORE, SCOPE, row_security=True),
    Table("processed_messages", STORE, SCOPE, row_security=True),
    Table("graph_items", STORE, USER, row_security=True),  # user_id = namespace[0]
    Table("api_keys", STORE, ("tenant",)),  # looked up before any identity exists
    Table("embedding_cache", STORE, ()),  # keyed by tenant-keyed hashes of text, never by user
    Table("vector_meta", STORE, ()),
    Table("archivist_migrations", STORE, ()),
    Table("erasure_jobs", STORE, ("tenant",)),  # names tables, never a user
    Table("ingest_jobs", STORE, USER, row_security=True),  # a job's report holds the user's words
    # derived rows, kept in step by the backend's parts
    Table("facts_fts", KEYWORDS, (), SQLITE),  # rowid = scope id << 36 | seq
    Table("keyword_docs", KEYWORDS, (), SQLITE),
    Table("keyword_terms", KEYWORDS, ("scope_id",), SQLITE),
    Table("keyword_scopes", KEYWORDS, ("scope_id",), SQLITE),
    Table("fact_terms", KEYWORDS, SCOPE, POSTGRES),  # no policy: GIN is not used for @@ under RLS; joined to facts
    Table("term_stats", KEYWORDS, SCOPE, POSTGRES, row_security=True),
    Table("fact_vectors", VECTORS, ("scope_id",), SQLITE),
    Table("vector_versions", VECTORS, ("scope_id",), SQLITE),
    Table("fact_vectors", VECTORS, SCOPE, POSTGRES, row_security=True),
    Table("scopes", SCOPES, SCOPE, SQLITE),
    # the integer-versioned migration records of older releases (read once, by the shim)
    Table("schema_migrations", STORE, (), SQLITE),
    Table("archivist_schema_migrations", STORE, (), POSTGRES),
)


def tables(backend: str) -> tuple[Table, ...]:
    return tuple(t for t in TABLES if backend in t.backends)


def user_tables() -> tuple[str, ...]:
    """The shared tables holding a user's rows, keyed by (tenant, user_id): what
    ``forget_user`` deletes and ``users()`` reads, the same on every backend."""
    return tuple(t.name for t in TABLES if t.owner == STORE and t.holds_users())


def backend_user_tables(backend: str) -> tuple[str, ...]:
    """A backend's own tables keyed by user and not kept by its keyword index or vector
    store (which forget a user themselves): deleted after the shared ones."""
    return tuple(t.name for t in tables(backend) if t.owner == SCOPES and t.holds_users())


def row_security_tables() -> tuple[str, ...]:
    """Tables PostgreSQL guards with a row-level security policy."""
    return tuple(t.name for t in tables("postgres") if t.row_security)


__all__ = ["NOT_USER_TEXT", "OUTSIDE_THE_STORE", "REGISTER", "TABLES", "Copy", "Table", "backend_user_tables",
           "registered", "row_security_tables", "tables", "user_tables"]
