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
