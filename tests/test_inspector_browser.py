"""The web inspector in a real browser (Debian's chromium driven by Playwright):
load, search, approve a candidate, open a trace, screenshot."""

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install '.[dev]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium; .ci/run does this)",
                allow_module_level=True)

import uvicorn  # noqa: E402

from archivist import Memory  # noqa: E402
from archivist.server.app import create_app  # noqa: E402
from archivist.server.keys import create_key  # noqa: E402

SHOT = Path(os.environ.get("ARCHIVIST_SCREENSHOT_DIR", Path(__file__).resolve().parent.parent / "artifacts"))


def test_inspector_search_approve_and_trace(db_path, clock):
    mem = Memory.open(db_path, clock=clock)
    key = create_key(mem.store, tenant="acme", users=["*"], role="admin")[1]
    alice = mem.scope("acme", "alice")
    alice.apply([{"content": "用户偏好用中文解释技术问题。", "category": "preference", "scope": "user", "durability": "durable",
                  "authority": "descriptive", "confidence": 0.9, "key": "response_language",
                  "evidence_message_id": "u1", "evidence_text": "平时请用中文解释技术问题"}],
                [{"id": "u1", "role": "user", "content": "我主要做 Python 后端开发，平时请用中文解释技术问题。"}])
    alice.remember("The user probably works late.", kind="inference")
    alice.context("release notes for tag \u202elive\u202c please", budget=2000)  # a bidi override in stored text
    alice.context("解释一下数据库事务", budget=2000)
    alice.context("部署脚本怎么写", budget=2000, call={"thread_id": "t-9", "run_id": "r1", "call_index": 0})
    alice.consolidate(force=True)
    server = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/inspector")
            page.fill("#key", key)
            page.fill("#user", "alice")
            page.keyboard.press("Enter")
            page.wait_for_selector("text=用户偏好用中文解释技术问题。")
            assert page.locator("#facts .quote", has_text="平时请用中文解释技术问题").count() == 1
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
            page.wait_for_selector("#traces >> text=thread t-9")
            assert page.locator("button[data-trace]").count() == 1 and "部署脚本" in page.inner_text("#traces")
            page.click("button[data-trace]")
            page.wait_for_selector("#trace .bar")
            assert page.locator("#trace .bar").count() >= 2 and "selected" in page.inner_text("#trace")
            SHOT.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOT / "inspector.png"), full_page=True)
            browser.close()
        assert (SHOT / "inspector.png").stat().st_size > 10_000
    finally:
        server.should_exit = True
        thread.join(5)
        mem.close()

