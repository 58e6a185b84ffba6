"""A large batch read on every core: the gate's per-text readings shared with helper processes.

Before a write transaction opens, the gate reads each candidate's texts (screening,
recognition, duplicate signatures: :func:`~archivist.pipeline.governance.prejudge`).
Each reading is a pure function of its arguments, kept per text in a
:class:`~archivist.model.memo.Memo`. For a large batch, helper processes read a share of
the texts while this process reads the rest; their answers are seeded into this
process's memos, and the write that follows decides exactly as if it had read every
text itself. A helper that is still starting, busy, failing or dead costs only time: its
share is read here.

Helpers are separate interpreters started with ``python -m`` (not ``multiprocessing``:
nothing of the caller's ``__main__`` is run again, and nothing is forked from a process
that has threads). They start on the first large batch and are ready for the next one;
they end when this process ends or closes their pipe. ``ARCHIVIST_GATE_HELPERS`` sets
how many (default: one fewer than the cores, at most three; ``0`` turns them off).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..model.memo import Memo, await_with

log = logging.getLogger(__name__)

MIN_SHARED = 200  # readings: a smaller batch is read here (a round trip to a helper would cost more)
HERE_SHARE = 0.3  # of a shared batch, read here first while the helpers start on the rest
CHUNK = 64  # readings a helper answers at a time: the write starts on the first ones while it reads on
ANSWER_WITHIN = 20.0  # seconds for a chunk of answers; a helper that takes longer is given up on
MAX_HELPERS = 3
MAX_REPLACED = 3  # helpers that died, replaced per process
_HEADER = struct.Struct("!Q")
_READY = "ready"

Reading = tuple[Memo, tuple]


def read_all(readings: Sequence[Reading]) -> None:
    """Make every ``(memo, args)`` reading known to its memo: a large batch is shared
    with the helpers that are ready. Their answers arrive while the write goes on; a
    memo that misses one waits for it (:func:`~archivist.model.memo.await_with`)."""
    _in_flight.finish()
    todo = [(m, args) for m, args in dict.fromkeys(readings) if args not in m]
    helpers = _pool.ready() if len(todo) >= MIN_SHARED else []
    if not helpers:
        _read_here(todo)
        return
    here = max(1, int(len(todo) * HERE_SHARE))
    share = -(-(len(todo) - here) // len(helpers))
    for n, helper in enumerate(helpers):
        part = todo[here + n * share:here + (n + 1) * share]
        if part and helper.send(part):
            _in_flight.add(helper, part)
        else:
            helper.release()
    _read_here(todo[:here])


def _read_here(readings: Sequence[Reading]) -> None:
    for m, args in readings:
        m(*args)


class _InFlight:
    """The shares helpers are reading for this process, in the order they were sent, and
    the readings still awaited from them."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.shares: list[list[Any]] = []  # [helper, part, answered so far]
        self.awaited: set[Reading] = set()
        self.answered = 0  # readings the helpers answered, for tests and benchmarks

    def add(self, helper: _Helper, part: Sequence[Reading]) -> None:
        with self.lock:
            self.shares.append([helper, part, 0])
            self.awaited.update(part)

    def wait_for(self, memo: Memo, args: tuple) -> bool:
        """Take answers until ``memo(*args)``'s has come; ``False`` when none was awaited."""
        if (memo, args) not in self.awaited:
            return False
        with self.lock:
            while (memo, args) in self.awaited and self._take_next():
                pass
        return True

    def finish(self) -> None:
        """Take every answer still on its way (before a helper is given a new batch)."""
        with self.lock:
            while self._take_next():
                pass

    def _take_next(self) -> bool:
        """Seed the next chunk of answers of the oldest share; ``False`` when none is left.
        A helper that fails leaves the rest of its share to be read here."""
        if not self.shares:
            return False
        entry = self.shares[0]
        helper, part, done = entry
        answers = helper.receive()
        if answers is None or len(answers) > len(part) - done:
            helper.fail()
            self.shares.pop(0)
            self.awaited.difference_update(part[done:])
            return True
        for reading, value in zip(part[done:done + len(answers)], answers):
            reading[0].seed(reading[1], value)
            self.awaited.discard(reading)
        self.answered += len(answers)
        entry[2] = done + len(answers)
        if entry[2] == len(part):
            helper.release()
            self.shares.pop(0)
        return True


_in_flight = _InFlight()
await_with(_in_flight.wait_for)


def configured_helpers() -> int:
    """How many helper processes a large batch may use: ``ARCHIVIST_GATE_HELPERS``, at
    most one fewer than the cores (more would only take turns on them), else that many
    up to :data:`MAX_HELPERS`."""
    cores = _cores()
    raw = os.environ.get("ARCHIVIST_GATE_HELPERS", "").strip()
    if raw:
        if raw.isdecimal() and raw.isascii():
            wanted = int(raw)
            if wanted > cores - 1:
                _warn_once(f"ARCHIVIST_GATE_HELPERS={raw} is more than this machine's {cores} cores allow; "
                           f"using {cores - 1}")
            return min(wanted, cores - 1)
        _warn_once(f"ARCHIVIST_GATE_HELPERS={raw!r} is not a whole number of 0 or more; using the default")
    if not hasattr(select, "poll"):
        return 0
    return max(0, min(cores - 1, MAX_HELPERS))


def _cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. under ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=16)
def _warn_once(message: str) -> None:
    log.warning(message)


class _Helper:
    """One helper process and its pipes; used by one batch at a time."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # the archivist this process runs
        env = {**os.environ, "ARCHIVIST_GATE_HELPERS": "0", "ARCHIVIST_GATE_PARENT": str(os.getpid()),
               "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        # a session of its own: a terminal's Ctrl-C stops the caller, and the helper ends when its pipe closes
        self.proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True, bufsize=0)  # answers are read with a deadline
        self.is_ready = False
        self.broken = False
        self.lock = threading.Lock()

    def take(self) -> bool:
        """Whether this helper is ready and now this batch's (it says so once it has warmed up)."""
        if self.broken or not self.lock.acquire(blocking=False):
            return False
        if not self.is_ready:
            poll = select.poll()
            poll.register(self.proc.stdout, select.POLLIN)
            if poll.poll(0):  # it said it is ready, or it ended (no interpreter to run it, a crash)
                try:
                    self.is_ready = _read_frame(self.proc.stdout, within=ANSWER_WITHIN) == _READY
                except (OSError, EOFError, pickle.UnpicklingError, struct.error):
                    self.is_ready = False
                self.broken = not self.is_ready
        if not self.is_ready:
            self.lock.release()
        return self.is_ready

    def release(self) -> None:
        self.lock.release()

    def send(self, part: Sequence[Reading]) -> bool:
        try:
            _write_frame(self.proc.stdin, [(m.__module__, m.__qualname__, args) for m, args in part])
            return True
        except (OSError, ValueError, pickle.PicklingError):
            self.broken = True
            return False

    def receive(self) -> list[Any] | None:
        """The next chunk of answers, or ``None`` when the helper failed or has not
        answered within :data:`ANSWER_WITHIN` seconds (stopped, swapped out, stuck)."""
        try:
            answers = _read_frame(self.proc.stdout, within=ANSWER_WITHIN)
        except (OSError, EOFError, TimeoutError, pickle.UnpicklingError, struct.error):
            return None
        return answers if isinstance(answers, list) and answers else None

    def fail(self) -> None:
        """Given up on: it is ended (it may be alive but stopped) and replaced later."""
        self.broken = True
        try:
            self.proc.kill()
        except OSError:
            pass
        self.release()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        finally:
            self.proc.stdout.close()


class _Pool:
    """The helpers of this process, started on the first large batch. One that dies is
    replaced, a few times at most (a helper that cannot run must not be retried forever)."""

    def __init__(self) -> None:
        self.helpers: list[_Helper] | None = None
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.replaced = 0

    def ready(self) -> list[_Helper]:
        with self.lock:
            if self.helpers is None or self.pid != os.getpid():  # a forked child starts its own
                self.pid, self.helpers, self.replaced = os.getpid(), [], 0
                self._start(configured_helpers())
            broken = [h for h in self.helpers if h.broken]
            for helper in broken:
                helper.close()
                self.helpers.remove(helper)
            if broken and self.replaced < MAX_REPLACED:
                self.replaced += 1
                self._start(len(broken))
        return [h for h in self.helpers if h.take()]

    def _start(self, count: int) -> None:
        try:
            for _ in range(count):
                self.helpers.append(_Helper())
        except (OSError, ValueError) as exc:
            log.warning("the gate's helper processes could not start (%s); batches are read here", exc)

    def close(self) -> None:
        with self.lock:
            if self.pid == os.getpid():  # a forked child leaves its parent's helpers alone
                for helper in self.helpers or []:
                    helper.close()
            self.helpers = []


_pool = _Pool()
atexit.register(_pool.close)


def start_helpers(wait: float = 0.0) -> int:
    """Start the helpers now (rather than on the first large batch) and wait up to
    ``wait`` seconds for them to be ready; returns how many are."""
    deadline = time.monotonic() + wait
    while True:
        ready = _pool.ready()
        for helper in ready:
            helper.release()
        if len(ready) == configured_helpers() or time.monotonic() >= deadline:
            return len(ready)
        time.sleep(0.05)


def close_helpers() -> None:
    """End this process's helpers (they also end with it); the next large batch starts new ones."""
    _in_flight.finish()
    _pool.close()
    _pool.helpers = None


def answered_by_helpers() -> int:
    """How many readings helpers have answered in this process."""
    return _in_flight.answered


def _write_frame(pipe: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_HEADER.pack(len(data)) + data)
    pipe.flush()


def _read_frame(pipe: BinaryIO, *, within: float | None = None) -> Any:
    """The next frame; with ``within``, ``pipe`` is unbuffered and the whole frame must
    come within that many seconds (:class:`TimeoutError` otherwise)."""
    header = _read_exactly(pipe, _HEADER.size, within)
    (size,) = _HEADER.unpack(header)
    return pickle.loads(_read_exactly(pipe, size, within))  # noqa: S301 - the peer is this package's own helper


def _read_exactly(pipe: BinaryIO, size: int, within: float | None) -> bytes:
    if within is None:
        data = pipe.read(size)
        if len(data) < size:
            raise EOFError("the pipe closed")
        return data
    deadline, parts, got = time.monotonic() + within, [], 0
    poll = select.poll()
    poll.register(pipe, select.POLLIN)
    while got < size:
        if not poll.poll(max(0.0, deadline - time.monotonic()) * 1000):
            raise TimeoutError(f"no answer within {within:g} s")
        part = os.read(pipe.fileno(), size - got)
        if not part:
            raise EOFError("the pipe closed")
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _end_with(parent: int) -> None:
    """Watch the parent from a thread: a busy helper whose caller ended (killed, even)
    ends within a second, not when it next writes into the closed pipe."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGKILL)  # an orphan with nothing to finish

    threading.Thread(target=watch, name="archivist-parent-watch", daemon=True).start()


def _serve() -> None:
    """The helper's loop: read a batch of readings, answer each in order, until the pipe closes."""
    _end_with(int(os.environ.get("ARCHIVIST_GATE_PARENT", "0")) or os.getppid())
    source, sink = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else writes to stdout (a library's notice) cannot reach the pipe
    from ..index.signatures import Signatures
    from .governance import screen
    from .recognise import doubt

    warm = "The user likes green tea. 用户喜欢喝绿茶。"  # loads the gate's models before saying it is ready
    screen(warm), doubt(warm), Signatures.of(warm)
    _write_frame(sink, _READY)
    while True:
        try:
            batch = _read_frame(source)
        except EOFError:
            return
        for start in range(0, len(batch), CHUNK):
            answers = []
            for module, name, args in batch[start:start + CHUNK]:
                reading = getattr(importlib.import_module(module), name)
                if not isinstance(reading, Memo):
                    raise TypeError(f"{module}.{name} is not a reading")
                answers.append(reading(*args))
            _write_frame(sink, answers)


if __name__ == "__main__":
    _serve()
