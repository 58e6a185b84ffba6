"""A LangChain 1.x agent with archivist memory, across two threads.

Offline by default: a scripted chat model stands in for the LLM and the offline rule
extractor learns from the conversation. With ARCHIVIST_LLM_BASE_URL and
ARCHIVIST_LLM_MODEL (and ARCHIVIST_LLM_API_KEY) set, a real OpenAI-compatible model
(DeepSeek, Qwen, vLLM, Ollama, ...) answers and extracts (needs langchain-openai).

    python examples/langchain_agent.py [--db memory.db] [--mode auto|tool]

It ends by printing the trace of its last model call: every candidate, in or out, and why.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from archivist import Memory
from archivist.integrations.langchain import MemoryContext, MemoryMiddleware
from archivist.pipeline.llm import LLMExtractor, chat_model_from_env


class ScriptedModel(GenericFakeChatModel):
    """Replies in order and remembers what it was shown (no network, no key)."""

    shown: list = []

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.shown.append(messages)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def print_last_trace(scope, thread: str) -> None:
    """What the last model call of a thread was shown and why: its stored trace."""
    trace = scope.traces(limit=1, thread_id=thread)[0]
    print(f"trace of the last model call (thread {trace['thread_id']}, call {trace['call_index']}, "
          f"id {trace['id']}): {trace['total_tokens']} of {trace['available']} tokens")
    for entry in trace["entries"]:
        verdict = "in " if entry["selected"] else "out"
        text = entry.get("excerpt") or entry.get("detail") or ""
        print(f"  {verdict} {entry['section']:<12} {entry['reason']:<14} {entry['tokens']:>4}  {text}")
    print(f"  (archivist trace why {trace['id'][-8:]} \"text\" --user alice --db DB explains any line)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--mode", choices=("auto", "tool"), default="auto")
    args = ap.parse_args()
    if args.db is None:  # a temporary store, removed at the end
        with tempfile.TemporaryDirectory(prefix="archivist-example-") as tmp:
            run(Path(tmp) / "memory.db", args.mode)
    else:
        run(args.db, args.mode)
        print(f"store: {args.db}")


def run(db: Path, mode: str) -> None:
    real = bool(os.environ.get("ARCHIVIST_LLM_BASE_URL") and os.environ.get("ARCHIVIST_LLM_MODEL"))

    memory = Memory.open(db)
    if real:
        llm = chat_model_from_env()
        middleware = MemoryMiddleware(memory, mode=mode, extractor=LLMExtractor(llm))
        models = [llm, llm]
    else:
        middleware = MemoryMiddleware(memory, mode=mode)  # the offline rule extractor
        models = [ScriptedModel(messages=iter([AIMessage("好的，以后我会用中文解释。")]), shown=[]),
                  ScriptedModel(messages=iter([AIMessage("数据库事务是一组要么全部成功、要么全部失败的操作。")]), shown=[])]

    said = "我主要做 Python 后端开发，平时请用中文解释技术问题。"
    agent = create_agent(models[0], tools=[], middleware=[middleware], context_schema=MemoryContext,
                         system_prompt="You are a helpful assistant.")
    agent.invoke({"messages": [HumanMessage(said)]}, context=MemoryContext(user_id="alice", thread_id="thread-1"))
    middleware.queue.wait_idle()
    print(f"thread 1, user said: {said}")
    for fact in memory.scope(user="alice").facts():
        print(f"  remembered: {fact.content}  [{fact.category.value}, from {fact.provenance.extractor}]")

    agent2 = create_agent(models[1], tools=[], middleware=[middleware], context_schema=MemoryContext,
                          system_prompt="You are a helpful assistant.")
    result = agent2.invoke({"messages": [HumanMessage("Explain database transactions.")]},
                           context=MemoryContext(user_id="alice", thread_id="thread-2"))
    print("thread 2, user asked: Explain database transactions.")
    if not real:
        print("  the model's system message for this call:")
        for line in models[1].shown[0][0].content.splitlines():
            print(f"    | {line}")
    print(f"  reply: {result['messages'][-1].content}")
    print_last_trace(memory.scope(user="alice"), "thread-2")
    middleware.close()
    memory.close()


if __name__ == "__main__":
    main()
