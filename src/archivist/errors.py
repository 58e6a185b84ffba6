"""The exception tree. Every error a caller can see is an :class:`ArchivistError`::

    ArchivistError
    ├── InvalidInput                 bad data from the caller; nothing was written
    │   ├── InvalidIdentity          empty / oversized tenant, user or agent
    │   ├── InvalidCandidate         a malformed fact candidate (carries ``reason``)
    │   └── UnknownProfileSection
    ├── WriteRejected                well-formed, but the write gate said no (``reason``)
    ├── FactNotFound
    ├── BudgetExceeded               protected content does not fit the token budget
    │   └── ProfileTooLarge
    ├── TokenizerUnavailable         the offline tokenizer data could not be loaded
    └── StoreError                   the store could not do its job
        ├── StoreLocked              another writer held the database past the timeout
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


class UnknownProfileSection(InvalidInput):
    pass


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


class TokenizerUnavailable(ArchivistError):
    pass


class StoreError(ArchivistError):
    pass


class StoreLocked(StoreError):
    pass


class StoreCorrupt(StoreError):
    pass


class SchemaTooNew(StoreError):
    pass
