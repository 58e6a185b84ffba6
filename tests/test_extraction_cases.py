"""The labelled conversation sets through ``learn`` on a real SQLite file: recall of durable
facts, precision of what is live, replaced and dated rates (``bench/extraction.py`` prints
the same figures with every miss).

Every set was written by someone who never saw the patterns; which of them were studied
afterwards is noted beside its floor. The floors are the figures measured when the
extractor last changed: a change that loses ground fails here. docs/extraction.md says
which targets are met.
"""

from pathlib import Path

import pytest

from archivist import Memory
from archivist.clock import FixedClock
from archivist.eval.extraction import CaseFormatError, date_forms, evaluate_cases, load_cases

CASES = Path(__file__).parent / "cases"

FLOORS = {  # set: (recall, precision, replaced, dated)
    "extraction_dev.yaml": (0.94, 0.99, 0.92, 0.94),  # the set the patterns were written against
    "extraction_holdout.yaml": (0.84, 0.95, 0.77, 0.50),  # written blind, then studied
    "extraction_holdout2.yaml": (0.97, 0.96, 0.83, 1.00),  # written blind, measured once, then studied
    "extraction_holdout3.yaml": (0.44, 0.84, 0.25, 0.75),  # written blind and never studied: the honest figure
    "extraction_redteam.yaml": (0.56, 0.80, 0.77, 0.50),  # an attacker's and a new user's inputs, first pass
    "extraction_redteam2.yaml": (0.87, 0.99, 0.75, 0.90),  # second pass (one case floods 200 facts)
    "extraction_probes.yaml": (0.57, 0.77, 0.66, 0.00),  # the second pass's hand probes; many still fail
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_labelled_set_holds_its_floor(tmp_path, name):
    cases = load_cases(CASES / name)
    clock = FixedClock("2026-01-15T09:00:00+00:00")
    memory = Memory.open(tmp_path / "m.db", clock=clock)
    score, _ = evaluate_cases(cases, lambda cid: memory.scope("eval", cid), clock=clock)
    memory.close()
    recall, precision, replaced, dated = FLOORS[name]
    summary = (f"{name}: recall {score.recall:.3f} precision {score.precision:.3f} replaced {score.replaced:.3f} "
               f"dated {score.dated:.3f}\n" + "\n".join(score.misses))
    assert score.recall >= recall, summary
    assert score.precision >= precision, summary
    assert score.replaced >= replaced, summary
    assert score.dated >= dated, summary


def test_the_sets_are_what_the_docs_say():
    dev, holdout = load_cases(CASES / "extraction_dev.yaml"), load_cases(CASES / "extraction_holdout.yaml")
    assert len(dev) >= 80 and len(holdout) >= 40
    for cases in (dev, holdout):
        langs = [c["lang"] for c in cases]
        assert abs(langs.count("zh") - langs.count("en")) <= len(cases) // 5
    assert sum(len(c["turns"]) > 1 for c in dev) >= 15


def test_a_malformed_case_file_is_a_typed_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: a\n  turns: []\n- id: a\n  turns: []\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match="duplicate"):
        load_cases(bad)
    bad.write_text("{not: a list}", encoding="utf-8")
    with pytest.raises(CaseFormatError):
        load_cases(bad)


def test_date_forms():
    assert "2024年3月4日" in date_forms("2024-03-04") and "2024-03" in date_forms("2024-03")
    assert "april 2024" in date_forms("2024-04")
