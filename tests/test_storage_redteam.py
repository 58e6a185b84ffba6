"""Cases a red team wrote against the shared storage core (issue: one storage core, thin
backends), kept as regression tests. Each ran against both backends and broke a claim
before it was fixed: forgetting reaches evidence any agent of the user kept and the
vectors cached from rewritten contexts; a failed clean-up never stops a forget; several
workers opening an older release's file at once all succeed; an unknown scheme is never a
file; both backends answer the same (order of one instant, NUL text, negative limits,
long identifiers); a store refused as too new is left as it was."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime

import pytest
from conftest import attempted, sqlite_at_version

from archivist import FixedClock, Memory
from archivist.errors import InvalidInput, SchemaTooNew, StoreError
from archivist.model import Identity, Status, TaskState
from archivist.model.folding import cache_key
from archivist.storage import is_dsn, open_store
from archivist.storage.core import MAINTENANCE
from archivist.storage.sqlite import MIGRATIONS
from archivist.testing.embedders import HashEmbedder

T = datetime(2026, 1, 1, tzinfo=UTC)


def open_memory(target, **options) -> Memory:
    return Memory(open_store(target), clock=FixedClock("2026-01-01T00:00:00+00:00"), **options)


def test_forgetting_a_fact_redacts_it_in_evidence_any_agent_of_the_user_kept(store_target):
    mem = open_memory(store_target)
    a, b = mem.scope("t", "alice", "a"), mem.scope("t", "alice", "b")
    fact = a.remember("I live in Qwertzland with my wife.")
    a.put_evidence("ev-a", f"transcript: {fact.content}")
    b.put_evidence("ev-b", f"transcript: {fact.content}")
    a.forget(fact.id)
    assert a.get_evidence("ev-a").content == a.get_evidence("ev-b").content == "transcript: [forgotten]"
    mem.close()


def test_no_cached_vector_outlives_the_context_it_was_made_from(store_target):
    """Forgetting a turn rewrites the next turn's context (which quoted it) and embeds it
    again: the vector cached from the old context goes too."""
    mem = open_memory(store_target, embedder=HashEmbedder())
    s = mem.scope("t", "victim", "a")
    s.learn([{"id": "u1", "role": "user", "content": "I adopted a parrot called Quixotl last spring."},
             {"id": "a1", "role": "assistant", "content": "Quixotl is a fun name for a parrot."},
             {"id": "u2", "role": "user", "content": "What food should Quixotl eat?"},
             {"id": "a2", "role": "assistant", "content": "Seeds and fruit suit most parrots."}], thread_id="th1")

    def cached() -> set[str]:
        return {h for (h,) in mem.store.db.read(MAINTENANCE, "SELECT content_hash FROM embedding_cache")}

    def live() -> set[str]:
        kept = mem.store.list_facts(s.identity, statuses=(Status.COMMITTED, Status.EPISODE, Status.CANDIDATE))
        return {cache_key("t", f.embed_text) for f in kept}

    asked = next(e for e in s.episodes(thread_id="th1") if "What food" in e.content)
    s.forget(asked.id)
    assert cached() - live() == set()
    mem.forget_user("t", "victim")
    assert cached() == set()
    mem.close()


def test_a_failed_clean_up_after_a_forget_never_stops_the_forget(pg_dsn):
    """PostgreSQL's VACUUM after a forget fails (a lock held elsewhere, a lock_timeout):
    the forget still reaches the episodes that said the words, and the receipt says so."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    mem = open_memory(pg_dsn)
    s = mem.scope("t", "alice", "a")
    s.learn([{"id": "u1", "role": "user", "content": "I live in Qwertzland with my wife."}], thread_id="th")
    fact = next(f for f in s.facts() if "Qwertzland" in f.content)
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {conninfo_to_dict(pg_dsn)['dbname']} SET lock_timeout = '300ms'")
    holder = psycopg.connect(pg_dsn)
    holder.execute("LOCK TABLE session_summaries IN SHARE UPDATE EXCLUSIVE MODE")
    try:
        receipt = s.forget(fact.id)
        assert s.facts(include_history=True) == [] and s.episodes() == []  # the forget stands at once
        tried = attempted(mem.store, receipt.erasure_jobs[0])
        assert tried.state in ("pending", "failed") and "not vacuumed" in tried.note  # the job says why
    finally:
        holder.rollback()
        holder.close()
    assert mem.store.wait_for_erasure(timeout=60)  # retried once the lock is gone
    assert {mem.store.erasure_job(j).state for j in receipt.erasure_jobs} == {"done"}
    mem.close()




def test_workers_opening_an_older_releases_file_at_once_all_succeed(tmp_path):
    for round_ in range(3):
        path = tmp_path / f"old{round_}.db"
        conn = sqlite_at_version(path, len(MIGRATIONS) - 1)
        conn.commit()
        conn.close()
        barrier, errors = threading.Barrier(8), []

        def open_it():
            barrier.wait()
            try:
                Memory.open(path).close()
            except Exception as exc:  # noqa: BLE001 - collected and reported
                errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        with Memory.open(path) as mem:
            assert mem.store.schema_version == len(MIGRATIONS)


@pytest.mark.parametrize("target", ["mysql://h/db", "mysql:/h/db", "mysql:foo.db", "file:f.db", "file:///tmp/f.db",
                                    "http:x.db", "postgresql:/nohost", "sqlite://", "sqlite:c.db", "", "   "])
def test_a_target_that_is_no_known_url_is_an_error_and_makes_no_file(target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError):
        open_store(target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["SQLITE://x.db", "Sqlite://x.db", "sqlite://x.db", " x.db ", "./odd:name.db"])
def test_sqlite_urls_in_any_case_and_plain_paths_open_the_file_they_name(target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    open_store(target).close()
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".db"] == [target.strip().split("//")[-1].lstrip("./")]


def test_both_backends_answer_the_same_for_one_instant_nul_text_negative_limits_and_long_ids(store_target):
    mem = open_memory(store_target)
    s = mem.scope("t", "alice", "a")
    i = Identity("t", "alice", "a")
    fact = s.remember("Alice keeps a pet tortoise named Fidelio.")
    for n in range(3):  # one instant: the order they were kept, newest first
        mem.store.put_trace(i, f"tr{n}", T, {"n": n, "text": fact.content if n == 0 else ""})
    assert [p["n"] for p in mem.store.list_traces(i)] == [2, 1, 0]
    s.forget(fact.id)  # redacts tr0, which must not move it
    assert [p["n"] for p in mem.store.list_traces(i)] == [2, 1, 0]
    with pytest.raises(InvalidInput, match="NUL"):
        mem.store.put_task(i, TaskState("t\x001", "goal", updated_at=T), based_on=0)
    with pytest.raises(InvalidInput, match="negative"):
        mem.store.list_traces(i, limit=-1)
    with pytest.raises(InvalidInput, match="negative"):
        mem.store.audit_log(i, limit=-1)
    with pytest.raises(InvalidInput, match="identifier"):
        mem.store.put_task(i, TaskState("x" * 9000, "goal", updated_at=T), based_on=0)
    with pytest.raises(InvalidInput, match="NUL"):
        mem.store.get_task(i, "t\x001")
    mem.close()


def test_a_store_refused_as_too_new_is_left_as_it_was(tmp_path):
    path = tmp_path / "new.db"
    conn = sqlite_at_version(path, len(MIGRATIONS))
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew):
        Memory.open(path)
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert "archivist_migrations" not in tables and "schema_migrations" in tables


def test_a_stale_integer_record_left_beside_the_names_is_dropped_or_refused(tmp_path):
    """An older release opened after the upgrade leaves an (empty) integer record: the
    next open drops it; one that says a newer version is refused."""
    path = tmp_path / "m.db"
    Memory.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.commit()
    conn.close()
    Memory.open(path).close()
    conn = sqlite3.connect(path)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew, match="99"):
        Memory.open(path)
    assert not is_dsn(str(path))


# -- a second red-team pass ---------------------------------------------------------------

def test_a_vector_sidecar_that_cannot_be_purged_never_stops_a_forget(tmp_path):
    from archivist.index.vectors import sidecar_path

    path = tmp_path / "m.db"
    mem = open_memory(path)
    s = mem.scope("t", "alice", "a")
    s.learn([{"id": "u1", "role": "user", "content": "I live in Qwertzland with my wife."}], thread_id="th")
    fact = next(f for f in s.facts() if "Qwertzland" in f.content)
    (tmp_path / sidecar_path(str(path)).rsplit("/", 1)[-1]).mkdir()  # not a database: cannot be opened
    receipt = s.forget(fact.id)
    assert s.facts(include_history=True) == [] and s.episodes() == []
    tried = attempted(mem.store, receipt.erasure_jobs[0])
    assert tried.state in ("pending", "failed") and "vector sidecar could not be purged" in tried.note
    mem.close()


def test_nul_inside_json_held_text_is_refused_on_both_backends(store_target):
    mem = open_memory(store_target)
    i = Identity("t", "alice", "a")
    with pytest.raises(InvalidInput, match="NUL"):
        mem.store.put_trace(i, "tr", T, {"thread_id": "th", "query": "a\x00b"})
    with pytest.raises(InvalidInput, match="NUL"):
        mem.store.add_review_item(i, "r1", "conflict", ["f\x001"], "why", T)
    mem.store.put_trace(i, "tr-ok", T, {"thread_id": "th", "query": "a literal \\u0000 in code"})
    (kept,) = mem.store.list_traces(i, thread_id="th")  # a literal backslash-u in text is no NUL
    assert kept["query"] == "a literal \\u0000 in code"
    mem.close()


def test_searches_limits_counts_and_ids_are_refused_alike(store_target):
    mem = open_memory(store_target, embedder=HashEmbedder())
    s = mem.scope("t", "alice", "a")
    s.remember("The user's editor is Helix.")
    i = s.identity
    for bad in (lambda: mem.store.keyword_search(i, ["helix"], limit=-1, live_at=T),
                lambda: mem.store.keyword_search(i, ["he\x00lix"], limit=5, live_at=T),
                lambda: mem.store.vector_search(i, HashEmbedder().embed_query("helix"), limit=-1, live_at=T),
                lambda: mem.store.get_evidence(i, "doc", version=2**63),
                lambda: mem.store.record_consolidation(i, "r" * 600, T, "explicit", "{}"),
                lambda: mem.store.add_tombstone(i, "h" * 600, T)):
        with pytest.raises(InvalidInput):
            bad()
    assert len(mem.store.list_facts(i, limit=2**63)) == 1  # a limit above any count is no limit
    assert mem.store.audit_log(i, limit=2**70)
    mem.close()


@pytest.mark.parametrize("name", ["sqlite:p.db", "SQLite:/rel.db", "file:x.db", "file:z.db?mode=memory"])
def test_a_path_object_is_always_the_file_it_names(name, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    with Memory(open_store(Path(name))) as mem:
        mem.scope(user="alice").remember("The user's editor is Helix.")
    assert Path(name).is_file()
    with Memory(open_store(Path(name))) as mem:  # the data is there: no URI, no in-memory store
        assert len(mem.scope(user="alice").facts()) == 1


def test_a_forget_inside_an_open_transaction_erases_after_it_commits(store_target):
    mem = open_memory(store_target)
    s = mem.scope("t", "alice", "a")
    fact = s.remember("The user's locker code word is zebracorn.")
    done: dict = {}

    def forget_in_transaction():
        with mem.store.transaction():
            done["counts"] = mem.store.forget_fact(s.identity, [fact.id], at=T)

    worker = threading.Thread(target=forget_in_transaction)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a forget inside a transaction waited on itself"
    assert done["counts"]["facts"] == 1 and len(done["counts"].erasure_jobs) == 1
    assert s.facts() == []
    assert mem.store.wait_for_erasure(timeout=60)  # the job committed with the forget, and ran after it
    assert mem.store.erasure_job(done["counts"].erasure_jobs[0]).state == "done"
    mem.close()
