"""A mixed read/write workload for several processes on one store, and the checks
that must hold afterwards (used by the multi-process tests and benchmarks)."""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from typing import Any

_LETTERS = str.maketrans("0123456789", "ghijklmnop")

KEY = "status"


def mixed_worker(target: str, worker: int, ops: int, users: list[str]) -> dict[str, Any]:
    """``ops`` operations as one process: plain writes, keyed supersedes and searches
    over ``users``. Returns what it wrote and anything that went wrong."""
    from ..errors import ArchivistError
    from ..memory import Memory

    written: dict[str, list[str]] = defaultdict(list)
    leaks: list[str] = []
    errors: list[str] = []
    started = time.perf_counter()
    with Memory.open(target) as mem:
        for i in range(ops):
            user = users[(worker + i) % len(users)]
            s = mem.scope(user=user)
            try:
                if i % 5 in (0, 1):
                    # a unique tag in letters: a random run of digits can read as an identifier the gate refuses
                    tag = uuid.uuid4().hex[:10].translate(_LETTERS)
                    fact = s.remember(f"Worker {worker} op {i}: {user} noted item {tag}.")
                    written[user].append(fact.id)
                elif i % 5 == 2:
                    fact = s.remember(f"Status of {user} set by worker {worker} at op {i}.", key=KEY)
                    written[user].append(fact.id)
                else:
                    query = "noted item" if i % 5 == 3 else "status worker"
                    for hit in s.search(query, k=20):
                        if hit.fact.identity.user != user:
                            leaks.append(f"{user} saw {hit.fact.id} of {hit.fact.identity.user}")
            except ArchivistError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    return {"worker": worker, "written": dict(written), "leaks": leaks, "errors": errors,
            "seconds": time.perf_counter() - started}


def check(target: str, results: list[dict[str, Any]], users: list[str]) -> dict[str, Any]:
    """No lost writes, no cross-user results, one live version per key with
    versions that only go up. Returns counts; raises AssertionError on a violation."""
    from ..memory import Memory

    lost, total = [], 0
    with Memory.open(target) as mem:
        for r in results:
            assert not r["leaks"], r["leaks"][:5]
            assert not r["errors"], r["errors"][:5]
            for user, ids in r["written"].items():
                s = mem.scope(user=user)
                for fact_id in ids:
                    total += 1
                    if mem.store.get_fact(s.identity, fact_id) is None:
                        lost.append(fact_id)
        assert not lost, f"{len(lost)} writes lost, e.g. {lost[:3]}"
        for user in users:
            s = mem.scope(user=user)
            versions = [f.version for f in s.key_history(KEY)]
            assert versions == list(range(1, len(versions) + 1)), f"{user}: versions {versions[:20]}"
            live = [f for f in s.facts() if f.key == KEY]
            assert len(live) == (1 if versions else 0) and (not live or live[0].version == versions[-1])
    return {"writes": total, "users": len(users)}
