"""LangChain 1.x integration: memory middleware for ``create_agent`` and a ``memory_search``
tool whose identity comes from the runtime context, never from the model.

    from langchain.agents import create_agent
    from archivist.integrations.langchain import MemoryContext, MemoryMiddleware

    memory = Memory.open("memory.db")
    mw = MemoryMiddleware(memory, agent="support-bot", mode="auto")
    agent = create_agent(model, tools=[...], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [...]}, context=MemoryContext(user_id="alice", thread_id="t-1"))

Hooks (seed 000 §8, seed 004 §9):

* ``before_agent`` snapshots this run's real user input into state before any
  summarization can rewrite history, and gives the run an id;
* ``wrap_model_call`` / ``awrap_model_call`` build every model call with the
  assembler: system instructions, tool schemas, the request and this run's tool
  calls are protected; task state, evidence, history (trimmed, tool pairs whole, the
  flush hook first), preferences (with per-turn overrides), the last session's
  summary and memory fill the rest of ``budget − reserve`` in the model's own tokens.
  A call whose protected part does not fit fails with ``ContextOverflow`` before it
  is sent. Each call's trace is stored with its thread id, run id and call index
  (``scope.traces(thread_id=…)``, ``archivist trace list --thread``);
* ``wrap_tool_call`` keeps each raw tool result whole as evidence and gives the
  conversation a bounded projection that names its evidence id;
* ``after_agent`` queues extraction of every user message of the run (answers given
  mid-run and results of human tools included) plus the final reply; the
  :class:`~archivist.pipeline.queue.UpdateQueue` debounces, deduplicates, retries and,
  once its gate opens, consolidates in the background. A failure there never fails
  the turn.

``mode="tool"`` leaves long-term memory out of the view and registers the
``memory_search`` tool instead. An agent listed in ``opt_out`` (or ``opt_out=True``)
reads and writes nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired

if TYPE_CHECKING:
    from ..memory import Memory

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    SummarizationMiddleware,
)
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

from ..context.assemble import SECTIONS, Assembler, ContextRequest, ModelView
from ..context.history import to_history_message
from ..errors import AccessDenied, ContextOverflow, InvalidBudget, InvalidInput
from ..model import Identity, new_id
from ..pipeline.llm import message_text as _text
from ..pipeline.queue import QueueFull, RemoteUpdates, UpdateQueue
from ..tokens import TokenCounter, counter_for_model

log = logging.getLogger("archivist.langchain")


@dataclass(frozen=True)
class MemoryContext:
    """The trusted caller identity, passed as ``context=`` to ``agent.invoke``. With
    ``project`` the agent reads the project's memory beside the user's, and facts about
    the project ("这个仓库使用 PostgreSQL。") are kept in the project."""

    user_id: str
    tenant: str = "default"
    thread_id: str = "default"
    project: str | None = None


class Caller(NamedTuple):
    tenant: str
    user: str
    thread: str
    project: str | None = None


def identity_of(context: Any) -> Caller | None:
    """(tenant, user, thread, project) from a runtime context (a :class:`MemoryContext`,
    any object with those attributes, or a dict); None when there is no user."""
    if context is None:
        return None
    get = context.get if isinstance(context, dict) else (lambda name, default=None: getattr(context, name, default))
    user = get("user_id") or get("user")
    if not user:
        return None
    project = get("project")
    return Caller(str(get("tenant") or "default"), str(user), str(get("thread_id") or get("thread") or "default"),
                  str(project) if project else None)


class MemoryState(AgentState):
    archivist_turn: NotRequired[list[dict[str, Any]]]  # this turn's user input, as it arrived
    archivist_run: NotRequired[str]  # this run's id, in every trace of its model calls


def _schema(tool: Any) -> dict[str, Any]:
    """A tool as the model sees it (OpenAI function format), for counting."""
    if isinstance(tool, dict):
        return tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        return convert_to_openai_tool(tool)
    except Exception:  # an exotic tool: its name and description still count
        return {"name": getattr(tool, "name", "?"), "description": getattr(tool, "description", "")}


def _originals(originals: list[Any], converted: list[Any], kept: list[Any]) -> list[Any]:
    """The agent's own message objects for what the view kept (ids, metadata, tool call
    names intact); a message the view changed (a cleared tool result) is a copy with
    the new content."""
    by_id = {c.id: (m, c.content) for m, c in zip(originals, converted)}
    out = []
    for m in kept:
        original, content = by_id.get(m.id, (None, None))
        if original is not None:
            out.append(original if content == m.content else original.model_copy(update={"content": m.content}))
    return out


def _request_text(message: Any) -> str:
    """The request as the assembler takes it: a NUL (never text; a store refuses it) removed."""
    return _text(message).replace("\x00", "")


def _without_nul(m: Any) -> Any:
    return replace(m, content=m.content.replace("\x00", "")) if "\x00" in (m.content or "") else m


def _meta(message: Any) -> dict[str, Any]:
    return {**(getattr(message, "response_metadata", None) or {}), **(getattr(message, "additional_kwargs", None) or {})}


def _dict(message: Any, role: str) -> dict[str, Any]:
    """A message for the queue, keeping the metadata filtering needs (origin, hidden)."""
    out = {"id": getattr(message, "id", None), "role": role, "content": _text(message), "metadata": _meta(message)}
    if isinstance(getattr(message, "name", None), str):
        out["name"] = message.name  # who spoke: an episode keeps the name
    return out


def _written_by_a_model(message: Any) -> bool:
    """LangChain's summary of earlier turns arrives as a HumanMessage: it is not the user's."""
    meta = _meta(message)
    return meta.get("lc_source") == "summarization" or meta.get("archivist") == "memory_injected"


def memory_search_tool(memory: Memory, *, agent: str = "default", top_k: int = 5, budget: int = 900) -> StructuredTool:
    """The ``memory_search`` tool: ``query`` and ``limit`` come from the model, the user
    comes from ``ToolRuntime.context`` — there is no argument that could name another."""

    def memory_search(query: str, runtime: ToolRuntime[Any], limit: int = 5) -> str:
        ident = identity_of(runtime.context)
        if ident is None:
            return '{"results": [], "note": "memory is not available in this conversation"}'
        scope = memory.scope(ident.tenant, ident.user, agent, ident.project)
        return scope.memory_search(query, limit=max(1, min(int(limit), top_k)), budget=budget)

    return StructuredTool.from_function(
        memory_search, name="memory_search",
        description="Search what you remember about the user (preferences, background, corrections). "
                    "Use short keyword queries.",
    )


DEFAULT_CALL_BUDGET = 16_000  # tokens per model call when neither the caller nor the model's profile says
CONVERSION_CACHE = 20_000  # messages whose history form is remembered between model calls
HUMAN_TOOLS = frozenset({"ask_user", "ask_human", "clarify", "request_clarification"})
_TOOL_MODE_NOTE = ("You can recall what you know about this user with the memory_search tool "
                   "(short keyword queries).")


class MemoryMiddleware(AgentMiddleware):
    """Every model call of the agent is a view built by archivist's assembler (see the
    module docstring); ``budget`` is the whole call in the model's tokens, ``reserve``
    the part kept for the reply (default: an eighth of the budget, at most 1000)."""

    state_schema = MemoryState

    def __init__(self, memory: Memory, *, agent: str = "default", mode: str = "auto", budget: int | None = None,
                 reserve: int | None = None, queue: UpdateQueue | None = None, extractor: Any = None,
                 opt_out: bool | set[str] = False, top_k: int = 8, max_tool_chars: int = 4000,
                 counter: TokenCounter | None = None, human_tools: frozenset[str] | set[str] = HUMAN_TOOLS,
                 summarize_idle_after: float | None = None, consolidate: bool = True,
                 assembler_options: dict[str, Any] | None = None) -> None:
        """``counter``: token counter (default: chosen from the model's name);
        ``human_tools``: tools whose result is the user's own answer (a clarification),
        extracted like a user message; ``summarize_idle_after``: seconds after which an
        idle thread gets its session summary from the queue (None: only ``end_session``);
        ``consolidate``: run consolidation in the queue worker once its gate opens."""
        if mode not in ("auto", "tool"):
            raise ValueError("mode must be 'auto' or 'tool'")
        for name, value, least in (("budget", budget, 1), ("reserve", reserve, 0)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
                raise InvalidBudget(f"{name} must be a number of tokens ≥ {least}, got {value!r}")
        if budget is not None and reserve is not None and reserve >= budget:
            raise InvalidBudget(f"the reserve ({reserve}) must be below the budget ({budget})")
        for name, value, least in (("top_k", top_k, 1), ("max_tool_chars", max_tool_chars, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"{name} must be an integer ≥ {least}, got {value!r}")
        super().__init__()
        from ..client import AsyncRemoteMemory, RemoteMemory

        if isinstance(memory, AsyncRemoteMemory):
            raise InvalidInput("MemoryMiddleware takes RemoteMemory (its calls run off the event loop), "
                               "not AsyncRemoteMemory")
        # over a server, the server assembles each view (POST /context) and learns each turn
        self.remote = isinstance(memory, RemoteMemory)
        if self.remote and (extractor is not None or queue is not None or summarize_idle_after is not None):
            raise InvalidInput("over a server, extraction, its queue and session summaries are the server's: "
                               "give MemoryMiddleware(RemoteMemory(...)) none of extractor, queue, "
                               "summarize_idle_after")
        self.memory, self.agent, self.mode, self.budget, self.reserve = memory, agent, mode, budget, reserve
        self.top_k, self.max_tool_chars, self.counter = top_k, max_tool_chars, counter
        self.human_tools = frozenset(human_tools)
        self.summarize_idle_after = summarize_idle_after
        self.assembler_options = dict(assembler_options or {})
        self.opted_out = opt_out is True or (isinstance(opt_out, set) and agent in opt_out)
        self.queue = RemoteUpdates(memory) if self.remote else queue or UpdateQueue(
            memory, extractor=extractor, opted_out=lambda key: self.opted_out, consolidate=consolidate)
        self.tools = [memory_search_tool(memory, agent=agent, top_k=top_k)] if mode == "tool" else []
        self.last_trace_id: str | None = None
        self._conversions: dict[tuple, Any] = {}
        self._counts: dict[int, dict[str, int]] = {}  # token counts per counter, kept across calls

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
        return {"archivist_turn": list(reversed(turn)), "archivist_run": new_id()}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # -- each model call: the assembled view, budgeted and traced -------------------
    def _budget(self, model: Any) -> int:
        if self.budget is not None:
            return self.budget
        profile = getattr(model, "profile", None) or {}
        window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
        return int(window) if isinstance(window, int) and window > 0 else DEFAULT_CALL_BUDGET

    def _counter(self, model: Any) -> TokenCounter:
        if self.counter is not None:
            return self.counter
        return counter_for_model(getattr(model, "model_name", None) or getattr(model, "model", None))

    def assemble(self, request: ModelRequest, *, memory: bool = True,
                 failure: str | None = None) -> tuple[ModelRequest, ModelView | None]:
        """The request this model call sends: its messages rebuilt from the assembler's
        view of the conversation, memory and context. Raises :class:`ContextOverflow`
        when the protected part alone exceeds the budget (nothing is sent).
        ``memory=False`` builds the call from the conversation alone (the fallback when
        assembling with memory failed; ``failure`` says why, in the trace)."""
        ident = identity_of(getattr(request.runtime, "context", None))
        if self.opted_out or ident is None:
            return request, None
        thread = ident.thread
        messages = list(request.messages)
        at = next((i for i in range(len(messages) - 1, -1, -1)
                   if isinstance(messages[i], HumanMessage) and not _written_by_a_model(messages[i])), None)
        if at is None:  # no user request in the conversation: nothing to assemble around
            return request, None
        # system messages inside the conversation are instructions too: protected, in the system part
        instructions = [request.system_message] if request.system_message is not None else []
        instructions += [m for m in messages if isinstance(m, SystemMessage)]
        at -= sum(isinstance(m, SystemMessage) for m in messages[:at])
        messages = [m for m in messages if not isinstance(m, SystemMessage)]
        history, steps = messages[:at], messages[at + 1:]
        system = "\n\n".join(t for t in (_text(m) for m in instructions) if t and t.strip())
        if self.mode == "tool":
            system = (system + "\n\n" if system else "") + _TOOL_MODE_NOTE
        turn = []  # this turn's input before the request ("<a pasted document>", then "summarise it")
        for m in reversed(history):
            if not isinstance(m, HumanMessage) or _written_by_a_model(m):
                break
            turn.append(m)
        state = request.state or {}
        call = {"thread_id": thread, "run_id": state.get("archivist_run"),
                "call_index": sum(isinstance(m, AIMessage) for m in steps)}
        scope = self._scope(ident)
        model_written = {m.id for m in history if isinstance(m, HumanMessage) and _written_by_a_model(m)}

        def flush(dropped: list[Any]) -> None:  # history about to be trimmed away is extracted first
            rows = [{"id": m.id, "role": m.role, "content": m.content, "metadata": {}} for m in dropped
                    if m.id not in model_written and (m.role == "user" or (m.role == "assistant" and not m.tool_calls))]
            if rows:
                self._submit(ident, rows)

        if self.remote and memory:
            return self._assembled_by_server(request, scope, messages[at], history, steps, system, turn, call)
        counter = self._counter(request.model)
        options = dict(counter=counter, flush=flush, count_cache=self._counts.setdefault(id(counter), {}),
                       **self.assembler_options)
        # without its server, the conversation alone is assembled here, under the same budget
        assembler = Assembler(clock=lambda: datetime.now(UTC), **options) if self.remote else scope.assembler(**options)
        past = [self._converted(m, i) for i, m in enumerate(history)]
        now = [self._converted(m, len(history) + i) for i, m in enumerate(steps)]
        pinned = [c.id for m, c in zip(history, past) if any(m is t for t in turn)]
        asked = to_history_message(messages[at], len(history))  # the request's media and other parts count too
        fields = dict(system=system, tools=[_schema(t) for t in request.tools], history=past, steps=now,
                      pinned=pinned, request_media=asked.media, request_parts=asked.calls_json,
                      budget=self._budget(request.model), reserve=self.reserve, memory_k=self.top_k, call=call)
        if memory:
            view = scope.context(_request_text(messages[at]), assembler=assembler, persist_evidence=False, persist=False,
                                 sections=None if self.mode == "auto" else [s for s in SECTIONS if s != "memory"],
                                 **fields)
        else:  # the conversation alone: no store read can fail here
            who = Identity(ident.tenant, ident.user, self.agent, ident.project)
            view = assembler.assemble(who, ContextRequest(_request_text(messages[at]), **fields), {})
        if failure:
            view.trace.failures.append({"source": "assembly", "error": failure + "; this call went without memory"})
        if not self.remote:  # a server stores the traces of the views it assembles
            scope.keep_trace(view.trace)
        self.last_trace_id = view.trace.id
        rebuilt = [*_originals(history, past, view.history), messages[at], *_originals(steps, now, view.steps)]
        system_message = None
        if view.system.strip():
            system_message = SystemMessage(content=view.system, additional_kwargs={"archivist": "memory_injected"})
        return request.override(system_message=system_message, messages=rebuilt), view

    def _assembled_by_server(self, request: ModelRequest, scope: Any, asked: Any, history: list[Any],
                             steps: list[Any], system: str, turn: list[Any],
                             call: dict[str, Any]) -> tuple[ModelRequest, Any]:
        """The call's view from the server (``POST /context``): the same inputs as the
        embedded assembler gets, the view's kept messages mapped back to the agent's own
        objects. The server counts in its tokenizer and stores the trace (writer keys)."""
        past = [self._converted(m, i) for i, m in enumerate(history)]
        now = [self._converted(m, len(history) + i) for i, m in enumerate(steps)]
        sections = None if self.mode == "auto" else [s for s in SECTIONS if s != "memory"]
        view = scope.context(
            _request_text(asked), system=system, tools=[_schema(t) for t in request.tools], history=past,
            steps=now, pinned=[c.id for m, c in zip(history, past) if any(m is t for t in turn)],
            budget=self._budget(request.model), reserve=self.reserve, memory_k=self.top_k, sections=sections,
            call={k: v for k, v in call.items() if v is not None})
        self.last_trace_id = view.trace.id
        rebuilt = [*_originals(history, past, view.history), asked, *_originals(steps, now, view.steps)]
        system_message = None
        if view.system.strip():
            system_message = SystemMessage(content=view.system, additional_kwargs={"archivist": "memory_injected"})
        return request.override(system_message=system_message, messages=rebuilt), view

    def _converted(self, message: Any, index: int) -> Any:
        """The history form of a message, remembered across calls: an agent's calls see
        the same messages again and again (keyed by id, type, text and tool call ids)."""
        content = message.content
        if getattr(message, "id", None) is None or not isinstance(content, str):
            return _without_nul(to_history_message(message, index))
        calls = tuple(c.get("id") for c in getattr(message, "tool_calls", None) or ())
        key = (message.id, message.type, content, calls, getattr(message, "tool_call_id", None))
        found = self._conversions.get(key)
        if found is None:
            found = self._conversions[key] = _without_nul(to_history_message(message, index))
            if len(self._conversions) > CONVERSION_CACHE:
                try:  # the oldest goes; calls on other threads may be trimming it too
                    self._conversions.pop(next(iter(self._conversions)))
                except (KeyError, RuntimeError, StopIteration):
                    pass
        return found

    def _assembled(self, request: ModelRequest) -> ModelRequest:
        """The call, assembled; if that fails (a bug, a broken source, a server that is
        down), assembled again from the conversation alone — still within the budget and
        traced. A call that cannot be budgeted at all is not sent, nor one whose memory
        server refused the key (``AccessDenied``)."""
        try:
            return self.assemble(request)[0]
        except (ContextOverflow, InvalidBudget):
            raise  # the call is not sent: its protected part does not fit
        except AccessDenied:
            raise  # a refused key is a setting to fix, not an outage to ride out without memory
        except Exception as exc:  # memory never costs the call, and never its budget
            why = f"{type(exc).__name__}: {exc}"
            log.error("context assembly with memory failed (%s); assembling from the conversation alone", why)
            return self.assemble(request, memory=False, failure=why)[0]

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        return handler(self._assembled(request))

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        return await handler(await asyncio.to_thread(self._assembled, request))  # store reads off the loop

    # -- after the agent: queue extraction of the run --------------------------------
    def _run_rows(self, state: Any) -> list[dict[str, Any]]:
        """Every user message of this run: the input, messages added while it ran (an
        answer given mid-run) and results of human tools (a clarification), then the
        final reply."""
        turn = list(state.get("archivist_turn") or [])
        messages = state.get("messages", [])
        seen = {m["id"] for m in turn if m.get("id")}
        positions = [i for i, m in enumerate(messages) if getattr(m, "id", None) in seen]
        start = positions[-1] + 1 if positions else len(messages)
        for message in messages[start:]:
            if isinstance(message, HumanMessage) and not _written_by_a_model(message):
                turn.append(_dict(message, "user"))
            elif isinstance(message, ToolMessage) and message.name in self.human_tools and message.status != "error":
                turn.append(_dict(message, "user") | {"metadata": {"origin": "user", "via_tool": message.name}})
        final = next((m for m in reversed(messages) if isinstance(m, AIMessage) and not m.tool_calls), None)
        if final is not None:
            turn.append(_dict(final, "assistant"))
        return turn

    def _scope(self, ident: Caller) -> Any:
        return self.memory.scope(ident.tenant, ident.user, self.agent, ident.project)

    def _submit(self, ident: Caller, rows: list[dict[str, Any]]) -> int:
        try:
            return self.queue.submit(ident.tenant, ident.user, self.agent, ident.thread, rows, project=ident.project)
        except QueueFull as exc:  # backpressure: this turn goes unremembered, the agent goes on
            log.warning("memory update skipped: %s", exc)
        except Exception as exc:  # a store error never fails the agent's turn
            log.error("memory update skipped: %s: %s", type(exc).__name__, exc)
        return 0

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        ident = identity_of(getattr(runtime, "context", None))
        if self.opted_out or ident is None:
            return None
        turn = self._run_rows(state)
        if not any(m["role"] == "user" for m in turn):
            return None
        self._submit(ident, turn)
        if self.summarize_idle_after is not None:
            self._summarize_when_idle(ident, state.get("messages", []))
        return None

    def _summarize_when_idle(self, ident: Caller, messages: list[Any]) -> None:
        """The queue writes this thread's session summary once it has been idle for
        ``summarize_idle_after`` seconds (a later turn postpones it)."""
        rows = [_dict(m, "user" if isinstance(m, HumanMessage) else "assistant") for m in messages
                if (isinstance(m, HumanMessage) and not _written_by_a_model(m))
                or (isinstance(m, AIMessage) and not m.tool_calls)]
        scope = self._scope(ident)
        self.queue.when_idle(ident.tenant, ident.user, self.agent, ident.thread, self.summarize_idle_after,
                             lambda: scope.summarize_session(ident.thread, rows))

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # -- tool calls: the raw result is evidence, the conversation gets a projection --
    def _record_tool(self, request: Any, result: Any) -> Any:
        ident = identity_of(getattr(getattr(request, "runtime", None), "context", None))
        if self.opted_out or ident is None or not isinstance(result, ToolMessage) or self.remote:
            return result  # over a server the result stays whole in the conversation: no evidence store here
        call = request.tool_call
        raw = _text(result)
        evidence_id = f"tool:{ident.thread}:{call.get('id') or result.tool_call_id}"
        record = json.dumps({"tool": call.get("name"), "args": call.get("args"), "status": result.status,
                             "result": raw}, ensure_ascii=False, default=str)
        try:
            self._scope(ident).put_evidence(evidence_id, record, source=f"tool:{call.get('name')}")
        except Exception as exc:  # evidence is best effort; the tool result still goes back
            log.warning("tool result not kept as evidence: %s", exc)
            return result
        result = result.model_copy(update={"additional_kwargs": {**result.additional_kwargs,
                                                                  "evidence_id": evidence_id}})
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
        rows = [_dict(m, "user" if isinstance(m, HumanMessage) else "assistant") for m in messages
                if (isinstance(m, HumanMessage) and not _written_by_a_model(m))
                or (isinstance(m, AIMessage) and not m.tool_calls)]
        return self._submit(ident, rows) if rows else 0

    def end_session(self, context: Any, messages: list[Any], *, summarizer: Any = None) -> Any:
        """At a session's end: a structured session summary (short-term memory), after
        the queued extraction of the thread has run."""
        ident = identity_of(context)
        if self.opted_out or ident is None:
            return None
        if self.remote:
            raise InvalidInput("session summaries are written next to the memory: not through a server yet")
        self.queue.wait_idle()
        return self._scope(ident).summarize_session(ident.thread, messages, summarizer=summarizer)

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
