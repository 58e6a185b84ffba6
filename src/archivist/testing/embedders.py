"""A deterministic embedder for tests and torture runs: no model, no download, no ties.

Vectors carry no meaning (similar texts are not near each other); they exercise the
vector index, its bookkeeping and its agreement with the store, not recall quality."""

from __future__ import annotations

import hashlib

import numpy as np


class HashEmbedder:
    """A unit vector seeded by the text's SHA-256."""

    def __init__(self, name: str = "hash-48", dim: int = 48) -> None:
        self.name, self.dim = name, dim

    def _one(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts):
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._one("q:" + text)
