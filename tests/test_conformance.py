"""The store conformance suite against every backend: SQLite and PostgreSQL."""

import pytest
from pg import postgres_or_skip

from archivist.testing.conformance import *  # noqa: F401,F403 - collects the specs
from archivist.testing.conformance import postgres_backend, sqlite_backend
from archivist.testing.postgres import drop_database


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        yield sqlite_backend(tmp_path / "memory.db")
        return
    dsn = postgres_or_skip()
    yield postgres_backend(dsn)
    drop_database(dsn)
