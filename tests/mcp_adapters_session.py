"""One agent's session with ``archivist mcp`` through langchain-mcp-adapters (run by
tests/test_mcp_sdk1.py in an environment holding the 1.x MCP SDK the adapters pin).

    python mcp_adapters_session.py stdio ARCHIVIST_EXECUTABLE DB
    python mcp_adapters_session.py http URL KEY

Prints one JSON object: the SDK version, the tools and what each call returned."""

import asyncio
import json
import os
import sys
from importlib.metadata import version

from langchain_mcp_adapters.client import MultiServerMCPClient


def connection(argv: list[str]) -> dict:
    if argv[0] == "stdio":
        return {"transport": "stdio", "command": argv[1], "args": ["mcp", "--user", "ana", "--db", argv[2]],
                "env": {**os.environ, "ARCHIVIST_EMBEDDER": "none"}}
    return {"transport": "streamable_http", "url": argv[1], "headers": {"Authorization": f"Bearer {argv[2]}"}}


async def session(argv: list[str]) -> dict:
    client = MultiServerMCPClient({"archivist": connection(argv)})
    tools = {t.name: t for t in await client.get_tools()}
    out: dict = {"mcp": version("mcp"), "adapters": version("langchain-mcp-adapters"), "tools": sorted(tools)}
    # the way an agent calls them: LangChain tools
    out["remember"] = json.loads((await tools["remember"].ainvoke(
        {"content": "The user's cat is called Miso.", "category": "context"}))[0]["text"])
    out["search"] = json.loads((await tools["search_memory"].ainvoke({"query": "cat"}))[0]["text"])
    # the raw protocol through the adapters' session: schemas and refusals
    async with client.session("archivist") as s:
        listed = (await s.list_tools()).tools
        out["closed_schemas"] = {t.name: t.inputSchema.get("additionalProperties") for t in listed}
        out["read_only"] = {t.name: t.annotations.readOnlyHint for t in listed}
        refused = {}
        for name, args in [("search_memory", {"query": "cat", "limit": -5}),
                           ("search_memory", {"query": "cat", "user": "bob"}),
                           ("remember", {"content": "My password is hunter2-Blue!"})]:
            result = await s.call_tool(name, args)
            refused[f"{name} {sorted(args)}"] = [result.isError, result.content[0].text]
        out["refused"] = refused
        learned = await s.call_tool("learn", {"messages": [{"role": "user", "content": "I work as a nurse."}]})
        out["learned"] = learned.structuredContent
        context = await s.call_tool("get_context", {"query": "What is my cat called?", "budget": 600})
        out["context"] = context.structuredContent
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1:]))))
