"""The newcomer trial's findings (issue 25, t25b), in Debian's chromium against the real
``llmem-host``, the stand-in and the three real servers: the files attached are the ships answered
about (their closest approach checked against GeographicLib), a ship that is nowhere said so;
typing just after New chat is kept and a question sent meanwhile is sent; the address names the
chat."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from tests.host_harness import HostProcess, stand_in_host
from tests.test_host_page_apps import _until, _view
from tests.test_host_page_people import CPA, ask, open_page, turn_done

pytestmark = pytest.mark.slow
WGS84 = Geodesic.WGS84  # type: ignore[attr-defined]
START = datetime(2024, 3, 14, 8, 0, tzinfo=UTC)


def track(lat: float, lon: float, course: float, knots: float, minutes: int) -> list[tuple[datetime, float, float]]:
    """A ship's fixes a minute apart, each the last moved ``knots`` for a minute along ``course``."""
    fixes = [(START, lat, lon)]
    for k in range(1, minutes + 1):
        ahead = WGS84.Direct(fixes[-1][1], fixes[-1][2], course, knots * 1852 / 60)
        fixes.append((START + timedelta(minutes=k), ahead["lat2"], ahead["lon2"]))
    return fixes


def rep(name: str, fixes: list[tuple[datetime, float, float]], course: float, knots: float) -> str:
    def dms(value: float, hemispheres: str) -> str:
        seconds = round(abs(value) * 3600, 2)
        d, rest = divmod(seconds, 3600)
        m, s = divmod(rest, 60)
        return f"{int(d)} {int(m)} {s:.2f} {hemispheres[value < 0]}"

    quoted = f'"{name}"' if " " in name else name
    return "".join(
        f"{when:%y%m%d %H%M%S}.000 {quoted} @A {dms(lat, 'NS')} {dms(lon, 'EW')} {course:.1f} {knots:.1f} 0\n"
        for when, lat, lon in fixes
    )


def closest(a: list[tuple[datetime, float, float]], b: list[tuple[datetime, float, float]]) -> tuple[float, datetime]:
    """The closest approach, independently: each ship moved along the geodesic between its fixes at
    constant speed, the range (GeographicLib) at every tenth of a second, the least taken."""
    best = (float("inf"), START)
    for (t0, *p0), (_, *p1), (_, *q0), (_, *q1) in zip(a, a[1:], b, b[1:], strict=False):
        one, two = WGS84.InverseLine(*p0, *p1), WGS84.InverseLine(*q0, *q1)
        for tenth in range(601):
            f = tenth / 600
            p, q = one.Position(one.s13 * f), two.Position(two.s13 * f)
            metres = WGS84.Inverse(p["lat2"], p["lon2"], q["lat2"], q["lon2"])["s12"]
            best = min(best, (metres, t0 + timedelta(seconds=tenth / 10)))
    return best


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    with stand_in_host(tmp_path_factory.mktemp("trial")) as process:
        yield process


def test_the_ships_attached_are_the_ships_answered_about(browser: Any, stand_in: HostProcess) -> None:
    ws = stand_in.workspace
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, CPA)  # the workspace now has a plot of NELSON and COLLINGWOOD: the trap of the trial
    albatross = track(56.20, -3.10, 90.0, 12.0, 40)
    eagle = track(56.21, -2.90, 270.0, 9.0, 40)
    page.set_input_files(
        "#file-input",
        files=[
            {"name": "albatross.rep", "mimeType": "text/plain", "buffer": rep("ALBATROSS", albatross, 90, 12).encode()},
            {"name": "eagle.rep", "mimeType": "text/plain", "buffer": rep("SEA EAGLE", eagle, 270, 9).encode()},
        ],
    )
    page.locator(".attachments .file-chip[data-state='saved']").nth(1).wait_for(timeout=30_000)
    assert (ws / "eagle.rep").is_file()
    ask(page, "What was the closest approach between ALBATROSS and SEA EAGLE?")
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    metres, when = closest(albatross, eagle)
    head = answer.splitlines()[0]
    assert head.startswith("The closest approach between ALBATROSS and SEA EAGLE was "), answer
    yards = float(head.split(" was ")[1].split(" yd")[0].replace(",", ""))
    assert abs(yards - metres / 0.9144) <= 0.2, (yards, metres / 0.9144)
    said = datetime.strptime(head.split(" at ")[1][:9], "%H:%M:%SZ").replace(year=2024, month=3, day=14, tzinfo=UTC)
    assert abs((said - when).total_seconds()) <= 1, (said, when)
    assert "NELSON" not in answer and "COLLINGWOOD" not in answer

    # a ship that is in no file: said plainly, nothing about other ships
    ask(page, "What was the closest approach between ALBATROSS and VICTORY?")
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert answer.startswith("I found no ship called VICTORY."), answer
    assert " yd" not in answer

    # the last hour with a file attached: that file's ship, not the others'
    cormorant = track(50.1, -4.7, 200.0, 10.0, 30)
    page.set_input_files(
        "#file-input",
        files=[
            {"name": "cormorant.rep", "mimeType": "text/plain", "buffer": rep("CORMORANT", cormorant, 200, 10).encode()}
        ],
    )
    page.locator(".attachments .file-chip[data-state='saved']").first.wait_for(timeout=30_000)
    ask(page, "Show me the last hour of the exercise")
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert "CORMORANT" in answer and "NELSON" not in answer, answer
    assert errors == []
    context.close()


def test_typing_just_after_new_chat_is_kept_and_sent(browser: Any, stand_in: HostProcess) -> None:
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, "Is it raining at sea?")
    first = page.get_attribute("body", "data-session")
    assert page.url.endswith(f"?session={first}")  # the address opens this chat elsewhere
    page.click("#new-chat")
    page.keyboard.type("hello there")  # at once, as a person starts typing
    assert page.input_value("#input") == "hello there"
    page.keyboard.press("Enter")  # sent while the new chat may still be connecting
    page.wait_for_selector(f"body[data-session]:not([data-session={first!r}])", state="attached", timeout=30_000)
    page.locator(".msg.assistant").first.wait_for(timeout=60_000)
    turn_done(page)
    assert page.locator(".msg.user .msg-body").all_inner_texts() == ["hello there"]
    assert page.input_value("#input") == ""
    second = page.get_attribute("body", "data-session")
    assert second != first and page.url.endswith(f"?session={second}")
    # that address opens the same chat in another browser (a phone)
    phone = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    other = phone.new_page()
    other.goto(page.url)
    other.locator(".msg.user").first.wait_for(timeout=30_000)
    assert other.locator(".msg.user .msg-body").all_inner_texts() == ["hello there"]
    phone.close()
    assert errors == []
    context.close()


def settled(page: Any, frame: Any) -> None:
    """The view has its size and the conversation its place (a swipe mid-layout goes astray)."""
    box = None
    for _ in range(100):
        now = (frame.bounding_box(), page.locator(".scroller").first.evaluate("(s) => s.scrollTop"))
        if now == box:
            return
        box = now
        page.wait_for_timeout(200)
    raise AssertionError("the live view never settled")


def test_on_a_phone_one_finger_scrolls_the_chat_two_move_the_map(browser: Any, stand_in: HostProcess) -> None:
    """At 375 px the live view fills most of the screen: a one-finger swipe over it scrolls the
    conversation (the map stays, and says to use two fingers), a two-finger drag moves the map."""
    context, page, errors = open_page(browser, stand_in.url, phone=True)
    ask(page, "Is it raining at sea?")
    ask(page, CPA)
    _until(lambda: page.locator(".app-view").count() > 0, "a live view")
    view = _view(page)
    _until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
    scroller = page.locator(".scroller").first
    frame = page.locator(".app-view iframe").last
    settled(page, frame)
    frame.scroll_into_view_if_needed()
    settled(page, frame)
    bottom = scroller.evaluate("(s) => s.scrollTop")
    assert bottom > 100, "the conversation above the view is long enough to scroll back to"
    box = frame.bounding_box()
    assert box is not None
    top, low = max(box["y"], 0), min(box["y"] + box["height"], 667)  # the view's part on the screen
    assert low - top > 200, (top, low)
    x, y = box["x"] + box["width"] / 2, top + 40
    assert page.evaluate(f"document.elementFromPoint({x}, {y}).tagName") == "IFRAME"  # the finger is on the view
    cdp = context.new_cdp_session(page)

    def touch(kind: str, points: list[tuple[float, float]]) -> None:
        cdp.send(
            "Input.dispatchTouchEvent",
            {"type": kind, "touchPoints": [{"x": px, "y": py, "id": i} for i, (px, py) in enumerate(points)]},
        )

    centre, k = view.evaluate("window.__plotView.centre()"), view.evaluate("window.__plotView.zoom()")
    assert centre is not None
    before = box["y"]
    touch("touchStart", [(x, y)])
    for dy in range(10, 210, 20):  # a finger drawn down the screen: back up the conversation
        touch("touchMove", [(x, y + dy)])
        page.wait_for_timeout(16)
    touch("touchEnd", [])
    # the conversation moved down the screen with the finger (measured on the screen: a picture
    # above that loads meanwhile grows scrollTop, and the browser keeps what is seen in place)
    _until(lambda: frame.bounding_box()["y"] > before + 50, "one finger scrolled the conversation")
    assert view.evaluate("window.__plotView.centre()") == centre
    assert view.evaluate("document.getElementById('toast').textContent") == "Use two fingers to move the map"

    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, (max(box["y"], 0) + min(box["y"] + box["height"], 667)) / 2
    at = scroller.evaluate("(s) => s.scrollTop")
    touch("touchStart", [(x - 40, y), (x + 40, y)])
    for dx in (10, 20, 30):
        touch("touchMove", [(x - 40 + dx, y), (x + 40 + dx, y)])
    touch("touchEnd", [])
    moved = view.evaluate("window.__plotView.centre()")  # the map followed the fingers 30 px right
    assert abs((centre[0] - moved[0]) * k - 30) <= 2 and abs(moved[1] - centre[1]) * k <= 2, (centre, moved, k)
    assert scroller.evaluate("(s) => s.scrollTop") == at
    assert errors == []
    context.close()


def test_the_sliders_keys_step_by_a_sensible_amount(browser: Any, stand_in: HostProcess) -> None:
    """An arrow key moves the live view's time by a round step of at least 1/100 of its window
    (ten presses used to move an hour's window 36 s); PageUp/PageDown by ten steps."""
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, CPA)
    _until(lambda: page.locator(".app-view").count() > 0, "a live view")
    view = _view(page)
    _until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")

    def at() -> datetime:
        return datetime.fromisoformat(view.evaluate("window.__plotView.time()").replace("Z", "+00:00"))

    start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in view.evaluate("window.__plotView.range()"))
    span = (end - start).total_seconds()
    view.locator("#slider").focus()
    t0 = at()
    back = (t0 - start).total_seconds() > span / 2  # away from the nearer end, so no press is clipped
    page.keyboard.press("ArrowLeft" if back else "ArrowRight")
    t1 = at()
    step = abs((t1 - t0).total_seconds())
    assert span / 100 <= step <= span / 20, (step, span)
    page.keyboard.press("PageDown" if back else "PageUp")
    assert abs((at() - t1).total_seconds()) == 10 * step
    assert errors == []
    context.close()


def test_the_live_view_beside_the_last_hour_shows_that_hour(browser: Any, stand_in: HostProcess) -> None:
    """The picture of the last hour and the live view under it show the same period."""
    context, page, errors = open_page(browser, stand_in.url)
    ask(page, "Show me the last hour of the exercise")
    _until(lambda: page.locator(".app-view").count() > 0, "a live view")
    view = _view(page)
    _until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    head = answer.split(":\n", 1)[0]  # "The last hour of the exercise, 10:45:00Z to 11:45:00Z on 12 Dec 1995"
    start, end = head.split(", ")[1].split(" on ")[0].split(" to ")
    day = datetime.strptime(head.split(" on ")[1], "%d %b %Y").date().isoformat()
    # the view's slider spans the hour the answer and the picture show, at its end
    assert view.evaluate("window.__plotView.range()") == [f"{day}T{start}", f"{day}T{end}"]
    assert view.evaluate("window.__plotView.time()") == f"{day}T{end}"
    assert errors == []
    context.close()
