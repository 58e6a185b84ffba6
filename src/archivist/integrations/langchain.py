"""LangChain 1.x integration: memory middleware for ``create_agent`` and a ``memory_search``
tool whose identity comes from the runtime context, never from the model.

    from langchain.agents import create_agent
    from archivist.integrations.langchain import MemoryContext, MemoryMiddleware

    memory = Memory.open("memory.db")
    mw = MemoryMiddleware(memory, agent="support-bot", mode="auto")
    agent = create_agent(model, tools=[...], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [...]}, context=MemoryContext(user_id="alice", thread_id="t-1"))

Hooks (seed 000 §8, seed 004 §9):

* ``before_agent`` snapshots this turn's real user input into state before any
  summarization can rewrite history;
* ``wrap_model_call`` / ``awrap_model_call`` put the rendered memory into the system
  message of this call only — it is not written to state, so it can never be
  extracted again;
* ``after_agent`` queues extraction of the snapshot plus the final reply (the
  :class:`~archivist.pipeline.queue.UpdateQueue` debounces, deduplicates and retries;
  a failure there never fails the turn).

``mode="tool"`` injects only a short note and registers the ``memory_search`` tool
instead. An agent listed in ``opt_out`` (or ``opt_out=True``) reads and writes nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from dataclasses import dataclass
from typing import Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, SummarizationMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

from ..pipeline.llm import message_text as _text
from ..pipeline.queue import QueueFull, UpdateQueue

log = logging.getLogger("archivist.langchain")


@dataclass(frozen=True)
class MemoryContext:
    """The trusted caller identity, passed as ``context=`` to ``agent.invoke``."""

    user_id: str
    tenant: str = "default"
    thread_id: str = "default"


def identity_of(context: Any) -> tuple[str, str, str] | None:
    """(tenant, user, thread) from a runtime context (a :class:`MemoryContext`, any object
    with those attributes, or a dict); None when there is no user."""
    if context is None:
        return None
    get = context.get if isinstance(context, dict) else (lambda name, default=None: getattr(context, name, default))
    user = get("user_id") or get("user")
    if not user:
        return None
    return str(get("tenant") or "default"), str(user), str(get("thread_id") or get("thread") or "default")


class MemoryState(AgentState):
    archivist_turn: NotRequired[list[dict[str, Any]]]  # this turn's user input, as it arrived


def _meta(message: Any) -> dict[str, Any]:
    return {**(getattr(message, "response_metadata", None) or {}), **(getattr(message, "additional_kwargs", None) or {})}


def _dict(message: Any, role: str) -> dict[str, Any]:
    """A message for the queue, keeping the metadata filtering needs (origin, hidden)."""
    return {"id": getattr(message, "id", None), "role": role, "content": _text(message), "metadata": _meta(message)}


def _written_by_a_model(message: Any) -> bool:
    """LangChain's summary of earlier turns arrives as a HumanMessage: it is not the user's."""
    meta = _meta(message)
    return meta.get("lc_source") == "summarization" or meta.get("archivist") == "memory_injected"


def memory_search_tool(memory: Any, *, agent: str = "default", top_k: int = 5, budget: int = 900) -> StructuredTool:
    """The ``memory_search`` tool: ``query`` and ``limit`` come from the model, the user
    comes from ``ToolRuntime.context`` — there is no argument that could name another."""

    def memory_search(query: str, runtime: ToolRuntime[Any], limit: int = 5) -> str:
        ident = identity_of(runtime.context)
        if ident is None:
            return '{"results": [], "note": "memory is not available in this conversation"}'
        tenant, user, _ = ident
        scope = memory.scope(tenant, user, agent)
        return scope.memory_search(query, limit=max(1, min(int(limit), top_k)), budget=budget)

    return StructuredTool.from_function(
        memory_search, name="memory_search",
        description="Search what you remember about the user (preferences, background, corrections). "
                    "Use short keyword queries.",
    )


class MemoryMiddleware(AgentMiddleware):
    state_schema = MemoryState

    def __init__(self, memory: Any, *, agent: str = "default", mode: str = "auto", budget: int = 900,
                 queue: UpdateQueue | None = None, extractor: Any = None, opt_out: bool | set[str] = False,
                 top_k: int = 5, max_tool_chars: int = 4000) -> None:
        if mode not in ("auto", "tool"):
            raise ValueError("mode must be 'auto' or 'tool'")
        super().__init__()
        self.memory, self.agent, self.mode, self.budget = memory, agent, mode, budget
        self.max_tool_chars = max_tool_chars
        self.opted_out = opt_out is True or (isinstance(opt_out, set) and agent in opt_out)
        self.queue = queue or UpdateQueue(memory, extractor=extractor,
                                          opted_out=lambda key: self.opted_out)
        self.tools = [memory_search_tool(memory, agent=agent, top_k=top_k)] if mode == "tool" else []

    # -- before the agent: what the user really said this turn --------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.opted_out:
            return None
        messages = state.get("messages", [])
        turn: list[dict[str, Any]] = []
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                if not _written_by_a_model(message):
                    turn.append(_dict(message, "user"))
            elif turn or isinstance(message, AIMessage):
                break
        return {"archivist_turn": list(reversed(turn))}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # -- each model call: memory in the system message, for this call only ---------
    def _system_with_memory(self, request: ModelRequest) -> ModelRequest:
        ident = identity_of(getattr(request.runtime, "context", None))
        if self.opted_out or ident is None:
            return request
        tenant, user, _ = ident
        try:
            scope = self.memory.scope(tenant, user, self.agent)
            query = next((_text(m) for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
            block = scope.render(mode=self.mode, budget=self.budget, query=query)
        except Exception as exc:  # memory never costs the call
            log.warning("memory not rendered for this call: %s", exc)
            return request
        if not block.text:
            return request
        base = _text(request.system_message) if request.system_message is not None else ""
        system = SystemMessage(content=(base + "\n\n" if base else "") + block.text,
                               additional_kwargs={"archivist": "memory_injected"})
        return request.override(system_message=system)

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        return handler(self._system_with_memory(request))

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        return await handler(await asyncio.to_thread(self._system_with_memory, request))  # store reads off the loop

    # -- after the agent: queue extraction of the turn ------------------------------
    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        ident = identity_of(getattr(runtime, "context", None))
        if self.opted_out or ident is None:
            return None
        tenant, user, thread = ident
        turn = list(state.get("archivist_turn") or [])
        final = next((m for m in reversed(state.get("messages", []))
                      if isinstance(m, AIMessage) and not m.tool_calls), None)
        if final is not None:
            turn.append(_dict(final, "assistant"))
        if not any(m["role"] == "user" for m in turn):
            return None
        try:
            self.queue.submit(tenant, user, self.agent, thread, turn)
        except QueueFull as exc:  # backpressure: this turn goes unremembered, the agent goes on
            log.warning("memory update skipped: %s", exc)
        except Exception as exc:  # a store error never fails the agent's turn
            log.error("memory update skipped: %s: %s", type(exc).__name__, exc)
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # -- tool calls: the raw result is evidence, the conversation gets a projection --
    def _record_tool(self, request: Any, result: Any) -> Any:
        ident = identity_of(getattr(getattr(request, "runtime", None), "context", None))
        if self.opted_out or ident is None or not isinstance(result, ToolMessage):
            return result
        tenant, user, thread = ident
        call = request.tool_call
        raw = _text(result)
        evidence_id = f"tool:{thread}:{call.get('id') or result.tool_call_id}"
        record = json.dumps({"tool": call.get("name"), "args": call.get("args"), "status": result.status,
                             "result": raw}, ensure_ascii=False, default=str)
        try:
            self.memory.scope(tenant, user, self.agent).put_evidence(evidence_id, record,
                                                                     source=f"tool:{call.get('name')}")
        except Exception as exc:  # evidence is best effort; the tool result still goes back
            log.warning("tool result not kept as evidence: %s", exc)
            return result
        if len(raw) <= self.max_tool_chars:
            return result
        projection = (raw[: self.max_tool_chars] + f"\n[… {len(raw) - self.max_tool_chars} more characters; "
                      f"the full result is kept as evidence {evidence_id}]")
        return result.model_copy(update={"content": projection})

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return self._record_tool(request, handler(request))

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        result = await handler(request)
        return await asyncio.to_thread(self._record_tool, request, result)

    # -- the flush hook and the end of a session -------------------------------------
    def flush(self, context: Any, messages: list[Any]) -> int:
        """Queue messages that are about to leave the conversation (summarized away)."""
        ident = identity_of(context)
        if self.opted_out or ident is None:
            return 0
        tenant, user, thread = ident
        rows = [_dict(m, "user" if isinstance(m, HumanMessage) else "assistant") for m in messages
                if (isinstance(m, HumanMessage) and not _written_by_a_model(m))
                or (isinstance(m, AIMessage) and not m.tool_calls)]
        try:
            return self.queue.submit(tenant, user, self.agent, thread, rows) if rows else 0
        except Exception as exc:  # QueueFull or a store error: the summarization goes on
            log.warning("memory flush skipped: %s: %s", type(exc).__name__, exc)
            return 0

    def end_session(self, context: Any, messages: list[Any], *, summarizer: Any = None) -> Any:
        """At a session's end: a structured session summary (short-term memory), after
        the queued extraction of the thread has run."""
        ident = identity_of(context)
        if self.opted_out or ident is None:
            return None
        tenant, user, thread = ident
        self.queue.wait_idle()
        return self.memory.scope(tenant, user, self.agent).summarize_session(thread, messages, summarizer=summarizer)

    def close(self, timeout: float = 30.0) -> bool:
        """Drain the update queue (call on shutdown)."""
        return self.queue.drain(timeout)


_CONTEXT: contextvars.ContextVar[Any] = contextvars.ContextVar("archivist_context", default=None)


class FlushingSummarization(SummarizationMiddleware):
    """LangChain's ``SummarizationMiddleware`` that first hands the messages it is about
    to summarize away to the memory queue, so nothing is lost to the summary."""

    def __init__(self, model: Any, *, memory: MemoryMiddleware, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.memory_middleware = memory

    def before_model(self, state: Any, runtime: Any) -> Any:
        token = _CONTEXT.set(getattr(runtime, "context", None))
        try:
            return super().before_model(state, runtime)
        finally:
            _CONTEXT.reset(token)

    async def abefore_model(self, state: Any, runtime: Any) -> Any:
        token = _CONTEXT.set(getattr(runtime, "context", None))
        try:
            return await super().abefore_model(state, runtime)
        finally:
            _CONTEXT.reset(token)

    def _create_summary(self, messages_to_summarize: list[Any]) -> str:
        self.memory_middleware.flush(_CONTEXT.get(), messages_to_summarize)
        return super()._create_summary(messages_to_summarize)

    async def _acreate_summary(self, messages_to_summarize: list[Any]) -> str:
        self.memory_middleware.flush(_CONTEXT.get(), messages_to_summarize)
        return await super()._acreate_summary(messages_to_summarize)
