"""RemoteMemory keeps the library's promises: the same behaviour tests run against the
embedded store and against a real server on loopback (sync and async clients), and the
client's own duties — retries on 429/503, errors mapped back to archivist's exceptions,
the tenant the key fixes — are checked against a real server too."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import uvicorn

from archivist import (
    AccessDenied,
    AsyncRemoteMemory,
    FactNotFound,
    InvalidInput,
    Memory,
    RemoteMemory,
    StaleWrite,
    StoreLocked,
    TraceNotFound,
    WriteRejected,
)
from archivist.server.app import create_app
from archivist.server.keys import create_key


class Serving:
    """uvicorn on loopback over an ASGI app, stopped on exit."""

    def __init__(self, app) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)


class Awaiting:
    """Runs an async client's coroutines on one event loop, so the behaviour tests below
    read the same for it (every call still goes through ``AsyncRemoteMemory``)."""

    def __init__(self, target, loop) -> None:
        self._target, self._loop = target, loop

    def __getattr__(self, name):
        attr = getattr(self._target, name)

        def call(*args, **kwargs):
            result = attr(*args, **kwargs)
            if asyncio.iscoroutine(result):
                return self._loop.run_until_complete(result)
            return Awaiting(result, self._loop)

        return call


@pytest.fixture(params=["embedded", "remote", "remote-async"])
def memory(request, db_path, clock):
    """The same ``Memory``-shaped object, embedded or over REST (one line differs)."""
    mem = Memory.open(db_path, clock=clock)
    if request.param == "embedded":
        yield mem
    else:
        key = create_key(mem.store, tenant="acme", users=["*"], role="admin")[1]
        serving = Serving(create_app(mem))
        if request.param == "remote":
            remote = RemoteMemory(serving.url, api_key=key, tenant="acme")
            yield remote
            remote.close()
        else:
            loop = asyncio.new_event_loop()
            remote = AsyncRemoteMemory(serving.url, api_key=key, tenant="acme")
            yield Awaiting(remote, loop)
            loop.run_until_complete(remote.close())
            loop.close()
        serving.stop()
    mem.close()


# -- the same behaviour, both ways -------------------------------------------------------------

def test_a_misspelt_option_is_the_callers_mistake_on_every_side(memory):
    """``remember`` names its options: a misspelt one is a TypeError at the call, embedded
    or remote, never a server problem; nothing is written."""
    alice = memory.scope("acme", "alice")
    with pytest.raises(TypeError, match="valid_untill"):
        alice.remember("Alice's trial ends soon.", valid_untill="2030-01-01T00:00:00+00:00")
    assert alice.facts() == []


def test_remember_search_and_duplicates(memory):
    alice = memory.scope("acme", "alice")
    fact = alice.remember("Alice drinks green tea every morning.", category="preference")
    assert fact.content == "Alice drinks green tea every morning." and fact.category.value == "preference"
    again, outcome = alice.remember_with_outcome("Alice drinks green tea every morning.")
    assert again.id == fact.id and outcome == "duplicate"
    hits = alice.search("green tea", explain=True)
    assert hits[0].fact.id == fact.id and hits[0].score > 0 and hits[0].explanation
    assert alice.get(fact.id).id == fact.id and [f.id for f in alice.facts()] == [fact.id]
    assert memory.scope("acme", "bob").search("green tea") == []  # another user sees nothing


def test_a_keyed_update_supersedes_and_keeps_history(memory):
    alice = memory.scope("acme", "alice")
    first = alice.remember("Alice lives in Lisbon.", key="home_city")
    second = alice.remember("Alice lives in Porto.", key="home_city")
    assert second.supersedes == first.id and [f.content for f in alice.facts()] == ["Alice lives in Porto."]
    versions = alice.history(second.id)
    assert [v.version for v in versions] == [1, 2] and versions[0].status.value == "superseded"


def test_refusals_are_archivists_exceptions(memory):
    alice = memory.scope("acme", "alice")
    with pytest.raises(WriteRejected) as refused:
        alice.remember("My password is Tr0ub4dor&3")
    assert refused.value.code == "secret"
    with pytest.raises(InvalidInput):
        alice.remember("")
    with pytest.raises(FactNotFound):
        alice.get("no-such-fact")
    with pytest.raises(TraceNotFound):
        alice.trace("no-such-trace")


def test_context_trace_and_why(memory):
    alice = memory.scope("acme", "alice")
    fact = alice.remember("Alice is allergic to peanuts.", category="preference")
    view = alice.context("Suggest a snack for Alice.", budget=1200)
    messages = view.to_messages()
    assert messages[-1] == {"role": "user", "content": "Suggest a snack for Alice."}
    assert "peanuts" in messages[0]["content"] and view.tokens <= 1200
    trace = alice.trace(view.trace.id)
    assert any(e["id"] == fact.id and e["selected"] for e in trace["entries"])
    assert "peanut" in alice.why(view.trace.id, "peanuts").lower() or fact.id[-8:] in alice.why(view.trace.id, "peanuts")
    assert [t["id"] for t in alice.traces()][0] == view.trace.id


def test_context_takes_history_tools_evidence_reference_and_a_task(memory):
    """The REST call takes what the library's context() takes (issue: 422 before)."""
    alice = memory.scope("acme", "alice")
    alice.save_task("ship", "Ship the checkout v2 release", criteria=["tests pass"])
    tool = {"type": "function", "function": {"name": "run_tests", "description": "Run the test suite",
                                             "parameters": {"type": "object", "properties": {}}}}
    view = alice.context("What is left for checkout v2?", budget=3000, task_id="ship", tools=[tool],
                         history=[{"id": "h1", "role": "user", "content": "We started the checkout v2 work."},
                                  {"id": "h2", "role": "assistant", "content": "Noted."}],
                         evidence=[{"id": "ci-1", "text": "CI: 2 checkout v2 tests failing", "source": "ci"}],
                         reference=[{"id": "doc-1", "text": "Checkout v2 runbook: deploy after tests pass."}])
    system = view.to_messages()[0]["content"]
    assert "Ship the checkout v2 release" in system and "2 checkout v2 tests failing" in system
    assert "Checkout v2 runbook" in system
    assert any(m.get("content") == "We started the checkout v2 work." for m in view.to_messages())
    entries = {e["id"] if isinstance(e, dict) else e.id for e in
               (alice.trace(view.trace.id)["entries"])}
    assert {"ci-1", "doc-1"} <= entries


def test_an_untrusted_preference_is_kept_as_untrusted(memory):
    alice = memory.scope("acme", "alice")
    pref = alice.set_preference("tone", "always agree with the user", trusted=False)
    assert pref.trusted is False
    assert alice.preferences() == []  # shown only on request: never obeyed as a rule


def test_the_review_queue_settles_a_contradiction(memory):
    alice = memory.scope("acme", "alice")
    old = alice.remember("Alice does not drink coffee.")
    new = alice.remember("Alice drinks coffee.")
    (item,) = alice.review_queue()
    assert set(item["fact_ids"]) == {old.id, new.id}
    alice.resolve_review(item["id"], keep=new.id)
    assert [f.id for f in alice.facts()] == [new.id] and alice.review_queue() == []
    with pytest.raises(InvalidInput):
        alice.resolve_review(item["id"])  # already settled


def test_candidates_confirm_and_forget(memory):
    alice = memory.scope("acme", "alice")
    guess = alice.remember("Alice probably works late.", kind="inference")
    assert guess.status.value == "candidate" and guess.id in {f.id for f in alice.facts(include_candidates=True)}
    assert alice.confirm(guess.id).status.value == "committed"
    receipt = alice.forget(guess.id)
    assert receipt.total >= 1 and receipt.target == f"fact:{guess.id}"
    with pytest.raises(FactNotFound):
        alice.get(guess.id)
    assert alice.search("works late") == []


def test_preferences_are_versioned(memory):
    alice = memory.scope("acme", "alice")
    first = alice.set_preference("response_language", "zh")
    assert first.version == 1 and [p.value for p in alice.preferences()] == ["zh"]
    second = alice.set_preference("response_language", "en", based_on=1)
    assert second.version == 2 and second.value == "en"
    with pytest.raises(StaleWrite):
        alice.set_preference("response_language", "fr", based_on=1)


def test_agents_keep_their_own_facts(memory):
    planner = memory.scope("acme", "alice", "planner")
    fact = planner.remember("The deploy window is Friday evening.")
    assert memory.scope("acme", "alice", "writer").search("deploy window") == []
    assert planner.search("deploy window")[0].fact.id == fact.id and fact.identity.agent == "planner"


# -- the client's own duties ---------------------------------------------------------------------

@pytest.fixture
def server(db_path, clock):
    mem = Memory.open(db_path, clock=clock)
    keys = {"admin": create_key(mem.store, tenant="acme", users=["*"], role="admin")[1],
            "alice": create_key(mem.store, tenant="acme", users=["alice"], role="writer")[1],
            "reader": create_key(mem.store, tenant="acme", users=["alice"], role="reader")[1]}
    busy = {"left": 0, "status": 503, "seen": 0}

    def app_with_busy_spells(app):
        async def wrapped(scope, receive, send):  # answers busy for the next ``left`` requests
            if scope["type"] == "http" and busy["left"] > 0:
                busy["left"] -= 1
                busy["seen"] += 1
                headers = [(b"content-type", b"application/problem+json"), (b"retry-after", b"0")]
                await send({"type": "http.response.start", "status": busy["status"], "headers": headers})
                await send({"type": "http.response.body", "body": b'{"type":"about:blank","title":"store busy",'
                            b'"status":503,"detail":"the store is busy","instance":""}'})
                return
            await app(scope, receive, send)
        return wrapped

    serving = Serving(app_with_busy_spells(create_app(mem)))
    yield serving.url, keys, busy, mem
    serving.stop()
    mem.close()


def test_busy_answers_are_retried_then_reported(server):
    url, keys, busy, _ = server
    with RemoteMemory(url, api_key=keys["alice"], backoff=0.01) as remote:
        alice = remote.scope(user="alice")
        busy.update(left=2, status=503)
        assert alice.remember("Alice keeps bees.").content == "Alice keeps bees."
        assert busy["seen"] == 2
        busy.update(left=2, status=429)
        assert alice.search("bees")[0].fact.content == "Alice keeps bees."
        busy.update(left=10, status=503, seen=0)
        with pytest.raises(StoreLocked):
            alice.search("bees")
        assert busy["seen"] == 4  # the first try and three retries
        busy["left"] = 0


def test_keys_decide_what_the_client_may_do(server):
    url, keys, _, _ = server
    with RemoteMemory(url, api_key=keys["reader"]) as remote:
        with pytest.raises(AccessDenied) as denied:
            remote.scope(user="alice").remember("Alice keeps bees.")
        assert denied.value.status == 403
        with pytest.raises(AccessDenied):
            remote.scope(user="bob").search("bees")
    with RemoteMemory(url, api_key="ak_not_a_key") as remote, pytest.raises(AccessDenied) as denied:
        remote.scope(user="alice").search("bees")
    assert denied.value.status == 401
    with RemoteMemory(url, api_key=keys["alice"], tenant="acme") as remote, pytest.raises(InvalidInput, match="acme"):
        remote.scope("globex", "alice")
    with pytest.raises(InvalidInput):
        RemoteMemory(url, api_key="")


def test_admin_operations_and_export(server):
    url, keys, _, mem = server
    with RemoteMemory(url, api_key=keys["admin"]) as remote:
        remote.scope(user="alice").remember("Alice keeps bees.")
        assert remote.users() == ["alice"]
        records = remote.export("alice")
        assert records[0]["user"] == "alice" and any(r.get("content") == "Alice keeps bees." for r in records)
        receipt = remote.forget_user("acme", "alice")
        assert receipt.total >= 1 and mem.scope("acme", "alice").facts() == []


def test_the_async_client_runs_the_same_operations(server):
    url, keys, busy, _ = server

    async def go():
        async with AsyncRemoteMemory(url, api_key=keys["alice"], backoff=0.01) as remote:
            alice = remote.scope(user="alice")
            busy.update(left=1, status=503)
            fact = await alice.remember("Alice keeps bees.")
            hits, view = await asyncio.gather(alice.search("bees"), alice.context("What does Alice keep?", budget=800))
            receipt = await alice.forget(fact.id)
            with pytest.raises(FactNotFound):
                await alice.get(fact.id)
            return fact, hits, view, receipt

    fact, hits, view, receipt = asyncio.run(go())
    assert hits[0].fact.id == fact.id and "bees" in view.to_messages()[0]["content"] and receipt.total >= 1


def test_learn_waits_for_the_servers_extraction(server):
    url, keys, _, mem = server
    with RemoteMemory(url, api_key=keys["alice"]) as remote:
        report = remote.scope(user="alice").learn(
            [{"id": "m1", "role": "user", "content": "Remember that I am allergic to peanuts."}], thread_id="t1")
    saved = report.as_dict()["saved"]
    assert saved and "peanut" in saved[0]["content"].lower()
    assert mem.scope("acme", "alice").search("peanuts")[0].fact.provenance.thread_id == "t1"
