"""``MemoryMiddleware`` over a server: the same agent, the same behaviour, with the view
assembled by ``POST /context`` and each turn learned by the server's job. Every test
runs embedded and over REST on loopback (a real uvicorn, a real SQLite file)."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain", reason="the langchain extra is not installed")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from test_langchain_agent import SAID, model, run  # noqa: E402
from test_remote_memory import Serving  # noqa: E402

from archivist import AccessDenied, AsyncRemoteMemory, InvalidInput, Memory, RemoteMemory  # noqa: E402
from archivist.integrations.langchain import MemoryContext, MemoryMiddleware  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402


@pytest.fixture(params=["embedded", "remote"])
def setup(request, db_path, clock):
    """(the memory the middleware is given, the embedded store to check what happened)."""
    mem = Memory.open(db_path, clock=clock)
    if request.param == "embedded":
        yield mem, mem
    else:
        key = create_key(mem.store, tenant="default", users=["*"], role="writer")[1]
        serving = Serving(create_app(mem))
        remote = RemoteMemory(serving.url, api_key=key, tenant="default")
        yield remote, mem
        remote.close()
        serving.stop()
    mem.close()


def test_learns_in_one_thread_recalls_in_the_next_and_keeps_the_trace(setup):
    given, mem = setup
    mw = MemoryMiddleware(given, mode="auto")
    agent = create_agent(model(AIMessage("好的。")), tools=[], middleware=[mw], context_schema=MemoryContext,
                         system_prompt="你是助手。")
    run(agent, SAID, thread="t1")
    assert mw.queue.wait_idle(30)
    facts = sorted(f.content for f in mem.scope(user="alice").facts())
    assert facts == ["用户主要做 Python 后端开发。", "用户偏好用中文解释技术问题。"]

    m2 = model(AIMessage("事务是一组操作……"))
    agent2 = create_agent(m2, tools=[], middleware=[mw], context_schema=MemoryContext, system_prompt="你是助手。")
    result = run(agent2, "解释一下数据库事务", thread="t2")
    system = m2.seen[0][0]
    assert system.type == "system" and system.content.startswith("你是助手。")
    assert "用户偏好用中文解释技术问题" in system.content
    assert all("用户偏好用中文解释技术问题" not in str(m.content) for m in result["messages"])
    traces = mem.scope(user="alice").traces(thread_id="t2")
    assert [t["id"] for t in traces] == [mw.last_trace_id] and traces[0]["call_index"] == 0
    assert "selected" in mem.scope(user="alice").why(mw.last_trace_id, "中文")
    assert mw.queue.wait_idle(30)
    assert sorted(f.content for f in mem.scope(user="alice").facts()) == facts  # nothing re-extracted

    m3 = model(AIMessage("Sure."))
    agent3 = create_agent(m3, tools=[], middleware=[mw], context_schema=MemoryContext)
    run(agent3, "What do you know about me?", user="bob", thread="t9")
    assert "中文" not in str(m3.seen[0][0].content)  # another user's memory never reaches the call
    mw.close()


def test_a_tool_exchange_reaches_the_model_whole_under_a_tight_budget(setup):
    given, mem = setup

    @tool
    def lookup(city: str) -> str:
        """Weather of a city."""
        return f"{city}: sunny, 21°C"

    old = [m for i in range(15) for m in (HumanMessage(f"Old question {i} " + "padding " * 60, id=f"h{i}"),
                                           AIMessage(f"Old answer {i}", id=f"a{i}"))]
    call = AIMessage("", tool_calls=[{"name": "lookup", "args": {"city": "Porto"}, "id": "c1", "type": "tool_call"}])
    m = model(call, AIMessage("It is sunny in Porto."))
    mw = MemoryMiddleware(given, mode="auto", budget=1500)
    agent = create_agent(m, tools=[lookup], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [*old, HumanMessage("Weather in Porto?", id="q")]},
                 context=MemoryContext(user_id="alice", thread_id="t-w"))
    second = m.seen[1]  # the call after the tool ran: its call and its result, whole, after the request
    kinds = [type(x).__name__ for x in second]
    assert kinds[-3:] == ["HumanMessage", "AIMessage", "ToolMessage"] and second[-3].content == "Weather in Porto?"
    assert second[-1].content == "Porto: sunny, 21°C" and second[-2].tool_calls[0]["id"] == "c1"
    assert 1 < len(second) < len(old) + 4  # the old history was trimmed to fit
    assert all(isinstance(x, (HumanMessage, AIMessage, ToolMessage)) or x.type == "system" for x in second)
    trace = mem.scope(user="alice").trace(mw.last_trace_id)
    assert trace["total_tokens"] <= 1500 and trace["call_index"] == 1
    mw.close()


def test_tool_mode_searches_with_the_callers_identity_only(setup):
    given, mem = setup
    mem.scope(user="alice").remember("用户偏好用中文解释技术问题。", category="preference")
    mem.scope(user="bob").remember("Bob's secret project is called Falcon.")
    mw = MemoryMiddleware(given, mode="tool")
    call = AIMessage("", tool_calls=[{"name": "memory_search", "args": {"query": "中文 Falcon", "limit": 50,
                                                                       "user_id": "bob"},
                                      "id": "c1", "type": "tool_call"}])
    m = model(call, AIMessage("好的。"))
    agent = create_agent(m, tools=[], middleware=[mw], context_schema=MemoryContext)
    result = run(agent, "用我喜欢的语言回答", thread="t3")
    tool_out = next(x for x in result["messages"] if isinstance(x, ToolMessage))
    assert "用户偏好用中文解释技术问题" in tool_out.content and "Falcon" not in tool_out.content
    assert m.bound[0] == ["memory_search"]  # the model is offered the tool; its user_id argument was ignored
    assert "secret project" not in str(m.seen)  # bob's fact reached no call
    mw.close()


def test_a_server_that_went_away_costs_the_call_nothing(db_path, clock):
    with Memory.open(db_path, clock=clock) as mem:
        key = create_key(mem.store, tenant="default", users=["*"], role="writer")[1]
        serving = Serving(create_app(mem))
        url = serving.url
        serving.stop()
    remote = RemoteMemory(url, api_key=key, tenant="default", retries=0)
    mw = MemoryMiddleware(remote, mode="auto", budget=2000)
    m = model(AIMessage("Hello!"))
    agent = create_agent(m, tools=[], middleware=[mw], context_schema=MemoryContext, system_prompt="Be brief.")
    result = run(agent, "Hi there")
    assert result["messages"][-1].content == "Hello!"
    assert m.seen[0][0].content.startswith("Be brief.") and m.seen[0][-1].content == "Hi there"
    mw.close()
    remote.close()


@pytest.mark.parametrize("users", [None, ["bob"]], ids=["unknown key", "key for another user"])
def test_a_refused_key_stops_the_call_instead_of_dropping_memory(db_path, clock, users):
    with Memory.open(db_path, clock=clock) as mem:
        key = "ak_" + "x" * 40 if users is None else create_key(mem.store, tenant="default", users=users,
                                                                  role="writer")[1]
        serving = Serving(create_app(mem))
        remote = RemoteMemory(serving.url, api_key=key, tenant="default")
        mw = MemoryMiddleware(remote, mode="auto", budget=2000)
        m = model(AIMessage("Hello!"))
        agent = create_agent(m, tools=[], middleware=[mw], context_schema=MemoryContext)
        try:
            with pytest.raises(AccessDenied) as refused:
                run(agent, "Hi there")
            assert refused.value.status == (401 if users is None else 403)
            assert m.seen == []  # no call went out without the memory it was configured with
        finally:
            mw.close()
            remote.close()
            serving.stop()


def test_what_a_server_does_itself_is_refused_up_front(db_path):
    remote = RemoteMemory("http://127.0.0.1:9", api_key="ak_" + "x" * 30, tenant="default")
    for option in ({"extractor": object()}, {"summarize_idle_after": 60.0}):
        with pytest.raises(InvalidInput, match="the server's"):
            MemoryMiddleware(remote, **option)
    with pytest.raises(InvalidInput, match="not AsyncRemoteMemory"):
        MemoryMiddleware(AsyncRemoteMemory("http://127.0.0.1:9", api_key="ak_" + "x" * 30))
    remote.close()


def test_a_turn_sent_while_the_server_is_down_is_learned_when_it_is_back(db_path, clock):
    """Red team: a short outage lost the update for good (one try, then dropped)."""
    import socket
    import threading
    import time

    import uvicorn

    mem = Memory.open(db_path, clock=clock)
    key = create_key(mem.store, tenant="default", users=["*"], role="writer")[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    remote = RemoteMemory(f"http://127.0.0.1:{port}", api_key=key, tenant="default", retries=0)
    mw = MemoryMiddleware(remote, mode="auto")
    mw.queue.backoff = 0.5
    agent = create_agent(model(AIMessage("Noted.")), tools=[], middleware=[mw], context_schema=MemoryContext)
    run(agent, "I live in Oslo.", thread="t-down")  # the server is not there yet
    time.sleep(0.3)
    server = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    try:
        assert mw.queue.wait_idle(30)
        assert any("Oslo" in f.content for f in mem.scope(user="alice").facts())
        assert mw.queue.stats.retries >= 1 and mw.queue.stats.failed_batches == 0
    finally:
        mw.close()
        remote.close()
        server.should_exit = True
        mem.close()


def test_a_nul_in_the_conversation_costs_the_call_nothing(setup):
    given, mem = setup
    mw = MemoryMiddleware(given, mode="auto")
    m = model(AIMessage("Got it."))
    agent = create_agent(m, tools=[], middleware=[mw], context_schema=MemoryContext)
    result = run(agent, "My name is Ada\x00 and I like tea.", thread="t-nul")
    assert result["messages"][-1].content == "Got it."
    trace = mem.scope(user="alice").trace(mw.last_trace_id)  # assembled with memory, not the fallback
    assert not trace.get("failures") and "\x00" not in trace["query"]
    mw.close()


def test_a_long_request_keeps_its_memory_over_a_server(setup):
    given, mem = setup
    mem.scope(user="alice").remember("用户偏好用中文解释技术问题。", category="preference")
    mw = MemoryMiddleware(given, mode="auto", budget=16_000)
    m = model(AIMessage("好的。"))
    agent = create_agent(m, tools=[], middleware=[mw], context_schema=MemoryContext)
    run(agent, "请解释这段日志：" + "checkout timeout after 5s; " * 500, thread="t-long")  # 13,000+ characters
    assert "用户偏好用中文解释技术问题" in m.seen[0][0].content
    mw.close()
