"""archivist: long-term memory and runtime context assembly for LLM agents.

The public API is what ``__all__`` lists; everything else is an implementation
module that may change.
"""

from .clock import Clock, FixedClock, SystemClock
from .context.assemble import Assembler, ContextRequest, ContextTrace, ModelView, RuleBasedPlanner
from .context.history import ChatModelSummarizer, StructuredSummarizer, Summary, trim_history
from .context.memory_block import RenderedMemory
from .client import AsyncRemoteMemory, RemoteMemory
from .errors import (
    AccessDenied,
    ArchivistError,
    BudgetExceeded,
    ContextOverflow,
    EvidenceNotFound,
    FactNotFound,
    InvalidCandidate,
    InvalidBudget,
    InvalidIdentity,
    InvalidInput,
    ProfileTooLarge,
    RemoteUnavailable,
    SchemaTooNew,
    StaleWrite,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    StoreNotFound,
    TokenizerUnavailable,
    ReviewItemNotFound,
    TaskNotFound,
    TraceNotFound,
    UnknownSection,
    WriteRejected,
)
from .memory import ApplyReport, Memory, MemoryScope
from .model import (
    AuditEntry,
    Authority,
    Category,
    Durability,
    Evidence,
    Fact,
    FactScope,
    ForgetReceipt,
    Identity,
    Kind,
    Preference,
    Profile,
    ProfileSection,
    ProfileSentence,
    Provenance,
    SearchHit,
    SourceType,
    Status,
    TaskState,
)
from .pipeline.episodes import EpisodePolicy
from .pipeline.filtering import FilterResult, MessageFilter, Row, filter_messages
from .pipeline.governance import GovernanceConfig
from .retrieval.rank import KeywordRanking
from .storage.base import Store
from .storage.sqlite import SQLiteStore
from .tokens import TiktokenCounter, TokenCounter

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "ApplyReport",
    "ArchivistError",
    "Assembler",
    "AsyncRemoteMemory",
    "AuditEntry",
    "Authority",
    "BudgetExceeded",
    "Category",
    "ChatModelSummarizer",
    "Clock",
    "ContextOverflow",
    "ContextRequest",
    "ContextTrace",
    "Durability",
    "EpisodePolicy",
    "Evidence",
    "EvidenceNotFound",
    "Fact",
    "FactNotFound",
    "FactScope",
    "FilterResult",
    "FixedClock",
    "ForgetReceipt",
    "GovernanceConfig",
    "Identity",
    "InvalidBudget",
    "InvalidCandidate",
    "InvalidIdentity",
    "InvalidInput",
    "KeywordRanking",
    "Kind",
    "Memory",
    "MemoryScope",
    "MessageFilter",
    "ModelView",
    "Preference",
    "Profile",
    "ProfileSection",
    "ProfileSentence",
    "ProfileTooLarge",
    "Provenance",
    "RemoteMemory",
    "RemoteUnavailable",
    "RenderedMemory",
    "ReviewItemNotFound",
    "Row",
    "RuleBasedPlanner",
    "SQLiteStore",
    "SchemaTooNew",
    "SearchHit",
    "SourceType",
    "StaleWrite",
    "Status",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreNotFound",
    "StructuredSummarizer",
    "Summary",
    "SystemClock",
    "TaskNotFound",
    "TaskState",
    "TiktokenCounter",
    "TokenCounter",
    "TokenizerUnavailable",
    "TraceNotFound",
    "UnknownSection",
    "WriteRejected",
    "filter_messages",
    "trim_history",
]
