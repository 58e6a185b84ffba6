"""A fresh PostgreSQL database per test (skips with the reason only when no server
can be had and ARCHIVIST_REQUIRE_PG is not set)."""

import os

import pytest

from archivist.testing.postgres import PostgresUnavailable, RestartableServer, fresh_database


def _or_skip(make):
    try:
        return make()
    except PostgresUnavailable as exc:
        if os.environ.get("ARCHIVIST_REQUIRE_PG") == "1":
            raise
        pytest.skip(f"PostgreSQL unavailable: {exc}")


def postgres_or_skip() -> str:
    return _or_skip(fresh_database)


def restartable_or_skip() -> RestartableServer:
    """A server of the test's own, which it may stop and start (never the shared one)."""
    return _or_skip(RestartableServer)
