"""Embedding what has no vector, in the background of a long-running process.

A fact is committed before its vector is written, so a crash between the two, an
embedder outage or a store written keyword-only leaves facts that only their words can
find. ``archivist serve`` and ``archivist mcp`` heal that themselves: at start, and then
every ``interval`` seconds, they embed what is missing, off the request path. A vector is
only written for a fact that is still there (the store checks in the same transaction),
so a forget that lands meanwhile wins.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger("archivist.vectors")

#: seconds between two looks for facts without a vector
INTERVAL = 60.0


class VectorBackfill:
    """A daemon thread that embeds the facts without vectors of one :class:`Memory`."""

    def __init__(self, memory: Any, *, interval: float = INTERVAL) -> None:
        self.memory, self.interval = memory, interval
        self.embedded = 0  # how many, since start
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing: str | None = None  # the last error said, so an outage is logged once

    def start(self) -> VectorBackfill:
        if self.memory.embedder is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="archivist-vector-backfill", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> int:
        """Embed every fact that has none now; how many were embedded."""
        if self.memory.embedder is None or not self.memory.store.facts_without_vectors(limit=1):
            return 0
        done = self.memory.embed_missing()
        self.embedded += done
        log.info("embedded %d facts that had no vector", done)
        return done

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
                self._failing = None
            except Exception as exc:  # an embedder outage or a closed store: try again later
                said = f"{type(exc).__name__}: {exc}"
                if said != self._failing:
                    log.warning("facts without vectors not embedded yet (%s); trying again in %.0f s",
                                said, self.interval)
                self._failing = said
            self._stop.wait(self.interval)
