"""8 worker processes x 500 mixed writes and searches on one database (SQLite file
and PostgreSQL): no lost writes, no cross-user results, versions monotonic per key."""

import multiprocessing as mp

from archivist.testing.workload import check, mixed_worker

WORKERS, OPS = 8, 500
USERS = [f"user{i}" for i in range(6)]


def test_eight_processes_of_mixed_work(store_target):
    from archivist import Memory

    target = store_target

    Memory.open(target).close()  # create the schema once, before the crowd arrives
    with mp.get_context("spawn").Pool(WORKERS) as pool:
        results = pool.starmap(mixed_worker, [(target, w, OPS, USERS) for w in range(WORKERS)])
    summary = check(target, results, USERS)
    assert summary["writes"] == WORKERS * OPS * 3 // 5
    slowest = max(r["seconds"] for r in results)
    print(f"\n{target.split('?')[0][-40:]}: {WORKERS}x{OPS} ops, slowest worker {slowest:.1f} s")
