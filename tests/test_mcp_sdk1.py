"""``archivist mcp`` beside langchain-mcp-adapters, which pins the 1.x MCP SDK (``mcp<2``).

``make test`` builds a second environment, ``.venv/mcp1``, holding archivist with the 1.x
SDK and the adapters — what an agent's environment gets when it installs both. There the
server runs on 1.x; the adapters (a 1.x client) also talk to the 2.x server of the main
environment. Each session remembers, searches, assembles a context and is refused in
the same plain words as with the 2.x SDK (tests/test_mcp.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from listening import free_port, wait_until_listening

SDK1 = Path(os.environ.get("ARCHIVIST_MCP1_VENV", Path(sys.prefix) / "mcp1"))
SESSION = Path(__file__).with_name("mcp_adapters_session.py")
KEY = "mcp1-test-key-0123456789abcdef"

if not (SDK1 / "bin" / "python").exists():
    pytest.skip(f"no environment with the 1.x MCP SDK and langchain-mcp-adapters at {SDK1}: `make test` builds it "
                "(or set $ARCHIVIST_MCP1_VENV)", allow_module_level=True)


def run_session(*args: str) -> tuple[dict, str]:
    env = {**os.environ, "ARCHIVIST_EMBEDDER": "none"}
    env.pop("PYTHONPATH", None)  # the other environment imports its own packages
    out = subprocess.run([str(SDK1 / "bin" / "python"), str(SESSION), *args], capture_output=True, text=True,
                         env=env, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout), out.stderr


def check(session: dict, sdk_major: int | None = None) -> None:
    assert session["mcp"].startswith("1.")  # the client side is always the adapters' 1.x SDK
    assert session["tools"] == ["forget_fact", "get_context", "learn", "remember", "search_memory"]
    assert session["remember"]["outcome"] == "stored"
    assert [h["content"] for h in session["search"]["hits"]] == ["The user's cat is called Miso."]
    assert set(session["closed_schemas"].values()) == {False}  # additionalProperties: false on every tool
    assert session["read_only"] == {"remember": False, "search_memory": True, "get_context": True,
                                    "forget_fact": False, "learn": False}
    assert [f["content"] for f in session["learned"]["saved"]] == ["The user works as a nurse."]
    assert session["refused"] == {
        "search_memory ['limit', 'query']": [True, "limit must be a whole number between 1 and 10 (got -5)"],
        "search_memory ['query', 'user']": [True, "search_memory takes no argument 'user' (the served user is "
                                                  "fixed when the server starts); it takes: query, limit"],
        "remember ['content']": [True, "WriteRejected: secret: holds a secret or sensitive identifier (password); "
                                       "never stored"]}
    system = session["context"]["messages"][0]["content"]
    assert "Miso" in system and session["context"]["trace_id"]


def test_sdk1_server_in_the_adapters_environment(tmp_path):
    version = subprocess.run([str(SDK1 / "bin" / "python"), "-c", "import archivist.mcp_server as m, importlib."
                              "metadata as md; print(m.SDK_MAJOR, md.version('mcp'))"],
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert version.stdout.split()[0] == "1", version.stderr[-2000:]
    session, stderr = run_session("stdio", str(SDK1 / "bin" / "archivist"), str(tmp_path / "m.db"))
    check(session)
    # the adapters start the server once per session: each says its store, and nothing per call
    assert set(stderr.strip().splitlines()) == {f"store: {tmp_path / 'm.db'}"}


def test_adapters_reach_the_sdk2_server_of_another_environment(tmp_path):
    session, stderr = run_session("stdio", str(Path(sys.prefix) / "bin" / "archivist"), str(tmp_path / "m.db"))
    check(session)
    assert set(stderr.strip().splitlines()) == {f"store: {tmp_path / 'm.db'}"}


def test_sdk1_server_over_streamable_http_with_the_bearer_key(tmp_path):
    import httpx

    port = free_port()
    env = {**os.environ, "ARCHIVIST_EMBEDDER": "none", "ARCHIVIST_MCP_KEY": KEY, "PYTHONPATH": ""}
    proc = subprocess.Popen([str(SDK1 / "bin" / "archivist"), "mcp", "--user", "ana", "--db", str(tmp_path / "m.db"),
                             "--transport", "streamable-http", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_listening(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        assert httpx.post(url, json={}).status_code == 401  # no key
        rebinding = httpx.post(url, json={}, headers={"Authorization": f"Bearer {KEY}", "Host": "evil.example",
                                                      "Accept": "application/json, text/event-stream"})
        assert rebinding.status_code == 421  # a loopback server refuses another Host, as on 2.x
        session, _ = run_session("http", url, KEY)
        check(session)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert lines[0] == f"store: {tmp_path / 'm.db'}"
    assert not [line for line in lines if "ERROR" in line or "Traceback" in line], stderr[-3000:]
