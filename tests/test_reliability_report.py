"""docs/reliability.md is the report of the full torture run: it must name every
torture test there is, and say it was made at full size."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def torture_tests() -> set[str]:
    found = set()
    for path in sorted((ROOT / "tests").glob("test_torture_*.py")):
        for name in re.findall(r"@pytest\.mark\.torture\n(?:@[^\n]+\n)*def (test_\w+)", path.read_text()):
            found.add(f"{path.name}::{name}")
    return found


def test_the_report_lists_every_torture_test_from_a_full_run():
    report = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    tests = torture_tests()
    assert len(tests) >= 8
    missing = sorted(t for t in tests if f"`{t}`" not in report)
    assert not missing, f"run `make torture` to regenerate docs/reliability.md; missing: {missing}"
    assert "(full size)" in report and "| failed" not in report
