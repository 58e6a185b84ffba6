"""The fallible-extractor case files through ``apply``: how many cases each group gets right.

    python bench/gate_cases.py [tests/cases/fallible_extractor.yaml ...] [--failures]

A case is right when every candidate of every turn gets the expected outcome (commit,
refuse with an acceptable code family, candidate, duplicate, supersede) and the live
facts at the end hold what they must and nothing they must not. Groups are the first
word of a case id (grant, secret, oneoff, evidence, update, …; the second for the red teams'
``rt-``, ``ho-`` and ``h2-`` ids). Runs against whatever
``archivist`` is importable, so ``PYTHONPATH=<old checkout>/src`` measures an older
version with the same cases.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

from archivist import FixedClock, Memory


def _code(why) -> str:
    return why.code if hasattr(why, "code") else str(why).split(":", 1)[0]


def family(code: str) -> str:
    for prefix in ("evidence", "scope"):
        if code.startswith(prefix + "_"):
            return prefix
    return code


def run_case(case: dict, path: Path) -> list[str]:
    """The problems with one case (empty when it is handled as expected)."""
    problems = []
    with Memory.open(path, clock=FixedClock("2026-01-01T00:00:00+00:00")) as mem:
        scope = mem.scope(user="u", project=case.get("project"))
        for n, turn in enumerate(case["turns"]):
            mem.clock.advance(minutes=5)
            raws = [dict(c) for c in turn["candidates"]]
            try:
                report = scope.apply(raws, turn["messages"], thread_id=f"t{n}")
            except Exception as exc:  # an older version may raise where the new one refuses
                problems.append(f"turn {n}: raised {type(exc).__name__}: {exc}")
                continue
            rejected = {id(r): _code(w) for r, w in report.rejected}
            duplicate = {id(r) for r, _ in report.duplicates}
            for raw, want in zip(raws, turn["expect"], strict=True):
                if id(raw) in rejected:
                    got = "refuse"
                elif id(raw) in duplicate:
                    got = "duplicate"
                elif raw.get("kind", "fact") != "fact":
                    got = "candidate"
                else:
                    got = "supersede" if report.superseded else "commit"
                expected = want["outcome"]
                ok = got == expected or (expected == "commit" and got == "supersede")
                if ok and expected == "refuse" and want.get("codes"):
                    ok = family(rejected[id(raw)]) in want["codes"]
                if not ok:
                    detail = rejected.get(id(raw), "")
                    problems.append(f"turn {n}: {raw['content'][:60]!r}: {got} {detail}, expected {expected}")
        live = "\n".join(f.content for f in scope.facts())
        problems += [f"{s!r} not live" for s in case.get("live_after") or [] if s not in live]
        problems += [f"{s!r} still live" for s in case.get("not_live_after") or [] if s in live]
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path,
                        default=[Path(__file__).resolve().parents[1] / "tests/cases/fallible_extractor.yaml"])
    parser.add_argument("--failures", action="store_true", help="print each failing case")
    args = parser.parse_args()
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for file in args.files:
            for i, case in enumerate(yaml.safe_load(file.read_text(encoding="utf-8"))):
                parts = case["id"].split("-")
                group = parts[1] if parts[0] in ("rt", "ho", "h2") else parts[0]  # red teams' ids: <team>-<kind>-…
                problems = run_case(case, Path(tmp) / f"{file.stem}-{i}.db")
                total[group] += 1
                right[group] += not problems
                if problems:
                    failures.append((case["id"], problems))
    print("| group | cases | handled as expected |")
    print("|---|---|---|")
    for group in sorted(total):
        print(f"| {group} | {total[group]} | {right[group]} |")
    print(f"| all | {sum(total.values())} | {sum(right.values())} |")
    if args.failures:
        for cid, problems in failures:
            print(f"\n{cid}:")
            for p in problems:
                print("  -", p)


if __name__ == "__main__":
    sys.exit(main())
