"""A client generated from the OpenAPI document by openapi-python-client (a generator
nobody here wrote) drives the server on loopback: remember → search → context → trace →
forget with typed models, and a 422, a 404 and a 401 come back as typed problems, never
as an exception."""

import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("openapi_python_client", reason="openapi-python-client is not installed (pip install '.[dev]')")
import uvicorn  # noqa: E402

from archivist import Memory  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The client package, generated from the document the server serves."""
    root = tmp_path_factory.mktemp("generated")
    spec = root / "openapi.json"
    import json

    spec.write_text(json.dumps(create_app(Memory.open(":memory:")).openapi()))
    (root / "config.yml").write_text("post_hooks: []\n")  # no formatter run: nothing outside the venv
    done = subprocess.run([sys.executable, "-m", "openapi_python_client", "generate", "--path", str(spec),
                           "--meta", "none", "--output-path", str(root / "archivist_api"),
                           "--config", str(root / "config.yml")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # the one response it cannot type: the NDJSON export (raw bytes are still returned)
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("WARNING parsing")]
    assert warnings == ["WARNING parsing GET /v1/users/{user}/export within export."], done.stdout
    sys.path.insert(0, str(root))
    try:
        yield __import__("archivist_api")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "archivist_api" or n.startswith("archivist_api.")]:
            del sys.modules[name]


@pytest.fixture
def served(db_path, clock):
    mem = Memory.open(db_path, clock=clock)
    key = create_key(mem.store, tenant="acme", users=["alice"], role="writer")[1]
    server = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", key
    server.should_exit = True
    thread.join(5)
    mem.close()


def test_the_generated_client_round_trips_with_typed_models(generated, served):
    from archivist_api import AuthenticatedClient, Client
    from archivist_api.api.context import get_context, get_trace
    from archivist_api.api.facts import get_fact, remember
    from archivist_api.api.forget import forget_fact
    from archivist_api.api.recall import search
    from archivist_api.models import (
        Category,
        ContextBody,
        ContextView,
        Fact,
        ForgetReceipt,
        Problem,
        RememberBody,
        SearchBody,
        SearchHit,
        Trace,
    )

    url, key = served
    client = AuthenticatedClient(base_url=url, token=key, raise_on_unexpected_status=True)
    written = remember.sync_detailed("alice", client=client,
                                     body=RememberBody(content="Alice drinks green tea every morning.",
                                                       category=Category.PREFERENCE))
    assert written.status_code == 201 and isinstance(written.parsed, Fact)
    fact = written.parsed
    assert fact.category == Category.PREFERENCE and fact.provenance.extractor == "api"
    assert written.headers["location"] == f"/v1/users/alice/facts/{fact.id}"
    again = remember.sync_detailed("alice", client=client, body=RememberBody(content="Alice drinks green tea every morning."))
    assert again.status_code == 200 and again.parsed.id == fact.id  # a duplicate, told apart by its status

    hits = search.sync("alice", client=client, body=SearchBody(query="green tea"))
    assert isinstance(hits, list) and isinstance(hits[0], SearchHit) and hits[0].fact.id == fact.id
    assert hits[0].explanation.additional_properties  # the parts of the score, typed as numbers

    view = get_context.sync("alice", client=client, body=ContextBody(query="What does Alice drink?", budget=800))
    assert isinstance(view, ContextView) and view.trace_stored and any("green tea" in m.content for m in view.messages)
    trace = get_trace.sync("alice", view.trace_id, client=client)
    assert isinstance(trace, Trace) and any(e.excerpt and "green tea" in e.excerpt for e in trace.entries)
    assert isinstance(get_fact.sync("alice", fact.id, client=client), Fact)

    receipt = forget_fact.sync("alice", fact.id, client=client)
    assert isinstance(receipt, ForgetReceipt) and receipt.total >= 1

    # errors are typed problems: documented, parsed, never an exception
    gone = get_fact.sync_detailed("alice", fact.id, client=client)
    assert gone.status_code == 404 and isinstance(gone.parsed, Problem) and gone.parsed.status == 404
    invalid = remember.sync_detailed("alice", client=client, body=RememberBody(content="x" * 5000))
    assert invalid.status_code == 422 and isinstance(invalid.parsed, Problem)
    assert invalid.parsed.errors and invalid.parsed.errors[0].field == "content"
    refused = remember.sync_detailed("alice", client=client, body=RememberBody(content="My password is Tr0ub4dor&3"))
    assert refused.status_code == 422 and refused.parsed.title == "rejected by the write gate"
    anonymous = get_fact.sync_detailed("alice", "x", client=Client(base_url=url, raise_on_unexpected_status=True))
    assert anonymous.status_code == 401 and isinstance(anonymous.parsed, Problem)
    forbidden = get_fact.sync_detailed("bob", "x", client=client)
    assert forbidden.status_code == 403 and isinstance(forbidden.parsed, Problem)
