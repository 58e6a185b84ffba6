"""Consolidation: gates, the four stages, the review queue, and all-or-nothing writes
(a process killed mid-job leaves the previous state intact)."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

from archivist.model import Status, new_id


def seed(alice, clock):
    """A scope with one of everything consolidation handles."""
    f = {}
    f["dup_old"] = alice.remember_many([{"content": "The user drinks green tea every morning.", "confidence": 0.8}],
                                       dedupe=False).saved[0]
    clock.advance(days=1)
    f["dup_new"] = alice.remember_many([{"content": "The user drinks green tea every morning!", "confidence": 0.9}],
                                       dedupe=False).saved[0]
    f["city_old"] = alice.remember("The user keeps two cats at the flat in London.")
    clock.advance(days=2)
    f["city_new"] = alice.remember("The user keeps two cats at the flat in Berlin.")
    f["tool_a"] = alice.remember_many([{"content": "The build server runs Ubuntu 22.04 LTS.", "source_type": "tool",
                                        "category": "knowledge"}]).saved[0]
    f["tool_b"] = alice.remember_many([{"content": "The build server runs Ubuntu 24.04 LTS.", "source_type": "tool",
                                        "category": "knowledge"}], dedupe=False).saved[0]
    f["expiring"] = alice.remember("The user is on call this week.", valid_until=clock.now() + timedelta(days=3))
    f["weak"] = alice.remember("The user might enjoy opera.", confidence=0.72)
    f["guess"] = alice.remember("The user probably works late.", kind="inference")
    f["keep"] = alice.remember("The user's daughter is called Mia.")
    # the same value stored again as a new version (an import or a replayed extraction can do this)
    f["editor_v1"] = alice.remember("The user's editor is Helix.", key="editor")
    f["editor_v2"] = f["editor_v1"].evolve(id=new_id(), version=2, supersedes=f["editor_v1"].id)
    with alice._store.transaction():
        alice._store.update_fact(f["editor_v1"].retired(Status.SUPERSEDED, clock.now()))
        alice._store.insert_fact(f["editor_v2"])
    return f


def test_dry_run_plans_without_writing_and_the_run_applies_it(alice, clock):
    f = seed(alice, clock)
    clock.advance(days=200)
    before = {x.id: x.status for x in alice.facts(include_candidates=True, include_history=True, include_expired=True)}

    plan = alice.consolidate(dry_run=True)

    assert plan.due and plan.trigger == "time" and not plan.applied
    ops = {(a.op, a.fact_id, a.keep_id) for a in plan.actions}
    assert ("merge", f["dup_old"].id, f["dup_new"].id) in ops
    assert ("supersede", f["city_old"].id, f["city_new"].id) in ops
    reviews = [{a.fact_id, *a.other_ids} for a in plan.actions if a.op == "review"]
    assert reviews == [{f["tool_a"].id, f["tool_b"].id}]  # tool output: no clear winner
    assert ("expire", f["expiring"].id, None) in ops
    assert ("archive", f["weak"].id, None) in ops and ("archive", f["guess"].id, None) in ops
    assert ("fold", f["editor_v1"].id, f["editor_v2"].id) in ops
    assert all(a.fact_id not in (f["keep"].id, f["editor_v2"].id) for a in plan.actions)
    after = {x.id: x.status for x in alice.facts(include_candidates=True, include_history=True, include_expired=True)}
    assert after == before and alice.review_queue() == []

    applied = alice.consolidate()

    assert applied.applied and applied.counts() == plan.counts()
    status = {x.id: x.status for x in alice.facts(include_candidates=True, include_history=True, include_expired=True)}
    assert status[f["dup_old"].id] is Status.SUPERSEDED and status[f["dup_new"].id] is Status.COMMITTED
    assert status[f["city_old"].id] is Status.SUPERSEDED
    assert status[f["expiring"].id] is Status.EXPIRED
    assert status[f["weak"].id] is Status.ARCHIVED and status[f["guess"].id] is Status.ARCHIVED
    assert status[f["editor_v1"].id] is Status.ARCHIVED and status[f["editor_v2"].id] is Status.COMMITTED
    assert alice.get(f["dup_new"].id).confidence == 0.9  # merging never raises confidence
    city = alice.history(f["city_new"].id)
    assert [x.id for x in city] == [f["city_old"].id, f["city_new"].id] and city[-1].version == 2
    (item,) = alice.review_queue()
    assert set(item["fact_ids"]) == {f["tool_a"].id, f["tool_b"].id}
    assert {h.fact.id for h in alice.search("green tea", mode="keyword")} == {f["dup_new"].id}
    assert any(e.action == "consolidate" and e.code == "merge" for e in alice.audit())
    alice.resolve_review(item["id"])
    assert alice.review_queue() == []


def test_gates(alice, clock):
    alice.remember("The user's daughter is called Mia.")
    assert alice.consolidate().trigger == "time"  # never consolidated: due
    clock.advance(hours=1)
    assert not alice.consolidate().due
    for n in range(5):
        alice.summarize_session(f"th-{n}", [{"id": "u", "role": "user", "content": "hello there, a new session"}])
    plan = alice.consolidate(dry_run=True)
    assert plan.due and plan.trigger == "sessions" and plan.new_sessions == 5
    assert alice.consolidate(force=True).trigger == "explicit"
    clock.advance(hours=25)
    assert alice.consolidate().trigger == "time"


def test_a_failure_mid_job_rolls_everything_back(alice, clock):
    seed(alice, clock)
    clock.advance(days=200)
    before = [x.as_dict() for x in alice.facts(include_candidates=True, include_history=True, include_expired=True)]

    def boom(n, action):
        if n == 3:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        alice.consolidate(on_action=boom)
    after = [x.as_dict() for x in alice.facts(include_candidates=True, include_history=True, include_expired=True)]
    assert after == before and alice.review_queue() == []
    assert alice.consolidate(dry_run=True).last_run is None


CHILD = textwrap.dedent("""
    import sys, time
    from archivist import Memory, FixedClock
    mem = Memory.open(sys.argv[1], clock=FixedClock("2027-06-01T00:00:00Z"))
    scope = mem.scope(user="alice")
    def pause(n, action):
        if n == int(sys.argv[2]):
            print("MID", flush=True)
            time.sleep(60)
    scope.consolidate(on_action=pause)
""")


def snapshot(path):
    conn = sqlite3.connect(path)
    out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
           for t in ("facts", "review_items", "consolidation_runs", "audit")}
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    return out


@pytest.mark.parametrize("kill_after", [0, 40, 150])
def test_sigkill_mid_job_leaves_the_previous_state(db_path, clock, kill_after):
    from archivist import Memory

    mem = Memory.open(db_path, clock=clock)
    alice = mem.scope(user="alice")
    alice.remember_many([{"content": f"The user's note number {i} about topic {i % 40} is kept."}
                         for i in range(200)] * 2, dedupe=False)  # 200 duplicate pairs to merge
    alice.remember_many([{"content": f"A passing thought {i}.", "confidence": 0.72} for i in range(50)])
    mem.close()
    before = snapshot(db_path)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db_path), str(kill_after)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "MID"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    assert snapshot(db_path) == before
    mem = Memory.open(db_path, clock=clock)
    assert mem.store.integrity_check() == "ok"
    plan = mem.scope(user="alice").consolidate(dry_run=True)
    assert plan.last_run is None and plan.counts()["merge"] == 200
    mem.close()
