"""The REST API (FastAPI, OpenAPI 3).

Identity always comes from the API key: the key fixes the tenant and the users and
agents it may act for; a request names the user in its path (``/v1/users/{user}/…``)
and the agent in the ``X-Agent`` header (default ``default``), and both are checked
against the key — never taken from a body or a query parameter. Errors are
``application/problem+json``. Bodies above ``max_body`` bytes get 413 before they are
read whole.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import typing
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import unquote

if TYPE_CHECKING:
    from ..memory import Memory

from fastapi import Depends, FastAPI, Header, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..context.assemble import SECTIONS
from ..errors import (
    ArchivistError,
    BudgetExceeded,
    EvidenceNotFound,
    FactNotFound,
    InvalidBudget,
    InvalidCandidate,
    InvalidInput,
    ReviewItemNotFound,
    StaleWrite,
    StoreConflict,
    StoreLocked,
    StoreUnavailable,
    TaskNotFound,
    TraceNotFound,
    WriteRejected,
)
from ..memory import MAX_QUERY_CHARS
from ..model import Category, Identity, new_id
from ..pipeline.governance import GovernanceConfig
from . import links
from . import schemas as S
from .inspector import INSPECTOR_CSP, INSPECTOR_HTML
from .jobs import JobRunner
from .keys import Principal, principal_for
from .openapi import NDJSON, PROBLEM, complete

log = logging.getLogger("archivist.server")

MAX_CONTENT = GovernanceConfig().max_content_chars
KEY_PATTERN = r"^[\w.:-]+$"  # the gate's rule (letters and digits of any script, _ . : -)
ID = r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,127}$"
NAME = r"^\w[\w.:@-]{0,127}$"  # Identity's rule; \w: letters and digits of any script, and the underscore
#: a name in a header: as written when ASCII, else percent-encoded UTF-8 ("%E5%8A%A9%E6%89%8B" is 助手)
HEADER_NAME_PATTERN = r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9_.:@-]|%[0-9A-Fa-f]{2})*$"
HEADER_NAME_HELP = ("ASCII names as written; a name in another script percent-encoded as UTF-8 "
                    "(助手 → %E5%8A%A9%E6%89%8B). Names are 1-128 letters or digits of any script and _ . : @ -.")


class ApiError(Exception):
    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


def preference_out(x: Any) -> dict[str, Any]:
    return {"key": x.key, "value": x.value, "version": x.version, "trusted": x.trusted,
            "updated_at": x.updated_at.isoformat(), "expires_at": x.expires_at.isoformat() if x.expires_at else None}


def problem(status: int, title: str, detail: str, instance: str = "", headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, "instance": instance, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


_STATUS = [
    (FactNotFound, 404, "not found"), (TraceNotFound, 404, "not found"), (EvidenceNotFound, 404, "not found"),
    (TaskNotFound, 404, "not found"), (ReviewItemNotFound, 404, "not found"),
    (StaleWrite, 409, "stale write"), (StoreConflict, 409, "conflict"), (WriteRejected, 422, "rejected by the write gate"),
    (BudgetExceeded, 422, "over budget"), (InvalidBudget, 422, "invalid budget"),
    (InvalidCandidate, 422, "invalid content"), (InvalidInput, 422, "invalid input"),
    (StoreUnavailable, 503, "store unavailable"), (StoreLocked, 503, "store busy"),
]


_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:)(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?")


def _text_only(value: Any) -> Any:
    """JSON carries times as RFC 3339 text; neither a number nor digits in a string are
    read as seconds since 1970, and a date alone is not a time. A leap second (:60) is
    read as the last microsecond of its minute, and fractions finer than a microsecond
    are cut to microseconds (what the store keeps)."""
    match = _RFC3339.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError("a date-time must be an RFC 3339 string such as 2026-05-01T09:00:00Z")
    head, second, fraction, offset = match.groups()
    if second == "60":
        second, fraction = "59", ".999999"
    return f"{head}{second}{(fraction or '')[:7]}{offset or ''}"


Timestamp = Annotated[datetime, BeforeValidator(_text_only)]


class Strict(BaseModel):
    """A request body: no unknown fields, no JSON true/false or text where a number is
    expected (pydantic would read them as 1, 0 or the number the text spells), and no
    number or text where true/false is ("no" would be read as false)."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_are_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        annotation = cls.model_fields[info.field_name].annotation
        if {annotation, *typing.get_args(annotation)} & {int, float} and isinstance(value, (bool, str)):
            raise ValueError("must be a JSON number")
        if annotation is bool and not isinstance(value, bool):
            raise ValueError("must be JSON true or false")
        return value


class RememberBody(Strict):
    content: str = Field(min_length=1, max_length=MAX_CONTENT,
                         description="The fact, in the user's words (control and invisible characters are dropped).")
    category: Category = Category.CONTEXT
    key: str | None = Field(default=None, min_length=1, max_length=GovernanceConfig().max_key_chars,
                            pattern=KEY_PATTERN,
                            description="The attribute it sets (one live value per key): letters, digits and _ . : -")
    confidence: float = Field(default=1.0, ge=0, le=1)
    kind: Literal["fact", "inference", "heuristic"] = "fact"
    valid_until: Timestamp | None = Field(default=None, description="When it stops being true (UTC if no offset).")


class MessageIn(Strict):
    id: str | None = Field(default=None, max_length=200)
    role: Literal["user", "assistant", "tool", "system"]
    content: str = Field(max_length=100_000)
    name: str | None = Field(default=None, max_length=200, description="Who spoke (kept with the episode).")
    metadata: dict[str, Any] | None = Field(default=None, description=(
        "What the conversation filter reads: origin (memory, runtime or upload: text another system injected, "
        "dropped), hide_from_ui or hidden (true: dropped), via_tool; at most 4,000 characters as JSON."))

    @field_validator("metadata")
    @classmethod
    def _small(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and len(json.dumps(value, default=str)) > 4000:
            raise ValueError("metadata is at most 4,000 characters as JSON")
        return value


class IngestBody(Strict):
    thread_id: str = Field(default="default", pattern=NAME)
    messages: list[MessageIn] = Field(min_length=1, max_length=500)


class SearchBody(Strict):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    k: int = Field(default=5, ge=1, le=100)
    mode: Literal["keyword", "vector", "hybrid"] | None = None
    kinds: list[Literal["fact", "episode"]] = Field(default=["fact", "episode"], min_length=1, max_length=2,
                                                    description="What to recall: facts, episodes (turns as said) "
                                                                "or both.")


PRINTABLE = r"^[^\x00-\x1f\x7f]+$"  # an id or a label: no NUL, no control character


class EvidenceIn(Strict):
    id: str = Field(min_length=1, max_length=200, pattern=PRINTABLE,
                    description="How the model asks for the whole text later.")
    text: str = Field(max_length=1_000_000, pattern=r"^[^\x00]*$", description="The text (no NUL character).")
    source: str = Field(default="tool", max_length=200, pattern=PRINTABLE,
                        description="Where it came from (a tool's name, a URL).")
    observed_at: Timestamp | None = None
    required: bool = Field(default=False, description="Protected: the call fails rather than leave it out.")


class ToolCallIn(Strict):
    id: str | None = Field(default=None, max_length=200, pattern=PRINTABLE)
    name: str = Field(min_length=1, max_length=200, pattern=PRINTABLE)
    args: dict[str, Any] = Field(default={}, description="The call's arguments as the model gave them.")


class HistoryIn(Strict):
    id: str | None = Field(default=None, max_length=200, pattern=PRINTABLE)
    role: Literal["user", "assistant", "tool"]
    content: str = Field(max_length=100_000, pattern=r"^[^\x00]*$")
    name: str | None = Field(default=None, max_length=200, pattern=PRINTABLE)
    tool_call_id: str | None = Field(default=None, max_length=200, pattern=PRINTABLE)
    tool_calls: list[ToolCallIn] = Field(default=[], max_length=128,
                                         description="An assistant message's tool calls (kept whole with their results).")


class ContextBody(Strict):
    query: str = Field(min_length=1, max_length=100_000, description="The current request (protected, counted).")
    budget: int = Field(default=4000, ge=100, le=2_000_000)
    reserve: int | None = Field(default=None, ge=0, le=1_000_000,
                                description="Tokens left for the reply; default an eighth of the budget, at most 1000.")
    system: str = Field(default="", max_length=50_000)
    history: list[HistoryIn] = Field(default=[], max_length=2000, description="The conversation so far, oldest first.")
    tools: list[dict[str, Any]] = Field(default=[], max_length=256,
                                        description="Tool schemas the model is offered (protected, counted).")
    evidence: list[EvidenceIn | Annotated[str, Field(min_length=1, max_length=200, pattern=PRINTABLE)]] = Field(
        default=[], max_length=200, description="Inline evidence, or ids of evidence stored before.")
    reference: list[EvidenceIn] = Field(default=[], max_length=200,
                                        description="Reference material, packed by relevance to the query.")
    task_id: str | None = Field(default=None, min_length=1, max_length=128, pattern=ID,
                                description="The task whose state to show.")
    memory_k: int = Field(default=8, ge=0, le=100)
    episode_k: int = Field(default=4, ge=0, le=100)
    steps: list[HistoryIn] = Field(default=[], max_length=2000, description=(
        "An agent's own run after the request: tool calls and their results, in order (protected, never trimmed)."))
    pinned: list[Annotated[str, Field(max_length=200, pattern=PRINTABLE)]] = Field(
        default=[], max_length=2000, description="Ids of history messages kept whole (this turn's input before the request).")
    sections: list[Literal[SECTIONS]] | None = Field(
        default=None, max_length=20, description="Only these sections (default: the planner decides).")
    thread_id: str | None = Field(default=None, max_length=200, pattern=PRINTABLE,
                                  description="The agent thread this call belongs to (kept in the trace).")
    run_id: str | None = Field(default=None, max_length=200, pattern=PRINTABLE)
    call_index: int | None = Field(default=None, ge=0, le=1_000_000)


def kept_message(m: Any) -> dict[str, Any]:
    """A message the view kept, by the id it was sent with (its content as the view has it:
    an old tool result may be cleared)."""
    return {"id": m.id, "role": m.role, "content": m.content}


class ResolveBody(Strict):
    keep: str | None = Field(default=None, min_length=1, max_length=128, pattern=ID,
                             description="The fact of the conflict that holds; the others are retired.")


NO_NUL = r"^[^\x00]*$"  # text a store can hold: anything but NUL


class TaskBody(Strict):
    goal: str = Field(min_length=1, max_length=4000, pattern=NO_NUL)
    criteria: list[Annotated[str, Field(max_length=1000, pattern=NO_NUL)]] = Field(default=[], max_length=50)
    done: list[Annotated[str, Field(max_length=1000, pattern=NO_NUL)]] = Field(default=[], max_length=200)
    missing: list[Annotated[str, Field(max_length=1000, pattern=NO_NUL)]] = Field(default=[], max_length=200)
    based_on: int = Field(default=0, ge=0, description="The version this write replaces (0: none yet).")


def task_out(t: Any) -> dict[str, Any]:
    return {"task_id": t.task_id, "goal": t.goal, "criteria": list(t.criteria), "done": list(t.done),
            "missing": list(t.missing), "version": t.version,
            "updated_at": t.updated_at.isoformat() if t.updated_at else None}


class PreferenceBody(Strict):
    value: str = Field(min_length=1, max_length=2000)
    based_on: int = Field(default=0, ge=0)
    expires_at: Timestamp | None = Field(default=None, description="When it lapses (UTC if no offset).")
    trusted: bool = Field(default=True, description="False: stated by someone other than the user or the "
                                                    "application (a document, a tool); shown, never obeyed as a rule.")


_BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="The API key as a bearer token.")
_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey", description="The API key.")


def principal(request: Request,
              bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)] = None,
              x_api_key: Annotated[str | None, Depends(_API_KEY)] = None,
              x_project: Annotated[str | None, Header(alias="X-Project", pattern=HEADER_NAME_PATTERN,
                                                      max_length=128 * 12,
                                                      description="The project whose memory is in reach: its "
                                                                  "project facts plus the user's own. "
                                                                  + HEADER_NAME_HELP)] = None,
              ) -> Principal:
    """The caller, from the API key alone (and the project the request works in). Two
    keys that differ (Authorization and X-API-Key, or two Authorization headers) are
    refused rather than one of them chosen."""
    given = {v for v in ([x_api_key] if x_api_key else []) + ([bearer.credentials] if bearer else [])}
    if len(given) > 1 or len(request.headers.getlist("authorization")) > 1 \
            or len(request.headers.getlist("x-api-key")) > 1:
        raise ApiError(401, "unauthorized", "send one API key (Authorization: Bearer … or X-API-Key), not two")
    secret = next(iter(given), None)
    found = principal_for(request.app.state.memory.store, secret or "")
    if found is None:
        raise ApiError(401, "unauthorized", "a valid API key is required (Authorization: Bearer … or X-API-Key)")
    return dataclasses.replace(found, project=header_name(x_project, "X-Project") or None)


class BodyLimit:
    """ASGI: a body over ``max_body`` bytes gets 413 — by its Content-Length before any
    of it is read, or, sent in chunks, as soon as the chunks pass the limit (the rest is
    never read, so a client cannot make the server hold more than the limit)."""

    def __init__(self, app: Any, max_body: int) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await self._refuse(scope, send)
        if length is not None:
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:  # no length given: read up to the limit, then decide
            message = await receive()
            if message["type"] != "http.request":
                chunks.append(message)
                break
            size += len(message.get("body", b""))
            if size > self.max_body:
                return await self._refuse(scope, send)
            chunks.append(message)
            if not message.get("more_body"):
                break

        async def replay() -> dict:
            return chunks.pop(0) if chunks else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: dict, send: Any) -> None:
        response = problem(413, "payload too large", f"bodies are limited to {self.max_body} bytes", scope["path"],
                           headers={"Connection": "close"})
        await response(scope, None, send)


class SecurityHeaders:
    """ASGI: every response is never framed, never sniffed, and sends no referrer to
    other sites (plain ASGI: a per-request middleware function costs a task and a
    response copy on every call)."""

    HEADERS = ((b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
               (b"referrer-policy", b"no-referrer"))

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in self.HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class HostAllowList:
    """ASGI: only requests whose Host names one of ``hosts`` (any port) are served;
    the others get a problem+json 400 (against DNS rebinding)."""

    def __init__(self, app: Any, hosts: Sequence[str]) -> None:
        self.app, self.hosts = app, {h.lower() for h in hosts}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            values = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
            host = values[0].lower() if len(values) == 1 else ""
            name = host[: host.index("]") + 1] if host.startswith("[") and "]" in host else host.split(":")[0]
            if name not in self.hosts:
                response = problem(400, "bad request", "this server does not answer to that Host header",
                                   scope.get("path", ""))
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


Caller = Annotated[Principal, Depends(principal)]
UserPath = Annotated[str, Path(pattern=NAME, max_length=128)]
FactPath = Annotated[str, Path(pattern=ID, max_length=128)]
AgentHeader = Annotated[str, Header(alias="X-Agent", pattern=HEADER_NAME_PATTERN, max_length=128 * 12,
                                    description="The agent acting (default 'default'). " + HEADER_NAME_HELP)]


def header_name(value: str | None, header: str) -> str | None:
    """The name a header carries (percent-decoded); an encoding that is not UTF-8, or a
    name the naming rule refuses, is a 422 titled 'invalid name'."""
    if value is None:
        return None
    try:
        name = unquote(value, errors="strict") if "%" in value else value
    except UnicodeDecodeError:
        raise ApiError(422, "invalid name", f"{header}: the percent-encoding is not UTF-8") from None
    try:
        Identity("t", "u", name)  # the naming rule every entry point shares
    except InvalidInput:
        ok = False
    else:
        ok = True
    if not ok:
        raise ApiError(422, "invalid name", f"{header}: {name!r} is not a name (1-128 letters or digits of any "
                                            "script and _ . : @ -)")
    return name


def create_app(memory: Memory, *, max_body: int = 1 << 20, extractor: Any = None,
               allowed_hosts: Sequence[str] | None = None, backfill_vectors: bool = False) -> FastAPI:
    """The REST API over ``memory``. ``allowed_hosts``: Host header names accepted (the
    others get 400), against DNS rebinding; ``archivist serve`` passes loopback names.
    ``backfill_vectors``: embed facts that have no vector in the background while the app
    runs (:mod:`archivist.lifecycle.vector_backfill`), as ``archivist serve`` does."""
    # no /docs or /redoc: FastAPI's pages load Swagger UI and ReDoc from a CDN, and nothing here
    # reaches the network; the OpenAPI document is at /openapi.json for any local viewer or client
    app = FastAPI(title="archivist", version="1", description="Long-term memory and context assembly for LLM agents.",
                  docs_url=None, redoc_url=None, redirect_slashes=False)
    jobs = JobRunner(memory)  # forgetting a user reaches its queued and running jobs
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_body=max_body)
    if allowed_hosts is not None:
        app.add_middleware(HostAllowList, hosts=allowed_hosts)

    app.state.memory, app.state.jobs = memory, jobs

    # -- plumbing ---------------------------------------------------------------
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError):
        challenge = {"WWW-Authenticate": 'Bearer realm="archivist"'} if exc.status == 401 else None
        return problem(exc.status, exc.title, exc.detail, request.url.path, headers=challenge)

    @app.exception_handler(ArchivistError)
    async def archivist_error(request: Request, exc: ArchivistError):
        for cls, status, title in _STATUS:
            if isinstance(exc, cls):
                extra = {name: getattr(exc, name) for name in ("needed", "budget", "expected", "current", "code")
                         if isinstance(getattr(exc, name, None), int | str)}  # for clients that rebuild the error
                retry = {"Retry-After": "1"} if status == 503 else None  # busy or restarting: try again shortly
                said = str(exc).replace(memory.store.path, "the store")  # where it lives is the server's business
                return problem(status, title, said, request.url.path, headers=retry, **extra)
        log.error("%s %s: %s", request.method, request.url.path, type(exc).__name__, exc_info=exc)  # the body says
        # only the error's name; the operator needs the rest
        return problem(500, "internal error", type(exc).__name__, request.url.path)

    @app.exception_handler(ValueError)
    async def value_error(request: Request, exc: ValueError):  # input that did not parse deeper down
        return problem(422, "invalid input", str(exc)[:500], request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            return problem(400, "invalid JSON", "the body is not JSON", request.url.path)
        errors = [{"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "message": e.get("msg")}
                  for e in exc.errors()]
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        return problem(422, "invalid request", detail, request.url.path, errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        headers = exc.headers
        if exc.status_code == 405:  # every method of the path (Starlette names only the first route's)
            from starlette.routing import Match

            allowed = {m for r in app.routes if r.matches(request.scope)[0] is Match.PARTIAL
                       for m in getattr(r, "methods", None) or ()}
            headers = {**(headers or {}), "Allow": ", ".join(sorted(allowed))}
        return problem(exc.status_code, "error", str(exc.detail), request.url.path, headers=headers)

    def scope_of(p: Principal, user: str, agent: str, role: str = "reader"):
        agent = header_name(agent, "X-Agent")
        if not p.may_act_for(user, agent):
            raise ApiError(403, "forbidden", "this key may not act for that user or agent")
        if not p.can(role):
            raise ApiError(403, "forbidden", f"this key's role ({p.role}) may not do that; it needs {role}")
        return memory.scope(p.tenant, user, agent, project=p.project)

    def user_wide(p: Principal, user: str, role: str):
        """A scope for an operation on the whole user — every agent's rows (export, forget
        the user) or what every agent sees (preferences): only a key for all agents."""
        if "*" not in p.agents:
            raise ApiError(403, "forbidden", f"this key is limited to agents {sorted(p.agents)}; an operation on the "
                                             "whole user needs a key for every agent (agents '*')")
        return scope_of(p, user, "default", role)

    # -- facts ------------------------------------------------------------------
    @app.get("/v1/users/{user}/facts", tags=["facts"], operation_id="listFacts")
    def list_facts(p: Caller, user: UserPath, x_agent: AgentHeader = "default",
                   limit: Annotated[int, Query(ge=1, le=500)] = 50, cursor: Annotated[int, Query(ge=0)] = 0,
                   history: bool = False, candidates: bool = False) -> S.FactPage:
        """Facts of the scope, newest first; ``next_cursor`` pages on."""
        facts = scope_of(p, user, x_agent).facts(include_history=history, include_candidates=candidates)
        page = facts[cursor : cursor + limit]
        nxt = cursor + limit if cursor + limit < len(facts) else None
        return {"items": [f.as_dict() for f in page], "next_cursor": nxt, "total": len(facts)}

    @app.post("/v1/users/{user}/facts", status_code=201, tags=["facts"], operation_id="remember",
              responses={201: {"description": "Stored (or a candidate waiting for confirmation); `Location` names it.",
                               "links": links.REMEMBERED,
                               "headers": {"Location": {"description": "The fact's URL.",
                                                        "schema": {"type": "string"}}}},
                         200: {"description": "A duplicate: the fact already stored, unchanged.",
                               "model": S.Fact, "links": links.REMEMBERED}})
    def remember(p: Caller, user: UserPath, body: RememberBody, response: Response,
                 x_agent: AgentHeader = "default") -> S.Fact:
        """Remember a fact the user stated; it passes the write gate like every write. A
        duplicate answers 200 with the fact already stored; a refusal is a 422 with the reason."""
        fact, outcome = scope_of(p, user, x_agent, "writer").remember_with_outcome(
            body.content, category=body.category, key=body.key, confidence=body.confidence, kind=body.kind,
            valid_until=body.valid_until)
        response.status_code = 200 if outcome == "duplicate" else 201
        response.headers["Location"] = f"/v1/users/{user}/facts/{fact.id}"
        return fact.as_dict()

    @app.get("/v1/users/{user}/facts/{fact_id}", tags=["facts"], operation_id="getFact")
    def get_fact(p: Caller, user: UserPath, fact_id: FactPath, x_agent: AgentHeader = "default") -> S.Fact:
        return scope_of(p, user, x_agent).get(fact_id).as_dict()

    @app.get("/v1/users/{user}/facts/{fact_id}/versions", tags=["facts"], operation_id="listFactVersions")
    def versions(p: Caller, user: UserPath, fact_id: FactPath, x_agent: AgentHeader = "default") -> list[S.Fact]:
        scope = scope_of(p, user, x_agent)
        scope.get(fact_id)
        return [f.as_dict() for f in scope.history(fact_id)]

    @app.post("/v1/users/{user}/facts/{fact_id}/confirm", tags=["facts"], operation_id="confirmFact")
    def confirm(p: Caller, user: UserPath, fact_id: FactPath, x_agent: AgentHeader = "default") -> S.Fact:
        return scope_of(p, user, x_agent, "writer").confirm(fact_id).as_dict()

    @app.delete("/v1/users/{user}/facts/{fact_id}", tags=["forget"], operation_id="forgetFact")
    def forget_fact(p: Caller, user: UserPath, fact_id: FactPath, x_agent: AgentHeader = "default",
                    all_versions: bool = False) -> S.ForgetReceipt:
        """Forget a fact everywhere; the receipt counts what was removed per table."""
        return scope_of(p, user, x_agent, "writer").forget(fact_id, all_versions=all_versions).as_dict()

    @app.delete("/v1/users/{user}", tags=["forget"], operation_id="forgetUser")
    def forget_user(p: Caller, user: UserPath) -> S.ForgetReceipt:
        """Forget every row of the user (admin keys for every agent only)."""
        user_wide(p, user, "admin")
        return memory.forget_user(p.tenant, user).as_dict()

    @app.get("/v1/erasure-jobs/{job_id}", tags=["forget"], operation_id="getErasureJob")
    def erasure_job(p: Caller, job_id: FactPath) -> S.ErasureJob:
        """A job a forget receipt names: the background erasure of the deleted rows' bytes
        from the store's files (writer keys; a job names tables, never a user)."""
        if not p.can("writer"):
            raise ApiError(403, "forbidden", f"this key's role ({p.role}) may not do that; it needs writer")
        job = memory.store.erasure_job(job_id)
        if job is None or job.tenant != p.tenant:
            raise ApiError(404, "not found", f"no erasure job {job_id!r}")
        return job.as_dict()

    # -- search, context, traces ----------------------------------------------------
    @app.post("/v1/users/{user}/search", tags=["recall"], operation_id="search",
              responses={200: {"description": "The best facts first.", "links": links.SEARCHED}})
    def search(p: Caller, user: UserPath, body: SearchBody, x_agent: AgentHeader = "default") -> list[S.SearchHit]:
        hits = scope_of(p, user, x_agent).search(body.query, k=body.k, mode=body.mode, explain=True, kinds=body.kinds)
        return [{"kind": h.kind, "fact": h.fact.as_dict(), "score": h.score, "explanation": h.explanation}
                for h in hits]

    @app.post("/v1/users/{user}/context", tags=["context"], operation_id="getContext",
              responses={200: {"description": "The view and its trace.", "links": links.CONTEXT}})
    def context(p: Caller, user: UserPath, body: ContextBody, x_agent: AgentHeader = "default") -> S.ContextView:
        kwargs: dict[str, Any] = {"budget": body.budget, "reserve": body.reserve, "memory_k": body.memory_k,
                                  "episode_k": body.episode_k, "task_id": body.task_id, "tools": body.tools,
                                  "history": [m.model_dump(exclude_none=True) for m in body.history],
                                  "steps": [m.model_dump(exclude_none=True) for m in body.steps],
                                  "pinned": list(body.pinned), "sections": body.sections,
                                  "call": {k: v for k, v in (("thread_id", body.thread_id), ("run_id", body.run_id),
                                                             ("call_index", body.call_index)) if v is not None},
                                  "evidence": [e if isinstance(e, str) else e.model_dump(exclude_none=True)
                                               for e in body.evidence],
                                  "reference": [e.model_dump(exclude_none=True) for e in body.reference]}
        if body.system:
            kwargs["system"] = body.system
        # a reader may look, not write: its views are not stored as traces
        view = scope_of(p, user, x_agent).context(body.query, persist=p.can("writer"),
                                                  persist_evidence=p.can("writer"), **kwargs)
        stored = p.can("writer")
        return {"messages": view.to_messages(), "tokens": view.tokens, "trace_id": view.trace.id if stored else None,
                "trace_stored": stored, "trace": view.trace.as_dict(), "system": view.system,
                "history": [kept_message(m) for m in view.history], "steps": [kept_message(m) for m in view.steps]}

    @app.get("/v1/users/{user}/traces/{trace_id}", tags=["context"], operation_id="getTrace")
    def trace(p: Caller, user: UserPath, trace_id: FactPath, x_agent: AgentHeader = "default") -> S.Trace:
        return scope_of(p, user, x_agent).trace(trace_id)

    # -- preferences --------------------------------------------------------------------
    @app.get("/v1/users/{user}/preferences", tags=["preferences"], operation_id="listPreferences")
    def preferences(p: Caller, user: UserPath, x_agent: AgentHeader = "default",
                    include_untrusted: bool = True) -> list[S.Preference]:
        """Every live preference with its ``trusted`` flag (an untrusted one is listed here
        and never obeyed in a view); ``include_untrusted=false`` lists the trusted ones only."""
        return [preference_out(x) for x in scope_of(p, user, x_agent).preferences(include_untrusted=include_untrusted)]

    @app.put("/v1/users/{user}/preferences/{key}", tags=["preferences"], operation_id="setPreference")
    def set_preference(p: Caller, user: UserPath, key: Annotated[str, Path(pattern=NAME, max_length=80)],
                       body: PreferenceBody, x_agent: AgentHeader = "default") -> S.Preference:
        """Preferences are the user's, seen by every agent: a writer key for every agent only."""
        user_wide(p, user, "writer")
        pref = scope_of(p, user, x_agent, "writer").set_preference(key, body.value, based_on=body.based_on,
                                                                   expires_at=body.expires_at, trusted=body.trusted)
        return preference_out(pref)

    # -- task state ---------------------------------------------------------------------------
    @app.put("/v1/users/{user}/tasks/{task_id}", tags=["context"], operation_id="saveTask")
    def save_task(p: Caller, user: UserPath, task_id: FactPath, body: TaskBody,
                  x_agent: AgentHeader = "default") -> S.Task:
        """A task's goal, done-criteria and progress, shown to calls that name ``task_id``."""
        task = scope_of(p, user, x_agent, "writer").save_task(task_id, body.goal, criteria=body.criteria,
                                                               done=body.done, missing=body.missing,
                                                               based_on=body.based_on)
        return task_out(task)

    @app.get("/v1/users/{user}/tasks/{task_id}", tags=["context"], operation_id="getTask",
             responses={404: {"description": "No such task for this user."}})
    def get_task(p: Caller, user: UserPath, task_id: FactPath, x_agent: AgentHeader = "default") -> S.Task:
        task = scope_of(p, user, x_agent).task(task_id)
        if task is None:
            raise TaskNotFound(f"no task {task_id!r} in this scope")
        return task_out(task)

    # -- ingest (background extraction) ------------------------------------------------------
    @app.post("/v1/users/{user}/messages", status_code=202, tags=["ingest"], operation_id="ingestMessages",
              responses={202: {"description": "Queued; poll `status_url`.", "links": links.INGESTED}})
    def ingest(p: Caller, user: UserPath, body: IngestBody, x_agent: AgentHeader = "default") -> S.JobAccepted:
        """Queue extraction of a conversation; poll the job for its report."""
        scope = scope_of(p, user, x_agent, "writer")
        job_id = new_id()
        messages = [m.model_dump(exclude_none=True) for m in body.messages]
        job = {"id": job_id, "tenant": p.tenant, "user": user, "agent": scope.identity.agent,
               "message_ids": [m["id"] for m in messages if m.get("id")]}  # what an undo looks for without a report

        def run(job: dict[str, Any]) -> None:
            # the profile is what every agent of the user sees: only a key for every agent changes it
            job["report"] = scope.learn(messages, thread_id=body.thread_id, extractor=extractor,
                                        update_profile="*" in p.agents).as_dict()
            try:  # upkeep after the write, off the request: consolidation once its gate is open
                plan = scope.consolidate()
                job["consolidation"] = {"trigger": plan.trigger, "ran": plan.due}
            except Exception as exc:  # the extraction stands; consolidation tries again next time
                job["consolidation"] = {"error": f"{type(exc).__name__}: {exc}"}
            job["status"] = "done"

        jobs.submit(job, run)
        return {"job_id": job_id, "status": "queued", "status_url": f"/v1/jobs/{job_id}"}

    @app.get("/v1/jobs/{job_id}", tags=["ingest"], operation_id="getJob")
    def job_status(p: Caller, job_id: FactPath) -> S.Job:
        job = jobs.get(job_id)  # reports expire (an hour after the job ends) and go with a forgotten user
        if job is None or job["tenant"] != p.tenant or not p.may_act_for(job["user"], job["agent"]):
            raise ApiError(404, "not found", f"no job {job_id!r}")
        return {k: v for k, v in job.items() if k != "tenant"}

    # -- export ------------------------------------------------------------------------
    @app.get("/v1/users/{user}/export", tags=["export"], response_class=StreamingResponse, operation_id="exportUser",
             responses={200: {"description": "One JSON record per line.",
                              "content": {NDJSON: {"schema": {"type": "string"}}}}})
    def export(p: Caller, user: UserPath) -> StreamingResponse:
        """The user's memory as versioned JSONL (admin keys for every agent only)."""
        user_wide(p, user, "admin")
        from ..lifecycle.transfer import export_records

        lines = (json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in export_records(memory, p.tenant, user))
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @app.get("/v1/users", tags=["admin"], operation_id="listUsers")
    def users(p: Caller) -> list[str]:
        """Users of the key's tenant that the key may act for."""
        return [u for u in memory.users(p.tenant) if "*" in p.users or u in p.users]

    @app.get("/v1/me", tags=["admin"], operation_id="whoAmI")
    def who_am_i(p: Caller) -> S.WhoAmI:
        """The key in use: its tenant, role, users and agents (never the secret), and the
        search modes this server offers (keyword only without an embedder)."""
        return {"tenant": p.tenant, "role": p.role, "users": list(p.users), "agents": list(p.agents),
                "project": p.project, "search_modes": search_modes()}

    @app.get("/v1/users/{user}/traces", tags=["context"], operation_id="listTraces")
    def traces(p: Caller, user: UserPath, x_agent: AgentHeader = "default",
               limit: Annotated[int, Query(ge=1, le=200)] = 20,
               thread_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None) -> list[S.TraceSummary]:
        """Newest context traces first; ``thread_id`` keeps the model calls of one agent thread."""
        keys = ("id", "created_at", "thread_id", "run_id", "call_index", "query", "total_tokens", "budget", "available")
        return [{k: t.get(k) for k in keys} for t in scope_of(p, user, x_agent).traces(limit, thread_id=thread_id)]

    @app.get("/v1/users/{user}/traces/{trace_id}/why", tags=["context"], operation_id="explainTrace")
    def trace_why(p: Caller, user: UserPath, trace_id: FactPath,
                  subject: Annotated[str, Query(min_length=1, max_length=2000)],
                  x_agent: AgentHeader = "default") -> S.WhyAnswer:
        """One line: why ``subject`` (an id, its last 8+ characters, or words of its text) was
        or was not in the view of this trace."""
        return {"trace_id": trace_id, "subject": subject,
                "answer": scope_of(p, user, x_agent).why(trace_id, subject)}

    @app.get("/v1/users/{user}/consolidation-runs", tags=["facts"], operation_id="listConsolidationRuns")
    def consolidation_runs(p: Caller, user: UserPath, x_agent: AgentHeader = "default",
                           limit: Annotated[int, Query(ge=1, le=200)] = 20) -> list[S.ConsolidationRun]:
        """Consolidation runs of the scope, newest first, with what each did."""
        return scope_of(p, user, x_agent).consolidation_runs(limit)

    @app.get("/v1/users/{user}/review", tags=["facts"], operation_id="getReview")
    def review(p: Caller, user: UserPath, x_agent: AgentHeader = "default") -> S.Review:
        """Candidates waiting for confirmation, open conflicts, and stale facts."""
        scope = scope_of(p, user, x_agent)
        candidates = [f.as_dict() for f in scope.facts(include_candidates=True) if f.status.value == "candidate"]
        return {"candidates": candidates, "conflicts": scope.review_queue(),
                "stale": [s.as_dict() for s in scope.stale()]}

    @app.get("/v1/users/{user}/refusals", tags=["facts"], operation_id="listRefusals")
    def refusals(p: Caller, user: UserPath, x_agent: AgentHeader = "default",
                 limit: Annotated[int, Query(ge=1, le=500)] = 100) -> list[S.Refusal]:
        """What the write gate refused or held for this user and agent, newest first, with its
        code and reason (from the audit); the text only where the audit keeps it."""
        entries = scope_of(p, user, x_agent).audit(limit=20 * limit)
        return [{**dataclasses.asdict(e), "at": e.at.isoformat()} for e in entries
                if e.action in ("reject", "candidate")][:limit]

    @app.post("/v1/users/{user}/review/{item_id}/resolve", status_code=204, tags=["facts"],
              operation_id="resolveReview")
    def resolve_review(p: Caller, user: UserPath, item_id: FactPath, body: ResolveBody,
                       x_agent: AgentHeader = "default") -> None:
        """Settle an open conflict: ``keep`` names the fact that holds (the others are retired,
        kept as history); without it the item closes and its facts stay."""
        scope_of(p, user, x_agent, "writer").resolve_review(item_id, keep=body.keep)

    @app.get("/inspector", include_in_schema=False)
    def inspector() -> HTMLResponse:
        return HTMLResponse(INSPECTOR_HTML, headers={"Content-Security-Policy": INSPECTOR_CSP,
                                                     "Cache-Control": "no-store"})

    @app.get("/healthz", tags=["service"], operation_id="health")
    def health() -> S.Health:
        return {"status": "ok"}

    def search_modes() -> list[str]:
        return ["keyword", "vector", "hybrid"] if getattr(memory, "embedder", None) else ["keyword"]

    def document() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = complete(FastAPI.openapi(app), search_modes=search_modes())
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
    app.router.on_shutdown.append(jobs.shutdown)
    if backfill_vectors:
        from ..lifecycle.vector_backfill import VectorBackfill

        backfill = VectorBackfill(memory)
        app.state.backfill = backfill
        app.router.on_startup.append(backfill.start)
        app.router.on_shutdown.insert(0, backfill.stop)
    return app


SERVE_ENV = "ARCHIVIST_SERVE"  # how `archivist serve --workers N` hands its settings to each worker process


def app_from_environment() -> FastAPI:
    """The app of one worker process of ``archivist serve --workers N``: its own memory
    (store connection, embedder, vector index) over the store the command named."""
    import json
    import os

    from ..memory import Memory

    settings = json.loads(os.environ[SERVE_ENV])
    from ..pipeline.llm import extractor_from_spec

    memory = Memory.open(settings["db"], embedder=settings.get("embedder"))
    # the facts without vectors are embedded once, by the command that started the workers
    app = create_app(memory, allowed_hosts=settings.get("hosts"), extractor=extractor_from_spec(settings.get("extractor")))
    app.router.on_shutdown.append(memory.close)  # after the jobs were run out
    return app
