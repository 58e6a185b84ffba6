import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from archivist import ChatModelSummarizer, FixedClock, StructuredSummarizer, TiktokenCounter, trim_history
from archivist.context.history import group_units, to_history_message

NOW = FixedClock("2026-01-01T00:00:00Z").now()


@pytest.fixture
def counter():
    return TiktokenCounter()


def convo(n_tool_rounds=6, result_size=300):
    msgs = [{"id": "goal", "role": "user", "content": "Goal: find why checkout times out and propose a fix."}]
    for i in range(n_tool_rounds):
        msgs += [
            {"id": f"a{i}", "role": "assistant", "content": "",
             "tool_calls": [{"name": "query_metrics", "args": {"i": i}, "id": f"c{i}"}]},
            {"id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": f"metrics round {i}: " + "x " * result_size,
             "metadata": {"evidence_id": f"ev-{i}"}},
            {"id": f"u{i}", "role": "user", "content": f"what about round {i}?"},
        ]
    return [to_history_message(m, i) for i, m in enumerate(msgs)]


def total(result, counter):
    return result.tokens


def test_fits_without_changes_when_there_is_room(counter):
    msgs = convo(2, 10)
    result = trim_history(msgs, 10_000, counter=counter, now=NOW)
    assert [m.id for m in result.messages] == [m.id for m in msgs]
    assert result.cleared == [] and result.dropped == [] and result.summary is None


def test_old_tool_results_are_cleared_first_with_their_evidence_id(counter):
    msgs = convo(4, 300)
    full = trim_history(msgs, 10_000, counter=counter, now=NOW).tokens
    result = trim_history(msgs, full - 500, counter=counter, now=NOW)
    assert result.dropped == []
    assert result.cleared[:2] == ["t0", "t1"]
    stub = next(m for m in result.messages if m.id == "t0")
    assert "ev-0" in stub.content and stub.tool_call_id == "c0"
    assert result.tokens <= full - 500


def test_tool_call_and_result_are_never_split(counter):
    msgs = convo(6, 300)
    for budget in range(150, 2500, 97):
        result = trim_history(msgs, budget, counter=counter, now=NOW, summarizer=StructuredSummarizer())
        ids = [m.id for m in result.messages]
        for i in range(6):
            assert (f"a{i}" in ids) == (f"t{i}" in ids), (budget, ids)
            if f"a{i}" in ids:
                assert ids.index(f"t{i}") == ids.index(f"a{i}") + 1


def test_goal_is_kept_and_older_turns_go_with_a_summary_and_flush_first(counter):
    msgs = convo(6, 300)
    flushed = []

    def flush(batch):
        flushed.append([m.id for m in batch])

    result = trim_history(msgs, 260, counter=counter, now=NOW, summarizer=StructuredSummarizer(), flush=flush)
    ids = [m.id for m in result.messages]
    assert ids[0] == "goal" and ids[-1] == "u5"
    assert result.dropped and flushed == [result.dropped]
    s = result.summary
    assert s is not None and (s.first_message_id, s.last_message_id) == (result.dropped[0], result.dropped[-1])
    assert s.summarizer == "structured" and s.version == "1" and s.generated_at == NOW
    assert "user said: what about round 0?" in s.text
    assert result.tokens <= 260


def test_flushed_messages_are_the_originals_not_stubs(counter):
    msgs = convo(5, 300)
    got = []
    trim_history(msgs, 200, counter=counter, now=NOW, flush=lambda b: got.extend(b))
    t0 = next(m for m in got if m.id == "t0")
    assert "metrics round 0" in t0.content


def test_unfinished_tool_calls_are_never_dropped(counter):
    msgs = convo(3, 300)
    msgs.append(to_history_message({"id": "open", "role": "assistant", "content": "",
                                    "tool_calls": [{"name": "restart_check", "args": {}, "id": "c-open"}]}, 99))
    units = group_units(msgs)
    assert units[-1].unfinished
    result = trim_history(msgs, 0, counter=counter, now=NOW, strict=True)
    assert [m.id for m in result.messages] == ["open"]
    relaxed = trim_history(msgs, 0, counter=counter, now=NOW)
    assert [m.id for m in relaxed.messages] == ["open"]  # nothing fits: only the unfinished call stays
    room = trim_history(msgs, 60, counter=counter, now=NOW)
    assert {"goal", "open"} <= {m.id for m in room.messages}  # the goal goes only as a last resort


def test_chat_model_summarizer_with_a_scripted_model(counter):
    model = GenericFakeChatModel(messages=iter([AIMessage("User is chasing checkout timeouts; rounds 0-3 checked.")]))
    msgs = convo(6, 300)
    result = trim_history(msgs, 300, counter=counter, now=NOW, summarizer=ChatModelSummarizer(model))
    assert result.summary.text == "User is chasing checkout timeouts; rounds 0-3 checked."
    assert result.summary.summarizer.startswith("chat_model:")
    assert result.summary.as_dict()["source_range"] == [result.dropped[0], result.dropped[-1]]


def test_history_in_the_assembled_view(alice):
    raw = [{"id": "goal", "role": "user", "content": "Goal: find why checkout times out."}]
    for i in range(16):
        raw += [{"id": f"a{i}", "role": "assistant", "content": "",
                 "tool_calls": [{"name": "q", "args": {}, "id": f"c{i}"}]},
                {"id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": "y " * 200}]
    raw.append({"id": "open", "role": "assistant", "content": "",
                "tool_calls": [{"name": "final_check", "args": {"x": 1}, "id": "c-open"}]})
    flushed = []
    asm = alice.assembler(flush=lambda b: flushed.extend(m.id for m in b))
    view = alice.context("continue", history=raw, budget=700, reserve=100, assembler=asm)
    ids = [m.id for m in view.history]
    assert "open" in ids and "goal" in ids
    assert view.tokens <= 600
    assert flushed and all(i not in ids for i in flushed)
    reasons = {e.id: e.reason for e in view.trace.entries if e.section == "history"}
    assert reasons["open"] == "protected"
    assert "cleared" in reasons.values() and "budget" in reasons.values()
    assert view.trace.summary and view.trace.summary["summarizer"] == "structured"
    assert "<history_summary>" in view.system
