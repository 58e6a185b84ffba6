"""Forgetting off the request path: a forget returns once its deletions and redactions
committed, with the erasure job it queued; nothing forgotten is readable through any API
from then on; the job (index merge, WAL truncation, VACUUM) runs in the background, is
durable, is resumed by the next process after a kill, and coalesces with the jobs
pending beside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import file_bytes

from archivist import FixedClock, Memory
from archivist.storage import is_dsn, open_store

T0 = "2026-01-01T00:00:00+00:00"
WORD = "qvzerasurejobword"


def with_fact(target, **store_options):
    """A memory on ``target`` whose user alice said her locker code word: (memory, scope, fact)."""
    mem = Memory(open_store(target, **store_options), clock=FixedClock(T0))
    s = mem.scope(user="alice")
    return mem, s, s.remember(f"The user's locker code word is {WORD}.")


def job_when(store, job_id: str, state: str, timeout: float = 60.0):
    """Poll, without running anything: the background thread must do the work."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = store.erasure_job(job_id)
        if job.state == state:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} is {store.erasure_job(job_id).state}, not {state}, after {timeout}s")


def assert_erased(store_target) -> None:
    """SQLite: no byte of the file or its WAL (PostgreSQL's files: tests/test_torture_secure_delete.py)."""
    if not is_dsn(store_target):
        assert WORD.encode() not in file_bytes(store_target)


def test_the_background_thread_erases_the_files_and_the_api_shows_nothing_meanwhile(store_target):
    mem, s, fact = with_fact(store_target)
    gate, entered = threading.Event(), threading.Event()
    erase = mem.store.eraser.after_forget

    def held_back(tables, *, whole_user):
        entered.set()
        gate.wait(60)
        return erase(tables, whole_user=whole_user)

    mem.store.eraser.after_forget = held_back
    receipt = s.forget(fact.id)  # returns while the eraser is held back
    (job,) = receipt.erasure_jobs
    assert entered.wait(30) and mem.store.erasure_job(job).state == "running"
    assert s.search(WORD) == [] and s.facts() == [] and WORD not in s.render().text  # nothing through the API
    assert WORD not in str(s.audit(limit=50)) and WORD not in s.context("locker code word?").system
    gate.set()
    done = job_when(mem.store, job, "done")
    assert done.attempts == 1 and done.note is None
    assert_erased(store_target)
    mem.close()


def test_jobs_pending_together_are_done_by_one_erasure(tmp_path):
    path = tmp_path / "m.db"
    mem = Memory(open_store(path), clock=FixedClock(T0))
    s = mem.scope(user="alice")
    facts = [s.remember(f"The user's code word number {n} is {WORD}{n}.") for n in range(4)]
    gate, calls = threading.Event(), []
    erase = mem.store.eraser.after_forget

    def counted(tables, *, whole_user):
        calls.append(whole_user)
        gate.wait(60)
        return erase(tables, whole_user=whole_user)

    mem.store.eraser.after_forget = counted
    jobs = [j for f in facts for j in s.forget(f.id).erasure_jobs]
    receipt = mem.forget_user("default", "bob")  # a user with nothing: still one job, for the whole user
    gate.set()
    assert mem.store.wait_for_erasure(timeout=60)
    assert {mem.store.erasure_job(j).state for j in [*jobs, *receipt.erasure_jobs]} == {"done"}
    # the first erasure took what was pending when the worker woke (the first forget, or the
    # first two when the second committed before the claim); what queued while it ran was
    # claimed, and finished, together (a WAL a reader holds may make a group try again: still together)
    assert any(calls), "the user's job erases as a whole-user job"
    ends = {mem.store.erasure_job(j).finished_at for j in [*jobs, *receipt.erasure_jobs]}
    assert len(ends) <= 2, ends  # one erasure each, at most two in all
    assert not any(WORD.encode() + str(n).encode() in file_bytes(path) for n in range(4))
    mem.close()


def test_closing_finishes_the_open_jobs(tmp_path):
    path = tmp_path / "m.db"
    mem, s, fact = with_fact(path)
    receipt = s.forget(fact.id)
    mem.close()  # a CLI process exits right after its forget: the erasure is done first
    assert WORD.encode() not in file_bytes(path)
    with open_store(path) as store:
        assert store.erasure_job(receipt.erasure_jobs[0]).state == "done"


def test_inline_erasure_is_done_when_the_forget_returns(tmp_path):
    path = tmp_path / "m.db"
    mem, s, fact = with_fact(path, erasure="inline")
    receipt = s.forget(fact.id)
    assert {mem.store.erasure_job(j).state for j in receipt.erasure_jobs} == {"done"}
    assert WORD.encode() not in file_bytes(path)
    mem.close()
    with pytest.raises(Exception, match="erasure must be one of background, inline"):
        open_store(tmp_path / "x.db", erasure="later")


KILLED_MID_ERASURE = textwrap.dedent("""
    import sys, time
    from archivist import FixedClock, Memory
    from archivist.storage import open_store

    mem = Memory(open_store(sys.argv[1]), clock=FixedClock("2026-01-01T00:00:00+00:00"))
    s = mem.scope(user="alice")
    fact = s.remember("The user's locker code word is %s.")
    mem.store.eraser.after_forget = lambda tables, whole_user: time.sleep(3600)  # killed while erasing
    receipt = s.forget(fact.id)
    while mem.store.erasure_job(receipt.erasure_jobs[0]).state != "running":
        time.sleep(0.02)
    print(receipt.erasure_jobs[0], flush=True)
    time.sleep(3600)
""" % WORD)


def test_a_job_interrupted_by_a_kill_is_resumed_by_the_next_process(store_target):
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_ERASURE, str(store_target)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        job = child.stdout.readline().strip()
        assert job, "the child did not forget"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    mem = Memory(open_store(store_target), clock=FixedClock(T0))  # opening takes the dead process's job up
    done = job_when(mem.store, job, "done")
    assert done.attempts == 2 and mem.scope(user="alice").facts() == []
    assert_erased(store_target)
    mem.close()


def test_a_job_left_pending_is_resumed_on_open(tmp_path):
    path = tmp_path / "m.db"
    mem, s, fact = with_fact(path)
    mem.store.eraser.after_forget = lambda tables, whole_user: "not now"  # every attempt leaves it open
    receipt = s.forget(fact.id)
    mem.store.close()  # a process that stopped with the job open (the close's own attempt fails too)
    with open_store(path) as store:
        left = store.erasure_job(receipt.erasure_jobs[0])
        assert left.state == "pending" and left.note == "not now" and left.attempts >= 1
        assert job_when(store, left.id, "done").note is None  # this process's background thread did it
    assert WORD.encode() not in file_bytes(path)


def test_a_job_the_eraser_never_finishes_fails_with_its_note_and_purge_finishes_it(tmp_path, monkeypatch):
    from archivist.storage.core import erasure

    monkeypatch.setattr(erasure, "RETRY_SECONDS", 0.01)
    path = tmp_path / "m.db"
    mem, s, fact = with_fact(path)
    erase = mem.store.eraser.after_forget
    mem.store.eraser.after_forget = lambda tables, whole_user: "wal not truncated (readers active)"
    (job,) = s.forget(fact.id).erasure_jobs
    failed = job_when(mem.store, job, "failed")
    assert failed.attempts == erasure.MAX_ATTEMPTS and failed.note == "wal not truncated (readers active)"
    assert mem.store.erasure_jobs(open_only=True) == []
    assert mem.store.wait_for_erasure(timeout=1) is False  # none open, but one failed: bytes may remain
    mem.store.eraser.after_forget = erase
    mem.store.purge()  # the maintenance command erases what is left
    assert mem.store.wait_for_erasure(timeout=1) is True
    assert mem.store.erasure_job(job).state == "done" and WORD.encode() not in file_bytes(path)
    mem.close()


def test_the_cli_lists_the_jobs(tmp_path):
    path = tmp_path / "m.db"
    with Memory(open_store(path), clock=FixedClock(T0)) as mem:
        s = mem.scope(user="alice")
        (job,) = s.forget(s.remember(f"The user's locker code word is {WORD}.").id).erasure_jobs
    listed = subprocess.run([sys.executable, "-m", "archivist.cli", "purge", "--jobs", "--db", str(path)],
                            capture_output=True, text=True)
    assert listed.returncode == 0 and f"{job}  done" in listed.stdout, listed.stderr


def test_the_rest_api_names_the_job_and_serves_it(tmp_path):
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install '.[server]')")
    from fastapi.testclient import TestClient

    from archivist.server.app import create_app
    from archivist.server.keys import create_key

    mem = Memory(open_store(tmp_path / "m.db"), clock=FixedClock(T0))
    writer = create_key(mem.store, tenant="acme", users=["alice"], role="writer")[1]
    reader = create_key(mem.store, tenant="acme", users=["alice"], role="reader")[1]
    stranger = create_key(mem.store, tenant="globex", users=["*"], role="admin")[1]
    with TestClient(create_app(mem)) as c:
        auth = {"Authorization": f"Bearer {writer}"}
        fid = c.post("/v1/users/alice/facts", json={"content": f"The user's code word is {WORD}."},
                     headers=auth).json()["id"]
        receipt = c.delete(f"/v1/users/alice/facts/{fid}", headers=auth).json()
        (job,) = receipt["erasure_jobs"]
        mem.store.wait_for_erasure(timeout=60)
        got = c.get(f"/v1/erasure-jobs/{job}", headers=auth)
        assert got.status_code == 200 and got.json()["state"] == "done" and "facts" in got.json()["tables"]
        assert c.get(f"/v1/erasure-jobs/{job}", headers={"Authorization": f"Bearer {reader}"}).status_code == 403
        assert c.get("/v1/erasure-jobs/no-such-job", headers=auth).status_code == 404
        assert c.get(f"/v1/erasure-jobs/{job}", headers={"Authorization": f"Bearer {stranger}"}).status_code == 404
    mem.close()


def test_a_trace_assembled_before_a_forget_and_kept_after_it_is_not_kept(store_target):
    """Red team: context() in another thread read the fact, the forget redacted the
    traces, then the trace was written with the fact's words in it."""
    mem = Memory(open_store(store_target), clock=FixedClock(T0))
    s = mem.scope(user="alice")
    fact = s.remember(f"The user visited {WORD} on holiday.")
    assembled, go = threading.Event(), threading.Event()
    keep = mem.store.put_trace

    def late(*args, **kwargs):
        assembled.set()
        go.wait(60)
        return keep(*args, **kwargs)

    mem.store.put_trace = late
    views = []
    reader = threading.Thread(target=lambda: views.append(s.context("where did the user go on holiday?")))
    reader.start()
    assert assembled.wait(60)
    s.forget(fact.id)
    go.set()
    reader.join(60)
    (view,) = views
    assert WORD in view.system  # the call read before the forget: its view stands
    assert any(f["source"] == "trace_store" and "forgotten" in f["error"] for f in view.trace.failures)
    assert WORD not in repr(s.traces()) and s.traces() == []
    mem.store.put_trace = keep
    assert_erased(store_target)
    mem.close()


def test_forgets_racing_context_calls_leave_no_trace_of_the_words(tmp_path):
    path = tmp_path / "race.db"
    mem = Memory(open_store(path), clock=FixedClock(T0))
    s = mem.scope(user="alice")
    s.remember_many([{"content": f"Filler fact {i} about gardening."} for i in range(200)])
    for t in range(8):
        fact = s.remember(f"The user visited Zqmark{t}x on holiday.")
        stop = threading.Event()

        def read():
            while not stop.is_set():
                s.context("where did the user go on holiday")

        readers = [threading.Thread(target=read) for _ in range(2)]
        for r in readers:
            r.start()
        s.forget(fact.id)
        stop.set()
        for r in readers:
            r.join(60)
        assert f"Zqmark{t}x" not in repr(s.traces(limit=1000))
    mem.close()
    data = file_bytes(path)
    assert not [t for t in range(8) if f"Zqmark{t}x".encode() in data]


def test_a_trace_showing_a_recalled_episode_is_not_kept_after_its_forget(tmp_path):
    """Second red team: an episode shown as evidence is cited by the trace too."""
    path = tmp_path / "ep.db"
    mem = Memory(open_store(path), clock=FixedClock(T0))
    s = mem.scope(user="alice")
    s.learn([{"id": "u1", "role": "user", "content": f"I live in {WORD}."},
             {"id": "a1", "role": "assistant", "content": f"Noted: you live in {WORD}, a lovely town."}],
            thread_id="t1")
    fact = next(f for f in s.facts() if WORD in f.content)
    view = s.context(f"what did you say about {WORD}?", persist=False)
    episodes = [c for c in view.trace.cites if c != fact.id]
    assert episodes, "the view shows the turn as evidence"
    s.forget(fact.id)
    s.keep_trace(view.trace)  # kept after the forget: refused, it shows what is gone
    assert s.traces() == [] and any(f["source"] == "trace_store" for f in view.trace.failures)
    mem.close()
    assert WORD.encode() not in file_bytes(path)



def test_done_jobs_are_pruned_after_thirty_days(tmp_path):
    """Receipts name erasure jobs, so a done one stays readable for a while; then its row goes."""
    from datetime import UTC, datetime, timedelta

    from archivist.storage.core.backend import MAINTENANCE
    from archivist.storage.core.erasure import KEEP_DONE

    mem, s, fact = with_fact(tmp_path / "m.db")
    (old,) = s.forget(fact.id).erasure_jobs
    assert mem.store.wait_for_erasure(timeout=60)
    recent = s.remember(f"The user's second code word is {WORD}2.")
    aged = datetime.now(UTC) - KEEP_DONE - timedelta(days=1)
    with mem.store.transaction():
        mem.store.db.write(MAINTENANCE, "UPDATE erasure_jobs SET finished_at = ? WHERE id = ?",
                           (mem.store.sql.ts(aged), old))
    (new,) = s.forget(recent.id).erasure_jobs
    assert mem.store.wait_for_erasure(timeout=60)
    assert mem.store.erasure_job(old) is None and mem.store.erasure_job(new).state == "done"
    mem.close()
