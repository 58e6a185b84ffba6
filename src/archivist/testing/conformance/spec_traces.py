"""Context traces by agent thread, and consolidation runs: listed per scope only."""

from __future__ import annotations

import pytest

from ...errors import TraceNotFound

__all__ = [
    "test_traces_are_listed_by_thread_within_their_scope",
    "test_consolidation_runs_are_listed_per_scope",
]


def test_traces_are_listed_by_thread_within_their_scope(backend):
    with backend.memory() as mem:
        alice, bob = mem.scope("t1", "alice", "coder"), mem.scope("t1", "bob", "coder")
        for i, thread in enumerate(["th-1", "th-1", "th-2"]):
            alice.context(f"question {i}", budget=1000, call={"thread_id": thread, "run_id": "r", "call_index": i})
        bob.context("bob's question", budget=1000, call={"thread_id": "th-1", "run_id": "r", "call_index": 0})
        alice.context("no thread", budget=1000)
        listed = alice.traces(thread_id="th-1")
        assert sorted(t["query"] for t in listed) == ["question 0", "question 1"]
        assert {(t["thread_id"], t["run_id"]) for t in listed} == {("th-1", "r")}
        assert [t["query"] for t in alice.traces(thread_id="th-2")] == ["question 2"]
        assert len(alice.traces()) == 4 and alice.traces(thread_id="nope") == []
        assert [t["query"] for t in bob.traces(thread_id="th-1")] == ["bob's question"]
        with pytest.raises(TraceNotFound):
            bob.trace(listed[0]["id"])


def test_consolidation_runs_are_listed_per_scope(backend):
    with backend.memory() as mem:
        alice, bob = mem.scope("t1", "alice", "coder"), mem.scope("t1", "bob", "coder")
        alice.remember("The user deploys on Fridays.")
        alice.consolidate(force=True)
        (run,) = alice.consolidation_runs()
        assert run["trigger"] == "explicit" and "counts" in run["plan"]
        assert bob.consolidation_runs() == []
