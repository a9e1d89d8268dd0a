"""What the issue-22 analyst trial found left out or said misleadingly, each checked on the REP sample
ships (NELSON and COLLINGWOOD, tests/data/rep) against GeographicLib computations written here (the
trial's reference script's logic: each leg a geodesic sailed at constant speed, the range and its rate
by finite differences between fixes), never against the code's own earlier output.

- a pass's closing speed: both ships' course and speed, the speed of relative motion, the peak closing
  rate on the run-in;
- range_trend never calls the range monotonic across a dip; the minima that are no pass are lesser dips.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client
from PIL import Image

from debrief_calc.analysis.passes import DEFAULT_DIP_RISE_M, DEFAULT_RISE, DEFAULT_RISE_M
from debrief_calc.tracks.features import parse_iso
from llmem.core.config import ServerConfig
from tests import test_analysis_passes as passes_tests
from tests.conftest import MODES, call
from tests.test_analysis_passes import (
    DAY,
    KNOT,
    YD,
    Pair,
    Ship,
    at,
    passes_by_definition,
    window,
)
from tests.test_analysis_support import boats, props, run_ok


@pytest.fixture(scope="module")
def pair() -> Pair:
    nelson, collingwood = boats()
    return Pair(Ship(nelson), Ship(collingwood))


def leg_motion(ship: Ship, when: float) -> tuple[float, float]:
    """Course (mid-leg, degrees) and speed (kn) of the leg ``when`` is on (at a fix: the leg after)."""
    i = ship.leg(when)
    return ship.course(i), ship.lines[i].s13 / (ship.t[i + 1] - ship.t[i]) / KNOT


def range_rate(pair: Pair, when: float, h: float = 0.25) -> float:
    """kn, positive opening: a finite difference of GeographicLib's range with each ship on its leg at ``when``."""
    legs = (pair.a.leg(when), pair.b.leg(when))
    return (pair.range(when + h, legs) - pair.range(when - h, legs)) / (2 * h) / KNOT


# --- 1. closing speed at a pass -------------------------------------------------------------------------------


def test_each_pass_gives_both_motions_the_relative_speed_and_the_peak_closing_on_its_run_in(pair: Pair) -> None:
    """The trial's request A (10:00-11:00): closing speed at each pass. Reference: 14.3 kn, 5.9 kn and 12.7 kn
    of relative motion; peak closing 12.3 kn at 10:13, 14.6 kn at 10:36, 8.0-8.2 kn at 10:54."""
    nelson, collingwood = boats()
    cpa = props(
        run_ok("closest-approach", window([nelson, collingwood], "10:00:00", "11:00:00"), {"distance_unit": "yd"})
    )
    assert cpa["pass_count"] == 3
    for entry in cpa["passes"]:
        when = parse_iso(entry["time"])
        (ca, sa), (cb, sb) = leg_motion(pair.a, when), leg_motion(pair.b, when)
        assert entry["first_course"] == pytest.approx(ca, abs=1e-3)
        assert entry["first_speed_kn"] == pytest.approx(sa, abs=1e-3)
        assert entry["second_course"] == pytest.approx(cb, abs=1e-3)
        assert entry["second_speed_kn"] == pytest.approx(sb, abs=1e-3)
        ve = sb * math.sin(math.radians(cb)) - sa * math.sin(math.radians(ca))
        vn = sb * math.cos(math.radians(cb)) - sa * math.cos(math.radians(ca))
        assert entry["relative_speed_kn"] == pytest.approx(math.hypot(ve, vn), abs=1e-3)
        assert range_rate(pair, when) == pytest.approx(0.0, abs=0.01)  # why range_rate is no closing speed
        # the run-in: every second from the range maximum before the pass up to it
        start = parse_iso(entry["closing_from"]["time"])
        grid = np.arange(start, when, 1.0)
        rates = np.array([range_rate(pair, float(t)) for t in grid])
        k = int(np.argmin(rates))
        assert entry["peak_closing_kn"] == pytest.approx(-rates[k], abs=0.01)
        assert abs(parse_iso(entry["peak_closing_time"]) - grid[k]) <= 1.0
    relative = [round(e["relative_speed_kn"], 1) for e in cpa["passes"]]
    peaks = [(round(e["peak_closing_kn"], 1), e["peak_closing_time"][11:19]) for e in cpa["passes"]]
    assert relative == [14.3, 5.9, 12.7]
    assert peaks == [(12.3, "10:13:00"), (14.6, "10:36:00"), (8.2, "10:54:00")]


def test_a_pass_motion_is_the_totes_at_that_time(pair: Pair) -> None:
    """One course and speed at a time: the pass's figures are the tote's at the pass's instant and the
    peak closing rate is the tote's range_rate at its time, negated."""
    nelson, collingwood = boats()
    rb = props(run_ok("range-bearing", window([nelson, collingwood], "10:00:00", "11:00:00"), {"distance_unit": "yd"}))
    for entry in rb["passes"]:
        row = props(run_ok("tote", [nelson, collingwood], {"time": entry["time"]}))
        assert (entry["primary_course"], entry["secondary_course"]) == (row["primary_course"], row["secondary_course"])
        assert (entry["primary_speed_kn"], entry["secondary_speed_kn"]) == (
            row["primary_speed"],
            row["secondary_speed"],
        )
        peak = props(run_ok("tote", [nelson, collingwood], {"time": entry["peak_closing_time"]}))
        assert entry["peak_closing_kn"] == pytest.approx(-peak["range_rate"], abs=1e-4)


# --- 2. range_trend and lesser dips ---------------------------------------------------------------------------

_NODE = re.compile(
    r"(closing|opening) to (pass \d+: |a lesser dip |the least range \(not a pass\) )?([\d.]+) yd at "
    r"(?:the end \()?([0-9T:.\-]+Z)"
)


def test_range_trend_tells_every_dip_and_never_calls_the_range_monotonic_across_one(pair: Pair) -> None:
    """10:00-11:00: after the CPA the range dipped to 270.3 yd at 10:49:37 (not a pass) and to 270.0 yd at
    10:59:45, opening to 285.3 yd at 11:00; the trial's text said "closing to 285.3 yd at the end"."""
    nelson, collingwood = boats()
    cpa = props(
        run_ok("closest-approach", window([nelson, collingwood], "10:00:00", "11:00:00"), {"distance_unit": "yd"})
    )
    t, r = pair.dense(at("10:00:00"), at("11:00:00"))
    passes = passes_by_definition(t, r, DEFAULT_RISE, DEFAULT_RISE_M)
    dips = [i for i in passes_by_definition(t, r, 0.0, DEFAULT_DIP_RISE_M) if i not in passes]
    expected = [pair.least_near(float(t[i])) for i in dips]
    assert cpa["lesser_dip_count"] == len(cpa["lesser_dips"]) == len(expected) >= 2
    for dip, (when, metres) in zip(cpa["lesser_dips"], expected, strict=True):
        assert parse_iso(dip["time"]) == pytest.approx(when, abs=0.01)
        assert dip["range"] == pytest.approx(metres / YD, abs=0.005)
        assert not dip["is_least"]
    told = {(d["time"][11:19], round(d["range"], 1)) for d in cpa["lesser_dips"]}
    assert {("10:49:36", 270.3), ("10:59:45", 270.0)} <= told
    trend = cpa["range_trend"]
    assert trend.endswith(f"opening to 285.3 yd at the end ({DAY}11:00:00Z)")
    # between two turning points told, GeographicLib's range runs one way but for wobbles under dip_rise_m
    nodes = [(m[1], float(m[3]), parse_iso(m[4])) for m in _NODE.finditer(trend)]
    assert len(nodes) == trend.count(" to ") and nodes[-1][2] == at("11:00:00")
    before = at("10:00:00")
    for way, value, when in nodes:
        seg = r[(t >= before) & (t <= when)]
        if way == "closing":
            assert seg[-1] <= seg[0] and np.max(seg - np.minimum.accumulate(seg)) < DEFAULT_DIP_RISE_M
        else:
            assert seg[-1] >= seg[0] and np.max(np.maximum.accumulate(seg) - seg) < DEFAULT_DIP_RISE_M
        assert value == pytest.approx(pair.range(when) / YD, rel=2.5e-4, abs=0.06)  # told to 4 figures
        before = when


def test_dip_rise_m_sets_the_bar_and_the_least_range_that_is_no_pass_is_its_dip(pair: Pair) -> None:
    nelson, collingwood = boats()
    cut = window([nelson, collingwood], "10:00:00", "11:00:00")
    coarse = props(run_ok("closest-approach", cut, {"distance_unit": "yd", "dip_rise_m": 60}))
    t, r = pair.dense(at("10:00:00"), at("11:00:00"))
    passes = passes_by_definition(t, r, DEFAULT_RISE, DEFAULT_RISE_M)
    dips = [i for i in passes_by_definition(t, r, 0.0, 60.0) if i not in passes]
    assert [d["time"][11:19] for d in coarse["lesser_dips"]] == [
        _hms(pair.least_near(float(t[i]))[0]) for i in dips
    ] and coarse["lesser_dip_count"] == len(dips) >= 1
    # 10:00-10:46: the least range (10:45:09) rises too little after it to be a pass; it is a dip, told once
    short = props(
        run_ok("closest-approach", window([nelson, collingwood], "10:00:00", "10:46:00"), {"distance_unit": "yd"})
    )
    (least,) = [d for d in short["lesser_dips"] if d["is_least"]]
    assert (least["time"], least["range"]) == (short["time"], short["range"]) and not short["is_pass"]
    assert short["range_trend"].count("the least range (not a pass)") == 1


def _hms(when: float) -> str:
    from debrief_calc.tracks.features import iso

    return iso(when)[11:19]


# --- through the calc server, both eras ------------------------------------------------------------------------


#: the REP boats in a workspace, through the calc server in both eras
client = passes_tests.client


async def _import_boats(client: Client) -> list[dict[str, Any]]:
    err, out = await call(
        client, "run_tool", tool="import-rep", parameters={"paths": ["valid_boat1.rep", "valid_boat2.rep"]}
    )
    assert not err, out
    return [{"ref": out["stored"]["ref"]}]


@pytest.mark.anyio
async def test_passes_and_dips_through_run_tool(client: Client, pair: Pair) -> None:
    refs = await _import_boats(client)
    window_args = {"time_start": f"{DAY}10:00:00Z", "time_end": f"{DAY}11:00:00Z"}
    err, out = await call(
        client, "run_tool", tool="closest-approach", features=refs, parameters={"distance_unit": "yd"}, **window_args
    )
    assert not err, out
    cpa = out["features"][0]["properties"]
    (best,) = [p for p in cpa["passes"] if p["is_cpa"]]
    assert best["relative_speed_kn"] == pytest.approx(5.856, abs=0.01)
    assert best["peak_closing_kn"] == pytest.approx(-range_rate(pair, parse_iso(best["peak_closing_time"])), abs=0.01)
    assert any(d["time"].startswith(f"{DAY}10:49:36") for d in cpa["lesser_dips"])
    err, out = await call(client, "describe_tool", name="closest-approach")
    assert not err and "dip_rise_m" in {p["name"] for p in out["parameters"]}


# --- 3. track-legs turns: start, end, duration and rate agree; degrees sailed apart from the net ---------------


def test_turns_run_middle_to_middle_and_the_headline_parts_degrees_sailed_from_the_net(pair: Pair) -> None:
    """The trial's request C: NELSON from 10:36:31.976 (entering 1 nm) to 11:41. It saw a 5.5 deg turn at 10:42
    with duration_s 0, a 377 deg turn with duration 540 s but rate 37.69 (= 376.9/600 s), and a manoeuvre
    headlined "starboard 605" for fifty minutes of turns both ways."""
    nelson, _ = boats()
    cut = window([nelson], "10:36:31.976", "11:41:00")
    answer = props(run_ok("track-legs", cut, {}))
    ship = pair.a
    every = [*answer["manoeuvres"], *(t for m in answer["manoeuvres"] for t in m.get("turns", []))]
    assert len(every) > 5
    for turn in every:
        start, end = parse_iso(turn["start"]), parse_iso(turn["end"])
        assert turn["duration_s"] == pytest.approx(end - start, abs=1e-3) and turn["duration_s"] > 0
        minutes = turn["duration_s"] / 60  # turn_deg is to 0.1 deg, the rate to 0.01 deg/min
        assert turn["rate_of_turn"] == pytest.approx(turn["turn_deg"] / minutes, abs=0.05 / minutes + 0.006)
        # start and end are segment middles: the instants the courses turned from and to are measured at
        for when in (start, end):
            i = ship.leg(when)
            assert when == pytest.approx((ship.t[i] + ship.t[i + 1]) / 2, abs=1e-3) or when == pytest.approx(
                at("10:36:31.976") + (ship.t[i + 1] - at("10:36:31.976")) / 2, abs=1e-3
            )  # the first segment, cut by the window
    (big,) = [m for m in answer["manoeuvres"] if m["between_legs"] == [1, 2]]
    turns = big["turns"]
    # the 10:42 wobble: one step between the 10:41 and 10:42 segments, lasting that minute
    (wobble,) = [t for t in turns if t["start"].endswith("10:41:30Z")]
    step = wrap_deg(ship.course(ship.leg(at("10:42:10"))) - ship.course(ship.leg(at("10:41:10"))))
    assert (wobble["end"], wobble["duration_s"]) == (f"{DAY}10:42:30Z", 60)
    assert wobble["turn_deg"] == pytest.approx(abs(step), abs=0.06) and wobble["rate_of_turn"] == pytest.approx(
        abs(step), abs=0.06
    )
    # the full circle to port: 10:42:30 to 10:52:30, its rate its degrees over those ten minutes
    (circle,) = [t for t in turns if t["start"].endswith("10:42:30Z")]
    assert circle["duration_s"] == 600 and circle["rate_of_turn"] == pytest.approx(circle["turn_deg"] / 10, abs=0.01)
    # the headline: degrees sailed (every turn summed) beside the net change of course
    signed = sum(t["turn_deg"] * (1 if t["turn"] == "starboard" else -1) for t in turns)
    assert big["turn"] == "both ways" and big["turn_deg"] == pytest.approx(sum(t["turn_deg"] for t in turns), abs=0.11)
    assert big["net_turn"] == "starboard" and big["net_turn_deg"] == pytest.approx(signed, abs=6)
    assert big["turn_deg"] > 3 * big["net_turn_deg"] and big["turns_text"].startswith("port 29° then starboard 6°")


def wrap_deg(x: float) -> float:
    return 180.0 - (180.0 - x) % 360.0


# --- 6. the REP course column -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["valid_boat1.rep", "valid_boat2.rep"])
def test_import_rep_warns_of_a_course_column_off_the_course_between_fixes(name: str) -> None:
    """The trial: NELSON's REP says 022.8 deg at 10:45, the tote 029.8 deg; the column is a median 6.8 deg (NELSON)
    and 7.4 deg (COLLINGWOOD) off the positions. Reference: each fix's column against GeographicLib's course of
    the leg it starts (at the leg's middle), over legs sailed at 1 kn or more."""
    from tests.test_analysis_support import rep_text

    text = rep_text(name)
    result = run_ok("import-rep", params={"text": text})
    (track,) = result.features
    ship = Ship(track)
    stated = [float(line.split()[12]) for line in text.splitlines() if line.strip()]
    diffs = []
    for i, line in enumerate(ship.lines):
        if line.s13 / (ship.t[i + 1] - ship.t[i]) / KNOT >= 1.0:
            diffs.append(abs(wrap_deg(stated[i] - ship.course(i))))
    (warning,) = result.warnings
    assert f"courses between fixes a median {np.median(diffs):.1f}° away, at most {max(diffs):.1f}°" in warning
    assert np.median(diffs) > 6 and warning.endswith("the tote's course is the course between fixes, not the column's")


# --- 4. the ship symbol points the tote's course -----------------------------------------------------------------


def _dart_bearing(png: bytes, colour: tuple[int, int, int], at: tuple[int, int]) -> float:
    """The true bearing a ship's dart points on a north-up picture: its fill within 11 px of ``at`` (inside
    the white outline, so no track line), the axis it is mirror-symmetric about, and the end it reaches
    further along (the tip, 13 px out, against the quarters' 9)."""
    import io

    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    x0, y0 = at
    ys, xs = np.nonzero(np.all(rgb[y0 - 20 : y0 + 21, x0 - 20 : x0 + 21] == colour, axis=-1))
    dx, dy = xs - 20.0, ys - 20.0
    keep = np.hypot(dx, dy) < 11
    px, py = dx[keep] - dx[keep].mean(), dy[keep] - dy[keep].mean()
    assert px.size > 60

    def asymmetry(angle: float) -> float:
        ux, uy = math.cos(angle), math.sin(angle)
        d = px * ux + py * uy
        rx, ry = 2 * d * ux - px, 2 * d * uy - py
        return float(np.mean(np.hypot(rx[:, None] - px[None, :], ry[:, None] - py[None, :]).min(axis=1)))

    axis = min(np.radians(np.arange(0.0, 180.0, 0.5)), key=asymmetry)
    ux, uy = math.cos(axis), math.sin(axis)
    along = px * ux + py * uy
    if along.max() < -along.min():
        ux, uy = -ux, -uy
    return math.degrees(math.atan2(ux, -uy)) % 360.0  # screen y runs down


def test_the_ship_symbol_between_fixes_points_the_totes_course(pair: Pair) -> None:
    """The trial's request B at the CPA, 10:45:08.902: NELSON's arrow pointed some 055-060 deg, a blend of the
    080 deg leg before the 10:45 fix and the 029.8 deg leg after it, where the tote and the drawn segment say
    029.8 deg (GeographicLib: the course of the leg 10:45-10:46 at its middle)."""
    import copy

    from debrief_calc.geo.geodesy import interpolate_track
    from debrief_calc.plots.render import render_plot
    from debrief_calc.plots.render._common import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, PALETTE, rgb

    nelson, collingwood = boats()
    when = parse_iso(f"{DAY}10:45:08.902Z")
    tote = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:45:08.902Z"}))
    for ship, feature, course in ((pair.a, nelson, "primary_course"), (pair.b, collingwood, "secondary_course")):
        assert tote[course] == pytest.approx(ship.course(ship.leg(when)), abs=1e-3)
        alone = copy.deepcopy(feature)
        del alone["properties"]["name"]  # no label beside the symbol
        lat, lon = interpolate_track(ship.t, ship.lat, ship.lon, when)
        bounds = [float(lon) - 0.01, float(lat) - 0.01, float(lon) + 0.01, float(lat) + 0.01]
        drawn = render_plot(
            {"type": "FeatureCollection", "features": [alone]}, fit=bounds, current_time=when, show_future=False
        )
        middle = (
            round((MARGIN_SIDE + drawn.width - MARGIN_SIDE) / 2),
            round((MARGIN_TOP + drawn.height - MARGIN_BOTTOM) / 2),
        )
        colour = rgb(alone["properties"].get("stroke"), PALETTE[0])
        bearing = _dart_bearing(drawn.png, colour, middle)
        assert abs(wrap_deg(bearing - tote[course])) < 6.0, (bearing, tote[course])  # the blend was 25 deg off


# --- 5. a new plot drawn at once shows its tracks solid ------------------------------------------------------------


@pytest.fixture(params=MODES)
async def state(request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[Client]:
    from debrief_calc.state.server import build_server as build_state

    async with Client(build_state(ServerConfig("debrief-state-mcp", workspace)), mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_a_new_plot_drawn_at_once_draws_its_tracks_solid(state: Client, workspace: Path) -> None:
    """The trial's request B: debrief_create_plot for the hour 10:15-11:15, then debrief_render_plot, drew both
    tracks almost wholly faint ("future"), the new plot's current time being its window's start. A new plot's
    current time is now its window's end; the picture's answer says which time it drew and where it came from."""
    from debrief_calc.plots.render import render_plot
    from debrief_calc.plots.render._common import BACKGROUND, FAINT, PALETTE, blend, rgb
    from debrief_calc.tracks.times import Window

    nelson, collingwood = boats()
    err, made = await call(
        state,
        "debrief_create_plot",
        filename="cpa_hour.plot.json",
        features=[nelson, collingwood],
        time_start=f"{DAY}10:15:00Z",
        time_end=f"{DAY}11:15:00Z",
    )
    assert not err, made
    assert made["timeState"] == {"current": f"{DAY}11:15:00Z", "start": f"{DAY}10:15:00Z", "end": f"{DAY}11:15:00Z"}
    err, drawn = await call(state, "debrief_render_plot", filename="cpa_hour.plot.json")
    assert not err, drawn
    assert drawn["time"] == f"{DAY}11:15:00Z" and drawn["time_source"].startswith("the plot's current time")
    assert drawn["window"]["source"] == "plot"
    # the picture the answer describes: no part of either track faint, both drawn in their colours
    data = json.loads((workspace / "cpa_hour.plot.json").read_text(encoding="utf-8"))
    picture = render_plot(data, current_time=parse_iso(drawn["time"]), window=Window(at("10:15:00"), at("11:15:00")))
    rgb_px = np.asarray(Image.open(io.BytesIO(picture.png)).convert("RGB"))
    for n, feature in enumerate(f for f in data["features"] if f["id"] in ("rep-nelson", "rep-collingwood")):
        colour = rgb(feature["properties"].get("stroke"), PALETTE[n % len(PALETTE)])
        assert np.all(rgb_px == colour, axis=-1).sum() > 300
        assert np.all(rgb_px == blend(colour, BACKGROUND, FAINT), axis=-1).sum() == 0
    err, asked = await call(state, "debrief_render_plot", filename="cpa_hour.plot.json", time=f"{DAY}10:45:09Z")
    assert not err and asked["time_source"] == "asked"


# --- 7. render_series of a stored result states the result's window -------------------------------------------------


@pytest.mark.anyio
async def test_render_series_of_a_stored_result_states_the_window_it_was_computed_on(client: Client) -> None:
    """The trial's request D: range-bearing run over 10:15-11:15, then render_series(features=[{ref}]) answered
    window.source "data"; it is the result's own window (its provenance.window)."""
    refs = await _import_boats(client)
    err, out = await call(
        client,
        "run_tool",
        tool="range-bearing",
        features=refs,
        parameters={"interval_s": 5, "distance_unit": "yd"},
        time_start=f"{DAY}10:15:00Z",
        time_end=f"{DAY}11:15:00Z",
    )
    assert not err, out
    result = out["features"][0]
    assert out["window"]["source"] == "asked"
    err, drawn = await call(
        client, "render_series", features=[{"ref": f"debrief-calc:results/{result['id']}"}], quantities=["range"]
    )
    assert not err, drawn
    window = drawn["window"]
    assert (window["start"], window["end"], window["source"]) == (f"{DAY}10:15:00Z", f"{DAY}11:15:00Z", "asked")
    assert "provenance" in window["of"]
    # asked for again in the call, the call's window is the one stated
    err, again = await call(
        client,
        "render_series",
        features=[{"ref": f"debrief-calc:results/{result['id']}"}],
        quantities=["range"],
        time_start=f"{DAY}10:30:00Z",
    )
    assert not err and again["window"]["start"] == f"{DAY}10:30:00Z" and "of" not in again["window"]


# --- over stdio, through the real console scripts ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_fixes_over_stdio_through_debrief_calc_mcp(workspace: Path, pair: Pair) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import DATA, console_script, subprocess_env

    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        (workspace / name).write_text((DATA / "rep" / name).read_text(encoding="utf-8"), encoding="utf-8")
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    window_args = {"time_start": f"{DAY}10:00:00Z", "time_end": f"{DAY}11:00:00Z"}
    with anyio.fail_after(120):
        async with Client(params) as c:
            err, out = await call(
                c, "run_tool", tool="import-rep", parameters={"paths": ["valid_boat1.rep", "valid_boat2.rep"]}
            )
            assert not err, out
            assert any("the tote's course is the course between fixes" in w for w in out.get("warnings", []))
            refs = [{"ref": out["stored"]["ref"]}]
            err, out = await call(
                c, "run_tool", tool="closest-approach", features=refs, parameters={"distance_unit": "yd"}, **window_args
            )
            assert not err, out
            cpa = out["features"][0]["properties"]
            for entry in cpa["passes"]:
                peak = parse_iso(entry["peak_closing_time"])
                assert entry["peak_closing_kn"] == pytest.approx(-range_rate(pair, peak), abs=0.01)
            assert "a lesser dip 270.3 yd" in cpa["range_trend"] and cpa["lesser_dip_count"] >= 2
            err, out = await call(c, "run_tool", tool="track-legs", features=refs[:1], **window_args)
            assert not err, out
            legs = out["features"][0]["properties"]
            assert all(m["duration_s"] > 0 and "net_turn_deg" in m for m in legs["manoeuvres"])


@pytest.mark.anyio
async def test_a_new_plot_rendered_over_stdio_through_debrief_state_mcp(workspace: Path) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    params = StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params) as c:
            err, made = await call(
                c,
                "debrief_create_plot",
                filename="hour.plot.json",
                features=list(boats()),
                time_start=f"{DAY}10:15:00Z",
                time_end=f"{DAY}11:15:00Z",
            )
            assert not err and made["timeState"]["current"] == f"{DAY}11:15:00Z", made
            err, drawn = await call(c, "debrief_render_plot", filename="hour.plot.json")
            assert not err and drawn["time"] == f"{DAY}11:15:00Z", drawn
            assert drawn["time_source"].startswith("the plot's current time")
