"""Secure deletion: after forgetting facts and then a whole user, the forgotten words
are in no row and no index entry, and (SQLite) in no byte of the database file or its
WAL; (PostgreSQL) in no planner statistic (``pg_stats``) nor index file, and after
``purge(full=True)`` in no relation file, ``pg_statistic`` included.
Other users' words are still found by the same scans, so the scans can see."""

from __future__ import annotations

import glob
import os
import random
import sqlite3
import string
import threading

import pytest
import torture
from conftest import file_bytes

from archivist import FixedClock, Memory
from archivist.errors import StoreError
from archivist.storage import is_dsn, open_store
from archivist.testing.embedders import HashEmbedder

USERS, AGENTS = ["alice", "bob", "carol"], ["default", "coder"]
PER_SCOPE, FORGET = torture.scale(60, 800), torture.scale(12, 120)


def marker(rng: random.Random) -> str:
    return "qv" + "".join(rng.choice(string.ascii_lowercase) for _ in range(12))


class SQLiteFiles:
    def __init__(self, path: str) -> None:
        self.path = path

    def rows_with(self, needles: list[str]) -> set[str]:
        conn = sqlite3.connect(self.path)
        found = set()
        try:
            for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                cols = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
                for col in cols:
                    try:
                        texts = [r[0] for r in conn.execute(f'SELECT CAST("{col}" AS TEXT) FROM "{table}"')]
                    except sqlite3.Error:
                        continue  # a virtual table's hidden column
                    found |= {n for n in needles for t in texts if t and n in t}
        finally:
            conn.close()
        return found

    def bytes_with(self, needles: list[str]) -> set[str]:
        data = file_bytes(self.path)
        return {n for n in needles if n.encode() in data}


class PostgresFiles:
    def __init__(self, dsn: str) -> None:
        import psycopg

        self.dsn = dsn
        with psycopg.connect(dsn, autocommit=True) as conn:
            self.datadir = conn.execute("SHOW data_directory").fetchone()[0]
            self.oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
        if not os.access(os.path.join(self.datadir, "base", str(self.oid)), os.R_OK):
            pytest.skip(f"the PostgreSQL data directory {self.datadir} is not readable here: byte scans need the "
                        "embedded server (unset ARCHIVIST_TEST_PG_DSN)")

    def rows_with(self, needles: list[str]) -> set[str]:
        """As the server's superuser (row-level security does not hide rows from it), the
        tables' rows and their planner statistics (sampled values, histogram bounds and
        tsvector lexemes in ``pg_stats``)."""
        import psycopg

        found = set()
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
            for table in tables:
                for (text,) in conn.execute(f"SELECT CAST(t.* AS text) FROM {table} t"):
                    found |= {n for n in needles if n in text}
            for (text,) in conn.execute("SELECT CAST(s.* AS text) FROM pg_stats s WHERE schemaname = 'public'"):
                found |= {n for n in needles if n in text}
        return found

    def analyze(self) -> None:
        """What autovacuum does whenever it gets to the database (on a loaded machine,
        often in the middle of this test): sample every table into ``pg_statistic``."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("ANALYZE")

    def bytes_with(self, needles: list[str], indexes_only: bool = False) -> set[str]:
        """Needles in the database's relation files (after a CHECKPOINT), every kind of
        relation or only indexes."""
        return set().union(*self.relations_with(needles, indexes_only).values())

    def relations_with(self, needles: list[str], indexes_only: bool = False) -> dict[str, set[str]]:
        """Which relation's files hold which needles (for the failure messages)."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            kinds = ("i",) if indexes_only else ("r", "i", "t", "m")
            nodes = {str(r[0]): r[1] for r in conn.execute(
                "SELECT pg_relation_filenode(oid), oid::regclass::text FROM pg_class WHERE relkind = ANY(%s) "
                "AND pg_relation_filenode(oid) IS NOT NULL", (list(kinds),))}
        found: dict[str, set[str]] = {}
        for path in glob.glob(os.path.join(self.datadir, "base", str(self.oid), "*")):
            relation = nodes.get(os.path.basename(path).split("_")[0].split(".")[0])
            if relation is not None:
                with open(path, "rb") as fh:
                    data = fh.read()
                if hits := {n for n in needles if n.encode() in data}:
                    found.setdefault(relation, set()).update(hits)
        return found

    def where(self, needles: list[str]) -> str:
        return ", ".join(f"{rel} ({len(hits)})" for rel, hits in sorted(self.relations_with(needles).items()))


@pytest.mark.torture
def test_forgotten_words_are_in_no_row_index_or_file(store_target):
    where = store_target
    backend = "postgres" if is_dsn(where) else "sqlite"
    report = torture.row(
        f"Secure deletion ({'SQLite' if backend == 'sqlite' else 'PostgreSQL'})",
        load=f"{len(USERS)} users × {len(AGENTS)} agents × {PER_SCOPE} facts with vectors, each holding a unique "
             "word; traces, evidence, preferences, tasks and profile sections holding them too",
        faults=f"forget {FORGET} random facts, then forget a whole user",
        inputs="facts quoted by context requests (traces), tool evidence quoting facts, versioned state",
        checks=("no row holds a forgotten word; no byte of the database file or WAL does" if backend == "sqlite" else
                "no row (read as superuser, past RLS) holds a forgotten word; no index file does; after "
                "purge(full=True) no relation file does")
               + "; the same scans still find every word that was kept")
    rng = random.Random(5)
    clock = FixedClock("2026-03-01T00:00:00+00:00")
    mem = Memory(open_store(where), clock=clock, embedder=HashEmbedder())
    files = SQLiteFiles(where) if backend == "sqlite" else PostgresFiles(where)
    words: dict[str, tuple[str, str]] = {}  # word -> (user, fact id)
    try:
        for user in USERS:
            for agent in AGENTS:
                s = mem.scope(user=user, agent=agent)
                batch = [marker(rng) for _ in range(PER_SCOPE)]
                saved = s.remember_many([{"content": f"The user's code word number {i} is {w}."}
                                         for i, w in enumerate(batch)]).saved
                assert len(saved) == PER_SCOPE
                for w, fact in zip(batch, saved, strict=True):
                    words[w] = (user, fact.id)
                for fact in saved[:5]:
                    s.context(f"Is this right? {fact.content}")
                s.put_evidence(f"ev-{user}-{agent}", "tool output: " + " ".join(f.content for f in saved[:3]))
                if agent == "default":
                    extra = marker(rng)
                    s.set_preference("style", f"plain text {extra}")
                    s.save_task("t1", f"ship the release {extra}")
                    s.update_profile("work_context", f"works on project {extra}")
                    words[extra] = (user, "")
        everything = list(words)
        assert files.rows_with(everything) == set(everything), "the row scan misses stored words"
        assert files.bytes_with(everything) == set(everything), "the byte scan misses stored words"
        if backend == "postgres":
            files.analyze()  # pg_statistic now samples the words, as autovacuum may have done by now

        victims = rng.sample([w for w, (_, fid) in words.items() if fid], FORGET)
        for w in victims:
            user, fact_id = words[w]
            agent = next(a for a in AGENTS if mem.store.get_fact(mem.scope(user=user, agent=a).identity, fact_id))
            mem.scope(user=user, agent=agent).forget(fact_id)
        kept = [w for w in everything if w not in victims]
        assert mem.store.wait_for_erasure(timeout=300), "the erasure jobs of the forgets did not finish"
        assert files.rows_with(everything) == set(kept), "a forgotten fact's word is still in a row"
        if backend == "sqlite":
            assert files.bytes_with(everything) == set(kept), "a forgotten word is still in the file or WAL"
        else:
            assert not files.bytes_with(victims, indexes_only=True), "a forgotten word is still in an index file"
            heap_left = len(files.bytes_with(victims))

        receipt = mem.forget_user("default", "alice")
        alice = [w for w, (user, _) in words.items() if user == "alice"]
        kept = [w for w in kept if w not in alice]
        assert mem.store.wait_for_erasure(timeout=300), "the erasure job of the user's forget did not finish"
        assert files.rows_with(everything) == set(kept), "a forgotten user's word is still in a row"
        if backend == "sqlite":
            assert files.bytes_with(everything) == set(kept), "a forgotten user's word is still in the file or WAL"
            report.measured.append(f"{len(everything):,} words stored; {FORGET} facts forgotten, then alice "
                                   f"({receipt.counts['facts']:,} facts, {sum(receipt.counts.values()):,} rows); "
                                   f"0 forgotten words in rows or file bytes; {len(kept):,} kept words all found")
        else:
            assert not files.bytes_with(alice + victims, indexes_only=True), "a forgotten word is in an index file"
            heap_before_full = len(files.bytes_with(alice + victims))
            rewritten = mem.store.purge(full=True)
            left = sorted(files.bytes_with(everything) - set(kept))
            assert not left, f"{len(left)} forgotten words survived purge(full=True), in {files.where(left)}"
            assert files.bytes_with(kept) == set(kept), "the byte scan misses kept words"
            report.measured.append(
                f"{len(everything):,} words stored; {FORGET} facts forgotten, then alice "
                f"({receipt.counts['facts']:,} facts, {sum(receipt.counts.values()):,} rows); 0 forgotten words in "
                f"rows or index files; in freed heap space (VACUUM does not zero it): {heap_left} after the fact "
                f"forgets, {heap_before_full} after the user forget, 0 after purge(full=True) ({len(rewritten)} "
                f"relations rewritten); {len(kept):,} kept words all found")
    finally:
        mem.close()


def test_a_full_purge_waits_for_transactions_older_than_the_forget(pg_dsn):
    """A transaction holding an xid in another database of the server, begun before the
    forget, holds back VACUUM FULL's horizon: the rewrite would copy the forgotten row
    into the new file. The full purge waits for it (and says so when it waits too long)."""
    import psycopg

    from archivist.storage.postgres import PostgresStore
    from archivist.testing.postgres import server_dsn

    files = PostgresFiles(pg_dsn)
    mem = Memory(PostgresStore(pg_dsn, vacuum_on_forget=False, purge_on_forget=False),
                 clock=FixedClock("2026-03-01T00:00:00+00:00"), embedder=HashEmbedder())
    older = psycopg.connect(server_dsn(), autocommit=True)  # the server's maintenance database
    try:
        s = mem.scope(user="alice")
        fact = s.remember("The user's locker code word is qvolderxactword.")
        assert files.bytes_with(["qvolderxactword"]) == {"qvolderxactword"}
        older.execute("BEGIN")
        older.execute("SELECT pg_current_xact_id()")
        s.forget(fact.id)
        with pytest.raises(StoreError, match="still running"):
            mem.store.purge(full=True, wait_seconds=1)
        ends = threading.Timer(1.0, older.commit)
        ends.start()
        mem.store.purge(full=True)
        ends.join()
        assert not files.bytes_with(["qvolderxactword"]), files.where(["qvolderxactword"])
    finally:
        older.close()
        mem.close()
