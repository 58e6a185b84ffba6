"""A PostgreSQL server that goes away and comes back (a restart, a dropped connection):
callers hear StoreUnavailable (over REST a 503 problem+json with Retry-After), never a
raw driver error or a 500; a transaction cut off midway leaves nothing; the store
carries on by itself once the server is back, and nothing that was acknowledged is
lost. The restarts use a server of the test's own: other tests share the usual one."""

import signal
import subprocess
import sys
import threading
import time

import httpx
import psycopg
import pytest
from listening import free_port, wait_until_listening
from listening import stop as stop_server
from pg import restartable_or_skip

from archivist import Memory
from archivist.errors import StoreLocked, StoreUnavailable
from archivist.server.openapi import PROBLEM


@pytest.fixture
def restartable():
    server = restartable_or_skip()
    yield server
    server.close()


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_restart_makes_calls_fail_typed_and_then_work_again(restartable):
    with Memory.open(restartable.dsn("postgres")) as mem:
        alice = mem.scope(user="alice")
        alice.remember("The user's parcel went to locker 1001.")
        restartable.stop()
        began = time.monotonic()
        with pytest.raises(StoreUnavailable, match="cannot be reached"):
            alice.remember("The user's parcel went to locker 1002.")
        with pytest.raises(StoreUnavailable):
            alice.facts()
        assert time.monotonic() - began < 15  # told soon, not held for the pool's 30 s per call
        restartable.start()
        alice.remember("The user's parcel went to locker 1003.")  # the same store, no reopening
        assert [f.content for f in alice.facts()] == ["The user's parcel went to locker 1003.",
                                                      "The user's parcel went to locker 1001."]


def cut(mem: Memory, dsn: str) -> None:
    """End the session of the calling thread's transaction, as a restart or a network
    cut would (the server aborts what it had not committed)."""
    pid = mem.store.db._tx().conn.info.backend_pid
    with psycopg.connect(dsn, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]


def test_a_transaction_cut_off_midway_leaves_nothing_and_the_next_one_works(pg_dsn):
    with Memory.open(pg_dsn) as mem:
        alice = mem.scope(user="alice")
        with pytest.raises(StoreUnavailable, match="nothing was written"), mem.store.db.transaction():
            alice.remember("The user's first half of a two-part write.")  # joins the transaction
            cut(mem, pg_dsn)
            alice.remember("The user's second half of a two-part write.")
        assert alice.facts() == []  # the first half was never committed
        with pytest.raises(StoreUnavailable, match="during COMMIT; the write may or may not"), mem.store.db.transaction():
            alice.remember("The user's write whose commit was cut off.")
            cut(mem, pg_dsn)
        assert alice.facts() == []  # here it was not: the session had ended before the COMMIT came
        alice.remember("The user's write after the cut.")
        assert [f.content for f in alice.facts()] == ["The user's write after the cut."]


def test_a_restart_during_a_load_run_gives_clean_503s_and_loses_nothing_acknowledged(restartable, tmp_path):
    dsn = restartable.dsn("postgres")
    cli = [sys.executable, "-m", "archivist.cli"]
    secret = subprocess.run([*cli, "keys", "create", "--tenant", "acme", "--user", "*", "--role", "writer",
                             "--db", dsn], capture_output=True, text=True, check=True).stdout.strip()
    port = free_port()
    with open(tmp_path / "serve.log", "w") as log:  # a file: a full pipe would stall the server's logging
        proc = subprocess.Popen([*cli, "serve", "--db", dsn, "--port", str(port), "--workers", "1"],
                                stdout=log, stderr=log)
    users = ["alice", "bob", "carol"]  # writers in parallel: several connections in use when the server goes
    results: list[tuple[str, str, httpx.Response | Exception, float]] = []
    stop = threading.Event()

    def load(user: str):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {secret}"},
                          timeout=30) as client:
            n = 0
            while not stop.is_set():
                content = f"The user's parcel number {n} went to locker {1000 + n}."
                began = time.monotonic()
                try:
                    answer: httpx.Response | Exception = client.post(f"/v1/users/{user}/facts",
                                                                     json={"content": content})
                except httpx.HTTPError as exc:
                    answer = exc
                results.append((user, content, answer, time.monotonic() - began))
                n += 1

    def ok_since(start: int) -> int:
        return sum(isinstance(r, httpx.Response) and r.is_success for _, _, r, _ in results[start:])

    threads = [threading.Thread(target=load, args=(user,), daemon=True) for user in users]
    try:
        wait_until_listening(port, proc)
        for thread in threads:
            thread.start()
        wait_for(lambda: ok_since(0) >= 30, 60, "writes before the restart")
        restartable.stop()
        time.sleep(5)  # longer than a caller waits while the server is away: some hear 503
        restartable.start()
        restarted = len(results)
        wait_for(lambda: ok_since(restarted) >= 30, 60, "writes after the restart")
        stop.set()
        for thread in threads:
            thread.join(60)
        assert proc.poll() is None  # the same archivist all along
    finally:
        stop.set()
        stop_server(proc)

    unavailable = 0
    for _, content, answer, took in results:
        assert isinstance(answer, httpx.Response), f"{content}: {answer!r}"
        assert took < 15, f"{content}: answered after {took:.1f} s"
        if answer.status_code == 503:
            unavailable += 1
            assert answer.headers["content-type"] == PROBLEM and answer.headers["retry-after"] == "1"
            assert answer.json()["status"] == 503 and answer.json()["title"] == "store unavailable", answer.text
        else:
            assert answer.status_code == 201, answer.text
    assert unavailable, "no request came while the server was away"
    assert all(r.status_code == 201 for _, _, r, _ in results[-10:])  # back to normal, archivist never restarted
    acknowledged = {(user, r.json()["id"], content) for user, content, r, _ in results if r.status_code == 201}
    with Memory.open(dsn) as mem:
        kept = {(user, f.id, f.content) for user in users for f in mem.scope("acme", user).facts()}
    assert acknowledged <= kept, f"acknowledged writes lost: {sorted(acknowledged - kept)}"


def test_a_client_reads_the_503_back_as_store_unavailable():
    """RemoteMemory raises what the library would, and it is a StoreLocked: code that
    waits and tries again on a busy store (the ingest queue) does so here too."""
    from archivist.client import error_from

    body = {"type": "about:blank", "title": "store unavailable", "status": 503, "instance": "",
            "detail": "the store: PostgreSQL cannot be reached now; nothing was written"}
    error = error_from(httpx.Response(503, json=body, request=httpx.Request("POST", "http://x/v1/users/a/facts")))
    assert type(error) is StoreUnavailable and isinstance(error, StoreLocked) and "cannot be reached" in str(error)


def test_a_connection_error_without_a_sqlstate_is_unavailable_and_a_server_error_is_not(pg_dsn):
    """A failure the server reports carries a SQLSTATE; one without is the connection
    failing (say while a short read's BEGIN is sent): that is the server being away,
    never a plain StoreError (a 500 over REST)."""
    from archivist.errors import StoreError

    with Memory.open(pg_dsn) as mem:
        db = mem.store.db
        for gone in (psycopg.OperationalError("server closed the connection unexpectedly"),
                     psycopg.OperationalError("consuming input failed: EOF detected"),
                     psycopg.InterfaceError("the connection is closed")):
            assert isinstance(db.translate(gone), StoreUnavailable), gone
        for broken_sql in (psycopg.errors.ProgramLimitExceeded("index row size exceeds maximum"),
                           psycopg.errors.UndefinedTable('relation "x" does not exist'),
                           psycopg.errors.SyntaxError("syntax error at or near")):
            assert type(db.translate(broken_sql)) is StoreError, broken_sql


def test_serve_never_prints_the_password_of_its_dsn(pg_dsn, tmp_path):
    """The banner names the store by its masked settings and hints ``--db DSN``."""
    dsn = pg_dsn.replace("postgresql://postgres@", "postgresql://postgres:Sup3rS3cretPW@", 1)
    assert "Sup3rS3cretPW" in dsn
    archivist = [sys.executable, "-m", "archivist.cli"]
    for keys in (False, True):
        if keys:
            made = subprocess.run([*archivist, "keys", "create", "--db", dsn, "--tenant", "t", "--user", "u"],
                                  capture_output=True, text=True, timeout=60)
            assert made.returncode == 0 and "Sup3rS3cretPW" not in made.stdout + made.stderr
        port = free_port()
        server = subprocess.Popen([*archivist, "serve", "--db", dsn, "--port", str(port), "--workers", "1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until_listening(port, server, timeout=60)
        finally:
            server.send_signal(signal.SIGINT)
            out, err = server.communicate(timeout=30)
        assert "Sup3rS3cretPW" not in out + err, err
        assert ("keys list --db DSN" if keys else "keys create --db DSN") in err
