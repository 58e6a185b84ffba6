"""What does ``learn`` keep from a real long conversation? LoCoMo conversations 0 and 1.

Each speaker in turn is taken as the user (the other speaker's turns as the assistant's)
and every session is fed through ``scope.learn`` in order, dated with the session's date.
Printed per speaker: facts stored, recall against the 30 durable facts a reader listed
from the turns (``bench/data/locomo_durable_facts.yaml``: a fact counts when some version
memory held — live or since replaced — carries its fragments), the changes over time
whose last step is live and whose earlier steps are not, and a seeded random sample of
stored facts to judge by reading (precision is that judgement, not a computed number).

    python bench/locomo_extraction.py [--shared ../shared] [--sample 15] [--all]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from archivist import Memory  # noqa: E402
from archivist.clock import FixedClock  # noqa: E402
from archivist.eval.converters import parse_locomo_time  # noqa: E402
from archivist.model import Status  # noqa: E402
from archivist.model.folding import normalize  # noqa: E402


def _has(text: str, fragments: list[str]) -> bool:
    return all(normalize(f) in normalize(text) for f in fragments)


def sessions(conversation: dict) -> list[tuple[str | None, list[dict]]]:
    out = []
    n = 1
    while f"session_{n}" in conversation:
        out.append((parse_locomo_time(conversation.get(f"session_{n}_date_time", "")), conversation[f"session_{n}"]))
        n += 1
    return out


def run_speaker(memory: Memory, clock: FixedClock, conversation: dict, speaker: str, user: str):
    scope = memory.scope("locomo", user)
    for at, turns in sessions(conversation):
        if at:
            clock.set(at)
        messages = [{"id": t["dia_id"], "role": "user" if t["speaker"] == speaker else "assistant",
                     "content": t.get("text", "")} for t in turns]
        try:
            scope.learn(messages, thread_id=user, at=at)
        except TypeError:  # an extractor version without session dates
            scope.learn(messages, thread_id=user)
    return scope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--sample", type=int, default=15)
    parser.add_argument("--all", action="store_true", help="print every stored fact")
    args = parser.parse_args()
    data = json.loads((args.shared / "bench/locomo/locomo10.json").read_text(encoding="utf-8"))
    labels = yaml.safe_load((ROOT / "bench/data/locomo_durable_facts.yaml").read_text(encoding="utf-8"))
    rng = random.Random(17)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        clock = FixedClock("2023-01-01T00:00:00+00:00")
        memory = Memory.open(Path(tmp) / "m.db", clock=clock)
        for label in labels:
            conversation = data[label["conversation"]]["conversation"]
            speaker = label["speaker"]
            scope = run_speaker(memory, clock, conversation, speaker, f"c{label['conversation']}-{speaker}")
            every = scope.facts(include_history=True, include_expired=True)
            held = [f.content for f in every]
            live = [f.content for f in every if f.status is Status.COMMITTED and not f.is_expired(clock.now())]
            found = [f for f in label["facts"] if any(_has(h, f["fragments"]) for h in held)]
            changes_ok = 0
            for change in label.get("changes") or []:
                steps = change["steps"]
                last_live = any(_has(h, steps[-1]["fragments"]) for h in live)
                earlier_gone = not any(_has(h, s["fragments"]) for s in steps[:-1] for h in live
                                       if not _has(h, steps[-1]["fragments"]))
                changes_ok += last_live and earlier_gone
            user_turns = sum(1 for _, turns in sessions(conversation) for t in turns if t["speaker"] == speaker)
            rows.append((label["conversation"], speaker, user_turns, len(held), len(live), len(found),
                         len(label["facts"]), changes_ok, len(label.get("changes") or [])))
            print(f"\n## conversation {label['conversation']}, {speaker} as the user")
            print("found:", ", ".join(f["id"].rsplit("-", 1)[-1] + " " + f["fact"] for f in found) or "none")
            shown = held if args.all else rng.sample(held, min(args.sample, len(held)))
            print(f"{'all' if args.all else 'sample of'} stored facts ({len(shown)} of {len(held)}):")
            for text in shown:
                print("  -", text)
        memory.close()
    print(f"\n{'conv':>4} {'speaker':<10} {'user turns':>10} {'stored':>6} {'live':>5} {'recall':>12} {'changes':>8}")
    for conv, speaker, turns, held, live, found, total, ch_ok, ch_total in rows:
        print(f"{conv:>4} {speaker:<10} {turns:>10} {held:>6} {live:>5} {found:>3}/{total:<3} {found / total:>5.2f} "
              f"{ch_ok:>3}/{ch_total}")


if __name__ == "__main__":
    main()
