"""A large batch is read partly in helper processes, and decided exactly as if this
process had read it all: the same facts, versions, refusals, held items and audit.
A helper that dies mid-batch costs time, never a decision; a script without a
``__main__`` guard is not run again; ``ARCHIVIST_GATE_HELPERS=0`` starts none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_bulk_writes import BEFORE, MIXED, T0, _outcomes, _state

from archivist import FixedClock, Memory
from archivist.model.memo import Memo, clear_all, memo
from archivist.pipeline import batch_reading

# statements of their own (no duplicates among them), so the batch is large enough to share
FILLER = [{"content": f"The user visited {town} in {year} and liked the {thing} there."}
          for town in ("Lisbon", "Porto", "Kyoto", "Osaka", "Hangzhou", "Chengdu", "Oslo", "Bergen")
          for year in (2019, 2021, 2023) for thing in ("food", "museums", "trains")]
FILLER += [{"content": f"用户{year}年去过{town}，很喜欢那里的{thing}。"}
           for town in ("杭州", "成都", "西安", "厦门") for year in (2018, 2020, 2022) for thing in ("美食", "博物馆")]
BATCH = FILLER + MIXED + [{"content": item["content"] + " (again)"} for item in FILLER[:20]]


@pytest.fixture
def helpers(monkeypatch):
    """One helper, started and ready before the batch (as after a first large batch)."""
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", "1")
    batch_reading.close_helpers()
    assert batch_reading.start_helpers(wait=60) == 1, "the helper did not start"
    yield batch_reading
    batch_reading.close_helpers()


def _written(tmp_path: Path, name: str) -> tuple[list, tuple]:
    with Memory.open(tmp_path / f"{name}.db", clock=FixedClock(T0), embedder=None) as mem:
        mem.scope(user="u").remember_many(BEFORE)
        return _outcomes(mem.scope(user="u").remember_many(BATCH)), _state(mem)


def _written_alone(tmp_path: Path, monkeypatch) -> tuple[list, tuple]:
    """The same batch written with the helpers off, every text read afresh here."""
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", "0")
    batch_reading.close_helpers()
    clear_all()
    return _written(tmp_path, "alone")


def test_a_batch_read_with_a_helper_is_decided_as_one_read_here(tmp_path, helpers, monkeypatch):
    clear_all()
    before = helpers.answered_by_helpers()
    shared = _written(tmp_path, "shared")
    assert helpers.answered_by_helpers() - before >= 300, "the helper read no share of the batch"
    alone = _written_alone(tmp_path, monkeypatch)
    assert shared == alone
    outcomes, (facts, audit, reviews) = shared
    assert any(code == "secret" for code in outcomes[4]) and any(kind == "held" for kind, *_ in reviews)


def test_a_helper_killed_mid_batch_costs_time_not_a_decision(tmp_path, helpers, monkeypatch):
    clear_all()
    [helper] = helpers._pool.helpers
    real_send = helper.send

    def send_then_die(part):
        sent = real_send(part)
        os.kill(helper.proc.pid, signal.SIGKILL)
        return sent

    monkeypatch.setattr(helper, "send", send_then_die)
    killed = _written(tmp_path, "killed")
    assert helper.broken and helper.proc.wait(timeout=10) == -signal.SIGKILL
    assert helpers.start_helpers(wait=60) == 1 and helpers._pool.helpers[0] is not helper  # replaced
    assert killed == _written_alone(tmp_path, monkeypatch)


def test_a_script_without_a_main_guard_is_not_run_again(tmp_path):
    """Helpers are started as ``python -m``: the caller's script is not imported in them."""
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = {[str(Path(__file__).parent)]!r}
        from archivist import Memory
        from archivist.pipeline import batch_reading
        from test_batch_reading import BATCH
        print("run", flush=True)
        assert batch_reading.start_helpers(wait=60) == 1
        with Memory.open({str(tmp_path / "s.db")!r}, embedder=None) as mem:
            report = mem.scope(user="u").remember_many(BATCH)
        print("saved", len(report.saved), "by helpers", batch_reading.answered_by_helpers() > 0, flush=True)
    """))
    env = {**os.environ, "ARCHIVIST_GATE_HELPERS": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "run" and len(lines) == 2 and lines[1].startswith("saved ") and lines[1].endswith("True")


def test_no_helper_starts_when_they_are_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", "0")
    batch_reading.close_helpers()
    clear_all()
    before = batch_reading.answered_by_helpers()
    _written(tmp_path, "off")
    assert batch_reading._pool.helpers == [] and batch_reading.answered_by_helpers() == before


@pytest.mark.parametrize("value, expected", [("0", 0), ("1", 1), (" 1 ", 1), ("", None)])
def test_the_number_of_helpers_is_read_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setattr(batch_reading, "_cores", lambda: 2)
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", value)
    assert batch_reading.configured_helpers() == (1 if expected is None else expected)


def test_more_helpers_than_the_cores_allow_are_not_started(monkeypatch, caplog):
    """A helper more than the cores only takes turns with the others (and holds ~220 MB)."""
    monkeypatch.setattr(batch_reading, "_cores", lambda: 4)
    for value in ("100", "99999999999999999999"):
        monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", value)
        assert batch_reading.configured_helpers() == 3
    assert "more than this machine's 4 cores allow; using 3" in caplog.text
    monkeypatch.delenv("ARCHIVIST_GATE_HELPERS")
    assert batch_reading.configured_helpers() == 3  # the default: one fewer than the cores, at most three


@pytest.mark.parametrize("value", ["two", "-1", "1.5", "0x2", "٣"])
def test_a_value_that_is_not_a_count_falls_back_to_the_default_with_a_warning(monkeypatch, caplog, value):
    monkeypatch.setattr(batch_reading, "_cores", lambda: 2)
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", value)
    assert batch_reading.configured_helpers() == 1
    assert f"ARCHIVIST_GATE_HELPERS={value!r} is not a whole number of 0 or more" in caplog.text


def test_a_memo_keeps_answers_and_seeded_answers_oldest_out():
    calls = []

    @memo(3)
    def double(x):
        calls.append(x)
        return 2 * x

    assert isinstance(double, Memo) and double.__name__ == "double"
    assert [double(1), double(1), double(2)] == [2, 2, 4] and calls == [1, 2]
    double.seed((5,), "from a helper")
    assert double(5) == "from a helper" and (5,) in double and calls == [1, 2]
    double(6)  # the fourth answer: the oldest (1) goes
    assert (1,) not in double and double(1) == 2 and calls == [1, 2, 6, 1]


def test_an_import_read_with_a_helper_lands_as_one_read_here(tmp_path, helpers, monkeypatch):
    """An export of the batch's store, imported with a helper and without: the same store."""
    import io

    from archivist.lifecycle.transfer import export_jsonl, import_jsonl

    with Memory.open(tmp_path / "source.db", clock=FixedClock(T0), embedder=None) as mem:
        mem.scope(user="u").remember_many(BEFORE + BATCH)
        buf = io.StringIO()
        export_jsonl(mem, "default", "u", buf)
    lines = buf.getvalue().splitlines()

    def imported(name: str) -> tuple:
        clear_all()
        with Memory.open(tmp_path / f"{name}.db", clock=FixedClock(T0), embedder=None) as mem:
            report = import_jsonl(mem, lines, tenant="default")
            return report.facts, report.candidates, _state(mem)

    before = helpers.answered_by_helpers()
    shared = imported("shared")
    assert helpers.answered_by_helpers() - before >= 300, "the helper read no share of the import"
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", "0")
    helpers.close_helpers()
    assert shared == imported("alone") and shared[0] > 100


@pytest.mark.parametrize("interpreter", ["/bin/false", "/nonexistent/python"])
def test_a_helper_that_cannot_start_leaves_the_batch_to_this_process(tmp_path, monkeypatch, caplog, interpreter):
    monkeypatch.setenv("ARCHIVIST_GATE_HELPERS", "1")
    monkeypatch.setattr(sys, "executable", interpreter)
    batch_reading.close_helpers()
    assert batch_reading.start_helpers(wait=3) == 0
    clear_all()
    before = batch_reading.answered_by_helpers()
    written = _written(tmp_path, "no-helper")
    assert batch_reading.answered_by_helpers() == before and batch_reading._pool.helpers == []
    if interpreter.startswith("/nonexistent"):
        assert "helper processes could not start" in caplog.text
    assert written == _written_alone(tmp_path, monkeypatch)


def test_a_helper_that_stops_answering_is_given_up_on_and_ended(tmp_path, helpers, monkeypatch):
    """A stopped (or stuck) helper costs ANSWER_WITHIN seconds, then its share is read here."""
    clear_all()
    monkeypatch.setattr(batch_reading, "ANSWER_WITHIN", 1.0)
    [helper] = helpers._pool.helpers
    os.kill(helper.proc.pid, signal.SIGSTOP)
    stopped = _written(tmp_path, "stopped")
    assert helper.broken and helper.proc.wait(timeout=10) == -signal.SIGKILL
    assert stopped == _written_alone(tmp_path, monkeypatch)


def test_a_busy_helper_ends_soon_after_its_caller_is_killed(tmp_path):
    script = tmp_path / "busy.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from archivist import Memory
        from archivist.pipeline import batch_reading
        assert batch_reading.start_helpers(wait=60) == 1
        print(batch_reading._pool.helpers[0].proc.pid, flush=True)
        long = [{{"content": f"The user wrote note {{n}}: " + "a long careful sentence about tea. " * 300}}
                for n in range(400)]
        with Memory.open({str(tmp_path / "b.db")!r}, embedder=None) as mem:
            while True:
                mem.scope(user="u").remember_many(long)
    """))
    env = {**os.environ, "ARCHIVIST_GATE_HELPERS": "1"}
    caller = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    helper = int(caller.stdout.readline())
    time.sleep(4)  # the helper is reading its share of a batch
    caller.kill()
    caller.wait(timeout=10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{helper}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{helper}").exists() or "Z" in Path(f"/proc/{helper}/stat").read_text().split()[2], \
        "the helper outlived its caller"


def test_the_cores_are_those_the_process_may_run_on(tmp_path):
    """Under ``taskset -c 0`` a process has one core: no helper."""
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("this platform has no CPU affinity (os.sched_getaffinity)")
    code = "from archivist.pipeline import batch_reading as b; print(b.configured_helpers())"
    env = {k: v for k, v in os.environ.items() if k != "ARCHIVIST_GATE_HELPERS"}
    one = subprocess.run([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{0}}); {code}"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert one.stdout.strip() == "0", one.stderr
