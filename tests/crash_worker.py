"""The process the crash-recovery torture test kills: endless bulk writes, keyed
supersedes, versioned preferences, forgets, reindexes and consolidations on one SQLite
file, each step announced on stdout when it begins, what it committed, and when it is done.

    python tests/crash_worker.py DB SEED DAY
"""

from __future__ import annotations

import random
import sys
from datetime import timedelta

from archivist import FixedClock, Memory
from archivist.errors import StaleWrite
from archivist.storage.sqlite import SQLiteStore
from archivist.testing.embedders import HashEmbedder

WORDS = ["coffee", "python", "中文", "数据库", "tea", "deploy", "解释", "garden", "部署", "review", "oncall", "kafka"]
USERS = ["ana", "bo", "chen"]


def say(*parts) -> None:
    print(*parts, flush=True)


def main(path: str, seed: int, day: int) -> None:
    rng = random.Random(seed)
    clock = FixedClock("2026-01-01T00:00:00+00:00")
    clock.advance(days=day)
    mem = Memory(SQLiteStore(path), clock=clock, embedder=HashEmbedder())
    say("READY")
    n = 0
    while True:
        n += 1
        scope = mem.scope(user=rng.choice(USERS))
        op = rng.choices(["bulk", "keyed", "preference", "forget", "consolidate", "reindex"],
                         weights=[40, 20, 10, 10, 15, 5])[0]
        say("BEGIN", n, op)
        clock.advance(hours=6)
        if op == "bulk":
            items = []
            for i in range(rng.randint(20, 120)):
                text = f"{' '.join(rng.sample(WORDS, 3))} note {seed}-{n}-{i}"
                until = clock.now() + timedelta(days=rng.randint(1, 20)) if rng.random() < 0.2 else None
                items.append({"content": text, "valid_until": until})
                if rng.random() < 0.15:
                    items.append({"content": text})  # a duplicate for consolidation to merge
            report = scope.remember_many(items, dedupe=False)
            say("COMMITTED", n, scope.identity.user, *[f.id for f in report.saved])
        elif op == "keyed":
            fact = scope.remember(f"The {rng.choice(['editor', 'city', 'shell'])} of the user is "
                                  f"{rng.choice(WORDS)} {seed}-{n}.", key=rng.choice(["editor", "city", "shell"]))
            say("COMMITTED", n, scope.identity.user, fact.id)
        elif op == "preference":
            current = {p.key: p.version for p in scope.preferences()}.get("style", 0)
            try:
                scope.set_preference("style", f"v{seed}-{n}", based_on=current)
            except StaleWrite:
                pass
            say("COMMITTED", n, scope.identity.user)
        elif op == "forget":
            live = scope.facts()
            if live:
                victim = rng.choice(live)
                # said before forgetting: a kill between the commit and this line must not
                # make a forgotten fact look like a lost write
                say("FORGOT", n, scope.identity.user, victim.id)
                scope.forget(victim.id)
        elif op == "consolidate":
            plan = scope.consolidate(force=True)
            say("CONSOLIDATED", n, scope.identity.user, len(plan.actions) - len(plan.skipped))
        else:
            mem.reindex()
        say("DONE", n)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
