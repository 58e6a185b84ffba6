"""Random interleavings of writes and searches across users and agents never return
another scope's fact (hypothesis state machine on a real SQLite file)."""

import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from archivist import FixedClock, Memory, WriteRejected

USERS = ["alice", "bob", "carol"]
AGENTS = ["default", "coder"]
WORDS = ["coffee", "python", "中文", "数据库", "tea", "deploy", "解释", "garden"]


class IsolationMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.mem = Memory.open(Path(self.tmp.name) / "m.db", clock=FixedClock("2026-01-01T00:00:00Z"))
        self.owner: dict[str, tuple[str, str]] = {}
        self.counter = 0

    def teardown(self):
        self.mem.close()
        self.tmp.cleanup()

    @rule(user=st.sampled_from(USERS), agent=st.sampled_from(AGENTS), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
    def write(self, user, agent, words):
        self.counter += 1
        content = f"{' '.join(words)} note {self.counter}"
        try:
            fact = self.mem.scope(user=user, agent=agent).remember(content)
        except WriteRejected:
            return
        self.owner[fact.id] = (user, agent)

    @rule(user=st.sampled_from(USERS), agent=st.sampled_from(AGENTS), word=st.sampled_from(WORDS))
    def search(self, user, agent, word):
        for hit in self.mem.scope(user=user, agent=agent).search(word, k=10):
            assert self.owner[hit.fact.id] == (user, agent)
            assert hit.fact.identity.user == user and hit.fact.identity.agent == agent

    @rule(user=st.sampled_from(USERS), agent=st.sampled_from(AGENTS))
    def render(self, user, agent):
        for fact in self.mem.scope(user=user, agent=agent).render(budget=4000).included:
            assert self.owner[fact.id] == (user, agent)

    @invariant()
    def listing_is_scoped(self):
        for user in USERS:
            for agent in AGENTS:
                for fact in self.mem.scope(user=user, agent=agent).facts():
                    assert self.owner[fact.id] == (user, agent)


IsolationMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=30, deadline=None)
test_isolation = IsolationMachine.TestCase
