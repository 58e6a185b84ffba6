"""A LangGraph ``BaseStore`` backed by an archivist store.

Items live in the same SQLite (or other) store as memory, in their own table, under a
tenant fixed by the adapter (never by the caller). By convention the first element of
a namespace is the user id — ``("alice", "memories")`` — so forgetting a user removes
their items too. ``batch``/``abatch`` handle Get, Put (``value=None`` deletes), Search
and ListNamespaces; TTLs are in minutes (``refresh_ttl`` on read extends them).

Search: equality ``filter`` on top-level value fields, then, with a ``query``, the same
fusion as memory recall — a keyword ranking (bm25 over the same tokenizer, jieba for
Chinese) and, when the memory has an embedder, a cosine ranking, fused by reciprocal
rank (see :mod:`archivist.retrieval.hybrid`). Without a query, newest first.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..clock import parse_time
from ..errors import InvalidInput, WriteRejected
from ..index.text import query_terms
from ..model import cache_key
from ..pipeline.governance import screen

SEP = "\x1f"


def _strings(value: Any) -> list[str]:
    """Every string in a stored value (keys included), each screened on its own."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *_strings(v)]]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _text(value: dict[str, Any]) -> str:
    for name in ("content", "text", "memory", "data"):
        if isinstance(value.get(name), str):
            return value[name]
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _bm25(query: list[str], docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / n if n else 0.0
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for d in docs:
        tf = Counter(d)
        score = 0.0
        for t in set(query):
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(d) / (avg or 1)))
        scores.append(score)
    return scores


_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
        "$gt": lambda a, b: a is not None and a > b, "$gte": lambda a, b: a is not None and a >= b,
        "$lt": lambda a, b: a is not None and a < b, "$lte": lambda a, b: a is not None and a <= b}


def _matches(actual: Any, wanted: Any) -> bool:
    """LangGraph filter semantics: a plain value means equality; a dict of $eq/$ne/$gt/
    $gte/$lt/$lte operators compares (an unknown operator is an error, not a silent miss)."""
    if isinstance(wanted, dict) and wanted and all(str(k).startswith("$") for k in wanted):
        unknown = sorted(set(wanted) - set(_OPS))
        if unknown:
            raise InvalidInput(f"unsupported filter operator(s): {', '.join(unknown)}")
        try:
            return all(_OPS[op](actual, value) for op, value in wanted.items())
        except TypeError:
            return False
    return actual == wanted


class ArchivistStore(BaseStore):
    """``BaseStore`` over ``memory.store``; one tenant per adapter."""

    supports_ttl = True

    def __init__(self, memory: Any, *, tenant: str = "default", rrf_k: int = 5) -> None:
        self.memory, self.tenant, self.rrf_k = memory, tenant, rrf_k

    # -- BaseStore ------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))  # store I/O off the event loop

    # -- operations -------------------------------------------------------------
    def _one(self, op: Op) -> Result:
        now = self.memory.clock.now()
        store = self.memory.store
        if isinstance(op, GetOp):
            ns = self._ns(op.namespace)
            rows = store.graph_items(self.tenant, ns, now, key=op.key)
            if rows and op.refresh_ttl:
                store.graph_touch(self.tenant, [(ns, op.key)], now)
            return self._item(rows[0]) if rows else None
        if isinstance(op, PutOp):
            ns = self._ns(op.namespace)
            if op.value is None:
                store.graph_delete(self.tenant, ns, op.key)
                return None
            if not isinstance(op.value, dict):
                raise InvalidInput("a LangGraph store value must be a dict")
            problem = next((p for p in map(screen, [*op.namespace, op.key, *_strings(op.value)]) if p), None)
            if problem:  # the same content policy as every memory write
                raise WriteRejected(problem.code, problem.reason)
            ttl = op.ttl if isinstance(op.ttl, int | float) else None
            store.graph_put(self.tenant, ns, op.namespace[0], op.key, json.dumps(op.value, ensure_ascii=False),
                            now, ttl)
            return None
        if isinstance(op, SearchOp):
            return self._search(op, now)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op, now)
        raise InvalidInput(f"unsupported store operation {type(op).__name__}")

    @staticmethod
    def _ns(namespace: tuple[str, ...]) -> str:
        if not namespace or any(not isinstance(p, str) or not p or SEP in p for p in namespace):
            raise InvalidInput("a namespace is a non-empty tuple of non-empty strings")
        return SEP.join(namespace)

    @staticmethod
    def _item(row: tuple, score: float | None = None, *, search: bool = False) -> Item:
        ns, key, value, created, updated = row[:5]
        kwargs = {"namespace": tuple(ns.split(SEP)), "key": key, "value": json.loads(value),
                  "created_at": parse_time(created), "updated_at": parse_time(updated)}
        return SearchItem(score=score, **kwargs) if search else Item(**kwargs)

    def _search(self, op: SearchOp, now) -> list[SearchItem]:
        prefix = self._ns(op.namespace_prefix) if op.namespace_prefix else ""
        rows = self.memory.store.graph_items(self.tenant, prefix, now)
        if op.filter:
            rows = [r for r in rows if all(_matches(json.loads(r[2]).get(k), v) for k, v in op.filter.items())]
        if op.query and op.query.strip() and rows:
            rows, scores = self._rank(op.query, rows)
        else:
            scores = [None] * len(rows)
        page = list(zip(rows, scores, strict=True))[op.offset : op.offset + op.limit]
        if op.refresh_ttl and page:
            self.memory.store.graph_touch(self.tenant, [(r[0], r[1]) for r, _ in page], now)
        return [self._item(r, s, search=True) for r, s in page]

    def _rank(self, query: str, rows: list[tuple]) -> tuple[list[tuple], list[float]]:
        texts = [_text(json.loads(r[2])) for r in rows]
        fused = [0.0] * len(rows)
        keyword = _bm25(query_terms(query), [query_terms(t, limit=10_000) for t in texts])
        for rank, i in enumerate(sorted((i for i in range(len(rows)) if keyword[i] > 0), key=lambda i: -keyword[i])):
            fused[i] += 1.0 / (self.rrf_k + rank + 1)
        embedder = self.memory.embedder
        if embedder is not None:
            vectors = self._vectors(texts)
            cosine = vectors @ embedder.embed_query(query)
            for rank, i in enumerate(np.argsort(-cosine, kind="stable")):
                fused[i] += 1.0 / (self.rrf_k + rank + 1)
        order = sorted(range(len(rows)), key=lambda i: (-fused[i], i))
        return [rows[i] for i in order if fused[i] > 0], [fused[i] for i in order if fused[i] > 0]

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Embeddings through the memory's cache (model, this adapter's tenant, content)."""
        embedder, store = self.memory.embedder, self.memory.store
        hashes = [cache_key(self.tenant, t) for t in texts]
        cached = store.cached_embeddings(embedder.name, sorted(set(hashes)))
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in cached}.items())
        if missing:
            fresh = embedder.embed_documents([t for _, t in missing])
            pairs = [(h, fresh[i]) for i, (h, _) in enumerate(missing)]
            store.cache_embeddings(embedder.name, pairs)
            cached.update(pairs)
        return np.stack([cached[h] for h in hashes])

    def _namespaces(self, op: ListNamespacesOp, now) -> list[tuple[str, ...]]:
        spaces = [tuple(ns.split(SEP)) for ns in self.memory.store.graph_namespaces(self.tenant, now)]
        for cond in op.match_conditions or ():
            path = tuple(cond.path)
            if cond.match_type == "prefix":
                spaces = [s for s in spaces if len(s) >= len(path) and
                          all(p == "*" or p == s[i] for i, p in enumerate(path))]
            else:
                spaces = [s for s in spaces if len(s) >= len(path) and
                          all(p == "*" or p == s[len(s) - len(path) + i] for i, p in enumerate(path))]
        if op.max_depth is not None:
            spaces = sorted({s[: op.max_depth] for s in spaces})
        return spaces[op.offset : op.offset + op.limit]
