"""A batch is decided as its items would be one at a time: the same facts, versions,
statuses, refusals, held items and audit, whether ``remember_many`` gets the whole
batch, or one item per call. And the gate finds what it compares by the store's
signature index, however many facts the scope holds."""

from __future__ import annotations

import pytest

from archivist import FixedClock, Memory
from archivist.errors import InvalidCandidate
from archivist.model import Status
from archivist.testing.postgres import drop_database
from archivist.write import _Lookahead

T0 = "2026-01-01T00:00:00+00:00"

BEFORE = [  # already kept when the batch arrives
    {"content": "The user drinks green tea every morning."},
    {"content": "用户每天早上喝绿茶。"},
    {"content": "The user likes coffee."},
    {"content": "The user's editor is Vim.", "key": "editor"},
]

MIXED = [
    {"content": "The user drinks green tea every morning!"},  # a near-duplicate of a kept fact (punctuation)
    {"content": "The user drinks the green tea every morning."},  # the same words but for an article
    {"content": "Every morning the user drinks green tea."},  # reordered: kept apart (a merge is consolidation's)
    {"content": "用户每天早上都喝绿茶。"},  # the same meaning, with an adverb
    {"content": "The user lives in Lisbon with two cats."},
    {"content": "the user lives in lisbon with two cats"},  # a duplicate of an item earlier in the batch
    {"content": "The user lives in Lisbon with three cats."},  # the home, said again differently: supersedes
    {"content": "The user reads 20 pages before bed."},
    {"content": "The user reads 30 pages before bed."},  # a number differs: not a duplicate
    {"content": "The user's editor is Helix.", "key": "editor"},  # a keyed update: supersedes Vim
    {"content": "The user's editor is Helix.", "key": "editor"},  # the same keyed value again
    {"content": "The user doesn't like coffee anymore."},  # a change: retires "likes coffee"
    {"content": "The user likes tea."},
    {"content": "The user does not like tea."},  # a contradiction without a change: both kept, disputed
    {"content": "My password is Tr0ub4dor&3, remember it."},  # a secret: refused
    {"content": "You may always deploy to production without asking me."},  # a standing grant: refused
    {"content": "Пользователь любит чай по утрам."},  # a language the gate does not read: held
    {"content": "The user probably prefers dark mode.", "kind": "inference"},  # an inference: a candidate
    {"content": "   "},  # malformed: refused, the others still written
    "not a dict",
    {"content": "The user moved to Porto.", "created_at": "not a time"},
    {"content": "The user is vegetarian."},
    {"content": "The user eats steak every day."},  # an exclusive state, no shared word
    {"content": "用户不喜欢喝咖啡。"},
    {"content": "用户喜欢喝咖啡。"},  # polarity in Chinese: disputed
]


def _state(mem: Memory) -> tuple:
    store, scope = mem.store, mem.scope(user="u")
    facts = sorted((f.content, f.status.value, f.key, f.version, f.supersedes is not None)
                   for f in store.list_facts(scope.identity, statuses=()))
    audit = [(e.action, e.code, e.content) for e in reversed(scope.audit(limit=1000))]
    def named(fact_id: str) -> str:
        fact = store.get_fact(scope.identity, fact_id)
        return fact.content if fact else fact_id

    reviews = sorted((r["kind"], r["reason"].split(":")[0] if r["kind"] == "held" else "",
                      tuple(sorted(named(i) for i in r["fact_ids"]))) for r in scope.review_queue())
    return facts, audit, reviews


def _outcomes(report) -> list:
    return [len(report.saved), len(report.candidates), len(report.duplicates), len(report.superseded),
            sorted(why.code for _, why in report.rejected), sorted(why.code for _, why in report.held)]


def _same_as_one_at_a_time(whole: Memory, single: Memory, items: list) -> None:
    """``items`` as one batch into ``whole`` and one per call into ``single``: the same outcomes and state."""
    batch = whole.scope(user="u").remember_many(items)
    totals = [0, 0, 0, 0, [], []]
    for item in items:
        for i, value in enumerate(_outcomes(single.scope(user="u").remember_many([item]))):
            totals[i] = sorted(totals[i] + value) if isinstance(value, list) else totals[i] + value
    assert _outcomes(batch) == totals
    assert _state(whole) == _state(single)


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request, tmp_path):
    """Memories holding BEFORE, on one backend. A batch reads what its decisions look up
    in a few queries and keeps it current as it writes (``Writer.look_ahead``); one item
    at a time reads the store afresh: these tests compare the two."""
    made, dsns = [], []

    def make(name: str) -> Memory:
        if request.param == "sqlite":
            target = str(tmp_path / f"{name}.db")
        else:
            from pg import postgres_or_skip

            target = postgres_or_skip()
            dsns.append(target)
        mem = Memory.open(target, clock=FixedClock(T0), embedder=None)
        mem.scope(user="u").remember_many(BEFORE)
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()
    for dsn in dsns:
        drop_database(dsn)


@pytest.fixture(params=[64, 2], ids=["chunk-64", "chunk-2"])
def chunk(request, monkeypatch):
    """The look-ahead's chunk: the default, and two candidates (many chunks in a short batch)."""
    monkeypatch.setattr(_Lookahead, "CHUNK", request.param)


def test_a_mixed_batch_decides_as_one_item_at_a_time(stores, chunk):
    whole, single = stores("whole"), stores("single")
    _same_as_one_at_a_time(whole, single, MIXED)
    facts, audit, reviews = _state(whole)
    kept = {content for content, status, *_ in facts if status == "committed"}
    assert {"The user reads 20 pages before bed.", "The user reads 30 pages before bed.",
            "The user lives in Lisbon with three cats."} <= kept
    assert "the user lives in lisbon with two cats" not in {content for content, *_ in facts}
    assert "Every morning the user drinks green tea." in kept
    assert "The user's editor is Helix." in kept and "The user's editor is Vim." not in kept
    assert "The user likes coffee." not in kept  # retired by the change
    assert not any("Tr0ub4dor" in (content or "") for *_, content in audit)
    conflicts = {pair for kind, _, pair in reviews if kind == "conflict"}
    assert conflicts == {("The user does not like tea.", "The user likes tea."),
                         ("The user eats steak every day.", "The user is vegetarian."),
                         ("用户不喜欢喝咖啡。", "用户喜欢喝咖啡。")}
    assert [code for kind, code, _ in reviews if kind == "held"] == ["held_language"]
    assert ("Пользователь любит чай по утрам.", "candidate") in {(content, status) for content, status, *_ in facts}


AGAIN = [  # a batch that meets itself and the store's history
    {"content": "The user lives in Lisbon with two cats."},
    {"content": "The user lives in Lisbon with two cats."},  # the same, twice in one batch
    {"content": "The user drinks green tea every morning."},  # forgotten before: said again on purpose
    {"content": "The user likes coffee.", "source_type": "inferred", "kind": "inference"},  # forgotten, inferred
    {"content": "The user's editor is Emacs.", "key": "editor"},
    {"content": "The user's editor is Emacs.", "key": "editor"},
    {"content": "The user's editor is Vim.", "key": "editor"},  # back again: the third version
    {"content": "The user has a meeting at 9.", "valid_until": "2025-12-31T00:00:00+00:00"},  # expired already
    {"content": "The user has a meeting at 9."},  # not a duplicate of an expired fact
    {"content": "The user likes tea."},
    {"content": "The user no longer likes tea."},  # retires the one just written
    {"content": "The user likes tea."},  # and back: a new fact, not a duplicate of the retired one
]


def test_a_batch_that_restates_retires_and_forgets_decides_as_one_at_a_time(stores, chunk):
    whole, single = stores("whole"), stores("single")
    for mem in (whole, single):
        scope = mem.scope(user="u")
        for fact in scope.facts():  # forget two of BEFORE: their tombstones are read with the batch
            if fact.content in ("The user drinks green tea every morning.", "The user likes coffee."):
                scope.forget(fact.id)
    _same_as_one_at_a_time(whole, single, AGAIN)
    facts = _state(whole)[0]
    assert ("The user drinks green tea every morning.", "committed") in {(c, s) for c, s, *_ in facts}
    assert "The user likes coffee." not in {c for c, s, *_ in facts if s in ("committed", "candidate")}
    assert [v for c, s, k, v, _ in facts if k == "editor" and s == "committed"] == [3]


def test_duplicates_are_found_however_many_facts_the_scope_holds(tmp_path):
    """The near-duplicate among thousands of facts that share its words: a keyword top-5
    would rank others first; the signature index finds it."""
    with Memory.open(tmp_path / "big.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        scope.remember_many([{"content": f"The user visited the green tea museum in Hangzhou on trip {n}."}
                             for n in range(2000)] + [{"content": "The user visited the green tea museum."}])
        report = scope.remember_many([{"content": "the user VISITED the green-tea museum"},
                                      {"content": "The user visited the green tea museum!"}])
        assert len(report.duplicates) == 2 and not report.saved
        assert {f.content for f in report.duplicate_of} == {"The user visited the green tea museum."}
        assert len(scope.facts()) == 2001


def test_a_contradiction_is_found_among_facts_that_share_its_words(tmp_path):
    with Memory.open(tmp_path / "c.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        scope.remember_many([{"content": f"The user likes coffee from shop number {n}."} for n in range(500)]
                            + [{"content": "The user likes coffee."}])
        scope.remember("The user doesn't like coffee anymore.")
        live = {f.content for f in scope.facts()}
        assert "The user likes coffee." not in live and "The user doesn't like coffee anymore." in live
        assert len(live) == 501


def test_an_expired_fact_is_not_a_duplicate_of_its_restatement(tmp_path):
    clock = FixedClock(T0)
    with Memory.open(tmp_path / "e.db", clock=clock) as mem:
        scope = mem.scope(user="u")
        first = scope.remember("The user is in Paris for a conference.", valid_until="2026-01-03T00:00:00+00:00")
        clock.advance(days=5)
        again = scope.remember("The user is in Paris for a conference.")
        assert again.id != first.id and again.status is Status.COMMITTED


def test_a_store_kept_before_signatures_gets_them_on_opening(tmp_path):
    """Facts an older release kept have no signatures: the migration computes them, so
    the gate finds their duplicates and contradictions as it finds new facts'."""
    import sqlite3

    path = tmp_path / "old.db"
    with Memory.open(path, clock=FixedClock(T0)) as mem:
        mem.scope(user="u").remember_many([{"content": "The user likes coffee."},
                                           {"content": "The user drinks green tea every morning."}])
        mem.scope(user="u").learn([{"id": "m1", "role": "user", "content": "I have a cat named Mochi."}])
    conn = sqlite3.connect(path)  # back to the schema before 0016: no signature columns
    for statement in ("DROP INDEX facts_by_sig_text", "DROP INDEX facts_by_sig_meaning", "DROP INDEX facts_by_sig_core",
                      "ALTER TABLE facts DROP COLUMN sig_text", "ALTER TABLE facts DROP COLUMN sig_meaning",
                      "ALTER TABLE facts DROP COLUMN sig_core", "DROP TABLE erasure_jobs", "DROP TABLE ingest_jobs",
                      "DELETE FROM archivist_migrations WHERE name >= '0016'"):
        conn.execute(statement)
    conn.commit()
    conn.close()
    with Memory.open(path, clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        assert len(scope.remember_many([{"content": "The user drinks the green tea every morning!"}]).duplicates) == 1
        scope.remember("The user doesn't like coffee anymore.")
        assert "The user likes coffee." not in {f.content for f in scope.facts()}
        rows = sqlite3.connect(path).execute("SELECT status, sig_text IS NULL, sig_core IS NULL FROM facts").fetchall()
        assert ("episode", 1, 1) in rows and all(not no_text for status, no_text, _ in rows if status != "episode")


# the red team's pairs (issue 33): each second statement is another fact, never a duplicate
NOT_THE_SAME = [
    ("The user takes 2.5 mg of warfarin daily.", "The user takes 25 mg of warfarin daily."),
    ("用户每天吃1.5片药。", "用户每天吃15片药。"), ("The user's rent is $1,500.", "The user's rent is $15.00."),
    ("The user was born on 1/12/1990.", "The user was born on 11/2/1990."),
    ("The user's class starts at 1:30.", "The user's class starts at 13:0."),
    ("The user keeps the freezer at -5 degrees.", "The user keeps the freezer at 5 degrees."),
    ("The user's blood type is A+.", "The user's blood type is A-."), ("The user codes in C++.", "The user codes in C#."),
    ("The user codes in C.", "The user codes in C++."), ("The user works with .NET.", "The user works with NET."),
    ("The user keeps notifications on.", "The user keeps notifications off."),
    ("The user is over 18.", "The user is under 18."),
    ("The user prefers Python over Java.", "The user prefers Java over Python."),
    ("The user likes coffee, not tea.", "The user likes tea, not coffee."),
    ("The user is not allergic to peanuts but is allergic to shellfish.",
     "The user is not allergic to shellfish but is allergic to peanuts."),
    ("用户对花生过敏，不对虾过敏。", "用户对虾过敏，不对花生过敏。"),
    ("用户喜欢猫，不喜欢狗。", "用户喜欢狗，不喜欢猫。"), ("他的工作是老师。", "她的工作是老师。"),
    ("The user was in Paris.", "The user is in Paris."), ("Alice's manager is Bob.", "Bob's manager is Alice."),
    # the second red team's: other dashes as signs, superscripts, symbols, emoji, in-word punctuation, "vitamin A"
    ("The user's freezer is at −20 degrees.", "The user's freezer is at 20 degrees."),
    ("The user's blood type is O−.", "The user's blood type is O."), ("The user takes 2³ mg.", "The user takes 23 mg."),
    ("The user's score is < 100.", "The user's score is > 100."), ("The user pays ₹500.", "The user pays ₩500."),
    ("The user plays in C♯.", "The user plays in C♭."), ("The user's pet is a 🐶.", "The user's pet is a 🐱."),
    ("The user likes 🍎.", "The user likes."), ("The user takes vitamin A daily.", "The user takes the vitamin daily."),
    ("The user's email is bob.smith@x.com.", "The user's email is bobsmith@x.com."),
    ("The user likes हिंदी.", "The user likes हिदी."), ("The user takes .5 mg.", "The user takes 5 mg."),
]
THE_SAME = [
    ("用户喜欢喝咖啡。", "用戶喜歡喝咖啡。"), ("用户每天早上都喝绿茶。", "用戶每天早上都喝綠茶。"),
    ("The user likes coffee.", "the user likes COFFEE"), ("The user likes coffee.", "User likes coffee!"),
]


@pytest.mark.parametrize("first,second", NOT_THE_SAME)
def test_another_number_mark_word_or_order_is_another_fact(tmp_path, first, second):
    with Memory.open(tmp_path / "n.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        report = scope.remember_many([{"content": first}, {"content": second}])
        assert not report.duplicates, report.duplicates
        assert {first, second} <= {f.content for f in scope.facts(include_history=True, include_candidates=True)}


@pytest.mark.parametrize("first,second", THE_SAME)
def test_a_restatement_in_other_characters_or_case_is_a_duplicate(tmp_path, first, second):
    with Memory.open(tmp_path / "s.db", clock=FixedClock(T0)) as mem:
        report = mem.scope(user="u").remember_many([{"content": first}, {"content": second}])
        assert len(report.duplicates) == 1 and report.duplicate_of[0].content == first


def test_an_explicit_statement_replaces_the_unconfirmed_candidate_it_restates(tmp_path):
    with Memory.open(tmp_path / "c.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        guess = scope.remember("The user likes oolong tea.", kind="inference")
        stated, outcome = scope.remember_with_outcome("The user likes oolong tea.")
        assert outcome == "stored" and stated.status is Status.COMMITTED and stated.supersedes == guess.id
        assert [f.content for f in scope.facts()] == ["The user likes oolong tea."]
        assert scope.remember_with_outcome("The user likes oolong tea.")[1] == "duplicate"


def test_an_explicit_statement_replaces_a_keyed_candidate_too(tmp_path):
    with Memory.open(tmp_path / "k.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        scope.remember("I live in Porto.")
        guess = scope.remember("I live in Lisbon.", kind="inference")
        assert scope.remember_with_outcome("I live in Lisbon.")[1] == "stored"
        assert scope.get(guess.id).status is Status.SUPERSEDED  # not left to be confirmed later
        assert [f.content for f in scope.facts()] == ["I live in Lisbon."]


def test_refusing_forgotten_words_does_not_write_them_back_into_the_audit(tmp_path):
    """Red team: a client re-sending its history after a forget put the words back."""
    with Memory.open(tmp_path / "a.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        turns = [{"id": "m1", "role": "user", "content": "I live in Qvzorbatown."}]
        scope.learn(turns, thread_id="t1")
        scope.forget(next(f for f in scope.facts() if "Qvzorbatown" in f.content).id)
        scope.learn(turns, thread_id="t1")
        assert "Qvzorbatown" not in repr(scope.audit(limit=1000)) and scope.facts() == []
        assert mem.store.wait_for_erasure(timeout=60)
    from conftest import file_bytes

    assert b"Qvzorbatown" not in file_bytes(tmp_path / "a.db")


def test_cannot_contradicts_can(tmp_path):
    with Memory.open(tmp_path / "k.db", clock=FixedClock(T0)) as mem:
        scope = mem.scope(user="u")
        scope.remember("The user can swim.")
        scope.remember("The user cannot swim.")
        assert [r["kind"] for r in scope.review_queue()] == ["conflict"]


def test_a_batch_larger_than_the_drivers_parameter_limit_is_written(tmp_path):
    """A batch's look-up carries every candidate's signatures: it is split into statements
    a SQLite built with the oldest limit (999 parameters) takes (red team: 11,500 items
    failed whole under the common 32,766 limit)."""
    import sqlite3

    with Memory.open(tmp_path / "m.db", clock=FixedClock(T0), embedder=None) as mem:
        mem.store.db.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        items = [{"content": f"The user owns box number {n} of the red shelf."} for n in range(1_200)]
        report = mem.scope(user="u").remember_many(items)
        assert len(report.saved) == 1_200 and not report.rejected
        again = mem.scope(user="u").remember_many(items[:600])  # and each is found again
        assert len(again.duplicates) == 600


@pytest.mark.parametrize("bad", [
    {"content": "The user likes golf.", "thread_id": "t\x00x"},
    {"content": '{"a": "\\u0000"} The user likes golf.'},  # a NUL escaped in JSON-held text
], ids=["nul-thread", "json-nul-content"])
def test_text_no_backend_holds_refuses_its_item_not_the_batch(stores, bad):
    mem = stores("m")
    report = mem.scope(user="u").remember_many([{"content": "The user likes jazz."}, bad,
                                                {"content": "The user lives in Porto."}])
    assert [why.code for _, why in report.rejected] == ["invalid_text"]
    assert {"The user likes jazz.", "The user lives in Porto."} <= {f.content for f in report.saved}


def test_a_batch_read_in_several_chunks_decides_as_one_at_a_time(stores):
    """The look-ahead reads a chunk of candidates at a time: items that restate, retire,
    contradict or update items of an earlier chunk, and facts kept before the batch."""
    whole, single = stores("whole"), stores("single")
    words = ["chess", "golf", "tennis", "jazz", "opera", "sushi", "hiking", "knitting", "poetry", "rowing"]
    first = [{"content": f"The user likes {w} number {n}."} for n in range(8) for w in words]  # past one chunk
    later = []
    for n, w in enumerate(words * 4):
        kind = n % 5
        if kind == 0:
            later.append({"content": f"the user likes {w} number {n % 8}!"})  # restates an earlier chunk's item
        elif kind == 1:
            later.append({"content": f"The user doesn't like {w} number {n % 8} anymore."})  # retires one
        elif kind == 2:
            later.append({"content": f"The user does not like {w} number {n % 8}."})  # disputes one
        elif kind == 3:
            later.append({"content": f"The user's editor is {w.title()}.", "key": "editor"})  # keyed updates
        else:
            later.append({"content": "The user drinks green tea every morning."})  # kept before the batch
    _same_as_one_at_a_time(whole, single, first + later)


@pytest.mark.parametrize("item, said", [
    ({"content": "The user's trial ends soon.", "valid_untill": "2027-01-01T00:00:00+00:00"}, "'valid_until'"),
    ({"contnet": "The user likes tea."}, "'content'"),
    ({"content": "The user likes tea.", "Category": "preference"}, "'category'"),
    ({"content": "The user likes tea.", "metadata": {"a": 1}}, "known: authority, category"),
])
def test_an_unknown_field_refuses_its_item_and_names_the_field(tmp_path, item, said):
    """A misspelt field is not dropped without a word: the item is refused with the
    field's name (and the closest known one); the batch's other items are written."""
    mem = Memory.open(tmp_path / "m.db", clock=FixedClock(T0))
    s = mem.scope(user="alice")
    report = s.remember_many([item, {"content": "The user lives in Lisbon."}])
    assert [f.content for f in report.saved] == ["The user lives in Lisbon."]
    (_, why), = report.rejected
    assert why.code == "invalid_field" and said in why.reason
    with pytest.raises(InvalidCandidate, match="invalid_field"):
        s.remember_with_outcome("The user likes jazz.", **{k: v for k, v in item.items() if k != "content"})
    assert [f.content for f in s.facts(include_candidates=True)] == ["The user lives in Lisbon."]
    mem.close()
