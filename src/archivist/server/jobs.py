"""Background ingest jobs of ``archivist serve``: durable, shared by its processes,
bounded, expiring, and reached by forgetting.

A job is a row of the store (:mod:`archivist.storage.core.jobs`), so a job queued
through one worker process of ``serve --workers N`` is polled through any other. It runs
in a small thread pool of the process that accepted it. Its report is kept for ``ttl``
seconds after it ends and at most ``max_jobs`` reports are kept (the oldest finished go
first). A job whose process stopped before it finished (killed, restarted) reads as
``failed``; what it had committed stays.

The runner registers with the memory like an update queue does, so
``Memory.forget_user`` — through REST, the CLI or the library, in any process — calls
:meth:`JobRunner.discard_user`: the user's open jobs are flagged cancelled in the store
(queued ones, here or in another process, never start), running ones are waited out (up
to ``wait_on_forget`` seconds), and the store's forget deletes every report of the user.
A job still running when the wait ends finds its flag (or its row gone) when it
finishes, and undoes what it wrote — only that: what the user wrote after the forget
returned stays.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import FactNotFound
from ..model import Identity, Status
from ..storage.core.erasure import process_gone, this_process

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger("archivist.server.jobs")

JOB_TTL = 3600.0  # seconds a finished job's report stays readable
MAX_JOBS = 10_000  # reports kept at most
STOPPED = "the server process running this job stopped before it finished; what it had committed is kept"
NEVER_RAN = "the server process that queued this job stopped before running it; nothing was extracted: send it again"


class JobRunner:
    def __init__(self, memory: Memory, *, workers: int = 2, ttl: float = JOB_TTL, max_jobs: int = MAX_JOBS,
                 clock: Callable[[], float] = time.time) -> None:
        self.ttl, self.max_jobs, self.clock = ttl, max_jobs, clock
        self.workers = workers
        self.wait_on_forget = 60.0  # seconds a forget waits for the user's running jobs
        self._memory = memory
        self._store = memory.store
        self._jobs: dict[str, dict[str, Any]] = {}  # this process's jobs until they end
        self._done: dict[str, threading.Event] = {}  # set when a job has run (or will never run)
        self._pending: dict[str, deque] = {}  # tenant -> its queued (job, work), oldest first
        self._turns: deque[str] = deque()  # tenants with queued jobs, in turn
        self._running: dict[str, int] = {}  # tenant -> jobs running now
        self._deferred = 0  # pool turns that found every waiting tenant at its share
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        memory.attach(self)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def get(self, job_id: str) -> dict[str, Any] | None:
        """The job as the API shows it, whichever process runs it; None once its report
        expired or its user was forgotten."""
        row = self._store.ingest_job(job_id)
        if row is None or (row.ended_at is not None and row.ended_at < self._now() - timedelta(seconds=self.ttl)):
            return None
        job = {"id": row.id, "status": row.status, "tenant": row.tenant, "user": row.user, "agent": row.agent,
               "report": None, **(row.result or {})}
        if row.status in ("queued", "running") and process_gone(row.owner):
            job.update(status="failed", error=STOPPED if row.status == "running" else NEVER_RAN)
        return job

    def submit(self, job: dict[str, Any], work: Callable[[dict[str, Any]], None]) -> None:
        """Queue ``work(job)``; ``job`` needs ``id``, ``tenant`` and ``user`` (and may name an
        ``agent``). ``work`` fills in ``report``, ``error``, ``consolidation`` and ends with
        ``status`` ``done`` or ``failed``. Jobs run in turn by tenant (round robin), and one
        tenant runs at most ``workers - 1`` jobs at once, so a worker is always free for
        another tenant: large jobs of one tenant never starve another."""
        job.setdefault("agent", "default")
        self._store.add_ingest_job(_identity(job), job["id"], owner=this_process(), at=self._now())
        with self._lock:
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
            # a job flagged anywhere (its user is being forgotten) never starts
            if not job.get("cancelled") and self._store.start_ingest_job(job["id"], owner=this_process()):
                self._run(job, work)
        finally:
            with self._lock:
                self._running[job["tenant"]] -= 1
                self._jobs.pop(job["id"], None)
                done = self._done.pop(job["id"], None)
                again, self._deferred = self._deferred, 0
                pool = self._pool
            if done is not None:
                done.set()
            for _ in range(again):
                if pool is not None:
                    pool.submit(self._run_next)

    def _run(self, job: dict[str, Any], work: Callable[[dict[str, Any]], None]) -> None:
        try:
            work(job)
        except Exception as exc:  # noqa: BLE001 - reported on the job, never lost silently
            # the store's location is the server's business, not the caller's
            job["status"], job["error"] = "failed", f"{type(exc).__name__}: {exc}".replace(self._store.path, "the store")
        with self._lock:  # discard_words scrubs under this lock: the result read here is current
            result = {k: job[k] for k in ("report", "error", "consolidation") if job.get(k) is not None}
            facts, quotes = _words(result)
        status = job.get("status") if job.get("status") in ("done", "failed") else "done"
        try:
            kept = self._store.finish_ingest_job(_identity(job), job["id"], status=status, result=result,
                                                 at=self._now(), facts=facts, quotes=quotes)
        except Exception as exc:  # the report could not be stored: the job ends failed, saying why
            log.exception("the report of ingest job %s could not be stored", job["id"])
            kept = self._store.finish_ingest_job(_identity(job), job["id"], status="failed", at=self._now(),
                                                 result={"error": f"its report could not be stored: "
                                                                  f"{type(exc).__name__}: {exc}"})
        if not kept or job.get("cancelled"):  # its user was forgotten while it ran: its writes go too
            self._undo(job)
        self._store.prune_ingest_jobs(ended_before=self._now() - timedelta(seconds=self.ttl), keep=self.max_jobs)

    def _undo(self, job: dict[str, Any]) -> None:
        """A forget of the job's user overtook it (it ran past the forget's wait): what the
        job wrote goes — the facts and episodes its report names, or, without a report,
        those from its messages — and nothing the user wrote after the forget returned."""
        scope = self._memory.scope(job["tenant"], job["user"], job.get("agent", "default"))
        if job.get("report") is not None:
            written = _written(job["report"])
        elif job.get("message_ids"):
            written = {f.id for f in self._store.list_facts(scope.identity, statuses=tuple(Status), limit=None,
                                                            message_ids=job["message_ids"])}
        else:  # nothing says what it wrote
            self._memory.forget_user(job["tenant"], job["user"], discard_held=False)
            return
        for fact_id in sorted(written):
            try:
                scope.forget(fact_id)
            except FactNotFound:
                pass  # the forget took it already

    def discard_user(self, tenant: str, user: str, timeout: float | None = None) -> int:
        """Cancel the user's jobs in every process, wait for the running ones; the store's
        forget then deletes their reports."""
        with self._lock:
            mine = [jid for jid, job in self._jobs.items() if (job["tenant"], job["user"]) == (tenant, user)]
            queued = self._pending.get(tenant, deque())
            waiting = {job["id"] for job, _ in queued if job["user"] == user}
            for jid in mine:
                self._jobs[jid]["cancelled"] = True
            if waiting:  # not started: they never run
                kept = deque((job, work) for job, work in queued if job["id"] not in waiting)
                if kept:
                    self._pending[tenant] = kept
                else:
                    self._pending.pop(tenant, None)
                    if tenant in self._turns:
                        self._turns.remove(tenant)
                for jid in waiting:
                    self._jobs.pop(jid, None)
                    done = self._done.pop(jid, None)
                    if done is not None:
                        done.set()
            running = [self._done[jid] for jid in mine if jid not in waiting and jid in self._done]
        flagged = self._store.cancel_ingest_jobs(tenant, user)
        deadline = time.monotonic() + (self.wait_on_forget if timeout is None else timeout)
        for done in running:
            done.wait(max(0.0, deadline - time.monotonic()))
        while time.monotonic() < deadline and any(not process_gone(job.owner) for job in
                                                  self._store.ingest_jobs(tenant, user, status="running")):
            time.sleep(0.05)  # another process runs one of them
        return max(flagged, len(mine))

    def discard_words(self, tenant: str, user: str, quotes: list[str]) -> int:
        """A fact of the user was forgotten: its words leave the reports of the user's jobs
        running here (as written, one-lined, escaped or JSON-quoted; the store redacts
        the ended ones); returns the reports changed."""
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
        """Run what is queued here, then stop the workers."""
        with self._lock:
            events = [e for jid, e in self._done.items() if not self._jobs.get(jid, {}).get("cancelled")]
        for done in events:
            done.wait()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


def _identity(job: dict[str, Any]) -> Identity:
    return Identity(job["tenant"], job["user"], job.get("agent", "default"))


def _written(report: Any) -> set[str]:
    """The ids of the facts and episodes an extraction report says it wrote."""
    if not isinstance(report, dict):
        return set()
    ids = {f["id"] for part in ("saved", "candidates") for f in report.get(part) or () if isinstance(f, dict)}
    ids |= {e for e in report.get("episodes") or () if isinstance(e, str)}
    ids |= {h["fact_id"] for h in report.get("held") or () if isinstance(h, dict) and "fact_id" in h}
    return ids


def _words(result: Any) -> tuple[dict[str, list[str]], list[str]]:
    """The words a report holds: each fact it names (id → content and evidence), and the
    other contents it quotes (duplicates, refusals)."""
    facts: dict[str, list[str]] = {}
    quotes: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            content = value.get("content")
            if isinstance(content, str):
                if isinstance(value.get("id"), str):
                    evidence = (value.get("provenance") or {}).get("evidence_text")
                    facts[value["id"]] = [content, *([evidence] if isinstance(evidence, str) else [])]
                else:
                    quotes.append(content)
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk(result)
    return facts, quotes


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
