"""Sensor cuts and target solutions on the picture, checked on its pixels against GeographicLib:
each active cut a line from its origin along its bearing (Direct on WGS84, placed on the picture by
the linear map from its ``bounds`` to its map box), to its range or the no-range length, its
ambiguous bearing dashed; which cuts are active at a time and in a window; thinning; ``visible``
and ``cutsVisible``; a selected sensor's times; a target solution's ellipses. On constructed
plots with known truth and on the SATC tutorial's real cuts."""

from __future__ import annotations

import copy
import itertools
import math
from typing import Any

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.plots.render import Rendered, render_plot
from debrief_calc.plots.render._common import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP
from debrief_calc.plots.render._cuts import MAX_CUTS, NO_RANGE_LIMITS_M
from debrief_calc.tracks.features import iso, parse_iso
from debrief_calc.tracks.times import parse_window
from tests.test_analysis_support import DATA, run_ok
from tests.test_render import pixels

GEOD = Geodesic.WGS84
YD = 0.9144
T0 = parse_iso("2024-05-01T10:00:00Z")
MAGENTA = (255, 0, 255)
TEAL = (0, 128, 128)
AREA = [-4.3, 49.85, -3.6, 50.2]  # wide enough for every line to end on the map


def host(fid: str = "own", minutes: int = 20) -> dict[str, Any]:
    """A ship at 10 kn due east from 50°N 4°W, a fix a minute."""
    coords, times = [], []
    for k in range(minutes + 1):
        p = GEOD.Direct(50.0, -4.0, 90.0, k * 60 * 10 * 1852 / 3600)
        coords.append([p["lon2"], p["lat2"]])
        times.append(iso(T0 + 60 * k))
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {"dataType": "track", "name": "OWN", "stroke": "#0000ff", "timestamps": times},
    }


def on_host(seconds: float) -> list[float]:
    p = GEOD.Direct(50.0, -4.0, 90.0, seconds * 10 * 1852 / 3600)
    return [p["lon2"], p["lat2"]]


def sensor(cuts: list[dict[str, Any]], fid: str = "towed", **props: Any) -> dict[str, Any]:
    """A sensor of ``cuts`` ({s: seconds after T0, b, amb?, r_yd?, visible?}), origins on the host."""
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "MultiPoint", "coordinates": [on_host(c["s"]) for c in cuts]},
        "properties": {
            "dataType": "sensor",
            "kind": "sensor",
            "name": "Towed",
            "host": "own",
            "hostName": "OWN",
            "timestamps": [iso(T0 + c["s"]) for c in cuts],
            "bearings": [c["b"] for c in cuts],
            "ambiguousBearings": [c.get("amb") for c in cuts],
            "rangesYd": [c.get("r_yd") for c in cuts],
            "cutsVisible": [c.get("visible", True) for c in cuts],
            "stroke": "#ff00ff",
            "visible": True,
            **props,
        },
    }


CUTS = [
    {"s": 60, "b": 30.0, "r_yd": 8000.0},  # ranged
    {"s": 300, "b": 120.0},  # no range: the no-range length
    {"s": 540, "b": 200.0, "amb": 340.0, "r_yd": 6000.0},  # ambiguous, dashed
]


def plot(*features: dict[str, Any]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": list(features)}


def xy(r: Rendered, lon: float, lat: float) -> tuple[float, float]:
    """Where a position falls on the picture: the linear map from ``bounds`` to the map's box."""
    w, s, e, n = r.bounds
    map_w, map_h = r.width - 2 * MARGIN_SIDE, r.height - MARGIN_TOP - MARGIN_BOTTOM
    return MARGIN_SIDE + (lon - w) / (e - w) * map_w, MARGIN_TOP + (n - lat) / (n - s) * map_h


def hits(
    r: Rendered,
    colour: tuple[int, int, int],
    lon0: float,
    lat0: float,
    bearing: float,
    length_m: float,
    fractions: Any = None,
) -> list[bool]:
    """For points along the geodesic (GeographicLib Direct) from the origin, whether the picture
    has ``colour`` within a pixel of where it falls; the points under a label or the legend
    (``placed``), off the map, or within 15 pixels of the origin (a ship's marker) are left out."""
    img = pixels(r.png)
    x0, y0 = xy(r, lon0, lat0)
    out = []
    for f in np.linspace(0.05, 0.95, 60) if fractions is None else fractions:
        p = GEOD.Direct(lat0, lon0, bearing, f * length_m)
        x, y = xy(r, p["lon2"], p["lat2"])
        inside = MARGIN_SIDE + 2 < x < r.width - MARGIN_SIDE - 2 and MARGIN_TOP + 2 < y < r.height - MARGIN_BOTTOM - 2
        covered = any(b[0] - 2 <= x <= b[2] + 2 and b[1] - 2 <= y <= b[3] + 2 for _, b in r.placed)
        if not inside or covered or math.hypot(x - x0, y - y0) < 15:
            continue
        i, j = round(y), round(x)
        patch = img[max(i - 1, 0) : i + 2, max(j - 1, 0) : j + 2]
        out.append(bool(np.all(patch == colour, axis=-1).any()))
    return out


def drawn_along(found: list[bool]) -> bool:
    """A line is there: at least 20 points of it checked, every one on it."""
    return len(found) >= 20 and all(found)


def absent(found: list[bool]) -> bool:
    """No line there: of the points checked, at most two (where other lines cross) have the colour."""
    return len(found) >= 10 and sum(found) <= 2


def no_range_truth(features: list[dict[str, Any]]) -> float:
    """The no-range length as specified: the diagonal of what the plot places, within the limits."""
    pts = []
    for f in features:
        g = f["geometry"]
        pts += g["coordinates"] if g["type"] in ("LineString", "MultiPoint") else [g["coordinates"]]
    lons, lats = [p[0] for p in pts], [p[1] for p in pts]
    metres = GEOD.Inverse(min(lats), min(lons), max(lats), max(lons))["s12"]
    return min(max(metres, NO_RANGE_LIMITS_M[0]), NO_RANGE_LIMITS_M[1])


def render(doc: dict[str, Any], t: float | None, **kw: Any) -> Rendered:
    kw.setdefault("fit", AREA)
    return render_plot(doc, current_time=t, max_width=1000, max_height=800, **kw)


def test_each_cut_lies_where_geographiclib_says_to_its_range_or_the_no_range_length() -> None:
    features = [host(), sensor(CUTS)]
    r = render(plot(*features), T0 + 600)
    (drawn,) = r.cuts
    assert (drawn.total, drawn.active, drawn.drawn, drawn.every) == (3, 3, 3, 1)
    assert drawn.ambiguous == 1 and drawn.without_range == 1
    no_range = no_range_truth(features)
    assert drawn.no_range_m == pytest.approx(no_range, rel=1e-6)
    for cut in CUTS:
        lon, lat = on_host(cut["s"])
        length = cut["r_yd"] * YD if "r_yd" in cut else no_range
        assert drawn_along(hits(r, MAGENTA, lon, lat, cut["b"], length)), cut
        # and no further: just past its end there is nothing of it
        assert not any(hits(r, MAGENTA, lon, lat, cut["b"], length, [1.06, 1.1, 1.15])), cut
        if "amb" in cut:  # the ambiguous bearing: dashed, on its own bearing, to the same range
            along = hits(r, MAGENTA, lon, lat, cut["amb"], length, np.linspace(0.1, 0.95, 400))
            gaps = sum(1 for a, b in itertools.pairwise(along) if a and not b)
            assert 0.5 < sum(along) / len(along) < 0.97 and gaps >= 4, (sum(along), len(along), gaps)
            assert drawn_along(hits(r, MAGENTA, lon, lat, cut["b"], length, np.linspace(0.1, 0.95, 400)))
    # a bearing that is not drawn (the mirror of a solid one) has no line
    lon, lat = on_host(60)
    assert absent(hits(r, MAGENTA, lon, lat, 30.0 + 90.0, 8000 * YD))
    assert any(row.startswith("Towed: 3 cuts") for row in r.legend)


def test_a_cut_is_active_from_its_time_for_thirty_minutes_or_inside_the_window() -> None:
    doc = plot(host(minutes=60), sensor(CUTS))
    lon, lat = on_host(60)
    # before the first cut: nothing; 30 minutes after it (to the second): still; a second later: gone
    assert render(doc, T0 + 59).cuts[0].active == 0
    at_edge = render(doc, T0 + 60 + 1800)
    assert at_edge.cuts[0].active == 3 and drawn_along(hits(at_edge, MAGENTA, lon, lat, 30.0, 8000 * YD))
    after = render(doc, T0 + 60 + 1801)
    assert after.cuts[0].active == 2 and absent(hits(after, MAGENTA, lon, lat, 30.0, 8000 * YD))
    # a window and no time: the cuts whose time is inside it (the sensor cut to it, as every path cuts)
    windowed = render(doc, None, window=parse_window(iso(T0 + 500), iso(T0 + 600)))
    assert (windowed.cuts[0].total, windowed.cuts[0].active) == (1, 1)
    assert drawn_along(hits(windowed, MAGENTA, *on_host(540), 200.0, 6000 * YD))
    assert absent(hits(windowed, MAGENTA, *on_host(60), 30.0, 8000 * YD))
    # no time and no window: all of them
    assert render(doc, None).cuts[0].active == 3


def test_hidden_sensors_and_cuts_are_not_drawn() -> None:
    hidden = render(plot(host(), sensor(CUTS, visible=False)), T0 + 600)
    assert hidden.cuts == [] and not np.all(pixels(hidden.png) == MAGENTA, axis=-1).any()
    one_off = [dict(CUTS[0], visible=False), *CUTS[1:]]
    r = render(plot(host(), sensor(one_off)), T0 + 600)
    assert r.cuts[0].active == 2
    assert absent(hits(r, MAGENTA, *on_host(60), 30.0, 8000 * YD))


def test_many_cuts_are_thinned_every_nth_with_the_newest_always_drawn() -> None:
    many = [{"s": 2 * k, "b": float(k % 360)} for k in range(500)]
    doc = plot(host(), sensor(many))
    r = render(doc, T0 + 998, selection=["towed"])
    (drawn,) = r.cuts
    assert drawn.active == 500 and drawn.drawn <= MAX_CUTS < drawn.active
    numbers = [round((t - T0) / 2) for t in drawn.times]
    assert numbers[-1] == 499  # the newest
    steps = set(np.diff(numbers[:-1]).tolist())
    assert steps == {drawn.every} and numbers[0] == 0 and all(n % drawn.every == 0 for n in numbers[:-1])
    assert math.ceil(500 / drawn.every) < MAX_CUTS <= math.ceil(500 / (drawn.every - 1))  # the least step that fits
    assert any(row.startswith(f"Towed: {drawn.drawn} of 500 cuts") for row in r.legend)
    # the same cuts stay drawn while the time moves on (a step by cut number, not by place in the fan)
    later = render(doc, T0 + 1000, selection=["towed"]).cuts[0]
    kept = {round((t - T0) / 2) for t in later.times}
    assert {n for n in numbers[:-1] if n % later.every == 0} <= kept


def test_a_selected_sensor_is_labelled_with_its_cut_times() -> None:
    doc = plot(host(), sensor(CUTS))
    r = render(doc, T0 + 600, selection=["towed"])
    assert [iso(t) for t in r.cuts[0].times] == [iso(T0 + c["s"]) for c in CUTS]
    texts = {text for text, _ in r.placed}
    assert {"10:01:00", "10:05:00", "10:09:00"} <= texts
    assert not {"10:01:00", "10:05:00"} & {text for text, _ in render(doc, T0 + 600).placed}


def test_a_target_solution_has_its_ellipses_at_its_fixes() -> None:
    centres = [on_host(0), on_host(600)]
    solution = {
        "type": "Feature",
        "id": "tma",
        "geometry": {"type": "LineString", "coordinates": [[c[0], c[1] + 0.05] for c in centres]},
        "properties": {
            "dataType": "track",
            "trackType": "tma-solution",
            "name": "TMA",
            "stroke": "#008080",
            "timestamps": [iso(T0), iso(T0 + 600)],
            "ellipses": [{"orientation_deg": 45.0, "semiMajorYd": 3000.0, "semiMinorYd": 1000.0}, None],
        },
    }
    r = render(plot(host(), solution), T0 + 600)
    lon, lat = centres[0][0], centres[0][1] + 0.05
    edge = [0.999, 1.0, 1.001]
    for bearing, yards in ((45.0, 3000.0), (225.0, 3000.0), (135.0, 1000.0), (315.0, 1000.0)):
        assert any(hits(r, TEAL, lon, lat, bearing, yards * YD, edge)), bearing
    # the second fix has none
    lon2, lat2 = centres[1][0], centres[1][1] + 0.05
    assert not any(hits(r, TEAL, lon2, lat2, 135.0, 1000 * YD, edge))


@pytest.fixture(scope="module")
def satc() -> dict[str, Any]:
    names = ("BlueTrack.rep", "BlueSensor_sparse.rep", "RedTrack.rep")
    given = {n: (DATA / "sensors" / n).read_text(encoding="utf-8") for n in names}
    result = run_ok("import-rep", params={"paths": list(names)}, read_text=given.__getitem__)
    return plot(*result.features)


def test_the_satc_cuts_lie_on_their_bearings(satc: dict[str, Any]) -> None:
    q = parse_iso("2010-01-12T12:45:00Z")
    doc = copy.deepcopy(satc)
    for f in doc["features"]:  # the tracks hidden, so that none is drawn over a cut (the origins are given)
        if f["properties"]["kind"] == "track":
            f["properties"]["visible"] = False
    r = render_plot(doc, current_time=q, fit="all", max_width=1000, max_height=800)
    (sensor_f,) = [f for f in satc["features"] if f["properties"]["kind"] == "sensor"]
    props = sensor_f["properties"]
    times = [parse_iso(t) for t in props["timestamps"]]
    expected = [i for i, t in enumerate(times) if t <= q <= t + 1800]
    (drawn,) = r.cuts
    assert drawn.active == drawn.drawn == len(expected) == 18
    blue = (0x00, 0x64, 0xBD)
    checked = 0
    for i in expected:
        (lon, lat), bearing = sensor_f["geometry"]["coordinates"][i], props["bearings"][i]
        found = hits(r, blue, lon, lat, bearing, 12000 * YD)
        assert all(found), (i, bearing)
        checked += len(found)
    assert checked > 18 * 20  # most of each line is on the map and was checked
