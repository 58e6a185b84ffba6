"""Load on the REST API over loopback: N concurrent clients x M mixed requests
(search, remember, context), each client acting for its own user.

    python bench/api_load.py [--clients 32] [--requests 200] [--workers 1]

The server runs in a separate process (``archivist serve``) on an embedded SQLite store.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="archivist-load-"))
    db = str(tmp / "load.db")
    key = subprocess.run([sys.executable, "-m", "archivist.cli", "keys", "create", "--tenant", "load", "--user", "*",
                          "--db", db], capture_output=True, text=True, check=True).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "archivist.cli", "serve", "--db", db, "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(base + "/healthz", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    headers = {"Authorization": f"Bearer {key}"}
    timings: dict[str, list[float]] = {"search": [], "remember": [], "context": []}
    errors: list[str] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        rng = random.Random(n)
        user = f"user{n}"
        with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
            for i in range(args.requests):
                kind = rng.choices(["search", "remember", "context"], weights=[5, 3, 2])[0]
                t0 = time.perf_counter()
                if kind == "remember":
                    r = c.post(f"/v1/users/{user}/facts", json={"content": f"{user} note {i}: topic {rng.randint(0, 50)} "
                                                                          f"matters for project {rng.randint(0, 9)}."})
                    ok = r.status_code == 201
                elif kind == "search":
                    r = c.post(f"/v1/users/{user}/search", json={"query": f"topic {rng.randint(0, 50)}", "k": 5})
                    ok = r.status_code == 200
                else:
                    r = c.post(f"/v1/users/{user}/context", json={"query": f"what about project {rng.randint(0, 9)}?",
                                                                  "budget": 3000})
                    ok = r.status_code == 200
                elapsed = (time.perf_counter() - t0) * 1000
                with lock:
                    timings[kind].append(elapsed)
                    if not ok:
                        errors.append(f"{kind} {r.status_code} {r.text[:100]}")

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    server.terminate()
    server.wait(10)
    every = [x for v in timings.values() for x in v]

    def pct(values, q):
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))]

    print(f"\n{args.clients} clients x {args.requests} requests = {len(every)} requests in {wall:.1f} s "
          f"({len(every) / wall:.0f} req/s); errors: {len(errors)}\n")
    print("| request | n | p50 | p99 |")
    print("|---|---|---|---|")
    for kind, values in timings.items():
        print(f"| {kind} | {len(values)} | {statistics.median(values):.1f} ms | {pct(values, 0.99):.1f} ms |")
    print(f"| all | {len(every)} | {statistics.median(every):.1f} ms | {pct(every, 0.99):.1f} ms |")
    for e in errors[:5]:
        print("error:", e)


if __name__ == "__main__":
    main()
