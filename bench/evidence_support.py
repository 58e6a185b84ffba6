"""Does the gate accept paraphrases and refuse quotes that do not support the content?

``bench/data/evidence_support.jsonl`` holds (message, quote, content, supported)
rows in zh and en: half are faithful third-person paraphrases of what the user said
about themselves, half state something the quote does not say (another value, a
flipped negation, another person, another topic). Each row runs through the real
gate as a durable user fact citing the message; a paraphrase must be accepted, an
unsupported content refused with an ``evidence_*`` code.

    python bench/evidence_support.py [--show 10]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from archivist.pipeline.filtering import filter_messages  # noqa: E402
from archivist.pipeline.governance import GovernanceConfig, gate, parse_candidate  # noqa: E402


def judge(row: dict) -> tuple[bool, str]:
    messages = [{"id": "u1", "role": "user", "content": row["message"]}]
    cand = parse_candidate({"content": row["content"], "category": "context", "scope": "user",
                            "durability": "durable", "authority": "descriptive", "confidence": 0.9,
                            "evidence_message_id": "u1", "evidence_text": row["quote"]})
    decision = gate(cand, GovernanceConfig(), filter_messages(messages))
    return decision.accepted, decision.code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=10, help="misjudged rows to print per kind")
    args = parser.parse_args()
    path = Path(__file__).parent / "data" / "evidence_support.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts: Counter[tuple[str, bool, bool]] = Counter()
    codes: Counter[str] = Counter()
    wrong: dict[bool, list[str]] = {True: [], False: []}
    for row in rows:
        accepted, code = judge(row)
        counts[(row["lang"], row["supported"], accepted)] += 1
        if not accepted:
            codes[code] += 1
        if accepted != row["supported"]:
            wrong[row["supported"]].append(f"[{row['lang']}] {row['quote']!r} -> {row['content']!r} ({code})")
    print("| language | paraphrases accepted | unsupported refused |")
    print("|---|---|---|")
    for lang in ("en", "zh", "all"):
        def n(supported: bool, accepted: bool) -> int:
            return sum(v for (lg, s, a), v in counts.items() if (lang == "all" or lg == lang)
                       and s is supported and a is accepted)
        ok, bad = n(True, True), n(True, False)
        caught, missed = n(False, False), n(False, True)
        print(f"| {lang} | {ok}/{ok + bad} ({ok / max(ok + bad, 1):.1%}) | "
              f"{caught}/{caught + missed} ({caught / max(caught + missed, 1):.1%}) |")
    print("\nrefusal codes:", ", ".join(f"{c} {k}" for c, k in codes.most_common()))
    for supported, label in ((True, "paraphrases refused"), (False, "unsupported accepted")):
        print(f"\n## {label}: {len(wrong[supported])}")
        for line in wrong[supported][: args.show]:
            print("  -", line)


if __name__ == "__main__":
    main()
