"""Every public method of the store contract, called directly, with the same answers on
every backend: the rows the shared store writes and reads back, keyed the same way.
(The other specs reach the store through :class:`~archivist.memory.Memory`;
``tests/test_conformance.py`` checks that the specs together call every method.)"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from ...clock import parse_time
from ...errors import StaleWrite
from ...index.signatures import Signatures
from ...model import (
    AuditEntry,
    Category,
    Evidence,
    Identity,
    Preference,
    ProfileSection,
    ProfileSentence,
    SessionSummary,
    Status,
    TaskState,
    content_hash,
)
from .backends import T0

__all__ = [
    "test_embedding_cache_and_forgetting_one_fact",
    "test_fact_rows_read_back_by_every_filter",
    "test_gate_signatures_find_what_the_gate_compares",
    "test_ingest_jobs_are_rows_every_process_sees",
    "test_keys_users_and_what_an_export_lists",
    "test_langgraph_items_expire_touch_and_list",
    "test_lifecycle_rows",
    "test_preferences_tasks_and_traces_are_versioned_and_scoped",
    "test_profile_and_audit_rows",
    "test_row_security_admits_only_the_rows_of_the_statements_access",
]

AT = parse_time(T0)
ALICE = Identity("t1", "alice", "coder")
ALICE_APOLLO = Identity("t1", "alice", "coder", "apollo")


def test_fact_rows_read_back_by_every_filter(backend):
    with backend.memory() as mem:
        s = mem.scope("t1", "alice", "coder")
        old = s.remember("The user's editor is Vim.", key="editor")
        new = s.remember("The user's editor is Helix.", key="editor")
        store = mem.store
        assert [f.content for f in store.list_facts(ALICE, key="editor")] == ["The user's editor is Helix."]
        assert [f.id for f in store.list_facts(ALICE, key="editor", statuses=())] == [new.id, old.id]
        assert store.successor(ALICE, old.id).id == new.id and store.successor(ALICE, new.id) is None
        assert [f.id for f in store.key_history(ALICE, "editor")] == [old.id, new.id]
        assert [f.id for f in store.history(ALICE, old.id)] == [old.id, new.id]
        assert [f.id for f in store.find_by_hash(ALICE, content_hash(new.content))] == [new.id]
        assert store.find_by_hash(ALICE, content_hash(old.content)) == []  # history rows are not duplicates
        assert {f.id for f in store.facts_as_of(ALICE, AT + timedelta(days=1))} == {new.id}
        assert store.facts_as_of(ALICE, AT - timedelta(days=1)) == []
        assert store.list_facts(ALICE, category=Category.PREFERENCE) == [] or all(
            f.category is Category.PREFERENCE for f in store.list_facts(ALICE, category=Category.PREFERENCE))
        assert store.list_facts(ALICE, message_ids=[]) == [] and store.list_facts(ALICE, thread_id="none") == []
        assert len(store.list_facts(ALICE, statuses=(Status.COMMITTED, Status.SUPERSEDED), limit=1)) == 1
        assert store.fact_ids_present([old.id, new.id, "no-such-id"]) == {old.id, new.id}
        (hit,) = store.keyword_search(ALICE, ["helix"], limit=5, live_at=AT)
        assert hit.fact.id == new.id and hit.relevance > 0
        assert store.keyword_search(Identity("t1", "bob", "coder"), ["helix"], limit=5, live_at=AT) == []


def test_gate_signatures_find_what_the_gate_compares(backend):
    """The write gate's duplicates and contradictions come from an index of signatures
    (:mod:`archivist.index.signatures`): the same look-ups on every backend, scoped,
    live rows only, episodes never."""
    with backend.memory() as mem:
        s = mem.scope("t1", "alice", "coder")
        tea = s.remember("The user drinks green tea every morning.")
        coffee = s.remember("The user likes coffee.")
        s.learn([{"role": "user", "content": "The user likes coffee.", "id": "m1"}], thread_id="t")
        mem.scope("t1", "bob", "coder").remember("The user likes coffee.")
        apollo = mem.scope("t1", "alice", "coder", "apollo")
        apollo.remember("This repo uses green tea every morning as its release name.")
        store = mem.store
        again = Signatures.of("the user drinks GREEN tea, every morning")
        assert [f.id for f in store.find_by_signatures(ALICE, text=[again.text], live_at=AT)] == [tea.id]
        restated = Signatures.of("The user drinks the green tea every morning!")  # an article more
        assert [f.id for f in store.find_by_signatures(ALICE, meaning=[restated.meaning], live_at=AT)] == [tea.id]
        negated = Signatures.of("The user doesn't like coffee anymore.")
        assert [f.id for f in store.find_by_signatures(ALICE, core=[negated.core], live_at=AT)] == [coffee.id]
        both = store.find_by_signatures(ALICE, text=[again.text], core=[negated.core], live_at=AT)
        assert {f.id for f in both} == {tea.id, coffee.id}
        assert [f.id for f in both] == [coffee.id, tea.id]  # newest first
        ranked = store.signature_matches(ALICE, text=[again.text], core=[negated.core], live_at=AT)
        assert [(f.id, sig) for _, sig, f in ranked] == [(coffee.id, Signatures.of(coffee.content)),
                                                          (tea.id, Signatures.of(tea.content))]
        assert ranked[0][0] > ranked[1][0]  # seq: the later row
        # a batch's look-up: thousands of keys (past any driver's parameter limit), the same answer
        many = [again.text, *range(1, 3000)], [restated.meaning, *range(1, 3000)], [negated.core, *range(1, 3000)]
        assert [f.id for f in store.find_by_signatures(ALICE, text=many[0], meaning=many[1], core=many[2],
                                                       live_at=AT)] == [coffee.id, tea.id]
        assert store.find_by_signatures(ALICE, core=[negated.core], live_at=AT, statuses=(Status.CANDIDATE,)) == []
        assert store.find_by_signatures(ALICE, live_at=AT) == []
        assert store.find_by_signatures(Identity("t1", "carol", "coder"), text=[again.text], live_at=AT) == []
        s.forget(tea.id)
        assert store.find_by_signatures(ALICE, text=[again.text], live_at=AT) == []


def test_profile_and_audit_rows(backend):
    with backend.memory() as mem:
        store = mem.store
        section = ProfileSection("work", "Works on compilers.", AT, ("m1",), (ProfileSentence("Works on compilers.",
                                                                                              ("f1",)),))
        store.put_profile_section(ALICE, section)
        store.put_profile_section(ALICE, ProfileSection("work", "Works on databases.", AT, ("m2",)))
        profile = store.get_profile(Identity("t1", "alice", "other-agent"))  # the profile is user-global
        assert profile.sections["work"].summary == "Works on databases."
        assert store.get_profile(Identity("t1", "bob", "coder")).sections == {}
        store.record_audit(ALICE, [AuditEntry(AT, "write", "committed", "a reason", "f1", "h1", "the words", "m1"),
                                   AuditEntry(AT, "refuse", "secret", "another", None, None, None, None)])
        log = store.audit_log(ALICE, limit=10)
        assert [(e.action, e.code) for e in log] == [("refuse", "secret"), ("write", "committed")]
        assert log[1].content == "the words" and log[1].at == AT
        assert store.audit_log(Identity("t1", "alice", "other-agent")) == []


def test_preferences_tasks_and_traces_are_versioned_and_scoped(backend):
    with backend.memory() as mem:
        store = mem.store
        stored = store.put_preference(ALICE, Preference("reply_language", "English", True, "user", 0, AT), based_on=0)
        assert stored.version == 1
        with pytest.raises(StaleWrite):
            store.put_preference(ALICE, Preference("reply_language", "French", True, "user", 0, AT), based_on=0)
        store.restore_preference(ALICE, Preference("units", "metric", False, "import", 7, AT, AT + timedelta(days=1)))
        prefs = {p.key: p for p in store.get_preferences(ALICE)}
        assert prefs["reply_language"].value == "English" and prefs["units"].version == 7
        assert prefs["units"].trusted is False and prefs["units"].expires_at == AT + timedelta(days=1)
        task = store.put_task(ALICE, TaskState("t", "ship", ("tests pass",), (), ("docs",), 0, AT), based_on=0)
        assert store.get_task(ALICE, "t") == task and task.version == 1
        with pytest.raises(StaleWrite):
            store.put_task(ALICE, TaskState("t", "other", updated_at=AT), based_on=0)
        assert store.get_task(Identity("t1", "alice", "other-agent"), "t") is None
        store.put_trace(ALICE, "tr-1", AT, {"id": "tr-1", "thread_id": "th", "query": "q"})
        store.put_trace(ALICE, "tr-2", AT + timedelta(seconds=1), {"id": "tr-2", "query": "q2"})
        assert store.get_trace(ALICE, "tr-1")["query"] == "q"
        assert [t["id"] for t in store.list_traces(ALICE)] == ["tr-2", "tr-1"]
        assert [t["id"] for t in store.list_traces(ALICE, thread_id="th")] == ["tr-1"]
        assert store.get_trace(Identity("t1", "bob", "coder"), "tr-1") is None


def test_lifecycle_rows(backend):
    with backend.memory() as mem:
        store = mem.store
        summary = SessionSummary("s1", "th", "m1", "m9", 9, "ship the release", ("tests",), created_at=AT)
        store.put_summary(ALICE, summary)
        assert [x.id for x in store.list_summaries(ALICE)] == ["s1"]
        assert store.list_summaries(ALICE, since=AT) == [] and store.list_summaries(ALICE, since=AT - timedelta(1))
        store.add_tombstone(ALICE, "hash-1", AT)
        store.add_tombstone(ALICE, "hash-1", AT)  # once
        assert store.tombstones(ALICE) == [("hash-1", AT)] and store.is_tombstoned(ALICE, "hash-1")
        many = [f"hash-{n}" for n in range(1200)]  # past one IN list's chunk
        assert store.tombstoned(ALICE, many) == {"hash-1"} and store.tombstoned(ALICE, []) == set()
        assert store.tombstoned(replace(ALICE, user="bob"), many) == set()
        store.lift_tombstone(ALICE, "hash-1")
        assert not store.is_tombstoned(ALICE, "hash-1") and store.tombstones(ALICE) == []
        store.mark_processed(ALICE, "th", ["m1", "m2"])
        store.mark_processed(ALICE, "th", ["m2", "m3"])
        assert sorted(store.processed_messages(ALICE, "th")) == ["m1", "m2", "m3"]
        assert store.last_consolidation(ALICE) is None
        store.record_consolidation(ALICE, "run-1", AT, "explicit", '{"counts": {}}')
        assert store.last_consolidation(ALICE) == AT
        assert store.consolidation_runs(ALICE)[0]["plan"] == {"counts": {}}
        store.add_review_item(ALICE, "r1", "conflict", ["f1", "f2"], "they disagree", AT)
        (item,) = store.review_items(ALICE)
        assert item["fact_ids"] == ["f1", "f2"] and item["status"] == "open"
        assert store.resolve_review_item(ALICE, "r1", AT) and not store.resolve_review_item(ALICE, "r1", AT)
        assert store.review_items(ALICE) == [] and store.review_items(ALICE, status="resolved")[0]["id"] == "r1"
        # filtered by kind and by a fact the item names: exactly, whatever the id holds (LIKE's % _ and !)
        for item_id, kind, ids in (("r2", "conflict", ["f_1", "f%2"]), ("r3", "held", ["f_1"]),
                                   ("r4", "conflict", ["fx1", "f12"]), ("r5", "held", ['f"1!', "f1"])):
            store.add_review_item(ALICE, item_id, kind, ids, "why", AT)
        assert [i["id"] for i in store.review_items(ALICE, naming="f_1")] == ["r2", "r3"]
        assert [i["id"] for i in store.review_items(ALICE, kind="conflict", naming="f_1")] == ["r2"]
        assert [i["id"] for i in store.review_items(ALICE, naming="f%2")] == ["r2"]
        assert [i["id"] for i in store.review_items(ALICE, naming='f"1!')] == ["r5"]
        assert [i["id"] for i in store.review_items(ALICE, naming="f1")] == ["r5"]
        assert [i["id"] for i in store.review_items(ALICE, kind="held")] == ["r3", "r5"]
        assert store.review_items(ALICE, naming="f") == [] and store.review_items(Identity("t1", "bob", "coder"), naming="f_1") == []


def test_langgraph_items_expire_touch_and_list(backend):
    with backend.memory() as mem:
        store = mem.store
        store.graph_put("t1", "alice\x1fnotes", "alice", "k1", '{"a": 1}', AT, None)
        store.graph_put("t1", "alice\x1fnotes", "alice", "k2", '{"a": 2}', AT, 10.0,
                        [("a", np.ones(3, dtype=np.float32))])
        store.graph_put("t1", "alice\x1fnotesx", "alice", "k3", '{"a": 3}', AT, None)
        rows = store.graph_items("t1", "alice\x1fnotes", AT)
        assert sorted(r[1] for r in rows) == ["k1", "k2"]  # a prefix is a whole namespace part
        (one,) = store.graph_items("t1", "alice\x1fnotes", AT, key="k2")
        assert one[3] == one[4] == AT.isoformat(timespec="microseconds") and isinstance(one[8], bytes)
        assert store.graph_namespaces("t1", AT) == ["alice\x1fnotes", "alice\x1fnotesx"]
        store.graph_touch("t1", [("alice\x1fnotes", "k2")], AT + timedelta(minutes=5))
        later = AT + timedelta(minutes=12)
        assert [r[1] for r in store.graph_items("t1", "alice\x1fnotes", later, key="k2")] == ["k2"]
        assert store.graph_sweep("t1", AT + timedelta(minutes=16)) == 1
        store.graph_delete("t1", "alice\x1fnotes", "k1")
        assert store.graph_items("t1", "alice\x1fnotes", AT) == [] and store.graph_items("t2", "", AT) == []


def test_keys_users_and_what_an_export_lists(backend):
    with backend.memory() as mem:
        store = mem.store
        store.put_api_key("key-1", "hash-1", "t1", ["alice"], ["*"], "user", "a label", AT)
        assert store.find_api_key("hash-1") == {"id": "key-1", "tenant": "t1", "users": ["alice"], "agents": ["*"],
                                                "role": "user", "label": "a label"}
        store.put_api_key("key-2", "hash-2", "t2", ["*"], ["coder"], "admin", None, AT)
        assert [(k["id"], k["tenant"], k["role"], k["created_at"][:4]) for k in store.api_keys()] == \
            [("key-1", "t1", "user", "2026"), ("key-2", "t2", "admin", "2026")]  # oldest first, never a hash
        assert "hash-1" not in str(store.api_keys())
        assert store.revoke_api_key("key-1", AT) and not store.revoke_api_key("key-1", AT)
        assert store.find_api_key("hash-1") is None and [k["id"] for k in store.api_keys()] == ["key-2"]
        mem.scope("t1", "alice", "coder", project="apollo").remember_many(
            [{"content": "In this project Apollo ships on Friday.", "scope": "project"}])
        store.put_evidence(Evidence("doc", Identity("t1", "dana", "reader"), "tool", "a result", None, AT))
        store.put_preference(Identity("t1", "carol", "coder"), Preference("units", "metric", True, "user", 0, AT),
                             based_on=0)
        # a user with only a preference, or only evidence, has memory: the same on every backend
        assert store.users("t1") == ["alice", "carol", "dana"] and store.users("t2") == []
        assert store.user_agents("t1", "alice") == ["coder"] and store.user_agents("t1", "dana") == ["reader"]
        assert store.user_projects("t1", "alice") == ["apollo"]
        (ev,) = store.list_evidence(Identity("t1", "dana", "reader"))
        assert (ev.id, ev.content, ev.observed_at) == ("doc", "a result", None)
        second = backend.open()  # another handle onto the same database sees the same
        try:
            assert second.users("t1") == store.users("t1")
        finally:
            second.close()


def test_embedding_cache_and_forgetting_one_fact(backend):
    with backend.memory() as mem:
        store = mem.store
        store.cache_embeddings("m", [("h1", np.arange(3, dtype=np.float32))])
        store.cache_embeddings("m", [("h1", np.zeros(3, dtype=np.float32))])  # the first stays
        assert store.cached_embeddings("m", ["h1", "h2"])["h1"].tolist() == [0.0, 1.0, 2.0]
        assert store.cached_embeddings("other", ["h1"]) == {}
        fact = mem.scope("t1", "alice", "coder").remember("The user's locker code word is zebracorn.")
        counts = store.forget_fact(ALICE, [fact.id], at=AT)
        assert counts["facts"] == 1 and counts["tombstones"] == 1 and store.get_fact(ALICE, fact.id) is None
        (job,) = counts.erasure_jobs  # the files are erased off the request path
        assert store.erasure_job(job).state in ("pending", "running", "done")
        assert store.wait_for_erasure(timeout=60)
        done = store.erasure_job(job)
        assert done.state == "done" and done.attempts == 1 and not done.whole_user and done.finished_at is not None
        assert "facts" in done.tables and store.erasure_jobs(open_only=True) == []
        assert [j.id for j in store.erasure_jobs(limit=1)] == [job] and store.erasure_job("no-such-job") is None
        assert store.run_erasure() == []  # nothing open
        assert store.forget_fact(ALICE, [fact.id], at=AT) == {}
        assert store.is_tombstoned(ALICE, content_hash(fact.content))
        assert isinstance(store.purge(), list)


def test_row_security_admits_only_the_rows_of_the_statements_access(backend):
    """A backend that declares ``row_security``: a statement that forgot its filter still
    sees only the rows of the tenant and user it runs as."""
    from ...storage.core.backend import Access

    with backend.memory() as mem:
        store = mem.store
        if "row_security" not in getattr(store, "capabilities", frozenset()):
            pytest.skip(f"{backend.name} does not declare row_security (one file per deployment)")
        mem.scope("t1", "alice", "coder").remember("The user's editor is Helix.")
        mem.scope("t1", "bob", "coder").remember("The user's editor is Vim.")
        mem.scope("t2", "alice", "coder").remember("The user's editor is Emacs.")
        seen = {who: [r[0] for r in store.db.read(who, "SELECT content FROM facts ORDER BY content")]
                for who in (Access("t1", "alice"), Access("t1", "bob"), Access("t2", "alice"), Access("t3", "x"))}
        assert seen[Access("t1", "alice")] == ["The user's editor is Helix."]
        assert seen[Access("t1", "bob")] == ["The user's editor is Vim."]
        assert seen[Access("t2", "alice")] == ["The user's editor is Emacs."]
        assert seen[Access("t3", "x")] == []
        assert len(store.db.read(Access.tenant_wide("t1"), "SELECT content FROM facts")) == 2


def test_ingest_jobs_are_rows_every_process_sees(backend):
    """A server's ingest jobs: queued, started, finished with words forgotten meanwhile
    taken out, cancelled by a forget, pruned, and gone with their user."""
    with backend.memory() as mem:
        store = mem.store
        s = mem.scope("t1", "alice", "coder")
        kept = s.remember("The user's editor is Helix.")
        gone = s.remember("The user's locker code word is zebracorn.")
        store.add_ingest_job(ALICE, "j1", owner="host:1", at=AT)
        store.add_ingest_job(ALICE, "j2", owner="host:1", at=AT)
        store.add_ingest_job(Identity("t1", "bob", "coder"), "j3", owner="host:1", at=AT)
        assert [(j.id, j.status, j.cancelled) for j in store.ingest_jobs("t1", "alice")] == [
            ("j1", "queued", False), ("j2", "queued", False)]
        assert store.start_ingest_job("j1", owner="host:2") and not store.start_ingest_job("j1", owner="host:2")
        assert store.ingest_job("j1").owner == "host:2" and store.ingest_job("no-such-job") is None
        store.forget_fact(ALICE, [gone.id], at=AT)  # while j1 runs
        result = {"report": {"saved": [{"id": kept.id, "content": kept.content},
                                       {"id": gone.id, "content": gone.content}],
                             "duplicates": [{"content": gone.content}]}}
        assert store.finish_ingest_job(ALICE, "j1", status="done", result=result, at=AT + timedelta(seconds=1),
                                       facts={kept.id: [kept.content], gone.id: [gone.content]},
                                       quotes=[gone.content])
        done = store.ingest_job("j1")
        assert done.status == "done" and done.ended_at == AT + timedelta(seconds=1)
        assert "zebracorn" not in str(done.result) and kept.content in str(done.result)
        again = s.remember("The user's favourite tea is sencha.")
        store.finish_ingest_job(ALICE, "j2", status="failed", at=AT, result={"error": "x", "report": {
            "saved": [{"id": again.id, "content": again.content}, {"id": "f-gone", "content": "Tea at five."}]}},
            facts={again.id: [again.content], "f-gone": ["Tea at five."]})
        assert store.ingest_job("j2").status == "failed" and "Tea at five" not in str(store.ingest_job("j2").result)
        assert "sencha" in str(store.ingest_job("j2").result)
        store.forget_fact(ALICE, [again.id], at=AT)  # a forget after the job ended redacts its report
        assert "sencha" not in str(store.ingest_job("j2").result)
        store.add_ingest_job(ALICE, "j4", owner="host:1", at=AT)
        store.add_ingest_job(ALICE, "j5", owner="host:1", at=AT)
        assert store.start_ingest_job("j5", owner="host:1")
        assert store.cancel_ingest_jobs("t1", "alice") == 2
        assert store.ingest_job("j4").status == "cancelled" and not store.start_ingest_job("j4", owner="host:1")
        assert not store.finish_ingest_job(ALICE, "j5", status="done", result={}, at=AT)  # cancelled: not kept
        assert store.ingest_job("j5").status == "running" and store.ingest_job("j5").cancelled
        with pytest.raises(ValueError):
            store.finish_ingest_job(ALICE, "j5", status="running", result={}, at=AT)
        assert store.prune_ingest_jobs(ended_before=AT + timedelta(seconds=1), keep=10) == 1  # j2 ended at AT
        assert store.prune_ingest_jobs(ended_before=AT, keep=0) == 1  # j1, beyond the newest none
        assert {j.id for j in store.ingest_jobs("t1", "alice")} == {"j4", "j5"}
        store.forget_user("t1", "alice")
        assert store.ingest_jobs("t1", "alice") == [] and store.ingest_job("j3").user == "bob"
