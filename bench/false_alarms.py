"""How often does each refusal rule of the write gate fire on ordinary user text?

Real user turns: every LoCoMo turn (both speakers are people talking about their
lives), every user line of MADial-Bench (zh and en), and ``bench/data/
benign_user_turns.jsonl`` (ordinary requests to an assistant, many of them worded to
trip a naive filter). None of them is a grant, a secret or an attack, so every firing
of the content rules (``secret``, ``transactional``, ``prompt_injection``, read through
the screening form as the gate reads them) is a false alarm. The hold rules (``held_*``,
:mod:`archivist.pipeline.recognise`) are reported beside them: a hold keeps the text
unconfirmed, never shown, until the application confirms it — on whole turns as an
episode reads them (a request is expected there) and on each first-person sentence as a
fact's content reads it. The statement rules (question, hypothetical, pasted, attributed, one-off, task
fix, unsupported) judge a quote in its message; they are measured on each declarative
first-person sentence ("I …", "我…") quoted as a whole, where a firing refuses a plain
statement about oneself.

    python bench/false_alarms.py [--shared ../shared] [--show 20]

Prints a table per corpus and the flagged turns.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from archivist.pipeline.governance import screen  # noqa: E402
from archivist.pipeline.recognise import doubt  # noqa: E402
from archivist.pipeline.statements import (  # noqa: E402
    is_attributed,
    is_hypothetical,
    is_one_off,
    is_question,
    is_quoted_material,
    is_task_fix,
    locate,
)

CONTENT_RULES = ("secret", "transactional", "prompt_injection")
HOLD_RULES = ("held_language", "held_disguise", "held_order", "held_addressed")
STATEMENT_RULES = {"question": is_question, "hypothetical": is_hypothetical, "quoted": is_quoted_material,
                   "attributed": is_attributed, "one_off": is_one_off, "task_fix": is_task_fix}


def locomo_turns(shared: Path):
    data = json.loads((shared / "bench/locomo/locomo10.json").read_text(encoding="utf-8"))
    for conv in data:
        c = conv["conversation"]
        for key, turns in c.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    yield "en", t["text"]


def madial_turns(shared: Path, lang: str):
    folder = "ch" if lang == "zh" else "en"
    path = shared / f"bench/madial/data/{folder}/MADial-Bench-{lang}-dialogue.json"
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for raw in json.loads(line)["dialogue"]:
            m = re.match(r'<([^>]+)>:\s*"?(.*?)"?\s*$', raw.strip(), re.S)
            if m and m.group(1) not in ("Assistant", "BOD", "EOD"):
                yield lang, m.group(2)


def own_turns(path: Path):
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            yield item["lang"], item["text"]


_SENTENCE = re.compile(r"[^。！？!?.\n]+[。！？!?.]?")
_FIRST_PERSON = re.compile(r"^\s*(?:我|i\b|i'm\b|i've\b|my\b)", re.I)


def statements(text: str):
    """Declarative first-person sentences: what an extractor would quote as a fact."""
    for s in _SENTENCE.findall(text):
        s = s.strip()
        if len(s) >= 6 and _FIRST_PERSON.match(s) and not s.endswith(("?", "？")):
            yield s


def measure(name: str, turns) -> tuple[list[str], dict]:
    fired: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    n_turns = n_statements = 0
    held: Counter[str] = Counter()
    for _, text in turns:
        n_turns += 1
        problem = screen(text)
        if problem is not None:
            fired[problem.code] += 1
            examples.setdefault(problem.code, []).append(text)
        else:
            unsure = doubt(text, addressed_ok=True)
            if unsure:
                held["turn:" + unsure[0]] += 1
                examples.setdefault("turn " + unsure[0], []).append(text)
        for sentence in statements(text):
            n_statements += 1
            loc = locate(text, sentence)
            for rule, check in STATEMENT_RULES.items():
                if loc is not None and check(loc):
                    fired[rule] += 1
                    examples.setdefault(rule, []).append(sentence)
            unsure = doubt(sentence) if screen(sentence) is None else None
            if unsure:
                held["statement:" + unsure[0]] += 1
                examples.setdefault("statement " + unsure[0], []).append(sentence)
    rows = [f"| {name} | content rules on {n_turns:,} turns | " + " | ".join(
        f"{fired[r]} ({fired[r] / max(n_turns, 1):.2%})" for r in CONTENT_RULES) + " |",
            f"| {name} | statement rules on {n_statements:,} first-person sentences | " + " | ".join(
        f"{r} {fired[r]} ({fired[r] / max(n_statements, 1):.2%})" for r in STATEMENT_RULES) + " |",
            f"| {name} | holds on {n_turns:,} turns (as episodes) | " + " | ".join(
        f"{r} {held['turn:' + r]} ({held['turn:' + r] / max(n_turns, 1):.2%})" for r in HOLD_RULES) + " |",
            f"| {name} | holds on {n_statements:,} first-person sentences (as facts) | " + " | ".join(
        f"{r} {held['statement:' + r]} ({held['statement:' + r] / max(n_statements, 1):.2%})" for r in HOLD_RULES)
            + " |"]
    return rows, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    parser.add_argument("--show", type=int, default=20, help="flagged turns to print per rule")
    args = parser.parse_args()
    corpora = [("own benign turns (zh+en)", own_turns(Path(__file__).parent / "data" / "benign_user_turns.jsonl"))]
    if (args.shared / "bench").is_dir():
        corpora = [("LoCoMo (en)", locomo_turns(args.shared)), ("MADial-Bench zh", madial_turns(args.shared, "zh")),
                   ("MADial-Bench en", madial_turns(args.shared, "en"))] + corpora
    else:
        print(f"benchmark data not found under {args.shared}/bench: only the project's own corpus is measured")
    print("| corpus | unit | " + " | ".join(CONTENT_RULES) + " |")
    print("|---|---|---|---|---|")
    flagged: dict[str, list[str]] = {}
    for name, turns in corpora:
        rows, examples = measure(name, turns)
        print("\n".join(rows))
        for rule, texts in examples.items():
            flagged.setdefault(rule, []).extend(f"[{name}] {t}" for t in texts)
    for rule, texts in flagged.items():
        print(f"\n## {rule}: {len(texts)} flagged")
        for t in texts[: args.show]:
            print("  -", t[:200].replace("\n", " "))


if __name__ == "__main__":
    main()
