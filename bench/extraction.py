"""How much of what people say does the default (offline) extractor remember, and how much junk?

Runs the labelled conversation sets through ``scope.learn`` on a real SQLite file and
prints recall of durable facts, precision of what is live, the replaced rate and the
dated rate, per set and language, then every miss.

    python bench/extraction.py [--set tests/cases/extraction_dev.yaml ...] [--misses]

Every ``tests/cases/extraction_*.yaml`` set by default. The dev set is the one the
patterns were written against; ``extraction_holdout3.yaml`` was written by someone who
never saw them and has never been studied: it is the honest figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from archivist import Memory  # noqa: E402
from archivist.clock import FixedClock  # noqa: E402
from archivist.eval.extraction import evaluate_cases, load_cases  # noqa: E402

SETS = sorted((ROOT / "tests/cases").glob("extraction_*.yaml"))


def run(path: Path, lang: str | None = None):
    cases = [c for c in load_cases(path) if lang is None or c.get("lang") == lang]
    with tempfile.TemporaryDirectory() as tmp:
        clock = FixedClock("2026-01-15T09:00:00+00:00")
        memory = Memory.open(Path(tmp) / "memory.db", clock=clock)
        try:
            return evaluate_cases(cases, lambda cid: memory.scope("bench", cid), clock=clock)
        finally:
            memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", type=Path, help="a case file (default: every labelled set)")
    parser.add_argument("--misses", action="store_true", help="list every miss")
    args = parser.parse_args()
    print(f"{'set':<24} {'lang':<4} {'cases':>5} {'recall':>7} {'precision':>9} {'replaced':>8} {'dated':>6} "
          f"{'stored':>6} {'wrong':>5}")
    all_misses = []
    for path in args.set or SETS:
        for lang in (None, "zh", "en"):
            score, _ = run(path, lang)
            c = score.counts
            print(f"{path.stem:<24} {lang or 'all':<4} {score.cases:>5} {score.recall:>7.3f} {score.precision:>9.3f} "
                  f"{score.replaced:>8.3f} {score.dated:>6.3f} {c['stored']:>6} {c['wrong']:>5}"
                  f"   (remember {c['remember']}, replaced {c['replaced']}, dated {c['dated']})")
            if lang is None:
                all_misses += [f"[{path.stem}] {m}" for m in score.misses]
    if args.misses:
        print()
        print("\n".join(all_misses) or "no misses")


if __name__ == "__main__":
    main()
