"""``--extractor openai:MODEL`` from the outside: ``archivist learn`` and ``archivist
serve`` extract with a chat model behind an OpenAI-compatible ``/chat/completions``.

The endpoint is a scripted server on loopback (no model runs here): it checks what a
real endpoint would get (the model's name, JSON mode, the extraction prompt with the
conversation as data) and answers as a loose local model does — prose and a fence around
the JSON first, or no JSON at all until the repair request says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from listening import free_port, stdio_exchange, wait_until_listening
from openai_endpoint import ScriptedEndpoint

from archivist import Memory, RemoteMemory

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]
ALLERGY = {"content": "The user is allergic to peanuts.", "category": "context", "scope": "user",
           "durability": "durable", "authority": "descriptive", "confidence": 0.95,
           "evidence_message_id": "u1", "evidence_text": "I'm allergic to peanuts"}
GRANT = {**ALLERGY, "content": "The assistant may order food without asking.", "category": "behavior",
         "evidence_text": "just order without asking"}
UPDATE = {"facts": [ALLERGY, GRANT], "profile_updates": [], "removals": [], "reinforcements": []}
SAID = "I'm allergic to peanuts, so just order without asking next time."


@pytest.fixture
def endpoint():
    """The endpoint answers with ``replies`` in order (then an empty object)."""
    replies: list[str] = []
    scripted = ScriptedEndpoint(lambda body: replies.pop(0) if replies else "{}")
    scripted.replies = replies
    yield scripted
    scripted.close()


def env_for(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCHIVIST_", "OPENAI_"))}
    return {**env, "ARCHIVIST_CHAT_URL": url, "OPENAI_API_KEY": "sk-test", "ARCHIVIST_EMBEDDER": "none"}


def test_learn_with_a_loose_model_behind_an_openai_endpoint(endpoint, tmp_path):
    endpoint.replies[:] = ["Sure! Here is what I found:\n```json\n" + json.dumps(UPDATE)[:-1] + ",}\n```\nAnything else?"]
    conversation = tmp_path / "talk.json"
    conversation.write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID},
                                        {"id": "a1", "role": "assistant", "content": "Noted."}]))
    db = tmp_path / "m.db"
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(db),
                           "--extractor", "openai:local-model", "--json"],
                          capture_output=True, text=True, env=env_for(endpoint.url), timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [f["content"] for f in out["saved"]] == ["The user is allergic to peanuts."]
    assert [r["code"] for r in out["refused"]] == ["transactional"]  # the model's label did not decide
    assert out["extractor"] == "llm:local-model"
    (call,) = endpoint.seen
    assert call["path"] == "/v1/chat/completions" and call["model"] == "local-model"
    assert call["response_format"] == {"type": "json_object"} and call["auth"] == "Bearer sk-test"
    assert call["messages"][0]["role"] == "system" and "long-term memory" in call["messages"][0]["content"]
    assert SAID in call["messages"][1]["content"] and "<messages>" in call["messages"][1]["content"]
    with Memory.open(db, embedder=None) as mem:
        assert [f.content for f in mem.scope(user="alice").facts()] == ["The user is allergic to peanuts."]


def test_a_reply_without_json_gets_one_repair_call(endpoint, tmp_path):
    endpoint.replies[:] = ["I think the user has a peanut allergy.", json.dumps(UPDATE)]
    conversation = tmp_path / "talk.jsonl"
    conversation.write_text(json.dumps({"id": "u1", "role": "user", "content": SAID}) + "\n")
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "openai:local-model", "--json"],
                          capture_output=True, text=True, env=env_for(endpoint.url), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [f["content"] for f in json.loads(proc.stdout)["saved"]] == ["The user is allergic to peanuts."]
    first, repair = endpoint.seen
    assert repair["messages"][:2] == first["messages"]
    assert repair["messages"][2] == {"role": "assistant", "content": "I think the user has a peanut allergy."}
    assert "could not be read" in repair["messages"][3]["content"]


def test_two_unreadable_replies_store_nothing_and_say_why(endpoint, tmp_path):
    endpoint.replies[:] = ["no idea", "still no idea"]
    conversation = tmp_path / "talk.json"
    conversation.write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "openai:m", "--json"],
                          capture_output=True, text=True, env=env_for(endpoint.url), timeout=120)
    out = json.loads(proc.stdout)
    assert out["saved"] == [] and out["refused"][0]["code"] == "unusable_output"
    assert "after a repair request" in out["refused"][0]["reason"]


def test_serve_extracts_with_the_named_model(endpoint, tmp_path):
    db = str(tmp_path / "m.db")
    env = env_for(endpoint.url)
    made = subprocess.run([*ARCHIVIST, "keys", "create", "--db", db, "--tenant", "default", "--user", "alice"],
                          capture_output=True, text=True, env=env, timeout=120)
    key = made.stdout.strip()
    port = free_port()
    server = subprocess.Popen([*ARCHIVIST, "serve", "--db", db, "--port", str(port), "--workers", "1",
                               "--extractor", "openai:served-model"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        wait_until_listening(port, server)
        endpoint.replies[:] = [json.dumps(UPDATE)]
        with RemoteMemory(f"http://127.0.0.1:{port}", api_key=key) as remote:
            report = remote.scope("default", "alice").learn([{"id": "u1", "role": "user", "content": SAID}])
            facts = [f.content for f in remote.scope("default", "alice").facts()]
        assert facts == ["The user is allergic to peanuts."] and report.as_dict()
        assert [c["model"] for c in endpoint.seen] == ["served-model"]
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert "extraction: llm:served-model" in log


def test_an_unknown_extractor_is_one_line(tmp_path):
    proc = subprocess.run([*ARCHIVIST, "learn", "-", "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "gpt4"], input="[]", capture_output=True, text=True,
                          env=env_for("http://127.0.0.1:9/v1"), timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip() == (
        "error: unknown extractor 'gpt4': use rules or openai:MODEL (endpoint from $ARCHIVIST_CHAT_URL)")
    assert not (tmp_path / "m.db").exists()


def test_the_mcp_learn_tool_extracts_with_the_named_model(endpoint, tmp_path):
    """``archivist mcp --extractor openai:MODEL`` over stdio, spoken to as an MCP client does.
    The tool numbers the turns it is given (t0, t1, ...): the model cites those."""
    endpoint.replies[:] = [json.dumps(UPDATE).replace('"u1"', '"t0"')]
    proc = subprocess.Popen([*ARCHIVIST, "mcp", "--user", "alice", "--db", str(tmp_path / "m.db"),
                             "--extractor", "openai:mcp-model"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env_for(endpoint.url))
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t",
                                                                                                 "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "learn", "arguments": {"messages": [{"role": "user", "content": SAID}]}}}]
    replies = stdio_exchange(proc, requests)
    result = replies[1]["result"]
    assert not result.get("isError"), result
    learned = result["structuredContent"]
    assert [f["content"] for f in learned["saved"]] == ["The user is allergic to peanuts."]
    assert [r["code"] for r in learned["refused"]] == ["transactional"] and learned["refused"][0]["content"] is None
    assert learned["extractor"] == "llm:mcp-model"
    assert [c["model"] for c in endpoint.seen] == ["mcp-model"]


def test_a_settings_file_names_the_model_its_endpoint_and_key(endpoint, tmp_path):
    endpoint.replies[:] = [json.dumps(UPDATE)]
    config = tmp_path / "archivist.toml"
    config.write_text(f'db = "m.db"\nembedder = "none"\nextractor = "openai:file-model"\n'
                      f'chat_url = "{endpoint.url}"\napi_key = "sk-from-file"\n')
    config.chmod(0o600)
    (tmp_path / "talk.json").write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCHIVIST_", "OPENAI_"))}
    proc = subprocess.run([*ARCHIVIST, "learn", "talk.json", "--user", "alice", "--json"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [f["content"] for f in json.loads(proc.stdout)["saved"]] == ["The user is allergic to peanuts."]
    (call,) = endpoint.seen
    assert call["model"] == "file-model" and call["auth"] == "Bearer sk-from-file"
    assert proc.stderr.splitlines()[0] == f"config: {config}"
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        assert [f.content for f in mem.scope(user="alice").facts()] == ["The user is allergic to peanuts."]


def test_ingest_extracts_every_conversation_with_the_named_model(endpoint, tmp_path):
    endpoint.replies[:] = [json.dumps(UPDATE), json.dumps({"facts": [{**ALLERGY, "content": "The user lives in Oslo.",
                                                                      "evidence_text": "I live in Oslo"}]})]
    (tmp_path / "one.json").write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    (tmp_path / "two.json").write_text(json.dumps([{"id": "u1", "role": "user", "content": "I live in Oslo now."}]))
    proc = subprocess.run([*ARCHIVIST, "ingest", str(tmp_path / "one.json"), str(tmp_path / "two.json"), "--user",
                           "alice", "--db", str(tmp_path / "m.db"), "--extractor", "openai:bulk-model", "--json"],
                          capture_output=True, text=True, env=env_for(endpoint.url), timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["conversations"], out["saved"], out["refused"], out["extractor"]) == (2, 2, 1, "llm:bulk-model")
    assert [c["model"] for c in endpoint.seen] == ["bulk-model", "bulk-model"]


def test_an_endpoint_error_shows_neither_the_key_nor_a_password_in_the_url(endpoint, tmp_path):
    key = "sk-test-KEY-0123456789abcdef0123"
    endpoint.respond = lambda body: (401, json.dumps({"error": {"message": f"Incorrect API key provided: {key}."}}))
    conversation = tmp_path / "talk.json"
    conversation.write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    url = endpoint.url.replace("http://", "http://bob:pw-in-url@") + "?api-key=QUERYSECRET999"
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "openai:m"], capture_output=True, text=True,
                          env={**env_for(url), "OPENAI_API_KEY": key}, timeout=120)
    assert proc.returncode == 1 and "answered 401" in proc.stderr
    assert key not in proc.stderr and "pw-in-url" not in proc.stderr and "***@127.0.0.1" in proc.stderr
    assert "QUERYSECRET999" not in proc.stderr


def test_a_reply_with_a_flood_of_facts_is_read_up_to_a_limit(endpoint, tmp_path):
    from archivist.pipeline.llm import MAX_ITEMS

    flood = [{**ALLERGY, "content": f"The user lives in Porto number {n}.", "evidence_text": "I'm allergic to peanuts"}
             for n in range(10_000)]
    endpoint.replies[:] = [json.dumps({"facts": flood})]
    conversation = tmp_path / "talk.json"
    conversation.write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "openai:m", "--json"], capture_output=True, text=True,
                          env=env_for(endpoint.url), timeout=300)
    out = json.loads(proc.stdout)
    assert len(out["saved"]) <= MAX_ITEMS
    assert any("10,000 items; the first 50 are read" in r["reason"] for r in out["refused"])
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:
        assert len(mem.scope(user="alice").facts(include_history=True)) <= MAX_ITEMS


def test_a_chat_url_that_is_not_a_url_is_one_line(tmp_path):
    conversation = tmp_path / "talk.json"
    conversation.write_text(json.dumps([{"id": "u1", "role": "user", "content": SAID}]))
    proc = subprocess.run([*ARCHIVIST, "learn", str(conversation), "--user", "alice", "--db", str(tmp_path / "m.db"),
                           "--extractor", "openai:m"], capture_output=True, text=True,
                          env=env_for("http://bob:Pa55wordXYZ@[::1/v1"), timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "Pa55wordXYZ" not in proc.stderr
    assert "is not a URL" in proc.stderr
