"""A red team's findings on the LangGraph store and RemoteMemory, each kept as the test
of what now holds. Real parts only: SQLite files, uvicorn on loopback, a raw-socket proxy
that drops answers after the server acted."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import threading
import time

import httpx
import pytest
from langgraph.store.base import PutOp

from archivist import FixedClock, Memory, RemoteMemory
from archivist.errors import (
    ArchivistError,
    BudgetExceeded,
    FactNotFound,
    InvalidCandidate,
    InvalidIdentity,
    InvalidInput,
    WriteRejected,
)
from archivist.integrations.langgraph_store import ArchivistStore
from archivist.server.app import create_app
from archivist.server.keys import create_key
from test_langgraph_store_contract import LetterCounts as Letters
from test_remote_memory import Serving

T0 = "2026-01-01T00:00:00+00:00"


# -- helpers ---------------------------------------------------------------------------------

@pytest.fixture
def mem(tmp_path):
    m = Memory.open(tmp_path / "m.db", clock=FixedClock(T0))
    yield m
    m.close()


class Canned:
    """ASGI: answers the next ``left`` requests with a canned (status, headers, body)."""

    def __init__(self, app) -> None:
        self.app, self.left, self.answer, self.seen = app, 0, None, 0

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            self.seen += 1
        if scope["type"] == "http" and self.left > 0:
            self.left -= 1
            status, headers, body = self.answer
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class DropProxy:
    """HTTP/1.1 proxy: forwards each request (the server acts on it); while ``drop[method]``
    > 0 it then closes the client's connection instead of relaying the answer."""

    def __init__(self, upstream: str) -> None:
        self.drop: dict[str, int] = {}
        self.forwarded: list[tuple[str, int]] = []
        self.client = httpx.Client(base_url=upstream)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = [(k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in lines[1:])]
                length = int(next((v for k, v in headers if k.lower() == "content-length"), "0"))
                while len(buf) < length:
                    buf += conn.recv(65536)
                body, buf = buf[:length], buf[length:]
                skip = ("host", "content-length", "connection", "accept-encoding")
                r = self.client.request(method, target, content=body,
                                        headers={k: v for k, v in headers if k.lower() not in skip})
                self.forwarded.append((method, r.status_code))
                if self.drop.get(method, 0) > 0:
                    self.drop[method] -= 1
                    return  # the server acted; the client never hears of it
                out = f"HTTP/1.1 {r.status_code} {r.reason_phrase}\r\n".encode()
                for k, v in r.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        out += f"{k}: {v}\r\n".encode("latin-1")
                conn.sendall(out + f"content-length: {len(r.content)}\r\n\r\n".encode() + r.content)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()
        self.client.close()


@pytest.fixture
def server(tmp_path):
    """(memory, admin key of tenant acme, Canned wrapper, url) over a real server."""
    m = Memory.open(tmp_path / "srv.db")
    key = create_key(m.store, tenant="acme", users=["*"], role="admin")[1]
    canned = Canned(create_app(m))
    serving = Serving(canned)
    yield m, key, canned, serving.url
    serving.stop()
    m.close()


# == ArchivistStore ==========================================================================

def test_store_secret_as_key_value_pair_is_refused(mem):
    """A secret held as a key and its value ({'password': …}, {'ssn': 123456789}) is refused:
    the content policy reads each field name with its value."""
    store = ArchivistStore(mem)
    for i, value in enumerate([{"password": "Tr0ub4dor&3"}, {"api_key": "abcdef1234567890abcdef"},
                               {"credit_card": "4111-1111-1111-1111"}, {"ssn": "123456789"}, {"ssn": 123456789}]):
        with pytest.raises(WriteRejected):
            store.put(("alice",), f"k{i}", value)
    assert mem.store.graph_items("default", "", mem.clock.now()) == []


def test_store_bad_ttl_is_refused_before_the_embedder(mem):
    """ttl NaN or infinite is refused before anything reaches the embedder; a ttl past the
    year 9999 means the item never expires."""
    emb = Letters()
    store = ArchivistStore(mem, index={"embed": emb, "dims": 36})
    for bad in (float("nan"), float("inf"), -1):
        with pytest.raises(InvalidInput):
            store.batch([PutOp(("a",), "x1", {"content": "one"}), PutOp(("a",), "x2", {"content": "two"}, ttl=bad)])
    assert emb.calls == []
    store.put(("a",), "forever", {"content": "three"}, ttl=1e12)
    assert mem.store.graph_items("default", "a", mem.clock.now())[0][5] is None  # no expiry


def test_store_non_numeric_ttl_is_refused(mem):
    """A ttl that is not a number (ttl='10' from a config file) is refused, not taken as 'never'."""
    store = ArchivistStore(mem)
    with pytest.raises(InvalidInput):
        store.put(("a",), "k", {"content": "tea"}, ttl="10")


def test_store_sweeper_nan_interval_is_refused(mem):
    """A NaN sweep interval is refused (it would make the sweeper spin)."""
    store = ArchivistStore(mem, ttl={"default_ttl": 1})
    try:
        with pytest.raises(InvalidInput):
            store.start_ttl_sweeper(float("nan"))
    finally:
        store.stop_ttl_sweeper(timeout=5)


def test_store_sweeper_inf_interval_is_refused_or_its_future_ends(mem):
    """An infinite sweep interval is refused (or its sweeper's future still ends)."""
    store = ArchivistStore(mem, ttl={"default_ttl": 1})
    try:
        future = store.start_ttl_sweeper(float("inf"))
    except InvalidInput:
        return
    time.sleep(0.3)
    assert future.done()


def test_store_sweeper_ends_when_memory_closes(tmp_path):
    """The sweeper ends as soon as its memory is closed, not after its next interval."""
    m = Memory.open(tmp_path / "m.db", clock=FixedClock(T0))
    store = ArchivistStore(m, ttl={"default_ttl": 1, "sweep_interval_minutes": 60})
    future = store.start_ttl_sweeper()
    m.close()
    try:
        assert future.result(timeout=3) is None
    finally:
        store.stop_ttl_sweeper(timeout=5)


def test_store_identical_text_scores_exactly_one(mem):
    """An identical text scores exactly 1.0 (float32 rounding is held to [-1, 1])."""
    store = ArchivistStore(mem, index={"embed": Letters(), "dims": 36, "fields": ["content"]})
    texts = ["Alice drinks green tea every morning", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"]
    for i, t in enumerate(texts):
        store.put(("u",), f"k{i}", {"content": t})
    for t in texts:
        assert store.search(("u",), query=t, limit=1)[0].score == 1.0


def test_store_embedder_nan_or_ragged_vectors_are_refused(mem):
    """NaN, infinite or ragged vectors from an embedder are refused as InvalidInput."""

    class Bad(Letters):
        def __init__(self, mode):
            super().__init__()
            self.mode = mode

        def embed_documents(self, texts):
            if self.mode == "ragged":
                return [[1.0] * 36, [1.0] * 35][: len(texts)]
            return [[float(self.mode)] * 36 for _ in texts]

    for mode in ("nan", "inf", "ragged"):
        store = ArchivistStore(mem, index={"embed": Bad(mode), "dims": 36})
        with pytest.raises(InvalidInput):
            store.batch([PutOp(("a",), "k1", {"content": "tea"}), PutOp(("a",), "k2", {"content": "coffee"})])


def test_store_unencodable_text_is_invalid_input(mem):
    """A lone surrogate in a value or namespace is InvalidInput, never a raw UnicodeEncodeError."""
    store = ArchivistStore(mem)
    with pytest.raises(InvalidInput):
        store.put(("a",), "k", {"content": "x\ud800y"})
    with pytest.raises(InvalidInput):
        store.put(("a\ud800",), "k", {"content": "x"})


def test_homoglyph_password_is_refused(mem):
    """A password named with a Cyrillic look-alike letter or a combining mark is still refused."""
    store = ArchivistStore(mem)
    for text in ["my p\u0430ssword is Tr0ub4dor&3", "my pas\u0301sword is Tr0ub4dor&3"]:
        with pytest.raises(WriteRejected):
            store.put(("alice",), "k", {"content": text})


# == RemoteMemory ============================================================================

def test_remote_forget_dotdot_does_not_erase_the_user(server):
    """forget('..') never reaches the forget-user route (httpx would resolve '..' in the path):
    it is an unknown id, as in the library."""
    m, key, _, url = server
    with RemoteMemory(url, api_key=key, tenant="acme") as remote:
        alice = remote.scope("acme", "alice")
        alice.remember("Alice keeps bees.")
        alice.remember("Alice lives in Oslo.")
        with pytest.raises((FactNotFound, InvalidInput)):
            alice.forget("..")
    assert len(m.scope("acme", "alice").facts()) == 2


def test_remote_forget_user_of_another_tenant_is_refused(server):
    """forget_user checks the tenant with the server: another tenant's user is refused, nothing deleted."""
    m, key, _, url = server
    m.scope("acme", "bob").remember("Bob keeps bees.")
    with RemoteMemory(url, api_key=key, tenant="acme") as remote, pytest.raises(InvalidInput):
        remote.forget_user("globex", "bob")
    assert len(m.scope("acme", "bob").facts()) == 1


def test_remote_over_budget_is_budget_exceeded(server):
    """An over-budget answer becomes BudgetExceeded with the needed and given budgets."""
    _, key, _, url = server
    with RemoteMemory(url, api_key=key) as remote, pytest.raises(BudgetExceeded):
        remote.scope(user="alice").context("hi", budget=100, system="word " * 9999)


def test_remote_put_and_delete_are_not_resent_after_a_lost_answer(server):
    """A PUT or DELETE whose answer was lost is not sent again (it may have been done):
    the caller hears RemoteUnavailable instead of a false StaleWrite or FactNotFound."""
    m, key, _, url = server
    proxy = DropProxy(url)
    try:
        with RemoteMemory(proxy.url, api_key=key, backoff=0.01) as remote:
            alice = remote.scope(user="alice")
            alice.set_preference("response_language", "zh")
            fact = alice.remember("Alice lives in Oslo.")
            outcomes = []
            for method, call in [("PUT", lambda: alice.set_preference("response_language", "en", based_on=1)),
                                 ("DELETE", lambda: alice.forget(fact.id))]:
                proxy.drop = {method: 1}
                try:
                    call()
                    outcomes.append("ok")
                except ArchivistError as exc:
                    outcomes.append(type(exc).__name__)
        assert all(o in ("ok", "RemoteUnavailable") for o in outcomes), outcomes
    finally:
        proxy.close()


def test_remote_non_ascii_agent_and_project(server):
    """Agent and project names of any script reach the server: headers carry them
    percent-encoded as UTF-8, and the server reads them back."""
    m, key, _, url = server
    with RemoteMemory(url, api_key=key) as remote:
        fact = remote.scope("acme", "alice", "助手").remember("Alice likes tea.")
        assert fact.identity.agent == "助手"
        assert remote.scope("acme", "alice", "助手").search("tea")[0].fact.id == fact.id
        assert remote.scope("acme", "alice", "default").search("tea") == []
        remote.scope("acme", "alice", "default", "projé").search("tea")
    assert m.scope("acme", "alice", "助手").facts()[0].id == fact.id


@pytest.mark.parametrize("answer", [
    (200, [(b"content-type", b"text/html")], b"<html>captive portal</html>"),
    (307, [(b"location", b"https://elsewhere.invalid/")], b""),
    (200, [(b"content-type", b"application/json")], b'{"unexpected": true}'),
    (200, [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")], b"not gzip"),
], ids=["html-200", "redirect-307", "wrong-shape", "bad-gzip"])
def test_remote_unexpected_answers_raise_archivist_errors(server, answer):
    """A proxy's HTML page, a redirect, a wrong JSON shape or a broken encoding become
    archivist errors (RemoteUnavailable), never JSONDecodeError/KeyError/httpx errors."""
    _, key, canned, url = server
    with RemoteMemory(url, api_key=key) as remote:
        for call in (lambda s: s.search("bees"), lambda s: s.facts()):
            canned.answer, canned.left = answer, 1
            with pytest.raises(ArchivistError):
                call(remote.scope(user="alice"))


def test_remote_retry_after_odd_digits(server):
    """A Retry-After of odd digits ('²') falls back to backoff instead of raising."""
    _, key, canned, url = server
    canned.answer = (503, [(b"retry-after", "²".encode("latin-1"))], b"{}")
    canned.left = 1
    with RemoteMemory(url, api_key=key, backoff=0.01) as remote:
        assert remote.scope(user="alice").search("bees") == []


def test_remote_retry_after_http_date_is_honoured(server):
    """A Retry-After given as an HTTP date is waited out."""
    _, key, canned, url = server
    when = email.utils.formatdate(time.time() + 3, usegmt=True).encode()
    canned.answer, canned.left = (503, [(b"retry-after", when)], b"{}"), 1
    with RemoteMemory(url, api_key=key, backoff=0.01) as remote:
        start = time.monotonic()
        remote.scope(user="alice").search("bees")
        assert time.monotonic() - start > 1.5


def test_remote_set_preference_with_past_expiry(server):
    """set_preference with an expiry in the past returns the preference, as the library does."""
    _, key, _, url = server
    with RemoteMemory(url, api_key=key) as remote:
        pref = remote.scope(user="alice").set_preference("response_language", "zh",
                                                         expires_at="2000-01-01T00:00:00Z")
        assert pref.value == "zh"


def test_remote_invalid_user_ids_are_refused_before_sending(server):
    """User ids '.' and '..' are refused as InvalidIdentity before anything is sent."""
    _, key, _, url = server
    with RemoteMemory(url, api_key=key) as remote:
        for user in (".", ".."):
            with pytest.raises(InvalidIdentity):
                remote.scope("acme", user).search("x")


def test_remote_error_types_match_the_library(server, mem):
    """Errors and empty answers match the library: InvalidCandidate for empty content, []
    for the history of an unknown id."""
    _, key, _, url = server
    with RemoteMemory(url, api_key=key) as remote:
        alice = remote.scope(user="alice")
        with pytest.raises(InvalidCandidate):
            mem.scope("default", "alice").remember("")
        with pytest.raises(InvalidCandidate):
            alice.remember("")
        assert mem.scope("default", "alice").history("nope") == []
        assert alice.history("nope") == []


def test_remote_async_over_budget_is_budget_exceeded(server):
    """The async client maps an over-budget answer to BudgetExceeded too."""
    from archivist import AsyncRemoteMemory

    _, key, _, url = server

    async def go():
        async with AsyncRemoteMemory(url, api_key=key) as remote:
            await remote.scope(user="alice").context("hi", budget=100, system="word " * 9999)

    with pytest.raises(BudgetExceeded):
        asyncio.run(go())
