"""End-to-end question answering over what the product keeps: context → answer → judge.

For every question of a pool file (queries with an ``answer``; LoCoMo's adversarial
questions have none and are skipped and counted), the pool's conversation is first fed
through the product (:func:`archivist.eval.conversations.feed`), then:

1. the model view an agent call would get — ``MemoryScope.context(question, budget=…)``:
   profile, preferences, facts and episodes under the budget, in the model's tokens;
2. an answer from a chat model given exactly that view;
3. a verdict from a judge model given the question, the gold answer and the answer:
   ``CORRECT`` when the answer says the same thing as the gold answer (a paraphrase, a
   longer answer that contains it, a date written another way or relative to the
   conversation's time all count), ``WRONG`` otherwise — the protocol used to report
   LLM-judge accuracy on LoCoMo.

Reported: accuracy overall and per category, context tokens per question (mean and
p50), and answer and judge latency (p50, p95). Chat models are anything callable as
``model(messages) -> str`` (OpenAI-style messages); :class:`OpenAICompatibleChat` talks
to any ``/chat/completions`` endpoint. A run is resumable: with a work directory the
ingested store and every verdict are kept there, and a second run answers only what is
missing.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memory import Memory, MemoryScope

from ..clock import FixedClock, parse_time
from ..errors import InvalidInput
from ..pipeline.chat import ChatError, ChatModel, OpenAICompatibleChat, chat_model
from .retrieval import Pool

ANSWER_SYSTEM_NOTE = ("Answer the user's question from the context above only, in a few words: a name, a date, a "
                      "short phrase. Give dates as the conversation gives them. If the context does not say, answer "
                      "\"not mentioned\".")

JUDGE_PROMPT = """You grade an answer against a gold answer for a question about a long conversation.

Question: {question}
Gold answer: {gold}
Answer to grade: {answer}

Label it CORRECT when it says the same thing as the gold answer: a paraphrase, a longer answer
that contains the gold answer's point, a date or time written another way or relative to when
it was said, a different spelling of a name. Label it WRONG when it contradicts the gold answer,
misses its point, or says the information is not available.

Reply with JSON only: {{"label": "CORRECT"}} or {{"label": "WRONG"}}, optionally with "reason"."""

_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")





def verdict(text: str) -> str:
    """``CORRECT`` or ``WRONG`` from a judge's reply (JSON, or a bare word); WRONG when unreadable."""
    try:
        data = json.loads(text.strip().removeprefix("```json").removesuffix("```").strip())
        label = str(data.get("label", "")).upper() if isinstance(data, dict) else ""
        if label in ("CORRECT", "WRONG"):
            return label
    except (ValueError, AttributeError):
        pass
    found = _LABEL.findall(text.upper())
    return found[-1] if found else "WRONG"


@dataclass
class QAResult:
    accuracy: float
    by_category: dict[str, float]
    answered: int
    skipped: int
    context_tokens: dict[str, float]
    answer_ms: dict[str, float]
    judge_ms: dict[str, float]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "by_category": self.by_category, "answered": self.answered,
                "skipped": self.skipped, "context_tokens": self.context_tokens, "answer_ms": self.answer_ms,
                "judge_ms": self.judge_ms}


MAX_QUESTION_CHARS = 10_000  # as searches take them


def pool_keys(pools: Sequence[Pool]) -> list[str]:
    """A stable key per pool: its name, and ``name#2``… for later pools of the same name
    (a run resumed with pools added keeps each pool's store and answers)."""
    seen: dict[str, int] = {}
    keys = []
    for pool in pools:
        seen[pool.name] = seen.get(pool.name, 0) + 1
        keys.append(pool.name if seen[pool.name] == 1 else f"{pool.name}#{seen[pool.name]}")
    return keys


def _scope(mem: Memory, key: str) -> MemoryScope:
    """The scope a pool is fed into: named after its key, whatever the key's characters."""
    return mem.scope(tenant="eval", user="pool-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], agent="eval")


def _answered(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The verdicts a previous run kept, by (pool key, question id); a line that is not one
    is an error naming it (fix or delete the line to go on)."""
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.exists():
        return done
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
            ok = isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("pool"), str) \
                and row.get("label") in ("CORRECT", "WRONG") and isinstance(row.get("context_tokens"), int) \
                and all(isinstance(row.get(k), int | float) for k in ("answer_ms", "judge_ms"))
        except ValueError:
            ok = False
        if not ok:
            raise InvalidInput(f"{path}:{number}: not an answer record (id, pool, label, context_tokens, answer_ms, "
                               "judge_ms); fix or delete the line, or remove the file to ask everything again")
        done[(row["pool"], row["id"])] = row
    return done


def _fed(path: Path) -> set[str]:
    """The pools a previous run fed into the store."""
    if not path.exists():
        return set()
    try:
        fed = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        fed = None
    if not isinstance(fed, list) or not all(isinstance(x, str) for x in fed):
        raise InvalidInput(f"{path} is not a list of pool names; remove the work directory to start again")
    return set(fed)


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"mean": round(statistics.fmean(ordered), 1), "p50": round(statistics.median(ordered), 1),
            "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 1)}


def evaluate_qa(
    pools: Sequence[Pool],
    *,
    chat: ChatModel,
    judge: ChatModel,
    workdir: Path,
    budget: int = 4000,
    embedder: Any = None,
    via: str = "learn",
    progress: Callable[[str, int, int], None] | None = None,
) -> QAResult:
    """Answer and judge every question with a gold answer; resumable in ``workdir``
    (``store.db``, ``fed.json`` naming the pools already fed, ``answers.jsonl``)."""
    from ..memory import Memory
    from .conversations import feed

    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 500:
        raise InvalidInput(f"budget must be a number of tokens ≥ 500, got {budget!r}")
    if workdir.exists() and not workdir.is_dir():
        raise InvalidInput(f"--workdir {workdir} is a file, not a directory")
    workdir.mkdir(parents=True, exist_ok=True)
    answers_path, fed_path = workdir / "answers.jsonl", workdir / "fed.json"
    keys = pool_keys(pools)
    done = _answered(answers_path)
    fed = _fed(fed_path)
    clock = FixedClock("2000-01-01T00:00:00Z")
    wanted = [(n, q) for n, p in enumerate(pools) for q in p.queries if q.get("answer") not in (None, "")]
    skipped = sum(len(p.queries) for p in pools) - len(wanted)
    with Memory.open(workdir / "store.db", clock=clock, embedder=embedder) as mem, \
            answers_path.open("a", encoding="utf-8") as sink:
        for key, pool in zip(keys, pools, strict=True):
            if key not in fed:
                feed(mem, _scope(mem, key), pool, clock, via=via, progress=progress)
                fed.add(key)
                fed_path.write_text(json.dumps(sorted(fed)), encoding="utf-8")
        for i, (n, q) in enumerate(wanted, start=1):
            if progress:
                progress("questions", i, len(wanted))
            if (keys[n], q["id"]) in done:
                continue
            pool = pools[n]
            times = [parse_time(item["time"]) for item in pool.items if item.get("time")]
            clock.set(parse_time(q["time"]) if q.get("time") else (max(times) if times else clock.now()))
            view = _scope(mem, keys[n]).context(q["text"][:MAX_QUESTION_CHARS], budget=budget, persist=False,
                                                persist_evidence=False)
            messages = view.to_messages()
            messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + ANSWER_SYSTEM_NOTE}
            started = time.perf_counter()
            answer = chat(messages)
            answered = time.perf_counter()
            reply = judge([{"role": "user", "content": JUDGE_PROMPT.format(question=q["text"], gold=q["answer"],
                                                                          answer=answer)}])
            judged = time.perf_counter()
            row = {"id": q["id"], "pool": keys[n], "category": q.get("category"), "question": q["text"],
                   "gold": q["answer"], "answer": answer, "label": verdict(reply), "context_tokens": view.tokens,
                   "answer_ms": (answered - started) * 1000, "judge_ms": (judged - answered) * 1000}
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
            done[(keys[n], q["id"])] = row
    rows = [done[(keys[n], q["id"])] for n, q in wanted if (keys[n], q["id"]) in done]
    by_category: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        by_category[str(row.get("category"))].append(row["label"] == "CORRECT")
    correct = [row["label"] == "CORRECT" for row in rows]
    return QAResult(
        accuracy=sum(correct) / len(correct) if correct else 0.0,
        by_category={c: sum(v) / len(v) for c, v in sorted(by_category.items())},
        answered=len(rows), skipped=skipped,
        context_tokens=_spread([r["context_tokens"] for r in rows]),
        answer_ms=_spread([r["answer_ms"] for r in rows]), judge_ms=_spread([r["judge_ms"] for r in rows]),
        rows=rows,
    )


__all__ = ["ChatError", "ChatModel", "JUDGE_PROMPT", "OpenAICompatibleChat", "QAResult", "chat_model",
           "evaluate_qa", "verdict"]
