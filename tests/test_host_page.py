"""The chat page in a real browser: Debian's chromium driven by Playwright (never Playwright's own
download), against the real ``llmem-host`` with three real servers and the scripted fake model.

Skipped, with the reason, where no chromium is installed (``.ci/run`` installs it). With
``LLMEM_SCREENSHOTS=<folder>`` the test also saves what it saw, wide and on a phone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmem.host.providers.standin_plays import SUGGESTIONS
from tests._browser import shot
from tests.fake_models import FakeOpenAI
from tests.host_harness import KEY, HostProcess, make_workspace, running_host, stand_in_host, write_config
from tests.test_host_web import PLOT, model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("page")
    ws = make_workspace(root)
    config = write_config(ws, root / "mcp.json")
    with FakeOpenAI(model) as fake:
        args = ("--provider", "openai", "--base-url", fake.base_url, "--model", "llama3.1:8b")
        with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as process:
            yield process


def ask(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.click("#send")
    page.wait_for_selector("#send[data-mode='stop']", timeout=30_000)
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)


def watched_page(browser: Any, url: str, outside: list[str] | None = None) -> tuple[Any, Any, list[str]]:
    """A wide page open at ``url`` and connected, and the errors its scripts report; ``outside``
    collects any request that leaves this machine."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    if outside is not None:
        local = ("http://127.0.0.1", "ws://127.0.0.1", "data:")
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(local) else None)
    page.goto(url)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    return context, page, errors


def test_a_conversation_in_the_browser(browser: Any, host: HostProcess) -> None:
    outside: list[str] = []
    context, page, errors = watched_page(browser, host.url, outside)
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
    page.locator(".msg.assistant").first.wait_for(timeout=30_000)
    page.keyboard.press("Escape")  # as the Stop button: the answer would stream for 20 s
    page.wait_for_selector("#send[data-mode='send']", timeout=8_000)

    # a reload resumes the session: the conversation is drawn again from the host's history
    before = page.locator(".msg.user").count()
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.locator(".msg.user").nth(before - 1).wait_for(timeout=30_000)  # (the page's CSP forbids string waits)
    assert page.locator(".msg.user").count() == before
    assert page.locator(".tool-step").count() >= 6
    assert page.locator(".chat-image img").count() == 1  # the picture comes back with the history

    # New chat: an empty conversation in a new session
    session = page.evaluate("Object.values(sessionStorage)[0]")
    page.click("#new-chat")  # at once: the chat is kept under Chats
    page.wait_for_selector("#welcome", state="visible", timeout=30_000)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.wait_for_selector(f"body[data-session]:not([data-session={session!r}])", state="attached", timeout=30_000)
    assert page.evaluate("Object.values(sessionStorage)[0]") not in (None, session)
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


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    """The README's "try it": the two REP files alone, and the stand-in."""
    with stand_in_host(tmp_path_factory.mktemp("stand-in")) as process:
        yield process


def send(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.click("#send")
    page.wait_for_selector("#send[data-mode='stop']", timeout=30_000)


def step_rows(page: Any) -> list[tuple[str, str, str]]:
    """Each step's header as the person reads it: what ran, its outcome, its one-line result."""
    return [
        (
            step.locator(".tool-short").inner_text(),
            step.get_attribute("data-outcome") or "",
            step.locator(".step-preview").inner_text(),
        )
        for step in page.locator(".tool-step").all()
    ]


def test_the_stand_in_plays_the_readme_through_as_a_person_expects(browser: Any, stand_in: HostProcess) -> None:
    outside: list[str] = []
    context, page, errors = watched_page(browser, stand_in.url, outside)
    assert page.is_visible("#standin-badge")
    # the suggestions are what the stand-in plays through, and the first is the README's question
    assert [c.inner_text() for c in page.locator(".chip").all()] == list(SUGGESTIONS)
    shot(page, "standin-welcome.png")
    page.locator(".chip").first.click()  # a suggestion is sent at once
    page.wait_for_selector("#send[data-mode='stop']", timeout=30_000)
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)
    rows = step_rows(page)
    assert [r[:2] for r in rows] == [
        ("debrief_list_plots", "done"),
        ("run_tool · import-rep", "done"),
        ("run_tool · import-rep", "done"),
        ("debrief_create_plot", "done"),
        ("run_tool · closest-approach", "done"),
        ("debrief_render_plot", "done"),
    ]
    assert rows[4][2] == "119.5 yd at 10:45:09Z" and rows[1][2] == "NELSON (402 fixes) · ⚠ 1 warning"
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert answer.startswith(
        "The closest approach between NELSON and COLLINGWOOD was 119.5 yd at 10:45:09Z on 12 Dec 1995."
    )
    # the turn's last line is above the input bar, not under it
    last = page.locator(".msg.assistant").last.bounding_box()
    assert last["y"] + last["height"] <= page.locator(".composer-wrap").bounding_box()["y"] + 1
    assert page.get_attribute("#input", "placeholder") == "Ask about a plot or the code…"  # the three servers
    page.locator(".msg.user").first.evaluate("(m) => m.scrollIntoView({block: 'start'})")
    shot(page, "standin-answer.png")
    whole = page.locator("#conversation").evaluate("(c) => c.scrollHeight")
    page.set_viewport_size({"width": 1280, "height": min(whole + 180, 2400)})  # the whole turn, for the README
    page.locator(".msg.user").first.evaluate("(m) => m.scrollIntoView({block: 'start'})")
    shot(page, "standin-readme.png")
    page.set_viewport_size({"width": 1280, "height": 900})

    # scrolled up, "↓ Latest" shows in the input's hint line, over no message; at the bottom it goes
    page.mouse.move(640, 300)
    page.mouse.wheel(0, -3000)
    page.wait_for_selector("#jump", state="visible", timeout=10_000)
    pill, scroller = page.locator("#jump").bounding_box(), page.locator("#scroller").bounding_box()
    assert pill["y"] >= scroller["y"] + scroller["height"], (pill, scroller)
    shot(page, "standin-latest.png")
    page.click("#jump")
    page.wait_for_selector("#jump", state="hidden", timeout=10_000)

    # a click on the picture opens it larger, fitted to the window; the server draws it again, the
    # same moment, with more pixels; Fit, 100% and zoom in/out work on it
    inline = page.locator(".chat-image img").last
    small = inline.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
    inline.click()
    assert page.is_visible("#zoom-dialog")
    page.wait_for_selector("#zoom-note:has-text('Drawn again')", timeout=60_000)
    assert "changed since" not in page.inner_text("#zoom-note")
    zoomed = page.locator("#zoom-frame img")
    large = zoomed.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
    assert max(large) == 2048 and large[0] > 2 * small[0] and large[1] > 2 * small[1], (small, large)
    frame = page.locator("#zoom-frame").evaluate("(f) => [f.clientWidth, f.clientHeight]")
    fitted = zoomed.evaluate("(img) => [img.clientWidth, img.clientHeight]")
    assert fitted[0] <= frame[0] and fitted[1] <= frame[1] + 1  # all of it in the window…
    assert max(fitted[0] / frame[0], fitted[1] / frame[1]) > 0.95  # …as large as it fits
    shot(page, "standin-zoom.png")
    page.click("#zoom-actual")
    assert zoomed.evaluate("(img) => img.clientWidth") == large[0]
    page.click("#zoom-out")
    assert zoomed.evaluate("(img) => img.clientWidth") < large[0]
    page.click("#zoom-in")
    page.click("#zoom-in")
    assert zoomed.evaluate("(img) => img.clientWidth") > large[0]
    page.click("#zoom-fit")
    assert zoomed.evaluate("(img) => [img.clientWidth, img.clientHeight]") == fitted
    page.click("#zoom-close")

    # a confirmation says in words what will change, the arguments behind a disclosure; Deny
    plot = page.locator(".tool-step").nth(3).get_attribute("data-call-id")
    assert plot
    filename = rows[3][2].split(" with ")[0]
    send(page, f'/tool debrief-state:debrief_undo {{"filename": "{filename}"}}')
    card = page.locator(".confirm-card").last
    card.wait_for(timeout=30_000)
    assert f"This will undo the last change to {filename}." in card.inner_text()
    assert not card.locator(".confirm-args .value").is_visible()  # the arguments: one click away
    card.locator(".confirm-args summary").click()
    assert filename in card.locator(".confirm-args .value").inner_text()
    assert not card.locator(".confirm-args .value-label").is_visible()  # "Arguments" once, not twice
    shot(page, "standin-confirm.png")
    card.locator("button.deny").click()
    page.wait_for_selector("#send[data-mode='send']", timeout=60_000)
    # another, stopped while it waits: cancelled
    send(page, f'/tool debrief-state:debrief_undo {{"filename": "{filename}"}}')
    page.locator(".confirm-card[data-state='pending']").wait_for(timeout=30_000)
    page.keyboard.press("Escape")
    page.wait_for_selector("#send[data-mode='send']", timeout=30_000)
    # and one that fails
    page.fill("#input", '/tool debrief-calc:run_tool {"tool": "import-rep", "parameters": {"path": "no.rep"}}')
    page.click("#send")  # a quick turn: wait for its step and its answer, not for the Stop button
    page.locator(".tool-step[data-outcome='failed']").wait_for(timeout=30_000)
    page.locator(".msg.assistant:has-text('no.rep')").wait_for(timeout=30_000)
    page.wait_for_selector("#send[data-mode='send']", timeout=30_000)
    outcomes = [r[1] for r in step_rows(page)][6:]
    assert outcomes == ["declined", "cancelled", "failed"], step_rows(page)
    # a declined step tells the person what happened, in a neutral note, not an error to the model
    declined = page.locator(".tool-step[data-outcome='declined']")
    declined.locator("summary").click()
    assert declined.locator(".value-block.is-note .value").inner_text() == "You declined; nothing ran."
    assert declined.locator(".is-error").count() == 0 and "Do not run" not in declined.inner_text()
    shot(page, "standin-outcomes.png")
    declined.locator("summary").click()

    # a reload keeps every step with its state and its duration
    before = step_rows(page)
    durations = [d.inner_text() for d in page.locator(".step-duration").all()]
    page.click("#theme")  # and the dark page, chosen here, kept in this browser
    assert page.get_attribute("html", "data-theme") == "dark"
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.locator(".tool-step").nth(len(before) - 1).wait_for(timeout=30_000)
    assert step_rows(page) == before
    assert page.locator(".chat-image img").count() == 1
    assert page.locator(".notice.stopped").count() == 1  # the stopped turn, as it showed
    assert [d.inner_text() for d in page.locator(".step-duration").all()] == durations
    assert page.get_attribute("html", "data-theme") == "dark" and page.get_attribute("#theme", "aria-pressed") == "true"
    shot(page, "standin-dark.png")
    page.click("#theme")
    assert page.get_attribute("html", "data-theme") == "light"

    # New chat starts one at once (nothing is lost: the chat is kept under Chats)
    page.click("#new-chat")
    page.wait_for_selector("#welcome", state="visible", timeout=30_000)
    assert page.locator(".msg.user").count() == 0
    # the earlier chat is in the list, and its link brings it back whole
    page.click("#chats")
    link = page.locator(".chat-link").first
    link.wait_for(timeout=10_000)
    assert "What was the closest approach between NELSON and COLLINGWOOD?" in link.inner_text()
    shot(page, "standin-chats.png")
    link.click()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.locator(".tool-step").nth(len(before) - 1).wait_for(timeout=30_000)
    assert "session=" in page.url and step_rows(page) == before
    assert errors == [] and outside == []
    context.close()


def test_two_pages_on_one_chat_see_each_other(browser: Any, stand_in: HostProcess) -> None:
    """A phone and a desktop on the same ``?session=``: a question asked on either shows on both,
    with its steps and its answer, and both end their turn."""
    context, desktop, errors = watched_page(browser, stand_in.url)
    session = desktop.get_attribute("body", "data-session")
    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone = phone_context.new_page()
    phone.goto(stand_in.url + f"?session={session}")
    phone.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    phone.fill("#input", SUGGESTIONS[3])
    phone.click("#send")  # a quick turn: wait for its answer, not for the Stop button
    phone.locator(".msg.assistant:has-text('The workspace has')").wait_for(timeout=30_000)
    desktop.locator(f".msg.user:has-text('{SUGGESTIONS[3]}')").wait_for(timeout=30_000)
    desktop.locator(".msg.assistant:has-text('The workspace has')").wait_for(timeout=30_000)
    desktop.wait_for_selector("#send[data-mode='send']", timeout=30_000)
    desktop.fill("#input", "What can you do?")
    desktop.click("#send")
    phone.locator(".msg.user:has-text('What can you do?')").wait_for(timeout=30_000)
    phone.locator(".msg.assistant:has-text('deterministic stand-in')").wait_for(timeout=30_000)
    phone.wait_for_selector("#send[data-mode='send']", timeout=30_000)
    for page in (desktop, phone):
        assert page.locator(".msg.user").count() == 2 and page.locator(".tool-step").count() == 1
    shot(phone, "two-pages-phone.png")
    assert errors == []
    phone_context.close()
    context.close()
