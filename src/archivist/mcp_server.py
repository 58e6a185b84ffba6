"""The MCP server: ``remember``, ``search_memory``, ``get_context`` and ``forget_fact``.

The identity (tenant, user, agent) is fixed when the server starts — from
``archivist mcp --user …`` or ``ARCHIVIST_MCP_USER``/``_TENANT``/``_AGENT`` — and no tool
takes it as an argument, so a model cannot reach another user's memory through a tool
call. Transports: stdio (default) and streamable HTTP.
"""

from __future__ import annotations

import functools
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
