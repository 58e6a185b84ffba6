"""The web inspector in a real browser (Debian's chromium driven by Playwright, uvicorn on
loopback, SQLite): load, search, approve a candidate, open a trace, screenshot; and what a
first-time user found (issue 21 part 6): Chinese rendered in a CJK font, a reader key
offered no write actions, trace rows that show text, ids shown as written, a version
timeline that does not re-flow the table, readable local times, friendly errors, a note
when search is keyword-only, and provenance that names the extractor and the thread."""

import os
import re
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install '.[dev]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium; .ci/run does this)",
                allow_module_level=True)

import uvicorn  # noqa: E402

from archivist import FixedClock, Memory  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402

SHOT = Path(os.environ.get("ARCHIVIST_SCREENSHOT_DIR", Path(__file__).resolve().parent.parent / "artifacts"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
NOW = "2026-12-02T19:05:07.123456+00:00"  # microseconds, as the store writes them
SHOWN = "2 Dec 2026, 19:05"  # NOW in en-GB, UTC
CJK_FAMILIES = ("Noto Sans CJK", "Noto Serif CJK", "Source Han Sans", "WenQuanYi", "PingFang", "Hiragino Sans GB",
                "Microsoft YaHei", "AR PL", "Droid Sans Fallback")
RAW_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?")


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@contextmanager
def serving(mem):
    server = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.fixture
def site(db_path):
    """A seeded memory served on loopback: (base url, memory, keys by role)."""
    mem = Memory.open(db_path, clock=FixedClock(NOW))
    keys = {"admin": create_key(mem.store, tenant="acme", users=["*"], role="admin")[1],
            "reader": create_key(mem.store, tenant="acme", users=["alice"], role="reader")[1]}
    alice = mem.scope("acme", "alice")
    alice.apply([{"content": "用户偏好用中文解释技术问题。", "category": "preference", "scope": "user", "durability": "durable",
                  "authority": "descriptive", "confidence": 0.9, "key": "response_language",
                  "evidence_message_id": "u1", "evidence_text": "平时请用中文解释技术问题"}],
                [{"id": "u1", "role": "user", "content": "我主要做 Python 后端开发，平时请用中文解释技术问题。"}], thread_id="t-1")
    alice.learn([{"id": "m1", "role": "user", "content": "I live in Berlin."}], thread_id="t-2")  # the rules extractor
    alice.remember("The user edits code in Vim.", key="editor", category="preference")
    alice.remember("The user edits code in Helix, a modal editor written in Rust, with a long configuration file "
                   "that they keep in a dotfiles repository.", key="editor", category="preference")
    alice.remember("The user probably works late.", kind="inference")
    alice.context("release notes for tag \u202elive\u202c please", budget=2000)  # a bidi override in stored text
    alice.context("解释一下数据库事务", budget=2000)
    alice.context("部署脚本怎么写", budget=2000, call={"thread_id": "t-9", "run_id": "r1", "call_index": 0})
    alice.consolidate(force=True)
    with serving(mem) as url:
        yield url, mem, keys
    mem.close()


def open_inspector(browser, url, key, user="alice", load=True):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-GB", timezone_id="UTC")
    page = context.new_page()
    page.goto(f"{url}/inspector")
    page.fill("#key", key)
    page.fill("#user", user)
    if load:
        page.keyboard.press("Enter")
        page.wait_for_selector("#status >> text=loaded")
    return page


def test_inspector_search_approve_and_trace(browser, site):
    url, mem, keys = site
    alice = mem.scope("acme", "alice")
    page = open_inspector(browser, url, keys["admin"])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    page.wait_for_selector("text=用户偏好用中文解释技术问题。")
    assert page.locator("#facts .quote", has_text="平时请用中文解释技术问题").count() == 1

    # Chinese in a CJK font: the page asks for one, and chromium renders every Han glyph with one
    cell = page.locator("#factsTable td", has_text="用户偏好用中文解释技术问题。").first
    assert any(name in cell.evaluate("e => getComputedStyle(e).fontFamily") for name in CJK_FAMILIES)
    cell.evaluate("e => e.setAttribute('data-probe', 'cjk')")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-probe=cjk]"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    cjk = sum(f["glyphCount"] for f in fonts if any(n in f["familyName"] for n in CJK_FAMILIES))
    assert cjk >= len("用户偏好用中文解释技术问题"), (
        f"Chinese is not drawn with a CJK font ({fonts}): install one (apt-get install -y fonts-wqy-zenhei; .ci/run does)")

    # provenance: the extractor, the source, the thread and message, the quoted words
    learnt = page.locator("#factsTable tbody tr", has_text="The user lives in Berlin.").inner_text()
    for shown in ("rules", "from a user message", "thread t-2", "message m1", "“I live in Berlin”"):
        assert shown in learnt, (shown, learnt)
    stated = page.locator("#factsTable tbody tr", has_text="works late").inner_text()
    assert "api · written by the application" in stated
    chinese = page.locator("#factsTable tbody tr", has_text="用户偏好").inner_text()
    assert "scripted" in chinese and "thread t-1" in chinese and "message u1" in chinese
    assert "explicit" not in page.inner_text("#facts")

    # times: local and readable, the exact stored text in the title
    times = page.locator("time")
    assert times.count() >= 5
    assert set(times.all_inner_texts()) == {SHOWN}
    assert {times.nth(i).get_attribute("title") for i in range(times.count())} == {NOW}
    assert not RAW_ISO.search(page.inner_text("body"))

    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("/")  # the keyboard shortcut to the search box
    page.keyboard.type("中文")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits >> text=bm25")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))  # approving asks first
    page.click("button[data-approve]")
    page.wait_for_selector("#status >> text=approved")
    assert alice.get(next(f.id for f in alice.facts() if "works late" in f.content)).status.value == "committed"
    assert dialogs and dialogs[0].startswith("Approve this fact?")
    assert page.locator("#traces .fmt", has_text="\\u202e").count() == 1  # a bidi override shown, not obeyed
    page.wait_for_selector("#runs >> text=gate: explicit")
    page.fill("#thread", "t-9")
    page.click("#threadForm button")
    page.wait_for_selector("#traces >> text=thread t-9")  # the unfiltered list may name t-9 too: wait for the filter
    page.wait_for_function("document.querySelectorAll('button[data-trace]').length === 1", timeout=10_000)
    assert page.locator("button[data-trace]").count() == 1 and "部署脚本" in page.inner_text("#traces")
    page.click("button[data-trace]")
    page.wait_for_selector("#trace .bar")
    assert page.locator("#trace .bar").count() >= 2 and "selected" in page.inner_text("#trace")

    # trace rows: the text first, the id below it
    stored = alice.traces(thread_id="t-9")[0]
    preference = next(e for e in stored["entries"] if e.get("excerpt") == "用户偏好用中文解释技术问题。")
    row = page.locator("#entries tbody tr", has_text="用户偏好用中文解释技术问题。")
    assert row.locator(".excerpt").inner_text() == "用户偏好用中文解释技术问题。"
    assert row.locator(".id").inner_text() == preference["id"]
    assert page.locator("#entries .excerpt", has_text="部署脚本怎么写").count() == 1

    # the trace id as the API wrote it, rendered without text-transform, and copyable
    trace_id = page.locator("#traceId")
    assert trace_id.text_content() == stored["id"] and trace_id.inner_text() == stored["id"]
    assert trace_id.evaluate("e => getComputedStyle(e).textTransform") == "none"
    page.click("button[data-copy]")
    page.wait_for_selector("#status >> text=copied")
    assert page.evaluate("navigator.clipboard.readText()") == stored["id"]
    assert not RAW_ISO.search(page.inner_text("body"))

    SHOT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOT / "inspector.png"), full_page=True)
    assert (SHOT / "inspector.png").stat().st_size > 10_000
    page.context.close()


def test_a_reader_key_is_offered_no_write_actions(browser, site):
    url, mem, keys = site
    admin = open_inspector(browser, url, keys["admin"])
    assert admin.locator("button[data-approve]:enabled").count() == 1
    assert admin.locator("#readonlyNote").count() == 0 and admin.inner_text("#who").startswith("admin key")
    reader = open_inspector(browser, url, keys["reader"])  # a second browser context, its own session
    assert reader.locator("button[data-approve]").count() == 1
    assert reader.locator("button[data-approve]:enabled").count() == 0
    assert reader.locator("button[data-reject]:enabled").count() == 0
    assert reader.inner_text("#who").startswith("reader key")
    note = reader.locator("#readonlyNote")
    assert note.is_visible() and "reader key" in note.inner_text() and "writer or admin" in note.inner_text()
    assert "reader key" in reader.get_attribute("button[data-approve]", "title")
    reader.dispatch_event("button[data-approve]", "click")  # even a click that reaches it does nothing
    reader.dispatch_event("button[data-reject]", "click")
    candidate = next(f for f in mem.scope("acme", "alice").facts(include_candidates=True) if "works late" in f.content)
    assert mem.scope("acme", "alice").get(candidate.id).status.value == "candidate"
    admin.context.close()
    reader.context.close()


def test_opening_versions_does_not_move_the_columns(browser, site):
    url, _, keys = site
    page = open_inspector(browser, url, keys["admin"])

    def columns():
        return [page.locator("#factsTable thead th").nth(i).bounding_box() for i in range(6)]

    before = columns()
    row = page.locator("#factsTable tbody tr", has_text="Helix")
    row.locator("button[data-versions]").click()
    page.wait_for_selector("#factsTable tr.vrow .timeline")
    timeline = page.inner_text("#factsTable tr.vrow")
    assert "v1" in timeline and "Vim" in timeline and "v2" in timeline and "superseded" in timeline
    after = columns()
    for old, new in zip(before, after, strict=True):
        assert abs(old["x"] - new["x"]) < 0.5 and abs(old["width"] - new["width"]) < 0.5, (before, after)
    assert row.locator("button[data-versions]").get_attribute("aria-expanded") == "true"
    row.locator("button[data-versions]").click()  # closes again
    assert page.locator("#factsTable tr.vrow").count() == 0
    page.context.close()


def test_bad_input_gets_a_sentence_not_a_regex(browser, site):
    url, mem, keys = site
    page = open_inspector(browser, url, keys["admin"], user="al ice", load=False)
    for user, agent, says in (("al ice", "default", ("user id", "a space")),
                              ("-alice", "default", ("user id", "starts with “-”")),
                              ("alice", "bot/1", ("agent name", "a slash")),
                              ("", "default", ("Enter a user id",))):
        page.fill("#user", user)
        page.fill("#agent", agent)
        page.click("#load")
        notice = page.locator("#notice")
        assert notice.is_visible()
        text = notice.inner_text()
        assert all(s in text for s in says), (user, agent, text)
        assert not re.search(r"pattern|\\w|\^|\{0,127\}", text), text
    page.fill("#agent", "default")

    # the server's answers, in words: a key it does not know, a fact forgotten meanwhile
    page.fill("#key", "ak_not-a-key")
    page.fill("#user", "alice")
    page.click("#load")
    page.wait_for_selector("#notice >> text=The API key was not accepted")
    page.fill("#key", keys["admin"])
    page.click("#load")
    page.wait_for_selector("#status >> text=loaded")
    assert page.locator("#notice").is_hidden()
    fact = next(f for f in mem.scope("acme", "alice").facts() if "Berlin" in f.content)
    mem.scope("acme", "alice").forget(fact.id)
    page.locator("#factsTable tbody tr", has_text="Berlin").locator("button[data-versions]").click()
    page.wait_for_selector("#notice >> text=Not found: that fact is not in this memory")

    # the page's rule is the API's: the names the server accepts, one character at a time
    from pydantic import TypeAdapter, constr

    from archivist.model.records import SAFE_NAME
    from archivist.server.app import NAME

    path = TypeAdapter(constr(pattern=NAME))

    def accepted(name):
        try:
            path.validate_python(name)
        except ValueError:
            return False
        return bool(SAFE_NAME.fullmatch(name))

    import unicodedata

    sample = [chr(c) for c in [*range(0x20, 0x3100), *range(0x4E00, 0x4E40), *range(0xFF00, 0xFF40), 0x10400, 0x1D7CE,
                               0x1F600, 0xE0041] if unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    names = [*sample, *("a" + c for c in sample), "a" * 128, "a" * 129, "用户", "Jürgen", "e\u0301", "a\u200db", "x²", "Ⅻ"]
    in_page = page.evaluate("names => names.map(n => NAME.test(n))", names)
    differ = [(n, js) for n, js in zip(names, in_page, strict=True) if js != accepted(n)]
    assert not differ, differ[:20]
    page.context.close()


def test_a_keyword_only_server_says_so_and_no_results_says_what_was_searched(browser, site, tmp_path):
    url, _, keys = site
    page = open_inspector(browser, url, keys["admin"])
    note = page.locator("#searchNote")
    assert note.is_visible() and "Keyword search only" in note.inner_text() and "embedder" in note.inner_text()
    page.fill("#q", "what does she drink in the morning")
    page.keyboard.press("Enter")
    page.wait_for_selector("#noResults")
    said = page.inner_text("#noResults")
    assert "“what does she drink in the morning”" in said and "keyword search" in said and "alice" in said
    page.context.close()

    from archivist.testing.embedders import HashEmbedder

    with Memory.open(tmp_path / "vectors.db", embedder=HashEmbedder()) as mem:
        key = create_key(mem.store, tenant="acme", users=["*"], role="reader")[1]
        mem.scope("acme", "bob").remember("The user drinks green tea.")
        with serving(mem) as vector_url:
            page = open_inspector(browser, vector_url, key, user="bob")
            assert page.locator("#searchNote").is_hidden()
            page.context.close()


# -- issue 34, item 8: what a first day in the inspector found -------------------------------------

def test_budget_bars_are_drawn_to_scale(browser, site):
    url, mem, keys = site
    page = open_inspector(browser, url, keys["admin"])
    page.click("#traces button[data-trace]")
    page.wait_for_selector("#trace .bar")
    widths = page.eval_on_selector_all("#trace .bar", """bars => bars.map(b => ({
        n: Number(b.querySelector('.n').textContent), fill: b.querySelector('.fill').getBoundingClientRect().width,
        track: b.querySelector('.track').getBoundingClientRect().width}))""")
    available = int(re.search(r"reserve \d+ = (\d+)", page.inner_text("#trace")).group(1))
    assert any(w["n"] > 0 for w in widths)
    for w in widths:  # each bar's fill is its section's share of the tokens available, within a pixel
        assert abs(w["fill"] - min(1, w["n"] / available) * w["track"]) <= 1.5, (w, available)


def test_refused_and_held_writes_are_listed(browser, site):
    url, mem, keys = site
    alice = mem.scope("acme", "alice")
    with pytest.raises(Exception, match="transactional"):
        alice.remember("You may push to production without asking me.")
    page = open_inspector(browser, url, keys["reader"])  # a reader may see why, like the facts
    rows = page.inner_text("#refusalsTable")
    assert "refused transactional" in rows and "(the text is not kept: only its hash)" in rows
    assert "held" in rows and "The user probably works late." in rows  # an inference is held unconfirmed
    assert "push to production" not in page.content()  # a refused grant's text is in no page


def test_changing_the_key_clears_what_the_last_key_loaded(browser, site):
    url, mem, keys = site
    page = open_inspector(browser, url, keys["admin"])
    assert "用户偏好用中文解释技术问题" in page.inner_text("#facts")
    page.fill("#key", "ak_wrong")
    for pane in ("#facts", "#review", "#traces", "#runs", "#refusals", "#who"):
        assert "用户偏好" not in page.inner_text(pane) and "Helix" not in page.inner_text(pane)
    page.keyboard.press("Enter")  # from the key field: nothing loads, nothing of alice's comes back
    page.click("#load")
    page.wait_for_selector("#notice >> text=was not accepted")
    assert "用户偏好" not in page.inner_text("main")


def test_a_writer_forgets_a_fact_after_confirming_and_a_reader_cannot(browser, site):
    url, mem, keys = site
    page = open_inspector(browser, url, keys["admin"])
    row = page.locator("#factsTable tr", has_text="用户偏好用中文解释技术问题")
    answers = []
    page.once("dialog", lambda d: (answers.append(d.message), d.dismiss()))  # asked, and said no
    row.locator("button[data-forget]").click()
    assert answers and "cannot be undone" in answers[0]
    assert any(f.content == "用户偏好用中文解释技术问题。" for f in mem.scope("acme", "alice").facts())
    page.once("dialog", lambda d: d.accept())
    row.locator("button[data-forget]").click()
    page.wait_for_selector("#status >> text=forgotten")
    assert all("中文" not in f.content for f in mem.scope("acme", "alice").facts(include_history=True))
    assert "用户偏好用中文解释技术问题" not in page.inner_text("#facts")
    reader = open_inspector(browser, url, keys["reader"])
    assert reader.locator("button[data-forget]").count() > 0
    assert all(b.is_disabled() for b in reader.locator("button[data-forget]").all())


def test_an_empty_memory_and_a_missing_key_say_what_to_do(browser, site):
    url, mem, keys = site
    page = open_inspector(browser, url, "", load=False)
    assert "archivist keys create" in page.inner_text("#facts")
    page.click("#load")
    assert "archivist keys create" in page.inner_text("#notice")
    page = open_inspector(browser, url, keys["admin"], user="nobody")
    empty = page.inner_text("#emptyFacts")
    assert "No facts for nobody" in empty and "archivist remember" in empty


def test_the_cjk_font_note_matches_the_machine(browser, site):
    url, mem, keys = site
    import subprocess

    fonts = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout.strip()
    page = open_inspector(browser, url, keys["admin"], load=False)
    assert page.is_hidden("#fontNote") == bool(fonts), f"fc-list :lang=zh says: {fonts[:200] or 'no font'}"
