"""Concurrency: several handles (each its own connection) writing at once lose
nothing, keep one live version per key and let exactly one of two writers based on
the same version win."""

from __future__ import annotations

import threading

from ...errors import StaleWrite, StoreConflict, StoreLocked

__all__ = [
    "test_parallel_writers_lose_nothing",
    "test_racing_versioned_writes_have_exactly_one_winner",
    "test_racing_supersedes_keep_one_live_version",
]


def _run(workers):
    errors: list[BaseException] = []

    def wrap(fn):
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors]


def test_parallel_writers_lose_nothing(backend):
    n, per = 4, 40

    def worker(w):
        def go():
            with backend.memory() as mem:
                for i in range(per):
                    user = f"user{(w + i) % 3}"  # writers share users
                    mem.scope(user=user).remember(f"Worker {w} wrote note {i} about {user}.")
        return go

    _run([worker(w) for w in range(n)])
    with backend.memory() as mem:
        total = sum(len(mem.scope(user=f"user{u}").facts()) for u in range(3))
        assert total == n * per
        for u in range(3):
            s = mem.scope(user=f"user{u}")
            assert all(h.fact.identity.user == f"user{u}" for h in s.search("worker wrote note", k=200))


def test_racing_versioned_writes_have_exactly_one_winner(backend):
    with backend.memory() as mem:
        base = mem.scope(user="alice").save_task("t", "fix checkout")
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def writer(k):
        def go():
            with backend.memory() as mem:
                s = mem.scope(user="alice")
                barrier.wait()
                try:
                    s.save_task("t", "fix checkout", done=[f"step {k}"], based_on=base.version)
                    outcomes.append("written")
                except StaleWrite:
                    outcomes.append("stale")
        return go

    _run([writer(k) for k in range(4)])
    assert sorted(outcomes) == ["stale", "stale", "stale", "written"]
    with backend.memory() as mem:
        assert mem.scope(user="alice").task("t").version == 2


def test_racing_supersedes_keep_one_live_version(backend):
    with backend.memory() as mem:
        mem.scope(user="alice").remember("The user lives in city 0.", key="home_city")
    barrier = threading.Barrier(4)

    def writer(k):
        def go():
            with backend.memory() as mem:
                s = mem.scope(user="alice")
                barrier.wait()
                for i in range(5):
                    try:
                        s.remember(f"The user lives in city {k}-{i}.", key="home_city")
                    except (StoreConflict, StoreLocked):
                        pass  # a refused write is allowed; a forked chain is not
        return go

    _run([writer(k) for k in range(4)])
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        assert len(s.facts()) == 1
        versions = [f.version for f in s.key_history("home_city")]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
        assert s.facts()[0].version == max(versions)
