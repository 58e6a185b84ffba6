"""PostgreSQL's schema, as named migration steps (applied in order, recorded by name).

A released step never changes: a new column, table or policy is a new step at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..core.migrate import Migration, MigrationTarget, fill_signatures
from .engine import marks

MIGRATION_LOCK = 0x61726368  # "arch": one migrator at a time across processes

TS_CONFIG = "archivist_text"

# the tables step 0001 gave a row-level security policy (history: the register's
# row_security tables must equal these plus any later step's; tests/test_register.py)
POLICY_TABLES_0001 = ("facts", "profile_sections", "audit", "evidence", "preferences", "task_states", "context_traces",
                      "tombstones", "session_summaries", "review_items", "consolidation_runs", "processed_messages",
                      "graph_items", "fact_vectors", "term_stats")
POLICY_TABLES = (*POLICY_TABLES_0001, "ingest_jobs")  # every table a step put under row security

MIGRATIONS: list[Migration] = [
    # everything the SQLite schema holds at its version 9, in PostgreSQL terms
    Migration("0001_schema_as_of_sqlite_9", f"""
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TEXT SEARCH DICTIONARY archivist_english_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION {TS_CONFIG} (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION {TS_CONFIG}
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH archivist_english_stem;

    CREATE TABLE facts (
        seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id                text NOT NULL UNIQUE,
        tenant            text NOT NULL,
        user_id           text NOT NULL,
        agent             text NOT NULL,
        project           text,
        key               text,
        content           text NOT NULL,
        content_hash      text NOT NULL,
        category          text NOT NULL,
        kind              text NOT NULL,
        scope             text NOT NULL,
        durability        text NOT NULL,
        authority         text NOT NULL,
        confidence        double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        status            text NOT NULL,
        source_type       text NOT NULL,
        thread_id         text,
        message_id        text,
        evidence_text     text,
        extractor         text,
        extractor_version text,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        last_confirmed_at timestamptz NOT NULL,
        valid_until       timestamptz,
        version           integer NOT NULL DEFAULT 1,
        supersedes        text REFERENCES facts(id),
        context           text,
        valid_from        timestamptz,
        recorded_at       timestamptz,
        retired_at        timestamptz
    );
    CREATE INDEX facts_by_scope ON facts (tenant, user_id, agent, status, created_at);
    CREATE INDEX facts_by_hash ON facts (tenant, user_id, agent, content_hash);
    CREATE INDEX facts_by_supersedes ON facts (supersedes);
    CREATE INDEX facts_by_key ON facts (tenant, user_id, agent, key, version);
    CREATE UNIQUE INDEX facts_one_live_key ON facts (tenant, user_id, agent, key)
        WHERE key IS NOT NULL AND status = 'committed';
    -- the derived keyword index: one row per committed fact. It has no RLS policy:
    -- PostgreSQL will not use a GIN index under RLS for @@, which is not leakproof.
    -- Its rows are lexemes and a row number; every query joins them to facts, where
    -- the policy applies.
    CREATE TABLE fact_terms (
        fact_seq bigint PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        tenant   text NOT NULL,
        user_id  text NOT NULL,
        agent    text NOT NULL,
        tsv      tsvector NOT NULL
    );
    CREATE INDEX fact_terms_by_scope ON fact_terms (tenant, user_id, agent);
    CREATE INDEX fact_terms_tsv ON fact_terms USING gin (tsv);
    -- document frequency of each lexeme per scope, kept in step with fact_terms (the
    -- empty lexeme counts the scope's indexed facts): idf and query planning without
    -- counting matches at query time
    CREATE TABLE term_stats (
        tenant  text NOT NULL,
        user_id text NOT NULL,
        agent   text NOT NULL,
        lexeme  text NOT NULL,
        df      integer NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, lexeme)
    );

    CREATE TABLE profile_sections (
        tenant text NOT NULL, user_id text NOT NULL, section text NOT NULL, summary text NOT NULL,
        updated_at timestamptz NOT NULL, source_message_ids text NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant, user_id, section)
    );
    CREATE TABLE audit (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, at timestamptz NOT NULL,
        action text NOT NULL, code text NOT NULL, reason text NOT NULL, fact_id text, content_hash text,
        content text, message_id text
    );
    CREATE INDEX audit_by_scope ON audit (tenant, user_id, agent, seq);
    CREATE TABLE evidence (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        source text NOT NULL, content text NOT NULL, observed_at timestamptz NOT NULL, created_at timestamptz NOT NULL
    );
    CREATE INDEX evidence_by_owner ON evidence (tenant, user_id, created_at);
    CREATE TABLE preferences (
        tenant text NOT NULL, user_id text NOT NULL, key text NOT NULL, value text NOT NULL,
        trusted boolean NOT NULL, source text NOT NULL, version integer NOT NULL,
        updated_at timestamptz NOT NULL, expires_at timestamptz,
        PRIMARY KEY (tenant, user_id, key)
    );
    CREATE TABLE task_states (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, task_id text NOT NULL,
        goal text NOT NULL, criteria text NOT NULL DEFAULT '[]', done text NOT NULL DEFAULT '[]',
        missing text NOT NULL DEFAULT '[]', version integer NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, task_id)
    );
    CREATE TABLE context_traces (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        created_at timestamptz NOT NULL, payload text NOT NULL
    );
    CREATE INDEX traces_by_scope ON context_traces (tenant, user_id, agent, created_at);
    CREATE TABLE vector_meta (
        id integer PRIMARY KEY CHECK (id = 1), model text NOT NULL, dim integer NOT NULL
    );
    CREATE TABLE fact_vectors (
        fact_seq  bigint PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        tenant    text NOT NULL,
        user_id   text NOT NULL,
        agent     text NOT NULL,
        embedding vector NOT NULL  -- typed vector(dim) and HNSW-indexed once the model is known
    );
    CREATE INDEX fact_vectors_by_scope ON fact_vectors (tenant, user_id, agent);
    CREATE TABLE embedding_cache (
        model text NOT NULL, content_hash text NOT NULL, vector bytea NOT NULL,
        PRIMARY KEY (model, content_hash)
    );
    CREATE TABLE tombstones (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, content_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, content_hash)
    );
    CREATE TABLE session_summaries (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        thread_id text NOT NULL, first_message_id text, last_message_id text, message_count integer NOT NULL,
        payload text NOT NULL, cited_fact_ids text NOT NULL DEFAULT '[]', evidence_id text, stale_reason text,
        created_at timestamptz NOT NULL
    );
    CREATE INDEX summaries_by_scope ON session_summaries (tenant, user_id, agent, created_at);
    CREATE TABLE review_items (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        kind text NOT NULL, fact_ids text NOT NULL, reason text NOT NULL, status text NOT NULL DEFAULT 'open',
        created_at timestamptz NOT NULL, resolved_at timestamptz
    );
    CREATE INDEX review_by_scope ON review_items (tenant, user_id, agent, status);
    CREATE TABLE consolidation_runs (
        id text PRIMARY KEY, tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL,
        started_at timestamptz NOT NULL, trigger text NOT NULL, plan text NOT NULL
    );
    CREATE INDEX runs_by_scope ON consolidation_runs (tenant, user_id, agent, started_at);
    CREATE TABLE processed_messages (
        tenant text NOT NULL, user_id text NOT NULL, agent text NOT NULL, thread_id text NOT NULL,
        message_id text NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, thread_id, message_id)
    );
    CREATE TABLE graph_items (
        tenant text NOT NULL, namespace text NOT NULL, user_id text NOT NULL, key text NOT NULL,
        value text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        expires_at timestamptz, ttl_minutes double precision,
        PRIMARY KEY (tenant, namespace, key)
    );
    CREATE TABLE api_keys (
        id text PRIMARY KEY, key_hash text NOT NULL UNIQUE, tenant text NOT NULL, users text NOT NULL,
        agents text NOT NULL, role text NOT NULL, label text, created_at timestamptz NOT NULL,
        revoked_at timestamptz
    );

    -- Row-Level Security: the second guard of tenant and user isolation
    CREATE FUNCTION archivist_visible(row_tenant text, row_user text) RETURNS boolean
        LANGUAGE sql STABLE AS $$
        SELECT coalesce(current_setting('archivist.maintenance', true), '') = 'on'
            OR (row_tenant = current_setting('archivist.tenant', true)
                AND (row_user = current_setting('archivist.user', true)
                     OR current_setting('archivist.user', true) = '*'))
    $$;
    """
    + "".join(
        f"""
    ALTER TABLE {t} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE {t} FORCE ROW LEVEL SECURITY;
    CREATE POLICY {t}_scoped ON {t} USING (archivist_visible(tenant, user_id))
        WITH CHECK (archivist_visible(tenant, user_id));
    """
        for t in POLICY_TABLES_0001
    )),
    # project memory — one live value per key in each project (and outside every project)
    Migration("0002_project_memory", """
    DROP INDEX facts_one_live_key;
    CREATE UNIQUE INDEX facts_one_live_key ON facts (tenant, user_id, agent, coalesce(project, ''), key)
        WHERE key IS NOT NULL AND status = 'committed';
    """),
    # evidence ids belong to their (tenant, user) and keep versions (observed_at may be unknown);
    #    facts by category
    Migration("0003_evidence_versions", """
    ALTER TABLE evidence DROP CONSTRAINT evidence_pkey;
    ALTER TABLE evidence ADD COLUMN version integer NOT NULL DEFAULT 1;
    ALTER TABLE evidence ALTER COLUMN observed_at DROP NOT NULL;
    ALTER TABLE evidence ADD PRIMARY KEY (tenant, user_id, id, version);
    -- stated preferences are read on every model call
    CREATE INDEX facts_by_category ON facts (tenant, user_id, agent, category, status, created_at);
    """),
    # keyword statistics per project too ('' = no project): a scope outside every
    #    project, or in one, must not learn from its scores what another project holds
    Migration("0004_keyword_statistics_per_project", """
    ALTER TABLE fact_terms ADD COLUMN project text NOT NULL DEFAULT '';
    UPDATE fact_terms t SET project = f.project FROM facts f WHERE f.seq = t.fact_seq AND f.project IS NOT NULL;
    ALTER TABLE term_stats ADD COLUMN project text NOT NULL DEFAULT '';
    ALTER TABLE term_stats DROP CONSTRAINT term_stats_pkey;
    DELETE FROM term_stats;
    INSERT INTO term_stats (tenant, user_id, agent, project, lexeme, df)
        SELECT tenant, user_id, agent, project, l, count(*) FROM fact_terms,
        unnest(tsvector_to_array(tsv) || '{""}'::text[]) AS l GROUP BY 1, 2, 3, 4, 5;
    ALTER TABLE term_stats ADD PRIMARY KEY (tenant, user_id, agent, project, lexeme);
    """),
    # LangGraph store items keep the vectors of the fields they were indexed by
    #    (vector_paths NULL = written before indexing existed; '[]' = not indexed)
    Migration("0005_langgraph_item_vectors", """
    ALTER TABLE graph_items ADD COLUMN vector_paths text;
    ALTER TABLE graph_items ADD COLUMN vectors bytea;
    """),
    # episodes — what was said, kept as rows of status 'episode' beside the facts
    #    (indexed and forgotten like them): who said it, and a look-up by message
    Migration("0006_episodes", """
    ALTER TABLE facts ADD COLUMN role text;
    ALTER TABLE facts ADD COLUMN speaker text;
    CREATE INDEX facts_by_message ON facts (tenant, user_id, agent, message_id);
    """),
    # a profile section keeps its sentences and the facts each one states
    Migration("0007_profile_sentences", """
    ALTER TABLE profile_sections ADD COLUMN sentences text NOT NULL DEFAULT '[]';
    """),
    # traces list newest first, and those of one instant in the order they were kept (SQLite's rowid)
    Migration("0008_trace_order", """
    ALTER TABLE context_traces ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
    CREATE INDEX traces_in_order ON context_traces (tenant, user_id, agent, created_at, seq);
    """),
    # the write gate's comparisons are equalities on folded forms of the text
    #     (archivist.index.signatures): the facts sharing one are found by index
    Migration("0009_gate_signatures", """
    ALTER TABLE facts ADD COLUMN sig_text bigint;
    ALTER TABLE facts ADD COLUMN sig_meaning bigint;
    ALTER TABLE facts ADD COLUMN sig_core bigint;
    CREATE INDEX facts_by_sig_text ON facts (tenant, user_id, agent, sig_text) WHERE sig_text IS NOT NULL;
    CREATE INDEX facts_by_sig_meaning ON facts (tenant, user_id, agent, sig_meaning) WHERE sig_meaning IS NOT NULL;
    CREATE INDEX facts_by_sig_core ON facts (tenant, user_id, agent, sig_core) WHERE sig_core IS NOT NULL;
    """, fill=fill_signatures),
    # erasure after a forget runs off the request path, as durable jobs (storage.core.erasure)
    Migration("0010_erasure_jobs", """
    CREATE TABLE erasure_jobs (
        id          text PRIMARY KEY,
        tenant      text NOT NULL,
        created_at  timestamptz NOT NULL,
        tables      text NOT NULL,
        whole_user  integer NOT NULL,
        state       text NOT NULL,
        attempts    integer NOT NULL DEFAULT 0,
        claimed_at  timestamptz,
        claimed_by  text,
        finished_at timestamptz,
        note        text
    );
    CREATE INDEX erasure_jobs_open ON erasure_jobs (state) WHERE state IN ('pending', 'running');
    """),
    # ingest jobs as rows: every worker process of a server sees every job (storage.core.jobs)
    Migration("0011_ingest_jobs", """
    CREATE TABLE ingest_jobs (
        id         text PRIMARY KEY,
        tenant     text NOT NULL,
        user_id    text NOT NULL,
        agent      text NOT NULL,
        status     text NOT NULL,
        cancelled  integer NOT NULL DEFAULT 0,
        owner      text NOT NULL,
        created_at timestamptz NOT NULL,
        ended_at   timestamptz,
        result     text
    );
    CREATE INDEX ingest_jobs_by_user ON ingest_jobs (tenant, user_id);
    CREATE INDEX ingest_jobs_ended ON ingest_jobs (ended_at) WHERE ended_at IS NOT NULL;
    ALTER TABLE ingest_jobs ENABLE ROW LEVEL SECURITY;
    ALTER TABLE ingest_jobs FORCE ROW LEVEL SECURITY;
    CREATE POLICY ingest_jobs_scoped ON ingest_jobs USING (archivist_visible(tenant, user_id))
        WITH CHECK (archivist_visible(tenant, user_id));
    """),
]


class PostgresMigrations(MigrationTarget):
    """The runner's view of the database: a session advisory lock holds off other
    migrators across processes; each step is one transaction."""

    legacy_table = "archivist_schema_migrations"

    def __init__(self, conn) -> None:
        self.conn = conn

    @contextmanager
    def locked(self) -> Iterator[None]:
        self.conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            yield
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))

    @contextmanager
    def atomic(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def fetch(self, sql, params=()):
        return self.conn.execute(marks(sql), params).fetchall()

    def execute(self, sql, params=()):
        self.conn.execute(marks(sql), params)

    def run_script(self, script):
        self.conn.execute(script)

    def has_table(self, name):
        return bool(self.conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0])
