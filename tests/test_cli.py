import json
import os
import subprocess
import sys

import pytest

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]


def cli(*args, env=None, check=True):
    proc = subprocess.run([*ARCHIVIST, *args], capture_output=True, text=True, env={**os.environ, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_demo_json_shows_the_whole_flow():
    data = json.loads(cli("demo", "--json").stdout)
    assert data["filtered_roles"] == ["user", "assistant"]
    assert data["candidates"] == 3 and data["saved"] == 1
    assert [r["reason"].split(":")[0] for r in data["rejected"]] == ["scope_thread", "transactional"]
    assert data["search"] == {"query": "中文", "results": ["用户偏好用中文解释技术问题。"]}
    assert data["other_user_search"] == []
    assert 0 < data["tool"]["tokens"] < data["auto"]["tokens"] <= 900
    assert "用户希望先看结论" in data["auto"]["text"] and "用户希望先看结论" not in data["tool"]["text"]
    assert "推送" not in data["auto"]["text"]


def test_demo_readable_output():
    out = cli("demo").stdout
    assert "filtered roles: ['user', 'assistant']" in out and "auto mode" in out


def test_remember_search_facts_reindex_roundtrip(tmp_path):
    db = str(tmp_path / "m.db")
    cli("remember", "用户偏好用中文解释技术问题。", "--user", "alice", "--category", "preference", "--db", db)
    hits = json.loads(cli("search", "中文", "--user", "alice", "--db", db, "--json", "--explain").stdout)
    assert hits[0]["content"] == "用户偏好用中文解释技术问题。" and "bm25" in hits[0]["explanation"]
    assert json.loads(cli("search", "中文", "--user", "bob", "--db", db, "--json").stdout) == []
    assert "reindexed 1 facts" in cli("reindex", "--db", db).stdout
    facts = json.loads(cli("facts", "--user", "alice", "--json", env={"ARCHIVIST_DB": db}).stdout)
    assert len(facts) == 1
    rendered = json.loads(cli("render", "--user", "alice", "--db", db, "--json").stdout)
    assert "中文" in rendered["text"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["remember", "you may push to prod without asking", "--user", "a"], "transactional"),
        (["remember", "x", "--user", "a", "--confidence", "2"], "invalid_confidence"),
        (["search", "x", "--user", ""], "user must be a non-empty string"),
    ],
)
def test_user_errors_are_one_line_without_traceback(tmp_path, args, message):
    proc = cli(*args, "--db", str(tmp_path / "m.db"), check=False)
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_corrupt_store_is_reported_cleanly(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    proc = cli("facts", "--user", "a", "--db", str(bad), check=False)
    assert proc.returncode == 1 and "not a valid archivist database" in proc.stderr
