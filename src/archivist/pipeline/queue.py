"""The background update queue between an agent's turns and memory extraction.

* **Keyed** by (tenant, user, agent, thread); each key collects messages into a batch.
* **Debounce with a maximum wait**: a batch runs ``debounce`` seconds after its last
  message, but never later than ``max_wait`` after its first, so continuous traffic
  cannot starve extraction.
* **Exactly once per message**: message ids already processed in a thread (a persisted
  per-thread watermark, so a restart does not re-extract) or already pending (the same
  turn arriving from ``after_agent`` and from the summarization flush hook) are dropped
  at submit.
* **Bounded**: at most ``max_pending`` messages wait; beyond that ``submit`` raises
  :class:`QueueFull` (backpressure) instead of growing without limit.
* **Failures never reach the agent**: a failing batch is retried with exponential
  backoff up to ``max_attempts``, then dropped and logged; the agent keeps working
  without the update (no-memory mode for that batch).
* **Async-friendly**: work happens on one daemon thread; ``submit`` only takes a lock
  for a few microseconds, so calling it from an event loop does not block it.
* **Graceful drain**: :meth:`drain` stops intake, runs everything pending now, and
  joins the worker.
* **Background upkeep**: with ``consolidate=True`` a scope's consolidation runs in the
  worker after its batch, whenever its gate (time since the last run, new sessions)
  is open — never inside a user's request; :meth:`when_idle` runs a job once a thread
  has been quiet for a while (the session summary of an idle thread).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ArchivistError
from .filtering import to_message

log = logging.getLogger("archivist.queue")


class QueueFull(ArchivistError):
    """Backpressure: the queue holds ``max_pending`` messages already."""


@dataclass(frozen=True, slots=True)
class QueueKey:
    tenant: str
    user: str
    agent: str
    thread: str
    project: str | None = None  # the project the conversation is about (its facts are kept there)


@dataclass
class _Batch:
    messages: dict[str, Any] = field(default_factory=dict)  # id -> message, in arrival order
    first_at: float = 0.0
    last_at: float = 0.0
    attempts: int = 0
    retry_at: float | None = None
    first_ids: frozenset[str] = frozenset()  # what the first attempt held; later arrivals are not its fault
    epoch: int = 0  # the user's epoch when queued: forgetting the user bumps it

    def due(self, debounce: float, max_wait: float) -> float:
        if self.retry_at is not None:
            return self.retry_at
        return min(self.last_at + debounce, self.first_at + max_wait)


@dataclass
class QueueStats:
    submitted: int = 0
    duplicates: int = 0
    batches: int = 0
    retries: int = 0
    failed_batches: int = 0
    rejected_full: int = 0
    extractor_calls: int = 0
    consolidations: int = 0
    idle_jobs: int = 0


class QueueScope(Protocol):
    """What the queue does with one (tenant, user, agent, project): ``MemoryScope`` is one."""

    identity: Any

    def learn(self, messages: Sequence[Any], *, thread_id: str | None = None, extractor: Any = None) -> Any: ...

    def consolidate(self) -> Any: ...

    def processed_messages(self, thread_id: str) -> set[str]: ...

    def mark_processed(self, thread_id: str, message_ids: Sequence[str]) -> None: ...


class QueueMemory(Protocol):
    """What the queue needs of the memory it feeds: ``Memory`` is one."""

    def scope(self, tenant: str = "default", user: str = "", agent: str = "default",
              project: str | None = None) -> QueueScope: ...

    def attach(self, holder: Any) -> None: ...


class UpdateQueue:
    """Debounced, deduplicated, bounded extraction in the background."""

    def __init__(
        self,
        memory: QueueMemory,
        *,
        extractor: Any = None,
        debounce: float = 2.0,
        max_wait: float = 10.0,
        max_pending: int = 2000,
        max_attempts: int = 4,
        backoff: float = 0.5,
        opted_out: Callable[[QueueKey], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_result: Callable[[QueueKey, Any], None] | None = None,
        consolidate: bool = False,
    ) -> None:
        self.memory = memory
        self.extractor = extractor
        self.debounce, self.max_wait = debounce, max_wait
        self.max_pending, self.max_attempts, self.backoff = max_pending, max_attempts, backoff
        self.opted_out = opted_out or (lambda key: False)
        self.clock = clock
        self.on_result = on_result
        self.consolidate = consolidate
        self.stats = QueueStats()
        self._idle: dict[QueueKey, tuple[float, Callable[[], Any]]] = {}  # key -> (when, job)
        self._batches: dict[QueueKey, _Batch] = {}
        self._processed: dict[QueueKey, set[str]] = {}  # watermark cache, loaded from the store
        self._running: dict[QueueKey, set[str]] = {}  # key -> message ids of the batch now running
        self._epochs: dict[tuple[str, str], int] = {}
        self._cond = threading.Condition()
        self._closed = False
        memory.attach(self)  # so forgetting a user can discard their queued turns
        self._worker = threading.Thread(target=self._loop, name="archivist-update-queue", daemon=True)
        self._worker.start()

    # -- intake ---------------------------------------------------------------
    def pending(self) -> int:
        with self._cond:
            return sum(len(b.messages) for b in self._batches.values())

    def submit(self, tenant: str, user: str, agent: str, thread: str, messages: Sequence[Any], *,
               project: str | None = None) -> int:
        """Queue messages of one thread; returns how many were new. Raises
        :class:`QueueFull` when the queue is full (nothing of this call is queued).
        With ``project`` they are extracted in that project's scope."""
        key = QueueKey(tenant, user, agent, thread, project)
        if self.opted_out(key):
            return 0
        items = [(to_message(m, i).id, m) for i, m in enumerate(messages)]
        processed = self._watermark(key)
        with self._cond:
            if self._closed:
                raise QueueFull("the queue is draining and takes no new work")
            batch = self._batches.get(key)
            running = self._running.get(key, set())
            fresh = [(mid, m) for mid, m in items
                     if mid not in processed and mid not in running and not (batch and mid in batch.messages)]
            self.stats.submitted += len(items)
            self.stats.duplicates += len(items) - len(fresh)
            if not fresh:
                return 0
            if sum(len(b.messages) for b in self._batches.values()) + len(fresh) > self.max_pending:
                self.stats.rejected_full += 1
                raise QueueFull(f"{self.max_pending} messages are already waiting for extraction")
            now = self.clock()
            if batch is None:
                batch = self._batches[key] = _Batch(first_at=now, epoch=self._epochs.get((tenant, user), 0))
            batch.last_at = now
            batch.messages.update(fresh)
            self._cond.notify()
            return len(fresh)

    async def asubmit(self, tenant: str, user: str, agent: str, thread: str, messages: Sequence[Any], *,
                      project: str | None = None) -> int:
        """The same as :meth:`submit` (which never blocks on I/O), for async callers."""
        return self.submit(tenant, user, agent, thread, messages, project=project)

    def _watermark(self, key: QueueKey) -> set[str]:
        cached = self._processed.get(key)
        if cached is None:
            cached = self.memory.scope(key.tenant, key.user, key.agent, key.project).processed_messages(key.thread)
            self._processed[key] = cached
        return cached

    # -- work -------------------------------------------------------------------
    def _next_due(self) -> tuple[QueueKey | None, float | None]:
        best, when = None, None
        for key, batch in self._batches.items():
            if key in self._running:
                continue
            due = batch.due(self.debounce, self.max_wait)
            if when is None or due < when:
                best, when = key, due
        return best, when

    def _next_idle(self) -> tuple[QueueKey | None, float | None]:
        quiet = [(when, key) for key, (when, _) in self._idle.items()
                 if key not in self._batches and key not in self._running]
        if not quiet:
            return None, None
        when, key = min(quiet, key=lambda pair: pair[0])
        return key, when

    def _loop(self) -> None:
        while True:
            job = None
            with self._cond:
                while True:
                    key, due = self._next_due()
                    if key is not None and (self._closed or due <= self.clock()):
                        batch = self._batches.pop(key)
                        self._running[key] = set(batch.messages)
                        break
                    idle_key, idle_due = self._next_idle()
                    if idle_key is not None and (self._closed or idle_due <= self.clock()):
                        key, job = idle_key, self._idle.pop(idle_key)[1]
                        self._running[key] = set()
                        break
                    if self._closed and not self._batches and not self._running and not self._idle:
                        return
                    soonest = min((d for d in (due, idle_due) if d is not None), default=None)
                    timeout = None if soonest is None else max(0.0, soonest - self.clock())
                    self._cond.wait(timeout if timeout is None else min(timeout, 0.5))
            if job is not None:
                self._run_idle(key, job)
            else:
                self._run(key, batch)

    def when_idle(self, tenant: str, user: str, agent: str, thread: str, seconds: float,
                  job: Callable[[], Any]) -> None:
        """Run ``job`` in the worker once this thread has had nothing queued or running for
        ``seconds``; a later call for the same thread replaces it (and restarts the wait).
        A drain runs it at once: it is not lost on shutdown."""
        key = QueueKey(tenant, user, agent, thread)
        with self._cond:
            self._idle[key] = (self.clock() + max(0.0, float(seconds)), job)
            self._cond.notify()

    def _run_idle(self, key: QueueKey, job: Callable[[], Any]) -> None:
        try:
            job()
            self.stats.idle_jobs += 1
        except Exception as exc:  # upkeep never breaks anything: it is logged and dropped
            log.warning("idle job for %s failed: %s: %s", key, type(exc).__name__, exc)
        finally:
            with self._cond:
                self._running.pop(key, None)
                self._cond.notify_all()

    def _upkeep(self, scope: QueueScope) -> None:
        """Consolidation behind its gates, after a batch (see :meth:`MemoryScope.consolidate`)."""
        try:
            plan = scope.consolidate()
            if plan.due:
                self.stats.consolidations += 1
        except Exception as exc:  # the batch is committed; consolidation tries again next time
            log.warning("background consolidation failed for %s: %s: %s", scope.identity, type(exc).__name__, exc)

    def _run(self, key: QueueKey, batch: _Batch) -> None:
        messages = list(batch.messages.values())
        if not batch.first_ids:
            batch.first_ids = frozenset(batch.messages)
        report = None
        try:
            if batch.epoch != self._epochs.get((key.tenant, key.user), 0):
                return  # the user was forgotten after this batch was queued
            scope = self.memory.scope(key.tenant, key.user, key.agent, key.project)
            self.stats.extractor_calls += 1
            report = scope.learn(messages, thread_id=key.thread, extractor=self.extractor)
            scope.mark_processed(key.thread, list(batch.messages))
            processed = self._watermark(key)  # may read the store: outside the lock
            with self._cond:
                processed.update(batch.messages)
                self.stats.batches += 1
            if self.consolidate:
                self._upkeep(scope)
        except Exception as exc:  # a failed update never breaks the agent's turn
            self._retry_or_drop(key, batch, exc)
        finally:
            with self._cond:
                self._running.pop(key, None)
                self._cond.notify_all()
        if report is not None and self.on_result:
            try:
                self.on_result(key, report)
            except Exception as exc:  # the batch is committed; a callback cannot undo or repeat it
                log.warning("on_result failed for %s: %s", key, exc)

    def _retry_or_drop(self, key: QueueKey, batch: _Batch, exc: Exception) -> None:
        batch.attempts += 1
        with self._cond:
            merged = self._batches.pop(key, None)
            if merged is not None:  # messages that arrived meanwhile ride along
                batch.messages.update(merged.messages)
            if batch.epoch != self._epochs.get((key.tenant, key.user), 0):
                return
            if batch.attempts < self.max_attempts:
                self.stats.retries += 1
                batch.retry_at = self.clock() + (0 if self._closed else self.backoff * 2 ** (batch.attempts - 1))
                self._batches[key] = batch
                log.warning("memory update for %s failed (attempt %d): %s", key, batch.attempts, exc)
                return
            self.stats.failed_batches += 1
            log.error("memory update for %s dropped after %d attempts: %s", key, batch.attempts, exc)
            newcomers = {mid: m for mid, m in batch.messages.items() if mid not in batch.first_ids}
            if newcomers:  # later messages get their own attempts
                self._batches[key] = _Batch(newcomers, self.clock(), self.clock(), epoch=batch.epoch)

    def discard_words(self, tenant: str, user: str, quotes: list[str]) -> int:
        """Queued turns are kept whole until they run; a forgotten fact's tombstone keeps
        them from bringing it back, so there is nothing to redact here."""
        return 0

    def discard_user(self, tenant: str, user: str, timeout: float = 30.0) -> int:
        """Drop pending batches and cached watermarks of a user being forgotten; a batch of
        theirs that is running is waited for, so nothing it writes outlives the forget."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._epochs[(tenant, user)] = self._epochs.get((tenant, user), 0) + 1
            while any((k.tenant, k.user) == (tenant, user) for k in self._running) and time.monotonic() < deadline:
                self._cond.wait(0.05)
            keys = [k for k in self._batches if (k.tenant, k.user) == (tenant, user)]
            dropped = sum(len(self._batches.pop(k).messages) for k in keys)
            for k in [k for k in self._idle if (k.tenant, k.user) == (tenant, user)]:
                del self._idle[k]
            for k in [k for k in self._processed if (k.tenant, k.user) == (tenant, user)]:
                del self._processed[k]
            return dropped

    # -- shutdown -------------------------------------------------------------
    def drain(self, timeout: float | None = 30.0) -> bool:
        """Stop intake, run everything pending now (no debounce), wait for the worker.
        Returns False if the timeout passed first."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._worker.join(timeout)
        return not self._worker.is_alive()

    def run_pending(self, timeout: float = 10.0) -> bool:
        """Run every pending batch now, without waiting for its debounce (end of a
        session, a CLI, a test); the queue stays open."""
        with self._cond:
            now = self.clock()
            for batch in self._batches.values():
                batch.retry_at = now
            self._cond.notify_all()
        return self.wait_idle(timeout)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until nothing is pending or running (tests, CLIs)."""
        return wait_for(self._cond, lambda: not (self._batches or self._running), timeout)


def wait_for(cond: threading.Condition, done: Callable[[], bool], timeout: float) -> bool:
    """Wait on ``cond`` until ``done()`` (checked every 50 ms too); False if ``timeout`` passed first."""
    deadline = time.monotonic() + timeout
    with cond:
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            cond.wait(min(remaining, 0.05))
    return True


class RemoteUpdates:
    """The update queue of an agent whose memory is a server (``RemoteMemory``): each
    turn is sent, in order, to the server's ``learn`` job, and the server filters,
    extracts, gates and stores it as it does for every client. One daemon thread sends;
    a server that cannot be reached or is busy is tried again with exponential backoff
    (``max_attempts``, from ``backoff`` seconds), then the turn is logged and dropped,
    never raised into the agent. Messages already sent in a thread (by id) are not sent
    again, in this process."""

    def __init__(self, memory: Any, *, max_pending: int = 2000, max_attempts: int = 5, backoff: float = 1.0) -> None:
        self.memory, self.max_pending = memory, max_pending
        self.max_attempts, self.backoff = max_attempts, backoff
        self._draining = threading.Event()
        self.stats = QueueStats()
        self._sent: dict[tuple, set[str]] = {}
        self._pending: list[tuple[QueueKey, list[Any]]] = []
        self._cond = threading.Condition()
        self._busy = self._closed = False
        self._worker = threading.Thread(target=self._run, name="archivist-remote-updates", daemon=True)
        self._worker.start()

    def submit(self, tenant: str, user: str, agent: str, thread: str, messages: Sequence[Any], *,
               project: str | None = None) -> int:
        key = QueueKey(tenant, user, agent, thread, project)
        items = [(to_message(m, i).id, m) for i, m in enumerate(messages)]
        with self._cond:
            if self._closed:
                raise QueueFull("the queue is draining and takes no new work")
            sent = self._sent.setdefault(key, set())
            fresh = [(mid, m) for mid, m in items if mid not in sent]
            self.stats.submitted += len(items)
            self.stats.duplicates += len(items) - len(fresh)
            if not fresh:
                return 0
            if sum(len(batch) for _, batch in self._pending) + len(fresh) > self.max_pending:
                self.stats.rejected_full += 1
                raise QueueFull(f"{self.max_pending} messages are already waiting to be sent")
            sent.update(mid for mid, _ in fresh)
            self._pending.append((key, [m for _, m in fresh]))
            self._cond.notify_all()
            return len(fresh)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return
                key, batch = self._pending.pop(0)
                self._busy = True
            try:
                self._send(key, batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _send(self, key: QueueKey, batch: list[Any]) -> None:
        from ..errors import RemoteUnavailable, StoreLocked

        for attempt in range(self.max_attempts):
            try:
                self.memory.scope(key.tenant, key.user, key.agent, key.project).learn(batch, thread_id=key.thread)
                self.stats.batches += 1
                return
            except (RemoteUnavailable, StoreLocked) as exc:  # down or busy: wait and try again
                last: Exception = exc
                if attempt + 1 < self.max_attempts:
                    self.stats.retries += 1
                    self._draining.wait(self.backoff * 2 ** attempt)  # a drain cuts the wait short
            except Exception as exc:  # refused (a key, the request): trying again would not help
                last = exc
                break
        self.stats.failed_batches += 1
        log.error("memory update not sent to the server: %s: %s", type(last).__name__, last)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        return wait_for(self._cond, lambda: not (self._pending or self._busy), timeout)

    def when_idle(self, *args: Any, **kwargs: Any) -> None:
        raise ArchivistError("session summaries are written where the memory is: not through a server yet")

    def drain(self, timeout: float | None = 30.0) -> bool:
        self._draining.set()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._worker.join(timeout)
        return not self._worker.is_alive()
