"""Load on the REST API over loopback against the in-process ceiling, in one run.

N concurrent clients x M mixed requests (search 5 : remember 3 : context 2), each client
acting for its own user, sent to ``archivist serve --workers W`` in a separate process;
then the same request mix called directly on a memory (no HTTP) from W threads, on a
fresh store of the same backend: the ceiling one process reaches. Target (issue 33):
the server's throughput is at least 70 % of that ceiling, with no errors.

    python bench/api_load.py [--clients 32] [--requests 200] [--workers 1,2] [--postgres]

Nothing here is a unit test: it prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from archivist import Memory

KINDS, WEIGHTS = ["search", "remember", "context"], [5, 3, 2]


def plan(n: int, requests: int) -> list[tuple[str, str]]:
    """Client ``n``'s requests: (kind, text), the same for the server and the ceiling."""
    rng = random.Random(n)
    user = f"user{n}"
    out = []
    for i in range(requests):
        kind = rng.choices(KINDS, weights=WEIGHTS)[0]
        if kind == "remember":
            text = f"{user} note {i}: topic {rng.randint(0, 50)} matters for project {rng.randint(0, 9)}."
        elif kind == "search":
            text = f"topic {rng.randint(0, 50)}"
        else:
            text = f"what about project {rng.randint(0, 9)}?"
        out.append((kind, text))
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def drive(clients: int, requests: int, call: Callable[[int, str, str], bool], threads: int) -> dict:
    """Run every client's plan on ``threads`` threads (each takes whole clients in turn)."""
    timings: dict[str, list[float]] = {k: [] for k in KINDS}
    errors: list[str] = []
    lock = threading.Lock()
    queue = list(range(clients))

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                n = queue.pop(0)
            for kind, text in plan(n, requests):
                t0 = time.perf_counter()
                try:
                    ok = call(n, kind, text)
                except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                    ok, text = False, f"{type(exc).__name__}: {exc}"
                elapsed = (time.perf_counter() - t0) * 1000
                with lock:
                    timings[kind].append(elapsed)
                    if not ok:
                        errors.append(f"{kind}: {text[:120]}")

    started = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    wall = time.perf_counter() - started
    every = [x for v in timings.values() for x in v]
    return {"n": len(every), "wall": wall, "rate": len(every) / wall, "errors": errors,
            "p50": statistics.median(every), "p99": pct(every, 0.99), "kinds": timings}


def target(backend: str, tmp: Path, name: str) -> str:
    if backend == "sqlite":
        return str(tmp / f"{name}.db")
    from archivist.testing.postgres import fresh_database

    return fresh_database()


def served(db: str, workers: int, clients: int, requests: int) -> dict:
    key = subprocess.run([sys.executable, "-m", "archivist.cli", "keys", "create", "--tenant", "load", "--user", "*",
                          "--db", db], capture_output=True, text=True, check=True).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "archivist.cli", "serve", "--db", db, "--port", str(port),
                               "--workers", str(workers)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    ready = 0
    for _ in range(1200):  # every worker answers before the clock starts
        try:
            httpx.get(base + "/healthz", timeout=1)
            ready += 1
            if ready >= 4 * workers:
                break
        except httpx.TransportError:
            time.sleep(0.05)
    local = threading.local()
    headers = {"Authorization": f"Bearer {key}"}

    def call(n: int, kind: str, text: str) -> bool:
        if getattr(local, "client", None) is None:
            local.client = httpx.Client(base_url=base, headers=headers, timeout=60)
        c, user = local.client, f"user{n}"
        if kind == "remember":
            return c.post(f"/v1/users/{user}/facts", json={"content": text}).status_code in (200, 201)
        if kind == "search":
            return c.post(f"/v1/users/{user}/search", json={"query": text, "k": 5}).status_code == 200
        return c.post(f"/v1/users/{user}/context", json={"query": text, "budget": 3000}).status_code == 200

    # warm every worker (models load on first use) on connections of their own, which the
    # kernel spreads over the workers; then measure
    for n in range(8 * workers):
        for kind in KINDS:
            local.client = None
            call(10_000 + n, kind, f"warm up: the user likes tea {n}.")
    local.client = None
    try:
        return drive(clients, requests, call, clients)
    finally:
        server.terminate()
        server.wait(30)


def in_process(db: str, threads: int, clients: int, requests: int) -> dict:
    """Measured in a process of its own, as each server worker is (no cache warmed by
    an earlier run of the same texts)."""
    out = subprocess.run([sys.executable, __file__, "--ceiling", db, str(threads), str(clients), str(requests)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ceiling(db: str, threads: int, clients: int, requests: int) -> dict:
    with Memory.open(db) as mem:
        def call(n: int, kind: str, text: str) -> bool:
            scope = mem.scope("load", f"user{n}")
            if kind == "remember":
                scope.remember_with_outcome(text)
            elif kind == "search":
                scope.search(text, k=5)
            else:
                scope.context(text, budget=3000).to_messages()
            return True

        for kind in KINDS:
            call(10_000, kind, "warm up: the user likes tea.")
        return drive(clients, requests, call, threads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--workers", default=f"1,{os.cpu_count() or 1}", help="server worker counts to measure")
    ap.add_argument("--postgres", action="store_true", help="also on PostgreSQL (embedded server)")
    ap.add_argument("--ceiling", nargs=4, help=argparse.SUPPRESS)  # DB THREADS CLIENTS REQUESTS, in a subprocess
    args = ap.parse_args()
    if args.ceiling:
        db, threads, clients, requests = args.ceiling
        print(json.dumps(ceiling(db, int(threads), int(clients), int(requests))))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="archivist-load-") as tmp:
        for backend in ("sqlite", "postgres") if args.postgres else ("sqlite",):
            for workers in sorted({int(w) for w in args.workers.split(",")}):
                top = in_process(target(backend, Path(tmp), f"ceiling{workers}"), workers, args.clients,
                                 args.requests)
                print(f"  {backend} in process on {workers} threads: {top['rate']:,.0f}/s", file=sys.stderr,
                      flush=True)
                server = served(target(backend, Path(tmp), f"served{workers}"), workers, args.clients, args.requests)
                print(f"  {backend} served by {workers} workers: {server['rate']:,.0f}/s, "
                      f"{len(server['errors'])} errors", file=sys.stderr, flush=True)
                rows.append((backend, workers, top, server))

    print()
    print(f"{args.clients} clients x {args.requests} requests (search 5 : remember 3 : context 2), "
          f"{os.cpu_count()} cores; the ceiling is the same mix called in process on W threads")
    print()
    print("| backend | workers W | in-process ceiling | served | served ÷ ceiling | target | errors "
          "| p50 | p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for backend, workers, top, server in rows:
        ratio = server["rate"] / top["rate"]
        print(f"| {backend} | {workers} | {top['rate']:,.0f} req/s | {server['rate']:,.0f} req/s | {ratio:.2f}× "
              f"| ≥ 0.70×: {'met' if ratio >= 0.7 and not server['errors'] else 'not met'} "
              f"| {len(server['errors'])} | {server['p50']:.1f} ms | {server['p99']:.1f} ms |")
    print()
    print("| backend | workers | request | n | p50 | p99 |")
    print("|---|---|---|---|---|---|")
    for backend, workers, _, server in rows:
        for kind, values in server["kinds"].items():
            if values:
                print(f"| {backend} | {workers} | {kind} | {len(values)} | {statistics.median(values):.1f} ms "
                      f"| {pct(values, 0.99):.1f} ms |")
    for _, _, _, server in rows:
        for e in server["errors"][:5]:
            print("error:", e)


if __name__ == "__main__":
    main()
