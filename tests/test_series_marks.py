"""render_series's time plot as an analyst reads it (issue 22 §4), through the real protocol in both
eras: axes over the values (not from zero) unless asked, cut at the panel's edge; which sign of a
rate is which, and whose each panel is; every pass marked, as closest-approach lists them; close
quarters shaded, as close-quarters finds them (given or run); one track's motion as steps between
its fixes, at the speeds GeographicLib gives its legs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client
from PIL import Image

from debrief_calc.calc.series_plot import _LEFT, _RIGHT
from debrief_calc.tracks.features import parse_iso
from tests.conftest import call
from tests.test_series import HOUR, _plot_of_the_exercise, _track, client, fails, imported, series, ws

pytestmark = pytest.mark.anyio
__all__ = ["client", "ws"]  # the fixtures, used by name

BLUE = (31, 119, 180)  # the first panel's line
OUTLINE = (170, 175, 185)
KNOT = 1852 / 3600


def _near(rgb: Any, colour: tuple[int, int, int], tolerance: int = 40) -> Any:
    return np.abs(rgb - np.asarray(colour)).sum(axis=-1) < tolerance


def _frames(picture: Image.Image) -> list[int]:
    """The rows of the panels' top and bottom edges (rows mostly of the frame's grey)."""
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    rows = np.flatnonzero(_near(rgb, OUTLINE, 6).sum(axis=1) > picture.size[0] * 0.6)
    return [int(r) for r in rows]


def _x(t: float, span: list[str], width: int) -> float:
    t0, t1 = parse_iso(span[0]), parse_iso(span[1])
    return _LEFT + (t - t0) / (t1 - t0) * (width - _RIGHT - _LEFT)


async def test_axes_span_the_values_unless_asked_and_cut_what_is_outside(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    pair = [nelson, collingwood]
    # 10:18 to 10:28 the ships pass at 2,412 yd, the range between about 2,400 and 3,400 yd
    close, _ = await series(
        client,
        features=pair,
        quantities=["range"],
        time_start="1995-12-12T10:18:00Z",
        time_end="1995-12-12T10:28:00Z",
        parameters={"distance_unit": "yd"},
    )
    (rng,) = close["panels"]
    assert 2300 < rng["axis"][0] < rng["min"] < 2420 and rng["axis"][1] >= rng["max"]  # not from zero
    # asked: the axis is as asked, and the line beyond it is cut at the panel's edge
    asked, picture = await series(
        client, features=pair, parameters={"distance_unit": "yd", "y_range": {"range": [1000, 3000]}}, **HOUR
    )
    rng = asked["panels"][0]
    assert rng["axis"] == rng["limits"] == [1000, 3000] and rng["min"] < 1000 < 3000 < rng["max"]
    top, bottom = _frames(picture)[:2]  # the range panel's frame
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    blue = _near(rgb, BLUE)[:, _LEFT + 2 : picture.size[0] - _RIGHT - 2]
    assert blue[top + 20 : bottom].any() and not blue[bottom + 1 :].any()  # nothing below the range panel
    # one end open: the data's
    half, _ = await series(client, features=pair, parameters={"y_range": {"bearing": [None, 200]}}, **HOUR)
    bearing = half["panels"][1]
    assert bearing["axis"][1] == 200 and bearing["axis"][0] <= bearing["min"] and bearing["limits"] == [None, 200]
    cases: list[tuple[Any, str]] = [
        ({"speed_of_light": [0, 1]}, "parameters.y_range.speed_of_light"),
        ({"range": [3000, 1000]}, "parameters.y_range.range"),
        ({"range": [0]}, "parameters.y_range.range"),
        ({"range": ["0", 1]}, "parameters.y_range.range"),
        ([0, 1], "parameters.y_range"),
    ]
    for limits, field in cases:
        error = await fails(client, features=pair, parameters={"y_range": limits})
        assert error["details"]["field"] == field, (limits, error)


async def test_a_signed_rate_says_which_sign_is_which_and_a_panel_whose_it_is(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    asked = ["bearing_rate", "range_rate", "primary_course", "secondary_speed", "primary_rate_of_turn", "atb"]
    answer, _ = await series(client, features=[nelson, collingwood], quantities=asked, **HOUR)
    assert [p["label"] for p in answer["panels"]] == [
        "Bearing rate (°/min, + drawing right)",
        "Range rate (kn, + opening)",
        "NELSON course (°T)",
        "COLLINGWOOD speed (kn)",
        "NELSON rate of turn (°/min, + to starboard)",
        "ATB (°, + starboard/G)",
    ]
    assert answer["title"] == (
        "Bearing rate, range rate, NELSON course, COLLINGWOOD speed, NELSON rate of turn and ATB NELSON to COLLINGWOOD"
    )
    peak = answer["panels"][0]["true_peak"]  # negative: drawing left, as range-bearing's side says
    assert peak["value"] < 0 and "(drawing left)" in peak["label"]
    err, stored = await call(client, "get_result", ref=answer["source"]["ref"])
    assert not err and stored["features"][0]["properties"]["peak_bearing_rate_side"] == "L"
    # the range rate's sign: closing (negative) before the CPA, opening after (the curve's extremes)
    rate = answer["panels"][1]
    assert rate["min"] < 0 < rate["max"]


async def test_every_pass_is_marked_as_closest_approach_lists_them(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    pair = [nelson, collingwood]
    answer, picture = await series(client, features=pair, parameters={"distance_unit": "yd"}, **HOUR)
    err, run = await call(
        client, "run_tool", tool="closest-approach", features=pair, parameters={"distance_unit": "yd"}, **HOUR
    )
    assert not err
    passes = run["features"][0]["properties"]["passes"]
    assert len(passes) == len(answer["passes"]) == 3
    assert [(p["time"], p["range"]) for p in answer["passes"]] == [(p["time"], p["range"]) for p in passes]
    assert [p["is_cpa"] for p in answer["passes"]] == [p["is_cpa"] for p in passes] == [False, True, False]
    assert answer["passes"][1]["label"] == answer["cpa"]["label"] == "CPA 119.5 yd at 10:45:09"
    others = [p for p in answer["passes"] if not p["is_cpa"]]
    assert [p["label"] for p in others] == ["Pass 1: 2,412 yd at 10:23:12", "Pass 3: 235 yd at 10:54:28"]
    assert all(p["labelled"] for p in others)
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    orange = _near(rgb, (230, 120, 0), 60)
    top, bottom = _frames(picture)[:2]
    for p in others:  # an orange ring on the range panel at each pass's time
        x = round(_x(parse_iso(p["time"]), answer["span"], picture.size[0]))
        assert orange[top:bottom, x - 5 : x + 6].sum() > 10, p
    # a window holding one pass: that one alone
    late, _ = await series(
        client, features=pair, time_start="1995-12-12T10:50:00Z", time_end="1995-12-12T11:00:00Z", quantities=["range"]
    )
    assert [p["time"] for p in late["passes"]] == [passes[2]["time"]]


async def test_close_quarters_are_shaded_as_close_quarters_finds_them(client: Client, ws: Path) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    pair = [nelson, collingwood]
    answer, picture = await series(
        client, features=pair, parameters={"distance_unit": "yd", "close_quarters": 500}, **HOUR
    )
    err, run = await call(
        client,
        "run_tool",
        tool="close-quarters",
        features=pair,
        parameters={"distance_unit": "yd", "threshold": 500},
        **HOUR,
    )
    assert not err
    found = run["features"][0]["properties"]["periods"]
    shaded = answer["close_quarters"]
    assert (shaded["threshold"], shaded["unit"]) == (500, "yd")
    assert [(p["start"], p["end"]) for p in shaded["periods"]] == [(p["start"], p["end"]) for p in found]
    assert all(p["drawn"] for p in shaded["periods"]) and len(found) == 2
    err, kept = await call(client, "get_result", ref=shaded["ref"])  # the run is kept, as range-bearing's
    assert not err and kept["features"][0]["properties"]["periods"] == found
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    frames = _frames(picture)
    middle = (frames[2] + frames[3]) // 2  # the bearing panel's middle row
    first = found[0]
    inside = round(_x((parse_iso(first["start"]) + parse_iso(first["end"])) / 2, answer["span"], picture.size[0]))
    before = round(_x(parse_iso(first["start"]) - 300, answer["span"], picture.size[0]))
    shade = (251, 236, 217)  # the orange wash over the panel's ground
    assert _near(rgb[middle - 20 : middle + 20, inside], shade, 8).sum() > 20
    assert not _near(rgb[middle - 20 : middle + 20, before], shade, 8).any()
    # the same periods from the result given by its ref, beside a stored range-bearing result
    by_ref, _ = await series(client, features=[{"ref": answer["source"]["ref"]}, {"ref": shaded["ref"]}])
    assert by_ref["close_quarters"]["periods"] == shaded["periods"]
    assert by_ref["close_quarters"]["ref"] == shaded["ref"]
    # a threshold is run on tracks: with a stored result it is refused, naming what to pass instead
    error = await fails(client, features=[{"ref": answer["source"]["ref"]}], parameters={"close_quarters": 500})
    assert error["details"]["field"] == "parameters.close_quarters" and "close-quarters result" in error["message"]
    error = await fails(client, features=pair, parameters={"close_quarters": -1})
    assert error["details"]["field"] == "parameters.close_quarters"
    # close quarters never reached: said, nothing shaded
    never, _ = await series(client, features=pair, parameters={"distance_unit": "yd", "close_quarters": 50}, **HOUR)
    assert never["close_quarters"]["periods"] == [] and "never within" in never["close_quarters"]["note"]


def _leg_speeds_kn(name: str, start: float, end: float) -> list[float]:
    """The speed of every leg of a track that overlaps [start, end], GeographicLib's length over its time."""
    times, lat, lon = _track(name)
    out = []
    for i in range(len(times) - 1):
        if times[i + 1] > start and times[i] < end and times[i + 1] > times[i]:
            metres = Geodesic.WGS84.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])["s12"]
            out.append(metres / (times[i + 1] - times[i]) / KNOT)
    return out


async def test_one_tracks_motion_is_a_step_between_fixes(client: Client, ws: Path) -> None:
    """Between two fixes a platform keeps to one leg: the speed drawn is each leg's, a step at every fix,
    its extremes those of the legs (GeographicLib); the rate of turn steps at the legs' middles."""
    _plot_of_the_exercise(ws)
    answer, _ = await series(
        client,
        plot={"filename": "exercise.plot.json", "feature_ids": ["rep-nelson"]},
        quantities=["speed", "course", "rate_of_turn"],
        **HOUR,
    )
    assert answer["title"] == "Speed, course and rate of turn of NELSON"
    speed, _, turn = answer["panels"]
    assert turn["label"] == "NELSON rate of turn (°/min, + to starboard)" and speed["extrema"] == "curve"
    legs = _leg_speeds_kn("valid_boat1.rep", parse_iso(HOUR["time_start"]), parse_iso(HOUR["time_end"]))
    assert speed["min"] == pytest.approx(min(legs), abs=0.01) and speed["max"] == pytest.approx(max(legs), abs=0.01)
    assert turn["min"] < 0 < turn["max"]
