"""Long commands draw progress (count, rate, time left) on stderr when it is a terminal,
and write nothing extra when it is not: import, export, ingest, consolidate, reindex."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading

import pytest

from archivist import Memory

ARCHIVIST = [sys.executable, "-m", "archivist.cli"]
FACTS = 1200


def env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}, "ARCHIVIST_EMBEDDER": "none",
            "COLUMNS": "120"}


def on_a_terminal(args: list[str], cwd) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal; (exit code, what the terminal got)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*ARCHIVIST, *args], stdout=subprocess.DEVNULL, stderr=follower, env=env(), cwd=cwd)
    os.close(follower)
    seen: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    code = proc.wait(300)
    reader.join(30)
    os.close(leader)
    return code, b"".join(seen).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("progress")
    with Memory.open(root / "m.db", embedder=None) as mem:
        mem.scope(user="ana").remember_many(
            [{"content": f"The user keeps notebook {i} about subject {i * 7 % 13}."} for i in range(FACTS)])
    subprocess.run([*ARCHIVIST, "export", "--user", "ana", "--db", "m.db", "--out", "ana.jsonl"], cwd=root, env=env(),
                   check=True, capture_output=True)
    (root / "convs").mkdir()
    for i in range(30):
        (root / "convs" / f"c{i}.json").write_text(json.dumps(
            [{"id": "u1", "role": "user", "content": f"I have {i + 2} cats and I live in Lyon."}]))
    return root


@pytest.mark.parametrize("args, drawn", [
    (["import", "ana.jsonl", "--user", "bob", "--db", "imported.db"], ["checking ana.jsonl", f"/{FACTS}"]),
    (["export", "--user", "ana", "--db", "m.db", "--out", "again.jsonl"], ["exporting records"]),
    (["ingest", "convs", "--user", "ana", "--db", "ingested.db"], ["learning conversations", "/30"]),
    (["consolidate", "--user", "ana", "--db", "m.db", "--force"], [f"consolidating {FACTS:,} facts"]),
    (["reindex", "--db", "m.db"], ["reindexing"]),
], ids=["import", "export", "ingest", "consolidate", "reindex"])
def test_progress_is_drawn_on_a_terminal_only(store, args, drawn):
    code, terminal = on_a_terminal(args, store)
    assert code == 0, terminal[-2000:]
    for text in drawn:
        assert text in terminal, terminal[-2000:]
    piped = subprocess.run([*ARCHIVIST, *args[:-2], "--db", "piped-" + args[-1]] if args[0] in ("import", "ingest")
                           else [*ARCHIVIST, *args], cwd=store, env=env(), capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert not [line for line in piped.stderr.splitlines()
                if any(text in line for text in drawn) or "\x1b" in line]  # nothing drawn into a pipe
