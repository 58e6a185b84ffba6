"""One authorisation rule for every route (issue 19): a table says what each route needs —
the role, and whether it acts on the whole user (then a key for every agent) — and every
route × key shape is tried against it. A new route that is not in the table fails here."""

from __future__ import annotations

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from archivist import Memory
from archivist.server.app import create_app
from archivist.server.keys import create_key

# (method, path) -> (role needed, acts on the whole user); None: no key needed
RULES = {
    ("GET", "/v1/users/{user}/facts"): ("reader", False),
    ("POST", "/v1/users/{user}/facts"): ("writer", False),
    ("GET", "/v1/users/{user}/facts/{fact_id}"): ("reader", False),
    ("GET", "/v1/users/{user}/facts/{fact_id}/versions"): ("reader", False),
    ("POST", "/v1/users/{user}/facts/{fact_id}/confirm"): ("writer", False),
    ("DELETE", "/v1/users/{user}/facts/{fact_id}"): ("writer", False),
    ("DELETE", "/v1/users/{user}"): ("admin", True),
    ("POST", "/v1/users/{user}/search"): ("reader", False),
    ("POST", "/v1/users/{user}/context"): ("reader", False),
    ("GET", "/v1/users/{user}/traces/{trace_id}"): ("reader", False),
    ("GET", "/v1/users/{user}/preferences"): ("reader", False),
    ("PUT", "/v1/users/{user}/preferences/{key}"): ("writer", True),
    ("POST", "/v1/users/{user}/messages"): ("writer", False),
    ("GET", "/v1/jobs/{job_id}"): ("reader", False),
    ("GET", "/v1/erasure-jobs/{job_id}"): ("writer", False),
    ("GET", "/v1/users/{user}/export"): ("admin", True),
    ("GET", "/v1/users"): ("reader", False),
    ("GET", "/v1/me"): ("reader", False),
    ("GET", "/v1/users/{user}/traces"): ("reader", False),
    ("GET", "/v1/users/{user}/traces/{trace_id}/why"): ("reader", False),
    ("GET", "/v1/users/{user}/consolidation-runs"): ("reader", False),
    ("GET", "/v1/users/{user}/review"): ("reader", False),
    ("GET", "/v1/users/{user}/refusals"): ("reader", False),
    ("POST", "/v1/users/{user}/review/{item_id}/resolve"): ("writer", False),
    ("PUT", "/v1/users/{user}/tasks/{task_id}"): ("writer", False),
    ("GET", "/v1/users/{user}/tasks/{task_id}"): ("reader", False),
    ("GET", "/inspector"): (None, False),
    ("GET", "/healthz"): (None, False),
}
BODIES = {
    ("POST", "/v1/users/{user}/facts"): {"content": "The user drinks green tea."},
    ("POST", "/v1/users/{user}/search"): {"query": "tea"},
    ("POST", "/v1/users/{user}/context"): {"query": "tea?", "budget": 1000},
    ("PUT", "/v1/users/{user}/preferences/{key}"): {"value": "en"},
    ("POST", "/v1/users/{user}/review/{item_id}/resolve"): {},
    ("PUT", "/v1/users/{user}/tasks/{task_id}"): {"goal": "ship the release"},
    ("POST", "/v1/users/{user}/messages"): {"messages": [{"id": "m1", "role": "user", "content": "hi"}]},
}
QUERIES = {("GET", "/v1/users/{user}/traces/{trace_id}/why"): {"subject": "tea"}}
ROLES = ("reader", "writer", "admin")
# key shapes: (name, tenant, users, agents, role)
SHAPES = [(f"{role}-{reach}", tenant, users, agents, role)
          for role in ROLES
          for reach, tenant, users, agents in (("all", "acme", ["*"], ["*"]), ("alice", "acme", ["alice"], ["*"]),
                                              ("alice-a1", "acme", ["alice"], ["a1"]),
                                              ("other-tenant", "globex", ["*"], ["*"]),
                                              ("bob", "acme", ["bob"], ["*"]))]


def test_the_table_covers_every_route():
    with _mem() as mem:
        routes = {(m, r.path) for r in create_app(mem).routes if isinstance(r, APIRoute) for m in r.methods}
    assert routes == set(RULES), f"add these to RULES: {routes - set(RULES)}; gone: {set(RULES) - routes}"


def _mem():
    import tempfile
    from pathlib import Path

    return Memory.open(Path(tempfile.mkdtemp()) / "m.db")


@pytest.fixture(scope="module")
def world():
    mem = _mem()
    keys = {name: create_key(mem.store, tenant=t, users=u, agents=a, role=r)[1] for name, t, u, a, r in SHAPES}
    yield mem, keys
    mem.close()


def _ids(mem):
    alice = mem.scope("acme", "alice", "a1")
    n = len(alice.facts())
    fact = alice.remember(f"The user collects acmeonly tea stamps, note {n}.")
    view = alice.context("tea stamps?", budget=1000)
    alice.remember(f"The user does not collect acmeonly tea stamps, note {n}.")  # a conflict to review
    item = next(i for i in alice.review_queue() if fact.id in i["fact_ids"])
    alice.save_task("t-acme", "the acmeonly release", based_on=(alice.task("t-acme").version if alice.task("t-acme")
                                                                 else 0))
    return {"user": "alice", "fact_id": fact.id, "trace_id": view.trace.id, "key": "lang", "job_id": "nojob",
            "item_id": item["id"], "task_id": "t-acme"}


def _expected(rule, shape, path) -> bool:
    """Whether the key may do this at all (a key of another tenant acts in its own tenant:
    allowed, but it must find nothing of this one)."""
    role, whole_user = rule
    if role is None:
        return True
    _, tenant, users, agents, key_role = shape
    if "{user}" in path and not ("*" in users or "alice" in users):
        return False
    if ROLES.index(key_role) < ROLES.index(role):
        return False
    return "*" in agents or not whole_user


@pytest.mark.parametrize("route", sorted(RULES), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_route_under_every_key_shape(world, route):
    mem, keys = world
    method, path = route
    with TestClient(create_app(mem)) as c:
        for shape in SHAPES:
            ids = _ids(mem)  # fresh ids each time: a forget in one shape does not hide another's outcome
            url = path.format(**ids)
            headers = {"Authorization": f"Bearer {keys[shape[0]]}", "X-Agent": "a1"}
            r = c.request(method, url, headers=headers, json=BODIES.get(route), params=QUERIES.get(route))
            allowed = _expected(RULES[route], shape, path)
            if allowed:
                assert r.status_code not in (401, 403), (shape[0], r.status_code, r.text)
                assert r.status_code < 500
            else:
                assert r.status_code in (403, 404), (shape[0], r.status_code, r.text)
            if shape[1] != "acme":  # another tenant: never this tenant's rows, not even their existence
                assert "acmeonly" not in r.text  # (ids the caller sent may be echoed in a 404; nothing else)
                if allowed and ("{fact_id}" in path or "{trace_id}" in path or "{item_id}" in path
                                or ("{task_id}" in path and method == "GET")):
                    assert r.status_code == 404, (shape[0], r.status_code, r.text)
            if RULES[route][0] is not None:
                anonymous = c.request(method, url, json=BODIES.get(route), params=QUERIES.get(route))
                assert anonymous.status_code == 401
            if shape[0].endswith("-alice-a1") and "{user}" in path:  # its agent only: another agent is refused
                other = c.request(method, url, headers={**headers, "X-Agent": "a2"}, json=BODIES.get(route),
                                  params=QUERIES.get(route))
                assert other.status_code == 403, (shape[0], other.status_code, other.text)
