"""Every code block of README.md and docs/ runs as written (see tests/docs_blocks.py):
one test per block, in page order, each page one reader's session."""

from __future__ import annotations

import pytest
from docs_blocks import PAGES, ROOT, Session, blocks, reader_dir

BLOCKS = [b for page in PAGES for b in blocks(page)]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """The page's session; starting the next page ends the last one (its servers stop)."""
    current: list[Session] = []

    def session(page):
        if current and current[0].page != page:
            current.pop().close()
        if not current:
            current.append(Session(page, reader_dir(tmp_path_factory.mktemp(page.stem))))
        return current[0]

    yield session
    for s in current:
        s.close()


def test_every_page_has_runnable_blocks():
    assert len(BLOCKS) >= 25 and {b.page for b in BLOCKS} >= {ROOT / "README.md", ROOT / "docs" / "api.md"}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block_runs_as_written(block, sessions):
    outcome = sessions(block.page).run(block)
    if outcome.status == "skipped":
        pytest.skip(f"{block.name}: {outcome.detail}")
    assert outcome.status == "passed", f"{block.name} failed as written:\n{block.code}\n{outcome.detail}"
