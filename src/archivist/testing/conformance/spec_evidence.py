"""Evidence: ids belong to their (tenant, user), other text under a known id is a new
version, the same text is no change, and an unknown observation time stays unknown."""

from __future__ import annotations

import pytest

from ...errors import EvidenceNotFound
from ...model import Identity

__all__ = [
    "test_the_same_evidence_id_in_two_scopes_is_two_items",
    "test_new_text_under_a_known_id_is_a_new_version",
    "test_observed_at_is_unknown_unless_given",
    "test_session_summaries_with_the_same_message_ids_in_two_tenants",
]


def test_the_same_evidence_id_in_two_scopes_is_two_items(backend):
    with backend.memory() as mem:
        owners = [("t1", "alice"), ("t1", "bob"), ("t2", "alice")]
        for tenant, user in owners:
            mem.scope(tenant, user, "coder").put_evidence("rb-01", f"runbook of {tenant}/{user}")
        for tenant, user in owners:
            found = mem.scope(tenant, user, "coder").get_evidence("rb-01")
            assert found.content == f"runbook of {tenant}/{user}" and found.version == 1
        assert mem.store.get_evidence(Identity("t3", "alice", "coder"), "rb-01") is None
        with pytest.raises(EvidenceNotFound):
            mem.scope("t1", "carol", "coder").get_evidence("rb-01")


def test_new_text_under_a_known_id_is_a_new_version(backend):
    with backend.memory() as mem:
        s = mem.scope("t1", "alice", "coder")
        assert s.put_evidence("rb-01", "step 1: drain").version == 1
        assert s.put_evidence("rb-01", "step 1: drain").version == 1  # the same text: nothing new
        second = s.put_evidence("rb-01", "step 1: drain; step 2: restart")
        assert second.version == 2 and s.get_evidence("rb-01").content.endswith("restart")
        assert s.get_evidence("rb-01", version=1).content == "step 1: drain"
        view = s.context("what does runbook rb-01 say?", evidence=["rb-01"], budget=2000)
        assert '"version": 2' in view.system and "restart" in view.system
        inline = s.context("and now?", evidence=[{"id": "rb-01", "text": "step 3: verify"}], budget=2000)
        assert '"version": 3' in inline.system
        assert s.get_evidence("rb-01").content == "step 3: verify"  # what the view showed is what is kept


def test_observed_at_is_unknown_unless_given(backend):
    with backend.memory() as mem:
        s = mem.scope("t1", "alice", "coder")
        assert s.put_evidence("log-1", "disk full").observed_at is None
        given = s.put_evidence("log-2", "disk ok", observed_at="2026-01-01T08:00:00Z")
        assert given.observed_at.isoformat().startswith("2026-01-01T08:00:00")
        view = s.context("disk?", evidence=["log-1", "log-2"], budget=2000)
        assert '"observed_at": "unknown"' in view.system and "2026-01-01T08:00:00" in view.system


def test_session_summaries_with_the_same_message_ids_in_two_tenants(backend):
    with backend.memory() as mem:
        messages = [{"id": "m1", "role": "user", "content": "Let's plan the migration."},
                    {"id": "m2", "role": "assistant", "content": "First, back up the database."}]
        for tenant in ("t1", "t2"):
            mem.scope(tenant, "alice", "coder").summarize_session("thread-1", messages)
            said = mem.scope(tenant, "alice", "coder").episodes(thread_id="thread-1")
            assert [e.provenance.message_id for e in said] == ["m1", "m2"] and "migration" in said[0].content
