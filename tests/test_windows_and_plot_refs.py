"""The analyst's instruments: one time window on every input of run_tool, features moved
between plots by reference, narratives named by their platform, bounded narration within a
window; through the services directly and through both servers in-process."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client

from debrief_calc.calc.server import build_server as build_calc
from debrief_calc.calc.service import CalcService
from debrief_calc.state.server import build_server as build_state
from debrief_calc.tracks.features import feature_summary, parse_iso
from debrief_calc.tracks.times import Window, cut_feature, parse_window
from llmem.core.config import Limits, ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call

pytestmark = pytest.mark.anyio

LARGE = "large-sample.plot.json"
GALEN = f"debrief-state:plots/{LARGE}#f-1"
YD = 0.9144


@pytest.fixture
def ws(workspace: Path) -> Path:
    for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    return workspace


@pytest.fixture(params=MODES)
async def calc(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with Client(build_calc(ServerConfig("debrief-calc-mcp", ws)), mode=request.param) as c:
        yield c


@pytest.fixture
async def state(ws: Path) -> AsyncIterator[Client]:
    async with Client(build_state(ServerConfig("debrief-state-mcp", ws))) as c:
        yield c


def service(ws: Path) -> CalcService:
    return CalcService(ArtifactStore(ws / ".llmem", ws), Limits())


def galen() -> dict[str, Any]:
    data = json.loads((DATA / "plots" / LARGE).read_text())
    found: dict[str, Any] = next(f for f in data["features"] if f["id"] == "f-1")
    return found


async def ok(client: Client, name: str, /, **args: Any) -> dict[str, Any]:
    err, out = await call(client, name, **args)
    assert not err and out["success"] is True, out
    return out


async def fails(client: Client, name: str, code: str, /, **args: Any) -> dict[str, Any]:
    err, out = await call(client, name, **args)
    assert err and out["success"] is False and out["error"]["code"] == code, out
    error: dict[str, Any] = out["error"]
    return error


def rep_span(*names: str) -> list[str]:
    """The first and last fix times of REP files, read from their lines (YYMMDD HHMMSS)."""
    stamps = sorted(
        f"19{x[0:2]}-{x[2:4]}-{x[4:6]}T{x[7:9]}:{x[9:11]}:{x[11:13]}Z"
        for name in names
        for x in (DATA / "rep" / name).read_text().splitlines()
        if x[:6].isdigit()
    )
    return [stamps[0], stamps[-1]]


def rep_fix(name: str, when: str) -> tuple[float, float]:
    """(lon, lat) of the REP fix at ``when``: degrees minutes seconds hemisphere, twice."""
    line = next(x for x in (DATA / "rep" / name).read_text().splitlines() if x.startswith(when))
    f = line.split()
    lat = (float(f[4]) + float(f[5]) / 60 + float(f[6]) / 3600) * (1 if f[7] == "N" else -1)
    lon = (float(f[8]) + float(f[9]) / 60 + float(f[10]) / 3600) * (1 if f[11] == "E" else -1)
    return lon, lat


async def boat_refs(calc: Client) -> tuple[str, str]:
    one = await ok(calc, "run_tool", tool="import-rep", parameters={"path": "valid_boat1.rep"})
    two = await ok(calc, "run_tool", tool="import-rep", parameters={"path": "valid_boat2.rep"})
    return one["stored"]["ref"], two["stored"]["ref"]


# -- windowing a track --------------------------------------------------------------------------------


def test_a_window_cuts_a_track_with_fixes_interpolated_exactly_at_its_edges() -> None:
    track = galen()
    props = track["properties"]
    start, end = "2024-11-14T22:00:00Z", "2024-11-14T23:00:00Z"
    window = parse_window(start, end)
    assert window is not None
    cut = cut_feature(track, window)
    assert cut is not None
    out = cut["properties"]
    coords = cut["geometry"]["coordinates"]
    assert (out["timestamps"][0], out["timestamps"][-1]) == (start, end)
    inside = [t for t in props["timestamps"] if start <= t <= end]
    assert out["timestamps"][1:-1] == inside  # every fix inside, untouched
    for name in ("timestamps", "speeds", "courses"):
        assert len(out[name]) == len(coords) == len(inside) + 2
    assert {k: v for k, v in out.items() if not isinstance(v, list) and k != "window_edges"} == {
        k: v for k, v in props.items() if not isinstance(v, list)
    }  # style and names kept
    # the edge fix lies on the geodesic between its two neighbours, at constant speed (GeographicLib)
    i = next(n for n, t in enumerate(props["timestamps"]) if t > start)
    t0, t1, t = (parse_iso(x) for x in (props["timestamps"][i - 1], props["timestamps"][i], start))
    (lon0, lat0), (lon1, lat1) = track["geometry"]["coordinates"][i - 1 : i + 1]
    line = Geodesic.WGS84.InverseLine(lat0, lon0, lat1, lon1)
    at = line.Position(line.s13 * (t - t0) / (t1 - t0))
    edge = Geodesic.WGS84.Inverse(at["lat2"], at["lon2"], coords[0][1], coords[0][0])
    assert edge["s12"] < 0.01
    f = (t - t0) / (t1 - t0)
    assert out["speeds"][0] == pytest.approx(props["speeds"][i - 1] + f * (props["speeds"][i] - props["speeds"][i - 1]))
    # the original fixes beyond the cut edges stay as hints for the motion at the ends (not samples)
    j = next(n for n, t in enumerate(props["timestamps"]) if t > end)
    (lon2, lat2) = track["geometry"]["coordinates"][j][:2]
    assert out["window_edges"] == {
        "before": [lon0, lat0, t0],
        "after": [lon2, lat2, parse_iso(props["timestamps"][j])],
        "interpolated": [True, True],
    }


def test_a_window_cuts_positions_and_turns_courses_the_short_way() -> None:
    positions = [
        {"coordinates": [0.0, 0.0], "time": "2025-01-01T00:00:00Z", "depth": 10.0},
        {"coordinates": [0.0, 0.1], "time": "2025-01-01T00:10:00Z", "depth": 20.0},
        {"coordinates": [0.0, 0.2], "time": "2025-01-01T00:20:00Z", "depth": 30.0},
    ]
    track = {
        "type": "Feature",
        "id": "sub",
        "geometry": None,
        "properties": {
            "kind": "track",
            "positions": positions,
            "courses": [350.0, 10.0, 20.0],
            "labels": ["a", "b", "c"],
        },
    }
    window = parse_window("2025-01-01T00:05:00Z", None)
    assert window is not None
    cut = cut_feature(track, window)
    assert cut is not None
    props = cut["properties"]
    first = props["positions"][0]
    assert first["time"] == "2025-01-01T00:05:00Z" and first["depth"] == pytest.approx(15.0)
    assert first["coordinates"][1] == pytest.approx(0.05, abs=1e-6)
    assert props["positions"][1:] == positions[1:]
    assert props["courses"][0] == pytest.approx(0.0) and props["labels"] == ["b", "b", "c"]  # 350 → 10 via 0
    # a window inside one gap: two interpolated fixes; a window after the track: nothing
    gap = parse_window("2025-01-01T00:01:00Z", "2025-01-01T00:02:00Z")
    assert gap is not None
    inner = cut_feature(track, gap)
    assert inner is not None and [p["time"] for p in inner["properties"]["positions"]] == [
        "2025-01-01T00:01:00Z",
        "2025-01-01T00:02:00Z",
    ]
    assert cut_feature(track, Window(parse_iso("2025-01-02T00:00:00Z"), None)) is None


# -- run_tool windows every input ---------------------------------------------------------------------


async def test_seven_bearings_every_ten_minutes_on_refs_and_the_range_at_1030(calc: Client) -> None:
    """The acceptance case: on import refs, 10:00–11:00 every 10 minutes is exactly 7 samples,
    and the 10:30 range is GeographicLib's between the two 10:30 fixes (4,033 yd)."""
    nelson, collingwood = await boat_refs(calc)
    window = {"time_start": "1995-12-12T10:00:00Z", "time_end": "1995-12-12T11:00:00Z"}
    out = await ok(
        calc,
        "run_tool",
        tool="range-bearing",
        features=[{"ref": nelson}, {"ref": collingwood}],
        parameters={"sample": "interval", "interval_s": 600, "distance_unit": "yd"},
        **window,
    )
    (result,) = out["features"]
    props = result["properties"]
    assert props["series"]["time"] == [f"1995-12-12T10:{m}0:00Z" for m in range(6)] + ["1995-12-12T11:00:00Z"]
    assert props["sample_count"] == 7 and (props["overlap_start"], props["overlap_end"]) == tuple(window.values())
    stated = {"start": window["time_start"], "end": window["time_end"], "source": "asked"}
    assert props["provenance"]["window"] == stated
    assert out["window"] == {**stated, "data": rep_span("valid_boat1.rep", "valid_boat2.rep")}  # what it cut from
    # independent: the two 10:30 fixes, read from the REP lines themselves, and one GeographicLib inverse
    a, b = (rep_fix(name, "951212 103000.000") for name in ("valid_boat1.rep", "valid_boat2.rep"))
    expected = Geodesic.WGS84.Inverse(a[1], a[0], b[1], b[0])["s12"] / YD
    assert round(expected) == 4033
    assert props["series"]["range"][3] == pytest.approx(expected, abs=1.0)


async def test_a_window_cuts_inline_features_and_names_what_it_left_out(calc: Client) -> None:
    track = galen()
    zone: dict[str, Any] = {
        "type": "Feature",
        "id": "box",
        "geometry": {"type": "Polygon", "coordinates": [[[-4, 35], [-3, 35], [-3, 37], [-4, 37], [-4, 35]]]},
        "properties": {"kind": "zone", "name": "box"},
    }
    late = {**zone, "id": "late-zone", "properties": {**zone["properties"], "time": "2024-11-15T04:00:00Z"}}
    window = {"time_start": "2024-11-14T22:00:00Z", "time_end": "2024-11-14T23:00:00Z"}
    out = await ok(calc, "run_tool", tool="zone-transits", features=[track, zone, late], **window)
    assert {f["properties"]["zone_id"] for f in out["features"]} == {"box"}
    assert out["window"] == {
        "start": window["time_start"],
        "end": window["time_end"],
        "source": "asked",
        "left_out": ["late-zone"],
        "data": ["2024-11-14T21:16:53.662Z", "2024-11-15T05:16:53.662Z"],
    }
    stats = (await ok(calc, "run_tool", tool="track-stats", features=[track], **window))["features"][0]
    assert (stats["properties"]["statistics"]["start"], stats["properties"]["statistics"]["end"]) == tuple(
        window.values()
    )  # exactly the window
    assert any("left out: late-zone" in w for w in out["warnings"])


async def test_a_window_on_a_plot_reference_and_the_one_window_rule(calc: Client) -> None:
    w = {"time_start": "2024-11-14T22:00:00Z", "time_end": "2024-11-14T23:00:00Z"}
    plot = {"filename": LARGE, "feature_ids": ["f-1"]}
    by_run = await ok(calc, "run_tool", tool="track-stats", plot=plot, **w)
    by_plot = await ok(calc, "run_tool", tool="track-stats", plot={**plot, **w})
    both = await ok(calc, "run_tool", tool="track-stats", plot={**plot, **w}, **w)  # the same pair twice: fine
    for out in (by_run, by_plot, both):
        assert out["features"][0]["properties"]["provenance"]["window"] == {
            "start": w["time_start"],
            "end": w["time_end"],
            "source": "asked",
        }
        assert out["features"][0]["properties"]["statistics"]["start"] == w["time_start"]
    error = await fails(
        calc, "run_tool", "VALIDATION_FAILED", tool="track-stats", plot={**plot, **w}, time_end="2024-11-14T22:30:00Z"
    )
    assert error["details"]["field"] == "plot.time_start" and "give the window once" in error["message"]
    error = await fails(calc, "run_tool", "VALIDATION_FAILED", tool="track-stats", plot={**plot, "time_begin": "x"})
    assert error["details"]["field"] == "plot.time_begin"  # never ignored silently


@pytest.mark.parametrize(
    ("window", "code", "field"),
    [
        ({"time_start": "teatime"}, "VALIDATION_FAILED", "time_start"),
        ({"time_start": "1995-12-12T11:00:00Z", "time_end": "1995-12-12T10:00:00Z"}, "VALIDATION_FAILED", "time_end"),
        ({"time_start": "2030-01-01T00:00:00Z"}, "INVALID_CONTEXT", "time_start"),
    ],
)
async def test_a_bad_window_on_refs_is_named(calc: Client, window: dict[str, str], code: str, field: str) -> None:
    nelson, collingwood = await boat_refs(calc)
    error = await fails(
        calc, "run_tool", code, tool="range-bearing", features=[{"ref": nelson}, {"ref": collingwood}], **window
    )
    assert error["details"]["field"] == field
    if code == "INVALID_CONTEXT":
        # an import reads no features: its window would be ignored, so it is refused
        refused = await fails(
            calc, "run_tool", "VALIDATION_FAILED", tool="import-rep", parameters={"path": "valid_boat1.rep"}, **window
        )
        assert refused["details"] == {"field": "time_start", "rule": "features to window"}
        assert "none of the 2 feature(s)" in error["message"] and "widen time_start/time_end" in error["message"]


# -- plot features by reference -----------------------------------------------------------------------


async def test_run_tool_reads_plot_features_by_reference(calc: Client, ws: Path) -> None:
    one = await ok(calc, "run_tool", tool="track-stats", features=[{"ref": GALEN}])
    assert [s["id"] for s in one["features"][0]["properties"]["provenance"]["sources"]] == ["f-1"]
    whole = await ok(
        calc, "run_tool", tool="track-stats", features=[{"ref": f"debrief-state:plots/{LARGE}", "ids": ["f-2", "f-3"]}]
    )
    assert [f["properties"]["provenance"]["sources"][0]["id"] for f in whole["features"]] == ["f-2", "f-3"]
    # the plot's time state is what the ref expansion gives back for tools that take a current time
    inputs = service(ws).read_inputs("tote", [{"ref": GALEN}], None)
    assert inputs.features == [galen()] and inputs.time_state is not None
    assert inputs.current == parse_iso("2024-11-14T16:16:53.661Z")


async def test_bad_plot_references_say_what_there_is(calc: Client) -> None:
    error = await fails(
        calc,
        "run_tool",
        "PLOT_NOT_FOUND",
        tool="track-stats",
        features=[{"ref": "debrief-state:plots/nope.plot.json#f-1"}],
    )
    assert error["details"]["plot_files"] == [LARGE] and error["details"]["field"] == "features[0].ref"
    error = await fails(
        calc,
        "run_tool",
        "FEATURE_NOT_FOUND",
        tool="track-stats",
        features=[{"ref": f"debrief-state:plots/{LARGE}#f-11"}],
    )
    assert error["details"]["missing_ids"] == ["f-11"] and "f-1" in error["details"]["close_ids"]
    assert "f-1" in error["details"]["available_ids"]
    error = await fails(
        calc,
        "run_tool",
        "INVALID_FILENAME",
        tool="track-stats",
        features=[{"ref": "debrief-state:plots/../x.plot.json#a"}],
    )
    assert error["details"]["field"] == "features[0].ref"
    error = await fails(
        calc, "run_tool", "VALIDATION_FAILED", tool="track-stats", features=[{"ref": "debrief-state:plots/notes.txt"}]
    )
    assert error["details"]["rule"] == "format"
    error = await fails(
        calc, "run_tool", "VALIDATION_FAILED", tool="track-stats", features=[{"ref": GALEN, "ids": ["f-2"]}]
    )
    assert error["details"]["field"] == "features[0].ids"


async def test_van_galen_is_copied_into_a_new_plot_in_one_small_call_identical(state: Client, ws: Path) -> None:
    args = {"filename": "copy.plot.json", "features": [{"ref": GALEN}]}
    assert len(json.dumps(args)) < 200
    out = await ok(state, "debrief_create_plot", **args)
    assert out["added_ids"] == ["f-1"] and out["added_refs"] == ["debrief-state:plots/copy.plot.json#f-1"]
    copied = next(f for f in json.loads((ws / "copy.plot.json").read_text())["features"] if f["id"] == "f-1")
    assert copied == galen()  # geometry, times, per-fix arrays, style: nothing differs
    assert len(copied["geometry"]["coordinates"]) == 781
    # again into the same plot: refused, naming the id and how to give a new one; then under a new id
    command = {"command": "addFeatures", "payload": [{"ref": GALEN}]}
    error = (await call(state, "debrief_apply_command", command=command, filename="copy.plot.json"))[1]["error"]
    assert error["code"] == "INVALID_COMMAND" and "'f-1'" in error["message"] and '"id": "<new id>"' in error["message"]
    command = {"command": "addFeatures", "payload": [{"ref": GALEN, "id": "galen-2"}]}
    added = await ok(state, "debrief_apply_command", command=command, filename="copy.plot.json")
    assert added["added_ids"] == ["galen-2"]
    second = next(f for f in json.loads((ws / "copy.plot.json").read_text())["features"] if f["id"] == "galen-2")
    assert {**second, "id": "f-1"} == galen()


async def test_a_whole_plot_by_reference_leaves_its_metadata_behind(state: Client, ws: Path) -> None:
    source = json.loads((ws / LARGE).read_text())["features"]
    out = await ok(
        state, "debrief_create_plot", filename="all.plot.json", features={"ref": f"debrief-state:plots/{LARGE}"}
    )
    data = [f for f in source if f["properties"].get("dataType") != "metadata"]
    assert out["added_ids"] == [f["id"] for f in data]
    written = json.loads((ws / "all.plot.json").read_text())["features"]
    assert [f for f in written if f["id"] in out["added_ids"]] == data
    # the new plot's time window is its own (its features' period), not the source's saved one
    assert (
        out["timeState"]["start"]
        != next(f for f in source if f["id"] == "debrief-time-metadata")["properties"]["start"]
    )
    error = (
        await call(
            state,
            "debrief_create_plot",
            filename="x.plot.json",
            features=[{"ref": "debrief-state:plots/gone.plot.json"}],
        )
    )[1]
    assert error["error"]["code"] == "PLOT_NOT_FOUND" and LARGE in error["error"]["details"]["plot_files"]
    assert error["error"]["details"]["at"] == "command.payload[0]"  # which item it was
    assert not (ws / "x.plot.json").exists()


async def test_features_read_whole_carry_their_ref_which_is_not_written_back(state: Client, ws: Path) -> None:
    full = await ok(state, "debrief_get_features", filename=LARGE, ids=["p-3"], detail="full")
    (point,) = full["features"]
    assert point["ref"] == f"debrief-state:plots/{LARGE}#p-3"
    point["properties"]["name"] = "NEW SONO 2"
    await ok(state, "debrief_apply_command", command={"command": "updateFeatures", "payload": [point]}, filename=LARGE)
    stored = next(f for f in json.loads((ws / LARGE).read_text())["features"] if f["id"] == "p-3")
    assert "ref" not in stored and stored["properties"]["name"] == "NEW SONO 2"


# -- narratives -------------------------------------------------------------------------------------------


def test_a_narrative_summary_names_its_platform() -> None:
    entry: dict[str, Any] = {
        "type": "Feature",
        "id": "n1",
        "geometry": None,
        "properties": {
            "dataType": "annotation",
            "text": "COMEX SERIAL 16D",
            "time": "1995-12-12T05:00:00Z",
            "track": "NELSON",
        },
    }
    assert feature_summary(entry)["platform"] == "NELSON"
    del entry["properties"]["track"]
    assert "platform" not in feature_summary(entry)


# -- narration within a window ----------------------------------------------------------------------------


async def test_narration_in_a_window_shows_it_and_keeps_short_series_whole(calc: Client) -> None:
    nelson, collingwood = await boat_refs(calc)
    pair = [{"ref": nelson}, {"ref": collingwood}]
    short = await ok(
        calc,
        "run_tool",
        tool="range-bearing",
        features=pair,
        parameters={"sample": "interval", "interval_s": 600},
        time_start="1995-12-12T10:00:00Z",
        time_end="1995-12-12T11:00:00Z",
    )
    rid = short["features"][0]["id"]
    series = short["features"][0]["properties"]["series"]
    prompt = (await ok(calc, "generate_prompt", target=rid, task="narrate-result"))["promptForHostLLM"]
    assert "Computed over the window 1995-12-12T10:00:00Z to 1995-12-12T11:00:00Z" in prompt
    assert "series: a table of all 7 rows" in prompt
    for t, r in zip(series["time"], series["range"], strict=True):
        assert f"| {t} | {json.dumps(r)} |" in prompt  # every row, figures as given
    later = await ok(calc, "generate_prompt", target=rid, task="narrate-result", time_start="1995-12-12T10:25:00Z")
    text = later["promptForHostLLM"]
    assert "the window 1995-12-12T10:25:00Z to open" in text and "window_rows_left_out: 3" in text
    assert "a table of all 4 rows" in text and "1995-12-12T10:20:00Z" not in text.split("Figures:")[1]
    # a long series: summarised, and the prompt says so and how many rows it left out
    every = await ok(calc, "run_tool", tool="range-bearing", features=pair, parameters={"sample": "all"})
    n = every["features"][0]["properties"]["sample_count"]
    prompt = (await ok(calc, "generate_prompt", target=every["features"][0]["id"], task="narrate-result"))[
        "promptForHostLLM"
    ]
    assert f"a series of {n} rows, too long to list here" in prompt and f"all {n} rows left out" in prompt
    error = await fails(
        calc, "generate_prompt", "VALIDATION_FAILED", target=rid, task="narrate-result", time_end="noon"
    )
    assert error["details"]["field"] == "time_end" and "status" not in error


def test_plot_refs_read_the_plot_without_copying_it_and_leave_it_as_it_was(ws: Path) -> None:
    """run_tool reads a plot-feature ref as it reads plot=: the cached features themselves (a
    million-fix track is not copied on every call), so the runs, windowed or under a new id, must
    leave them as they were; the answers are the same as by plot=."""
    svc = service(ws)
    before = json.dumps(svc.plot_features({"filename": LARGE, "feature_ids": ["f-1"]}))
    window = ("2024-11-14T22:00:00Z", "2024-11-14T23:00:00Z")
    by_ref = svc.run("track-stats", [{"ref": GALEN}], None, None, None, *window)
    by_plot = svc.run("track-stats", None, {"filename": LARGE, "feature_ids": ["f-1"]}, None, None, *window)
    renamed = svc.run("track-stats", [{"ref": GALEN, "id": "galen-copy"}], None, None, None)
    assert by_ref["success"] and by_plot["success"] and renamed["success"], (by_ref, by_plot, renamed)
    stats = [answer["features"][0]["properties"]["statistics"] for answer in (by_ref, by_plot)]
    assert stats[0] == stats[1] and stats[0]["start"] == window[0] and stats[0]["end"] == window[1]
    assert renamed["features"][0]["properties"]["provenance"]["sources"][0]["id"] == "galen-copy"
    assert json.dumps(svc.plot_features({"filename": LARGE, "feature_ids": ["f-1"]})) == before


def test_a_whole_plot_leaves_out_the_kinds_a_tool_does_not_take_and_says_so(ws: Path) -> None:
    svc = service(ws)
    before = (ws / LARGE).read_bytes()
    data = json.loads(before)
    kinds: dict[str, list[str]] = {}
    for f in data["features"]:
        kinds.setdefault(feature_summary(f)["kind"], []).append(f["id"])
    named = svc.run("zone-overlaps", None, {"filename": LARGE, "feature_ids": kinds["track"] + kinds["zone"]}, None, {})
    assert named["success"] is True and "skipped" not in named
    for source in ({"plot": {"filename": LARGE}}, {"features": [{"ref": f"debrief-state:plots/{LARGE}"}]}):
        answer = svc.run("zone-overlaps", source.get("features"), source.get("plot"), None, {})
        assert answer["success"] is True, answer
        left = {k: v for k, v in kinds.items() if k not in ("track", "zone")}
        if "features" in source:  # a plot reference never hands over the plot's metadata
            left.pop("metadata")
        assert answer["skipped"] == left and set(left) >= {"buoyfield", "point", "backdrop"}
        assert any("left out" in w and "bf-1" in w and "it takes track, zone" in w for w in answer["warnings"])
        strip = [{k: v for k, v in f["properties"].items() if k != "provenance"} for f in answer["features"]]
        assert strip == [{k: v for k, v in f["properties"].items() if k != "provenance"} for f in named["features"]]
    # the tote on the whole plot: its metadata and other kinds no longer stop it
    tote = svc.run("tote", None, {"filename": LARGE}, None, {"time": "2024-11-15T00:00:00Z"})
    assert tote["success"] is True and "metadata" in tote["skipped"] and "zone" in tote["skipped"]
    assert {f["properties"]["primary_id"] for f in tote["features"]} == {"f-1"}
    # a feature named by id of a kind the tool does not take is still refused, the fix spelled out
    wrong = svc.run("zone-overlaps", None, {"filename": LARGE, "feature_ids": ["z-1", "bf-1"]}, None, {})
    assert wrong["success"] is False and wrong["error"]["code"] == "KIND_MISMATCH"
    message = wrong["error"]["message"]
    assert "of kind 'track', 'zone'" in message and "leaving 'bf-1' out" in message and "whole plot" in message
    assert (ws / LARGE).read_bytes() == before


def test_a_track_made_anew_from_a_cut_one_drops_its_window_edges() -> None:
    """window_edges speak of the cut track's own end fixes: resample-track's new fixes leave them behind."""
    from tests.test_analysis_support import run_ok

    cut = cut_feature(galen(), Window(parse_iso("2024-11-14T22:00:00Z"), parse_iso("2024-11-14T23:00:00Z")))
    assert cut is not None and "window_edges" in cut["properties"]
    (resampled,) = [
        f for f in run_ok("resample-track", [cut], {"interval_s": 600}).features if f["properties"]["kind"] == "track"
    ]
    assert "window_edges" not in resampled["properties"]


# -- a reference with a window of its own (issue 22 §2) -------------------------------------------------


W2 = {"time_start": "2024-11-14T22:00:00Z", "time_end": "2024-11-14T23:00:00Z"}


async def test_a_ref_with_its_own_window_is_read_cut_wherever_features_are_taken(calc: Client, state: Client) -> None:
    """run_tool, render_series (debrief-calc), addFeatures and debrief_create_plot (debrief-state)
    take {"ref", "time_start", "time_end"}: what the ref stands for is cut to that window, as the
    call's own window would cut it; a debrief-calc ref (an import's run) likewise."""
    stats = await ok(calc, "run_tool", tool="track-stats", features=[{"ref": GALEN, **W2}])
    by_call = await ok(calc, "run_tool", tool="track-stats", features=[{"ref": GALEN}], **W2)
    figures = stats["features"][0]["properties"]["statistics"]
    assert (figures["start"], figures["end"]) == tuple(W2.values())
    assert figures == by_call["features"][0]["properties"]["statistics"]
    assert stats["window"]["start"] == W2["time_start"] and stats["window"]["source"] == "asked"
    series = await call(calc, "render_series", features=[{"ref": GALEN, **W2}, {"ref": GALEN.replace("f-1", "f-2")}])
    assert not series[0] and series[1]["span"] == list(W2.values())  # the primary is cut; the range runs its span
    nelson, _ = await boat_refs(calc)
    early = {"time_start": "1995-12-12T06:00:00Z", "time_end": "1995-12-12T06:30:00Z"}
    run = await ok(calc, "run_tool", tool="track-stats", features=[{"ref": nelson, **early}])
    assert [run["features"][0]["properties"]["statistics"][k] for k in ("start", "end")] == list(early.values())

    command = {"command": "addFeatures", "payload": [{"ref": GALEN, "id": "galen-hour", **W2}]}
    added = await ok(state, "debrief_apply_command", command=command, filename=LARGE)
    assert added["added_ids"] == ["galen-hour"]
    read = await ok(state, "debrief_get_features", filename=LARGE, ids=["galen-hour"])
    assert (read["features"][0]["time_start"], read["features"][0]["time_end"]) == tuple(W2.values())


async def test_a_bad_window_on_a_ref_is_named_and_changes_nothing(calc: Client, state: Client, ws: Path) -> None:
    before = (ws / LARGE).read_bytes()
    error = await fails(
        calc, "run_tool", "VALIDATION_FAILED", tool="track-stats", features=[{"ref": GALEN, "time_start": "teatime"}]
    )
    assert error["details"]["field"] == "features[0].time_start"
    error = await fails(
        calc,
        "run_tool",
        "INVALID_CONTEXT",
        tool="track-stats",
        features=[{"ref": GALEN, "time_start": "2030-01-01T00:00:00Z"}],
    )
    assert error["details"]["field"] == "features[0].time_start"
    out = (
        await call(
            state,
            "debrief_create_plot",
            filename="none.plot.json",
            features=[{"ref": GALEN}],
            time_end="2000-01-01T00:00:00Z",
        )
    )[1]
    assert out["error"]["code"] == "INVALID_CONTEXT" and out["error"]["details"]["field"] == "time_start", out
    assert not (ws / "none.plot.json").exists() and (ws / LARGE).read_bytes() == before


async def test_get_features_says_its_window_and_the_plots_saved_one(state: Client) -> None:
    whole = await ok(state, "debrief_get_features", filename=LARGE, ids=["f-1"])
    assert whole["window"]["source"] == "data" and "note" not in whole["window"]
    await ok(state, "debrief_set_time", filename=LARGE, timeState={"start": W2["time_start"], "end": W2["time_end"]})
    whole = await ok(state, "debrief_get_features", filename=LARGE, ids=["f-1"])
    assert whole["window"]["source"] == "data" and whole["features"][0]["point_count"] == 781  # read whole…
    assert W2["time_start"] in whole["window"]["note"]  # …and told that the plot's pictures use its saved window
    cut = await ok(state, "debrief_get_features", filename=LARGE, ids=["f-1"], **W2)
    asked = {"start": W2["time_start"], "end": W2["time_end"], "source": "asked"}
    assert cut["window"] == {**asked, "data": [whole["window"]["start"], whole["window"]["end"]]}
