"""A stateful property test of the public API against a small reference model.

Hypothesis drives random remember / supersede / search / render / forget / expire /
consolidate / reindex steps over 5 users x 2 agents on a real SQLite file (with a
vector index, so hybrid search runs too). The model predicts which facts are live in
each scope; after every step the store must agree with it exactly."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import torture
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from archivist import FixedClock, Memory
from archivist.errors import FactNotFound
from archivist.storage.sqlite import SQLiteStore
from archivist.testing.embedders import HashEmbedder

USERS = ["ana", "bo", "chen", "dara", "eli"]
AGENTS = ["default", "coder"]
SCOPES = [(u, a) for u in USERS for a in AGENTS]
# Words of statements, never an order ("deploy X" alone is an imperative the gate holds, which
# this model of the store does not predict: the gate's own cases live in tests/cases/).
WORDS = ["coffee", "python", "中文", "数据库", "tea", "deployment", "解释", "garden", "部署", "review"]
KEYS = ["home_city", "editor"]
T0 = "2026-01-01T00:00:00+00:00"

STEPS = {"remember": 0, "supersede": 0, "search": 0, "render": 0, "forget": 0, "cross-scope forget": 0,
         "expire": 0, "consolidate": 0, "reindex": 0}


def nonce(n: int) -> str:
    """A word no other fact holds (letters only, so the tokenizer keeps it whole)."""
    letters = ""
    n += 26 * 27
    while n:
        n, r = divmod(n, 26)
        letters = "abcdefghijklmnopqrstuvwxyz"[r] + letters
    return "zq" + letters


@dataclass
class Expected:
    id: str
    scope: tuple[str, str]
    nonce: str
    key: str | None
    valid_until: object
    live: bool = True  # not superseded, forgotten or retired by consolidation
    forgotten: bool = False


class MemoryModel(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.clock = FixedClock(T0)
        self.mem = Memory(SQLiteStore(Path(self.tmp.name) / "m.db"), clock=self.clock, embedder=HashEmbedder())
        self.facts: dict[str, Expected] = {}
        self.n = 0

    def teardown(self):
        self.mem.close()
        self.tmp.cleanup()

    # -- what the model says ------------------------------------------------------
    def visible(self, scope) -> set[str]:
        now = self.clock.now()
        return {f.id for f in self.facts.values()
                if f.scope == scope and f.live and (f.valid_until is None or f.valid_until > now)}

    def scope(self, scope):
        return self.mem.scope(user=scope[0], agent=scope[1])

    # -- rules ----------------------------------------------------------------------
    # writes are three rules (plain, keyed, expiring) so that programs are mostly writes
    @rule(scope=st.sampled_from(SCOPES), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
    def remember_plain(self, scope, words):
        self.write(scope, words, None, None)

    @rule(scope=st.sampled_from(SCOPES), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
          key=st.sampled_from(KEYS))
    def remember_keyed(self, scope, words, key):
        self.write(scope, words, key, None)

    @rule(scope=st.sampled_from(SCOPES), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
          key=st.none() | st.sampled_from(KEYS), ttl=st.integers(1, 30))
    def remember_expiring(self, scope, words, key, ttl):
        self.write(scope, words, key, ttl)

    def write(self, scope, words, key, ttl):
        self.n += 1
        word = nonce(self.n)
        until = self.clock.now() + timedelta(days=ttl) if ttl else None
        before = {f.id for f in self.facts.values() if f.scope == scope and f.key == key and f.live} if key else set()
        # a plain English statement: nonsense words alone read as no language the gate knows (held)
        fact = self.scope(scope).remember(f"I keep a note about {' '.join(words)} that is called {word}, and it is "
                                          f"number {self.n}.", key=key, valid_until=until)
        assert fact.id not in self.facts, "distinct content must never be merged into another fact"
        assert fact.identity.user == scope[0] and fact.identity.agent == scope[1]
        STEPS["supersede" if before else "remember"] += 1
        for old in before:  # a new version of a key retires the one before it
            self.facts[old].live = False
        if before:
            assert fact.supersedes in before
        self.facts[fact.id] = Expected(fact.id, scope, word, key, until)

    @rule(scope=st.sampled_from(SCOPES), pick=st.integers(0, 10_000), mode=st.sampled_from(["keyword", "hybrid"]))
    def search(self, scope, pick, mode):
        STEPS["search"] += 1
        if not self.facts:
            return
        target = list(self.facts.values())[pick % len(self.facts)]
        hits = self.scope(scope).search(target.nonce, k=5, mode=mode)
        visible = self.visible(scope)
        assert {h.fact.id for h in hits} <= visible, "a search returned a fact the scope must not see"
        expected_hit = target.id in visible
        if mode == "keyword":
            assert [h.fact.id for h in hits] == ([target.id] if expected_hit else [])
        elif expected_hit:
            assert target.id in {h.fact.id for h in hits}

    @rule(scope=st.sampled_from(SCOPES))
    def render(self, scope):
        STEPS["render"] += 1
        block = self.scope(scope).render(budget=6000)
        assert {f.id for f in block.included} <= self.visible(scope)
        for f in block.included:
            assert f.valid_until is None or f.valid_until > self.clock.now(), "an expired fact was rendered"

    @precondition(lambda self: any(not f.forgotten for f in self.facts.values()))
    @rule(pick=st.integers(0, 10_000), same_scope=st.booleans(), other=st.sampled_from(SCOPES))
    def forget(self, pick, same_scope, other):
        candidates = [f for f in self.facts.values() if not f.forgotten]
        target = candidates[pick % len(candidates)]
        if not same_scope and other != target.scope:
            STEPS["cross-scope forget"] += 1
            with pytest.raises(FactNotFound):
                self.scope(other).forget(target.id)
            self.scope(target.scope).get(target.id)  # still there for its owner
            return
        STEPS["forget"] += 1
        receipt = self.scope(target.scope).forget(target.id)
        assert receipt.counts.get("facts") == 1
        target.live, target.forgotten = False, True
        with pytest.raises(FactNotFound):
            self.scope(target.scope).get(target.id)
        assert self.scope(target.scope).search(target.nonce, mode="keyword") == []

    @rule(days=st.integers(1, 20))
    def expire(self, days):
        STEPS["expire"] += 1
        self.clock.advance(days=days)

    @rule(scope=st.sampled_from(SCOPES))
    def consolidate(self, scope):
        STEPS["consolidate"] += 1
        plan = self.scope(scope).consolidate(force=True)
        skipped = set(plan.skipped)
        for action in plan.actions:
            if action.fact_id in skipped or action.op == "review":
                continue
            assert action.fact_id in self.facts and self.facts[action.fact_id].scope == scope
            assert action.op != "expire" or not (action.fact_id in self.visible(scope)), \
                "consolidation expired a fact whose validity has not ended"
            self.facts[action.fact_id].live = False

    @precondition(lambda self: self.n % 4 == 3)
    @rule()
    def reindex(self):
        STEPS["reindex"] += 1
        probes = [(s, f.nonce) for f in self.facts.values() for s in [f.scope]][-40:]
        before = [[h.fact.id for h in self.scope(s).search(w, k=5, mode="keyword")] for s, w in probes]
        self.mem.reindex()
        after = [[h.fact.id for h in self.scope(s).search(w, k=5, mode="keyword")] for s, w in probes]
        assert after == before, "a rebuilt keyword index answers differently"

    # -- after every step -----------------------------------------------------------
    @invariant()
    def the_store_agrees_with_the_model(self):
        for scope in SCOPES:
            stored = self.scope(scope).facts()
            assert {f.id for f in stored} == self.visible(scope), f"live facts of {scope} differ from the model"
            assert all(f.identity.user == scope[0] and f.identity.agent == scope[1] for f in stored)


EXAMPLES, STEP_COUNT = torture.scale(40, 400), torture.scale(40, 80)


@pytest.mark.torture
def test_public_api_against_a_reference_model():
    report = torture.row(
        "Stateful model of the public API",
        load=f"{EXAMPLES} random programs × up to {STEP_COUNT} steps; 5 users × 2 agents, one SQLite file each",
        faults="cross-scope forget attempts; clock jumps past validity; forced consolidation at any point",
        inputs="remember (keyed and plain, with and without expiry), supersede, keyword and hybrid search, "
               "render, forget, consolidate, reindex",
        checks="after every step: each scope's live facts equal the model's; no hit from another scope; "
               "superseded, forgotten and expired facts never returned or rendered; reindex answers the same")
    for name in STEPS:
        STEPS[name] = 0
    run_state_machine_as_test(MemoryModel, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEP_COUNT, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
    report.measured.append(", ".join(f"{n} {c:,}" for n, c in STEPS.items()))
    assert STEPS["supersede"] and STEPS["forget"] and STEPS["consolidate"] and STEPS["expire"]
