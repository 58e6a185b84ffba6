"""SQLite's schema, as named migration steps (applied in order, recorded by name).

A released step never changes: a new column or table is a new step at the end.
"""

from __future__ import annotations

from ..core.migrate import Migration, fill_signatures

MIGRATIONS: list[Migration] = [
    # facts, profile, audit, keyword index
    Migration("0001_facts_profile_audit_keyword_index", """
    CREATE TABLE facts (
        seq               INTEGER PRIMARY KEY,
        id                TEXT NOT NULL UNIQUE,
        tenant            TEXT NOT NULL,
        user_id           TEXT NOT NULL,
        agent             TEXT NOT NULL,
        project           TEXT,
        key               TEXT,
        content           TEXT NOT NULL,
        content_hash      TEXT NOT NULL,
        category          TEXT NOT NULL,
        kind              TEXT NOT NULL,
        scope             TEXT NOT NULL,
        durability        TEXT NOT NULL,
        authority         TEXT NOT NULL,
        confidence        REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        status            TEXT NOT NULL,
        source_type       TEXT NOT NULL,
        thread_id         TEXT,
        message_id        TEXT,
        evidence_text     TEXT,
        extractor         TEXT,
        extractor_version TEXT,
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL,
        last_confirmed_at TEXT NOT NULL,
        valid_until       TEXT,
        version           INTEGER NOT NULL DEFAULT 1,
        supersedes        TEXT REFERENCES facts(id)
    );
    CREATE INDEX facts_by_scope ON facts(tenant, user_id, agent, status, created_at);
    CREATE INDEX facts_by_hash ON facts(tenant, user_id, agent, content_hash);
    CREATE INDEX facts_by_supersedes ON facts(supersedes);
    -- one committed fact per key and scope: a stale concurrent write fails here
    CREATE UNIQUE INDEX facts_one_live_key ON facts(tenant, user_id, agent, key)
        WHERE key IS NOT NULL AND status = 'committed';

    CREATE TABLE profile_sections (
        tenant             TEXT NOT NULL,
        user_id            TEXT NOT NULL,
        section            TEXT NOT NULL,
        summary            TEXT NOT NULL,
        updated_at         TEXT NOT NULL,
        source_message_ids TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant, user_id, section)
    );

    CREATE TABLE audit (
        seq          INTEGER PRIMARY KEY,
        tenant       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        agent        TEXT NOT NULL,
        at           TEXT NOT NULL,
        action       TEXT NOT NULL,
        code         TEXT NOT NULL,
        reason       TEXT NOT NULL,
        fact_id      TEXT,
        content_hash TEXT,
        content      TEXT,
        message_id   TEXT
    );
    CREATE INDEX audit_by_scope ON audit(tenant, user_id, agent, seq);

    CREATE TABLE scopes (
        id      INTEGER PRIMARY KEY,
        tenant  TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent   TEXT NOT NULL,
        UNIQUE (tenant, user_id, agent)
    );

    -- rowid = scope id << 36 | facts.seq: each scope is one rowid range
    CREATE VIRTUAL TABLE facts_fts USING fts5(
        body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """),
    # document frequencies of indexed terms, for query planning (a view, no data)
    Migration("0002_keyword_vocabulary", """
    CREATE VIRTUAL TABLE facts_vocab USING fts5vocab(facts_fts, 'row');
    """),
    # runtime context: evidence (cold, whole), preferences, task state, traces
    Migration("0003_runtime_context", """
    CREATE TABLE evidence (
        id          TEXT PRIMARY KEY,
        tenant      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        agent       TEXT NOT NULL,
        source      TEXT NOT NULL,
        content     TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX evidence_by_owner ON evidence(tenant, user_id, created_at);

    CREATE TABLE preferences (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        trusted    INTEGER NOT NULL,
        source     TEXT NOT NULL,
        version    INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT,
        PRIMARY KEY (tenant, user_id, key)
    );

    CREATE TABLE task_states (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        goal       TEXT NOT NULL,
        criteria   TEXT NOT NULL DEFAULT '[]',
        done       TEXT NOT NULL DEFAULT '[]',
        missing    TEXT NOT NULL DEFAULT '[]',
        version    INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, task_id)
    );

    CREATE TABLE context_traces (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        payload    TEXT NOT NULL
    );
    CREATE INDEX traces_by_scope ON context_traces(tenant, user_id, agent, created_at);
    """),
    # vectors (derived, one model per store) and the embedding cache
    Migration("0004_vectors_and_embedding_cache", """
    CREATE TABLE vector_meta (
        id    INTEGER PRIMARY KEY CHECK (id = 1),
        model TEXT NOT NULL,
        dim   INTEGER NOT NULL
    );
    CREATE TABLE fact_vectors (
        seq      INTEGER PRIMARY KEY REFERENCES facts(seq) ON DELETE CASCADE,
        scope_id INTEGER NOT NULL,
        vector   BLOB NOT NULL
    );
    CREATE INDEX fact_vectors_by_scope ON fact_vectors(scope_id);
    CREATE TABLE vector_versions (
        scope_id INTEGER PRIMARY KEY,
        version  INTEGER NOT NULL
    );
    CREATE TABLE embedding_cache (
        model        TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (model, content_hash)
    );
    """),
    # the words around a fact (e.g. the message it answered): indexed, never shown
    Migration("0005_fact_context", """
    ALTER TABLE facts ADD COLUMN context TEXT;
    """),
    # lifecycle — bitemporal facts, tombstones, session summaries, review queue, consolidation runs
    Migration("0006_lifecycle", """
    ALTER TABLE facts ADD COLUMN valid_from TEXT;
    ALTER TABLE facts ADD COLUMN recorded_at TEXT;
    ALTER TABLE facts ADD COLUMN retired_at TEXT;
    UPDATE facts SET valid_from = created_at;
    UPDATE facts SET recorded_at = created_at WHERE status != 'candidate';
    UPDATE facts SET retired_at = updated_at WHERE status NOT IN ('candidate', 'committed');
    CREATE INDEX facts_by_key ON facts(tenant, user_id, agent, key, version);

    -- forgotten content: its hash blocks re-extraction until the user states it again
    CREATE TABLE tombstones (
        tenant       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        agent        TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, content_hash)
    );

    CREATE TABLE session_summaries (
        id               TEXT PRIMARY KEY,
        tenant           TEXT NOT NULL,
        user_id          TEXT NOT NULL,
        agent            TEXT NOT NULL,
        thread_id        TEXT NOT NULL,
        first_message_id TEXT,
        last_message_id  TEXT,
        message_count    INTEGER NOT NULL,
        payload          TEXT NOT NULL,
        cited_fact_ids   TEXT NOT NULL DEFAULT '[]',
        evidence_id      TEXT,
        stale_reason     TEXT,
        created_at       TEXT NOT NULL
    );
    CREATE INDEX summaries_by_scope ON session_summaries(tenant, user_id, agent, created_at);

    CREATE TABLE review_items (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        kind       TEXT NOT NULL,
        fact_ids   TEXT NOT NULL,
        reason     TEXT NOT NULL,
        status     TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL,
        resolved_at TEXT
    );
    CREATE INDEX review_by_scope ON review_items(tenant, user_id, agent, status);

    CREATE TABLE consolidation_runs (
        id         TEXT PRIMARY KEY,
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        started_at TEXT NOT NULL,
        trigger    TEXT NOT NULL,
        plan       TEXT NOT NULL
    );
    CREATE INDEX runs_by_scope ON consolidation_runs(tenant, user_id, agent, started_at);
    """),
    # the update queue's per-thread watermark: message ids already extracted
    Migration("0007_processed_messages", """
    CREATE TABLE processed_messages (
        tenant     TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        agent      TEXT NOT NULL,
        thread_id  TEXT NOT NULL,
        message_id TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, agent, thread_id, message_id)
    ) WITHOUT ROWID;
    """),
    # items of the LangGraph store adapter (namespace[0] is the user, for forgetting)
    Migration("0008_langgraph_items", """
    CREATE TABLE graph_items (
        tenant     TEXT NOT NULL,
        namespace  TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT,
        ttl_minutes REAL,
        PRIMARY KEY (tenant, namespace, key)
    );
    """),
    # service API keys (only a hash of the secret is stored)
    Migration("0009_api_keys", """
    CREATE TABLE api_keys (
        id         TEXT PRIMARY KEY,
        key_hash   TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        users      TEXT NOT NULL,
        agents     TEXT NOT NULL,
        role       TEXT NOT NULL,
        label      TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    """),
    # project memory — one live value per key in each project (and outside every project)
    Migration("0010_project_memory", """
    DROP INDEX facts_one_live_key;
    CREATE UNIQUE INDEX facts_one_live_key ON facts(tenant, user_id, agent, IFNULL(project, ''), key)
        WHERE key IS NOT NULL AND status = 'committed';
    """),
    # evidence ids belong to their (tenant, user) and keep versions (observed_at may be unknown);
    #     facts by category
    Migration("0011_evidence_versions", """
    CREATE TABLE evidence_versions (
        tenant      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        id          TEXT NOT NULL,
        version     INTEGER NOT NULL,
        agent       TEXT NOT NULL,
        source      TEXT NOT NULL,
        content     TEXT NOT NULL,
        observed_at TEXT,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (tenant, user_id, id, version)
    );
    INSERT INTO evidence_versions SELECT tenant, user_id, id, 1, agent, source, content, observed_at, created_at
        FROM evidence;
    DROP TABLE evidence;
    ALTER TABLE evidence_versions RENAME TO evidence;
    CREATE INDEX evidence_by_owner ON evidence(tenant, user_id, created_at);
    -- stated preferences are read on every model call
    CREATE INDEX facts_by_category ON facts(tenant, user_id, agent, category, status, created_at);
    """),
    # keyword statistics per scope and project. FTS5's bm25() reads document counts
    #     and lengths of the whole table, so one tenant's scores would reveal another's
    #     words; each indexed fact's tokens and each (scope, project)'s counts are kept
    #     here instead ('' = no project; the triggers keep them exact on every insert and
    #     delete). 36 = SEQ_BITS.
    Migration("0012_keyword_statistics_per_scope", """
    CREATE TABLE keyword_docs (
        fts_rowid INTEGER PRIMARY KEY,
        project   TEXT NOT NULL,
        tokens    TEXT NOT NULL
    );
    CREATE TABLE keyword_terms (
        scope_id INTEGER NOT NULL,
        project  TEXT NOT NULL,
        term     TEXT NOT NULL,
        df       INTEGER NOT NULL,
        PRIMARY KEY (scope_id, project, term)
    ) WITHOUT ROWID;
    CREATE TABLE keyword_scopes (
        scope_id INTEGER NOT NULL,
        project  TEXT NOT NULL,
        docs     INTEGER NOT NULL,
        tokens   INTEGER NOT NULL,
        PRIMARY KEY (scope_id, project)
    );
    CREATE TRIGGER keyword_doc_added AFTER INSERT ON keyword_docs BEGIN
        INSERT INTO keyword_terms (scope_id, project, term, df)
            SELECT NEW.fts_rowid >> 36, NEW.project, value, 1
            FROM (SELECT DISTINCT value FROM json_each(NEW.tokens)) WHERE true
            ON CONFLICT (scope_id, project, term) DO UPDATE SET df = df + 1;
        INSERT INTO keyword_scopes (scope_id, project, docs, tokens)
            VALUES (NEW.fts_rowid >> 36, NEW.project, 1, json_array_length(NEW.tokens))
            ON CONFLICT (scope_id, project) DO UPDATE SET docs = docs + 1, tokens = tokens + excluded.tokens;
    END;
    CREATE TRIGGER keyword_doc_removed AFTER DELETE ON keyword_docs BEGIN
        UPDATE keyword_terms SET df = df - 1 WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project
            AND term IN (SELECT value FROM json_each(OLD.tokens));
        DELETE FROM keyword_terms WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project AND df <= 0
            AND term IN (SELECT value FROM json_each(OLD.tokens));
        UPDATE keyword_scopes SET docs = docs - 1, tokens = tokens - json_array_length(OLD.tokens)
            WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project;
        DELETE FROM keyword_scopes WHERE scope_id = OLD.fts_rowid >> 36 AND project = OLD.project AND docs <= 0;
    END;
    CREATE VIRTUAL TABLE temp.facts_instances USING fts5vocab(main, facts_fts, instance);
    INSERT INTO keyword_docs (fts_rowid, project, tokens)
        SELECT v.doc, coalesce(f.project, ''), json_group_array(v.term) FROM temp.facts_instances v
        JOIN facts f ON f.seq = (v.doc & 68719476735) GROUP BY v.doc;
    DROP TABLE temp.facts_instances;
    DROP TABLE facts_vocab;
    """),
    # LangGraph store items keep the vectors of the fields they were indexed by
    #     (vector_paths NULL = written before indexing existed; '[]' = not indexed)
    Migration("0013_langgraph_item_vectors", """
    ALTER TABLE graph_items ADD COLUMN vector_paths TEXT;
    ALTER TABLE graph_items ADD COLUMN vectors BLOB;
    """),
    # episodes — what was said, kept as rows of status 'episode' beside the facts
    #     (indexed and forgotten like them): who said it, and a look-up by message
    Migration("0014_episodes", """
    ALTER TABLE facts ADD COLUMN role TEXT;
    ALTER TABLE facts ADD COLUMN speaker TEXT;
    CREATE INDEX facts_by_message ON facts(tenant, user_id, agent, message_id);
    """),
    # a profile section keeps its sentences and the facts each one states
    Migration("0015_profile_sentences", """
    ALTER TABLE profile_sections ADD COLUMN sentences TEXT NOT NULL DEFAULT '[]';
    """),
    # the write gate's comparisons are equalities on folded forms of the text
    #     (archivist.index.signatures): the facts sharing one are found by index
    Migration("0016_gate_signatures", """
    ALTER TABLE facts ADD COLUMN sig_text INTEGER;
    ALTER TABLE facts ADD COLUMN sig_meaning INTEGER;
    ALTER TABLE facts ADD COLUMN sig_core INTEGER;
    CREATE INDEX facts_by_sig_text ON facts(tenant, user_id, agent, sig_text) WHERE sig_text IS NOT NULL;
    CREATE INDEX facts_by_sig_meaning ON facts(tenant, user_id, agent, sig_meaning) WHERE sig_meaning IS NOT NULL;
    CREATE INDEX facts_by_sig_core ON facts(tenant, user_id, agent, sig_core) WHERE sig_core IS NOT NULL;
    """, fill=fill_signatures),
    # erasure after a forget runs off the request path, as durable jobs (storage.core.erasure)
    Migration("0017_erasure_jobs", """
    CREATE TABLE erasure_jobs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, created_at TEXT NOT NULL,
        tables TEXT NOT NULL, whole_user INTEGER NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        claimed_at TEXT, claimed_by TEXT, finished_at TEXT, note TEXT);
    CREATE INDEX erasure_jobs_open ON erasure_jobs(state) WHERE state IN ('pending', 'running');
    """),
    # ingest jobs as rows: every worker process of a server sees every job (storage.core.jobs)
    Migration("0018_ingest_jobs", """
    CREATE TABLE ingest_jobs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user_id TEXT NOT NULL, agent TEXT NOT NULL,
        status TEXT NOT NULL, cancelled INTEGER NOT NULL DEFAULT 0, owner TEXT NOT NULL, created_at TEXT NOT NULL,
        ended_at TEXT, result TEXT);
    CREATE INDEX ingest_jobs_by_user ON ingest_jobs(tenant, user_id);
    CREATE INDEX ingest_jobs_ended ON ingest_jobs(ended_at) WHERE ended_at IS NOT NULL;
    """),
]
