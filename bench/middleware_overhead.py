"""What ``MemoryMiddleware`` adds to each model call of a LangChain agent, beside
``Assembler.assemble`` alone.

Setup: a 5,000-fact SQLite store (real LoCoMo/MADial text), a conversation of 100
messages (user and assistant turns, tool calls with their results) and ``top_k=100``
memories: 200 candidates per call. Budget 8,000 tokens (default reserve), the real
tokenizer, one middleware reused across calls as an agent does.

Timed, per model call:

* ``Assembler.assemble`` on prefetched candidates (plan, filter, pack, render);
* ``MemoryMiddleware.assemble`` — what ``wrap_model_call`` runs before the model is
  called: memory search, preference and summary reads, assembly, trace written to the
  store, the request rebuilt;
* a whole ``agent.invoke`` (one model call, scripted model) with the middleware minus
  the same invoke without it: the overhead as the agent sees it, hooks included —
  once with extraction deferred (the cost on the calling thread) and once with the
  update queue extracting in the background meanwhile (on two cores, with the GIL,
  background work slows the caller too).

    python bench/middleware_overhead.py [--runs 100]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from assembly_latency import build_history
from search_latency import make_fact, percentiles, shared_dir

from archivist import FixedClock, Memory


def conversation(texts: list[str], n: int) -> list:
    """The conversation ``assembly_latency.py`` assembles, as the agent's LangChain messages."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    out: list = []
    for m in build_history(random.Random(3), texts, n):
        if m["role"] == "tool":
            out.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"], id=m["id"], name="search_logs",
                                   additional_kwargs=m["metadata"]))
        elif m["role"] == "assistant":
            out.append(AIMessage(m["content"], id=m["id"], tool_calls=m.get("tool_calls", [])))
        else:
            out.append(HumanMessage(m["content"], id=m["id"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budget", type=int, default=8000)
    args = ap.parse_args()
    sys.path.insert(0, str(shared_dir() / "bench"))
    import latency_corpus
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRequest
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langgraph.runtime import Runtime

    from archivist.context.assemble import ContextRequest
    from archivist.context.sources import build_sources
    from archivist.integrations.langchain import MemoryContext, MemoryMiddleware

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    texts = latency_corpus.facts(str(shared_dir()), 6000)
    queries = latency_corpus.queries(str(shared_dir()), args.runs)
    clock = FixedClock("2026-06-01T00:00:00Z")
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(Path(tmp) / "a.db", clock=clock)
        scope = mem.scope(user="alice")
        with mem.store.transaction():
            for text in texts[:5000]:
                mem.store.insert_fact(make_fact(scope.identity, text, clock.now()))
        scope.set_preference("language", "English")
        scope.update_profile("work_context", "Backend engineer on the checkout service.")
        history = conversation(texts[5000:], 100)
        system = "You are the on-call assistant. Give advice only; never restart services."
        mw = MemoryMiddleware(mem, budget=args.budget, top_k=100)
        context = MemoryContext(user_id="alice", thread_id="bench")

        def model_request(q: str) -> ModelRequest:
            return ModelRequest(model=Model(messages=iter([])), messages=[*history, HumanMessage(q)],
                                system_message=SystemMessage(system), tools=[],
                                state={"messages": [], "archivist_run": "run-1"}, runtime=Runtime(context=context))

        for q in queries[:10]:  # warm-up: imports, jieba, the page cache, the token-count cache
            mw.assemble(model_request(q))
        per_call, alone, candidates = [], [], []
        asm = scope.assembler()
        for q in queries:
            request = model_request(q)
            t0 = time.perf_counter()
            _, view = mw.assemble(request)
            per_call.append((time.perf_counter() - t0) * 1000)
            candidates.append(sum(1 for e in view.trace.entries if e.section in ("memory", "history")))
            req = ContextRequest(query=q, system=system, history=history, budget=args.budget, memory_k=100)
            fetched = {name: fn() for name, fn in build_sources(scope, req).items()}
            sources = {name: (lambda items=items: [copy.copy(it) for it in items]) for name, items in fetched.items()}
            t0 = time.perf_counter()
            asm.assemble(scope.identity, req, sources)
            alone.append((time.perf_counter() - t0) * 1000)

        def invoke_times(middleware: list) -> list[float]:
            """One agent, built once as an application does, invoked once per query."""
            times = []
            agent = create_agent(Model(messages=itertools.cycle([AIMessage("ok")])), tools=[], middleware=middleware,
                                 context_schema=MemoryContext, system_prompt=system)
            for q in queries:
                t0 = time.perf_counter()
                agent.invoke({"messages": [*history, HumanMessage(q)]}, context=context)
                times.append((time.perf_counter() - t0) * 1000)
            return times

        from archivist.pipeline.queue import UpdateQueue

        quiet = MemoryMiddleware(mem, budget=args.budget, top_k=100, queue=UpdateQueue(mem, debounce=3600,
                                                                                     max_wait=3600))
        invoke_times([quiet])  # warm-up of the agent graph code paths
        with_quiet = invoke_times([quiet])
        mw.queue.run_pending(60)  # what earlier phases queued must not run during the next one
        with_mw = invoke_times([mw])
        mw.queue.run_pending(60)
        without = invoke_times([])
        mw.close()
        quiet.queue.discard_user("default", "alice")
        quiet.close()
        mem.close()

    print(f"candidates per call: median {statistics.median(candidates):.0f} (memories + history messages), "
          f"budget {args.budget}, 5,000 facts in store, {args.runs} calls")
    print()
    print("| what is timed | p50 | p95 |")
    print("|---|---|---|")
    for label, samples in (("Assembler.assemble alone, prefetched candidates", alone),
                           ("MemoryMiddleware per model call (fetch + assemble + trace stored + request rebuilt)",
                            per_call),
                           ("agent.invoke with the middleware, its extraction deferred", with_quiet),
                           ("agent.invoke with the middleware, extraction running in the background", with_mw),
                           ("agent.invoke without it", without)):
        p50, p95 = percentiles(samples)
        print(f"| {label} | {p50:.2f} ms | {p95:.2f} ms |")
    print()
    for label, samples in (("extraction deferred", with_quiet), ("extraction in the background", with_mw)):
        added = statistics.median(samples) - statistics.median(without)
        print(f"added per model call (p50 with − p50 without), {label}: {added:.2f} ms (target ≤ 15 ms)")


if __name__ == "__main__":
    main()
