"""Background ingest jobs of ``archivist serve``: bounded, expiring, and reached by
forgetting.

A job runs in a small thread pool. Its report is kept for ``ttl`` seconds after it ends
and at most ``max_jobs`` reports are kept (the oldest finished go first). The runner
registers with the memory like an update queue does, so ``Memory.forget_user`` —
through REST, the CLI or the library — calls :meth:`JobRunner.discard_user`: queued jobs
of that user are cancelled, running ones are waited out (up to ``wait_on_forget``
seconds), and every report of that user is deleted. A job still running when the wait
ends is marked cancelled: when it finishes, the user is forgotten again at the store, so
what it wrote after the forget does not bring the user back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

JOB_TTL = 3600.0  # seconds a finished job's report stays readable
MAX_JOBS = 10_000  # reports kept at most


class JobRunner:
    def __init__(self, memory: Any, *, workers: int = 2, ttl: float = JOB_TTL, max_jobs: int = MAX_JOBS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.max_jobs, self.clock = ttl, max_jobs, clock
        self.workers = workers
        self.wait_on_forget = 60.0  # seconds a forget waits for the user's running jobs
        self._memory = memory
        self._jobs: dict[str, dict[str, Any]] = {}
        self._futures: dict[str, Future] = {}
        self._ended: dict[str, float] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        registry = getattr(memory, "_queues", None)
        if registry is not None:
            registry.add(self)

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            self._prune()
            return self._jobs.get(job_id)

    def submit(self, job: dict[str, Any], work: Callable[[dict[str, Any]], None]) -> None:
        """Run ``work(job)`` in the pool; ``job`` needs ``id``, ``tenant`` and ``user``."""
        def run() -> None:
            if job.get("cancelled"):
                return
            try:
                work(job)
            finally:
                if job.get("cancelled"):  # its user was forgotten while it ran: its writes go too
                    self._memory.store.forget_user(job["tenant"], job["user"])
                    job["status"] = "cancelled"
                with self._lock:
                    self._ended[job["id"]] = self.clock()

        with self._lock:
            self._prune()
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="archivist-ingest")
            self._jobs[job["id"]] = job
            self._futures[job["id"]] = self._pool.submit(run)

    def discard_user(self, tenant: str, user: str, timeout: float | None = None) -> int:
        """Cancel the user's queued jobs, wait for their running ones, delete their reports."""
        with self._lock:
            mine = [jid for jid, job in self._jobs.items() if (job["tenant"], job["user"]) == (tenant, user)]
            running = []
            for jid in mine:
                self._jobs[jid]["status"] = "cancelled"
                self._jobs[jid]["cancelled"] = True
                future = self._futures.get(jid)
                if future is not None and not future.cancel():
                    running.append(future)
        wait(running, timeout=self.wait_on_forget if timeout is None else timeout)
        with self._lock:
            for jid in mine:
                self._jobs.pop(jid, None)
                self._futures.pop(jid, None)
                self._ended.pop(jid, None)
        return len(mine)

    def discard_words(self, tenant: str, user: str, quotes: list[str]) -> int:
        """A fact of the user was forgotten: its words leave every report of the user's jobs
        (as written, one-lined, escaped or JSON-quoted); returns the reports changed."""
        from ..storage.rows import redaction_needles

        needles = redaction_needles(quotes)
        changed = 0
        with self._lock:
            for job in self._jobs.values():
                if (job["tenant"], job["user"]) == (tenant, user) and job.get("report") is not None:
                    scrubbed = _scrub(job["report"], needles)
                    if scrubbed != job["report"]:
                        job["report"] = scrubbed
                        changed += 1
        return changed

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _prune(self) -> None:
        """Drop reports past their TTL, then the oldest finished beyond the bound (lock held)."""
        now = self.clock()
        for jid in [j for j, ended in self._ended.items() if now - ended > self.ttl]:
            self._forget_job(jid)
        if len(self._jobs) > self.max_jobs:
            for jid in sorted(self._ended, key=self._ended.get)[: len(self._jobs) - self.max_jobs]:
                self._forget_job(jid)

    def _forget_job(self, jid: str) -> None:
        self._jobs.pop(jid, None)
        self._futures.pop(jid, None)
        self._ended.pop(jid, None)


def _scrub(value: Any, needles: list[str]) -> Any:
    """``value`` (a JSON-ready report) with every needle replaced in every string."""
    if isinstance(value, str):
        for needle in needles:
            value = value.replace(needle, "[forgotten]")
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, needles) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, needles) for v in value]
    return value
