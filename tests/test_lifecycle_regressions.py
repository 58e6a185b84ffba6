"""Lifecycle edge cases found in review: scoping of links, stale consolidation plans,
backdated statements, non-UTC times, sidecar copies, queued turns of a forgotten user."""

import io
import json
from datetime import datetime, timedelta, timezone

import pytest
from archivist.testing.embedders import HashEmbedder

from archivist import Memory
from archivist.errors import InvalidInput
from archivist.lifecycle.consolidate import apply_plan
from archivist.lifecycle.transfer import card_text, export_jsonl, import_jsonl, import_markdown
from archivist.model import Status
from archivist.storage.sqlite import SQLiteStore


def test_a_card_cannot_link_to_another_users_fact_and_forgetting_stays_in_scope(mem, tmp_path):
    bob, alice = mem.scope(user="bob"), mem.scope(user="alice")
    secret = bob.remember("Bob's vault is behind the painting.")
    template = alice.remember("The user likes tea.")
    cards = tmp_path / "cards" / "default"
    cards.mkdir(parents=True)
    (cards / "card-1.md").write_text(card_text(template.evolve(id="card-1", supersedes=secret.id)))
    report = import_markdown(mem, tmp_path / "cards", tenant="default", user="alice")
    assert alice.get("card-1").supersedes is None and report.notes
    assert mem.forget_user("default", "bob").counts["facts"] == 1


def test_a_stale_consolidation_plan_never_forks_a_version_chain(alice, clock):
    a = alice.remember("The user works at the Acme office on floor 3.", key="office")
    clock.advance(days=1)
    b = alice.remember("The user works at the Acme office on floor 4.")
    clock.advance(days=1)
    plan = alice.consolidate(dry_run=True, force=True)
    assert [(x.op, x.fact_id, x.keep_id) for x in plan.actions] == [("supersede", a.id, b.id)]
    c = alice.remember("The user works at the Globex office in Lyon.", key="office")  # lands in between
    apply_plan(alice, plan)
    assert plan.skipped == [a.id]
    assert [f.id for f in alice.history(c.id)] == [a.id, c.id] and alice.get(b.id).supersedes is None


def test_folding_keeps_the_original_retirement_time(alice, clock):
    v1 = alice.remember("The user's editor is Helix.", key="editor")
    clock.advance(days=1)
    retired_at = clock.now()
    from archivist.model import new_id

    v2 = v1.evolve(id=new_id(), version=2, supersedes=v1.id, recorded_at=retired_at)
    with alice._store.transaction():
        alice._store.update_fact(v1.retired(Status.SUPERSEDED, retired_at))
        alice._store.insert_fact(v2)
    clock.advance(days=10)
    assert alice.consolidate(force=True).counts() == {"fold": 1}
    assert alice.get(v1.id).status is Status.ARCHIVED and alice.get(v1.id).retired_at == retired_at


def test_backdated_statements_do_not_replace_newer_ones_and_as_of_takes_any_timezone(alice, clock):
    clock.set("2025-06-01T00:00:00Z")
    alice.remember_many([{"content": "The user lives in Ghent.", "key": "city", "created_at": "2025-05-01T00:00:00Z"}])
    old = alice.remember_many([{"content": "The user lives in Paris.", "key": "city",
                                "created_at": "2024-01-01T00:00:00Z"}])
    assert str(old.rejected[0][1]).startswith("older_than_current")
    (ghent,) = alice.key_history("city")
    assert ghent.status is Status.COMMITTED
    utc = datetime(2025, 6, 1, 12, tzinfo=timezone.utc)
    plus2 = utc.astimezone(timezone(timedelta(hours=2)))
    assert [f.id for f in alice.as_of(utc)] == [f.id for f in alice.as_of(plus2)] == [ghent.id]
    assert alice.as_of(datetime(2025, 5, 31, 23, tzinfo=timezone(timedelta(hours=-2)))) == [ghent]  # 01:00Z


def test_imports_refuse_what_the_store_already_holds_and_keep_forgotten_content_out(tmp_path, clock):
    src = Memory.open(tmp_path / "a.db", clock=clock)
    s = src.scope(user="alice")
    s.remember("The user lives in Berlin.", key="city")
    gone = s.remember("The user's old code is 4711.")
    s.set_preference("language", "zh")
    buf = io.StringIO()
    export_jsonl(src, "default", "alice", buf)
    lines = buf.getvalue().splitlines()
    dst = Memory.open(tmp_path / "b.db", clock=clock)
    d = dst.scope(user="alice")
    d.remember("The user lives in Rome.", key="city")
    with pytest.raises(InvalidInput, match="already holds a live fact for key 'city'"):
        import_jsonl(dst, lines, tenant="default")
    d.forget(d.facts()[0].id)
    d.remember(gone.content)
    d.forget(d.facts()[0].id)  # the target forgot this content before
    report = import_jsonl(dst, lines, tenant="default")
    assert any("was forgotten here" in n for n in report.notes)
    assert [f.content for f in d.facts()] == ["The user lives in Berlin."]
    with pytest.raises(InvalidInput, match="preference 'language'"):
        import_jsonl(Memory.open(tmp_path / "b.db", clock=clock), [lines[0]] + [
            json.dumps({**json.loads(line), "id": "other"}) if '"type": "fact"' in line else line
            for line in lines[1:] if '"type": "fact"' not in line], tenant="default")
    bad = [lines[0], json.dumps({**json.loads(next(x for x in lines if '"type": "fact"' in x)), "id": "../../escape"})]
    with pytest.raises(InvalidInput, match="id must be"):
        import_jsonl(Memory.open(tmp_path / "c.db", clock=clock), bad, tenant="default")
    src.close()
    dst.close()


def test_forgetting_purges_a_sidecar_this_process_is_not_using(db_path, clock):
    from archivist.index.vectors import sqlite_vec_available

    if not sqlite_vec_available():
        pytest.skip("apsw and sqlite-vec are not installed (pip install '.[vec]')")
    with_vec = Memory(SQLiteStore(db_path, vector_index="sqlite-vec"), clock=clock, embedder=HashEmbedder())
    fact = with_vec.scope(user="alice").remember("The user's code word is zebracorn.")
    vector = with_vec.embedder.embed_documents([fact.embed_text])[0]
    with_vec.scope(user="alice").search("code word", mode="vector")
    with_vec.close()
    sidecar = str(db_path) + "-vec"
    assert vector.tobytes() in open(sidecar, "rb").read()
    plain = Memory(SQLiteStore(db_path, vector_index="numpy"), clock=clock, embedder=HashEmbedder())
    plain.scope(user="alice").forget(fact.id)
    plain.close()
    data = open(sidecar, "rb").read() + (open(sidecar + "-wal", "rb").read() if
                                         __import__("os").path.exists(sidecar + "-wal") else b"")
    assert vector.tobytes() not in data


def test_forgetting_a_user_discards_their_queued_turns(mem):
    from archivist.pipeline.queue import UpdateQueue

    q = UpdateQueue(mem, debounce=60, max_wait=120)
    q.submit("default", "alice", "default", "t1", [{"id": "u1", "role": "user", "content": "我喜欢爵士乐。"}])
    q.submit("default", "bob", "default", "t1", [{"id": "u1", "role": "user", "content": "我喜欢摇滚乐。"}])
    mem.forget_user("default", "alice")
    assert q.drain()
    assert mem.scope(user="alice").facts() == [] and len(mem.scope(user="bob").facts()) == 1
