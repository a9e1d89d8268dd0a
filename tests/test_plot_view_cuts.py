"""Sensor cuts in the live plot view, in Debian's chromium, against the real ``debrief-state-mcp``
over stdio: the SATC tutorial's real cuts at 12:45 (those of the 30 minutes up to it, each from
its origin to its 12,000 yd along its bearing, GeographicLib's Direct placed by the view's own
projection, and on the canvas's pixels), a towed array's ambiguous bearings dashed, the legend
hiding and showing a sensor for every client (``visible`` in the file, the picture too), a click
on a cut selecting its sensor and the info panel listing its cuts' times (also when another client
selects it), the view's thinning the picture's (``thin``), a target solution's ellipse drawn."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from geographiclib.geodesic import Geodesic

import debrief_calc as dc
from debrief_calc.plots.render._cuts import thin
from debrief_calc.tracks.features import iso, parse_iso
from tests._browser import APPS, bind_client, browser_page, plain, serve, state_client, until
from tests.conftest import DATA
from tests.test_plot_view import _shot, _start

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
__all__ = ["browser_page"]  # the fixture, used by name

GEOD = Geodesic.WGS84
YD = 0.9144
PLOT = "satc.plot.json"
AT = "2010-01-12T12:45:00Z"
PLAIN = "rep-bluesensor-sparse-sensor-sensor-plain"
TOWED = "towed"
BLUE = (0x00, 0x64, 0xBD)  # Plain's colour, from its lines' symbology (@A)
PURPLE = (0xD0, 0x00, 0xD0)


def _towed(plain_sensor: dict[str, Any], host: dict[str, Any]) -> dict[str, Any]:
    """A towed array on the same cuts as Plain: no range, and each bearing's mirror about the
    host's course (from the REP course column) as its ambiguous bearing."""
    props = plain_sensor["properties"]
    host_times = [parse_iso(t) for t in host["properties"]["timestamps"]]
    courses = host["properties"]["courses"]

    def course_at(t: float) -> float:
        return float(courses[max(i for i, x in enumerate(host_times) if x <= t)])

    bearings = [(b + 10.0) % 360 for b in props["bearings"]]
    mirrored = [(2 * course_at(parse_iso(t)) - b) % 360 for t, b in zip(props["timestamps"], bearings, strict=True)]
    return {
        "type": "Feature",
        "id": TOWED,
        "geometry": plain_sensor["geometry"],
        "properties": {
            "dataType": "sensor",
            "kind": "sensor",
            "name": "Towed",
            "host": host["id"],
            "hostName": "SENSOR",
            "timestamps": props["timestamps"],
            "bearings": bearings,
            "ambiguousBearings": mirrored,
            "rangesYd": [None] * len(bearings),
            "stroke": "#d000d0",
            "visible": True,
        },
    }


def _solution() -> dict[str, Any]:
    """A target solution with an ellipse at its first fix."""
    return {
        "type": "Feature",
        "id": "tma",
        "geometry": {"type": "LineString", "coordinates": [[-30.02, -0.01], [-30.07, -0.01]]},
        "properties": {
            "dataType": "track",
            "trackType": "tma-solution",
            "name": "TMA",
            "stroke": "#008000",
            "timestamps": ["2010-01-12T12:20:00Z", "2010-01-12T12:40:00Z"],
            "ellipses": [{"orientation_deg": 90.0, "semiMajorYd": 2000.0, "semiMinorYd": 800.0}, None],
        },
    }


def _plot(workspace: Path) -> dict[str, Any]:
    for name in ("BlueTrack.rep", "BlueSensor_sparse.rep", "RedTrack.rep"):
        shutil.copy(DATA / "sensors" / name, workspace / name)
    ws = dc.Workspace(workspace)
    own = ws.run_tool("import-rep", parameters={"paths": ["BlueTrack.rep", "BlueSensor_sparse.rep"]})
    red = ws.run_tool("import-rep", parameters={"path": "RedTrack.rep"})
    ws.create_plot(PLOT, features=[{"ref": own.stored["ref"]}, {"ref": red.stored["ref"]}])
    doc = json.loads((workspace / PLOT).read_text(encoding="utf-8"))
    plain_sensor = next(f for f in doc["features"] if f["id"] == PLAIN)
    host = next(f for f in doc["features"] if f["id"] == "rep-sensor")
    ws.apply_command(
        {"command": "addFeatures", "payload": {"features": [_towed(plain_sensor, host), _solution()]}}, filename=PLOT
    )
    ws.set_time({"current": AT}, filename=PLOT)
    return plain_sensor


def _end(lon: float, lat: float, bearing: float, metres: float) -> tuple[float, float]:
    p = GEOD.Direct(lat, lon, bearing, metres)
    return p["lon2"], p["lat2"]


PIXELS = """([points]) => {
  const c = document.getElementById('map'), ctx = c.getContext('2d'), k = c.width / c.clientWidth;
  return points.map(([x, y]) => Array.from(ctx.getImageData(Math.round(x * k), Math.round(y * k), 1, 1).data.slice(0, 3)));
}"""
# the pixel of the 3 x 3 around each point nearest in colour to the one asked (a line is anti-aliased)
NEAREST = """([points, target]) => {
  const c = document.getElementById('map'), ctx = c.getContext('2d'), k = c.width / c.clientWidth;
  return points.map(([x, y]) => {
    const d = ctx.getImageData(Math.round(x * k) - 1, Math.round(y * k) - 1, 3, 3).data;
    let best = null, bestD = Infinity;
    for (let i = 0; i < d.length; i += 4) {
      const dist = Math.abs(d[i] - target[0]) + Math.abs(d[i + 1] - target[1]) + Math.abs(d[i + 2] - target[2]);
      if (dist < bestD) { bestD = dist; best = [d[i], d[i + 1], d[i + 2]]; }
    }
    return best;
  });
}"""


async def _along(
    view: Any, a: list[float], b: list[float], fractions: Any, target: tuple[int, int, int]
) -> list[list[int]]:
    """The colours along the segment a-b on the canvas (the points off it left out)."""
    w, h = await view.evaluate(
        "[document.getElementById('map').clientWidth, document.getElementById('map').clientHeight]"
    )
    points = [[a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])] for f in fractions]
    points = [p for p in points if 2 <= p[0] <= w - 2 and 2 <= p[1] <= h - 2]
    out: list[list[int]] = await view.evaluate(NEAREST, [points, list(target)])
    return out


def _gaps(found: list[bool]) -> int:
    return sum(1 for a, b in itertools.pairwise(found) if a and not b)


def _is(colour: list[int], target: tuple[int, int, int], tol: int = 60) -> bool:
    return sum(abs(c - t) for c, t in zip(colour, target, strict=True)) <= tol


async def test_the_view_draws_the_cuts_hides_them_and_lists_a_selected_sensors_times(
    workspace: Path, browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, requests = browser_page
    plain_sensor = _plot(workspace)
    props = plain_sensor["properties"]
    q = parse_iso(AT)
    expected = [i for i, t in enumerate(props["timestamps"]) if parse_iso(t) <= q <= parse_iso(t) + 1800]
    assert len(expected) == 18
    with serve(APPS) as origins:
        async with state_client(workspace) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            resource = (await client.read_resource(listed["debrief_open_plot"].meta["ui"]["resourceUri"])).contents[0]  # type: ignore[index]
            opened = plain(await client.call_tool("debrief_open_plot", {"filename": PLOT}))

            call_tool, read = await bind_client(page, client)
            html = resource.text  # type: ignore[union-attr]
            view = await _start(page, origins, html, {}, {"filename": PLOT}, opened)
            assert await view.evaluate("window.__plotView.time()") == AT
            await _shot(page, "cuts-satc.png")

            # The cuts of the 30 minutes up to 12:45, each from its origin to 12,000 yd on its bearing.
            cuts = await view.evaluate("window.__plotView.cuts('Plain')")
            assert cuts["active"] == 18 and cuts["numbers"] == expected and cuts["every"] == 1
            assert cuts["times"] == [iso(parse_iso(props["timestamps"][i])) for i in expected]
            solid_checked = 0
            for i, line in zip(expected, cuts["lines"], strict=True):
                lon, lat = plain_sensor["geometry"]["coordinates"][i]
                far = await view.evaluate(
                    "([lon, lat]) => window.__plotView.toScreen(lon, lat)",
                    list(_end(lon, lat, props["bearings"][i], 12000 * YD)),
                )
                start = await view.evaluate("([lon, lat]) => window.__plotView.toScreen(lon, lat)", [lon, lat])
                assert math.dist(line[0], start) < 0.5 and math.dist(line[1], far) < 0.5, (i, line, start, far)
            # on the canvas: the lines' pixels are the sensor's blue (where nothing else is drawn over them)
            for line in cuts["lines"]:
                colours = await _along(view, *line, np.linspace(0.35, 0.6, 12), BLUE)
                solid_checked += sum(_is(c, BLUE, 120) for c in colours)
            assert solid_checked >= 0.7 * 18 * 12  # the rest under other lines crossing (Towed, the tracks)

            # A towed array's ambiguous bearings: dashed, beside solid bearings, to the no-range length.
            towed = await view.evaluate("window.__plotView.cuts('Towed')")
            assert towed["active"] == 18 and all(a is not None for a in towed["ambiguous"])
            # Hide Plain from the legend: written for every client, gone from the view and the picture.
            legend = await view.evaluate("window.__plotView.legend()")
            row = next(r for r in legend if r["id"] == PLAIN)
            assert row["text"] == "Plain: 18 cuts"
            await view.locator("#map").click(position={"x": row["x"] + 20, "y": row["y"] + 8})
            await until(
                lambda: anyio.to_thread.run_sync(lambda: _visible(workspace, PLAIN) is False), "the legend hid Plain"
            )
            await until(
                lambda: view.evaluate("window.__plotView.cuts('Plain') === null"), "the view dropped Plain's cuts"
            )
            hidden = await view.evaluate("window.__plotView.legend()")
            assert any(r["id"] == PLAIN and r["hidden"] for r in hidden)
            rendered = await read("debrief_render_plot", {"filename": PLOT, "fit": "all"})
            assert [c["id"] for c in rendered["cuts"]] == [TOWED]
            gone = 0
            for line in cuts["lines"]:
                gone += sum(_is(c, BLUE, 120) for c in await _along(view, *line, np.linspace(0.35, 0.6, 12), BLUE))
            assert gone <= 0.1 * solid_checked  # the lines are no longer there (a track may cross)
            await _shot(page, "cuts-plain-hidden.png")

            towed = await view.evaluate("window.__plotView.cuts('Towed')")
            dashed_gaps: list[int] = []
            solid_gaps: list[int] = []
            for line, mirror in zip(towed["lines"], towed["ambiguous"], strict=True):
                solid = [_is(c, PURPLE, 150) for c in await _along(view, *line, np.linspace(0.2, 0.9, 600), PURPLE)]
                dashed = [_is(c, PURPLE, 150) for c in await _along(view, *mirror, np.linspace(0.2, 0.9, 600), PURPLE)]
                # the lines with 200 points or more on the canvas (most run off it)
                solid_gaps += [_gaps(solid)] if len(solid) >= 200 else []
                dashed_gaps += [_gaps(dashed)] if len(dashed) >= 200 else []
            # a dashed line breaks every 10 px; a solid one only where another line crosses it
            assert len(dashed_gaps) >= 3 and min(dashed_gaps) >= 8, dashed_gaps
            assert len(solid_gaps) >= 3 and np.median(solid_gaps) <= 1, solid_gaps

            # A click on a cut selects its sensor; the info panel lists its drawn cuts' times.
            a, b = towed["lines"][-1]
            await view.locator("#map").click(
                position={"x": a[0] + 0.5 * (b[0] - a[0]), "y": a[1] + 0.5 * (b[1] - a[1])}
            )
            assert await until(lambda: _selection(read), "the click selected the sensor") == [TOWED]
            await until(lambda: view.locator("#info").is_visible(), "the info panel opened")
            info = await view.locator("#info").inner_text()
            for t in towed["times"]:
                assert t[11:19] + "Z" in info, (t, info)
            assert "Towed on SENSOR: 38 cuts" in info and "18 active, 18 drawn" in info
            labels = {x["text"] for x in await view.evaluate("window.__plotView.labels()")}
            assert labels & {t[11:19] for t in towed["times"]}
            await _shot(page, "cuts-towed-selected.png")

            # Show Plain again from its legend row; another client selects it: the panel follows.
            row = next(r for r in await view.evaluate("window.__plotView.legend()") if r["id"] == PLAIN)
            await view.locator("#map").click(position={"x": row["x"] + 20, "y": row["y"] + 8})
            await until(
                lambda: anyio.to_thread.run_sync(lambda: _visible(workspace, PLAIN) is True), "the legend showed Plain"
            )
            assert not (await call_tool("debrief_set_selection", {"filename": PLOT, "selectedIds": [PLAIN]})).get(
                "isError"
            )
            await until(lambda: _info_has(view, "Plain on SENSOR"), "the panel followed the other client's selection")
            info = await view.locator("#info").inner_text()
            assert all(t[11:19] + "Z" in info for t in cuts["times"])
            rendered = await read("debrief_render_plot", {"filename": PLOT, "fit": "all"})
            (plain_drawn,) = [c for c in rendered["cuts"] if c["id"] == PLAIN]
            assert plain_drawn["times"] == cuts["times"]

            # The target solution's ellipse: its major axis' ends on the canvas, in its green.
            ellipse = [
                await view.evaluate(
                    "([lon, lat]) => window.__plotView.toScreen(lon, lat)",
                    list(_end(-30.02, -0.01, bearing, 2000 * YD)),
                )
                for bearing in (90.0, 270.0)
            ]
            green = await view.evaluate(
                PIXELS, [[[x + dx, y + dy] for x, y in ellipse for dx in (-1, 0, 1) for dy in (-1, 0, 1)]]
            )
            assert sum(_is(c, (0x00, 0x80, 0x00), 160) for c in green) >= 2

            # The view thins as the picture does.
            for numbers, limit in ((list(range(500)), 60), (list(range(7, 300, 3)), 20), ([1, 2, 3], 60)):
                expected_keep, expected_every = thin(np.asarray(numbers, dtype=np.int64), limit)
                got = await view.evaluate("([n, l]) => window.__plotView.thinCuts(n, l)", [numbers, limit])
                assert got["keep"] == expected_keep.tolist() and got["every"] == expected_every
    assert errors == []
    assert all(u.startswith((*origins[:2], "about:", "data:")) for u in requests)


def _visible(workspace: Path, fid: str) -> bool | None:
    doc = json.loads((workspace / PLOT).read_text(encoding="utf-8"))
    value = next(f for f in doc["features"] if f["id"] == fid)["properties"].get("visible")
    return value if isinstance(value, bool) else None


async def _selection(read: Any) -> list[str]:
    ids: list[str] = (await read("debrief_get_selection", {"filename": PLOT}))["selectedIds"]
    return ids


async def _info_has(view: Any, text: str) -> bool:
    return await view.locator("#info").is_visible() and text in await view.locator("#info").inner_text()
