"""The library's memory API over the REST API: code moves from the embedded store to a
server by changing the line that opens memory.

    memory = Memory.open("memory.db")                                   # embedded
    memory = RemoteMemory("http://127.0.0.1:8765", api_key="ak_…")     # a server
    alice = memory.scope("acme", "alice")
    alice.remember("Alice drinks green tea."); alice.search("tea"); alice.context("…")

Results are archivist's own types (``Fact``, ``SearchHit``, ``ForgetReceipt``,
``Preference``); errors are archivist's exceptions, mapped back from the server's
problem+json (``FactNotFound``, ``WriteRejected`` with its code, ``InvalidInput``, …;
``AccessDenied`` for 401/403). 429 and 503 are retried with backoff (``Retry-After``
honoured), and so are connection failures of reads; then ``RemoteUnavailable``.

Each operation is written once, as a generator that yields the HTTP calls it needs and
returns the result (:class:`_Ops`); :class:`RemoteMemory` runs it with a blocking httpx
client and :class:`AsyncRemoteMemory` with an async one. The tenant comes from the API
key: a scope naming another tenant is refused before anything is sent.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import inspect
import json
import random
import re
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import httpx

from .clock import parse_time
from .errors import (
    AccessDenied,
    ArchivistError,
    BudgetExceeded,
    FactNotFound,
    InvalidBudget,
    InvalidCandidate,
    InvalidInput,
    RemoteUnavailable,
    StaleWrite,
    StoreConflict,
    StoreLocked,
    StoreUnavailable,
    ReviewItemNotFound,
    TaskNotFound,
    TraceNotFound,
    WriteRejected,
)
from .lifecycle.transfer import fact_from_dict
from .model import Category, Fact, ForgetReceipt, Identity, Preference, SearchHit, TaskState

_RETRY_STATUSES = (429, 503)  # the server did nothing: safe to send again, whatever the method
_SAFE = ("GET", "HEAD", "OPTIONS")  # may be sent again after a lost answer (a write might be done twice)


@dataclass(frozen=True)
class _Call:
    """One HTTP request an operation needs (as the scope's agent, in its project)."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] | None = None
    agent: str | None = None
    project: str | None = None
    tenant: str | None = None  # the tenant the caller named; checked against the key's before sending


@dataclass(frozen=True)
class _Pause:
    """An operation waiting (a job being polled) before its next call."""

    seconds: float


Op = Generator[Any, Any, Any]


# -- results -------------------------------------------------------------------------------

@dataclass(frozen=True)
class RemoteTrace:
    """A context trace as the server returned it; ``id`` is None when it was not stored."""

    id: str | None
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True)
class RemoteView:
    """What one model call sees, as assembled by the server."""

    messages: list[dict[str, Any]]
    tokens: int
    trace: RemoteTrace
    system: str = ""
    history: tuple[KeptMessage, ...] = ()  # the history messages kept, by the ids they were sent with
    steps: tuple[KeptMessage, ...] = ()

    def to_messages(self) -> list[dict[str, Any]]:
        return [dict(m) for m in self.messages]


@dataclass(frozen=True)
class KeptMessage:
    """A message a server-assembled view kept: its id as sent, its content as the view has it."""

    id: str
    role: str
    content: str


@dataclass(frozen=True)
class LearnReport:
    """What a background extraction wrote and refused (the job's report)."""

    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.data)


def _receipt(body: dict[str, Any]) -> ForgetReceipt:
    return ForgetReceipt(body["target"], parse_time(body["at"]), dict(body["counts"]),
                         tuple(body.get("erasure_jobs") or ()))


_ROLES = {"human": "user", "ai": "assistant"}  # LangChain message types → chat roles


def _wire_message(message: Any) -> dict[str, Any]:
    """A history message as the API takes it (a dict, a LangChain message or a
    :class:`~archivist.context.history.HistoryMessage`), its tool calls included so that
    the server keeps a call and its results together."""
    if isinstance(message, Mapping):
        out = {k: message[k] for k in ("id", "role", "content", "name", "tool_call_id") if message.get(k) is not None}
        calls = message.get("tool_calls")
    else:
        kind = getattr(message, "role", None) or getattr(message, "type", "user")  # archivist's, or LangChain's
        role = _ROLES.get(kind, kind)
        out = {"role": role, "content": message.content if isinstance(message.content, str) else str(message.content)}
        for name in ("id", "name", "tool_call_id"):
            if getattr(message, name, None) is not None:
                out[name] = getattr(message, name)
        calls = getattr(message, "tool_calls", None)
    if calls:
        out["tool_calls"] = [{k: c[k] for k in ("id", "name", "args") if c.get(k) is not None} for c in calls]
    return out


def _wire_turn(message: Any) -> dict[str, Any]:
    """A conversation message as ``POST /messages`` takes it: id, role, content, name and
    the metadata the server's filter reads (a dict, or a LangChain message)."""
    if isinstance(message, Mapping):
        out = {k: message[k] for k in ("id", "role", "content", "name") if message.get(k) is not None}
        meta = message.get("metadata") or message.get("additional_kwargs")
    else:
        kind = getattr(message, "role", None) or getattr(message, "type", "user")
        out = {"role": _ROLES.get(kind, kind), "content": getattr(message, "content", str(message))}
        out.update({k: getattr(message, k) for k in ("id", "name") if isinstance(getattr(message, k, None), str)})
        meta = getattr(message, "additional_kwargs", None)
    out["role"] = _ROLES.get(out.get("role", "user"), out.get("role", "user"))
    if not isinstance(out.get("content"), str):  # content parts: their text
        parts = out.get("content") or []
        out["content"] = "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, Mapping) else ""
                                 for p in (parts if isinstance(parts, list) else [parts]))
    if isinstance(meta, Mapping) and meta:
        out["metadata"] = json.loads(json.dumps(dict(meta), default=str))
    return out


def _wire_evidence(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Inline evidence as the API takes it (``text``; ``content`` is read as the text too)."""
    out = {k: raw[k] for k in ("id", "source", "required") if raw.get(k) is not None}
    out["text"] = raw.get("text", raw.get("content"))
    if raw.get("observed_at") is not None:
        out["observed_at"] = _time_text(raw["observed_at"])
    return out


def _preference(body: dict[str, Any]) -> Preference:
    expires = body.get("expires_at")
    return Preference(body["key"], body["value"], bool(body.get("trusted", True)), "api", int(body["version"]),
                      parse_time(body["updated_at"]), parse_time(expires) if expires else None)


def _task(body: dict[str, Any]) -> TaskState:
    at = body.get("updated_at")
    return TaskState(body["task_id"], body["goal"], tuple(body["criteria"]), tuple(body["done"]),
                     tuple(body["missing"]), int(body["version"]), parse_time(at) if at else None)


def _time_text(value: datetime | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return value.isoformat()


# -- errors --------------------------------------------------------------------------------

def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1  # -1: the server did not say


_BY_TITLE: dict[str, Callable[[str], ArchivistError]] = {
    "invalid content": InvalidCandidate,
    "invalid budget": InvalidBudget,
    "invalid request": InvalidInput,
    "invalid input": InvalidInput,
    "invalid JSON": InvalidInput,
    "payload too large": InvalidInput,
}


def error_from(response: httpx.Response) -> ArchivistError:
    """The archivist exception a problem+json response stands for."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    status, title = response.status_code, str(body.get("title", ""))
    detail = str(body.get("detail") or response.reason_phrase or f"HTTP {status}")
    if status in (401, 403):
        return AccessDenied(detail, status=status)
    if status == 404:
        path = response.request.url.path
        for part, missing in (("/traces/", TraceNotFound), ("/tasks/", TaskNotFound), ("/review/", ReviewItemNotFound)):
            if part in path:
                return missing(detail)
        return FactNotFound(detail)
    if 300 <= status < 400:
        return RemoteUnavailable(f"the server redirected ({status}) to {response.headers.get('location')!r}; "
                                 "give RemoteMemory the final address")
    if status == 409:
        if title == "stale write":
            return StaleWrite(detail, expected=_int(body.get("expected")), current=_int(body.get("current")))
        return StoreConflict(detail)
    if status == 503:
        return (StoreUnavailable if title == "store unavailable" else StoreLocked)(detail)
    if title == "rejected by the write gate":
        code, _, reason = detail.partition(": ")
        return WriteRejected(str(body.get("code") or code), reason or detail)
    if title == "over budget":
        return BudgetExceeded(detail, needed=_int(body.get("needed")), budget=_int(body.get("budget")))
    errors = body.get("errors") if isinstance(body.get("errors"), list) else []
    if title == "invalid request" and errors and all(isinstance(e, dict) and e.get("field") == "content"
                                                     for e in errors):
        return InvalidCandidate(detail)  # as the library says of content it cannot store
    if title in _BY_TITLE:
        return _BY_TITLE[title](detail)
    if 400 <= status < 500:
        return InvalidInput(detail)
    return RemoteUnavailable(f"the server answered {status}: {detail}")


# -- operations, written once ------------------------------------------------------------------

class _Ops:
    """Every operation of a scope as a generator of calls (see the module docstring)."""

    def __init__(self, tenant: str, user: str, agent: str, project: str | None) -> None:
        if not isinstance(user, str) or not user:
            raise InvalidInput("a scope needs a user id")
        Identity(tenant, user, agent, project)  # the library's naming rule, checked before anything is sent
        self.tenant, self.user, self.agent, self.project = tenant, user, agent, project

    def _path(self, *parts: str) -> str:
        return "/v1/users/" + "/".join(quote(p, safe="") for p in (self.user, *parts))

    def _call(self, method: str, *parts: str, **kwargs: Any) -> _Call:
        return _Call(method, self._path(*parts), agent=self.agent, project=self.project, tenant=self.tenant,
                     **kwargs)

    @staticmethod
    def _id(value: Any, missing: type[ArchivistError] = FactNotFound) -> str:
        """An id as one path segment: '.', '..' or '' would change the path itself (httpx
        resolves them), so they are refused as the library refuses an unknown id."""
        if not isinstance(value, str) or value in ("", ".", ".."):
            raise missing(f"no such id {value!r} in this scope")
        return value

    def remember_with_outcome(self, content: str, *, category: str | Category = Category.CONTEXT, key: str | None = None,
                              confidence: float = 1.0, kind: str = "fact",
                              valid_until: datetime | str | None = None) -> Op:
        """Remember a fact; also say whether it was ``stored`` or a ``duplicate``."""
        body = {"content": content, "category": str(getattr(category, "value", category)), "key": key,
                "confidence": confidence, "kind": str(getattr(kind, "value", kind)),
                "valid_until": _time_text(valid_until)}
        response = yield self._call("POST", "facts", json={k: v for k, v in body.items() if v is not None})
        fact = fact_from_dict(response.json())
        outcome = "duplicate" if response.status_code == 200 else \
            "candidate" if fact.status.value == "candidate" else "stored"
        return fact, outcome

    def remember(self, content: str, *, category: str | Category = Category.CONTEXT, key: str | None = None,
                 confidence: float = 1.0, kind: str = "fact", valid_until: datetime | str | None = None) -> Op:
        """Remember a fact the user stated (the server's write gate decides); the stored fact,
        or the one already stored for a duplicate. The options are named, so a misspelt one
        is a ``TypeError`` at the call, as with the library's ``remember``."""
        fact, _ = yield from self.remember_with_outcome(content, category=category, key=key, confidence=confidence,
                                                        kind=kind, valid_until=valid_until)
        return fact

    def search(self, query: str, k: int = 5, *, mode: str | None = None, explain: bool = False,
               kinds: Sequence[str] = ("fact", "episode")) -> Op:
        """The best facts and episodes for ``query`` (``hit.kind``), each with its score
        (and the score's parts)."""
        from .retrieval.episodes import statuses_of

        statuses_of(kinds)  # the same check as the embedded scope, before anything is sent
        kinds = [kinds] if isinstance(kinds, str) else list(dict.fromkeys(kinds))
        body = {"query": query, "k": k, "kinds": kinds, **({"mode": mode} if mode else {})}
        response = yield self._call("POST", "search", json=body)
        return [SearchHit(fact_from_dict(h["fact"]), float(h["score"]), dict(h.get("explanation") or {}))
                for h in response.json()]  # as the embedded scope: the explanation is always there

    def memory_search(self, query: str, limit: int = 5, *, budget: int = 900) -> Op:
        """The ``memory_search`` tool's output, as the embedded scope gives it: JSON, at most
        10 hits, within ``budget`` tokens."""
        from .context.memory_block import search_results_json
        from .tokens import default_counter

        hits = yield from self.search(query, k=max(1, min(int(limit), 10)))
        return search_results_json(hits, counter=default_counter(), budget=budget)

    def context(self, query: str, *, budget: int = 4000, reserve: int | None = None, system: str | None = None,
                history: Sequence[Any] = (), tools: Sequence[Mapping[str, Any]] = (),
                evidence: Sequence[Mapping[str, Any] | str] = (), reference: Sequence[Mapping[str, Any]] = (),
                task_id: str | None = None, memory_k: int | None = None, episode_k: int | None = None,
                steps: Sequence[Any] = (), pinned: Sequence[str] = (), sections: Sequence[str] | None = None,
                call: Mapping[str, Any] | None = None) -> Op:
        """The view one model call sees, assembled by the server under ``budget`` tokens
        (the same inputs as :meth:`archivist.memory.MemoryScope.context`; ``call`` names
        the agent thread, run and call index the trace records)."""
        body: dict[str, Any] = {"query": query, "budget": budget}
        optional = {"reserve": reserve, "system": system or None, "task_id": task_id, "memory_k": memory_k,
                    "episode_k": episode_k, "tools": list(tools) or None,
                    "history": [_wire_message(m) for m in history] or None,
                    "steps": [_wire_message(m) for m in steps] or None, "pinned": list(pinned) or None,
                    "sections": None if sections is None else list(sections),
                    **{k: v for k, v in (call or {}).items() if k in ("thread_id", "run_id", "call_index")},
                    "evidence": [e if isinstance(e, str) else _wire_evidence(e) for e in evidence] or None,
                    "reference": [_wire_evidence(e) for e in reference] or None}
        body.update({k: v for k, v in optional.items() if v is not None})
        data = (yield self._call("POST", "context", json=body)).json()
        kept = lambda rows: tuple(KeptMessage(m["id"], m["role"], m["content"]) for m in rows or ())  # noqa: E731
        return RemoteView(data["messages"], int(data["tokens"]), RemoteTrace(data.get("trace_id"), data["trace"]),
                          data.get("system", ""), kept(data.get("history")), kept(data.get("steps")))

    def facts(self, *, include_candidates: bool = False, include_history: bool = False) -> Op:
        """Every fact of the scope, newest first (fetched page by page)."""
        out: list[Fact] = []
        cursor: int | None = 0
        while cursor is not None:
            page = (yield self._call("GET", "facts", params={"limit": 500, "cursor": cursor,
                                                               "history": include_history,
                                                               "candidates": include_candidates})).json()
            out += [fact_from_dict(f) for f in page["items"]]
            cursor = page["next_cursor"]
        return out

    def get(self, fact_id: str) -> Op:
        return fact_from_dict((yield self._call("GET", "facts", self._id(fact_id))).json())

    def history(self, fact_id: str) -> Op:
        """Every version of a fact, oldest first (none for an unknown id, as in the library)."""
        try:
            versions = (yield self._call("GET", "facts", self._id(fact_id), "versions")).json()
        except FactNotFound:
            return []
        return [fact_from_dict(f) for f in versions]

    def confirm(self, fact_id: str) -> Op:
        return fact_from_dict((yield self._call("POST", "facts", self._id(fact_id), "confirm")).json())

    def forget(self, fact_id: str, *, all_versions: bool = False) -> Op:
        """Forget a fact everywhere; the receipt counts what was removed."""
        response = yield self._call("DELETE", "facts", self._id(fact_id), params={"all_versions": all_versions})
        return _receipt(response.json())

    def save_task(self, task_id: str, goal: str, *, criteria: Sequence[str] = (), done: Sequence[str] = (),
                  missing: Sequence[str] = (), based_on: int = 0) -> Op:
        """Save a task's goal, done-criteria and progress (``based_on``: the version it replaces)."""
        body = {"goal": goal, "criteria": list(criteria), "done": list(done), "missing": list(missing),
                "based_on": based_on}
        return _task((yield self._call("PUT", "tasks", self._id(task_id, InvalidInput), json=body)).json())

    def task(self, task_id: str) -> Op:
        """A task's state, or None."""
        try:
            return _task((yield self._call("GET", "tasks", self._id(task_id, TaskNotFound))).json())
        except TaskNotFound:
            return None

    def review_queue(self) -> Op:
        """Open conflicts waiting for a decision."""
        return (yield self._call("GET", "review")).json()["conflicts"]

    def resolve_review(self, item_id: str, *, keep: str | None = None) -> Op:
        """Settle an open conflict; ``keep`` names the fact that holds (the others are retired)."""
        yield self._call("POST", "review", self._id(item_id, ReviewItemNotFound), "resolve", json={"keep": keep})
        return None

    def preferences(self, *, include_untrusted: bool = False) -> Op:
        """The user's live preferences (trusted ones only, as the library lists them, unless asked)."""
        return [_preference(p) for p in (yield self._call("GET", "preferences",
                                                          params={"include_untrusted": include_untrusted})).json()]

    def set_preference(self, key: str, value: str, *, based_on: int = 0, trusted: bool = True,
                       expires_at: datetime | str | None = None) -> Op:
        """Set a preference every agent of the user sees (``based_on``: the version it replaces;
        ``trusted=False``: not stated by the user or the application, shown but never obeyed)."""
        body = {"value": value, "based_on": based_on, "trusted": trusted,
                **({"expires_at": _time_text(expires_at)} if expires_at else {})}
        return _preference((yield self._call("PUT", "preferences", self._id(key, InvalidInput), json=body)).json())

    def trace(self, trace_id: str) -> Op:
        return (yield self._call("GET", "traces", self._id(trace_id, TraceNotFound))).json()

    def traces(self, limit: int = 20, *, thread_id: str | None = None) -> Op:
        params = {"limit": limit, **({"thread_id": thread_id} if thread_id else {})}
        return (yield self._call("GET", "traces", params=params)).json()

    def why(self, trace_id: str, subject: str) -> Op:
        return (yield self._call("GET", "traces", self._id(trace_id, TraceNotFound), "why",
                                 params={"subject": subject})).json()["answer"]

    def learn(self, messages: Sequence[Any], *, thread_id: str = "default", poll: float = 0.2,
              timeout: float = 120.0) -> Op:
        """Queue extraction of a conversation on the server and wait for its report."""
        items = [_wire_turn(m) for m in messages]
        job = (yield self._call("POST", "messages", json={"thread_id": thread_id, "messages": items})).json()
        waited = 0.0
        while True:
            state = (yield _Call("GET", job["status_url"])).json()
            if state["status"] == "done":
                return LearnReport(state.get("report") or {})
            if state["status"] == "failed":
                raise RemoteUnavailable(f"extraction failed on the server: {state.get('error')}")
            if waited >= timeout:
                raise RemoteUnavailable(f"extraction job {job['job_id']} not done after {timeout:.0f} s")
            yield _Pause(poll)
            waited += poll


class _MemoryOps:
    """Operations on a whole user or tenant (admin keys for every agent)."""

    def forget_user(self, tenant: str, user: str) -> Op:
        """Forget every row of the user. ``tenant`` must be the key's own: it is checked
        with the server before anything is deleted."""
        Identity(tenant, user, "default")
        key_tenant = (yield _Call("GET", "/v1/me")).json()["tenant"]
        if tenant != key_tenant:
            raise InvalidInput(f"this API key acts for tenant {key_tenant!r}, not {tenant!r}; nothing was forgotten")
        return _receipt((yield _Call("DELETE", f"/v1/users/{quote(user, safe='')}")).json())

    def users(self) -> Op:
        """Users of the key's tenant that the key may act for."""
        return (yield _Call("GET", "/v1/users")).json()

    def export(self, user: str) -> Op:
        """The user's memory as export records (the JSONL ``archivist export`` writes)."""
        import json

        Identity("default", user, "default")
        response = yield _Call("GET", f"/v1/users/{quote(user, safe='')}/export")
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]


# -- runners ---------------------------------------------------------------------------------

class _Transport:
    """Retries and error mapping shared by both runners."""

    def __init__(self, base_url: str, api_key: str, *, retries: int, backoff: float, project: str | None) -> None:
        if not isinstance(api_key, str) or not api_key:
            raise InvalidInput("RemoteMemory needs an API key (archivist keys create …)")
        if not api_key.isascii() or not api_key.isprintable() or " " in api_key:
            raise InvalidInput("an API key is printable ASCII without spaces (as `archivist keys create` prints it)")
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise InvalidInput(f"not a server address: {base_url!r}") from exc
        if url.scheme not in ("http", "https") or not url.host:
            raise InvalidInput(f"not a server address: {base_url!r} (http://host:port or https://…)")
        self.base_url, self.retries, self.backoff = base_url.rstrip("/"), retries, backoff
        self.key_tenant: str | None = None  # learnt from GET /v1/me when a scope names a tenant
        self.headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json, application/problem+json"}
        if project:
            self.headers["X-Project"] = project

    def request_kwargs(self, call: _Call) -> dict[str, Any]:
        headers = dict(self.headers)
        # headers carry ASCII: a name in another script goes percent-encoded as UTF-8 (the server decodes it)
        if call.agent:
            headers["X-Agent"] = call.agent if call.agent.isascii() else quote(call.agent, safe="")
        if call.project:
            headers["X-Project"] = call.project if call.project.isascii() else quote(call.project, safe="")
        params = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in (call.params or {}).items()}
        return {"method": call.method, "url": call.path, "json": call.json, "params": params, "headers": headers}

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        """``Retry-After`` (seconds or an HTTP date, at most 30 s), else exponential backoff."""
        after = (response.headers.get("Retry-After") or "").strip() if response is not None else ""
        if re.fullmatch(r"[0-9]{1,6}", after):
            return min(float(after), 30.0)
        if after:
            try:
                when = email.utils.parsedate_to_datetime(after)
            except (TypeError, ValueError):
                when = None
            if when is not None and when.tzinfo is not None:
                return min(max((when - datetime.now(timezone.utc)).total_seconds(), 0.0), 30.0)
        return self.backoff * (2 ** attempt) * (0.5 + random.random() / 2)

    def retryable(self, call: _Call, attempt: int, response: httpx.Response | None) -> bool:
        if attempt >= self.retries:
            return False
        if response is None:  # the connection failed: only a read is safe to send again
            return call.method in _SAFE
        return response.status_code in _RETRY_STATUSES

    def tenant_check(self, call: _Call) -> _Call | None:
        """The call that learns the key's tenant, when a scope named one not yet checked."""
        if call.tenant in (None, "default") or self.key_tenant is not None:
            return None
        return _Call("GET", "/v1/me")

    def check_tenant(self, call: _Call) -> None:
        if call.tenant not in (None, "default") and self.key_tenant is not None and call.tenant != self.key_tenant:
            raise InvalidInput(f"this API key acts for tenant {self.key_tenant!r}, not {call.tenant!r}; "
                               "nothing was sent")

    @staticmethod
    def result(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 300:
            raise error_from(response)
        return response


def _unexpected(exc: Exception) -> RemoteUnavailable:
    """An answer the client cannot read (a proxy's page, a wrong shape, a broken encoding)."""
    return RemoteUnavailable(f"the server's answer could not be read ({type(exc).__name__}: {str(exc)[:200]})")


_UNREADABLE = (ValueError, KeyError, TypeError, IndexError, AttributeError, httpx.HTTPError)


def _run_sync(client: httpx.Client, transport: _Transport, op: Op) -> Any:
    def exchange(call: _Call) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = client.request(**transport.request_kwargs(call))
            except httpx.TransportError as exc:
                if not transport.retryable(call, attempt, None):
                    raise RemoteUnavailable(f"{call.method} {call.path}: {exc}") from None
                response = None
            if response is not None and not transport.retryable(call, attempt, response):
                return transport.result(response)
            time.sleep(transport.delay(attempt, response))
            attempt += 1

    def send(call: _Call) -> httpx.Response:
        first = transport.tenant_check(call)
        if first is not None:
            transport.key_tenant = exchange(first).json()["tenant"]
        transport.check_tenant(call)
        return exchange(call)

    try:
        step = next(op)
        while True:
            if isinstance(step, _Pause):
                time.sleep(step.seconds)
                step = op.send(None)
            else:
                try:
                    answer = send(step)
                except ArchivistError as exc:  # the operation may handle it (history of an unknown id)
                    step = op.throw(exc)
                else:
                    step = op.send(answer)
    except StopIteration as done:
        return done.value
    except ArchivistError:
        raise
    except _UNREADABLE as exc:
        raise _unexpected(exc) from None


async def _run_async(client: httpx.AsyncClient, transport: _Transport, op: Op) -> Any:
    async def exchange(call: _Call) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await client.request(**transport.request_kwargs(call))
            except httpx.TransportError as exc:
                if not transport.retryable(call, attempt, None):
                    raise RemoteUnavailable(f"{call.method} {call.path}: {exc}") from None
                response = None
            if response is not None and not transport.retryable(call, attempt, response):
                return transport.result(response)
            await asyncio.sleep(transport.delay(attempt, response))
            attempt += 1

    async def send(call: _Call) -> httpx.Response:
        first = transport.tenant_check(call)
        if first is not None:
            transport.key_tenant = (await exchange(first)).json()["tenant"]
        transport.check_tenant(call)
        return await exchange(call)

    try:
        step = next(op)
        while True:
            if isinstance(step, _Pause):
                await asyncio.sleep(step.seconds)
                step = op.send(None)
            else:
                try:
                    answer = await send(step)
                except ArchivistError as exc:
                    step = op.throw(exc)
                else:
                    step = op.send(answer)
    except StopIteration as done:
        return done.value
    except ArchivistError:
        raise
    except _UNREADABLE as exc:
        raise _unexpected(exc) from None


def _bind(ops: type, runner: Callable[[Any, Op], Any], *, is_async: bool) -> Callable[[type], type]:
    """A class decorator: every public operation of ``ops`` becomes a method that runs it
    (same name, signature and docstring)."""

    def decorate(cls: type) -> type:
        for name, fn in inspect.getmembers(ops, inspect.isfunction):
            if name.startswith("_") or name in cls.__dict__:
                continue

            def make(fn: Callable[..., Op]) -> Callable[..., Any]:
                if is_async:
                    @functools.wraps(fn)
                    async def method(self, *args: Any, **kwargs: Any) -> Any:
                        return await runner(self, fn(self._ops, *args, **kwargs))
                else:
                    @functools.wraps(fn)
                    def method(self, *args: Any, **kwargs: Any) -> Any:
                        return runner(self, fn(self._ops, *args, **kwargs))
                return method

            setattr(cls, name, make(fn))
        return cls

    return decorate


class _Remote:
    """What both clients share; subclasses name their httpx client and scope types."""

    _ops = _MemoryOps()
    _client_type: type
    _scope_type: type

    def __init__(self, base_url: str, api_key: str, *, tenant: str | None = None, project: str | None = None,
                 timeout: float = 30.0, retries: int = 3, backoff: float = 0.25, transport: Any = None) -> None:
        self.transport = _Transport(base_url, api_key, retries=retries, backoff=backoff, project=project)
        self.tenant = tenant  # the key fixes the tenant; naming it lets scopes check what they ask for
        self.client = self._client_type(base_url=self.transport.base_url, timeout=timeout, transport=transport)

    def scope(self, tenant: str = "default", user: str = "", agent: str = "default", project: str | None = None):
        """A scope of the key's tenant (``tenant`` is checked when the client was told it)."""
        if self.tenant is not None and tenant not in ("default", self.tenant):
            raise InvalidInput(f"this API key acts for tenant {self.tenant!r}, not {tenant!r}")
        return self._scope_type(self, tenant, user, agent, project)


@_bind(_Ops, lambda scope, op: _run_sync(scope.remote.client, scope.remote.transport, op), is_async=False)
class RemoteScope:
    """A :class:`~archivist.memory.MemoryScope` over REST: the same calls and results."""

    def __init__(self, remote: RemoteMemory, tenant: str, user: str, agent: str, project: str | None) -> None:
        self.remote, self._ops = remote, _Ops(remote.tenant or tenant, user, agent, project)


@_bind(_Ops, lambda scope, op: _run_async(scope.remote.client, scope.remote.transport, op), is_async=True)
class AsyncRemoteScope:
    """:class:`RemoteScope` for asyncio: the same operations, awaited."""

    def __init__(self, remote: AsyncRemoteMemory, tenant: str, user: str, agent: str, project: str | None) -> None:
        self.remote, self._ops = remote, _Ops(remote.tenant or tenant, user, agent, project)


@_bind(_MemoryOps, lambda memory, op: _run_sync(memory.client, memory.transport, op), is_async=False)
class RemoteMemory(_Remote):
    """:class:`~archivist.Memory` over REST (blocking). ``tenant``: the key's tenant, if
    you want scopes that name another refused here rather than by the server;
    ``transport``: an ``httpx.BaseTransport``."""

    _client_type, _scope_type = httpx.Client, RemoteScope

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@_bind(_MemoryOps, lambda memory, op: _run_async(memory.client, memory.transport, op), is_async=True)
class AsyncRemoteMemory(_Remote):
    """:class:`RemoteMemory` for asyncio (``await scope.search(…)``)."""

    _client_type, _scope_type = httpx.AsyncClient, AsyncRemoteScope

    async def close(self) -> None:
        await self.client.aclose()

    async def __aenter__(self) -> AsyncRemoteMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["AsyncRemoteMemory", "AsyncRemoteScope", "LearnReport", "RemoteMemory", "RemoteScope", "RemoteTrace",
           "RemoteView", "error_from"]
