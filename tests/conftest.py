from __future__ import annotations

import pytest

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
