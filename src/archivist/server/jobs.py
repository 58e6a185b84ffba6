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
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memory import Memory

JOB_TTL = 3600.0  # seconds a finished job's report stays readable
MAX_JOBS = 10_000  # reports kept at most


class JobRunner:
    def __init__(self, memory: Memory, *, workers: int = 2, ttl: float = JOB_TTL, max_jobs: int = MAX_JOBS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.max_jobs, self.clock = ttl, max_jobs, clock
        self.workers = workers
        self.wait_on_forget = 60.0  # seconds a forget waits for the user's running jobs
        self._memory = memory
        self._jobs: dict[str, dict[str, Any]] = {}
        self._done: dict[str, threading.Event] = {}  # set when a job has run (or will never run)
        self._pending: dict[str, deque] = {}  # tenant -> its queued (job, work), oldest first
        self._turns: deque[str] = deque()  # tenants with queued jobs, in turn
        self._running: dict[str, int] = {}  # tenant -> jobs running now
        self._deferred = 0  # pool turns that found every waiting tenant at its share
        self._ended: dict[str, float] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        memory.attach(self)

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            self._prune()
            return self._jobs.get(job_id)

    def submit(self, job: dict[str, Any], work: Callable[[dict[str, Any]], None]) -> None:
        """Queue ``work(job)``; ``job`` needs ``id``, ``tenant`` and ``user``. Jobs run in turn
        by tenant (round robin), and one tenant runs at most ``workers - 1`` jobs at once, so a
        worker is always free for another tenant: large jobs of one tenant never starve another."""
        with self._lock:
            self._prune()
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="archivist-ingest")
            self._jobs[job["id"]] = job
            self._done[job["id"]] = threading.Event()
            tenant = job["tenant"]
            if tenant not in self._pending:
                self._pending[tenant] = deque()
                self._turns.append(tenant)
            self._pending[tenant].append((job, work))
            self._pool.submit(self._run_next)

    def _next(self) -> tuple[dict[str, Any], Callable[[dict[str, Any]], None]] | None:
        """The next job to run, tenants in turn, none of a tenant at its share (lock held)."""
        share = max(1, self.workers - 1)  # one worker always left for another tenant's job
        for _ in range(len(self._turns)):
            tenant = self._turns[0]
            self._turns.rotate(-1)
            queue = self._pending.get(tenant)
            if queue and self._running.get(tenant, 0) < share:
                job, work = queue.popleft()
                if not queue:
                    del self._pending[tenant]
                    self._turns.remove(tenant)
                self._running[tenant] = self._running.get(tenant, 0) + 1
                return job, work
        return None

    def _run_next(self) -> None:
        with self._lock:
            picked = self._next()
            if picked is None:  # every waiting tenant is at its share: a job that ends runs this turn again
                self._deferred += bool(self._pending)
                return
        job, work = picked
        try:
            if not job.get("cancelled"):
                try:
                    work(job)
                finally:
                    if job.get("cancelled"):  # its user was forgotten while it ran: its writes go too
                        self._memory.forget_user(job["tenant"], job["user"], discard_held=False)
                        job["status"] = "cancelled"
        finally:
            with self._lock:
                self._ended[job["id"]] = self.clock()
                self._running[job["tenant"]] -= 1
                done = self._done.get(job["id"])
                again, self._deferred = self._deferred, 0
                pool = self._pool
            if done is not None:
                done.set()
            for _ in range(again):
                if pool is not None:
                    pool.submit(self._run_next)

    def discard_user(self, tenant: str, user: str, timeout: float | None = None) -> int:
        """Cancel the user's queued jobs, wait for their running ones, delete their reports."""
        with self._lock:
            mine = [jid for jid, job in self._jobs.items() if (job["tenant"], job["user"]) == (tenant, user)]
            queued = self._pending.get(tenant, deque())
            waiting = {job["id"] for job, _ in queued if job["user"] == user}
            for jid in mine:
                self._jobs[jid]["status"] = "cancelled"
                self._jobs[jid]["cancelled"] = True
            if waiting:  # not started: they never run
                kept = deque((job, work) for job, work in queued if job["id"] not in waiting)
                if kept:
                    self._pending[tenant] = kept
                else:
                    self._pending.pop(tenant, None)
                    if tenant in self._turns:
                        self._turns.remove(tenant)
            running = [self._done[jid] for jid in mine if jid not in waiting and jid not in self._ended
                       and jid in self._done]
        deadline = time.monotonic() + (self.wait_on_forget if timeout is None else timeout)
        for done in running:
            done.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            for jid in mine:
                self._forget_job(jid)
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
        """Run what is queued, then stop the workers."""
        with self._lock:
            events = [e for jid, e in self._done.items() if jid not in self._ended and not self._jobs[jid].get("cancelled")]
        for done in events:
            done.wait()
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
        self._done.pop(jid, None)
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
