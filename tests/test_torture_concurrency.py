"""Concurrent writers: 4 processes writing to one SQLite file at once. Every write is
there afterwards, no "database is locked" ever reaches a caller, and versioned writes
based on a version another process has already replaced are rejected (StaleWrite)."""

from __future__ import annotations

import multiprocessing as mp
import random
import time
import uuid

import pytest
import torture

from archivist.testing.workload import check

PROCESSES, WRITES = 4, torture.scale(250, 1_000)
USERS = ["ana", "bo", "chen"]


def writer(target: str, worker: int, writes: int) -> dict:
    """Plain writes, keyed supersedes and read-modify-write preference updates of one
    shared key; every exception other than StaleWrite is reported."""
    import sqlite3

    from archivist import Memory
    from archivist.errors import ArchivistError, StaleWrite

    rng = random.Random(worker)
    written: dict[str, list[str]] = {}
    accepted, stale, errors = [], 0, []
    started = time.perf_counter()
    with Memory.open(target) as mem:
        shared = mem.scope(user="shared")
        for i in range(writes):
            user = USERS[(worker + i) % len(USERS)]
            s = mem.scope(user=user)
            try:
                if i % 10 < 6:
                    fact = s.remember(f"Writer {worker} write {i}: {user} noted {uuid.uuid4().hex[:12]}.")
                    written.setdefault(user, []).append(fact.id)
                elif i % 10 < 8:
                    fact = s.remember(f"Status of {user} set by writer {worker} at write {i}.", key="status")
                    written.setdefault(user, []).append(fact.id)
                else:
                    current = {p.key: p.version for p in shared.preferences()}.get("theme", 0)
                    time.sleep(rng.uniform(0, 0.003))  # widen the read-modify-write window
                    value = f"theme by {worker}/{i}"
                    try:
                        pref = shared.set_preference("theme", value, based_on=current)
                        accepted.append((pref.version, value, current))
                    except StaleWrite:
                        stale += 1
            except (ArchivistError, sqlite3.Error) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    return {"worker": worker, "written": written, "leaks": [], "errors": errors, "accepted": accepted,
            "stale": stale, "seconds": time.perf_counter() - started}


@pytest.mark.torture
def test_four_processes_write_one_sqlite_file(tmp_path):
    from archivist import Memory

    report = torture.row(
        "Concurrent writers",
        load=f"{PROCESSES} processes × {WRITES:,} writes at once on one SQLite file (WAL)",
        faults="write-lock contention; read-modify-write races on one versioned preference of a shared user",
        inputs="60% plain remembers, 20% keyed supersedes, 20% versioned preference updates based on the version read",
        checks="every acknowledged write present; no error of any kind (no 'database is locked') reached a caller; "
               "accepted preference versions are exactly 1..N, each based on the version before it; the rest "
               "StaleWrite; key versions monotonic")
    target = str(tmp_path / "shared.db")
    Memory.open(target).close()
    with mp.get_context("spawn").Pool(PROCESSES) as pool:
        results = pool.starmap(writer, [(target, w, WRITES) for w in range(PROCESSES)])
    summary = check(target, results, USERS)
    accepted = sorted(a for r in results for a in r["accepted"])
    assert [v for v, _, _ in accepted] == list(range(1, len(accepted) + 1)), "two writers got one version"
    assert all(based_on == version - 1 for version, _, based_on in accepted), "a write skipped a version"
    with Memory.open(target) as mem:
        final = {p.key: p for p in mem.scope(user="shared").preferences()}["theme"]
    assert (final.version, final.value) == accepted[-1][:2]
    stale = sum(r["stale"] for r in results)
    assert summary["writes"] == PROCESSES * WRITES * 8 // 10 and stale + len(accepted) == PROCESSES * WRITES // 5
    slowest = max(r["seconds"] for r in results)
    report.measured.append(f"{summary['writes']:,} fact writes all present; {len(accepted)} preference writes "
                           f"accepted, {stale} rejected as stale; 0 errors; slowest process {slowest:.1f} s "
                           f"({PROCESSES * WRITES / slowest:,.0f} writes/s together)")
