"""The chat page as a person uses it, in Debian's chromium against the real ``llmem-host``, the
stand-in and the three real servers: files dropped or picked into the workspace; a question
edited and asked again, an answer regenerated and copied as Markdown; chats searched, renamed,
exported (the downloads read back) and deleted with Undo; a picture downloaded as a PNG and framed
in dark mode; the model chosen and the servers' state (a broken one's error) in the page; the
header in one row on a phone. ``LLMEM_SCREENSHOTS=<folder>`` keeps what it saw."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests._browser import shot
from tests._commonmark import render
from tests.conftest import DATA, console_script
from tests.fake_models import FakeOpenAI, say
from tests.host_harness import HostProcess, running_host, stand_in_host, two_ships, write_config

pytestmark = pytest.mark.slow

CPA = "What was the closest approach between NELSON and COLLINGWOOD?"
LISTING = "List the plots and REP files in this workspace"
NARRATIVE = DATA / "rep" / "valid_narrative.rep"
PHONE = 375  # CSS pixels: the narrowest phone in common use (iPhone SE, many Android phones)


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    with stand_in_host(tmp_path_factory.mktemp("people")) as process:
        yield process


def open_page(browser: Any, url: str, *, phone: bool = False) -> tuple[Any, Any, list[str]]:
    """A page at ``url``, connected; the script errors it reports (a refused upload's 4xx, which
    chromium logs as a failed load, is the test's own doing and not counted)."""
    size = {"width": PHONE, "height": 667} if phone else {"width": 1280, "height": 900}
    context = browser.new_context(
        viewport=size, is_mobile=phone, has_touch=phone, accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"], reduced_motion="reduce",  # styles as set, not mid-way
    )  # fmt: skip
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None,
    )
    page.goto(url)
    page.wait_for_selector("#connection[data-state='connected'], #connection[data-state='degraded']", timeout=30_000)
    return context, page, errors


def ask(page: Any, text: str) -> None:
    """A question, and its whole answer: a turn ends with its actions (a quick one may be over
    before a Stop button could be seen)."""
    before = page.locator(".turn-actions").count()
    page.fill("#input", text)
    page.click("#send")
    page.locator(".turn-actions").nth(before).wait_for(timeout=120_000)
    turn_done(page)


def turn_done(page: Any) -> None:
    page.wait_for_selector("body[data-busy='false']", state="attached", timeout=120_000)


def drop(page: Any, name: str, content: str) -> None:
    """A file dropped on the conversation, as a person drags it from their files."""
    moved = page.evaluate_handle(
        "([name, text]) => { const dt = new DataTransfer(); dt.items.add(new File([text], name)); return dt; }",
        [name, content],
    )
    page.dispatch_event("#scroller", "dragenter", {"dataTransfer": moved})
    assert page.is_visible("#drop-zone")
    page.dispatch_event("#scroller", "drop", {"dataTransfer": moved})
    assert not page.is_visible("#drop-zone")


def plots_in(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.glob("*.plot.json"))


def test_files_dropped_or_picked_are_saved_in_the_workspace_and_the_model_told(
    browser: Any, stand_in: HostProcess
) -> None:
    ws = stand_in.workspace
    context, page, errors = open_page(browser, stand_in.url)
    text = NARRATIVE.read_text(encoding="utf-8")
    drop(page, "valid_narrative.rep", text)
    chip = page.locator(".attachments .file-chip[data-state='saved']")
    chip.wait_for(timeout=30_000)
    assert (ws / "valid_narrative.rep").read_text(encoding="utf-8") == text
    assert "valid_narrative.rep" in chip.inner_text() and "saved" in chip.inner_text()
    page.fill("#input", "Here is the ship's log of the day")
    shot(page, "host-attached.png")
    page.click("#send")
    turn_done(page)
    question = page.locator(".msg.user").last
    assert question.locator(".file-chip .file-name").inner_text() == "valid_narrative.rep"
    assert not page.is_visible("#attachments")  # sent with that message, gone from the tray
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert answer.startswith("Your file is saved in the workspace (valid_narrative.rep).")  # the model was told

    # the same name again: the page asks; "Keep both" saves it under a free name
    drop(page, "valid_narrative.rep", ";NARRATIVE: 951212 113000.000 NELSON   A SECOND LOG OF THE DAY\n")
    page.wait_for_selector("#conflict-dialog[open]", timeout=30_000)
    assert "valid_narrative.rep is already in the workspace" in page.inner_text("#conflict-text")
    shot(page, "host-attach-conflict.png")
    page.click("#conflict-keep")
    page.locator(".attachments .file-chip:has-text('valid_narrative (2).rep')").wait_for(timeout=30_000)
    assert (ws / "valid_narrative.rep").read_text(encoding="utf-8") == text  # never overwritten unasked
    assert (ws / "valid_narrative (2).rep").read_text(encoding="utf-8").endswith("A SECOND LOG OF THE DAY\n")
    # picked with the clip button: a plot file
    plot = (DATA / "plots" / "sample.plot.json").read_bytes()
    page.set_input_files(
        "#file-input", files=[{"name": "picked.plot.json", "mimeType": "application/json", "buffer": plot}]
    )
    page.locator(".attachments .file-chip[data-state='saved']:has-text('picked.plot.json')").wait_for(timeout=30_000)
    assert (ws / "picked.plot.json").read_bytes() == plot
    # a name with a path in it, an absolute one, a NUL: refused, nothing written outside
    statuses = page.evaluate(
        """async (names) => Promise.all(names.map(async (name) =>
             (await fetch('files?name=' + encodeURIComponent(name), {method: 'POST', body: 'x'})).status))""",
        ["../escaped.rep", str(ws.parent / "escaped.rep"), "escaped\u0000.rep"],
    )
    assert statuses == [400, 400, 400]
    assert not (ws.parent / "escaped.rep").exists() and not any("escaped" in p.name for p in ws.iterdir())
    assert errors == []
    context.close()


def test_a_question_edited_an_answer_regenerated_and_copied(browser: Any, stand_in: HostProcess) -> None:
    ws = stand_in.workspace
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, CPA)
    assert page.locator(".tool-step").count() >= 4
    made = plots_in(ws)
    # Copy: the answer as Markdown (its emphasis in underscores), not the text on the screen
    page.locator(".turn-actions .copy-answer").last.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("The closest approach between NELSON and COLLINGWOOD was 119.5 yd at 10:45:09Z")
    assert "_The stand-in wrote this from the tools' results; no model was asked._" in copied
    assert "_The stand-in" not in page.locator(".msg.assistant").last.inner_text()

    # Edit the question: what followed it goes, the new question is answered in its place
    question = page.locator(".msg.user").first
    question.hover()
    question.locator(".msg-action.edit").click()
    box = question.locator(".edit-box")
    assert box.input_value() == CPA
    shot(page, "host-edit.png")
    box.fill(LISTING)
    box.press("Enter")
    turn_done(page)
    assert [q.locator(".msg-body").inner_text() for q in page.locator(".msg.user").all()] == [LISTING]
    assert [s.locator(".tool-short").inner_text() for s in page.locator(".tool-step").all()] == ["debrief_list_plots"]
    listed = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert listed.startswith("The workspace has") and made[0] in listed

    # Regenerate: the question asked again, the answer in the same place, once
    page.locator(".turn-actions .regenerate").last.click()
    turn_done(page)
    assert page.locator(".msg.user").count() == 1 and page.locator(".tool-step").count() == 1
    assert page.locator(".turn-actions").count() == 1
    # the host forgot the first question too: a reload draws the edited chat
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.locator(".msg.user").first.wait_for(timeout=30_000)
    assert [q.locator(".msg-body").inner_text() for q in page.locator(".msg.user").all()] == [LISTING]

    # asking the closest approach again uses the plot made the first time: no second copy
    ask(page, CPA)
    steps = [s.locator(".tool-short").inner_text() for s in page.locator(".tool-step").all()][1:]
    assert "debrief_create_plot" not in steps and "run_tool · import-rep" not in steps
    assert steps[-2:] == ["run_tool · closest-approach", "debrief_render_plot"]
    assert plots_in(ws) == made
    # its picture downloads under the plot's name and the moment its label reads (10:45:08.902 drawn)
    with page.expect_download() as picture:
        page.locator(".chat-image .download").last.click()
    assert picture.value.suggested_filename == "nelson-collingwood-1995-12-12T104509Z.png"
    page.locator(".chat-image img").last.click()
    page.wait_for_selector("#zoom-note:has-text('Drawn again')", timeout=60_000)
    assert page.get_attribute("#zoom-download", "download").startswith("nelson-collingwood-1995-12-12T104509Z-")
    page.click("#zoom-close")
    assert errors == []
    context.close()


def questions_and_answers(page: Any) -> list[tuple[str, str]]:
    """The conversation as drawn, in order: ("you", text) and ("answer", text)."""
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('#conversation > .msg')].map((m) =>
             [m.matches('.user') ? 'you' : 'answer', m.querySelector('.msg-body').innerText.trim()])"""
    )
    return [(str(who), str(text)) for who, text in drawn]


def test_an_earlier_question_edited_or_regenerated_forgets_all_that_came_after(
    browser: Any, stand_in: HostProcess
) -> None:
    """The host forgets every later question when an earlier one is edited (or asked again): the
    page draws the same, the new answer right under the edited question, and a reload agrees."""
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, "Is it raining at sea?")
    ask(page, LISTING)
    first = page.locator(".msg.user").first
    first.hover()
    edit = first.locator(".msg-action.edit")
    box = edit.bounding_box()
    assert box is not None and box["width"] > box["height"]  # "Edit" on one line, not a letter a line
    edit.click()
    # said before it is sent: what sending drops; Cancel keeps it all
    assert first.locator(".edit-warning").inner_text() == "This drops the later question and its answer."
    assert first.locator(".edit-actions .approve").inner_text() == "Send and drop them"
    first.locator(".edit-actions .deny").click()
    assert [who for who, _ in questions_and_answers(page)] == ["you", "answer", "you", "answer"]
    ask(page, "Is it foggy at sea?")
    first.hover()
    edit.click()
    assert first.locator(".edit-warning").inner_text() == "This drops the 2 later questions and their answers."
    first.locator(".edit-box").fill("Is it windy at sea?")
    first.locator(".edit-box").press("Enter")
    page.locator(".turn-actions").first.wait_for(timeout=120_000)
    turn_done(page)
    drawn = questions_and_answers(page)
    assert [who for who, _ in drawn] == ["you", "answer"] and drawn[0][1] == "Is it windy at sea?"
    assert "windy" in drawn[1][1] and "raining" not in drawn[1][1]  # the new text answered, not the old
    assert page.locator(".tool-step").count() == 0 and page.locator(".turn-actions").count() == 1
    shot(page, "host-edit-earlier.png")
    # Regenerate the first of two: the second goes too, the first is answered once, in its place
    ask(page, LISTING)
    page.locator(".turn-actions .regenerate").first.click()  # it says what it drops first
    assert page.locator(".turn-actions .drop-note").inner_text() == "This drops the later question and its answer."
    assert len(questions_and_answers(page)) == 4
    page.locator(".turn-actions .regenerate").first.click()
    page.locator(".turn-actions").first.wait_for(timeout=120_000)
    turn_done(page)
    again = questions_and_answers(page)
    assert [who for who, _ in again] == ["you", "answer"] and again[0][1] == "Is it windy at sea?"
    assert page.locator(".turn-actions").count() == 1
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    page.locator(".msg.user").first.wait_for(timeout=30_000)
    assert [who for who, _ in questions_and_answers(page)] == ["you", "answer"]
    assert page.locator(".msg.user .msg-body").inner_text() == "Is it windy at sea?"
    assert errors == []
    context.close()


def test_chats_searched_renamed_exported_and_deleted_with_undo(
    browser: Any, stand_in: HostProcess, tmp_path: Path
) -> None:
    context, page, errors = open_page(browser, stand_in.url)
    question = CPA.replace("?", " in exercise Dolphin?")  # words no other test's chat has
    ask(page, question)
    cpa_chat = page.get_attribute("body", "data-session")
    page.click("#new-chat")
    page.wait_for_selector(f"body[data-session]:not([data-session={cpa_chat!r}])", state="attached", timeout=30_000)
    ask(page, "Is it raining at sea?")
    page.click("#chats")
    page.locator(".chat-item").first.wait_for(timeout=30_000)
    assert page.evaluate("document.activeElement.id") == "chats-search"  # the search box first
    page.fill("#chats-search", "dolphin 119.5")
    page.wait_for_selector(".chat-match", timeout=30_000)
    item = page.locator(f".chat-item[data-id='{cpa_chat}']")
    assert page.locator(".chat-item").count() == 1 and item.is_visible()
    shot(page, "host-chats-search.png")
    # rename it
    item.locator(".chat-rename").click()
    page.fill(".chat-rename-box", "CPA of the exercise")
    page.press(".chat-rename-box", "Enter")
    page.locator(f".chat-item[data-id='{cpa_chat}'] .chat-title:has-text('CPA of the exercise')").wait_for(
        timeout=30_000
    )
    item = page.locator(f".chat-item[data-id='{cpa_chat}']")
    # export it: Markdown with its picture inside, and JSON
    with page.expect_download() as markdown:
        item.locator(".chat-export").click()
    assert markdown.value.suggested_filename == "cpa-of-the-exercise.md"
    text = Path(markdown.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# CPA of the exercise\n") and f"## You\n\n{question}" in text
    assert "The closest approach between NELSON and COLLINGWOOD was 119.5 yd at 10:45:09Z on 12 Dec 1995." in text
    picture = base64.b64decode(text.split("(data:image/png;base64,", 1)[1].split(")", 1)[0])
    assert picture[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(picture[16:20], "big") > 100
    with page.expect_download() as as_json:
        item.locator(".chat-export-json").click()
    data = json.loads(Path(as_json.value.path()).read_text(encoding="utf-8"))
    assert data["title"] == "CPA of the exercise" and data["messages"][0] == {"role": "user", "content": question}
    # the Markdown as a CommonMark reader (GitHub, VS Code) shows it: each step's arguments a code
    # block in its folded details, the same as the JSON's; the picture in its step
    _, rendered = render(text)
    folded = [r for r in rendered if r.tag == "code" and r.inside[-4:] == ("ul", "li", "details", "pre")]
    steps = [m for m in data["messages"] if m["role"] == "tool"]
    assert [json.loads(r.text) for r in folded[0::2]] == [m["arguments"] for m in steps]
    assert [r.inside[-3:] for r in rendered if r.tag == "img"] == [("ul", "li", "p")]
    assert [m["title"] for m in data["messages"] if m["role"] == "tool"][-1] == "debrief_render_plot"
    # delete it, then Undo: it is back; delete it again: gone
    page.fill("#chats-search", "")
    page.locator(f".chat-item[data-id='{cpa_chat}']").wait_for(timeout=30_000)
    page.locator(f".chat-item[data-id='{cpa_chat}'] .chat-delete").click()
    page.wait_for_selector("#chats-toast:not([hidden])", timeout=30_000)
    assert page.inner_text("#chats-toast-text") == "Deleted “CPA of the exercise”."
    assert page.locator(f".chat-item[data-id='{cpa_chat}']").count() == 0
    shot(page, "host-chats-undo.png")
    page.click("#chats-undo")
    page.locator(f".chat-item[data-id='{cpa_chat}']").wait_for(timeout=30_000)
    page.locator(f".chat-item[data-id='{cpa_chat}'] .chat-delete").click()
    page.wait_for_selector("#chats-toast:not([hidden])", timeout=30_000)
    page.click("#chats-close")
    page.click("#chats")
    page.locator(".chat-item").first.wait_for(timeout=30_000)
    assert page.locator(f".chat-item[data-id='{cpa_chat}']").count() == 0
    # the chat this page shows, deleted: the page moves to a new chat; Undo opens it again
    rain_chat = page.get_attribute("body", "data-session")
    page.locator(f".chat-item[data-id='{rain_chat}'] .chat-delete").click()
    page.wait_for_selector(f"body:not([data-session={rain_chat!r}])", state="attached", timeout=30_000)
    assert page.locator(".msg.user").count() == 0
    page.click("#chats-undo")
    page.wait_for_selector(f"body[data-session={rain_chat!r}]", state="attached", timeout=30_000)
    page.locator(".msg.user").first.wait_for(timeout=30_000)
    assert page.locator(".msg.user .msg-body").first.inner_text() == "Is it raining at sea?"
    assert errors == []
    context.close()


def test_the_page_asks_nothing_of_the_network(browser: Any, stand_in: HostProcess) -> None:
    """On an isolated network the page works whole: every request it makes (scripts, styles,
    pictures, the socket) goes to this host, and no link it shows (the stand-in's help included)
    points anywhere that needs the network."""
    context, page, errors = open_page(browser, stand_in.url)
    outside: list[str] = []

    def loopback_only(route: Any) -> None:
        url = str(route.request.url)
        if urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", loopback_only)
    page.reload()
    page.wait_for_selector("#connection[data-state='connected']", timeout=30_000)
    ask(page, "What can you do?")
    ask(page, "Show me the last hour of the exercise")
    page.locator(".chat-image img").last.wait_for(timeout=30_000)
    assert page.locator(".chat-image img").last.evaluate("(img) => img.complete && img.naturalWidth > 0")
    links = page.evaluate(
        """() => [...document.querySelectorAll('a[href], link[href], script[src], img[src], iframe[src]')]
             .map((e) => e.href || e.src)"""
    )
    far = [u for u in links if urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname != "127.0.0.1"]
    assert outside == [] and far == [], (outside, far)
    assert "docs/chat-host.md" in page.locator(".msg.assistant .msg-body").first.inner_text()
    assert errors == []
    context.close()


def after(page: Any, selector: str) -> str:
    """The text the page draws after an element (its tooltip), as the browser computes it now."""
    return str(page.eval_on_selector(selector, "(e) => getComputedStyle(e, '::after').content"))


def test_pills_say_what_they_mean_the_keyboard_reaches_everything_named(browser: Any, stand_in: HostProcess) -> None:
    """Hover or keyboard focus on a pill (the stand-in's, the connection's, a step's line) shows
    what it means; Tab goes through the header in reading order; every control has a name; an
    answer is read once, whole (aria-busy while it streams)."""
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, LISTING)
    page.hover("#connection")
    assert "Connected to the host" in after(page, "#connection")
    assert page.get_attribute("#connection", "title") is None  # no second, browser-drawn tooltip
    page.mouse.move(600, 400)
    assert after(page, "#connection") == "none"
    # Tab from the top: the skip link, then the header left to right, each saying what it is
    page.evaluate("document.activeElement.blur()")
    order = []
    for _ in range(7):
        page.keyboard.press("Tab")
        order.append(page.evaluate("(e => e.id || e.className)(document.activeElement)"))
        if order[-1] == "standin-badge":
            assert "scripted stand-in, not from a language model" in after(page, "#standin-badge")
    assert order[:6] == ["skip-link", "standin-badge", "connection", "chats", "new-chat", "theme"], order
    step = ".tool-step > summary"
    page.hover(step)
    assert after(page, f"{step} > .step-status").startswith('"A tool call: debrief-state:debrief_list_plots')
    page.mouse.move(600, 500)
    page.focus(step)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused by the keyboard: its tooltip shows
    said = after(page, f"{step} > .step-status")
    assert said == (
        '"A tool call: debrief-state:debrief_list_plots · done: the tool answered. '
        'Open it for its arguments and result."'
    )
    shot(page, "host-step-tooltip.png")
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('button, a[href], input, select, textarea, summary, [tabindex="0"]')]
             .filter((e) => e.offsetParent !== null)
             .filter((e) => !(e.getAttribute('aria-label') || e.innerText.trim() || e.labels?.length || e.title))
             .map((e) => e.outerHTML.slice(0, 80))"""
    )
    assert unnamed == []
    log = page.locator("#conversation")
    assert (log.get_attribute("role"), log.get_attribute("aria-live")) == ("log", "polite")
    assert page.locator(".msg.assistant[aria-busy]").count() == 0  # finished answers: not busy
    # the chats panel: a rename is left with Esc or Cancel, the panel stays open, the name unchanged
    page.click("#chats")
    first = page.locator(".chat-item").first
    first.wait_for(timeout=30_000)
    title = first.locator(".chat-title").inner_text()
    first.locator(".chat-rename").click()
    page.fill(".chat-rename-box", "Not this name")
    page.press(".chat-rename-box", "Escape")
    page.locator(".chat-item .chat-rename").first.wait_for(timeout=30_000)
    assert page.is_visible("#chats-dialog") and page.locator(".chat-item .chat-title").first.inner_text() == title
    page.locator(".chat-item").first.locator(".chat-rename").click()
    page.fill(".chat-rename-box", "Not this name either")
    page.click(".chat-rename-cancel")
    page.locator(".chat-item .chat-rename").first.wait_for(timeout=30_000)
    assert page.locator(".chat-item .chat-title").first.inner_text() == title
    page.click("#chats-close")
    assert errors == []
    context.close()


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_a_picture_downloads_as_a_png_and_is_framed_on_a_dark_page(browser: Any, stand_in: HostProcess) -> None:
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, "Show me the last hour of the exercise")
    image = page.locator(".chat-image img").last
    image.wait_for(timeout=30_000)
    shown = image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
    with page.expect_download() as picture:
        page.locator(".chat-image .download").last.click()
    assert picture.value.suggested_filename.endswith("Z.png")
    assert list(_png_size(Path(picture.value.path()))) == shown
    # the larger one, drawn again for "Open full size"
    image.click()
    page.wait_for_selector("#zoom-note:has-text('Drawn again')", timeout=60_000)
    with page.expect_download() as larger:
        page.click("#zoom-download")
    assert max(_png_size(Path(larger.value.path()))) == 2048
    page.click("#zoom-close")
    # dark: the picture sits on a dark mat, dimmed, so it does not glare
    if page.get_attribute("html", "data-theme") != "dark":
        page.click("#theme")
    frame = page.locator(".image-frame").last
    style = frame.evaluate("(f) => { const s = getComputedStyle(f); return [s.paddingTop, s.backgroundColor]; }")
    assert style == ["8px", "rgb(12, 15, 19)"]
    assert "brightness(0.82)" in image.evaluate("(img) => getComputedStyle(img).filter")
    frame.scroll_into_view_if_needed()
    page.mouse.move(5, 5)  # the pointer off the picture: dimmed, as it is seen
    shot(page, "host-dark-picture.png")
    # and at full size: on the dark mat over a dark backdrop, dimmed until the pointer is on it
    image.click()
    page.wait_for_selector("#zoom-note:has-text('Drawn again')", timeout=60_000)
    page.mouse.move(5, 5)
    zoomed = page.evaluate(
        """() => { const f = document.querySelector('#zoom-frame') || document.querySelector('.zoom-frame');
                   const d = document.querySelector('#zoom-dialog');
                   return [getComputedStyle(f).backgroundColor, getComputedStyle(f.querySelector('img')).filter,
                           getComputedStyle(d, '::backdrop').backgroundColor]; }"""
    )
    assert zoomed == ["rgb(12, 15, 19)", "brightness(0.82) contrast(1.04)", "rgba(0, 0, 0, 0.72)"], zoomed
    shot(page, "host-dark-full-size.png")
    page.click("#zoom-close")
    page.click("#theme")
    assert errors == []
    context.close()


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    """The stand-in and a fake OpenAI-compatible model to choose from, three real servers and
    one that cannot start."""
    root = tmp_path_factory.mktemp("models")
    ws = two_ships(root)
    config = write_config(ws, root / "mcp.json")
    servers = json.loads(config.read_text())
    servers["mcpServers"]["broken"] = {
        "command": sys.executable,
        "args": ["-c", "import sys; print('broken: cannot open /data/plots', file=sys.stderr); sys.exit(4)"],
    }
    config.write_text(json.dumps(servers))
    assert console_script("debrief-state-mcp") in config.read_text()
    with FakeOpenAI(lambda body: say("Hello from the fake model.")) as fake:
        args = ("--model", "stand-in", "--model", "openai:fake-model", "--base-url", fake.base_url)
        with running_host(config, ws, *args) as process:
            yield process


def test_the_model_is_chosen_and_the_servers_are_seen_in_the_page(browser: Any, two_models: HostProcess) -> None:
    context, page, errors = open_page(browser, two_models.url)
    pill = page.locator("#connection")
    assert pill.get_attribute("data-state") == "degraded" and pill.inner_text() == "connected · 1 server down"
    pill.click()
    page.wait_for_selector("#status-dialog[open] .status-server[data-state='failed']", timeout=30_000)
    rows = page.locator(".status-server").all()
    assert [r.locator(".server-name").inner_text() for r in rows] == [
        "debrief-calc",
        "debrief-state",
        "llmem",
        "broken",
    ]
    assert [r.get_attribute("data-state") for r in rows] == ["running", "running", "running", "failed"]
    error = rows[3].locator(".server-error").inner_text()
    assert error.startswith("server 'broken' could not start") and "| broken: cannot open /data/plots" in error
    assert "hint:" in error
    shot(page, "host-servers.png")
    page.click("#status-close")
    # the model, chosen in the header (the stand-in said to be no model, in amber); the fake model answers
    select = page.locator("#model")
    assert select.is_visible() and select.locator("option").count() == 2
    assert select.evaluate("(s) => s.selectedOptions[0].textContent") == "Deterministic stand-in — not a model"
    assert "is-standin" in (select.get_attribute("class") or "")
    select.select_option("openai:fake-model")
    page.wait_for_selector("body[data-model='openai:fake-model']", state="attached", timeout=30_000)
    assert "is-standin" not in (select.get_attribute("class") or "") and not page.is_visible("#standin-badge")
    ask(page, "hello")
    assert page.locator(".msg.assistant .msg-body").last.inner_text() == "Hello from the fake model."
    assert errors == []
    context.close()


@pytest.mark.parametrize("host_name", ["stand_in", "two_models"])
def test_on_a_phone_the_header_takes_one_row(browser: Any, host_name: str, request: pytest.FixtureRequest) -> None:
    host: HostProcess = request.getfixturevalue(host_name)
    context, page, errors = open_page(browser, host.url, phone=True)
    header = page.locator(".topbar").bounding_box()
    parts = [
        page.locator(s).bounding_box()
        for s in (".brand-name", ".model-pick", "#connection", "#chats", "#new-chat", "#theme")
    ]
    assert header is not None and header["height"] < 56, header
    middle = header["y"] + header["height"] / 2
    for box in parts:  # every part on the one row, inside the screen
        assert box is not None and box["y"] < middle < box["y"] + box["height"], (box, header)
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE
    # the stand-in says so, the names of the buttons are there for a screen reader
    assert (
        page.get_attribute("#chats", "aria-label") == "Chats"
        and page.get_attribute("#new-chat", "aria-label") == "New chat"
    )
    if host_name == "stand_in":
        assert page.inner_text("#standin-badge") == "Stand-in, no model"
        words = page.eval_on_selector("#standin-badge .badge-short", "(s) => [s.scrollWidth, s.clientWidth]")
        assert words[0] <= words[1], words  # read whole, not cut with "…"
        # a question and its answer, then the chats panel: nothing wider than the phone
        ask(page, LISTING)
        page.click("#chats")
        page.locator(".chat-item").first.wait_for(timeout=30_000)
        boxes = [
            page.locator(s).first.bounding_box() for s in ("#chats-dialog", ".chat-item .chat-delete", "#chats-search")
        ]
        assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= PHONE for b in boxes), boxes
        assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE
        shot(page, "host-phone-chats.png")
        page.click("#chats-close")
    shot(page, f"host-phone-header-{host_name}.png")
    assert errors == []
    context.close()
