"""The MCP server over stdio: a real subprocess, a real client session."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install '.[mcp]')")
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, get_default_environment  # noqa: E402

import archivist  # noqa: E402
from archivist import Memory  # noqa: E402


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def test_round_trip_over_stdio(tmp_path):
    db = str(tmp_path / "m.db")
    Memory.open(db).scope(user="bob").remember("Bob's secret project is called Falcon.")
    here = str(Path(archivist.__file__).parents[1])  # the subprocess runs this checkout's archivist
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "archivist.cli", "mcp", "--db", db, "--user", "alice"],
                                   env={**get_default_environment(), "PYTHONPATH": here})

    async def run():
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            saved = await client.call_tool("remember", {"content": "用户偏好用中文解释技术问题。", "category": "preference"})
            again = await client.call_tool("remember", {"content": "用户偏好用中文解释技术问题。", "category": "preference"})
            found = await client.call_tool("search_memory", {"query": "中文 Falcon"})
            ctx = await client.call_tool("get_context", {"query": "解释一下事务", "budget": 2000})
            small = await client.call_tool("get_context", {"query": "解释一下事务", "budget": 200})
            sneaky = await client.call_tool("search_memory", {"query": "Falcon", "user": "bob"})
            clamped = await client.call_tool("search_memory", {"query": "中文", "limit": -5})
            fact_id = saved.structured_content["fact"]["id"]
            gone = await client.call_tool("forget_fact", {"fact_id": fact_id})
            missing = await client.call_tool("forget_fact", {"fact_id": fact_id})
            return tools, saved, again, found, ctx, small, sneaky, clamped, gone, missing

    tools, saved, again, found, ctx, small, sneaky, clamped, gone, missing = asyncio.run(run())
    assert sorted(tools) == ["forget_fact", "get_context", "learn", "remember", "search_memory"]
    assert all(t.output_schema and t.annotations for t in tools.values())
    assert tools["forget_fact"].annotations.destructive_hint and tools["search_memory"].annotations.read_only_hint
    assert saved.structured_content["outcome"] == "stored"
    assert again.structured_content["outcome"] == "duplicate"
    assert again.structured_content["duplicate_of"] == saved.structured_content["fact"]["id"]
    small = small.structured_content  # a small budget works with the default reserve
    assert small["reserve"] == 25 and "用户偏好用中文解释技术问题" in small["messages"][0]["content"]
    assert [h["content"] for h in found.structured_content["hits"]] == ["用户偏好用中文解释技术问题。"]
    assert "中文" in ctx.structured_content["messages"][0]["content"]
    assert sneaky.is_error and "Falcon" not in text_of(sneaky)  # an invented user argument is refused
    assert clamped.is_error and text_of(clamped) == "limit must be a whole number between 1 and 10 (got -5)"
    assert gone.structured_content["counts"]["facts"] == 1
    assert missing.is_error and "FactNotFound" in text_of(missing)


from listening import free_port, stdio_exchange, wait_until_listening

KEY = "mcp-test-key-0123456789abcdef"


@pytest.fixture
def mcp_http(tmp_path, request):
    """``archivist mcp --transport streamable-http`` as a real subprocess; the bearer key
    in the environment, or (param "file") in a --key-file."""
    import os
    import subprocess

    db = str(tmp_path / "m.db")
    Memory.open(db).scope(user="alice").remember("Alice's favourite tea is genmaicha.")
    port = free_port()
    key_args, env = [], {**os.environ, "ARCHIVIST_MCP_KEY": f" {KEY}\n"}  # surrounding whitespace is not the key
    if getattr(request, "param", "env") == "file":
        (tmp_path / "key").write_bytes("\ufeff".encode() + KEY.encode() + b"\r\n")  # a BOM and CRLF from an editor
        key_args, env = ["--key-file", str(tmp_path / "key")], {**os.environ, "ARCHIVIST_MCP_KEY": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "archivist.cli", "mcp", "--db", db, "--user", "alice",
         "--transport", "streamable-http", "--port", str(port), *key_args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until_listening(port, proc, timeout=30)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


@pytest.mark.parametrize("mcp_http", ["env", "file"], indirect=True)
def test_streamable_http_serves_the_official_client_with_the_bearer_key(mcp_http):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {KEY}"}) as http:
            async with Client(streamable_http_client(mcp_http, http_client=http)) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                found = await client.call_tool("search_memory", {"query": "tea"})
                return tools, found

    tools, found = asyncio.run(run())
    assert tools == ["forget_fact", "get_context", "learn", "remember", "search_memory"]
    assert "genmaicha" in found.structured_content["hits"][0]["content"]


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer wrong-key-0123456789abcdef"}, {"Authorization": f"Basic {KEY}"},
    {"Authorization": f"Bearer {KEY[:-1]}"}, {"Authorization": f"Bearer {KEY}x"}, {"X-API-Key": KEY},
], ids=["none", "wrong", "basic scheme", "prefix", "longer", "other header"])
def test_streamable_http_refuses_a_request_without_the_key(mcp_http, headers):
    import httpx

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
    for method in ("POST", "GET", "DELETE"):
        r = httpx.request(method, mcp_http, json=init if method == "POST" else None,
                          headers={**headers, "Accept": "application/json, text/event-stream"})
        assert r.status_code == 401, (method, r.status_code, r.text[:200])
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert "genmaicha" not in r.text


def test_streamable_http_will_not_start_without_a_usable_key(tmp_path):
    import os
    import subprocess

    bad_files = {"bom-then-nothing": "\ufeff".encode() + b"   \n", "two-lines": b"abcdefgh12345678\nsecond-line-here",
                 "nul": b"\0" * 16, "not-utf8": b"\xff\xfe" + b"\x80" * 20, "inner-space": b"abcdefgh 12345678"}
    cases = [("", []), ("short", []), (" " * 16, []), ("abcdefgh\t12345678", []),
             ("", ["--key-file", str(tmp_path / "missing")])]
    for name, content in bad_files.items():
        (tmp_path / name).write_bytes(content)
        cases.append(("", ["--key-file", str(tmp_path / name)]))
    for env_key, extra in cases:
        out = subprocess.run(
            [sys.executable, "-m", "archivist.cli", "mcp", "--db", str(tmp_path / "m.db"), "--user", "alice",
             "--transport", "streamable-http", "--port", str(free_port()), *extra],
            env={**os.environ, "ARCHIVIST_MCP_KEY": env_key}, capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert "key" in (out.stderr + out.stdout).lower()


def _stdio_session(tmp_path):
    """An MCP session over the real process's stdio, by hand: initialize, list the tools,
    a call; stdin closes once the call is answered. Returns (replies, stderr)."""
    env = dict(get_default_environment())
    env.update(PYTHONPATH=str(Path(archivist.__file__).parents[1]), ARCHIVIST_EMBEDDER="none")
    proc = subprocess.Popen([sys.executable, "-m", "archivist.cli", "mcp", "--db", str(tmp_path / "m.db"), "--user",
                             "a"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "search_memory", "arguments": {"query": "tea"}}},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/call",  # refused by the schema
                 "params": {"name": "search_memory", "arguments": {"query": "tea", "limit": -5}}},
                {"jsonrpc": "2.0", "id": 5, "method": "tools/call",  # refused by the write gate
                 "params": {"name": "remember", "arguments": {"content": "My password is hunter2-Blue!"}}}]
    replies = stdio_exchange(proc, requests)
    return replies, proc.stderr.read()


def test_calls_are_not_logged(tmp_path):
    replies, stderr = _stdio_session(tmp_path)
    assert [r.get("id") for r in replies] == [1, 2, 3, 4, 5] and not any("error" in r for r in replies)
    assert [r["result"].get("isError", False) for r in replies[2:]] == [False, True, True]
    assert stderr.strip().splitlines() == [f"store: {tmp_path / 'm.db'}"]  # nothing per call, refused ones too
