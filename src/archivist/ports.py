"""The small protocols the layers under :mod:`archivist.memory` hold a memory and a
scope by (they cannot import them: memory sits above them). ``Memory`` and
``MemoryScope`` satisfy them; a test double can too."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from .clock import Clock
from .index.embed import Embedder
from .model import Identity
from .pipeline.governance import GovernanceConfig
from .storage.base import Store
from .write import Writer


class MemoryPort(Protocol):
    """A memory as lifecycle and context code use it: its store, clock, embedder, write
    policy and writer."""

    store: Store
    clock: Clock
    embedder: Embedder | None
    governance: GovernanceConfig

    def writer(self, identity: Identity, *, warnings: list[str] | None = None,
               now: datetime | None = None) -> Writer: ...


class ScopePort(Protocol):
    """One (tenant, user, agent[, project]) of a memory, and its search."""

    identity: Identity
    memory: MemoryPort

    def search(self, query: str, k: int = 5, **options: Any) -> Sequence[Any]: ...


__all__ = ["MemoryPort", "ScopePort"]
