"""Erasure off the request path. A forget commits its deletions and redactions and, in
the same transaction, an erasure job naming the tables it touched; the call then
returns. The backend's :class:`~.backend.Eraser` (an index merge and WAL truncation on
SQLite, VACUUM and an index rebuild on PostgreSQL) runs in a background thread of the
process holding the store. Nothing forgotten is readable through any API once the forget
returned; the job only makes the deleted bytes unrecoverable from the files.

Jobs are rows (``erasure_jobs``): a job left pending, or claimed by a process that
stopped, is resumed by the next process that opens the store; the jobs pending together
are done by one erasure; closing the store finishes them. ``erasure="inline"`` erases
before the forget returns, as a maintenance script may want.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from datetime import UTC, datetime, timedelta

from ...errors import StoreError, StoreLocked
from ...model import new_id
from ..records import ErasureJobRecord
from ..rows import as_time
from .backend import MAINTENANCE
from .scoped import Scoped

log = logging.getLogger("archivist.storage.erasure")

LEASE = timedelta(minutes=30)  # a claim older than this was left by a process that stopped
MAX_ATTEMPTS = 5  # then the job is failed, with its note: ``archivist purge`` finishes it
KEEP_DONE = timedelta(days=30)  # a done job's row stays readable this long (a receipt names it), then goes
RETRY_SECONDS = 2.0  # before an unfinished erasure is tried again
MODES = ("background", "inline")
_COLUMNS = "id, tenant, state, tables, whole_user, attempts, created_at, finished_at, note"


def _now() -> datetime:
    return datetime.now(UTC)


class ErasureJobs(Scoped):
    erasure: str = "background"
    _worker: threading.Thread | None = None
    _wanted: threading.Condition
    _closing = False
    _woken = False

    # -- the request path ---------------------------------------------------------
    def _queue_erasure(self, tenant: str, tables, *, whole_user: bool) -> str:
        """Inside the forget's transaction: the job commits with it, or neither does."""
        job = new_id()
        self.db.write(MAINTENANCE, "INSERT INTO erasure_jobs (id, tenant, created_at, tables, whole_user, state, "
                                   "attempts) VALUES (?, ?, ?, ?, ?, 'pending', 0)",
                      (job, tenant, self._ts(_now()), json.dumps(sorted(set(tables))), int(whole_user)))
        self.db.after_commit(self._wake_eraser)
        return job

    def erasure_job(self, job_id: str) -> ErasureJobRecord | None:
        rows = self.db.read(MAINTENANCE, f"SELECT {_COLUMNS} FROM erasure_jobs WHERE id = ?", (job_id,))
        return _record(rows[0]) if rows else None

    def erasure_jobs(self, *, open_only: bool = False, limit: int = 100) -> list[ErasureJobRecord]:
        where = "WHERE state IN ('pending', 'running')" if open_only else ""
        rows = self.db.read(MAINTENANCE, f"SELECT {_COLUMNS} FROM erasure_jobs {where} "
                                         "ORDER BY created_at DESC, id DESC LIMIT ?", (self._limit(limit),))
        return [_record(r) for r in rows]

    def wait_for_erasure(self, timeout: float | None = None) -> bool:
        """Block until no erasure job is open (this process runs them meanwhile); True
        when every job is done — False if ``timeout`` seconds passed first, or a job
        failed (forgotten bytes may remain: its note says why, ``purge`` finishes it).
        An erasure this call began is finished before the deadline is checked (a rebuild
        is not left half done), so it can return later than ``timeout``."""
        deadline = None if timeout is None else _now() + timedelta(seconds=timeout)
        while self.erasure_jobs(open_only=True, limit=1):
            if deadline is not None and _now() >= deadline:
                return False
            if not self._run_due():
                time.sleep(0.05)  # another thread or process holds them
        return not self.db.read(MAINTENANCE, "SELECT 1 FROM erasure_jobs WHERE state = 'failed' LIMIT 1")

    # -- the background worker ------------------------------------------------------
    def _wake_eraser(self) -> None:
        if self.erasure == "inline":
            self.run_erasure()
            return
        with self._wanted:
            if self._closing:
                return
            self._woken = True
            self._wanted.notify()
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._erase_in_background, name="archivist-erasure",
                                                daemon=True)
                self._worker.start()

    def _resume_erasure(self) -> None:
        """On open (every backend's constructor calls it): the worker's signal is made, and
        jobs a stopped process left open are taken up."""
        self._wanted = threading.Condition()
        self._erasing = threading.RLock()  # one eraser at a time in a process: the worker, a close, a purge
        if self.erasure_jobs(open_only=True, limit=1):
            self._wake_eraser()

    def _erase_in_background(self) -> None:
        delay = None
        while True:
            with self._wanted:
                if not self._woken and not self._closing:  # a wake-up before the wait (or the start) is not lost
                    self._wanted.wait(delay)
                self._woken = False
                if self._closing:
                    return
            try:
                open_left = self._run_due()
            except Exception:  # noqa: BLE001 - the jobs stay open; the next forget, open or close retries
                log.exception("erasure jobs could not be run")
                open_left = True
            delay = RETRY_SECONDS if open_left else None

    def _run_due(self) -> bool:
        """Run the due jobs once; whether jobs are still open after."""
        self.run_erasure()
        return bool(self.erasure_jobs(open_only=True, limit=1))

    def run_erasure(self, *, failed_too: bool = False) -> list[str]:
        with self._erasing:
            return self._run_erasure(failed_too=failed_too)

    def _run_erasure(self, *, failed_too: bool = False) -> list[str]:
        """Claim every pending job (and any whose claim lapsed), erase once for them all,
        record the outcome; the ids done. A job the eraser could not finish (a reader
        holds the WAL, VACUUM failed) stays pending and is retried; after
        :data:`MAX_ATTEMPTS` it is failed with the eraser's note. ``failed_too``
        (``archivist purge``) takes the failed ones up again."""
        now = _now()
        with self.transaction():
            if failed_too:
                self.db.write(MAINTENANCE, "UPDATE erasure_jobs SET state = 'pending', attempts = 0 "
                                           "WHERE state = 'failed'")
            self.db.write(MAINTENANCE, "DELETE FROM erasure_jobs WHERE state = 'done' AND finished_at < ?",
                          (self._ts(now - KEEP_DONE),))
            dead, dead_params = self.sql.in_list("claimed_by", self._dead_claimants() or [""])
            claimed = self.db.write(
                MAINTENANCE, "UPDATE erasure_jobs SET state = 'running', claimed_at = ?, claimed_by = ?, "
                             "attempts = attempts + 1 WHERE state = 'pending' "
                             f"OR (state = 'running' AND (claimed_at < ? OR {dead})) "
                             "RETURNING id, tables, whole_user, attempts",
                (self._ts(now), this_process(), self._ts(now - LEASE), *dead_params)).fetchall()
        if not claimed:
            return []
        tables = sorted({t for _, names, _, _ in claimed for t in json.loads(names)})
        try:
            note = self.eraser.after_forget(tables, whole_user=any(whole for _, _, whole, _ in claimed))
        except Exception as exc:  # noqa: BLE001 - recorded on the job; the forget itself stands
            note = f"{type(exc).__name__}: {exc}"
        done, finished = [], self._ts(_now())  # one erasure: one end for all its jobs
        with self.transaction():
            for job, _, _, attempts in claimed:
                state = "done" if note is None else "failed" if attempts >= MAX_ATTEMPTS else "pending"
                self.db.write(MAINTENANCE, "UPDATE erasure_jobs SET state = ?, finished_at = ?, note = ? "
                                           "WHERE id = ? AND state = 'running'",
                              (state, finished if state != "pending" else None, note, job))
                if state == "done":
                    done.append(job)
        if note is not None:
            log.warning("erasure not finished (%s); jobs %s retried", note, ", ".join(j for j, *_ in claimed))
        return done

    def _dead_claimants(self) -> list[str]:
        """Processes of this machine that claimed a job and are gone (killed mid-erasure):
        their jobs are taken up at once, not after the lease."""
        rows = self.db.read(MAINTENANCE, "SELECT DISTINCT claimed_by FROM erasure_jobs WHERE state = 'running'")
        return [claimant for (claimant,) in rows if claimant and process_gone(claimant)]

    def _stop_eraser(self) -> None:
        """Closing: the background thread stops, and the jobs still open are run here
        (a process about to exit finishes what its forgets started)."""
        with self._wanted:
            self._closing = True
            self._wanted.notify_all()
        if self._worker is not None:
            self._worker.join()
        try:
            self.run_erasure()
        except StoreLocked as exc:  # busy, or a database server that is away: nothing is wrong with the jobs
            log.warning("erasure jobs left open at close (%s); the next open resumes them", exc)
        except Exception:  # noqa: BLE001 - they stay open: the next open resumes them
            log.exception("erasure jobs left open at close; the next open resumes them")


def this_process() -> str:
    """How a claim names its process (read at each claim: a forked worker is another)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_gone(claimant: str) -> bool:
    """The claimant is a process of this machine that no longer runs."""
    host, _, pid = claimant.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False


def erasure_mode(mode: str) -> str:
    if mode not in MODES:
        raise StoreError(f"erasure must be one of {', '.join(MODES)} (got {mode!r})")
    return mode


def _record(row) -> ErasureJobRecord:
    job, tenant, state, tables, whole_user, attempts, created_at, finished_at, note = row
    return ErasureJobRecord(id=job, tenant=tenant, state=state, tables=tuple(json.loads(tables)),
                            whole_user=bool(whole_user),
                            attempts=attempts, created_at=as_time(created_at), finished_at=as_time(finished_at),
                            note=note)


__all__ = ["KEEP_DONE", "LEASE", "MAX_ATTEMPTS", "MODES", "ErasureJobs", "erasure_mode", "process_gone", "this_process"]
