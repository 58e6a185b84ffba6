"""Erasure is final (issue 19 #4): forgetting a user cancels and waits out that user's
queued and running ingest jobs in ``archivist serve``, and deletes their reports; job
reports expire and are bounded."""

import time

from fastapi.testclient import TestClient

from archivist import Memory
from archivist.server.app import create_app
from archivist.server.jobs import JobRunner
from archivist.server.keys import create_key


def conversation(user, n):
    said = [f"I work at Company{user} as a data engineer.", f"I live in City{user} now.",
            f"My favourite editor is Helix{user}."]
    return [{"id": f"{user}-{i}", "role": "user" if i % 2 == 0 else "assistant",
             "content": said[(i // 2) % 3] if i % 2 == 0 else "Noted."} for i in range(n)]


def test_a_forget_racing_heavy_ingest_leaves_nothing_50_times(tmp_path):
    mem = Memory.open(tmp_path / "m.db")
    key = create_key(mem.store, tenant="acme", users=["*"], role="admin")[1]
    headers = {"Authorization": f"Bearer {key}"}
    try:
        with TestClient(create_app(mem)) as c:
            for round_ in range(50):
                others = [c.post(f"/v1/users/o{round_}-{k}/messages", json={"messages": conversation(f"o{k}", 40)},
                                 headers=headers).json()["job_id"] for k in range(3)]
                victim = f"x{round_}"
                job = c.post(f"/v1/users/{victim}/messages", json={"messages": conversation(victim, 40)},
                             headers=headers).json()["job_id"]
                assert c.delete(f"/v1/users/{victim}", headers=headers).status_code == 200
                deadline = time.monotonic() + 60
                while any(c.get(f"/v1/jobs/{j}", headers=headers).json()["status"] in ("queued", "running")
                          for j in others) and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert c.get(f"/v1/users/{victim}/facts", headers=headers).json()["total"] == 0, round_
                assert c.get(f"/v1/jobs/{job}", headers=headers).status_code == 404  # its report went too
                assert mem.scope("acme", victim).summaries() == [] and mem.scope("acme", victim).traces() == []
            assert c.get("/v1/users/o49-0/facts", headers=headers).json()["total"] > 0  # others were kept
    finally:
        mem.close()


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_job_reports_expire_and_are_bounded(tmp_path):
    mem = Memory.open(tmp_path / "m.db")
    clock = Clock()
    runner = JobRunner(mem, ttl=60, max_jobs=5, clock=clock)
    try:
        for i in range(8):
            runner.submit({"id": f"j{i}", "tenant": "t", "user": "u"}, lambda job: job.update(status="done"))
            time.sleep(0.01)
        runner.shutdown()
        assert runner.get("j7")["status"] == "done"
        assert sum(runner.get(f"j{i}") is not None for i in range(8)) == 5  # the oldest finished went
        clock.now = 61
        assert runner.get("j7") is None  # past its TTL
    finally:
        mem.close()


def test_one_tenants_large_jobs_leave_a_worker_for_another_tenant(tmp_path):
    """Two slow ingests of one tenant never hold every worker: a job another tenant submits
    after them runs while they are still running (round robin by tenant, one worker kept)."""
    import threading

    mem = Memory.open(tmp_path / "m.db")
    runner = JobRunner(mem, workers=2)
    release, started = threading.Event(), []
    order: list[str] = []

    def slow(job):
        started.append(job["id"])
        order.append(job["id"])
        release.wait(20)

    def quick(job):
        order.append(job["id"])

    try:
        runner.submit({"id": "a1", "tenant": "big", "user": "u"}, slow)
        runner.submit({"id": "a2", "tenant": "big", "user": "u"}, slow)
        runner.submit({"id": "b1", "tenant": "small", "user": "v"}, quick)
        for _ in range(200):
            if "b1" in order:
                break
            time.sleep(0.02)
        assert "b1" in order and "a2" not in order  # the other tenant ran while the big tenant's first job held on
    finally:
        release.set()
        runner.shutdown()
    assert sorted(order) == ["a1", "a2", "b1"]
