"""A LangGraph ``BaseStore`` backed by an archivist store.

Items live in the same SQLite or PostgreSQL store as memory, in their own table, under a
tenant fixed by the adapter (never by the caller). By convention the first element of
a namespace is the user id — ``("alice", "memories")`` — so forgetting a user removes
their items too. The constructor takes LangGraph's ``index=`` and ``ttl=`` settings.

- **Index** (``index={"embed", "dims", "fields"}``): a LangChain ``Embeddings``, an
  embedding function or an archivist embedder. Each put is embedded at write time — the
  texts at ``fields`` (default ``["$"]``, the whole value), or the put's own
  ``index=[paths]``; ``index=False`` stores the item unindexed. The vectors are kept in
  the item's row and go wherever it goes (delete, expiry, ``forget_user``). Without
  ``index=``, the memory's embedder (if any) indexes whole values.
- **Search with a query**: with an index, items are ordered by cosine similarity to the
  query and ``score`` is that similarity (an item's best field); items with no vectors
  follow with ``score=None``. Without an index, every item that passes the filter is
  returned, keyword matches (bm25, jieba for Chinese) first, all with ``score=None`` —
  there is no similarity to report.
- **Filters** as InMemoryStore's: equality, nested dicts, lists, and ``$eq $ne $gt $gte
  $lt $lte``; a key may also be a dotted path (``"meta.kind"``) as in the SQL stores.
- **TTL** in minutes: ``ttl=0`` expires an item at once, ``None`` never; ``ttl=
  {"default_ttl", "refresh_on_read", "sweep_interval_minutes"}`` as LangGraph defines
  them. Expired items are invisible at once and deleted by :meth:`sweep_ttl` or the
  background sweeper (:meth:`start_ttl_sweeper`).

A batch is checked whole before anything is embedded or written: a value the memory's
content policy refuses (a secret, an instruction to the assistant) raises
``WriteRejected`` and nothing of the batch is stored or sent to the embedder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import math
import re
import threading
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memory import Memory

import numpy as np
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import (
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from ..clock import parse_time
from ..errors import InvalidInput, WriteRejected
from ..index.text import query_terms
from ..pipeline.governance import screen
from ..pipeline.recognise import doubt
from ..storage.rows import graph_item_vectors

log = logging.getLogger(__name__)

SEP = "\x1f"
_INDEX_KEYS = {"dims", "embed", "fields", "text_fields", "distance_type", "ann_index_config"}
_DISTANCES = ("cosine", "inner_product", "l2")
#: a filter key: a field name or dotted path (letters of any script, digits, _ . -)
_FILTER_KEY = re.compile(r"[\w.\-]+")
_TTL_KEYS = {"default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired"}


def _strings(value: Any) -> list[str]:
    """The texts of a stored value the content policy reads: every string and number, every
    key, and each key with its scalar value as one line ("password: Tr0ub4dor&3",
    "credit card: 4111…") — a field name is what says a value is a secret."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            out += [str(k), *_strings(v)]
            if isinstance(v, str) or (isinstance(v, int | float) and not isinstance(v, bool)):
                out.append(f"{re.sub(r'[_-]+', ' ', str(k))}: {v}")
        return out
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _encodable(texts: Iterable[str]) -> None:
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("text with a lone surrogate (not valid Unicode) cannot be stored") from None


def _ttl_minutes(ttl: Any) -> None:
    """Refuse a put's ttl that is not a finite, non-negative number of minutes (or None)."""
    if ttl is None or ttl is NOT_PROVIDED:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl < 0:
        raise InvalidInput(f"ttl must be a non-negative number of minutes or None (got {ttl!r})")


def _text(value: dict[str, Any]) -> str:
    """The words keyword ranking reads: the usual text field, else the whole value."""
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


# -- filters -------------------------------------------------------------------------

def _ordered(a: Any, b: Any) -> tuple[Any, Any] | None:
    """Two values that can be ordered: both numbers (not booleans) or both text."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return a, b
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    return None


_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
        "$gt": lambda a, b: (p := _ordered(a, b)) is not None and p[0] > p[1],
        "$gte": lambda a, b: (p := _ordered(a, b)) is not None and p[0] >= p[1],
        "$lt": lambda a, b: (p := _ordered(a, b)) is not None and p[0] < p[1],
        "$lte": lambda a, b: (p := _ordered(a, b)) is not None and p[0] <= p[1]}


def _check_filter(wanted: Any) -> None:
    """Refuse what a filter cannot mean, before a batch runs."""
    if isinstance(wanted, dict):
        operators = [k for k in wanted if isinstance(k, str) and k.startswith("$")]
        if operators and len(operators) != len(wanted):
            raise InvalidInput("a filter value mixes $operators with field names")
        unknown = sorted(set(operators) - set(_OPS))
        if unknown:
            raise InvalidInput(f"unsupported filter operator(s): {', '.join(unknown)} "
                               f"(supported: {', '.join(sorted(_OPS))})")
        for value in wanted.values():
            if not operators:
                _check_filter(value)
    elif isinstance(wanted, (list, tuple)):
        for value in wanted:
            _check_filter(value)


def _matches(actual: Any, wanted: Any) -> bool:
    """InMemoryStore's filter semantics: operators compare, a dict matches a dict field
    by field, a list matches a list of the same length item by item, else equality."""
    if isinstance(wanted, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_OPS[op](actual, value) for op, value in wanted.items())
        return isinstance(actual, dict) and all(_matches(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(wanted)
                and all(_matches(a, w) for a, w in zip(actual, wanted)))
    return actual == wanted


def _field(value: dict[str, Any], key: str) -> Any:
    """A top-level field, else a dotted path into nested objects (None when absent)."""
    if key in value or "." not in key:
        return value.get(key)
    current: Any = value
    for part in key.split("."):
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return current


# -- configuration -----------------------------------------------------------------------

def _index_config(index: Any, fallback: Any) -> tuple[dict[str, Any] | None, Any, list[tuple[str, Any]]]:
    """(config, embeddings, tokenized fields) from LangGraph's ``index=`` or the memory's embedder."""
    if index is None:
        if fallback is None:
            return None, None, []
        return {"dims": getattr(fallback, "dim", None), "embed": fallback, "fields": ["$"]}, fallback, [("$", "$")]
    if not isinstance(index, Mapping):
        raise InvalidInput("index must be a dict such as {'embed': embeddings, 'dims': 384, 'fields': ['$']}")
    unknown = sorted(set(index) - _INDEX_KEYS)
    if unknown:
        raise InvalidInput(f"unknown index setting(s): {', '.join(unknown)} (known: {', '.join(sorted(_INDEX_KEYS))})")
    if index.get("embed") is None:
        raise InvalidInput("index needs 'embed': a LangChain Embeddings, an embedding function or an archivist embedder")
    dims = index.get("dims")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims < 1):
        raise InvalidInput("index 'dims' must be a positive integer")
    if index.get("distance_type", "cosine") not in _DISTANCES:
        raise InvalidInput(f"index 'distance_type' must be one of {', '.join(_DISTANCES)}")
    if index.get("fields") is not None and index.get("text_fields") is not None:
        raise InvalidInput("give index 'fields' or its SqliteStore name 'text_fields', not both")
    fields = index.get("fields") or index.get("text_fields") or ["$"]
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidInput("index 'fields' must be a list of JSON paths such as ['content', 'tags[*]']")
    embed = index["embed"]
    if not (hasattr(embed, "embed_documents") and hasattr(embed, "embed_query")):
        try:
            embed = ensure_embeddings(embed)
        except Exception as exc:
            raise InvalidInput(f"index 'embed' cannot be used: {exc}") from exc
    config = {**index, "fields": list(fields)}
    return config, embed, [(f, f if f == "$" else tokenize_path(f)) for f in fields]


def _ttl_config(ttl: Any) -> TTLConfig | None:
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidInput("ttl must be a dict such as {'default_ttl': 60, 'refresh_on_read': True}")
    unknown = sorted(set(ttl) - _TTL_KEYS)
    if unknown:
        raise InvalidInput(f"unknown ttl setting(s): {', '.join(unknown)} (known: {', '.join(sorted(_TTL_KEYS))})")
    for name in ("default_ttl", "sweep_interval_minutes"):
        value = ttl.get(name)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool) or value < 0
                                  or not math.isfinite(value)):
            raise InvalidInput(f"ttl '{name}' must be a non-negative number of minutes")
    return dict(ttl)  # type: ignore[return-value]


def _similarities(query: np.ndarray, matrix: np.ndarray, distance: str = "cosine") -> np.ndarray:
    """Higher is closer: cosine similarity, the inner product, or minus the L2 distance
    (the scores LangGraph's stores report for each ``distance_type``), in float64; a
    cosine is held to [-1, 1] so that an identical text scores exactly 1.0."""
    query, matrix = query.astype(np.float64), matrix.astype(np.float64)
    if distance == "inner_product":
        return matrix @ query
    if distance == "l2":
        return -np.linalg.norm(matrix - query, axis=1)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
    cosine = np.divide(matrix @ query, norms, out=np.zeros(len(matrix)), where=norms > 0)
    return np.clip(np.round(cosine, 12), -1.0, 1.0)


class ArchivistStore(BaseStore):
    """``BaseStore`` over the tenant's items of a :class:`Memory` (``memory.items(tenant)``); one tenant per adapter."""

    supports_ttl = True

    def __init__(self, memory: Memory, *, tenant: str = "default", index: IndexConfig | None = None,
                 ttl: TTLConfig | None = None) -> None:
        self.memory, self.tenant = memory, tenant
        self.index_config, self.embeddings, self._fields = _index_config(index, memory.embedder)
        self._distance = (self.index_config or {}).get("distance_type", "cosine")
        self.ttl_config = _ttl_config(ttl)
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    def close(self) -> None:
        """Stop the background sweeper (the memory stays open: it is the caller's)."""
        self.stop_ttl_sweeper()

    def __enter__(self) -> ArchivistStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- BaseStore ------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        texts, queries = self._plan(ops)
        documents = self._as_matrix(self.embeddings.embed_documents(texts), len(texts)) if texts else None
        query_vectors = {q: self._as_vector(self.embeddings.embed_query(q)) for q in queries}
        return self._run(ops, documents, query_vectors)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        texts, queries = self._plan(ops)
        documents, query_vectors = None, {}
        if texts or queries:
            embeddings = self.embeddings
            if hasattr(embeddings, "aembed_documents"):  # LangChain's async interface
                if texts:
                    documents = self._as_matrix(await embeddings.aembed_documents(texts), len(texts))
                vectors = await asyncio.gather(*(embeddings.aembed_query(q) for q in queries))
            else:
                if texts:
                    documents = self._as_matrix(await asyncio.to_thread(embeddings.embed_documents, texts), len(texts))
                vectors = [await asyncio.to_thread(embeddings.embed_query, q) for q in queries]
            query_vectors = {q: self._as_vector(v) for q, v in zip(queries, vectors, strict=True)}
        return await asyncio.to_thread(self._run, ops, documents, query_vectors)  # store I/O off the event loop

    # -- TTL ------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Delete this tenant's expired items now; how many were deleted."""
        return self.memory.items(self.tenant).sweep(self.memory.clock.now())

    async def asweep_ttl(self) -> int:
        return await asyncio.to_thread(ArchivistStore.sweep_ttl, self)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep every ``sweep_interval_minutes`` (else the ttl setting, else 5) in a
        background thread until :meth:`stop_ttl_sweeper`; the future ends with the thread.
        Without a ttl setting there is nothing to sweep and the future is already done."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            done.set_result(None)
            return done
        if self._sweeper is not None and self._sweeper.is_alive():
            done.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
            return done
        minutes = sweep_interval_minutes or self.ttl_config.get("sweep_interval_minutes") or 5
        if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not math.isfinite(minutes) \
                or minutes <= 0 or minutes > 60 * 24 * 365:
            raise InvalidInput("sweep_interval_minutes must be a positive number of minutes, at most a year")
        self._stop_sweeping.clear()
        stop, store = self._stop_sweeping, weakref.ref(self)  # a dropped store ends its sweeper
        when_closed = getattr(self.memory, "when_closed", None)
        if when_closed is not None:
            when_closed(stop.set)  # closing the memory wakes the sweeper, which then ends

        def sweep_until_stopped() -> None:
            while not stop.wait(float(minutes) * 60):
                current = store()
                if current is None or getattr(current.memory, "closed", False):
                    break
                try:
                    swept = ArchivistStore.sweep_ttl(current)  # the thread's own call, sync in both classes
                    if swept:
                        log.info("swept %d expired store items", swept)
                except Exception:  # a failed sweep is retried at the next interval
                    log.exception("TTL sweep failed")
                del current
            if not done.done():
                done.set_result(None)

        self._sweeper = threading.Thread(target=sweep_until_stopped, name="archivist-ttl-sweeper", daemon=True)
        self._sweeper.start()
        done.add_done_callback(lambda f: stop.set() if f.cancelled() else None)
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; False when it did not stop within ``timeout`` seconds."""
        if self._sweeper is None or not self._sweeper.is_alive():
            return True
        self._stop_sweeping.set()
        self._sweeper.join(timeout)
        if self._sweeper.is_alive():
            return False
        self._sweeper = None
        return True

    # -- planning: everything is checked before anything is embedded or written ---------
    def _plan(self, ops: list[Op]) -> tuple[list[str], list[str]]:
        """Check every op; the texts puts index (in op order) and the distinct queries."""
        texts: list[str] = []
        queries: list[str] = []
        for op in ops:
            if isinstance(op, PutOp):
                self._ns(op.namespace)
                if op.value is None:
                    continue
                if not isinstance(op.value, dict):
                    raise InvalidInput("a LangGraph store value must be a dict")
                self._check_index(op.index)
                _ttl_minutes(op.ttl)
                texts_read = [*op.namespace, str(op.key), *_strings(op.value)]
                _encodable(texts_read)
                problem = next((p for p in map(screen, texts_read) if p), None)
                if problem:  # the same content policy as every memory write
                    raise WriteRejected(problem.code, problem.reason)
                whole = "\n".join(_strings(op.value))  # a waiver in one field and an action in another: one order
                problem = screen(whole) if len(texts_read) > 3 else None
                unsure = doubt(whole, addressed_ok=True, requests_ok=True, language_ok=True)  # the application's data
                if problem:
                    raise WriteRejected(problem.code, problem.reason)
                if unsure:  # an item has no unconfirmed state: a held item is not stored (docs/langchain.md)
                    raise WriteRejected(*unsure)
                texts += [t for _, t in self._index_texts(op.value, op.index)]
            elif isinstance(op, SearchOp):
                if op.namespace_prefix:
                    self._ns(op.namespace_prefix)
                if isinstance(op.query, str):
                    _encodable([op.query])
                for key, value in (op.filter or {}).items():
                    if not isinstance(key, str) or not _FILTER_KEY.fullmatch(key):
                        raise InvalidInput(f"Invalid filter key {key!r}: a field name or dotted path "
                                           "(letters, digits, _ . -)")
                    _check_filter(value)
                if self._query(op) and self.embeddings is not None and op.query not in queries:
                    queries.append(op.query)
            elif isinstance(op, GetOp):
                self._ns(op.namespace)
            elif not isinstance(op, ListNamespacesOp):
                raise InvalidInput(f"unsupported store operation {type(op).__name__}")
        return texts, queries

    @staticmethod
    def _check_index(index: Any) -> None:
        if index is None or index is False:
            return
        if isinstance(index, str) or not isinstance(index, list | tuple) or not all(isinstance(p, str) and p for p in index):
            raise InvalidInput("a put's index must be False or a list of JSON paths such as ['content']")

    def _index_texts(self, value: dict[str, Any], index: Any) -> list[tuple[str, str]]:
        """(path, text) pairs an item is embedded by: its own paths, else the configured fields."""
        if self.embeddings is None or index is False:
            return []
        fields = self._fields if index is None else [(p, p if p == "$" else tokenize_path(p)) for p in index]
        pairs: list[tuple[str, str]] = []
        for path, tokens in fields:
            texts = get_text_at_path(value, tokens)
            pairs += [(path if len(texts) == 1 else f"{path}.{i}", t) for i, t in enumerate(texts)]
        return pairs

    def _as_matrix(self, vectors: Any, rows: int) -> np.ndarray:
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(f"the embedder returned vectors of different lengths or not numbers ({exc})") from None
        if matrix.ndim != 2 or len(matrix) != rows:
            raise InvalidInput(f"the embedder returned {len(matrix)} vectors for {rows} texts")
        if not np.isfinite(matrix).all():
            raise InvalidInput("the embedder returned NaN or infinite values")
        dims = self.index_config.get("dims") if self.index_config else None
        if dims and matrix.shape[1] != dims:
            raise InvalidInput(f"the embedder returned {matrix.shape[1]} dimensions; index 'dims' says {dims}")
        return matrix

    def _as_vector(self, vector: Any) -> np.ndarray:
        return self._as_matrix([vector], 1)[0]

    # -- operations -------------------------------------------------------------
    def _run(self, ops: list[Op], documents: np.ndarray | None, queries: dict[str, np.ndarray]) -> list[Result]:
        now = self.memory.clock.now()
        items = self.memory.items(self.tenant)
        results: list[Result] = []
        used = 0
        writes = any(isinstance(op, PutOp) for op in ops)
        with items.transaction() if writes else contextlib.nullcontext():  # a batch's writes land together
            for op in ops:
                if isinstance(op, GetOp):
                    ns = self._ns(op.namespace)
                    rows = items.get(ns, now, key=op.key)
                    if rows and op.refresh_ttl:
                        items.touch([(ns, op.key)], now)
                    results.append(self._item(rows[0]) if rows else None)
                elif isinstance(op, PutOp):
                    ns = self._ns(op.namespace)
                    if op.value is None:
                        items.delete(ns, op.key)
                    else:
                        pairs = self._index_texts(op.value, op.index)
                        vectors = [(path, documents[used + i]) for i, (path, _) in enumerate(pairs)] \
                            if self.embeddings is not None and op.index is not False else None
                        used += len(pairs)
                        ttl = op.ttl if op.ttl is not NOT_PROVIDED else (self.ttl_config or {}).get("default_ttl")
                        if ttl is not None and ttl * 60 >= (datetime.max.replace(tzinfo=UTC) - now).total_seconds():
                            ttl = None  # beyond the year 9999: it never expires
                        items.put(ns, op.namespace[0], op.key, json.dumps(op.value, ensure_ascii=False), now,
                                  float(ttl) if ttl is not None else None, [] if op.index is False else vectors)
                    results.append(None)
                elif isinstance(op, SearchOp):
                    results.append(self._search(op, now, queries.get(op.query) if op.query else None))
                else:
                    results.append(self._namespaces(op, now))
        return results

    @staticmethod
    def _ns(namespace: Sequence[str]) -> str:
        """A namespace (a tuple, or any sequence of labels as LangGraph's stores take) as stored."""
        if isinstance(namespace, str) or not isinstance(namespace, Sequence) or not namespace or \
                any(not isinstance(p, str) or not p or SEP in p for p in namespace):
            raise InvalidInput("a namespace is a non-empty tuple of non-empty strings")
        return SEP.join(namespace)

    @staticmethod
    def _query(op: SearchOp) -> str:
        return op.query.strip() if isinstance(op.query, str) else ""

    @staticmethod
    def _item(row: tuple, score: float | None = None, *, search: bool = False) -> Item:
        ns, key, value, created, updated = row[:5]
        kwargs = {"namespace": tuple(ns.split(SEP)), "key": key, "value": json.loads(value),
                  "created_at": parse_time(created), "updated_at": parse_time(updated)}
        return SearchItem(score=score, **kwargs) if search else Item(**kwargs)

    def _search(self, op: SearchOp, now, query_vector: np.ndarray | None) -> list[SearchItem]:
        prefix = self._ns(op.namespace_prefix) if op.namespace_prefix else ""
        rows = self.memory.items(self.tenant).get(prefix, now)
        if op.filter:
            rows = [r for r in rows if all(_matches(_field(json.loads(r[2]), k), v) for k, v in op.filter.items())]
        query = self._query(op)
        scores: list[float | None] = [None] * len(rows)
        if query and rows:
            keyword = _bm25(query_terms(query), [query_terms(_text(json.loads(r[2])), limit=10_000) for r in rows])
            if query_vector is not None:
                similarity = self._similarity(query_vector, rows)
                order = sorted(range(len(rows)), key=lambda i: (similarity[i] is None, -(similarity[i] or 0.0),
                                                                -keyword[i], i))
                scores = [similarity[i] for i in order]
            else:
                order = sorted(range(len(rows)), key=lambda i: (-keyword[i], i))
            rows = [rows[i] for i in order]
        offset, limit = max(op.offset, 0), max(op.limit, 0)
        page = list(zip(rows, scores, strict=True))[offset : offset + limit]
        if op.refresh_ttl and page:
            self.memory.items(self.tenant).touch([(r[0], r[1]) for r, _ in page], now)
        return [self._item(r, s, search=True) for r, s in page]

    def _similarity(self, query: np.ndarray, rows: list[tuple]) -> list[float | None]:
        """Each item's best cosine similarity over its indexed fields (None: not indexed).
        Items written before indexing existed are embedded now by the configured fields."""
        out: list[float | None] = []
        legacy: dict[int, list[tuple[str, str]]] = {}
        for i, row in enumerate(rows):
            paths, matrix = graph_item_vectors(row)
            if paths is None:
                legacy[i] = self._index_texts(json.loads(row[2]), None)
                out.append(None)
            elif matrix is None or matrix.shape[1] != len(query):
                out.append(None)  # unindexed, or indexed by an embedder of another size
            else:
                out.append(float(_similarities(query, matrix, self._distance).max()))
        texts = [t for pairs in legacy.values() for _, t in pairs]
        if texts:
            matrix, start = self._as_matrix(self.embeddings.embed_documents(texts), len(texts)), 0
            for i, pairs in legacy.items():
                if pairs:
                    out[i] = float(_similarities(query, matrix[start : start + len(pairs)], self._distance).max())
                start += len(pairs)
        return out

    def _namespaces(self, op: ListNamespacesOp, now) -> list[tuple[str, ...]]:
        spaces = [tuple(ns.split(SEP)) for ns in self.memory.items(self.tenant).namespaces(now)]
        for cond in op.match_conditions or ():
            path = tuple(cond.path)
            if cond.match_type == "prefix":
                spaces = [s for s in spaces if len(s) >= len(path) and
                          all(p == "*" or p == s[i] for i, p in enumerate(path))]
            elif cond.match_type == "suffix":
                spaces = [s for s in spaces if len(s) >= len(path) and
                          all(p == "*" or p == s[len(s) - len(path) + i] for i, p in enumerate(path))]
            else:
                raise InvalidInput(f"unsupported namespace match type {cond.match_type!r} (prefix or suffix)")
        if op.max_depth is not None:
            spaces = sorted({s[: op.max_depth] for s in spaces})
        return spaces[max(op.offset, 0) : max(op.offset, 0) + max(op.limit, 0)]


class AsyncArchivistStore(ArchivistStore):
    """The same store with LangGraph's async-store TTL interface (``await
    store.sweep_ttl()``, ``await store.start_ttl_sweeper()`` → a task, ``await
    store.stop_ttl_sweeper()``) and ``async with``, for code written against
    ``AsyncSqliteStore``/``AsyncPostgresStore``. Reads and writes are the same (``a``-methods)."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await asyncio.to_thread(ArchivistStore.sweep_ttl, self)

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> asyncio.Task[None]:  # type: ignore[override]
        """Sweep in the background until stopped; the task ends when the sweeper does."""
        future = ArchivistStore.start_ttl_sweeper(self, sweep_interval_minutes)
        wrapped = asyncio.wrap_future(future)

        async def until_stopped() -> None:
            try:
                await asyncio.shield(wrapped)
            except asyncio.CancelledError:
                self._stop_sweeping.set()
                raise

        return asyncio.get_running_loop().create_task(until_stopped())

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        return await asyncio.to_thread(ArchivistStore.stop_ttl_sweeper, self, timeout)

    def close(self) -> None:
        ArchivistStore.stop_ttl_sweeper(self)

    async def __aenter__(self) -> AsyncArchivistStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_ttl_sweeper()
