"""The live plot view in the chat page, in a real browser: Debian's chromium driven by Playwright,
against the real ``llmem-host`` with its three real servers and the scripted fake model.

The person asks for the plot; the model calls ``debrief_render_plot``; the page shows the PNG
and, under the step, the live view (``ui://debrief-state/plot-view``) in an iframe from the
host's other origin, the sandbox proxy. The slider moves the plot's time in the file, the
page's dark scheme reaches the view, a reload brings the view back with the conversation, and
New chat tears it down. No script error; nothing requested from anywhere but the two origins.
With ``LLMEM_SCREENSHOTS=<folder>`` the test saves what it saw.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests._browser import shot, time_in_file
from tests.conftest import DATA
from tests.fake_models import FakeOpenAI, Reply, call, say
from tests.host_harness import KEY, HostProcess, make_workspace, running_host, write_config
from tests.test_host_web import since_question

pytestmark = pytest.mark.slow

PLOT = "large-sample.plot.json"


def model(body: dict[str, Any]) -> Reply:
    question, results = since_question(body["messages"])
    if "plot" in question and not results:
        return call("debrief-state__debrief_render_plot", {"filename": PLOT, "fit": "all"}, call_id="live")
    if "plot" in question:
        return say("Here is the plot. The live view under it has a time slider.")
    return say("Hello.")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("apps-page")
    ws = make_workspace(root)
    shutil.copy(DATA / "plots" / PLOT, ws / PLOT)
    config = write_config(ws, root / "mcp.json")
    fake = FakeOpenAI(model)
    with fake:
        args = ("--provider", "openai", "--base-url", fake.base_url, "--model", "llama3.1:8b")
        with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as process:
            yield process


def _view(page: Any, index: int = 0) -> Any:
    """The view's own document: the srcdoc frame inside the index-th sandbox proxy."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        frames = [f for f in page.frames if f.url == "about:srcdoc" and not f.is_detached()]
        if len(frames) > index:
            return frames[index]
        page.wait_for_timeout(50)
    raise AssertionError(f"no view frame #{index}; frames: {[f.url for f in page.frames]}")


def _drawn(page: Any) -> bool:
    """The live view has drawn (asked again of the current frame: a reload detaches the old one)."""
    try:
        return bool(_view(page).evaluate("Number(document.body.dataset.draws || 0) > 0"))
    except Exception as exc:  # the frame went between finding and asking
        if "detached" not in str(exc):
            raise
        return False


def _until(check: Any, what: str, seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(what)


def test_the_live_view_in_the_chat(browser: Any, host: HostProcess) -> None:
    ws = host.workspace
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(host.url)
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)

    page.fill("#input", "Show me the plot")
    page.click("#send")
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)
    view_node = page.locator(".app-view").first
    view_node.wait_for(timeout=30_000)
    page.wait_for_selector(".app-view[data-state='ready']", timeout=30_000)
    assert page.locator(".chat-image img").count() == 1  # the PNG stays

    # the frame: the sandbox proxy, on the other origin, sandboxed as the specification says
    frame = view_node.locator("iframe.app-frame")
    assert frame.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    src = frame.get_attribute("src") or ""
    page_origin = host.url.rstrip("/")
    proxy_origin = src.split("/sandbox.html")[0]
    assert proxy_origin.startswith("http://127.0.0.1:") and proxy_origin != page_origin

    view = _view(page)
    _until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
    # allow-same-origin is the proxy's origin, never the chat page's: the view (and its frame,
    # sandboxed the same) cannot read or drive the page, its storage is the other origin's
    inner = page.frame_locator("iframe.app-frame").first.locator("iframe").first
    assert inner.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    reach = view.evaluate(
        """() => {
             const tries = {};
             for (const [name, get] of Object.entries({
               location: () => window.top.location.href, document: () => window.top.document.title,
               storage: () => window.top.localStorage.length })) {
               try { get(); tries[name] = 'reached'; } catch (e) { tries[name] = e.name; }
             }
             return { origin: window.origin, tries };
           }"""
    )
    assert reach == {
        "origin": proxy_origin,
        "tries": {"location": "SecurityError", "document": "SecurityError", "storage": "SecurityError"},
    }
    assert view.locator("#title").inner_text() == "large-sample"
    applied = page.frame_locator("iframe.app-frame").first.locator("body").evaluate("() => window.__viewPolicy")
    assert applied.startswith("default-src 'none'; script-src 'self' 'unsafe-inline';")
    assert "connect-src 'none'" in applied and "frame-src 'none'" in applied
    meta = view.evaluate(
        "() => document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').getAttribute('content')"
    )
    assert meta == applied
    height = frame.evaluate("(f) => f.getBoundingClientRect().height")
    assert 160 <= height <= 560  # sized by the view's size-changed, within bounds
    frame.scroll_into_view_if_needed()
    shot(page, "host-live-view.png")

    # a plain wheel with the pointer over the live view scrolls the conversation, not the map
    # (the view leaves it to the page: it chains out of both frames); ctrl + wheel zooms the map
    scroller = page.locator(".scroller").first
    scroller.evaluate("(s) => { s.scrollTop = s.scrollHeight; }")
    bottom = scroller.evaluate("(s) => s.scrollTop")
    assert bottom > 100, "the conversation is long enough to scroll"
    box = frame.bounding_box()
    assert box is not None and box["y"] + box["height"] / 2 < 900
    zoom = view.evaluate("window.__plotView.zoom()")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, (900 - box["y"]) / 2))
    page.mouse.wheel(0, -300)
    _until(lambda: scroller.evaluate("(s) => s.scrollTop") < bottom - 100, "the wheel scrolled the conversation")
    assert view.evaluate("window.__plotView.zoom()") == zoom
    assert "scroll, or pinch" in view.evaluate("document.getElementById('toast').textContent")
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    at = scroller.evaluate("(s) => s.scrollTop")
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    _until(lambda: view.evaluate(f"window.__plotView.zoom() > {zoom}"), "ctrl + wheel zoomed the map")
    assert scroller.evaluate("(s) => s.scrollTop") == at

    # the slider moves the plot's time, in the file
    before = time_in_file(ws / PLOT)
    slider = view.locator("#slider")
    slider.focus()
    for _ in range(40):
        page.keyboard.press("ArrowRight")
    moved = _until(lambda: (t := time_in_file(ws / PLOT)) != before and t, "the slider set the plot's time")
    assert moved > str(before)

    # the view reaches nothing by itself: not the host's socket, not its page, not the outside
    blocked = view.evaluate(
        """async (urls) => {
             const out = [];
             for (const url of urls) {
               try { await fetch(url); out.push('fetched ' + url); } catch (_) { out.push('blocked'); }
             }
             out.push(await new Promise((done) => {
               try {
                 const s = new WebSocket(urls[0].replace('http', 'ws') + 'ws');
                 s.onopen = () => done('socket');
                 s.onerror = () => done('blocked');
               } catch (_) { done('blocked'); }
             }));
             return out;
           }""",
        [host.url, host.url + "health", "https://example.com/"],
    )
    assert blocked == ["blocked"] * 4
    errors[:] = [e for e in errors if "Content Security Policy" not in e]  # the refusals, as expected

    # the page's dark scheme reaches the view
    page.emulate_media(color_scheme="dark")
    _until(lambda: view.evaluate("document.documentElement.dataset.theme") == "dark", "the view went dark")
    shot(page, "host-live-view-dark.png")
    page.emulate_media(color_scheme="light")
    _until(lambda: view.evaluate("document.documentElement.dataset.theme") == "light", "the view went light")
    # the page's own Dark/Light button reaches it too (the host context's theme)
    page.click("#theme")
    _until(lambda: view.evaluate("document.documentElement.dataset.theme") == "dark", "the view followed the button")
    page.click("#theme")
    _until(lambda: view.evaluate("document.documentElement.dataset.theme") == "light", "and back")

    # a reload: the conversation comes back with the live view in it, showing the time it was left at
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.wait_for_selector(".app-view[data-state='ready']", timeout=30_000)
    _until(lambda: _drawn(page), "the view drew after the reload")
    assert page.locator(".app-view").count() == 1 and page.locator(".chat-image img").count() == 1

    # the same plot again: the new result takes the live view, the earlier one is torn down
    page.fill("#input", "Show me the plot again")
    page.click("#send")
    _until(lambda: page.locator(".app-view[data-state='moved']").count() == 1, "the earlier view gave way")
    page.wait_for_selector(".app-view[data-state='ready']", timeout=30_000)
    assert page.locator(".app-view").count() == 2 and page.locator("iframe.app-frame").count() == 1
    assert "moved to the latest result" in page.locator(".app-view").first.inner_text()
    page.wait_for_selector("#send[data-mode='send']", timeout=120_000)
    page.locator(".app-view").first.scroll_into_view_if_needed()
    shot(page, "host-live-view-moved.png")

    # New chat: the view is told ui/resource-teardown, answers, and goes
    page.click("#new-chat")
    _until(lambda: page.evaluate("() => window.llmemApps.teardowns.length === 2"), "the view was torn down")
    assert (
        page.evaluate("window.llmemApps.teardowns") == [{"uri": "ui://debrief-state/plot-view", "answered": True}] * 2
    )
    _until(lambda: page.locator(".app-view").count() == 0, "the view went")

    assert errors == []
    outside = [
        u for u in requests if not u.startswith((page_origin, proxy_origin, "ws://127.0.0.1", "data:", "about:"))
    ]
    assert outside == []
    context.close()
