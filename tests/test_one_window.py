"""One window through every path (issue 22 §1, §2, §7), through the real console scripts over
stdio, on the large sample (VAN AMSTEL and LEOPOLD I): run_tool, render_series,
debrief_get_features, debrief_render_plot, the live view's data, a windowed copy by reference,
the copy's saved window as the default, generate_prompt. Every path is compared with one
reference cut computed here from the plot file with GeographicLib: the same first and last
instants (to the millisecond), the same edge positions (to the metre), the same figures (to the
yard). A default picture of a plot is the picture of its saved window, byte for byte; printed
times round-trip."""

from __future__ import annotations

import base64
import itertools
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client, StdioServerParameters

from tests.conftest import DATA, MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio

LARGE = "large-sample.plot.json"
START, END = "2024-11-14T20:00:00Z", "2024-11-14T22:00:00Z"  # between fixes of both ships
SHIPS = ("f-2", "f-3")  # VAN AMSTEL (fixes every ~43 s at …:53.662), LEOPOLD I (every minute)
REFS = [{"ref": f"debrief-state:plots/{LARGE}#{fid}"} for fid in SHIPS]
YD = 0.9144
GEOD = Geodesic.WGS84


def epoch(text: str) -> float:
    """An ISO-8601 time as epoch seconds, read by the standard library (not the suite)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Reference:
    """The window cut by hand from the plot file: each ship's fixes inside and its position at each
    edge along the geodesic between the two fixes round it, at constant speed (GeographicLib)."""

    def __init__(self, path: Path, start: str, end: str) -> None:
        self.start, self.end = epoch(start), epoch(end)
        by_id = {f["id"]: f for f in json.loads(path.read_text())["features"]}
        self.ships = {
            fid: ([epoch(t) for t in by_id[fid]["properties"]["timestamps"]], by_id[fid]["geometry"]["coordinates"])
            for fid in SHIPS
        }

    def at(self, fid: str, t: float) -> tuple[float, float]:
        """(lon, lat) of a ship at ``t``."""
        times, coords = self.ships[fid]
        i = max(k for k, s in enumerate(times) if s <= t)
        if times[i] == t:
            return coords[i][0], coords[i][1]
        (lon0, lat0), (lon1, lat1) = coords[i][:2], coords[i + 1][:2]
        line = GEOD.InverseLine(lat0, lon0, lat1, lon1)
        at = line.Position(line.s13 * (t - times[i]) / (times[i + 1] - times[i]))
        return at["lon2"], at["lat2"]

    def cut(self, fid: str) -> list[tuple[float, float, float]]:
        """(t, lon, lat) of the cut: the edge at the start, the fixes inside, the edge at the end."""
        times, coords = self.ships[fid]
        inside = [(t, c[0], c[1]) for t, c in zip(times, coords, strict=True) if self.start < t < self.end]
        return [(self.start, *self.at(fid, self.start)), *inside, (self.end, *self.at(fid, self.end))]

    def distance_yd(self, fid: str) -> float:
        cut = self.cut(fid)
        return sum(GEOD.Inverse(a[2], a[1], b[2], b[1])["s12"] for a, b in itertools.pairwise(cut)) / YD

    def interpolated(self, fid: str) -> list[bool]:
        """Whether each edge falls between two fixes (VAN AMSTEL's do; LEOPOLD I has fixes on the minute)."""
        times = self.ships[fid][0]
        return [self.start not in times, self.end not in times]

    def range_yd(self, t: float) -> float:
        (lon_a, lat_a), (lon_b, lat_b) = (self.at(fid, t) for fid in SHIPS)
        return float(GEOD.Inverse(lat_a, lon_a, lat_b, lon_b)["s12"]) / YD


def metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    return float(GEOD.Inverse(a[1], a[0], b[1], b[0])["s12"])


@pytest.fixture
def ws(workspace: Path) -> Path:
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    return workspace


@asynccontextmanager
async def servers(ws: Path, mode: str) -> AsyncIterator[tuple[Client, Client]]:
    """debrief-calc-mcp and debrief-state-mcp as a client launches them: console scripts over stdio."""

    def params(script: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=console_script(script), args=["--workspace", str(ws)], env=subprocess_env()
        )

    with anyio.fail_after(120):
        async with (
            Client(params("debrief-calc-mcp"), mode=mode) as calc,  # type: ignore[arg-type]
            Client(params("debrief-state-mcp"), mode=mode) as state,  # type: ignore[arg-type]
        ):
            yield calc, state


async def ok(client: Client, name: str, /, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    answer = result.structured_content
    assert not result.is_error and answer is not None and answer.get("success") is not False, answer
    return answer


async def png(client: Client, name: str, /, **args: Any) -> tuple[dict[str, Any], bytes]:
    result = await client.call_tool(name, args)
    assert not result.is_error and result.structured_content is not None, result.structured_content
    (image,) = [b for b in result.content if b.type == "image"]
    return result.structured_content, base64.b64decode(image.data)  # type: ignore[union-attr]


async def whole_features(state: Client, filename: str, **args: Any) -> dict[str, dict[str, Any]]:
    """Every page of debrief_get_features(detail='full'), a feature's parts joined."""
    out: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        page = await ok(state, "debrief_get_features", filename=filename, detail="full", cursor=cursor, **args)
        for item in page["features"]:
            fid, part = item["id"], item.pop("part", None)
            if part is None or fid not in out:
                out[fid] = item
                continue
            out[fid]["geometry"]["coordinates"] += item["geometry"]["coordinates"]
            for name in part.get("arrays", []):
                out[fid]["properties"][name] += item["properties"][name]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def assert_the_cut(ref: Reference, fid: str, times: list[float], coords: list[list[float]]) -> None:
    """A track read through a path is the reference cut: its instants and positions."""
    cut = ref.cut(fid)
    assert len(times) == len(coords) == len(cut), (fid, len(times), len(cut))
    assert times[0] == pytest.approx(ref.start, abs=0.001) and times[-1] == pytest.approx(ref.end, abs=0.001)
    for (t, lon, lat), s, c in zip(cut, times, coords, strict=True):
        assert s == pytest.approx(t, abs=0.001)
        assert metres((lon, lat), (c[0], c[1])) < 1.0


@pytest.mark.parametrize("mode", MODES)
async def test_the_same_window_through_every_path(ws: Path, mode: str) -> None:
    ref = Reference(ws / LARGE, START, END)
    window = {"time_start": START, "time_end": END}
    asked = {"start": START, "end": END, "source": "asked"}
    async with servers(ws, mode) as (calc, state):
        # run_tool on plot features: the distance run over the cut, to the yard
        stats = await ok(
            calc,
            "run_tool",
            tool="track-stats",
            plot={"filename": LARGE, "feature_ids": list(SHIPS)},
            parameters={"distance_unit": "yd"},
            **window,
        )
        assert {k: stats["window"][k] for k in asked} == asked and "data" in stats["window"]
        for result, fid in zip(stats["features"], SHIPS, strict=True):
            figures = result["properties"]["statistics"]
            assert (figures["start"], figures["end"]) == (START, END)
            assert figures["point_count"] == len(ref.cut(fid))
            assert figures["distance"] == pytest.approx(ref.distance_yd(fid), abs=1.0)
            assert result["properties"]["provenance"]["window"] == asked

        # run_tool on plot refs: range at the window's first and last instants, to the yard
        series = await ok(
            calc,
            "run_tool",
            tool="range-bearing",
            features=REFS,
            parameters={"distance_unit": "yd", "sample": "endpoints"},
            **window,
        )
        rows = series["features"][0]["properties"]["series"]
        assert (rows["time"][0], rows["time"][-1]) == (START, END)
        assert rows["range"][0] == pytest.approx(ref.range_yd(ref.start), abs=1.0)
        assert rows["range"][-1] == pytest.approx(ref.range_yd(ref.end), abs=1.0)

        # render_series: the same cut, the same figures: the least range at the window's start (the ships
        # open all the while: "Closest", not "CPA") and the greatest at a fix of VAN AMSTEL's, to the yard
        drawn, picture = await png(calc, "render_series", features=REFS, parameters={"distance_unit": "yd"}, **window)
        assert picture.startswith(b"\x89PNG") and drawn["span"] == [START, END]
        assert {k: drawn["window"][k] for k in asked} == asked
        assert drawn["samples"] == len(ref.cut("f-2"))
        assert drawn["cpa"]["time"] == START and drawn["cpa"]["edge"] == "start"
        assert drawn["cpa"]["range"] == pytest.approx(ref.range_yd(ref.start), abs=1.0)
        (ranges,) = [p for p in drawn["panels"] if p["quantity"] == "range"]
        assert ranges["max"] == pytest.approx(max(ref.range_yd(t) for t, _, _ in ref.cut("f-2")), abs=1.0)

        # debrief_get_features: the same instants and positions, every fix inside
        read = await whole_features(state, LARGE, ids=list(SHIPS), **window)
        assert ref.interpolated("f-2") == [True, True] and ref.interpolated("f-3") == [False, False]
        for fid in SHIPS:
            props = read[fid]["properties"]
            assert props["window_edges"]["interpolated"] == ref.interpolated(fid)
            assert_the_cut(ref, fid, [epoch(t) for t in props["timestamps"]], read[fid]["geometry"]["coordinates"])

        # debrief_render_plot: the tracks drawn over exactly the window
        rendered, _ = await png(state, "debrief_render_plot", filename=LARGE, fit="window", **window)
        assert rendered["span"] == [START, END] and {k: rendered["window"][k] for k in asked} == asked

        # the live view's data: the same cut (positions to 6 decimals, about 0.1 m)
        view = (await state.call_tool("debrief_view_data", {"filename": LARGE, **window})).structured_content
        assert view is not None and view["window"]["source"] == "asked"
        for f in (f for f in view["features"] if f["id"] in SHIPS):
            assert_the_cut(ref, f["id"], f["t"], [list(p) for p in zip(f["lon"], f["lat"], strict=True)])


@pytest.mark.parametrize("mode", MODES)
async def test_a_windowed_copy_by_reference_is_one_small_call_and_its_window_the_default(ws: Path, mode: str) -> None:
    """VAN AMSTEL and LEOPOLD I for two hours into a new plot: one call of a few hundred bytes,
    a fix interpolated at each edge (flagged), the window saved as the plot's; then everything
    drawn or measured from the new plot uses that window, and says so."""
    ref = Reference(ws / LARGE, START, END)
    asked = {"filename": "two-hours.plot.json", "features": REFS, "time_start": START, "time_end": END}
    assert len(json.dumps(asked)) < 300
    async with servers(ws, mode) as (calc, state):
        made = await ok(state, "debrief_create_plot", **asked)
        assert made["added_ids"] == list(SHIPS) and made["window"] == {"start": START, "end": END, "source": "asked"}
        assert (made["timeState"]["start"], made["timeState"]["end"]) == (START, END)
        copied = {f["id"]: f for f in json.loads((ws / "two-hours.plot.json").read_text())["features"]}
        for fid in SHIPS:
            props = copied[fid]["properties"]
            assert props["window_edges"]["interpolated"] == ref.interpolated(fid)
            assert_the_cut(ref, fid, [epoch(t) for t in props["timestamps"]], copied[fid]["geometry"]["coordinates"])

        # measured from the copy with no times: its saved window, stated as such, the same figures
        stats = await ok(
            calc,
            "run_tool",
            tool="track-stats",
            plot={"filename": "two-hours.plot.json"},
            parameters={"distance_unit": "yd"},
        )
        assert stats["window"] == {"start": START, "end": END, "source": "plot"}
        for result, fid in zip(stats["features"], SHIPS, strict=True):
            figures = result["properties"]["statistics"]
            assert (figures["start"], figures["end"]) == (START, END)
            assert figures["distance"] == pytest.approx(ref.distance_yd(fid), abs=1.0)
        # the prompt about the plot says its window
        text = (await ok(state, "generate_prompt", task="summarize-plot", target="two-hours.plot.json"))[
            "promptForHostLLM"
        ]
        assert f"Window: {START} to {END} (the plot's saved window" in text and f"time={START}..{END}" in text


@pytest.mark.parametrize("mode", MODES)
async def test_a_default_picture_is_the_picture_of_the_saved_window(ws: Path, mode: str) -> None:
    async with servers(ws, mode) as (calc, state):
        await ok(state, "debrief_set_time", filename=LARGE, timeState={"start": START, "end": END, "current": START})
        default, default_png = await png(state, "debrief_render_plot", filename=LARGE)
        explicit, explicit_png = await png(state, "debrief_render_plot", filename=LARGE, time_start=START, time_end=END)
        assert default_png == explicit_png
        assert default["window"]["source"] == "plot" and explicit["window"]["source"] == "asked"
        assert default["span"] == explicit["span"] == [START, END]
        framed, _ = await png(state, "debrief_render_plot", filename=LARGE, fit="window")  # no times: the saved window
        assert framed["fit"] == "window" and framed["framed"]["tracks"] == ["f-1", "f-2", "f-3"]
        # measured from the plot with no times: the saved window too, said so, with the data's whole period
        series = await ok(
            calc,
            "run_tool",
            tool="range-bearing",
            plot={"filename": LARGE, "feature_ids": list(SHIPS)},
            parameters={"sample": "endpoints"},
        )
        assert {k: series["window"][k] for k in ("start", "end", "source")} == {
            "start": START,
            "end": END,
            "source": "plot",
        }
        assert series["window"]["data"] == ["2024-11-14T16:16:53.662Z", "2024-11-15T10:17:00Z"]
        rows = series["features"][0]["properties"]["series"]
        assert (rows["time"][0], rows["time"][-1]) == (START, END)


@pytest.mark.parametrize("mode", MODES)
async def test_times_printed_round_trip(ws: Path, mode: str) -> None:
    """VAN AMSTEL's first fix is stored at 16:16:53.661999 and printed 16:16:53.662Z; passed back
    as time_start it keeps that fix (no edge made a microsecond before it), through both servers."""
    async with servers(ws, mode) as (calc, state):
        listed = await ok(state, "debrief_get_features", filename=LARGE, ids=["f-2"])
        (summary,) = listed["features"]
        printed = summary["time_start"]
        assert printed == "2024-11-14T16:16:53.662Z"
        read = await whole_features(state, LARGE, ids=["f-2"], time_start=printed)
        stamps = read["f-2"]["properties"]["timestamps"]
        assert stamps[0] == "2024-11-14T16:16:53.661999Z" and len(stamps) == summary["point_count"]
        stats = await ok(
            calc, "run_tool", tool="track-stats", features=[REFS[0]], time_start=printed, time_end=summary["time_end"]
        )
        assert stats["features"][0]["properties"]["statistics"]["point_count"] == summary["point_count"]
        # a printed end as the tote's time: that very fix (it was refused 1 microsecond past the track)
        tote = await ok(calc, "run_tool", tool="tote", features=REFS, parameters={"time": summary["time_end"]})
        assert tote["features"][0]["properties"]["time"] == summary["time_end"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_least_range_at_the_windows_edge_is_not_called_a_cpa(ws: Path, mode: str) -> None:
    """The trial's case: VAN AMSTEL and LEOPOLD I from 16:17 to 18:17 are closest at 16:17:00, the
    window's start, opening from then on: the picture says so, and never "CPA"."""
    ref = Reference(ws / LARGE, "2024-11-14T16:17:00Z", "2024-11-14T18:17:00Z")
    async with servers(ws, mode) as (calc, _state):
        drawn, _ = await png(
            calc,
            "render_series",
            features=REFS,
            time_start="2024-11-14T16:17:00Z",
            time_end="2024-11-14T18:17:00Z",
            parameters={"distance_unit": "yd"},
        )
        cpa = drawn["cpa"]
        assert cpa["time"] == "2024-11-14T16:17:00Z" and cpa["edge"] == "start"
        assert cpa["label"].startswith("Closest") and "range opening" in cpa["label"] and "CPA" not in cpa["label"]
        assert cpa["range"] == pytest.approx(ref.range_yd(ref.start), abs=1.0)


def test_the_python_api_cuts_the_same_window(ws: Path) -> None:
    """A script's path (``debrief_calc.Workspace``, no MCP): the same cut, the same figures, the same
    window stated; a windowed copy's saved window is the default of its picture and its measures."""
    import debrief_calc as dc

    ref = Reference(ws / LARGE, START, END)
    api = dc.Workspace(ws)
    made = api.create_plot("two-hours.plot.json", features=REFS, time_start=START, time_end=END)
    assert made.window == {"start": START, "end": END, "source": "asked"}
    copied = {f["id"]: f for f in json.loads((ws / "two-hours.plot.json").read_text())["features"]}
    for fid in SHIPS:
        props = copied[fid]["properties"]
        assert_the_cut(ref, fid, [epoch(t) for t in props["timestamps"]], copied[fid]["geometry"]["coordinates"])
    stats = api.run_tool("track-stats", plot={"filename": "two-hours.plot.json"}, parameters={"distance_unit": "yd"})
    assert stats.window == {"start": START, "end": END, "source": "plot"}
    for result, fid in zip(stats.features, SHIPS, strict=True):
        assert result["properties"]["statistics"]["distance"] == pytest.approx(ref.distance_yd(fid), abs=1.0)
    default = api.render_plot(filename="two-hours.plot.json")
    asked = api.render_plot(filename="two-hours.plot.json", time_start=START, time_end=END)
    assert default.images[0].data == asked.images[0].data and default.span == [START, END]
    assert (default.window or {})["source"] == "plot" and (asked.window or {})["source"] == "asked"
    view = api.view_data(filename=LARGE, time_start=START, time_end=END)
    for f in (f for f in view.features or [] if f["id"] in SHIPS):
        assert_the_cut(ref, f["id"], f["t"], [list(p) for p in zip(f["lon"], f["lat"], strict=True)])
