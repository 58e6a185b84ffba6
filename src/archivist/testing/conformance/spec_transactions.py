"""Transactions: all or nothing; nested blocks join the outer one; versioned writes
based on a stale version are refused and change nothing."""

from __future__ import annotations

import pytest

from ...errors import StaleWrite
from ...model import AuditEntry

__all__ = [
    "test_an_error_inside_a_transaction_rolls_everything_back",
    "test_nested_transactions_join_the_outer_one",
    "test_a_failed_batch_leaves_no_partial_write",
    "test_stale_versioned_writes_are_rejected",
]


class Boom(Exception):
    pass


def test_an_error_inside_a_transaction_rolls_everything_back(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        with pytest.raises(Boom):
            with mem.store.transaction():
                s.remember("The user lives in Paris.", key="home_city")
                s.set_preference("language", "fr")
                mem.store.record_audit(s.identity, [AuditEntry(mem.clock.now(), "note", "test", "inside")])
                raise Boom
        assert s.facts(include_candidates=True, include_history=True) == []
        assert s.preferences() == [] and s.search("Paris") == []
        assert all(e.reason != "inside" for e in s.audit())
        s.remember("The user lives in Ghent.", key="home_city")  # the store is usable afterwards
        assert len(s.facts()) == 1


def test_nested_transactions_join_the_outer_one(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        with pytest.raises(Boom):
            with mem.store.transaction():
                with mem.store.transaction():
                    s.remember("Inner write.")
                assert len(s.facts()) == 1  # visible inside the outer transaction
                raise Boom
        assert s.facts() == []


def test_a_failed_batch_leaves_no_partial_write(backend, monkeypatch):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        real = mem.store.record_audit

        def failing(identity, entries):
            real(identity, entries)
            raise Boom("disk full")

        monkeypatch.setattr(mem.store, "record_audit", failing)
        with pytest.raises(Boom):
            s.remember_many([{"content": "First fact of the batch."}, {"content": "Second fact of the batch."}])
        monkeypatch.undo()
        assert s.facts() == [] and s.search("batch") == [] and s.audit() == []


def test_stale_versioned_writes_are_rejected(backend):
    with backend.memory() as mem:
        s = mem.scope(user="alice")
        first = s.set_preference("language", "zh")
        s.set_preference("language", "en", based_on=first.version)
        with pytest.raises(StaleWrite):
            s.set_preference("language", "fr", based_on=first.version)
        with pytest.raises(StaleWrite):
            s.set_preference("timezone", "UTC", based_on=3)
        assert [(p.key, p.value, p.version) for p in s.preferences()] == [("language", "en", 2)]
        task = s.save_task("t", "fix checkout")
        s.save_task("t", "fix checkout", done=["repro"], based_on=task.version)
        with pytest.raises(StaleWrite):
            s.save_task("t", "fix checkout", done=["other"], based_on=task.version)
        assert s.task("t").done == ("repro",)
