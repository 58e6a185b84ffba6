"""``archivist serve --workers N``: several processes over one store. Ingest jobs are
rows, so a job queued through one worker is polled through any other; forgetting a user
in one process stops that user's jobs in every process; a job whose process died reads
as failed."""

import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from listening import stop as stop_server

from archivist import Memory
from archivist.model import Identity
from archivist.server.jobs import STOPPED, JobRunner
from archivist.storage.core.erasure import this_process


def workers(pid: int) -> list[int]:
    """The worker processes under a ``serve`` supervisor (not its resource tracker)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(c) for c in path.read_text().split()] if path.exists() else []
    return [k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()
            and b"resource_tracker" not in Path(f"/proc/{k}/cmdline").read_bytes()]


@pytest.fixture
def served(store_target):
    """``archivist serve --workers 2`` on the store; yields (base URL, admin headers, pid)."""
    db = store_target
    secret = subprocess.run([sys.executable, "-m", "archivist.cli", "keys", "create", "--tenant", "acme", "--user", "*",
                             "--role", "admin", "--db", db], capture_output=True, text=True, check=True).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "archivist.cli", "serve", "--db", db, "--port", str(port),
                             "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200 and len(workers(proc.pid)) >= 2:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.1)
        yield base, {"Authorization": f"Bearer {secret}"}, proc.pid
    finally:
        stop_server(proc)


def stopped_process() -> str:
    """How a job's owner names a process of this machine that has exited."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return f"{socket.gethostname()}:{gone.pid}"


def conversation(n: int, who: str) -> list[dict]:
    said = [f"I work at {who}Corp as a data engineer.", f"I live in {who}ville now.", "I prefer tea over coffee."]
    return [{"id": f"{who}-{i}", "role": "user" if i % 2 == 0 else "assistant",
             "content": said[(i // 2) % 3] if i % 2 == 0 else "Noted."} for i in range(n)]


def poll(base, headers, job_id, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # a new connection each time: the kernel hands it to either worker
        r = httpx.get(f"{base}/v1/jobs/{job_id}", headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        if r.json()["status"] not in ("queued", "running"):
            return r.json()
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end")


def test_two_workers_share_the_store_its_jobs_and_forgetting(served):
    base, headers, pid = served
    assert len(workers(pid)) == 2  # two worker processes under the supervisor
    jobs = []
    for n in range(6):
        r = httpx.post(f"{base}/v1/users/u{n}/messages", json={"messages": conversation(6, f"U{n}x")},
                       headers=headers, timeout=30)
        assert r.status_code == 202, r.text
        jobs.append(r.json()["job_id"])
    for n, job in enumerate(jobs):
        done = poll(base, headers, job)
        assert done["status"] == "done" and done["user"] == f"u{n}", done
        assert any(f"U{n}xCorp" in f["content"] for f in done["report"]["saved"])
    for n in range(6):  # every worker reads what every other wrote
        for _ in range(4):
            facts = httpx.get(f"{base}/v1/users/u{n}/facts", headers=headers, timeout=10).json()
            assert any(f"U{n}xCorp" in f["content"] for f in facts["items"]), facts
    assert httpx.delete(f"{base}/v1/users/u0", headers=headers, timeout=60).status_code == 200
    for _ in range(4):
        assert httpx.get(f"{base}/v1/jobs/{jobs[0]}", headers=headers, timeout=10).status_code == 404
        assert httpx.get(f"{base}/v1/users/u0/facts", headers=headers, timeout=10).json()["total"] == 0
    assert httpx.get(f"{base}/v1/jobs/{jobs[1]}", headers=headers, timeout=10).json()["status"] == "done"


def test_a_forget_in_one_process_stops_the_users_jobs_in_another(tmp_path):
    """Two memories over one file stand for two worker processes: a job queued in one is
    never started once the other forgot its user; one running there finds the flag when it
    ends and undoes what it wrote, so that does not bring the user back."""
    path = tmp_path / "m.db"
    here, there = Memory.open(path), Memory.open(path)
    runner = JobRunner(here, workers=1)
    other = JobRunner(there)  # the other process's runner (memories hold their runners weakly)
    other.wait_on_forget = 0.2
    entered, release, ran = threading.Event(), threading.Event(), []

    def slow(job):
        entered.set()
        release.wait(30)
        fact = here.scope("acme", "alice").remember("Alice lives in Paris.")
        job["report"], job["status"] = {"saved": [fact.as_dict()]}, "done"

    try:
        runner.submit({"id": "j-run", "tenant": "acme", "user": "alice"}, slow)
        runner.submit({"id": "j-queued", "tenant": "acme", "user": "alice"}, lambda job: ran.append(job["id"]))
        assert entered.wait(10)
        there.forget_user("acme", "alice")  # waits 0.2 s for the running job, then forgets
        assert there.store.ingest_jobs("acme", "alice") == []
        release.set()
        runner.shutdown()
        assert ran == [], "a job cancelled in another process started"
        assert here.scope("acme", "alice").facts() == [] and there.scope("acme", "alice").facts() == []
        assert runner.get("j-run") is None and runner.get("j-queued") is None
    finally:
        release.set()
        here.close()
        there.close()


def test_a_job_whose_process_died_reads_as_failed(tmp_path):
    mem = Memory.open(tmp_path / "m.db")
    try:
        dead = stopped_process()
        mem.store.add_ingest_job(Identity("acme", "alice", "default"), "j-dead", owner=dead, at=datetime.now(UTC))
        mem.store.add_ingest_job(Identity("acme", "alice", "default"), "j-live", owner=this_process(),
                                 at=datetime.now(UTC))
        assert mem.store.start_ingest_job("j-dead", owner=dead)  # it was running
        runner = JobRunner(mem)
        dead, live = runner.get("j-dead"), runner.get("j-live")
        assert dead["status"] == "failed" and dead["error"] == STOPPED
        assert live["status"] == "queued" and "error" not in live
    finally:
        mem.close()


def test_writers_of_several_processes_take_turns_through_the_lock_file(tmp_path):
    """A writer waits for the writers' lock another process holds, and gets a typed
    StoreLocked past the busy timeout; the lock file stays empty."""
    import fcntl

    from archivist.errors import StoreLocked
    from archivist.storage.sqlite.engine import SQLiteEngine

    path = tmp_path / "m.db"
    engine = SQLiteEngine(path, busy_timeout_ms=300)
    holder = open(str(path) + "-lock", "rb")  # another process's turn
    fcntl.flock(holder, fcntl.LOCK_EX)
    started = time.monotonic()
    with pytest.raises(StoreLocked, match="another process kept writing"):
        with engine.transaction():
            pass
    assert time.monotonic() - started >= 0.3
    released = threading.Timer(0.2, lambda: fcntl.flock(holder, fcntl.LOCK_UN))
    released.start()
    engine.busy_timeout_s = 10
    with engine.transaction():  # waits for the release, then writes
        engine.conn.execute("CREATE TABLE t (x)")
    released.join()
    holder.close()
    engine.close()
    assert (tmp_path / "m.db-lock").stat().st_size == 0


def test_what_the_user_writes_after_a_forget_returned_is_kept_when_an_overtaken_job_ends(tmp_path):
    """Red-team case: a job still running when the forget (in another process) stopped
    waiting ends later; what it wrote goes, and what the user wrote after the forget
    returned stays."""
    path = tmp_path / "m.db"
    here, there = Memory.open(path), Memory.open(path)
    runner, other = JobRunner(here, workers=1), JobRunner(there)
    other.wait_on_forget = 0.2
    entered, release = threading.Event(), threading.Event()

    def slow(job):
        entered.set()
        release.wait(30)
        fact = here.scope("acme", "alice").remember("Alice's friend Quentin plays chess.")
        job["report"], job["status"] = {"saved": [fact.as_dict()]}, "done"

    try:
        runner.submit({"id": "j-run", "tenant": "acme", "user": "alice"}, slow)
        assert entered.wait(10)
        there.forget_user("acme", "alice")
        after = there.scope("acme", "alice").remember("Alice's friend Rosa plays go.")  # sent after the 200
        release.set()
        runner.shutdown()
        kept = [f.content for f in here.scope("acme", "alice").facts()]
        assert kept == [after.content], kept
        assert [h.fact.content for h in there.scope("acme", "alice").search("friend plays")] == [after.content]
    finally:
        release.set()
        here.close()
        there.close()


def test_a_user_forgotten_by_another_process_is_indexed_afresh(tmp_path):
    """Red-team case: a worker that had served a user before another process forgot it
    keeps indexing and finding the user's new facts (no remembered scope id of the old rows)."""
    path = tmp_path / "m.db"
    a, b = Memory.open(path), Memory.open(path)
    try:
        a.scope("acme", "alice").remember("Alice lives in Lyon.")
        assert a.scope("acme", "alice").search("Lyon")
        b.forget_user("acme", "alice")
        b.scope("acme", "bob").remember("Bob lives in Oslo.")  # another scope takes the next id
        a.scope("acme", "alice").remember("Alice lives in Porto.")
        for mem in (a, b):
            assert [h.fact.content for h in mem.scope("acme", "alice").search("lives")] == ["Alice lives in Porto."]
            assert [h.fact.content for h in mem.scope("acme", "bob").search("lives")] == ["Bob lives in Oslo."]
    finally:
        a.close()
        b.close()


def test_a_queued_job_of_a_stopped_process_says_it_never_ran_and_errors_do_not_name_the_store(tmp_path):
    from archivist.errors import StoreConflict
    from archivist.server.jobs import NEVER_RAN

    mem = Memory.open(tmp_path / "m.db")
    try:
        mem.store.add_ingest_job(Identity("acme", "alice", "default"), "j-q", owner=stopped_process(),
                                 at=datetime.now(UTC))
        runner = JobRunner(mem)
        assert runner.get("j-q")["error"] == NEVER_RAN

        def failing(job):
            raise StoreConflict(f"{mem.store.path}: constraint failed")

        runner.submit({"id": "j-f", "tenant": "acme", "user": "alice"}, failing)
        runner.shutdown()
        failed = runner.get("j-f")
        assert failed["status"] == "failed" and str(tmp_path) not in failed["error"], failed
        assert "constraint failed" in failed["error"]
    finally:
        mem.close()
