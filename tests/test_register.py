"""The register of where user text lives (``archivist.storage.register``): every text
column of both backends is registered, and forgetting a learned fact reaches every copy
the product's own paths made of it — rows, index entries and (SQLite) file bytes."""

from __future__ import annotations

import json

from test_torture_secure_delete import PostgresFiles, SQLiteFiles

from archivist import FixedClock, Memory
from archivist.storage import is_dsn, open_store
from archivist.storage.register import REGISTER, registered
from archivist.testing.embedders import HashEmbedder

WORD = "Qvzorbatown"


def text_columns(where: str) -> list[tuple[str, str]]:
    """(table, column) of every column that can hold text, read from the live schema."""
    if is_dsn(where):
        import psycopg

        with psycopg.connect(where, autocommit=True) as conn:
            return [(t, c) for t, c in conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
                "AND data_type IN ('text', 'bytea', 'json', 'jsonb', 'character varying', 'tsvector', 'ARRAY', "
                "'USER-DEFINED')").fetchall()]
    import sqlite3

    conn = sqlite3.connect(where)
    try:
        out = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                                     "AND name NOT LIKE 'facts_fts_%' AND name NOT LIKE '%vec%chunks%'"):
            for row in conn.execute(f"PRAGMA table_info('{table}')"):
                if row[2].upper() in ("TEXT", "BLOB", ""):
                    out.append((table, row[1]))
        return out
    finally:
        conn.close()


def test_every_text_column_of_the_store_is_registered(store_target):
    Memory.open(store_target).close()
    missing = [f"{t}.{c}" for t, c in text_columns(store_target) if not registered(t, c)]
    assert missing == [], f"text columns not in archivist.storage.register: {missing}"


def test_an_unregistered_column_is_caught():
    assert registered("facts", "content") and registered("audit", "code")
    assert not registered("facts", "nickname") and not registered("new_table", "notes")


def test_every_register_entry_says_how_a_fact_and_a_user_are_forgotten():
    assert all(c.fact and c.user and c.holds for c in REGISTER)


def test_forgetting_a_learned_fact_reaches_every_copy(store_target):
    """The word goes into facts, episodes (the user's turn and the assistant's echo), the
    profile, the keyword and vector indexes, the embedding cache, the audit, a stored trace
    (an excerpt of a long fact), a session summary and quoted evidence — then it is forgotten."""
    clock = FixedClock("2026-03-01T00:00:00+00:00")
    mem = Memory(open_store(store_target), clock=clock, embedder=HashEmbedder())
    files = SQLiteFiles(store_target) if not is_dsn(store_target) else PostgresFiles(store_target)
    s = mem.scope(user="alice")
    turns = [{"id": "u1", "role": "user", "content": f"I live in {WORD}."},
             {"id": "a1", "role": "assistant", "content": f"Noted: you live in {WORD}, a lovely town."}]
    report = s.learn(turns, thread_id="t1")
    (fact,) = report.saved
    s.learn([{"id": "u2", "role": "user", "content": "I have a cat named Mochi."}], thread_id="t1")
    view = s.context("Where do I live these days?")
    s.summarize_session("t1", turns)
    s.put_evidence("doc-1", f"Profile export: {fact.content} (exported)")
    assert files.rows_with([WORD, WORD.lower()]) == {WORD, WORD.lower()}  # the scans see it (indexes keep it folded)
    assert WORD in json.dumps(s.trace(view.trace.id)) and WORD in " ".join(
        sec.summary for sec in s.profile().sections.values())

    receipt = s.forget(fact.id)
    assert WORD not in json.dumps(s.trace(view.trace.id)) and WORD not in s.render().text  # at once, through the API
    assert mem.store.wait_for_erasure(timeout=120) and receipt.erasure_jobs  # then the files, by the receipt's job
    assert files.rows_with([WORD, WORD.lower()]) == set()
    if not is_dsn(store_target):
        assert files.bytes_with([WORD, WORD.lower()]) == set()
    assert WORD not in json.dumps(s.trace(view.trace.id)) and WORD not in s.render().text
    assert WORD not in s.context("Where do I live these days?").system
    assert [f.content for f in s.facts()] == ["The user has a cat named Mochi."]  # the rest stays
    mem.close()


def test_forgetting_a_disputed_fact_closes_its_review(mem):
    s = mem.scope(user="bo")
    a = s.remember("用户不吃辣。")
    s.remember("用户吃辣。")
    assert len(s.review_queue()) == 1
    s.forget(a.id)
    assert s.review_queue() == [] and "[disputed" not in s.render().text


def live_tables(where: str) -> set[str]:
    """The tables of a store's live schema (SQLite's FTS5 shadow tables and sqlite-vec's
    are parts of the virtual tables the register lists)."""
    if is_dsn(where):
        import psycopg

        with psycopg.connect(where, autocommit=True) as conn:
            return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    import sqlite3

    conn = sqlite3.connect(where)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'facts_fts_%'")}
    finally:
        conn.close()


def test_every_table_of_either_backend_is_in_the_table_register(store_target):
    from archivist.storage.register import tables

    Memory.open(store_target).close()
    backend = "postgres" if is_dsn(store_target) else "sqlite"
    registered_here = {t.name for t in tables(backend)} - {"schema_migrations", "archivist_schema_migrations"}
    assert live_tables(store_target) == registered_here


def test_row_level_security_guards_exactly_the_tables_the_register_names(pg_dsn):
    import psycopg

    from archivist.storage.postgres import POLICY_TABLES
    from archivist.storage.register import row_security_tables

    Memory.open(pg_dsn).close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        guarded = {r[0] for r in conn.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n "
                                              "ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
                                              "AND c.relkind = 'r' AND c.relrowsecurity AND c.relforcerowsecurity")}
        with_policy = {r[0] for r in conn.execute("SELECT tablename FROM pg_policies WHERE schemaname = 'public'")}
    assert guarded == with_policy == set(row_security_tables()) == set(POLICY_TABLES)


def test_forgetting_a_user_empties_every_table_the_register_keys_by_user(store_target):
    """A user with a row in every kind of table is forgotten; no table the register
    keys by user keeps a row of theirs, and the other user keeps all of theirs."""
    from archivist.storage.register import tables

    clock = FixedClock("2026-03-01T00:00:00+00:00")
    mem = Memory(open_store(store_target), clock=clock, embedder=HashEmbedder())
    for user in ("gone", "kept"):
        s = mem.scope(user=user)
        s.learn([{"id": f"{user}-1", "role": "user", "content": "I live in Lisbon and I have a cat named Mochi."}],
                thread_id="t1")
        s.put_evidence("doc", "a tool result")
        s.set_preference("reply_language", "English")
        s.context("Where do I live?")
    backend = "postgres" if is_dsn(store_target) else "sqlite"
    keyed = sorted({t.name for t in tables(backend) if t.holds_users()})

    def rows_of(user: str) -> dict[str, int]:
        if is_dsn(store_target):
            import psycopg

            with psycopg.connect(store_target, autocommit=True) as conn:
                return {t: conn.execute(f"SELECT count(*) FROM {t} WHERE user_id = %s", (user,)).fetchone()[0]
                        for t in keyed}
        import sqlite3

        conn = sqlite3.connect(store_target)
        try:
            return {t: conn.execute(f"SELECT count(*) FROM {t} WHERE user_id = ?", (user,)).fetchone()[0]
                    for t in keyed}
        finally:
            conn.close()

    before = rows_of("kept")
    assert sum(rows_of("gone").values()) > 0
    assert set(mem.store.users("default")) == {"gone", "kept"}
    mem.store.forget_user("default", "gone")
    assert rows_of("gone") == dict.fromkeys(keyed, 0)
    assert rows_of("kept") == before
    assert mem.store.users("default") == ["kept"]
    mem.close()
