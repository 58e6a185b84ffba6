"""Schemathesis over the OpenAPI document, every check, positive and negative data:
no server error; every status, content type, header and body as documented (errors
are problem+json with the Problem schema); undeclared methods get 405 with the right
``Allow``; auth is enforced where declared; schema-violating requests are refused.

One check is replaced by a stricter reading of the same idea: schemathesis's
``positive_data_acceptance`` counts every 422 to schema-valid data as a failure, but a
well-formed write can still be refused for what it says (the write gate, a budget the
protected content does not fit, text that is empty once invisible characters are
dropped). Here a 422 to schema-valid data passes only with one of those titles; any
other ("invalid request", "invalid input") means the document promised more than the
server accepts, and fails. And a body over the size limit is a refusal too (413, before
any field is read). Examples are derandomized so that CI runs the same cases each time.
"""

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install '.[dev]')")
from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

from archivist import FixedClock, Memory  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402

_MEM = Memory.open(":memory:", clock=FixedClock("2026-06-01T00:00:00Z"))
_KEY = create_key(_MEM.store, tenant="acme", users=["*"], role="admin")[1]
_MEM.scope("acme", "alice").remember("Alice drinks green tea every morning.")
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_MEM))
# a body over the size limit is refused with 413 before its headers or fields are read
_REFUSALS = schema.config.checks.negative_data_rejection
_REFUSALS.expected_statuses = [*_REFUSALS.expected_statuses, "413"]

#: refusals of well-formed requests for what they mean, not for their shape
#: "invalid name": an X-Agent/X-Project value of the right characters that is not a name once
#: percent-decoded (not UTF-8, or not letters or digits) — the document cannot say which bytes spell one
SEMANTIC = {"rejected by the write gate", "over budget", "invalid budget", "invalid content", "invalid name"}


@schemathesis.check
def schema_valid_data_passes_validation(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    title = response.json().get("title")
    if title not in SEMANTIC:
        raise AssertionError(f"schema-valid data refused as {title!r}: {response.text[:300]}")
    return None


@schema.parametrize()
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_the_api_does_what_its_document_says(case):
    case.call_and_validate(headers={"Authorization": f"Bearer {_KEY}"},
                           excluded_checks=[positive_data_acceptance],
                           additional_checks=[schema_valid_data_passes_validation])


def test_the_document_offers_the_search_modes_this_server_has():
    from archivist.testing.embedders import HashEmbedder

    def modes(memory):
        body = create_app(memory).openapi()["components"]["schemas"]["SearchBody"]
        return body["properties"]["mode"]["anyOf"][0]["enum"]

    assert modes(_MEM) == ["keyword"]
    with Memory.open(":memory:", embedder=HashEmbedder()) as mem:
        assert modes(mem) == ["keyword", "vector", "hybrid"]


def test_every_error_is_documented_as_a_problem_and_the_key_as_a_security_scheme():
    document = create_app(_MEM).openapi()
    assert set(document["components"]["securitySchemes"]) == {"bearer", "apiKey"}
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            names = {p["name"].lower() for p in op.get("parameters", [])}
            assert not names & {"authorization", "x-api-key"}, (method, path)
            errors = {s: r for s, r in op["responses"].items() if s >= "400"}
            assert {"400", "413", "422", "503"} <= set(errors), (method, path)
            assert all(list(r["content"]) == ["application/problem+json"] for r in errors.values())
            assert "Retry-After" in errors["503"]["headers"], (method, path)  # busy, or the database restarting
            if path != "/healthz":
                assert {"401", "403"} <= set(errors) and op["security"] == [{"bearer": []}, {"apiKey": []}]
    export = document["paths"]["/v1/users/{user}/export"]["get"]["responses"]["200"]["content"]
    assert list(export) == ["application/x-ndjson"]


def test_a_method_a_path_lacks_gets_405_with_every_method_it_has():
    from fastapi.testclient import TestClient

    with TestClient(create_app(_MEM)) as client:
        for method, path, allowed in (("PATCH", "/v1/users/alice/facts", "GET, POST"),
                                      ("PUT", "/v1/users/alice/facts/x1", "DELETE, GET"),
                                      ("TRACE", "/v1/users/alice", "DELETE")):
            r = client.request(method, path, headers={"Authorization": f"Bearer {_KEY}"})
            assert r.status_code == 405 and r.headers["allow"] == allowed, (method, path, r.headers.get("allow"))
            assert r.headers["content-type"] == "application/problem+json"



class FreshServer:
    """An ASGI app that a stateful scenario restarts from the same seeded memory: the
    server's answers then depend on the scenario alone, as hypothesis needs to replay it."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        memory = Memory.open(":memory:", clock=FixedClock("2026-06-01T00:00:00Z"))
        self.key = create_key(memory.store, tenant="acme", users=["*"], role="admin")[1]
        memory.scope("acme", "alice").remember("Alice drinks green tea every morning.")
        self.app = create_app(memory)

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)


_FRESH = FreshServer()
_STATEFUL = schemathesis.openapi.from_asgi("/openapi.json", _FRESH)


class Workflows(_STATEFUL.as_state_machine()):
    """The stateful phase: schemathesis follows the document's links (remember → read,
    versions, confirm, forget; search → read; context → trace; ingest → job) with the
    ids the server returned, and checks every response of the chain — a fact just
    written is there, a forgotten one is gone."""

    def setup(self):
        _FRESH.restart()

    def get_call_kwargs(self, case):
        return {"headers": {"Authorization": f"Bearer {_FRESH.key}"}}

    def validate_response(self, response, case, additional_checks=None, **kwargs):
        case.validate_response(response, excluded_checks=[positive_data_acceptance],
                               additional_checks=[schema_valid_data_passes_validation], transport_kwargs=kwargs)



def test_every_link_in_the_document_leads_to_a_2xx_with_the_ids_it_carries():
    """The links are not decoration: each source operation is called for real, the link's
    expressions are resolved against that exchange, and the target must answer 2xx."""
    from fastapi.testclient import TestClient

    memory = Memory.open(":memory:", clock=FixedClock("2026-06-01T00:00:00Z"))
    key = create_key(memory.store, tenant="acme", users=["*"], role="admin")[1]
    client = TestClient(create_app(memory))
    auth = {"Authorization": f"Bearer {key}", "X-Agent": "planner"}
    document = client.get("/openapi.json").json()
    operations = {op["operationId"]: (path, method) for path, ops in document["paths"].items()
                  for method, op in ops.items()}
    sources = {"remember": {"json": {"content": "Alice drinks green tea every morning."}},
               "search": {"json": {"query": "green tea"}},
               "getContext": {"json": {"query": "What does Alice drink?"}},
               "ingestMessages": {"json": {"messages": [{"role": "user", "content": "I live in Lisbon."}]}}}

    def pointer(body, path):
        for part in [p for p in path.split("/") if p]:
            body = body[int(part)] if isinstance(body, list) else body[part]
        return body

    followed = []
    for source, request in sources.items():
        path, method = operations[source]
        response = client.request(method.upper(), path.replace("{user}", "alice"), headers=auth, **request)
        assert response.status_code < 300, response.text
        for status, documented in document["paths"][path][method]["responses"].items():
            for name, link in documented.get("links", {}).items():
                if status != str(response.status_code):
                    continue
                target_path, target_method = operations[link["operationId"]]
                headers = {"Authorization": auth["Authorization"]}
                for parameter, expression in link["parameters"].items():
                    value = ("alice" if expression == "$request.path.user"
                             else pointer(response.json(), expression.split("#", 1)[1]))
                    if parameter.startswith("header."):
                        headers[parameter[len("header."):]] = value
                    else:
                        target_path = target_path.replace("{" + parameter + "}", str(value))
                answer = client.request(target_method.upper(), target_path, headers=headers)
                assert answer.status_code < 300, (source, name, answer.text)
                followed.append(name)
        if source == "remember":  # the forget link ran last; writing the fact again answers 201 again
            client.post("/v1/users/alice/facts", json={"content": "Alice drinks green tea every morning."},
                        headers=auth)
    assert sorted(set(followed)) == ["ConfirmFact", "ForgetFact", "GetFact", "GetFirstHit", "GetJob", "GetTrace",
                                     "ListFactVersions"]
    memory.close()


TestWorkflows = Workflows.TestCase
TestWorkflows.settings = settings(max_examples=30, stateful_step_count=6, deadline=None, derandomize=True, phases=[Phase.generate],
                                  suppress_health_check=list(HealthCheck))
