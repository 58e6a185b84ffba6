"""Project memory: project facts live under their project and are recalled only there;
user facts are seen in every project; a scope without a project sees no project fact.
Checked on both backends, through keyword, vector and hybrid search, render, context,
key updates, forgetting, the REST API (X-Project) and the MCP server (--project)."""

from __future__ import annotations

import asyncio

import pytest

from archivist import FactNotFound, Memory
from archivist.testing.embedders import HashEmbedder

REPO_FACT = "这个项目的部署脚本在 scripts/deploy.sh"
USER_FACT = "用户偏好用中文解释技术问题。"


def said(text: str, mid: str = "u1") -> list[dict]:
    return [{"id": mid, "role": "user", "content": text}]


def fact(content: str, quote: str, **over) -> dict:
    return {"content": content, "category": "context", "scope": "user", "durability": "durable",
            "authority": "descriptive", "confidence": 0.9, "evidence_message_id": "u1", "evidence_text": quote,
            **over}


@pytest.fixture
def memory(store_target, clock):
    with Memory.open(store_target, clock=clock, embedder=HashEmbedder()) as mem:
        yield mem


def test_project_facts_stay_in_their_project_on_every_read_path(memory):
    a = memory.scope(user="alice", project="repo-a")
    b = memory.scope(user="alice", project="repo-b")
    plain = memory.scope(user="alice")
    # the extractor said scope=user; the gate sees "这个项目" and files it under the project
    report = a.apply([fact(REPO_FACT + "。", REPO_FACT)], said("记住：" + REPO_FACT))
    assert [f.scope.value for f in report.saved] == ["project"]
    assert report.saved[0].identity.project == "repo-a"
    user = plain.remember(USER_FACT, category="preference")
    assert user.identity.project is None
    for scope, expected in ((a, {REPO_FACT + "。", USER_FACT}), (b, {USER_FACT}), (plain, {USER_FACT})):
        assert {f.content for f in scope.facts()} == expected
        for mode in ("keyword", "vector", "hybrid"):
            found = {h.fact.content for h in scope.search("部署脚本 scripts deploy 中文", k=10, mode=mode)}
            assert found <= expected and (REPO_FACT + "。" in found) == (REPO_FACT + "。" in expected), (mode, found)
        text = scope.render().text
        assert ("deploy.sh" in text) == (scope is a)
        view = scope.context("部署脚本在哪里？", budget=3000, reserve=200, persist=False)
        assert ("deploy.sh" in "\n".join(m["content"] for m in view.to_messages())) == (scope is a)
    project_id = report.saved[0].id
    with pytest.raises(FactNotFound):
        b.get(project_id)
    with pytest.raises(FactNotFound):
        b.forget(project_id)
    assert a.get(project_id).content == REPO_FACT + "。"


def test_a_project_statement_without_a_project_is_not_stored_as_a_user_fact(memory):
    plain = memory.scope(user="alice")
    report = plain.apply([fact("用户的部署脚本在 scripts/deploy.sh。", REPO_FACT)], said("记住：" + REPO_FACT))
    assert [why.code for _, why in report.rejected] == ["scope_project"]
    report = plain.apply([fact("This repo uses Poetry for packaging.", "this repo uses Poetry")],
                         said("FYI this repo uses Poetry, not pip."))
    assert [why.code for _, why in report.rejected] == ["scope_project"]
    assert plain.facts(include_candidates=True) == []


def test_the_same_key_holds_one_value_per_project(memory):
    a = memory.scope(user="alice", project="repo-a")
    b = memory.scope(user="alice", project="repo-b")
    quote_a, quote_b = "这个项目用 Python 3.11", "这个项目用 Python 3.12"
    first = a.apply([fact("这个项目用 Python 3.11。", quote_a, key="python_version")], said(quote_a)).saved[0]
    other = b.apply([fact("这个项目用 Python 3.12。", quote_b, key="python_version")], said(quote_b)).saved[0]
    assert first.key == other.key == "python_version"
    newer = a.apply([fact("这个项目现在用 Python 3.13。", "这个项目现在用 Python 3.13", key="python_version")],
                    said("这个项目现在用 Python 3.13", "u1"))
    assert [f.id for f in newer.superseded] == [first.id]
    assert [f.content for f in b.facts()] == ["这个项目用 Python 3.12。"]
    assert [f.content for f in a.facts()] == ["这个项目现在用 Python 3.13。"]


def test_rest_api_reads_the_project_from_x_project(tmp_path, clock):
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from fastapi.testclient import TestClient

    from archivist.server.app import create_app
    from archivist.server.keys import create_key

    with Memory.open(tmp_path / "m.db", clock=clock) as mem:
        _, secret = create_key(mem.store, tenant="acme", users=["alice"], role="writer")
        mem.scope("acme", "alice", project="repo-a").apply([fact(REPO_FACT + "。", REPO_FACT)],
                                                           said("记住：" + REPO_FACT))
        client = TestClient(create_app(mem))
        auth = {"Authorization": f"Bearer {secret}"}
        in_a = client.post("/v1/users/alice/search", json={"query": "部署脚本"}, headers={**auth, "X-Project": "repo-a"})
        in_b = client.post("/v1/users/alice/search", json={"query": "部署脚本"}, headers={**auth, "X-Project": "repo-b"})
        none = client.post("/v1/users/alice/search", json={"query": "部署脚本"}, headers=auth)
        assert [h["fact"]["project"] for h in in_a.json()] == ["repo-a"]
        assert in_b.json() == [] and none.json() == []
        bad = client.post("/v1/users/alice/search", json={"query": "x"}, headers={**auth, "X-Project": "../etc"})
        assert bad.status_code == 422


def test_mcp_server_serves_one_project(tmp_path, clock):
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from archivist.mcp_server import build_server

    with Memory.open(tmp_path / "m.db", clock=clock) as mem:
        mem.scope(user="alice", project="repo-a").apply([fact(REPO_FACT + "。", REPO_FACT)], said("记住：" + REPO_FACT))
        for project, expected in (("repo-a", True), ("repo-b", False), (None, False)):
            server = build_server(mem, user="alice", project=project)
            result = asyncio.run(server.call_tool("search_memory", {"query": "部署脚本"}))
            text = "".join(getattr(block, "text", "") for block in result.content)
            assert ("deploy.sh" in text) == expected, (project, text)
