"""The memory domain, pure: records and enums, text folding and content hashing, and
the one table of single-valued attributes. No I/O, no clock, no store."""

from .folding import cache_key, compact, content_hash, normalize, sanitize, unspaced
from .records import *  # noqa: F403 - the records are the model's public surface
from .records import ForgetReceipt, __all__ as _records

__all__ = [*_records, "ForgetReceipt", "cache_key", "compact", "content_hash", "normalize", "sanitize", "unspaced"]
