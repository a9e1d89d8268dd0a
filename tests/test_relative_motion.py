"""render_series's relative-motion picture (issue 22 §4): COLLINGWOOD's track as seen from NELSON,
ownship at the centre, north up. Its geometry is checked against GeographicLib: at a few times the
two ships' positions, interpolated along the geodesic between fixes, give a range and a true bearing
(Inverse), which the picture's scale puts at a pixel; the track is drawn there, the CPA's red dot
at the CPA's. Then the outer ring asked for, a stored result, the refusals, and the real console
script over stdio in both protocol eras (the time plot's new marks too)."""

from __future__ import annotations

import base64
import io
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client, StdioServerParameters
from PIL import Image

from debrief_calc.tracks.features import parse_iso
from tests.conftest import DATA, MODES, call, console_script, subprocess_env
from tests.test_series import HOUR, _at, _track, _true_cpa, client, fails, imported, series, ws

pytestmark = pytest.mark.anyio
__all__ = ["client", "ws"]  # the fixtures, used by name

YARD = 0.9144
TRACK = (31, 119, 180)
RED = (214, 39, 40)
RELATIVE = {"picture": "relative-motion", "distance_unit": "yd"}


def _range_bearing(t: float) -> tuple[float, float]:
    """Yards and true bearing of COLLINGWOOD from NELSON at ``t``, by GeographicLib."""
    a, b = _at(_track("valid_boat1.rep"), t), _at(_track("valid_boat2.rep"), t)
    line = Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])
    return float(line["s12"]) / YARD, float(line["azi1"]) % 360.0


def _pixel(scale: dict[str, Any], yards: float, bearing: float) -> tuple[float, float]:
    cx, cy = scale["centre"]
    k = scale["px_per_unit"]
    b = math.radians(bearing)
    return cx + k * yards * math.sin(b), cy - k * yards * math.cos(b)


def _colour_near(picture: Image.Image, at: tuple[float, float], colour: tuple[int, int, int], reach: int = 2) -> int:
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    x, y = round(at[0]), round(at[1])
    box = rgb[y - reach : y + reach + 1, x - reach : x + reach + 1]
    return int((np.abs(box - np.asarray(colour)).sum(axis=-1) < 60).sum())


async def test_the_relative_track_is_where_geographiclib_puts_it(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    answer, picture = await series(client, features=[nelson, collingwood], parameters=RELATIVE, **HOUR)
    assert answer["picture"] == "relative-motion" and "panels" not in answer
    assert answer["title"] == "Relative motion of COLLINGWOOD from NELSON"
    assert picture.size == (800, 800) and answer["span"] == [HOUR["time_start"], HOUR["time_end"]]
    scale = answer["scale"]
    assert scale["unit"] == "yd" and scale["ring_step"] == 2000 and scale["outer_ring"] == 8000
    marks = [parse_iso(m["time"]) for m in answer["time_marks"]]
    assert len(marks) >= 8 and all(m % 300 == 0 for m in marks)  # every five minutes
    far = [t for t in marks if _range_bearing(t)[0] > 1500]  # where the track is apart from its own folds
    assert len(far) >= 5
    for t in far:
        yards, bearing = _range_bearing(t)
        assert _colour_near(picture, _pixel(scale, yards, bearing), TRACK) >= 3, (t, yards, bearing)
        # and not where a bearing off by 5° would put it (at these ranges, many pixels away)
        assert _colour_near(picture, _pixel(scale, yards, bearing + 5), TRACK, 1) == 0 or yards < 3000
    # the CPA: GeographicLib's instant and range, the red dot at its bearing
    t, yards = _true_cpa()
    cpa = answer["cpa"]
    assert abs(parse_iso(cpa["time"]) - t) < 0.05 and cpa["range"] == pytest.approx(yards, abs=0.05)
    (entry,) = [p for p in answer["passes"] if p["is_cpa"]]
    _, bearing = _range_bearing(parse_iso(cpa["time"]))
    assert entry["bearing"] == pytest.approx(bearing, abs=0.01)
    assert [p["pass"] for p in answer["passes"]] == [1, 2, 3]
    assert answer["track"]["beyond_outer_ring"] == 0 and answer["curve"]["between_fixes"] is True


async def test_an_outer_ring_asked_for_looks_closer(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    params = {**RELATIVE, "max_range": 800, "close_quarters": 500, "width": 700, "height": 700}
    answer, picture = await series(client, features=[nelson, collingwood], parameters=params, **HOUR)
    scale = answer["scale"]
    assert picture.size == (700, 700) and scale["outer_ring"] == 800 and scale["ring_step"] == 200
    assert answer["track"]["beyond_outer_ring"] > 0 and "cut at the outer ring" in answer["track"]["note"]
    t, yards = _true_cpa()
    _, bearing = _range_bearing(t)
    dot = _pixel(scale, yards, bearing)
    assert _colour_near(picture, dot, RED, 6) > 10  # the CPA's red dot, 119.5 yd from ownship
    half = _pixel(scale, yards / 2, bearing)  # and the red line to it from the centre
    assert _colour_near(picture, half, RED, 2) > 0
    for p in answer["passes"]:  # every pass inside the ring, where GeographicLib puts it
        yards_p, bearing_p = _range_bearing(parse_iso(p["time"]))
        assert p["range"] == pytest.approx(yards_p, abs=0.05) and p["bearing"] == pytest.approx(bearing_p, abs=0.01)
    first = answer["close_quarters"]["periods"][0]
    assert first["start"] < answer["cpa"]["time"] < first["end"]  # within 500 yd round the CPA
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    assert (np.abs(rgb - np.asarray((255, 181, 86))).sum(axis=-1) < 30).sum() > 200  # close quarters, in orange


async def test_a_stored_result_and_the_refusals(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    err, run = await call(
        client,
        "run_tool",
        tool="range-bearing",
        features=[nelson, collingwood],
        parameters={"distance_unit": "yd", "interval_s": 120},
        **HOUR,
    )
    assert not err
    ref = {"ref": f"debrief-calc:results/{run['features'][0]['id']}"}
    answer, picture = await series(client, features=[ref], parameters={"picture": "relative-motion"})
    assert answer["samples"] == 31 and "curve" not in answer and answer["source"]["kind"] == "stored result"
    t, yards = _true_cpa()
    _, bearing = _range_bearing(t)
    assert _colour_near(picture, _pixel(answer["scale"], yards, bearing), RED, 6) > 10  # the CPA put in
    pair = [nelson, collingwood]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"features": pair, "parameters": RELATIVE, "quantities": ["range"]}, "quantities"),
        ({"features": pair, "parameters": RELATIVE, "narratives": []}, "narratives"),
        ({"features": pair, "parameters": {**RELATIVE, "y_range": {"range": [0, 1]}}}, "parameters.y_range"),
        ({"features": pair, "parameters": {"max_range": 800}}, "parameters.max_range"),
        ({"features": pair, "parameters": {**RELATIVE, "max_range": 0}}, "parameters.max_range"),
        ({"features": pair, "parameters": {"picture": "polar"}}, "parameters.picture"),
        ({"features": [nelson], "parameters": RELATIVE}, "features"),
    ]
    for args, field in cases:
        error = await fails(client, **args)
        assert error["details"]["field"] == field, (args, error)


# -- the real console script over stdio -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_the_relative_plot_and_the_time_plots_marks(tmp_path: Path, mode: str) -> None:
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, tmp_path / name)
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(tmp_path)], env=subprocess_env()
    )
    async with Client(params, mode=mode) as calc:  # type: ignore[arg-type]
        refs = []
        for name in ("valid_boat1.rep", "valid_boat2.rep"):
            err, out = await call(calc, "run_tool", tool="import-rep", parameters={"path": name})
            assert not err
            refs.append({"ref": out["stored"]["ref"]})
        relative = await calc.call_tool("render_series", {"features": refs, "parameters": RELATIVE, **HOUR})
        answer = relative.structured_content
        assert not relative.is_error and answer is not None
        (image,) = [b for b in relative.content if b.type == "image"]
        picture = Image.open(io.BytesIO(base64.b64decode(image.data)))  # type: ignore[union-attr]
        t, yards = _true_cpa()
        _, bearing = _range_bearing(t)
        assert _colour_near(picture, _pixel(answer["scale"], yards, bearing), RED, 6) > 10
        timed = await calc.call_tool(
            "render_series",
            {"features": refs, "parameters": {"distance_unit": "yd", "close_quarters": 500}, **HOUR},
        )
        drawn = timed.structured_content
        assert not timed.is_error and drawn is not None
        assert [p["pass"] for p in drawn["passes"]] == [1, 2, 3] and drawn["panels"][2]["extrema"] == "curve"
        assert drawn["panels"][2]["min"] == pytest.approx(drawn["panels"][2]["true_peak"]["value"], abs=1e-4)
        assert len(drawn["close_quarters"]["periods"]) == 2
