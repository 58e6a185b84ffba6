"""Scripted chat models for tests: no network, but the real LangChain call paths."""

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ScriptedToolModel(GenericFakeChatModel):
    """Answers with scripted AIMessages and supports bind_tools, so LangChain's own
    ``with_structured_output`` (function calling) parses its tool calls."""

    seen: list = []
    bound: list = []

    def bind_tools(self, tools, **kwargs):
        self.bound.append([getattr(t, "name", None) or t.get("name") or t.get("title") for t in tools])
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(messages)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def tool_reply(payload, name="memory_update"):
    return AIMessage(content="", tool_calls=[{"name": name, "args": payload, "id": "call-1", "type": "tool_call"}])


def text_model(*replies):
    """A model without tool support that answers with text (what many local models do)."""
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]))


def tool_model(*payloads):
    return ScriptedToolModel(messages=iter([tool_reply(p) for p in payloads]), seen=[], bound=[])


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False)
