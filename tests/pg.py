"""A fresh PostgreSQL database per test (skips with the reason only when no server
can be had and ARCHIVIST_REQUIRE_PG is not set)."""

import os

import pytest

from archivist.testing.postgres import PostgresUnavailable, fresh_database


def postgres_or_skip() -> str:
    try:
        return fresh_database()
    except PostgresUnavailable as exc:
        if os.environ.get("ARCHIVIST_REQUIRE_PG") == "1":
            raise
        pytest.skip(f"PostgreSQL unavailable: {exc}")
