"""The update queue: debounce with a maximum wait, exactly-once per message (also across
restarts and entry points), backpressure, retries that never reach the caller, drain."""

import threading
import time

import pytest

from archivist import Memory
from archivist.pipeline.queue import QueueFull, UpdateQueue
from archivist.pipeline.rules import RuleExtractor

TURN = [{"id": "u1", "role": "user", "content": "我主要做 Python 后端开发，平时请用中文解释技术问题。"},
        {"id": "a1", "role": "assistant", "content": "好的。"}]


class Counting(RuleExtractor):
    def __init__(self, fail_times=0, gate=None):
        self.calls, self.batches, self.fail_times, self.gate = 0, [], fail_times, gate

    def extract(self, filtered, **kw):
        self.calls += 1
        self.batches.append([r.id for r in filtered.rows])
        if self.gate is not None:
            self.gate.wait(5)
        if self.calls <= self.fail_times:
            raise ConnectionError("model endpoint unreachable")
        return super().extract(filtered, **kw)


@pytest.fixture
def mem(db_path, clock):
    m = Memory.open(db_path, clock=clock)
    yield m
    m.close()


def test_extracts_once_and_the_watermark_survives_a_restart(mem, db_path, clock):
    ex = Counting()
    q = UpdateQueue(mem, extractor=ex, debounce=0.05, max_wait=1)
    assert q.submit("default", "alice", "default", "th-1", TURN) == 2
    assert q.submit("default", "alice", "default", "th-1", TURN) == 0  # the flush hook sends the same turn
    assert q.wait_idle() and ex.calls == 1 and q.stats.duplicates == 2
    assert sorted(f.content for f in mem.scope(user="alice").facts()) == ["用户主要做 Python 后端开发。",
                                                                        "用户偏好用中文解释技术问题。"]
    assert q.drain()
    mem2 = Memory.open(db_path, clock=clock)  # a restart: a new process would see the same store
    q2 = UpdateQueue(mem2, extractor=ex, debounce=0.05)
    assert q2.submit("default", "alice", "default", "th-1", TURN) == 0 and ex.calls == 1
    more = TURN + [{"id": "u2", "role": "user", "content": "I prefer short answers."}]
    assert q2.submit("default", "alice", "default", "th-1", more) == 1
    assert q2.wait_idle() and ex.calls == 2 and ex.batches[-1] == ["u2"]
    q2.drain()
    mem2.close()


def test_max_wait_bounds_the_delay_under_continuous_traffic(mem):
    ex = Counting()
    q = UpdateQueue(mem, extractor=ex, debounce=0.2, max_wait=0.3)
    started = time.monotonic()
    n = 0
    while time.monotonic() - started < 1.2:  # a message every 20 ms: debounce alone would never fire
        q.submit("default", "alice", "default", "th-1", [{"id": f"u{n}", "role": "user", "content": f"hello {n}"}])
        n += 1
        time.sleep(0.02)
    assert ex.calls >= 2, "batches must run while traffic continues"
    q.drain()
    assert sum(len(b) for b in ex.batches) == n  # every message processed exactly once


def test_backpressure_and_opt_out(mem):
    gate = threading.Event()
    ex = Counting(gate=gate)
    q = UpdateQueue(mem, extractor=ex, debounce=0.0, max_wait=0.0, max_pending=3,
                    opted_out=lambda key: key.agent == "private")
    q.submit("default", "alice", "default", "th-1", TURN)
    deadline = time.monotonic() + 5
    while ex.calls == 0 and time.monotonic() < deadline:  # the worker is now stuck in the first batch
        time.sleep(0.01)
    q.submit("default", "alice", "default", "th-2", [{"id": "x1", "role": "user", "content": "one"},
                                                     {"id": "x2", "role": "user", "content": "two"}])
    with pytest.raises(QueueFull):
        q.submit("default", "bob", "default", "th-3", [{"id": "y1", "role": "user", "content": "a"},
                                                       {"id": "y2", "role": "user", "content": "b"}])
    assert q.stats.rejected_full == 1 and q.pending() == 2
    assert q.submit("default", "alice", "private", "th-4", TURN) == 0  # opted out: ignored entirely
    gate.set()
    assert q.drain() and ex.calls == 2
    assert mem.scope(user="alice", agent="private").facts() == []


def test_failures_are_retried_with_backoff_and_never_raise(mem):
    ex = Counting(fail_times=2)
    q = UpdateQueue(mem, extractor=ex, debounce=0.01, backoff=0.02)
    q.submit("default", "alice", "default", "th-1", TURN)
    assert q.wait_idle() and q.stats.retries == 2 and q.stats.batches == 1
    assert len(mem.scope(user="alice").facts()) == 2
    broken = Counting(fail_times=99)
    q2 = UpdateQueue(mem, extractor=broken, debounce=0.01, backoff=0.01, max_attempts=3)
    q2.submit("default", "bob", "default", "th-1", TURN)
    assert q2.wait_idle() and q2.stats.failed_batches == 1 and broken.calls == 3
    assert mem.scope(user="bob").facts() == []
    # not marked processed: the same turn can be tried again later
    assert q2.submit("default", "bob", "default", "th-1", TURN) == 2
    q.drain()
    q2.drain()


def test_drain_runs_pending_work_at_once(mem):
    ex = Counting()
    q = UpdateQueue(mem, extractor=ex, debounce=60, max_wait=120)
    q.submit("default", "alice", "default", "th-1", TURN)
    assert ex.calls == 0
    started = time.monotonic()
    assert q.drain(timeout=10) and ex.calls == 1 and time.monotonic() - started < 10
    with pytest.raises(QueueFull):
        q.submit("default", "alice", "default", "th-1", [{"id": "late", "role": "user", "content": "late"}])
