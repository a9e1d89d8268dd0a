"""The chat page in a real browser: Debian's chromium driven by Playwright (never Playwright's own
download), against the real ``llmem-host`` with three real servers and the scripted fake model.

Skipped, with the reason, where no chromium is installed (``.ci/run`` installs it). With
``LLMEM_SCREENSHOTS=<folder>`` the test also saves what it saw, wide and on a phone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._browser import CHROMIUM, FLAGS
from tests.fake_models import FakeOpenAI
from tests.host_harness import KEY, HostProcess, make_workspace, running_host, write_config
from tests.test_host_web import PLOT, model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the 'test' extra")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("page")
    ws = make_workspace(root)
    config = write_config(ws, root / "mcp.json")
    with FakeOpenAI(model) as fake:
        args = ("--provider", "openai", "--base-url", fake.base_url, "--model", "llama3.1:8b")
        with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as process:
            yield process


def shot(page: Any, name: str) -> None:
    folder = os.environ.get("LLMEM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=False)


def ask(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.click("#send")
    page.wait_for_selector("#send[data-mode='stop']", timeout=30_000)
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)


def test_a_conversation_in_the_browser(browser: Any, host: HostProcess) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:")) else None
        ),
    )
    page.goto(host.url)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    assert "llama3.1:8b" in page.inner_text("#provider")
    assert not page.is_visible("#standin-badge")

    # streamed answer, four tool steps, the closest approach from the tool's result
    ask(page, "What was the closest approach between NELSON and COLLINGWOOD?")
    assert page.locator(".tool-step[data-state='complete']").count() == 4
    answer = page.locator(".msg.assistant").last.inner_text()
    assert "The closest approach was 119.5 yd" in answer
    step = page.locator(".tool-step").last
    step.locator("summary").click()
    assert "closest-approach" in step.inner_text()

    # the picture, inline
    ask(page, "Show me a picture of it")
    image = page.locator(".chat-image img").last
    image.wait_for(timeout=30_000)
    assert page.evaluate("(img) => img.complete && img.naturalWidth > 100", image.element_handle())

    # a destructive call: the card, then Deny
    page.fill("#input", "Parse the project first, so there is something: annotate app.py")
    page.click("#send")
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)
    page.fill("#input", "Please clean the store")
    page.click("#send")
    card = page.locator(".confirm-card").last
    card.wait_for(timeout=30_000)
    assert "llmem:delete_artifact" in card.inner_text()
    shot(page, "host-confirm.png")
    card.locator("button.deny").click()
    page.wait_for_selector("#send[data-mode='send']", timeout=60_000)
    assert "nothing was deleted" in page.locator(".msg.assistant").last.inner_text()
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("#conversation").evaluate("(c) => c.scrollIntoView()")

    # the stop button cancels a slow answer
    page.fill("#input", "a slow answer please")
    page.click("#send")
    page.wait_for_selector("#send[data-mode='stop']", timeout=30_000)
    page.wait_for_function("document.querySelectorAll('.msg.assistant').length > 0", timeout=30_000)
    page.keyboard.press("Escape")  # as the Stop button: the answer would stream for 20 s
    page.wait_for_selector("#send[data-mode='send']", timeout=8_000)

    # a reload resumes the session: the conversation is drawn again from the host's history
    before = page.locator(".msg.user").count()
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.wait_for_function(f"document.querySelectorAll('.msg.user').length === {before}", timeout=30_000)
    assert page.locator(".tool-step").count() >= 6
    assert page.locator(".chat-image img").count() == 1  # the picture comes back with the history

    # New chat: an empty conversation in a new session
    session = page.evaluate("Object.values(sessionStorage)[0]")
    page.click("#new-chat")
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.wait_for_function(f"Object.values(sessionStorage)[0] && Object.values(sessionStorage)[0] !== {session!r}")
    assert page.locator(".msg.user").count() == 0 and page.is_visible("#welcome")

    assert errors == [] and outside == []
    context.close()


def test_the_page_fits_a_phone_and_shows_the_picture(browser: Any, host: HostProcess) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(host.url)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    ask(page, "What was the closest approach between NELSON and COLLINGWOOD?")
    ask(page, "Show me a picture of it")
    page.locator(".chat-image img").last.wait_for(timeout=30_000)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, width
    box = page.locator("#input").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844  # the input stays on screen
    shot(page, "host-phone.png")
    context.close()


def test_a_wide_screenshot_for_the_readme(browser: Any, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json")
    with FakeOpenAI(model) as fake:
        args = ("--provider", "openai", "--base-url", fake.base_url, "--model", "llama3.1:8b")
        with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as host:
            readme_screenshot(browser, host)


def readme_screenshot(browser: Any, host: HostProcess) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(host.url)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    ask(page, "What was the closest approach between NELSON and COLLINGWOOD?")
    ask(page, "Show me a picture of it")
    page.locator(".chat-image img").last.wait_for(timeout=30_000)
    assert page.locator(".tool-step[data-state='complete']").count() == 5
    assert PLOT in (page.locator(".tool-step").nth(2).text_content() or "")
    page.locator(".msg.user").first.evaluate("(m) => m.scrollIntoView({block: 'start'})")
    shot(page, "host-page.png")
    context.close()
