"""Forgetting reaches every copy: rows, indexes, caches, audit text, traces and the
bytes of the database file and its WAL; tombstones stop re-extraction."""

import sqlite3
import uuid

import pytest
from conftest import candidate, file_bytes, turn
from archivist.testing.embedders import HashEmbedder

from archivist import Memory
from archivist.errors import FactNotFound
from archivist.pipeline.governance import content_hash
from archivist.storage.sqlite import SQLiteStore




def rows_mentioning(path, needle):
    """(table, column) pairs whose text holds ``needle``, over every table of the file."""
    conn = sqlite3.connect(path)
    found = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for col in [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]:
            try:
                n = conn.execute(f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{col}" AS TEXT), ?) > 0',
                                 (needle,)).fetchone()[0]
            except sqlite3.Error:
                continue
            if n:
                found.append((table, col))
    conn.close()
    return found


@pytest.fixture
def vmem(db_path, clock):
    m = Memory(SQLiteStore(db_path), clock=clock, embedder=HashEmbedder())
    yield m
    m.close()


def test_forgetting_a_fact_leaves_no_trace_in_the_files(vmem, db_path):
    alice = vmem.scope(user="alice")
    marker = f"zebracorn{uuid.uuid4().hex[:12]}"
    alice.remember("The user's dentist is in Ghent.")
    fact = alice.remember_many([{"content": f"The user's locker code word is {marker}.",
                                 "context": f"asked about {marker}"}]).saved[0]
    assert [h.fact.id for h in alice.search(marker, mode="keyword")] == [fact.id]
    view = alice.context(f"Is this right? {fact.content}")  # the trace keeps the query, which quotes the fact
    assert f"code word is {marker}" in view.system and marker.encode() in file_bytes(db_path)
    assert ("audit", "content") in rows_mentioning(db_path, marker)

    receipt = alice.forget(fact.id)

    assert receipt.target == f"fact:{fact.id}"
    counts = receipt.counts
    assert counts["facts"] == 1 and counts["facts_fts"] == 1 and counts["fact_vectors"] == 1
    assert counts["embedding_cache"] == 1 and counts["tombstones"] == 1
    assert counts["audit (text redacted)"] >= 1 and counts["context_traces (redacted)"] == 1
    with pytest.raises(FactNotFound):
        alice.get(fact.id)
    assert alice.search(marker, mode="keyword") == [] and alice.search("locker code word", mode="vector") != []
    assert fact.id not in [h.fact.id for h in alice.search("locker code word", k=10, mode="vector")]
    # the files are erased by the job the receipt names, off the request path
    assert receipt.erasure_jobs and vmem.store.wait_for_erasure(timeout=60)
    assert {vmem.store.erasure_job(j).state for j in receipt.erasure_jobs} == {"done"}
    assert rows_mentioning(db_path, marker) == []
    assert "[forgotten]" in str(alice.trace(view.trace.id))
    assert marker.encode() not in file_bytes(db_path)
    assert marker.encode("utf-16-le") not in file_bytes(db_path)
    assert vmem.store.integrity_check() == "ok"
    assert [f.content for f in alice.facts()] == ["The user's dentist is in Ghent."]


def test_a_tombstone_blocks_re_extraction_until_the_user_says_it_again(alice):
    saved = alice.apply([candidate()], turn()).saved
    alice.forget(saved[0].id)
    again = alice.apply([candidate()], turn())
    assert not again.saved and str(again.rejected[0][1]).startswith("forgotten:")
    assert any(e.code == "forgotten" and e.action == "reject" for e in alice.audit())
    # the user says it again and asks for it to be remembered
    explicit = alice.apply([candidate(explicit=True)], turn("记住：平时请用中文解释技术问题。"))
    assert explicit.saved and explicit.saved[0].content == saved[0].content
    alice.forget(explicit.saved[0].id)
    assert str(alice.apply([candidate()], turn()).rejected[0][1]).startswith("forgotten:")
    # an explicit write by the application (on the user's behalf) also lifts it
    assert alice.remember(saved[0].content).content == saved[0].content
    assert not alice._store.is_tombstoned(alice.identity, content_hash(saved[0].content))


def test_forgetting_all_versions_and_links(alice, clock):
    v1 = alice.remember("The user lives in London.", key="home_city")
    clock.advance(days=1)
    v2 = alice.remember("The user lives in Berlin.", key="home_city")
    receipt = alice.forget(v1.id)
    assert receipt.counts["facts"] == 1 and receipt.counts["facts (links cleared)"] == 1
    assert [f.id for f in alice.key_history("home_city")] == [v2.id]
    assert alice.get(v2.id).supersedes is None
    clock.advance(days=1)
    v3 = alice.remember("The user lives in Porto.", key="home_city")
    receipt = alice.forget(v3.id, all_versions=True)
    assert receipt.counts["facts"] == 2 and alice.key_history("home_city") == []


def test_forgetting_a_user_removes_every_row_and_every_byte(db_path, clock):
    mem = Memory(SQLiteStore(db_path), clock=clock, embedder=HashEmbedder())
    marker = f"quokkamarker{uuid.uuid4().hex[:10]}"
    for user in ("alice", "bob"):
        for agent in ("default", "coder"):
            s = mem.scope(user=user, agent=agent)
            s.remember(f"{user} note {marker if user == 'alice' else 'plain'} for {agent}")
            s.apply([candidate()], turn())
            s.context(f"note {marker}" if user == "alice" else "note")
            if agent == "default":  # preferences are per user, shared by the user's agents
                s.set_preference("language", "zh" if user == "alice" else "en")
            s.put_evidence(f"ev-{user}-{agent}", f"tool output {marker if user == 'alice' else 'plain'}")
            s.save_task("t1", f"goal {marker if user == 'alice' else 'plain'}")
            s.update_profile("work_context", f"works on {marker if user == 'alice' else 'plain'}")
    assert marker.encode() in file_bytes(db_path)

    receipt = mem.forget_user("default", "alice")

    counts = receipt.counts
    assert receipt.target == "user:default/alice"
    # 2 facts and 2 episodes (the turn's user and assistant messages) for each of the two agents
    assert counts["facts"] == 8 and counts["scopes"] == 2 and counts["preferences"] == 1
    assert counts["evidence"] == 2 and counts["context_traces"] == 2 and counts["profile_sections"] == 1
    assert counts["task_states"] == 2 and counts["audit"] >= 4 and counts["fact_vectors"] == 8
    conn = sqlite3.connect(db_path)
    for table in [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
        if "user_id" in cols:
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE user_id = 'alice'").fetchone()[0] == 0, table
    conn.close()
    (job,) = receipt.erasure_jobs
    assert mem.store.wait_for_erasure(timeout=60) and mem.store.erasure_job(job).whole_user
    assert rows_mentioning(db_path, marker) == []
    assert marker.encode() not in file_bytes(db_path)
    bob = mem.scope(user="bob")
    assert len(bob.facts()) == 2 and bob.search("plain") and bob.preferences()[0].value == "en"
    assert mem.scope(user="alice").facts() == [] and mem.scope(user="alice").search("note") == []
    assert mem.store.integrity_check() == "ok"
    mem.close()


def test_session_summary_links_the_session_and_goes_stale_when_a_cited_fact_is_forgotten(alice):
    messages = [
        {"id": "u1", "role": "user", "content": "Please migrate the billing service to Postgres 16. We decided to keep the old schema."},
        {"id": "a1", "role": "assistant", "content": "I created the migration script. Next I will run it on staging."},
        {"id": "t1", "role": "tool", "tool_call_id": "call-1", "content": "ERROR: relation \"invoices\" does not exist"},
        {"id": "u2", "role": "user", "content": "We still need to check the invoices table. Can you look at it?"},
    ]
    fact = alice.apply([candidate(evidence_message_id="u1", evidence_text="migrate the billing service",
                                  content="The user's team runs a billing service.", key="service",
                                  category="context")], messages, thread_id="th-1").saved[0]
    summary = alice.summarize_session("th-1", messages)
    assert summary.goal == "Please migrate the billing service to Postgres 16."
    assert summary.done == ("I created the migration script.",)
    assert summary.decisions == ("We decided to keep the old schema.",)
    assert summary.errors == ('call-1: ERROR: relation "invoices" does not exist',)
    assert "We still need to check the invoices table." in summary.open_items
    assert summary.next_step == "Next I will run it on staging."
    assert (summary.first_message_id, summary.last_message_id, summary.message_count) == ("u1", "u2", 4)
    assert summary.cited_fact_ids == (fact.id,)
    said = alice.episodes(thread_id="th-1")  # the transcript, kept as episodes (tool turns are not what was said)
    assert summary.evidence_id is None and [e.provenance.message_id for e in said] == ["u1", "a1", "u2"]
    assert "invoices" in said[-1].content and said[0].role == "user" and said[1].role == "assistant"
    assert [f.id for f in alice.facts()] == [fact.id]  # a summary never adds facts

    receipt = alice.forget(fact.id)
    assert receipt.counts["session_summaries (marked stale)"] == 1
    (stale,) = alice.summaries()
    assert stale.stale and fact.id in stale.stale_reason
    assert not any("migrate the billing service" in e.content for e in alice.episodes(thread_id="th-1"))


def test_forgetting_a_fact_takes_its_sentence_out_of_the_profile(store_target, clock):
    """The offline extractor writes profile sections as the sentences of its facts:
    forgetting one fact leaves the section's other sentences and no word of the forgotten
    one, in the profile and in every later view."""
    mem = Memory.open(store_target, clock=clock)
    s = mem.scope(user="alice")
    report = s.learn([{"id": "u1", "role": "user", "content": "我住在杭州西湖区文三路。"},
                      {"id": "u2", "role": "user", "content": "我养了一只猫叫咪咪。"}])
    home = next(f for f in report.saved if f.provenance.message_id == "u1")
    before = " ".join(sec.summary for sec in s.profile().sections.values())
    assert "文三路" in before and "咪咪" in before
    receipt = s.forget(home.id)
    after = " ".join(sec.summary for sec in s.profile().sections.values())
    assert "文三路" not in after and "咪咪" in after
    assert receipt.counts["profile_sections (sentence removed)"] >= 1
    assert "文三路" not in s.context("我住在哪里？").system and "文三路" not in s.render().text
    mem.close()
