"""PostgreSQL-specific guarantees: isolation enforced by the database itself (RLS),
migrations, clear errors, and the CLI and REST API running on a DSN."""

import json
import os
import subprocess
import sys
import threading
import time

import httpx
import psycopg
import pytest
from conftest import attempted
from psycopg.conninfo import make_conninfo

from archivist import FixedClock, Memory
from archivist.errors import SchemaTooNew, StoreError, StoreUnavailable
from archivist.storage.postgres import APP_ROLE, MIGRATIONS, PostgresStore

T0 = "2026-01-01T00:00:00+00:00"


def as_app(dsn, tenant=None, user=None):
    """A raw connection as the unprivileged role, with (or without) scope settings."""
    conn = psycopg.connect(dsn)
    conn.execute(f"SET ROLE {APP_ROLE}")
    if tenant is not None:
        conn.execute("SELECT set_config('archivist.tenant', %s, true), set_config('archivist.user', %s, true)",
                     (tenant, user))
    return conn


def test_row_level_security_hides_other_users_even_from_a_query_without_filters(pg_dsn):
    with Memory.open(pg_dsn, clock=FixedClock(T0)) as mem:
        assert mem.store.enforces_rls
        for user in ("alice", "bob"):
            s = mem.scope(user=user)
            s.remember(f"The user {user} keeps a secret.")
            s.set_preference("language", "en")
            s.put_evidence(f"ev-{user}", f"tool output of {user}")
    unfiltered = ["facts", "preferences", "evidence", "audit", "fact_vectors"]
    with as_app(pg_dsn, "default", "bob") as conn:
        for table in unfiltered:  # no WHERE clause at all: the policy still applies
            users = {r[0] for r in conn.execute(f"SELECT user_id FROM {table}")}
            assert users <= {"bob"}, table
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 1
        assert conn.execute("UPDATE preferences SET value = 'x'").rowcount == 1  # bob's row only
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # WITH CHECK: no writing as someone else
            conn.execute("INSERT INTO preferences VALUES ('default', 'alice', 'k', 'v', true, 's', 1, now(), NULL)")
    with as_app(pg_dsn) as conn:  # no settings: nothing is visible
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    with as_app(pg_dsn, "other-tenant", "bob") as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_settings_last_one_transaction_only(pg_dsn):
    with Memory.open(pg_dsn, clock=FixedClock(T0)) as mem:
        mem.scope(user="alice").remember("The user alice likes tea.")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"SET ROLE {APP_ROLE}")
        with conn.transaction():
            conn.execute("SELECT set_config('archivist.tenant', 'default', true), "
                         "set_config('archivist.user', 'alice', true)")
            assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0  # SET LOCAL ended with it


def test_migrations_are_recorded_once_and_a_newer_schema_is_refused(pg_dsn):
    store = PostgresStore(pg_dsn)
    assert store.schema_version == len(MIGRATIONS)
    store.close()
    PostgresStore(pg_dsn).close()  # reopening runs nothing again
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM archivist_migrations").fetchone()[0] == len(MIGRATIONS)
        conn.execute("INSERT INTO archivist_migrations VALUES ('9999_from_the_future', 'x')")
    with pytest.raises(SchemaTooNew, match="9999_from_the_future.*Upgrade"):
        PostgresStore(pg_dsn)


def test_an_unreachable_database_is_one_clear_error(tmp_path):
    dsn = f"postgresql://nobody@/nowhere?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreUnavailable, match="cannot connect to PostgreSQL"):  # a server away: try again later
        PostgresStore(dsn)
    cli = subprocess.run([sys.executable, "-m", "archivist.cli", "facts", "--user", "alice", "--db", dsn],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and "cannot connect to PostgreSQL" in cli.stderr and "Traceback" not in cli.stderr


def test_cli_on_a_dsn(pg_dsn):
    env = {**os.environ, "ARCHIVIST_DB": pg_dsn}

    def run(*args):
        done = subprocess.run([sys.executable, "-m", "archivist.cli", *args], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("remember", "用户偏好用中文解释技术问题。", "--user", "alice")
    hits = json.loads(run("search", "中文", "--user", "alice", "--json"))
    assert hits[0]["content"] == "用户偏好用中文解释技术问题。"
    assert json.loads(run("search", "中文", "--user", "bob", "--json")) == []
    assert "schema v" in run("init")


def test_rest_api_on_a_dsn(pg_dsn):
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    import uvicorn

    from archivist.server.app import create_app
    from archivist.server.keys import create_key

    mem = Memory.open(pg_dsn, clock=FixedClock(T0))
    alice = create_key(mem.store, tenant="acme", users=["alice"], role="writer")[1]
    other = create_key(mem.store, tenant="globex", users=["*"], role="admin")[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.01)
    port = srv.servers[0].sockets[0].getsockname()[1]
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            r = c.post("/v1/users/alice/facts", json={"content": "Alice's locker number is 4711."},
                       headers={"Authorization": f"Bearer {alice}"})
            assert r.status_code == 201, r.text
            fid = r.json()["id"]
            hits = c.post("/v1/users/alice/search", json={"query": "locker"},
                          headers={"Authorization": f"Bearer {alice}"}).json()
            assert hits[0]["fact"]["id"] == fid
            stranger = c.get(f"/v1/users/alice/facts/{fid}", headers={"Authorization": f"Bearer {other}"})
            assert stranger.status_code == 404 and "4711" not in stranger.text
    finally:
        srv.should_exit = True
        thread.join(5)
        mem.close()


def test_concurrent_consolidations_of_one_user_apply_each_change_once(pg_dsn):
    clock = FixedClock(T0)
    with Memory.open(pg_dsn, clock=clock) as mem:
        s = mem.scope(user="alice")
        s.remember("The user is on call this week.", valid_until="2026-01-05T00:00:00+00:00")
        s.remember("用户每天早上喝绿茶。")
        clock.set("2026-02-01T00:00:00+00:00")
    barrier = threading.Barrier(2)
    plans = []

    def run():
        with Memory.open(pg_dsn, clock=FixedClock("2026-02-01T00:00:00+00:00")) as mem:
            barrier.wait()
            plans.append(mem.scope(user="alice").consolidate(force=True))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    applied = sorted(len(p.actions) - len(p.skipped) for p in plans)
    assert applied == [0, 1], [(p.actions, p.skipped) for p in plans]  # one applied it, the other saw it done
    with Memory.open(pg_dsn, clock=FixedClock("2026-02-01T00:00:00+00:00")) as mem:
        s = mem.scope(user="alice")
        assert [f.content for f in s.facts()] == ["用户每天早上喝绿茶。"]
        assert len([e for e in s.audit() if (e.action, e.code) == ("consolidate", "expire")]) == 1


def test_a_read_replica_serves_searches_and_refuses_writes(pg_dsn):
    from psycopg.conninfo import conninfo_to_dict

    from archivist.testing.postgres import PostgresUnavailable, StreamingReplica

    with Memory.open(pg_dsn, clock=FixedClock(T0)) as mem:
        mem.scope(user="alice").remember("The user alice deploys with Kubernetes.")
    try:
        replica = StreamingReplica()
    except PostgresUnavailable as exc:
        if os.environ.get("ARCHIVIST_TEST_PG_DSN"):
            pytest.skip(f"no replica to test against: {exc}")
        raise
    try:
        dbname = conninfo_to_dict(pg_dsn)["dbname"]
        with Memory.open(replica.dsn(dbname), clock=FixedClock(T0)) as ro:
            assert ro.store.schema_version == len(MIGRATIONS)
            hits = ro.scope(user="alice").search("kubernetes")
            assert [h.fact.content for h in hits] == ["The user alice deploys with Kubernetes."]
            assert ro.scope(user="bob").search("kubernetes") == []
            with Memory.open(pg_dsn, clock=FixedClock(T0)) as primary:  # streamed after the base backup
                primary.scope(user="alice").remember("用户每天早上喝绿茶。")
            deadline = time.monotonic() + 30
            while not ro.scope(user="alice").search("绿茶") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert ro.scope(user="alice").search("绿茶")
            with pytest.raises(Exception, match="read-only"):
                ro.scope(user="alice").remember("The user alice prefers dark mode.")
    finally:
        replica.close()


def test_a_failed_purge_never_undoes_a_forget_and_archivist_purge_finishes_it(pg_dsn, monkeypatch):
    with Memory.open(pg_dsn, clock=FixedClock(T0)) as mem:
        s = mem.scope(user="alice")
        fact = s.remember("The user's locker code word is zebracorn.")

        def broken(*, full=False):
            raise StoreError("purge failed (canceling statement due to lock timeout)")

        monkeypatch.setattr(mem.store.eraser, "purge", broken)
        receipt = s.forget(fact.id)
        assert receipt.counts["facts"] == 1 and s.search("zebracorn") == [] and s.facts() == []
        tried = attempted(mem.store, receipt.erasure_jobs[0])  # the job says what is left to do
        assert tried.state == "pending" and tried.note == "keyword index not rebuilt (run archivist purge)"
    env = {**os.environ, "ARCHIVIST_DB": pg_dsn}
    done = subprocess.run([sys.executable, "-m", "archivist.cli", "purge"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "fact_terms indexes" in done.stdout, done.stderr
    full = subprocess.run([sys.executable, "-m", "archivist.cli", "purge", "--full"], capture_output=True, text=True,
                          env=env)
    assert full.returncode == 0 and "facts" in full.stdout and "audit" in full.stdout, full.stderr


def pg_schema(dsn: str) -> dict[str, list]:
    """Tables, columns, indexes, policies and row security of a database, comparable."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return {
            "columns": conn.execute("SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default "
                                    "FROM information_schema.columns WHERE table_schema = 'public' "
                                    "ORDER BY 1, 2").fetchall(),
            "indexes": conn.execute("SELECT tablename, indexname, indexdef FROM pg_indexes "
                                    "WHERE schemaname = 'public' ORDER BY 1, 2").fetchall(),
            "policies": conn.execute("SELECT tablename, policyname, qual, with_check FROM pg_policies "
                                     "WHERE schemaname = 'public' ORDER BY 1, 2").fetchall(),
            "row_security": conn.execute("SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class c "
                                         "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
                                         "AND c.relkind = 'r' ORDER BY 1").fetchall(),
        }


def test_a_database_of_integer_versions_migrates_to_what_a_fresh_one_is(pg_dsn):
    """A database the previous release made (its steps recorded as integer versions in
    archivist_schema_migrations) opens, records the steps by name, and ends with the
    very schema a fresh database has."""
    from psycopg.conninfo import conninfo_to_dict

    from archivist.testing.postgres import _with_db, server_dsn

    PostgresStore(pg_dsn).close()
    fresh = pg_schema(pg_dsn)
    for version in (1, 4, len(MIGRATIONS)):
        name = f"{conninfo_to_dict(pg_dsn)['dbname']}_v{version}"
        with psycopg.connect(server_dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        old = _with_db(server_dsn(), name)
        try:
            with psycopg.connect(old, autocommit=True) as conn:  # what the previous release's runner did
                conn.execute("CREATE TABLE archivist_schema_migrations "
                             "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                for number, step in enumerate(MIGRATIONS[:version], start=1):
                    with conn.transaction():
                        conn.execute(step.sql)
                        conn.execute("INSERT INTO archivist_schema_migrations (version) VALUES (%s)", (number,))
            store = PostgresStore(old)
            assert store.schema_version == len(MIGRATIONS)
            store.close()
            assert pg_schema(old) == fresh, f"from version {version}"
        finally:
            with psycopg.connect(server_dsn(), autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_keyword_search_reads_a_small_scope_whole_and_a_large_one_through_the_text_index(pg_dsn, monkeypatch):
    """Two plans, one answer: a scope up to SCAN_SCOPE_UP_TO facts is read through the
    scope index and matched row by row; a larger one goes through the GIN index."""
    from archivist.storage.postgres import keywords

    with Memory.open(pg_dsn, clock=FixedClock(T0)) as mem:
        topics = ["tea", "hiking", "Berlin", "the dentist", "a red bicycle", "猫", "咖啡", "piano lessons"]
        for user in ("alice", "bob"):
            mem.scope(user=user).remember_many(
                [{"content": f"{user} mentioned {topics[i % 8]} on day {i} with note {i * 7 % 13}"} for i in range(120)],
                dedupe=False)
        alice = mem.scope(user="alice")
        asked = ["tea on day 5", "Berlin note 3", "猫", "red bicycle piano", "咖啡 day 40", "nothing matches zzz"]

        def answers():
            return [[(h.fact.id, round(h.score, 9)) for h in alice.search(q, k=15, mode="keyword")] for q in asked]

        scanned = answers()
        monkeypatch.setattr(keywords, "SCAN_SCOPE_UP_TO", 0)
        indexed = answers()
        alices = {f.id for f in alice.facts()}
    assert scanned == indexed
    assert all(scanned[:5]) and scanned[5] == []
    assert {i for hits in scanned for i, _ in hits} <= alices  # bob's facts match too, and are never read


def test_writes_that_wait_for_a_pipeline_are_read_back_fail_whole_and_keep_each_users_order(pg_dsn):
    """A fact's row, keyword entry and review item wait in the transaction and go to the
    server together (``Engine.write_later``): a read in the transaction sees them, a
    failing one fails the whole transaction with the store's error, and ``seq`` (taken in
    blocks) still follows the order a user's rows were written in."""
    from archivist.errors import StoreConflict

    with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
        store, alice = mem.store, mem.scope(user="alice")
        fact = alice.remember("The user keeps bees.")
        with store.transaction():
            store.insert_fact(fact.evolve(id="pending-1", content="The user keeps two hives."))
            assert store.get_fact(alice.identity, "pending-1") is not None  # read in the same transaction
            assert [m.fact.id for m in store.keyword_search(alice.identity, ["hives"], limit=5, live_at=fact.created_at)] \
                == ["pending-1"]
        with pytest.raises(StoreConflict):
            with store.transaction():
                store.insert_fact(fact.evolve(id="pending-2", content="The user keeps three hives."))
                store.insert_fact(fact.evolve(content="The same id again."))  # fails when the pipeline is sent
        assert store.get_fact(alice.identity, "pending-2") is None  # nothing of that transaction
        with pytest.raises(StoreConflict):  # more writes wait than one pipeline takes: it fails inside write_later
            with store.transaction():
                store.insert_fact(fact.evolve(id="pending-3", content="The user keeps four hives."))
                store.insert_fact(fact.evolve(id="pending-3", content="The user keeps five hives."))
                for n in range(1_100):
                    store.add_review_item(alice.identity, f"item-{n}", "held", ("pending-3",), "why", fact.created_at)
        assert store.get_fact(alice.identity, "pending-3") is None and alice.review_queue() == []
        for turn, user in enumerate(("alice", "bob", "alice", "bob")):  # interleaved transactions of two users
            mem.scope(user=user).remember_many([{"content": f"{user} wrote note {turn}.{n}."} for n in range(3)])
        with psycopg.connect(pg_dsn) as conn:
            for user, turns in (("alice", (0, 2)), ("bob", (1, 3))):
                rows = conn.execute("SELECT content FROM facts WHERE user_id = %s AND content LIKE %s ORDER BY seq",
                                    (user, f"{user} wrote note%")).fetchall()
                assert [r[0] for r in rows] == [f"{user} wrote note {t}.{n}." for t in turns for n in range(3)]


def test_a_bulk_write_takes_the_planners_statistics_again(pg_dsn):
    """Autovacuum samples a grown table a minute or more later; until then plans made for
    a few rows walk the scope. After 1,000 new rows the store analyzes in the background
    (``reltuples`` is the count ANALYZE leaves in the catalog, committed before it returns)."""
    def counted(conn) -> float:
        return conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'facts'::regclass").fetchone()[0]

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
            mem.scope(user="u").remember_many([{"content": f"The user owns box {n} of the shelf."} for n in range(300)])
        assert counted(conn) < 300  # a small write leaves them to autovacuum
        with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
            mem.scope(user="u").remember_many([{"content": f"The user owns crate {n} of the attic."}
                                               for n in range(1_050)])
        assert counted(conn) >= 1_300  # closing waited for it


def test_the_statistics_lock_ends_with_its_analyze_whatever_the_client_does(pg_dsn):
    """The bulk-write ANALYZE takes a transaction lock the server drops as the ANALYZE
    ends, so a client that stops (or never closes) right after holds no forget's erasure
    up (red team: a stopped process's session lock held every erasure)."""
    from archivist.storage.postgres.statistics import (
        STATISTICS_LOCK,
        analyze_unless_purging,
    )

    with psycopg.connect(pg_dsn, autocommit=True) as idle, psycopg.connect(pg_dsn, autocommit=True) as watch:
        idle.execute(analyze_unless_purging("facts"))  # and then it stays open, doing nothing
        held = watch.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = %s",
                             (STATISTICS_LOCK & 0xFFFFFFFF,)).fetchone()[0]
        assert held == 0
        with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
            scope = mem.scope(user="u")
            scope.forget(scope.remember("The user's code word is zebrafrost.").id)
            assert mem.store.wait_for_erasure(30)


def test_the_bulk_write_analyze_stands_aside_for_a_purge_and_for_closing(pg_dsn):
    """Beside a purge (which holds the statistics lock for its REINDEX and ANALYZE) the
    bulk-write ANALYZE is skipped, not queued (red team: waiting deadlocked with REINDEX
    CONCURRENTLY and left invalid indexes holding forgotten words); and closing the store
    cancels one that waits for a table, rather than leaving its connection open."""
    from archivist.storage.postgres.statistics import STATISTICS_LOCK

    def counted(conn) -> float:
        return conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'facts'::regclass").fetchone()[0]

    def analyzing(conn) -> int:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'DO $$ BEGIN IF pg_try_advisory%' "
                            "AND pid <> pg_backend_pid()").fetchone()[0]

    rows = [{"content": f"The user owns crate {n} of the attic."} for n in range(1_050)]
    with psycopg.connect(pg_dsn, autocommit=True) as purge, psycopg.connect(pg_dsn, autocommit=True) as watch:
        purge.execute("SELECT pg_advisory_lock(%s)", (STATISTICS_LOCK,))
        with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
            mem.scope(user="u").remember_many(rows)
        assert counted(watch) < 1_000 and analyzing(watch) == 0  # skipped, and nothing left behind
        purge.execute("SELECT pg_advisory_unlock(%s)", (STATISTICS_LOCK,))
        with purge.transaction():  # a session that holds a table ANALYZE needs (a VACUUM FULL, say)
            purge.execute("LOCK TABLE term_stats IN SHARE UPDATE EXCLUSIVE MODE")
            with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
                mem.scope(user="v").remember_many(rows)
                deadline = time.monotonic() + 30
                while not analyzing(watch) and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert analyzing(watch) == 1  # waiting for the table
            assert analyzing(watch) == 0  # closing cancelled it and closed its connection


def test_an_index_an_interrupted_rebuild_left_is_dropped_by_the_next_purge(pg_dsn):
    """A ``REINDEX … CONCURRENTLY`` cut short (a restart, a cancel, a deadlock) leaves an
    invalid index that later rebuilds skip while writes still go into it, so it would keep
    words forgotten after (red team: found in a ``fact_terms_tsv_ccnew`` file). The purge
    drops such indexes first."""
    with Memory.open(pg_dsn, clock=FixedClock(T0), embedder=None) as mem:
        scope = mem.scope(user="alice")
        for n in range(3):
            scope.remember(f"The user keeps jar {n} on the shelf.")
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.UniqueViolation):  # fails half-way: an invalid index stays
                conn.execute("CREATE UNIQUE INDEX CONCURRENTLY fact_terms_tsv_ccnew ON fact_terms (tenant)")
            def invalid() -> list:
                return conn.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE NOT indisvalid "
                                    "AND indrelid = 'fact_terms'::regclass").fetchall()

            assert invalid() == [("fact_terms_tsv_ccnew",)]
            fact = scope.remember("The user's vault word is quartzolotl.")  # goes into the invalid index too
            receipt = scope.forget(fact.id)
            assert mem.store.wait_for_erasure(60)
            assert invalid() == []
            job = mem.store.erasure_job(receipt.erasure_jobs[0])
            assert job.state == "done"


def test_a_server_that_refuses_the_connection_is_not_unavailable(pg_dsn):
    """A database that does not exist is an answer, not an outage: a plain StoreError,
    which a client does not retry (StoreUnavailable is a 503 and is retried)."""
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as caught:
        PostgresStore(make_conninfo(pg_dsn, dbname="no_such_database"))
    assert not isinstance(caught.value, StoreUnavailable)


@pytest.mark.parametrize("dsn, secret", [
    ("postgresql://app:my%ZZpass@127.0.0.1:1/app", "my%ZZpass"),  # a malformed DSN, echoed by libpq
    ("postgresql://app:p@ssw0rd@127.0.0.1:1/app?connect_timeout=2", "ssw0rd"),  # an unencoded @ in the password
    ("postgresql://app:hunter22@127.0.0.1:1/app?sslmode=maybe", "hunter22"),
    ("host=127.0.0.1 port=1 user=app password='s3cr3t pw' dbname=app sslmode=maybe", "s3cr3t pw"),
])
def test_a_dsn_that_cannot_work_is_a_store_error_that_never_shows_the_password(dsn, secret):
    """A mistake in the DSN is no outage: StoreError (not the retryable StoreUnavailable),
    and the password is in neither the message nor the store's path."""
    with pytest.raises(StoreError) as caught:
        PostgresStore(dsn)
    assert not isinstance(caught.value, StoreUnavailable), caught.value
    assert secret not in str(caught.value)
    if not dsn.startswith("postgresql://"):  # the CLI opens PostgreSQL by its URL (a keyword DSN is a file name there)
        return
    cli = subprocess.run([sys.executable, "-m", "archivist.cli", "facts", "--user", "alice", "--db", dsn],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and secret not in cli.stdout + cli.stderr and "Traceback" not in cli.stderr


@pytest.mark.parametrize("message, passes", [
    ('connection to server at "127.0.0.1", port 5432 failed: Connection refused', True),
    ('connection to server on socket "/tmp/.s.PGSQL.5432" failed: No such file or directory', True),
    ("connection to server failed: FATAL:  the database system is starting up", True),
    ("connection to server failed: FATAL:  the database system is not yet accepting connections", True),
    ("connection to server failed: FATAL:  terminating connection due to administrator command", True),
    ("connection to server failed: FATAL:  sorry, too many clients already", True),
    ("connection to server failed: timeout expired", True),
    ('connection to server failed: FATAL:  password authentication failed for user "app"', False),
    ('connection to server failed: FATAL:  database "nope" does not exist', False),
    ("connection to server failed: fe_sendauth: no password supplied", False),
    ("failed to resolve host 'db.example.invalid': Name or service not known", False),
])
def test_what_passes_by_itself_is_unavailable_and_what_does_not_is_a_store_error(message, passes):
    from archivist.storage.postgres.dsn import connect_error

    error = connect_error("db", psycopg.OperationalError(message))
    assert isinstance(error, StoreUnavailable) is passes and isinstance(error, StoreError)
