"""The MCP server: ``remember``, ``search_memory``, ``get_context`` and ``forget_fact``.

The identity (tenant, user, agent) is fixed when the server starts — from
``archivist mcp --user …`` or ``ARCHIVIST_MCP_USER``/``_TENANT``/``_AGENT`` — and no tool
takes it as an argument, so a model cannot reach another user's memory through a tool
call. Transports: stdio (default) and streamable HTTP, which needs a bearer key
(:class:`BearerKey`).
"""

from __future__ import annotations

import functools
import hmac
import json
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .errors import ArchivistError


def build_server(memory: Any, *, tenant: str = "default", user: str, agent: str = "default",
                 project: str | None = None) -> MCPServer:
    if not user:
        raise ValueError("the MCP server needs the user it serves (--user or ARCHIVIST_MCP_USER)")
    scope = memory.scope(tenant, user, agent, project=project)
    server = MCPServer(name="archivist", version="1",
                       instructions="Long-term memory about the user: search it before answering questions about "
                                    "them; remember only what the user stated and will still matter later.")

    def guarded(fn):
        """Typed archivist errors become tool errors with a readable message."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except ArchivistError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from None
        return wrapper

    @server.tool()
    @guarded
    def remember(content: str, category: str = "context", key: str | None = None) -> dict:
        """Remember a durable fact the user stated (it still passes the write gate)."""
        fact = scope.remember(content, category=category, key=key)
        return {"id": fact.id, "content": fact.content, "status": fact.status.value, "version": fact.version}

    @server.tool()
    @guarded
    def search_memory(query: str, limit: int = 5) -> str:
        """Search what is remembered about the user; JSON results, bounded in size."""
        return scope.memory_search(query, limit=max(1, min(int(limit), 10)))

    @server.tool()
    @guarded
    def get_context(query: str, budget: int = 4000, reserve: int | None = None) -> dict:
        """Assemble the context for a request within a token budget (the reply's reserve included;
        by default an eighth of the budget, at most 1000); returns the messages and the trace id."""
        view = scope.context(query, budget=budget, reserve=reserve)
        return {"messages": view.to_messages(), "tokens": view.tokens, "trace_id": view.trace.id}

    @server.tool()
    @guarded
    def forget_fact(fact_id: str) -> dict:
        """Forget a fact everywhere; returns the receipt with counts per table."""
        return scope.forget(fact_id).as_dict()

    return server


#: a bearer key shorter than this is refused: it could be guessed
MIN_KEY_LENGTH = 16


def usable_key(key: str) -> bool:
    """One line of visible ASCII (what an Authorization header carries), long enough."""
    return len(key) >= MIN_KEY_LENGTH and all("\x21" <= ch <= "\x7e" for ch in key)


class BearerKey:
    """ASGI middleware for MCP over HTTP: every HTTP request must carry
    ``Authorization: Bearer <key>`` (compared in constant time), else 401 with
    ``WWW-Authenticate: Bearer``. Why: on loopback any local process, and any web page
    that reaches the port, could otherwise read and change the served user's memory."""

    def __init__(self, app: Any, key: str) -> None:
        if not usable_key(key):
            raise ValueError(f"the MCP bearer key must be at least {MIN_KEY_LENGTH} visible ASCII characters")
        self.app, self._expected = app, key.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            body = json.dumps({"error": "unauthorized", "detail": "send Authorization: Bearer <key>"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="archivist-mcp"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: dict) -> bool:
        values = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, token = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self._expected)


def http_app(server: MCPServer, *, key: str, host: str = "127.0.0.1") -> Any:
    """The server's streamable HTTP app (at ``/mcp``) behind a bearer key."""
    return BearerKey(server.streamable_http_app(host=host), key)


def serve_http(server: MCPServer, *, key: str, host: str = "127.0.0.1", port: int = 8766) -> None:
    import uvicorn

    uvicorn.run(http_app(server, key=key, host=host), host=host, port=port, log_level="warning")
