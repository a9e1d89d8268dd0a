"""The stand-in's answers through the real ``llmem-host`` and the three real servers, each figure
checked against GeographicLib on the REP files' own fixes: a ship's speed, course and position at
a time; the last hour of the exercise; the closest approach asked twice (the plot made once); and
anything else answered plainly: it is a stand-in without a model, and what it can do."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from geographiclib.geodesic import Geodesic
from websockets.asyncio.client import connect

from tests.conftest import DATA
from tests.host_harness import HostProcess, stand_in_host
from tests.test_host_web import Chat, steps, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
WGS84 = Geodesic.WGS84  # type: ignore[attr-defined]


def fixes(name: str) -> list[tuple[datetime, float, float]]:
    """(time, latitude, longitude) of each fix of a REP file, read here from its columns."""

    def degrees(d: str, m: str, s: str, hemisphere: str) -> float:
        value = int(d) + int(m) / 60 + float(s) / 3600
        return -value if hemisphere in "SW" else value

    out = []
    for line in (DATA / "rep" / name).read_text().splitlines():
        f = line.split()
        when = datetime.strptime(f[0] + f[1][:6], "%y%m%d%H%M%S").replace(tzinfo=UTC)
        out.append((when, degrees(*f[4:8]), degrees(*f[8:12])))
    return out


def dm(value: float, width: int, hemispheres: str) -> str:
    minutes = round(abs(value) * 60, 2)
    whole, rest = divmod(minutes, 60)
    return f"{int(whole):0{width}d}°{rest:05.2f}′{hemispheres[value < 0]}"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    with stand_in_host(tmp_path_factory.mktemp("standin")) as process:
        yield process


async def test_the_closest_approach_asked_twice_makes_one_plot(host: HostProcess) -> None:
    ws = host.workspace
    question = "What was the closest approach between NELSON and COLLINGWOOD?"
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        first = await chat.turn(question)
        again = await chat.turn(question)
    assert [s["data"]["title"] for s in steps(again)] == [
        "debrief_list_plots",
        "debrief_get_features",
        "run_tool · closest-approach",
        "debrief_render_plot",
    ]
    assert text_of(again).split("\n")[0] == text_of(first).split("\n")[0]
    assert "119.5 yd at 10:45:09Z on 12 Dec 1995" in text_of(again)
    assert sorted(p.name for p in ws.glob("*.plot.json")) == ["nelson-collingwood.plot.json"]


async def test_a_ships_speed_course_and_position_at_a_time(host: HostProcess) -> None:
    track = {when: (lat, lon) for when, lat, lon in fixes("valid_boat1.rep")}
    at = datetime(1995, 12, 12, 10, 30, tzinfo=UTC)
    after = datetime(1995, 12, 12, 10, 31, tzinfo=UTC)
    before = datetime(1995, 12, 12, 10, 29, tzinfo=UTC)
    leg = WGS84.Inverse(*track[at], *track[after])  # at a fix: the leg after it, as legacy Debrief's tote
    earlier = WGS84.Inverse(*track[before], *track[at])
    speed, course = leg["s12"] / 1852 / (60 / 3600), leg["azi1"] % 360
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        frames = await chat.turn("What were NELSON's speed and position at 10:30?")
        answer = text_of(frames)
        assert [s["data"]["title"] for s in steps(frames)][-1] == "run_tool · tote"
        lat, lon = track[at]
        assert answer.startswith(
            f"At 10:30:00Z on 12 Dec 1995 NELSON was at {dm(lat, 2, 'NS')} {dm(lon, 3, 'EW')}, making "
            f"{speed:.1f} kn on course {course:03.0f}°."
        )
        assert (
            f"on the leg before, {earlier['s12'] / 1852 / (60 / 3600):.1f} kn on course {earlier['azi1'] % 360:03.0f}°"
            in answer
        )
        # between two fixes: one value, the one leg's
        other = {when: (la, lo) for when, la, lo in fixes("valid_boat2.rep")}
        answer = text_of(await chat.turn("Where was COLLINGWOOD at 10:30:30Z?"))
        t0, t1 = datetime(1995, 12, 12, 10, 30, tzinfo=UTC), datetime(1995, 12, 12, 10, 31, tzinfo=UTC)
        line = WGS84.InverseLine(*other[t0], *other[t1])
        half = line.Position(line.s13 / 2)  # the geodesic's middle: half-way in time at constant speed
        assert answer.startswith(
            f"At 10:30:30Z on 12 Dec 1995 COLLINGWOOD was at {dm(half['lat2'], 2, 'NS')} {dm(half['lon2'], 3, 'EW')}, "
            f"making {line.s13 / 1852 / (60 / 3600):.1f} kn on course {line.azi1 % 360:03.0f}°."
        )
        assert "leg before" not in answer
        # a time the track does not cover, a ship that is not there: said so
        answer = text_of(await chat.turn("What was NELSON's speed at 04:00?"))
        assert (
            answer
            == "04:00:00Z on 12 Dec 1995 is outside NELSON's track, which runs from 05:00:00Z to 11:41:00Z on 12 Dec 1995.\n"
        )
        answer = text_of(await chat.turn("What was VICTORY's speed at 10:00?"))
        assert answer.startswith(
            "I found no ship called **VICTORY**. The REP files I read (valid_boat1.rep, valid_boat2.rep) hold "
            "NELSON and COLLINGWOOD. Ask about those"
        )
        assert "kn" not in answer.split("\n")[0]  # nothing about the other ships


async def test_a_time_as_people_write_it_and_no_time_the_tools_did_not_give(host: HostProcess) -> None:
    """ "9am", "0900 hours", "9:30 pm": read as the clock times they are, the figures GeographicLib's
    from the REP file's fixes; asked without a time, the example is the track's own first time."""
    track = {when: (lat, lon) for when, lat, lon in fixes("valid_boat2.rep")}
    at, after = datetime(1995, 12, 12, 9, 0, tzinfo=UTC), datetime(1995, 12, 12, 9, 1, tzinfo=UTC)
    leg = WGS84.Inverse(*track[at], *track[after])  # at a fix: the leg after it
    lat, lon = track[at]
    expected = (
        f"At 09:00:00Z on 12 Dec 1995 COLLINGWOOD was at {dm(lat, 2, 'NS')} {dm(lon, 3, 'EW')}, making "
        f"{leg['s12'] / 1852 / (60 / 3600):.1f} kn on course {leg['azi1'] % 360:03.0f}°."
    )
    first = min(track)
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        for asked in ("how fast was collingwood going at 9am", "COLLINGWOOD's position at 0900 hours?"):
            assert text_of(await chat.turn(asked)).startswith(expected), asked
        late = text_of(await chat.turn("Where was COLLINGWOOD at 9:30 pm?"))
        assert late.startswith("21:30:00Z on 12 Dec 1995 is outside COLLINGWOOD's track, which runs from 05:03:00Z")
        hint = text_of(await chat.turn("how fast was collingwood going?"))
    assert hint.startswith("At what time? COLLINGWOOD's track runs from 05:03:00Z to 11:45:00Z on 12 Dec 1995")
    # every time of day it names is the track's first or last (the tools' answer), in some form
    said = {(int(h), int(m)) for h, m in re.findall(r"\b(\d{1,2}):?(\d{2})\b", hint.replace("12 Dec 1995", ""))}
    assert said == {(first.hour, first.minute), (11, 45)}, hint
    assert "5:03 am" in hint and "0503" in hint


async def test_the_last_hour_of_the_exercise(host: HostProcess) -> None:
    start, end = datetime(1995, 12, 12, 10, 45, tzinfo=UTC), datetime(1995, 12, 12, 11, 45, tzinfo=UTC)
    expected = []
    for name, ship in (("valid_boat1.rep", "NELSON"), ("valid_boat2.rep", "COLLINGWOOD")):
        inside = [f for f in fixes(name) if start <= f[0] <= end]  # both tracks have a fix at 10:45:00
        metres = sum(WGS84.Inverse(a[1], a[2], b[1], b[2])["s12"] for a, b in itertools.pairwise(inside))
        hours = (inside[-1][0] - inside[0][0]).total_seconds() / 3600
        expected.append(f"- **{ship}**: {metres / 1852:.2f} nm at a mean {metres / 1852 / hours:.1f} kn")
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        frames = await chat.turn("Show me the last hour of the exercise")
    answer = text_of(frames)
    assert answer.startswith("The last hour of the exercise, 10:45:00Z to 11:45:00Z on 12 Dec 1995:")
    lines = answer.splitlines()
    for want in expected:
        assert any(line.startswith(want) for line in lines), (want, answer)
    render = steps(frames)[-1]
    assert render["data"]["title"] == "debrief_render_plot" and render["data"]["outcome"] == "done"
    assert [f for f in frames if f["type"] == "image"]


async def test_anything_else_is_answered_plainly(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        frames = await chat.turn("What will the weather be tomorrow?")
    answer = text_of(frames)
    assert answer.startswith(
        "I cannot answer “What will the weather be tomorrow?”: I am the deterministic stand-in, not a language model"
    )
    assert "What I can do:" in answer and "*What were NELSON's speed and position at 10:30?*" in answer
    assert steps(frames) == []  # no tool was run for it


async def test_questions_in_a_persons_words(host: HostProcess) -> None:
    """ "when were they closest?" is the closest approach; "what was COLLINGWOOD doing at 0930?" its
    course, speed and position (GeographicLib's from the REP file's fixes); warnings name ships."""
    track = {when: (lat, lon) for when, lat, lon in fixes("valid_boat2.rep")}
    at, after = datetime(1995, 12, 12, 9, 30, tzinfo=UTC), datetime(1995, 12, 12, 9, 31, tzinfo=UTC)
    leg = WGS84.Inverse(*track[at], *track[after])
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        closest = text_of(await chat.turn("when were they closest?"))
        doing = text_of(await chat.turn("what was COLLINGWOOD doing at 0930?"))
    assert closest.startswith("The closest approach between NELSON and COLLINGWOOD was 119.5 yd at 10:45:09Z")
    lat, lon = track[at]
    assert doing.startswith(
        f"At 09:30:00Z on 12 Dec 1995 COLLINGWOOD was at {dm(lat, 2, 'NS')} {dm(lon, 3, 'EW')}, making "
        f"{leg['s12'] / 1852 / (60 / 3600):.1f} kn on course {leg['azi1'] % 360:03.0f}°."
    ), doing
    warnings = doing.split("**The tools warned:**", 1)[-1]
    assert "rep-" not in warnings and "the row's note" not in warnings and "`run_tool" not in warnings, warnings
