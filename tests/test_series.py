"""render_series on debrief-calc-mcp, through the real protocol in process, with no plot-state
server: range-bearing's series of NELSON to COLLINGWOOD (computed from the tracks, or read from
a stored result) as stacked panels with the CPA and the ops log marked; one track's speed and
course; windows, quantities, and the errors for bad references, quantities and windows."""

from __future__ import annotations

import base64
import io
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client
from PIL import Image

from debrief_calc.calc.series_plot import Panel, draw_series
from debrief_calc.calc.server import build_server
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import parse_iso
from llmem.core.config import ServerConfig
from tests.conftest import DATA, MODES, call

pytestmark = pytest.mark.anyio

YARD = 0.9144


@pytest.fixture
def ws(workspace: Path) -> Path:
    for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", ws)), mode=request.param) as c:
        yield c


async def imported(client: Client, name: str) -> dict[str, str]:
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": name})
    assert not err, out
    return {"ref": out["stored"]["ref"]}


async def series(client: Client, **args: Any) -> tuple[dict[str, Any], Image.Image]:
    result = await client.call_tool("render_series", args)
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert answer is not None and answer["success"] is True
    (image,) = [b for b in result.content if isinstance(b, types.ImageContent)]
    png = base64.b64decode(image.data)
    assert image.mime_type == answer["mediaType"] == "image/png" and len(png) == answer["bytes"]
    picture = Image.open(io.BytesIO(png))
    assert picture.size == (answer["width"], answer["height"])
    return answer, picture


async def fails(client: Client, **args: Any) -> dict[str, Any]:
    err, out = await call(client, "render_series", **args)
    assert err, out
    assert out["error"]["code"] == "VALIDATION_FAILED", out
    return dict(out["error"])


def _track(name: str) -> tuple[list[float], list[float], list[float]]:
    (feature,) = parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    times = [parse_iso(t) for t in feature["properties"]["timestamps"]]
    lon, lat = zip(*(c[:2] for c in feature["geometry"]["coordinates"]), strict=True)
    return times, list(lat), list(lon)


def _at(track: tuple[list[float], list[float], list[float]], t: float) -> tuple[float, float]:
    """The position at ``t``, moving along the geodesic between fixes (GeographicLib)."""
    times, lat, lon = track
    i = int(np.searchsorted(times, t, side="right")) - 1
    line = Geodesic.WGS84.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])
    frac = (t - times[i]) / (times[i + 1] - times[i])
    end = Geodesic.WGS84.Direct(lat[i], lon[i], line["azi1"], line["s12"] * frac)
    return end["lat2"], end["lon2"]


def _true_cpa() -> tuple[float, float]:
    """NELSON and COLLINGWOOD's closest approach, searched every 0.01 s near 10:45 with GeographicLib."""
    nelson, collingwood = _track("valid_boat1.rep"), _track("valid_boat2.rep")

    def yards(t: float) -> float:
        a, b = _at(nelson, t), _at(collingwood, t)
        return float(Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])["s12"]) / YARD

    coarse = parse_iso("1995-12-12T10:44:00Z") + np.arange(0, 180, 1.0)
    t = float(coarse[int(np.argmin([yards(x) for x in coarse]))])
    fine = t + np.arange(-1.0, 1.0, 0.01)
    best = int(np.argmin([yards(x) for x in fine]))
    return float(fine[best]), yards(float(fine[best]))


async def test_two_tracks_plot_range_bearing_with_the_true_cpa_and_the_log(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    log = await imported(client, "valid_narrative.rep")
    answer, picture = await series(
        client, features=[nelson, collingwood], narratives=[log], parameters={"distance_unit": "yd"}
    )
    assert picture.size[0] == 900 and 600 <= picture.size[1] <= 800  # three panels at chat size
    assert [p["quantity"] for p in answer["panels"]] == ["range", "bearing", "bearing_rate"]
    labels = ["Range (yd)", "Bearing (°T)", "Bearing rate (°/min, + drawing right)"]  # which sign is which
    assert [p["label"] for p in answer["panels"]] == labels
    assert answer["span"] == ["1995-12-12T05:03:00Z", "1995-12-12T11:41:00Z"] and answer["samples"] == 399
    t, yards = _true_cpa()
    cpa = answer["cpa"]
    assert cpa["source"] in ("closest-approach", "cpa_time") and cpa["unit"] == "yd"  # found between fixes
    assert abs(parse_iso(cpa["time"]) - t) < 0.05 and cpa["range"] == pytest.approx(yards, abs=0.05)
    assert cpa["range"] == pytest.approx(119.5, abs=0.1) and cpa["label"] == "CPA 119.5 yd at 10:45:09"
    assert answer["narratives"]["marked"] + answer["narratives"]["outside_span"] == answer["narratives"]["given"]
    assert 0 < answer["narratives"]["labelled"] <= answer["narratives"]["marked"]
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    red = (rgb[..., 0] > 180) & (rgb[..., 1] < 90) & (rgb[..., 2] < 90)
    columns = np.flatnonzero(red.sum(axis=0) > 300)  # the CPA line runs down every panel
    assert columns.size and 680 < columns.mean() < 800  # 10:45 of 05:03 to 11:41 across 70..882 pixels
    source = answer["source"]
    assert source["kind"] == "range-bearing run" and source["ref"].startswith("debrief-calc:results/")
    err, stored = await call(client, "get_result", ref=source["ref"])  # the numbers drawn, kept
    assert not err and stored["features"][0]["properties"]["series"]["range"]


async def test_a_stored_result_by_ref_with_chosen_quantities(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    err, run = await call(
        client, "run_tool", tool="range-bearing", features=[nelson, collingwood], parameters={"distance_unit": "yd"}
    )
    assert not err, run
    ref = {"ref": f"debrief-calc:results/{run['features'][0]['id']}"}
    answer, picture = await series(client, features=[ref], quantities=["range", "relative_bearing"])
    assert [p["quantity"] for p in answer["panels"]] == ["range", "relative_bearing"]
    assert answer["panels"][1]["label"] == "Relative bearing (°, + starboard/G)"
    assert answer["panels"][1]["axis"] == [-180, 180]
    assert answer["source"] == {**ref, "kind": "stored result"}
    assert picture.size[0] == 900 and picture.size[1] < 600  # two panels
    cpa = answer["cpa"]  # the stored result's own: cpa_time when it has one, else its sampled minimum
    assert cpa["source"] in ("cpa_time", "min_range_time", "min_sampled_range_time")
    if cpa["source"] != "cpa_time":
        assert cpa["label"].startswith("Min range (sampled)") and cpa["time"] == "1995-12-12T10:45:00Z"
    windowed, _ = await series(
        client, features=[ref], time_start="1995-12-12T10:30:00Z", time_end="1995-12-12T11:00:00Z"
    )
    assert windowed["span"] == ["1995-12-12T10:30:00Z", "1995-12-12T11:00:00Z"] and windowed["samples"] == 31
    assert windowed["window"] == {"start": "1995-12-12T10:30:00Z", "end": "1995-12-12T11:00:00Z", "source": "asked"}
    # the window may ride on the ref itself (issue 22 §2): the same rows
    own = {**ref, "time_start": "1995-12-12T10:30:00Z", "time_end": "1995-12-12T11:00:00Z"}
    on_ref, _ = await series(client, features=[own])
    assert (on_ref["span"], on_ref["samples"], on_ref["window"]) == (windowed["span"], 31, windowed["window"])
    whole, _ = await series(client, features=[ref])
    assert whole["window"]["source"] == "data" and [whole["window"]["start"], whole["window"]["end"]] == whole["span"]
    _, picture = await series(client, features=[ref], parameters={"width": 600, "height": 500})
    assert picture.size == (600, 500)


async def test_one_track_plots_speed_course_and_rate_of_turn(client: Client) -> None:
    nelson = await imported(client, "valid_boat1.rep")
    answer, _ = await series(client, features=[nelson], time_start="1995-12-12T06:00:00Z")
    labels = [p["label"] for p in answer["panels"]]
    assert labels[:2] == ["NELSON speed (kn)", "NELSON course (°T)"]  # whose
    assert labels[2].startswith("NELSON rate of turn (°/min") and len(labels) == 3  # as the guide says
    assert answer["title"] == "Speed, course and rate of turn of NELSON"
    assert answer["source"] == {"kind": "track", "id": "rep-nelson"} and "cpa" not in answer
    assert answer["span"][0] == "1995-12-12T06:00:00Z"
    speed = answer["panels"][0]
    assert 3 < speed["min"] < speed["max"] < 14
    assert 0 < speed["axis"][0] <= speed["min"]  # the axis spans the speeds, not from zero


async def test_a_plot_reference_with_its_narratives(client: Client, ws: Path) -> None:
    features = [
        f
        for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep")
        for f in parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    ]
    (ws / "ex.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    answer, _ = await series(
        client,
        plot={"filename": "ex.plot.json", "feature_ids": ["rep-nelson", "rep-collingwood"]},
        time_start="1995-12-12T09:30:00Z",
        time_end="1995-12-12T11:00:00Z",
        quantities=["range"],
    )
    assert answer["span"] == ["1995-12-12T09:30:00Z", "1995-12-12T11:00:00Z"]
    logged = [f for f in features if f["properties"].get("dataType") == "annotation"]
    inside = [f for f in logged if "09:30" <= f["properties"]["time"][11:16] <= "11:00"]
    assert answer["narratives"]["given"] == len(logged) and answer["narratives"]["marked"] == len(inside)


async def test_errors_name_the_field_and_change_nothing(client: Client, ws: Path) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    before = sorted(str(p) for p in ws.rglob("*"))
    pair = [nelson, collingwood]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"features": [{"ref": "debrief-calc:results/nope"}]}, "features[0].ref"),
        ({"features": [{"ref": "not a ref/../x"}]}, "features[0].ref"),
        ({}, "features"),
        ({"features": ["NELSON"]}, "features[0]"),
        ({"features": pair, "narratives": [3]}, "narratives[0]"),
        ({"features": pair, "plot": {"filename": "x.plot.json"}}, "features"),
        ({"features": pair, "quantities": ["range", "speed_of_light"]}, "quantities"),
        ({"features": pair, "time_start": "yesterday"}, "time_start"),
        ({"features": pair, "time_end": "1995-12-12T10:00:00Z", "time_start": "1995-12-12T11:00:00Z"}, "time_end"),
        ({"features": pair, "parameters": {"colour": "red"}}, "parameters.colour"),
        ({"features": pair, "parameters": {"width": 10}}, "parameters.width"),
        ({"features": pair, "parameters": {"distance_unit": "furlong"}}, "parameters.distance_unit"),
        ({"features": pair, "parameters": {"secondary": "nobody"}}, "parameters.secondary"),
    ]
    for args, field in cases:
        error = await fails(client, **args)
        assert error["details"]["field"] == field, (args, error)
    # a window with nothing in it: refused as run_tool refuses it (the same reading of the inputs)
    err, out = await call(client, "render_series", features=pair, time_start="2001-01-01T00:00:00Z")
    assert err and out["error"]["code"] == "INVALID_CONTEXT" and out["error"]["details"]["field"] == "time_start"
    unknown = await fails(client, features=pair, quantities=["speed_of_light"])
    assert "range" in unknown["details"]["available"] and "bearing_rate" in unknown["message"]
    assert sorted(str(p) for p in ws.rglob("*")) == before  # nothing stored, nothing written


async def test_listed_read_only_and_lean(client: Client) -> None:
    (tool,) = [t for t in (await client.list_tools()).tools if t.name == "render_series"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.annotations.open_world_hint is False and len(tool.description or "") <= 120


def test_ten_thousand_samples_drawn_as_their_envelope() -> None:
    """Every pixel column of the panel carries the line (the per-column envelope keeps the extremes)."""
    t = 1.0e9 + np.arange(10_000, dtype=float)
    noisy = 100 + 50 * np.sin(t / 300) + np.where(np.arange(10_000) % 2 == 0, 10.0, -10.0)
    picture = draw_series(t, [Panel("range", "Range (yd)", noisy)], title="10k", width=900)
    rgb = np.asarray(Image.open(io.BytesIO(picture.png)).convert("RGB")).astype(int)
    blue = (np.abs(rgb - np.asarray((31, 119, 180))).sum(axis=-1) < 60)[:, 75:875]
    assert blue.any(axis=0).all()
    lo, hi = picture.ranges["range"]
    assert 30 <= lo <= 40 and hi >= 160  # the extremes (40 and 160) are on the axis, which is not from zero


async def test_a_result_in_range_bearings_new_names_reads_the_same(client: Client) -> None:
    """Columns are read generically (any numeric list beside time; the *_side words left out) and
    the CPA from cpa_time first: a result with the renamed columns and summary draws as well."""
    times = [f"1995-12-12T10:{m:02d}:00Z" for m in range(30, 60)]
    ranges = [abs(m - 15) * 100.0 + 120.0 for m in range(30)]
    result = {
        "type": "Feature",
        "id": "rb-new",
        "geometry": None,
        "properties": {
            "kind": "analysis-result",
            "name": "Range and bearing A to B",
            "distance_unit": "yd",
            "bearing_rate_unit": "deg/min",
            "secondary_id": "b",
            "cpa_time": "1995-12-12T10:45:09.500Z",
            "cpa_range": 119.5,
            "min_sampled_range_time": "1995-12-12T10:45:00Z",
            "series": {
                "time": times,
                "range": ranges,
                "atb": [10.0 - m for m in range(30)],
                "atb_side": ["stbd" if m < 10 else "port" for m in range(30)],
                "primary_speed": [12.0] * 30,
                "bearing_rate": [None, *[0.5] * 29],
            },
        },
    }
    answer, _ = await series(client, features=[result], quantities=["range", "atb", "primary_speed"])
    assert [p["label"] for p in answer["panels"]] == ["Range (yd)", "ATB (°, + starboard/G)", "Primary speed (kn)"]
    assert answer["cpa"] == {
        "time": "1995-12-12T10:45:09.500Z",
        "label": "CPA 119.5 yd at 10:45:10",
        "source": "cpa_time",
        "range": 119.5,
        "unit": "yd",
    }
    assert answer["source"] == {"kind": "result given inline", "id": "rb-new"}
    error = await fails(client, features=[result], quantities=["atb_side"])
    assert error["details"]["available"] == ["range", "atb", "primary_speed", "bearing_rate"]


def _plot_of_the_exercise(ws: Path) -> list[dict[str, Any]]:
    features = [
        f
        for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep")
        for f in parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    ]
    (ws / "exercise.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    return features


HOUR = {"time_start": "1995-12-12T10:00:00Z", "time_end": "1995-12-12T11:00:00Z"}
IN_THE_HOUR = [f"1995-12-12T10:{m}:00Z" for m in ("03", "13", "14", "29", "37")]


async def test_every_narrative_given_is_marked_or_counted_with_its_reason(client: Client, ws: Path) -> None:
    features = _plot_of_the_exercise(ws)
    entries = [f for f in features if f["properties"].get("dataType") == "annotation"]
    leg_mark = {  # a timed line (track-legs' leg mark) is not a narrative entry
        "type": "Feature",
        "id": "leg-1",
        "geometry": {"type": "LineString", "coordinates": [[-21.7, 22.1], [-21.8, 22.1]]},
        "properties": {"dataType": "annotation", "text": "NELSON leg 1", "time": "1995-12-12T10:20:00Z"},
    }
    (ws / "exercise.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": [*features, leg_mark]}))
    pair = ["rep-nelson", "rep-collingwood"]
    # the plot's own entries, whether the tracks come by plot or by plot-feature refs
    by_plot, _ = await series(client, plot={"filename": "exercise.plot.json", "feature_ids": pair}, **HOUR)
    refs = [{"ref": f"debrief-state:plots/exercise.plot.json#{i}"} for i in pair]
    by_refs, _ = await series(client, features=refs, **HOUR)
    for answer in (by_plot, by_refs):
        counts = answer["narratives"]
        assert counts["from_plot"] == "exercise.plot.json" and counts["given"] == len(entries) == 19
        assert counts["marked"] == 5 and counts["marked_at"] == IN_THE_HOUR
        assert counts["outside_span"] == 14 and counts["labelled"] == 5 and "untimed" not in counts
    # the import's run ref, plot-feature refs and inline entries, one of them untimed
    log = await imported(client, "valid_narrative.rep")
    by_run, _ = await series(client, features=refs, narratives=[log], **HOUR)
    assert by_run["narratives"]["marked_at"] == IN_THE_HOUR and "from_plot" not in by_run["narratives"]
    two = [{"ref": f"debrief-state:plots/exercise.plot.json#{e['id']}"} for e in entries[13:15]]
    by_entry, _ = await series(client, features=refs, narratives=two, **HOUR)
    assert by_entry["narratives"]["marked_at"] == IN_THE_HOUR[3:5]
    inline = [
        {
            "type": "Feature",
            "id": "n1",
            "geometry": None,
            "properties": {"dataType": "annotation", "text": "zig", "time": "1995-12-12T10:29:00Z"},
        },
        {"type": "Feature", "id": "n2", "geometry": None, "properties": {"dataType": "annotation", "text": "no time"}},
        {
            "type": "Feature",
            "id": "n3",
            "geometry": None,
            "properties": {"dataType": "annotation", "text": "late", "time": "1995-12-12T12:00:00Z"},
        },
    ]
    mixed, _ = await series(client, features=refs, narratives=inline, **HOUR)
    counts = mixed["narratives"]
    assert counts["given"] == 3 and counts["marked"] == 1 and counts["marked_at"] == ["1995-12-12T10:29:00Z"]
    assert counts["outside_span"] == 1 and counts["untimed"] == 1 and counts["untimed_ids"] == ["n2"]
    assert "properties.time" in counts["untimed_note"]


def _bearing_rate(nelson: Any, collingwood: Any, t: float, h: float = 0.5) -> float:
    """deg/min, a central difference of the GeographicLib bearings half a second either side."""

    def bearing(x: float) -> float:
        a, b = _at(nelson, x), _at(collingwood, x)
        return float(Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])["azi1"])

    return ((bearing(t + h) - bearing(t - h) + 180.0) % 360.0 - 180.0) / (2 * h) * 60.0


async def test_the_drawn_curve_reaches_the_true_peak_it_labels(client: Client, ws: Path) -> None:
    """The trial's case: the bearing rate sampled at the fixes never went below -89°/min beside a
    "true peak -108.6°/min" diamond far below it. Drawn from the tracks, the curve is evaluated between
    fixes (every fix both sides, about two points a pixel column, round every instant marked): its
    extreme is the peak, and the line's lowest pixel is the diamond's."""
    _plot_of_the_exercise(ws)
    answer, picture = await series(
        client,
        plot={"filename": "exercise.plot.json", "feature_ids": ["rep-nelson", "rep-collingwood"]},
        parameters={"distance_unit": "yd"},
        **HOUR,
    )
    rng, _, rate = answer["panels"]
    assert {p["extrema"] for p in answer["panels"]} == {"curve"}
    assert answer["curve"]["between_fixes"] is True and answer["curve"]["samples"] > 2 * 812
    peak = rate["true_peak"]
    label = "Peak -108.6°/min (drawing left) at 10:44:53, between samples"
    assert peak["label"] == label and peak["between_samples"] is True
    assert rate["min"] == pytest.approx(peak["value"], abs=1e-4)  # the curve reaches the peak
    assert rate["axis"][0] <= peak["value"]
    err, stored = await call(client, "get_result", ref=answer["source"]["ref"])  # the rows at the fixes miss it
    assert not err and round(min(v for v in stored["features"][0]["properties"]["series"]["bearing_rate"] if v)) == -89
    nelson, collingwood = _track("valid_boat1.rep"), _track("valid_boat2.rep")
    start = parse_iso("1995-12-12T10:44:30Z")
    best_t = max(np.arange(start, start + 60.0, 0.25), key=lambda t: abs(_bearing_rate(nelson, collingwood, t)))
    assert peak["value"] == pytest.approx(_bearing_rate(nelson, collingwood, best_t), abs=0.05)
    assert abs(parse_iso(peak["time"]) - best_t) < 0.5
    _, yards = _true_cpa()
    assert rng["true_min"]["value"] == pytest.approx(yards, abs=0.05)
    assert rng["min"] == pytest.approx(rng["true_min"]["value"], abs=1e-3)  # and the range curve its CPA
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    red = (rgb[..., 0] > 180) & (rgb[..., 1] < 90) & (rgb[..., 2] < 90)
    purple = np.abs(rgb - np.asarray((148, 103, 189))).sum(axis=-1) < 40
    lower = int(picture.size[1] * 0.66)
    ys, xs = np.nonzero(purple[lower:])
    y, x = int(ys.max()) + lower, int(xs[ys.argmax()])  # the line's lowest pixel
    assert red[y - 8 : y + 9, x - 8 : x + 9].sum() > 10  # on the diamond
    cpa_x = int(np.flatnonzero(red.sum(axis=0) > 300).mean())
    assert abs(x - cpa_x) < 20  # 16 s before the CPA, a few pixels left of its line
    # a stored result drawn within a window that leaves its peak out marks none, and says so
    late, _ = await series(client, features=[{"ref": answer["source"]["ref"]}], time_start="1995-12-12T10:50:00Z")
    outside = late["panels"][2]["true_peak"]
    assert outside["outside_span"] is True and outside["time"] == peak["time"] and "label" not in outside
    assert late["panels"][2]["extrema"] == "sampled" and "curve" not in late  # a stored series: its rows


async def test_the_title_names_what_is_drawn_and_entries_say_whose_they_are(client: Client) -> None:
    nelson, collingwood = await imported(client, "valid_boat1.rep"), await imported(client, "valid_boat2.rep")
    log = await imported(client, "valid_narrative.rep")
    answer, _ = await series(
        client,
        features=[nelson, collingwood],
        narratives=[log],
        quantities=["bearing", "bearing_rate"],
        time_start="1995-12-12T10:00:00Z",
        time_end="1995-12-12T11:00:00Z",
    )
    assert answer["title"] == "Bearing and bearing rate NELSON to COLLINGWOOD"  # no range drawn, none named
    whole, _ = await series(client, features=[nelson, collingwood])
    assert whole["title"] == "Range, bearing and bearing rate NELSON to COLLINGWOOD"
    # a narrative entry's label names the platform that logged it
    t = parse_iso("1995-12-12T10:00:00Z") + np.arange(0, 3600, 60.0)
    from debrief_calc.calc.series_plot import Marker

    picture = draw_series(
        t,
        [Panel("range", "Range (yd)", np.linspace(4000, 100, t.size))],
        title="x",
        narratives=[Marker(t[10], "Contact gained bearing 120", who="NELSON")],
    )
    assert picture.labelled == ["10:10 NELSON: Contact gained bearing 120"]
