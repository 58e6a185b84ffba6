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


def test_the_specs_call_every_public_method_of_the_store_contract():
    """The conformance suite covers the whole contract: each public method of
    :class:`Store` is called by name in some spec, run on both backends above."""
    import inspect
    import re
    from pathlib import Path

    import archivist.testing.conformance as suite
    from archivist.storage.base import Store

    methods = sorted(n for n, v in inspect.getmembers(Store) if not n.startswith("_") and callable(v))
    specs = "".join(p.read_text() for p in Path(suite.__file__).parent.glob("spec_*.py"))
    assert len(methods) >= 60
    assert [m for m in methods if not re.search(rf"\.{m}\(", specs)] == []
