"""The MCP server over stdio: a real subprocess, a real client session."""

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install '.[mcp]')")
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from archivist import Memory  # noqa: E402


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def test_round_trip_over_stdio(tmp_path):
    db = str(tmp_path / "m.db")
    Memory.open(db).scope(user="bob").remember("Bob's secret project is called Falcon.")
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "archivist.cli", "mcp", "--db", db, "--user", "alice"])

    async def run():
        async with Client(params) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            saved = await client.call_tool("remember", {"content": "用户偏好用中文解释技术问题。", "category": "preference"})
            found = await client.call_tool("search_memory", {"query": "中文 Falcon"})
            ctx = await client.call_tool("get_context", {"query": "解释一下事务", "budget": 2000})
            small = await client.call_tool("get_context", {"query": "解释一下事务", "budget": 300})
            sneaky = await client.call_tool("search_memory", {"query": "Falcon", "user": "bob"})
            fact_id = json.loads(text_of(saved))["id"]
            gone = await client.call_tool("forget_fact", {"fact_id": fact_id})
            missing = await client.call_tool("forget_fact", {"fact_id": fact_id})
            return tools, found, ctx, small, sneaky, gone, missing

    tools, found, ctx, small, sneaky, gone, missing = asyncio.run(run())
    assert not small.is_error and "用户偏好用中文解释技术问题" in text_of(small)  # a small budget works by default
    assert tools == ["forget_fact", "get_context", "remember", "search_memory"]
    assert "用户偏好用中文解释技术问题" in text_of(found) and "Falcon" not in text_of(found)
    assert "中文" in text_of(ctx)
    assert "Falcon" not in text_of(sneaky)  # an invented user argument is refused or ignored, never obeyed
    assert json.loads(text_of(gone))["counts"]["facts"] == 1
    assert missing.is_error and "FactNotFound" in text_of(missing)
