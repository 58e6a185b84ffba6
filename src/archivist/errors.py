"""The exception tree. Every error a caller can see is an :class:`ArchivistError`::

    ArchivistError
    ├── InvalidInput                 bad data from the caller; nothing was written
    │   ├── InvalidIdentity          empty / oversized tenant, user or agent
    │   ├── InvalidCandidate         a malformed fact candidate (carries ``reason``)
    │   ├── UnknownSection           a context section name that does not exist
    │   └── InvalidBudget            budget ≤ 0, or not above the output reserve
    ├── WriteRejected                well-formed, but the write gate said no (``reason``)
    ├── StaleWrite                   a versioned write based on an older version
    ├── FactNotFound
    ├── EvidenceNotFound             no such evidence for this caller
    ├── TraceNotFound
    ├── TaskNotFound
    ├── ReviewItemNotFound (an InvalidInput too)
    ├── BudgetExceeded               protected content does not fit the token budget
    │   ├── ProfileTooLarge
    │   └── ContextOverflow          the protected zone of a model view alone is too big
    ├── TokenizerUnavailable         the offline tokenizer data could not be loaded
    ├── EmbedderError                the embedder failed (unreachable, bad reply)
    ├── EmbedderMismatch             the store's vectors come from another model/dimension
    └── StoreError                   the store could not do its job
        ├── StoreLocked              another writer held the database past the timeout
        │   └── StoreUnavailable     the database server cannot be reached now (a restart)
        ├── StoreNotFound            a read named a store file that does not exist
        ├── StoreCorrupt             the file is not a database or failed its checks
        └── SchemaTooNew             the file was written by a newer archivist
"""

from __future__ import annotations


class ArchivistError(Exception):
    """Base of every error raised on purpose by archivist."""


class InvalidInput(ArchivistError, ValueError):
    pass


class InvalidIdentity(InvalidInput):
    pass


class InvalidCandidate(InvalidInput):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownSection(InvalidInput):
    pass


class InvalidBudget(InvalidInput):
    pass


class StaleWrite(ArchivistError):
    """A write carried the version it was based on, and that is no longer current."""

    def __init__(self, message: str, *, expected: int, current: int) -> None:
        super().__init__(message)
        self.expected = expected
        self.current = current


class EvidenceNotFound(ArchivistError, LookupError):
    pass


class TraceNotFound(ArchivistError, LookupError):
    pass


class TaskNotFound(ArchivistError, LookupError):
    pass


class ReviewItemNotFound(InvalidInput, LookupError):
    """No open review item of that id in this scope (an :class:`InvalidInput` as before)."""


class WriteRejected(ArchivistError):
    """The write gate refused a well-formed write; ``code`` is machine-readable."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


class FactNotFound(ArchivistError, LookupError):
    pass


class BudgetExceeded(ArchivistError):
    def __init__(self, message: str, *, needed: int, budget: int) -> None:
        super().__init__(message)
        self.needed = needed
        self.budget = budget


class ProfileTooLarge(BudgetExceeded):
    pass


class ContextOverflow(BudgetExceeded):
    """``sizes`` maps each protected section to its tokens."""

    def __init__(self, message: str, *, needed: int, budget: int, sizes: dict[str, int]) -> None:
        super().__init__(message, needed=needed, budget=budget)
        self.sizes = sizes


class TokenizerUnavailable(ArchivistError):
    pass


class EmbedderError(ArchivistError):
    """The embedder could not produce vectors (unreachable, bad reply, missing model)."""


class EmbedderMismatch(ArchivistError):
    """Vectors of two models never mix: re-embed with ``archivist reindex --vectors``."""

    def __init__(self, model: str, dim: int, stored_model: str, stored_dim: int) -> None:
        super().__init__(
            f"this store's vectors were made by {stored_model} (dimension {stored_dim}), not {model} "
            f"(dimension {dim}); run `archivist reindex --vectors --embedder ...` to re-embed"
        )
        self.model, self.dim, self.stored_model, self.stored_dim = model, dim, stored_model, stored_dim


class AccessDenied(ArchivistError, PermissionError):
    """A server refused the API key (``status`` 401) or what it may do (403)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class RemoteUnavailable(ArchivistError):
    """A memory server could not be reached, kept answering busy, or failed (after retries)."""


class StoreError(ArchivistError):
    pass


class StoreConflict(StoreError):
    """A write collided with a rule the database enforces (a unique key, a link)."""


class StoreLocked(StoreError):
    pass


class StoreUnavailable(StoreLocked):
    """The database server cannot be reached right now (restarting, connection dropped,
    refused). Nothing was written unless the message says the commit's outcome is
    unknown; the store reconnects by itself, so the same call can be made again later.
    A :class:`StoreLocked` because callers do the same about both (wait, try again):
    the ingest queue's retry, and clients' handling of a 503, cover it as they are."""


class StoreNotFound(StoreError, LookupError):
    """A command that only reads named a store that does not exist; it is never created
    by reading (a mistyped path would otherwise become an empty store)."""


class StoreCorrupt(StoreError):
    pass


class SchemaTooNew(StoreError):
    pass
