"""Schemathesis over the OpenAPI spec: whatever the inputs, never a server error."""

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install '.[dev]')")
from hypothesis import HealthCheck, settings  # noqa: E402

from archivist import FixedClock, Memory  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402

_MEM = Memory.open(":memory:", clock=FixedClock("2026-06-01T00:00:00Z"))
_KEY = create_key(_MEM.store, tenant="acme", users=["*"], role="admin")[1]
_MEM.scope("acme", "alice").remember("Alice drinks green tea every morning.")
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_MEM))


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case):
    response = case.call(headers={"Authorization": f"Bearer {_KEY}"})
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        content_type = response.headers["content-type"]
        content_type = content_type[0] if isinstance(content_type, list) else content_type
        assert content_type.startswith("application/problem+json"), response.text
