"""``archivist ingest`` (many conversations through learn's path) and the settings file
(``archivist.toml``) that serve, mcp, learn and ingest read, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from archivist import Memory

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    """No ARCHIVIST_/OPENAI_ variable of the test run, and no user config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCHIVIST_", "OPENAI_"))}
    return {**env, "ARCHIVIST_EMBEDDER": "none", **extra}


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ARCHIVIST, *args], capture_output=True, text=True, cwd=cwd, env=env or clean_env(),
                          timeout=300)


def facts(db: Path, user: str = "ana") -> list[str]:
    with Memory.open(db, embedder=None, create=False) as mem:
        return sorted(f.content for f in mem.scope(user=user).facts())


def write_conversations(root: Path) -> None:
    (root / "convs").mkdir()
    (root / "convs" / "lyon.json").write_text(json.dumps([
        {"id": "u1", "role": "user", "content": "I moved to Lyon last month and I work as a nurse."},
        {"id": "a1", "role": "assistant", "content": "Nice!"}]))
    (root / "convs" / "many.jsonl").write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in [
        {"thread_id": "kids", "messages": [{"id": "u1", "role": "user", "content": "My daughter is called Ines."}]},
        {"messages": [{"role": "robot", "content": "beep"}]},  # bad: reported, the others learned
        {"messages": [{"id": "u1", "role": "user", "content": "我对花生过敏。"}], "at": "2026-03-01T10:00:00Z"},
        {"messages": [{"id": "u1", "role": "user", "content": "My password is hunter2-Blue!"}]}]) + "\n")
    (root / "convs" / "broken.json").write_text("not json {")
    (root / "convs" / "notes.txt").write_text("not a conversation file: ignored")


def test_ingest_learns_every_conversation_and_reports_the_bad_ones(tmp_path):
    write_conversations(tmp_path)
    proc = run(tmp_path, "ingest", "convs", "--user", "ana", "--db", "m.db", "--json")
    assert proc.returncode == 1  # something failed: said, and the rest learned
    out = json.loads(proc.stdout)
    assert (out["conversations"], out["messages"], out["saved"]) == (4, 5, 4)
    assert out["extractor"] == "rules"
    assert [f["source"] for f in out["failed"]] == [str(Path("convs/broken.json")), str(Path("convs/many.jsonl#2"))]
    assert "hunter2" not in proc.stdout + proc.stderr  # a refused secret is not repeated
    assert facts(tmp_path / "m.db") == ["The user moved to Lyon last month (in November 2026).",
                                        "The user works as a nurse.", "The user's daughter is called Ines.",
                                        "用户对花生过敏。"]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("m.db*"))
    assert b"hunter2" not in stored  # nor kept as an episode
    again = json.loads(run(tmp_path, "ingest", "convs", "--user", "ana", "--db", "m.db", "--json").stdout)
    assert (again["saved"], again["superseded"], again["already_learned"]) == (0, 0, 4)
    assert len(facts(tmp_path / "m.db")) == 4


def test_ingest_prints_a_summary_and_each_failure_on_one_line(tmp_path):
    write_conversations(tmp_path)
    proc = run(tmp_path, "ingest", "convs/lyon.json", "convs/broken.json", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1
    assert proc.stdout.startswith("learned 1 conversations (2 messages, rules): 2 facts saved")
    assert [line for line in proc.stderr.splitlines() if line.startswith("failed:")] == [
        f"failed: {Path('convs/broken.json')}: line 1: not JSON (Expecting value)"]


def test_ingest_again_after_files_that_disagree_writes_nothing(tmp_path):
    """Two files state two home cities: a second run must not replay them (the later
    file's value stays, with no new versions)."""
    (tmp_path / "chats" / "sub").mkdir(parents=True)
    (tmp_path / "chats" / "porto.json").write_text(json.dumps(
        [{"id": "u1", "role": "user", "content": "I live in Porto and I work as a nurse."}]))
    (tmp_path / "chats" / "sub" / "zh.json").write_text(json.dumps(
        [{"id": "u1", "role": "user", "content": "我住在上海，我是一名老师。"}], ensure_ascii=False))
    first = json.loads(run(tmp_path, "ingest", "chats", "--user", "ana", "--db", "m.db", "--json").stdout)
    before = facts(tmp_path / "m.db")
    for _ in range(2):
        again = json.loads(run(tmp_path, "ingest", "chats", "--user", "ana", "--db", "m.db", "--json").stdout)
        assert (again["saved"], again["superseded"], again["already_learned"]) == (0, 0, 2)
    assert facts(tmp_path / "m.db") == before and first["saved"] == 4


def test_two_files_of_one_name_are_two_threads(tmp_path):
    for folder, said in (("jan", "I have a dog called Rex."), ("feb", "I have a cat called Luna.")):
        (tmp_path / "c" / folder).mkdir(parents=True)
        (tmp_path / "c" / folder / "talk.json").write_text(json.dumps(
            [{"id": "u1", "role": "user", "content": said}, {"id": "a1", "role": "assistant", "content": "Cute!"}]))
    run(tmp_path, "ingest", "c", "--user", "ana", "--db", "m.db")
    with Memory.open(tmp_path / "m.db", embedder=None, create=False) as mem:
        said = sorted(e.content for e in mem.scope(user="ana").episodes() if e.role == "user")
    assert said == ["I have a cat called Luna.", "I have a dog called Rex."]


def test_a_bad_line_costs_only_its_own_conversation(tmp_path):
    good = [{"thread_id": f"t{i}", "messages": [{"id": "u1", "role": "user", "content": f"I have {i + 2} cats."}]}
            for i in range(3)]
    lines = [json.dumps(good[0]), json.dumps(good[1]), "not json at all", "[1, 2]", json.dumps(good[2])]
    (tmp_path / "more.jsonl").write_text("\n".join(lines) + "\n")
    proc = run(tmp_path, "ingest", "more.jsonl", "--user", "ana", "--db", "m.db", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["conversations"] == 3
    assert out["failed"] == [{"source": "more.jsonl:3", "error": "not JSON (Expecting value)"},
                             {"source": "more.jsonl#4", "error": 'not a conversation ({"messages": [...]})'}]


def test_a_file_name_cannot_drive_the_terminal(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "\x1b]0;PWNED\x07\x1b[2Jx.json").write_text("not json")
    proc = run(tmp_path, "ingest", "c", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1 and "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "\\x1b]0;PWNED" in proc.stderr


def test_ingest_of_nothing_is_an_error_that_creates_no_store(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = run(tmp_path, "ingest", "empty", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1 and proc.stderr.strip().startswith("error: no conversation files")
    proc = run(tmp_path, "ingest", "nowhere", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1 and proc.stderr.strip() == "error: nowhere: no such file or directory"
    assert not (tmp_path / "m.db").exists()


# ------------------------------------------------------------------ the settings file


def test_a_settings_file_in_the_working_directory_names_the_store_and_embedder(tmp_path):
    (tmp_path / "archivist.toml").write_text('db = "data/m.db"\nembedder = "none"\n')
    env = {k: v for k, v in clean_env().items() if k != "ARCHIVIST_EMBEDDER"}
    proc = run(tmp_path, "remember", "I live in Lyon.", "--user", "ana", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[:2] == [f"config: {tmp_path / 'archivist.toml'}",
                                            f"store: {tmp_path / 'data' / 'm.db'}"]
    with Memory.open(tmp_path / "data" / "m.db", create=False) as mem:  # written keyword-only, as the file said
        assert mem.store.vector_model() is None
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()  # the path is the file's, wherever the command runs from
    proc = run(elsewhere, "--config", str(tmp_path / "archivist.toml"), "facts", "--user", "ana", "--json", env=env)
    assert [f["content"] for f in json.loads(proc.stdout)] == ["I live in Lyon."]


def test_flags_and_the_environment_win_over_the_file(tmp_path):
    (tmp_path / "archivist.toml").write_text('db = "from-file.db"\n')
    run(tmp_path, "remember", "I live in Lyon.", "--user", "ana", "--db", "from-flag.db")
    run(tmp_path, "remember", "I live in Oslo.", "--user", "ana", env=clean_env(ARCHIVIST_DB=str(tmp_path / "env.db")))
    assert facts(tmp_path / "from-flag.db") == ["I live in Lyon."]
    assert facts(tmp_path / "env.db") == ["I live in Oslo."]
    assert not (tmp_path / "from-file.db").exists()
    proc = run(tmp_path, "facts", "--user", "ana", env=clean_env(ARCHIVIST_CONFIG="none"))
    assert "config:" not in proc.stderr  # none: no file read (and the data dir's store is not there)


@pytest.mark.parametrize("text, said", [
    ("bogus = 1\n", "unknown setting 'bogus'; known: db, embedder, extractor, chat_url, embeddings_url, api_key"),
    ("db = \n", "not TOML"),
    ("db = 5\n", "db must be a non-empty string"),
    ('db = "  "\n', "db must be a non-empty string"),
])
def test_a_bad_settings_file_is_one_line_and_nothing_runs(tmp_path, text, said):
    (tmp_path / "archivist.toml").write_text(text)
    proc = run(tmp_path, "remember", "I live in Lyon.", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1 and said in proc.stderr
    assert not (tmp_path / "m.db").exists()


def test_an_api_key_only_in_a_file_no_one_else_can_read(tmp_path):
    config = tmp_path / "archivist.toml"
    config.write_text('api_key = "sk-from-file"\n')
    config.chmod(0o644)
    proc = run(tmp_path, "facts", "--user", "ana", "--db", "m.db")
    assert proc.returncode == 1 and f"chmod 600 {config}" in proc.stderr and "sk-from-file" not in proc.stderr
    proc = run(tmp_path, "--config", str(tmp_path / "missing.toml"), "facts", "--user", "ana")
    assert proc.returncode == 1 and proc.stderr.strip() == f"error: config file {tmp_path / 'missing.toml'}: no such file"


def test_an_empty_variable_is_no_setting_and_older_names_win_over_the_file(tmp_path):
    (tmp_path / "archivist.toml").write_text('db = "from-file.db"\n')
    proc = run(tmp_path, "remember", "I live in Lyon.", "--user", "ana", env=clean_env(ARCHIVIST_DB=""))
    assert proc.returncode == 0 and f"store: {tmp_path / 'from-file.db'}" in proc.stderr
    import subprocess as sp

    config = tmp_path / "archivist.toml"
    config.write_text('chat_url = "http://file.invalid/v1"\napi_key = "sk-file"\n')
    config.chmod(0o600)
    code = ("import os; from archivist.config import apply_config; apply_config(); "
            "print(os.environ['ARCHIVIST_CHAT_URL'] if 'ARCHIVIST_CHAT_URL' in os.environ else '-', "
            "os.environ.get('OPENAI_API_KEY', '-'))")
    older = sp.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                   env=clean_env(ARCHIVIST_LLM_BASE_URL="http://env.invalid/v1", ARCHIVIST_LLM_API_KEY="sk-env"))
    assert older.stdout.split() == ["-", "-"]  # the environment's older names stand


def test_a_config_path_that_is_a_directory_or_not_utf8_is_one_line(tmp_path):
    proc = run(tmp_path, "--config", str(tmp_path), "facts", "--user", "ana")
    assert proc.returncode == 1 and "is a directory" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    (tmp_path / "archivist.toml").write_text('db = "m.db"\n', encoding="utf-16")
    proc = run(tmp_path, "facts", "--user", "ana")
    assert proc.returncode == 1 and proc.stderr.strip().endswith("not UTF-8 text (save it as UTF-8)")


def test_a_settings_name_that_is_not_a_file_stops_the_command(tmp_path):
    (tmp_path / "archivist.toml").mkdir()
    proc = run(tmp_path, "init", env={k: v for k, v in clean_env().items()} | {"HOME": str(tmp_path / "home")})
    assert proc.returncode == 1 and "archivist.toml is not a file" in proc.stderr
    assert not (tmp_path / "home").exists()  # no store made elsewhere
    proc = run(tmp_path, "--config", "/dev/null", "facts", "--user", "ana")
    assert proc.returncode == 1 and "not a regular file" in proc.stderr
