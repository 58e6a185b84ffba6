"""Crash recovery: a process doing bulk writes, supersedes, forgets, reindexes and
consolidation on one SQLite file is SIGKILLed at random points, again and again on
the same file. After every kill the file is intact, every committed write is there,
the keyword index equals a rebuild, vectors belong to live facts only (and the missing
ones are filled in), and no consolidation is half-applied."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import torture

from archivist import FixedClock, Memory
from archivist.storage.sqlite import SQLiteStore
from archivist.testing.embedders import HashEmbedder

WORKER = Path(__file__).with_name("crash_worker.py")
KILLS = torture.scale(6, 50)
RETIRED = ("superseded", "expired", "archived")


def run_and_kill(db: Path, seed: int, rng: random.Random) -> list[list[str]]:
    """Start the worker, let it work for a random while, SIGKILL it; returns its lines."""
    child = subprocess.Popen([sys.executable, str(WORKER), str(db), str(seed), str(seed * 5)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "READY", child.stderr.read()
    time.sleep(rng.uniform(0.05, 2.5))
    os.kill(child.pid, signal.SIGKILL)
    # read through the same file objects as the READY line: ``communicate`` reads the raw
    # pipes and would lose what ``readline`` had already buffered past READY
    out, err = child.stdout.read(), child.stderr.read()
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, f"the worker ended by itself: {err[-2000:]}"
    # only whole lines were announced: a kill can cut the last one short
    whole = out.split("\n")[:-1]
    return [line.split() for line in whole if line.strip()]


def fts_rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT rowid, body FROM facts_fts ORDER BY rowid").fetchall()
    finally:
        conn.close()


def check_consolidations(conn: sqlite3.Connection) -> int:
    """Every run record has all its audit rows and retired facts; no audit row of a
    consolidation lacks its run record. Returns the number of runs checked."""
    runs = conn.execute("SELECT tenant, user_id, agent, started_at, plan FROM consolidation_runs").fetchall()
    audited = Counter(conn.execute("SELECT tenant, user_id, agent, at FROM audit WHERE action = 'consolidate'"))
    for tenant, user, agent, at, plan_json in runs:
        plan = json.loads(plan_json)
        applied = len(plan["actions"]) - len(plan["skipped"])
        assert audited.pop((tenant, user, agent, at), 0) == applied, f"run at {at}: audit rows missing"
        skipped = Counter(plan["skipped"])
        for action in plan["actions"]:
            if skipped[action["fact_id"]]:
                skipped[action["fact_id"]] -= 1
                continue
            if action["op"] in ("merge", "supersede", "expire", "archive", "fold"):
                status = conn.execute("SELECT status FROM facts WHERE id = ?", (action["fact_id"],)).fetchone()
                assert status is None or status[0] in RETIRED, f"run at {at}: {action['op']} not applied"
    assert not audited, f"consolidation audit rows without a run record: {list(audited)[:3]}"
    return len(runs)


@pytest.mark.torture
def test_sigkill_at_random_points_never_leaves_a_broken_store(tmp_path):
    report = torture.row(
        "Crash recovery (SIGKILL)",
        load=f"{KILLS} runs of a writer on one growing SQLite file: bulk writes of 20–120 facts with vectors, "
             "keyed supersedes, versioned preferences, forgets, reindexes, forced consolidations",
        faults=f"SIGKILL after a random 0.05–2.5 s, {KILLS} times",
        inputs="random operation mix (seeded per run); duplicates and expiring facts for consolidation to act on",
        checks="PRAGMA integrity_check ok; every write announced as committed is present (unless the worker forgot "
               "it); keyword index equals a rebuild; every vector belongs to a live fact; missing vectors are filled "
               "in; no consolidation half-applied")
    db = tmp_path / "crash.db"
    rng = random.Random(20261201)
    committed: dict[str, str] = {}
    forgotten: set[str] = set()
    interrupted, runs_checked, filled = Counter(), 0, 0
    for kill in range(KILLS):
        lines = run_and_kill(db, kill + 1, rng)
        started = [line for line in lines if line[0] == "BEGIN"]
        finished = {line[1] for line in lines if line[0] == "DONE"}
        if started and started[-1][1] not in finished:
            interrupted[started[-1][2]] += 1
        for line in lines:
            if line[0] == "COMMITTED":
                committed.update((fact_id, line[2]) for fact_id in line[3:])
            elif line[0] == "FORGOT":
                forgotten.add(line[3])

        mem = Memory(SQLiteStore(db), clock=FixedClock("2030-01-01T00:00:00+00:00"), embedder=HashEmbedder())
        try:
            assert mem.store.integrity_check() == "ok"
            lost = [f for f, user in committed.items() if f not in forgotten
                    and mem.store.get_fact(mem.scope(user=user).identity, f) is None]
            assert not lost, f"after kill {kill + 1}: {len(lost)} committed writes lost, e.g. {lost[:3]}"
            conn = sqlite3.connect(db)
            orphans = conn.execute("SELECT count(*) FROM fact_vectors v LEFT JOIN facts f ON f.seq = v.seq "
                                   "WHERE f.seq IS NULL OR f.status != 'committed'").fetchone()[0]
            assert orphans == 0, f"{orphans} vectors of facts that are not live"
            runs_checked = check_consolidations(conn)
            conn.close()
            before = fts_rows(db)
            mem.reindex()
            assert fts_rows(db) == before, f"after kill {kill + 1}: the keyword index differs from a rebuild"
            filled += mem.embed_missing()
            assert mem.store.facts_without_vectors(limit=1) == []
        finally:
            mem.close()
    conn = sqlite3.connect(db)
    facts = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
    conn.close()
    report.measured.append(f"{KILLS} kills; interrupted mid-step: "
                           + ", ".join(f"{op} {n}" for op, n in sorted(interrupted.items()))
                           + f"; {len(committed):,} committed writes checked, 0 lost; {facts:,} fact rows at the end; "
                           f"{runs_checked} consolidation runs checked; {filled} vectors filled in after kills")
    assert sum(interrupted.values()) >= KILLS // 3, "kills should mostly land inside a step"
