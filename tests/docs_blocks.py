"""Run every code block of README.md and docs/*.md as a reader would.

A page is one session, in one fresh directory: its Python blocks share a namespace
(as in one interpreter), its shell blocks run one after another with the installed
``archivist`` on PATH, so a block may use what an earlier block on the same page made.

Two comments, written just above a block's fence, are the only help a block gets:

* ``<!-- docs-test: skip REASON -->`` — the block is not run; the test reports REASON.
  For what cannot run here (a real OpenAI key, a PostgreSQL host named in the text,
  ``make test`` inside ``make test``).
* a page that names ``$DATABASE_URL`` gets a new database on the embedded PostgreSQL
  server there, as its reader has their own.
* ``<!-- docs-test: background -->`` — a shell block that starts a server: it runs in
  the background until the page ends, and the next block starts once the server
  answers (or exits with its output as the failure).

A page runs where a reader of this checkout stands: its ``examples/`` and ``bench/`` are
there, and ``../shared/bench`` holds a small LoCoMo conversation and a small MADial-Bench
user, written for this test in the benchmarks' own formats (the real files are large and
not in the checkout).

``python tests/docs_blocks.py`` prints the tally: run, passed, failed, skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(skip|background)\b\s*(.*?)\s*-->\s*$")
RUNNABLE = {"python": "python", "bash": "shell", "sh": "shell", "shell": "shell"}


@dataclass
class Block:
    page: Path
    line: int
    kind: str  # "python" or "shell"
    code: str
    skip: str | None = None
    background: bool = False

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


@dataclass
class Outcome:
    block: Block
    status: str  # "passed", "failed", "skipped"
    detail: str = ""


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        kind = RUNNABLE.get(m.group(1))
        if kind is None:
            continue
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        directive = _DIRECTIVE.search(before)
        block = Block(page, text[: m.start()].count("\n") + 1, kind, m.group(2))
        if directive and directive.group(1) == "skip":
            block.skip = directive.group(2) or "marked skip without a reason"
        elif directive:
            block.background = True
        found.append(block)
    return found


def benchmark_fixtures(shared: Path) -> None:
    """A LoCoMo conversation and a MADial-Bench user in the files' own layouts, small."""
    turns = [("Caroline", "I went to a support group for LGBTQ people yesterday, it was so powerful."),
             ("Melanie", "That sounds amazing! What did you learn there?"),
             ("Caroline", "That I want to work as a counselor for transgender youth."),
             ("Melanie", "You would be great at that. I painted a lake sunrise last week."),
             ("Caroline", "I also started learning the violin in March."),
             ("Melanie", "Nice! My kids love pottery, we did a workshop together.")]
    conversation = {"speaker_a": "Caroline", "speaker_b": "Melanie",
                    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "3:10 pm on 20 May, 2023",
                    "session_1": [{"speaker": s, "text": t, "dia_id": f"D1:{i + 1}"} for i, (s, t) in enumerate(turns[:4])],
                    "session_2": [{"speaker": s, "text": t, "dia_id": f"D2:{i + 1}"} for i, (s, t) in enumerate(turns[4:])]}
    qa = [{"question": "What career does Caroline want to pursue?", "answer": "counseling", "evidence": ["D1:3"],
           "category": 1},
          {"question": "When did Caroline go to the LGBTQ support group?", "answer": "7 May 2023", "evidence": ["D1:1"],
           "category": 2},
          {"question": "What instrument is Caroline learning?", "answer": "violin", "evidence": ["D2:1"], "category": 4}]
    (shared / "locomo").mkdir(parents=True)
    (shared / "locomo" / "locomo10.json").write_text(
        json.dumps([{"sample_id": "conv-fixture", "conversation": conversation, "qa": qa}]), encoding="utf-8")
    memories = {"1": {"user-id": 1, "time": "2023-03-02", "event": "用户在公园跑步时扭伤了脚踝。", "scene": "运动",
                      "emotion": "沮丧"},
                "2": {"user-id": 1, "time": "2023-04-11", "event": "用户的猫咪咪生病了，去了宠物医院。", "scene": "宠物",
                      "emotion": "担心"}}
    dialogue = {"user-id": 1, "relevant-id": [2], "test-turn": [3],
                "dialogue": ["系统：你好", "用户：最近心情不好。", "AI：怎么了？", "用户：我家的猫又不吃东西了。"]}
    (shared / "madial" / "data" / "ch").mkdir(parents=True)
    (shared / "madial" / "data" / "ch" / "MADial-Bench-zh-memory.json").write_text(
        "\n".join(json.dumps({k: v}, ensure_ascii=False) for k, v in memories.items()), encoding="utf-8")
    (shared / "madial" / "data" / "ch" / "MADial-Bench-zh-dialogue.json").write_text(
        json.dumps(dialogue, ensure_ascii=False), encoding="utf-8")


def reader_dir(root: Path) -> Path:
    """Where a reader of this checkout stands: ``root/checkout`` with the checkout's
    examples and bench, beside ``root/shared/bench`` with the benchmark fixtures."""
    here = root / "checkout"
    here.mkdir()
    for name in ("examples", "bench"):
        (here / name).symlink_to(ROOT / name)
    benchmark_fixtures(root / "shared" / "bench")
    return here


def reader_env(workdir: Path) -> dict[str, str]:
    """The environment of a reader's shell: the checkout's venv first, no archivist
    settings inherited from whoever runs the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHIVIST_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(workdir / "home")
    env["PYTHONUNBUFFERED"] = "1"
    (workdir / "home").mkdir(exist_ok=True)
    return env


def _port_answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


class Session:
    """One page's reader: a directory, a Python namespace, and servers it started."""

    def __init__(self, page: Path, workdir: Path):
        self.page, self.workdir = page, workdir
        self.env = reader_env(workdir)
        if "DATABASE_URL" in page.read_text(encoding="utf-8"):  # the page's reader has a PostgreSQL database
            from archivist.testing.postgres import fresh_database

            self.env["DATABASE_URL"] = fresh_database()
        self.namespace: dict = {"__name__": "__docs__"}
        self.servers: list[subprocess.Popen] = []

    def run(self, block: Block, timeout: float = 300) -> Outcome:
        if block.skip:
            return Outcome(block, "skipped", block.skip)
        try:
            if block.kind == "python":
                self._python(block)
            elif block.background:
                self._background(block)
            else:
                self._shell(block, timeout)
        except Exception:  # the failure is the block's, reported with its traceback
            return Outcome(block, "failed", traceback.format_exc(limit=-3))
        return Outcome(block, "passed")

    def _python(self, block: Block) -> None:
        cwd, saved_env = os.getcwd(), dict(os.environ)
        os.chdir(self.workdir)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            exec(compile(block.code, block.name, "exec"), self.namespace)
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(saved_env)

    def _shell(self, block: Block, timeout: float) -> None:
        proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=self.workdir, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        finally:  # whatever the block started goes with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode:
            raise AssertionError(f"exit {proc.returncode}\n--- stdout\n{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}")

    def _background(self, block: Block) -> None:
        ports = [int(p) for p in re.findall(r"(?:--port\s+|127\.0\.0\.1:)(\d+)", block.code)] or [8765]
        if _port_answers(ports[-1]):
            raise AssertionError(f"port {ports[-1]} is taken by another program: the server this block starts cannot bind")
        log = open(self.workdir / f"server-{block.line}.log", "w+")
        proc = subprocess.Popen(["bash", "-e", "-c", block.code], cwd=self.workdir, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.servers.append(proc)
        deadline = time.monotonic() + 60
        while not _port_answers(ports[-1]):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise AssertionError(f"the server did not answer on port {ports[-1]}:\n{log.read()[-3000:]}")
            time.sleep(0.1)

    def close(self) -> None:
        for proc in self.servers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        for value in list(self.namespace.values()):  # stores a page opened and left open
            close = getattr(value, "close", None)
            if callable(close) and type(value).__module__.startswith("archivist"):
                with contextlib.suppress(Exception):
                    close()


def run_page(page: Path) -> list[Outcome]:
    root = Path(tempfile.mkdtemp(prefix="archivist-docs-"))
    session = Session(page, reader_dir(root))
    try:
        return [session.run(b) for b in blocks(page)]
    finally:
        session.close()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    outcomes = []
    for page in PAGES:
        for outcome in run_page(page):
            outcomes.append(outcome)
            first = outcome.detail.strip().splitlines()[-1] if outcome.detail.strip() else ""
            print(f"{outcome.status:8} {outcome.block.name:28} {first[:110]}", flush=True)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "failed", "skipped")}
    print(f"\n{len(outcomes)} blocks: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped")


if __name__ == "__main__":
    main()
