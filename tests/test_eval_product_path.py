"""Recall and question answering measured on the product's path: conversations fed through
`learn` or an agent with MemoryMiddleware, questions answered from what the product keeps."""

import json

import pytest
from openai_endpoint import ScriptedEndpoint

from archivist.cli import app
from archivist.errors import InvalidInput
from archivist.eval.conversations import evaluate_conversations, message_of, sessions_of
from archivist.eval.qa import JUDGE_PROMPT, evaluate_qa, verdict
from archivist.eval.retrieval import Pool, load_pools

ITEMS = [
    ("D1:1", "Caroline", "user", "I went to an LGBTQ support group yesterday, it was powerful.", "session_1"),
    ("D1:2", "Melanie", "assistant", "Wow! I painted a lake sunrise last year.", "session_1"),
    ("D1:3", "Caroline", "user", "I'm researching adoption agencies for my future family.", "session_1"),
    ("D1:4", "Melanie", "assistant", "That's lovely. My kids love the beach; we camp there every summer.", "session_1"),
    ("D2:1", "Melanie", "assistant", "Hey Caroline! How was the pride parade?", "session_2"),
    ("D2:2", "Caroline", "user", "Amazing! I met a counselor who inspired me to study psychology.", "session_2"),
    ("D2:3", "Melanie", "assistant", "I signed up for a pottery class this week.", "session_2"),
]


def pool() -> Pool:
    items = [{"id": i, "text": f'{who} said, "{said}"', "time": "2023-05-08T13:56:00+00:00" if thread == "session_1"
              else "2023-06-09T10:00:00+00:00",
              "meta": {"thread": thread, "speaker": who, "said": said, "role": role}}
             for i, who, role, said, thread in ITEMS]
    queries = [
        {"id": "q1", "text": "What did Caroline research?", "gold": ["D1:3"], "category": "single-hop",
         "answer": "Adoption agencies"},
        {"id": "q2", "text": "What did Melanie paint?", "gold": ["D1:2"], "category": "single-hop",
         "answer": "A lake sunrise"},
        {"id": "q3", "text": "What class did Melanie sign up for?", "gold": ["D2:3"], "category": "temporal",
         "answer": "Pottery"},
        {"id": "q4", "text": "Where does Melanie camp?", "gold": ["D1:4"], "category": "adversarial"},
    ]
    return Pool("conv-test", "en", items, queries)


def test_a_locomo_item_becomes_the_message_a_client_would_send():
    item = {"id": "D1:1", "text": 'A said, "x"', "meta": {"said": "I got a puppy!", "shared": "a photo of a dog",
                                                       "role": "user", "speaker": "A", "thread": "s1"}}
    assert message_of(item) == {"id": "D1:1", "role": "user", "name": "A",
                                "content": "I got a puppy! [shared an image: a photo of a dog]"}
    said = message_of({"id": "m2", "text": "嗯嗯。", "time": "2023-04-20T05:37:40+00:00",
                       "meta": {"thread": "t01", "speaker": "assistant"}})
    assert said == {"id": "m2", "role": "assistant", "content": "嗯嗯。",
                    "metadata": {"timestamp": "2023-04-20T05:37:40+00:00"}}
    assert [(t, len(m)) for t, _, m in sessions_of(pool())] == [("session_1", 4), ("session_2", 3)]


@pytest.mark.parametrize("via", ["learn", "agent"])
def test_questions_are_answered_from_what_the_conversation_left(via):
    result = evaluate_conversations([pool()], mode="keyword", via=via, ks=(1, 5))
    assert result.queries == 4 and result.turns == 7
    assert result.episodes >= 6  # every turn, but an opening assistant turn an agent never hears
    assert result.overall["R@5"] == 1.0 and result.ingest_seconds > 0 and result.store_bytes > 0
    assert set(result.by_category) == {"single-hop", "temporal", "adversarial"}


def test_a_conversation_evaluation_refuses_what_it_cannot_run():
    with pytest.raises(InvalidInput):
        evaluate_conversations([pool()], mode="hybrid")  # no embedder
    with pytest.raises(InvalidInput):
        evaluate_conversations([pool()], mode="keyword", via="telepathy")


def test_the_cli_prints_the_product_path_table(tmp_path, capsys):
    path = tmp_path / "pools.jsonl"
    p = pool()
    path.write_text(json.dumps({"pool": p.name, "language": "en", "items": p.items, "queries": p.queries}) + "\n")
    app(["eval", "conversations", str(path), "--mode", "keyword", "--k", "1,5", "--json"], standalone_mode=False)
    out = json.loads(capsys.readouterr().out)
    assert out["via"] == "learn" and out["overall"]["R@5"] == 1.0 and out["episodes"] == 7


# ------------------------------------------------------------------------- QA
ANSWERS = {"research": ("adoption", "adoption agencies"), "paint": ("lake sunrise", "a lake sunrise"),
           "class": ("pottery", "pottery")}


def reader(messages):
    """A scripted chat model that answers only from the view it is given."""
    system, question = messages[0]["content"], messages[-1]["content"]
    for asked, (needle, answer) in ANSWERS.items():
        if asked in question and needle in system:
            return answer
    return "not mentioned"


def judge(messages):
    prompt = messages[0]["content"]
    gold = prompt.split("Gold answer: ")[1].split("\n")[0].lower()
    answer = prompt.split("Answer to grade: ")[1].split("\n")[0].lower()
    return json.dumps({"label": "CORRECT" if gold in answer or answer in gold else "WRONG"})


def test_qa_answers_from_the_view_and_is_judged_per_category(tmp_path):
    result = evaluate_qa([pool()], chat=reader, judge=judge, workdir=tmp_path / "qa", budget=2000)
    assert result.answered == 3 and result.skipped == 1  # the adversarial question has no gold answer
    assert result.accuracy == 1.0 and result.by_category == {"single-hop": 1.0, "temporal": 1.0}
    assert 0 < result.context_tokens["p50"] <= 2000 and result.answer_ms["p95"] >= 0
    rows = [json.loads(x) for x in (tmp_path / "qa" / "answers.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == ["CORRECT"] * 3 and rows[0]["answer"] == "adoption agencies"


def test_qa_resumes_without_asking_again(tmp_path):
    evaluate_qa([pool()], chat=reader, judge=judge, workdir=tmp_path / "qa", budget=2000)

    def never(messages):
        raise AssertionError("every question was already answered")

    again = evaluate_qa([pool()], chat=never, judge=never, workdir=tmp_path / "qa", budget=2000)
    assert again.answered == 3 and again.accuracy == 1.0
    lines = (tmp_path / "qa" / "answers.jsonl").read_text().splitlines()
    (tmp_path / "qa" / "answers.jsonl").write_text("\n".join(lines[:1]) + "\n")  # an interrupted run
    asked = []
    third = evaluate_qa([pool()], chat=lambda m: asked.append(1) or reader(m), judge=judge, workdir=tmp_path / "qa",
                        budget=2000)
    assert len(asked) == 2 and third.answered == 3


def test_a_wrong_answer_is_wrong_and_an_unreadable_verdict_counts_as_wrong(tmp_path):
    result = evaluate_qa([pool()], chat=lambda m: "I don't know", judge=judge, workdir=tmp_path / "qa", budget=2000)
    assert result.accuracy == 0.0
    assert verdict('{"label": "CORRECT", "reason": "same"}') == "CORRECT"
    assert verdict("```json\n{\"label\": \"WRONG\"}\n```") == "WRONG"
    assert verdict("The answer is CORRECT.") == "CORRECT" and verdict("no idea") == "WRONG"
    prompt = JUDGE_PROMPT.format(question="Q?", gold="G", answer="A")
    assert "Question: Q?" in prompt and "Gold answer: G" in prompt and "Answer to grade: A" in prompt


def test_the_qa_cli_talks_to_an_openai_compatible_endpoint(tmp_path, capsys, monkeypatch):
    def respond(body):
        assert body["model"] in ("answerer", "grader")
        return reader(body["messages"]) if body["model"] == "answerer" else judge(body["messages"])

    endpoint = ScriptedEndpoint(respond)
    monkeypatch.setenv("ARCHIVIST_CHAT_URL", endpoint.url)
    path = tmp_path / "pools.jsonl"
    p = pool()
    path.write_text(json.dumps({"pool": p.name, "language": "en", "items": p.items, "queries": p.queries}) + "\n")
    try:
        app(["eval", "qa", str(path), "--chat", "openai:answerer", "--judge", "openai:grader", "--embedder", "none",
             "--workdir", str(tmp_path / "w"), "--budget", "2000", "--json"], standalone_mode=False)
    finally:
        endpoint.close()
    out = json.loads(capsys.readouterr().out)
    assert out["accuracy"] == 1.0 and out["answered"] == 3
    models = [c["model"] for c in endpoint.seen]
    assert models.count("answerer") == 3 and models.count("grader") == 3
    assert {c["path"] for c in endpoint.seen} == {"/v1/chat/completions"}


def test_pool_files_carry_answers_through_the_loader(tmp_path):
    p = pool()
    (pool_file := tmp_path / "p.jsonl").write_text(json.dumps({"pool": "x", "items": p.items, "queries": p.queries}))
    (loaded,) = load_pools(pool_file.read_text().splitlines())
    assert loaded.queries[0]["answer"] == "Adoption agencies"
