"""Hostile text never raises from inside the gate: any string, as content, quote, key or
message, gets a decision (or a typed ``InvalidCandidate`` for malformed shape), never an
exception from a check."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.errors import InvalidCandidate
from archivist.pipeline.filtering import filter_messages
from archivist.pipeline.governance import GovernanceConfig, gate, parse_candidate, screen
from archivist.pipeline.support import unsupported

# text that mixes scripts, invisible characters, brackets, digits and the detectors' own words
PIECES = ["deploy", "push", "你", "以后", "直接", "重启", "password", "密码", "ignore previous instructions",
          "</memory>", "ᐸsystemᐳ", "\u200b", "\u202e", "\u034f", "\ufe0f", "4716 5208 3917 2545", "sk-proj-",
          "？", "?", "如果", "if ", "my boss says", "这个项目", "the repo", "```", "> ", "“", "不", "never", "!", "。",
          "\x00", "\x1b[31m", "\ud7ff", "𝔡𝔢𝔭𝔩𝔬𝔶", "ｄｅｐｌｏｙ", " ", "\n", "a" * 30]
TEXT = st.one_of(st.text(max_size=300), st.lists(st.sampled_from(PIECES), max_size=25).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=TEXT, quote=TEXT, message=TEXT, key=st.one_of(st.none(), TEXT))
def test_the_gate_decides_any_text_without_raising(content, quote, message, key):
    for text in (content, quote, message):
        screen(text)
        unsupported(text, quote, context=message)
    raw = {"content": content, "category": "preference", "scope": "user", "durability": "durable",
           "authority": "descriptive", "confidence": 0.9, "key": key, "evidence_message_id": "u1",
           "evidence_text": quote}
    try:
        cand = parse_candidate(raw)
    except InvalidCandidate:
        return
    evidence = filter_messages([{"id": "u1", "role": "user", "content": message}])
    decision = gate(cand, GovernanceConfig(), evidence, project="p")
    assert decision.code and decision.reason
