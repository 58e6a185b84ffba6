"""archivist: long-term memory and runtime context assembly for LLM agents.

The public API is what ``__all__`` lists; everything else is an implementation
module that may change.
"""

from .clock import Clock, FixedClock, SystemClock
from .context.memory_block import RenderedMemory
from .errors import (
    ArchivistError,
    BudgetExceeded,
    FactNotFound,
    InvalidCandidate,
    InvalidIdentity,
    InvalidInput,
    ProfileTooLarge,
    SchemaTooNew,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    TokenizerUnavailable,
    WriteRejected,
)
from .memory import ApplyReport, Memory, MemoryScope
from .model import (
    AuditEntry,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Identity,
    Kind,
    Profile,
    ProfileSection,
    Provenance,
    SearchHit,
    SourceType,
    Status,
)
from .pipeline.filtering import FilterResult, MessageFilter, Row, filter_messages
from .pipeline.governance import GovernanceConfig
from .retrieval.rank import KeywordRanking
from .storage.base import Store
from .storage.sqlite import SQLiteStore
from .tokens import TiktokenCounter, TokenCounter

__version__ = "0.1.0"

__all__ = [
    "ApplyReport",
    "ArchivistError",
    "AuditEntry",
    "Authority",
    "BudgetExceeded",
    "Category",
    "Clock",
    "Durability",
    "Fact",
    "FactNotFound",
    "FactScope",
    "FilterResult",
    "FixedClock",
    "GovernanceConfig",
    "Identity",
    "InvalidCandidate",
    "InvalidIdentity",
    "InvalidInput",
    "KeywordRanking",
    "Kind",
    "Memory",
    "MemoryScope",
    "MessageFilter",
    "Profile",
    "ProfileSection",
    "ProfileTooLarge",
    "Provenance",
    "RenderedMemory",
    "Row",
    "SQLiteStore",
    "SchemaTooNew",
    "SearchHit",
    "SourceType",
    "Status",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "SystemClock",
    "TiktokenCounter",
    "TokenCounter",
    "TokenizerUnavailable",
    "WriteRejected",
    "filter_messages",
]
