"""debrief-calc-mcp through the real protocol, in process, in both eras, on real Debrief data."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client
from mcp.shared.exceptions import MCPError

from debrief_calc.calc.server import build_server
from debrief_calc.formats.rep import parse_rep
from debrief_calc.plots import plotstate
from llmem.core.config import ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call

pytestmark = pytest.mark.anyio

CALC_TOOLS = {
    "list_tools",
    "describe_tool",
    "run_tool",
    "get_result",
    "render_series",
    "generate_prompt",
    "store_llm_result",
}
ANALYSIS = {
    "track-stats",
    "track-legs",
    "range-bearing",
    "tote",
    "closest-approach",
    "close-quarters",
    "zone-transits",
    "zone-overlaps",
    "speed-filter",
    "area-summary",
    "resample-track",
    "delete-features",
    "import-rep",
    "import-dpf",
    "bearing-residuals",
    "tma-solve",
}


@pytest.fixture
def calc_ws(workspace: Path) -> Path:
    for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep", "invalid_bad_coordinates.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    shutil.copy(DATA / "plots" / "large-sample.plot.json", workspace / "large-sample.plot.json")
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, calc_ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", calc_ws)), mode=request.param) as c:
        yield c


def boats() -> list[dict[str, Any]]:
    out = []
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        out += parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    return out


def large_sample_tracks() -> list[dict[str, Any]]:
    doc = json.loads((DATA / "plots" / "large-sample.plot.json").read_text(encoding="utf-8"))
    return [f for f in doc["features"] if f["properties"].get("dataType") == "track"]


async def test_tools_annotations_and_lean_listing(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == CALC_TOOLS
    for t in tools.values():
        assert t.annotations and t.annotations.open_world_hint is False and t.description
    assert tools["run_tool"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["get_result"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["store_llm_result"].annotations.read_only_hint is False  # type: ignore[union-attr]
    size = sum(len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"))) for t in tools.values())
    assert size / len(tools) <= 700
    with pytest.raises(MCPError) as info:
        await client.call_tool("no-such-tool", {})
    assert info.value.error.code == -32602


async def test_list_and_describe(client: Client) -> None:
    _, out = await call(client, "list_tools")
    assert {t["name"] for t in out["tools"]} == ANALYSIS
    assert out["success"] is True  # as every other answer of both servers
    stats = next(t for t in out["tools"] if t["name"] == "track-stats")
    assert stats["description"].startswith("One track or several (one result per track):")
    assert (stats["context_type"], stats["also_accepts"]) == ("single", ["multi"])
    _, multi = await call(client, "list_tools", context_type="multi", kinds=["track"])
    assert "track-stats" in {t["name"] for t in multi["tools"]}
    _, single = await call(client, "list_tools", context_type="single", kinds=["track"])
    assert "track-stats" in {t["name"] for t in single["tools"]}
    assert "closest-approach" not in {t["name"] for t in single["tools"]}
    _, zones = await call(client, "list_tools", kinds=["zone"])
    assert {"zone-transits", "area-summary"} <= {t["name"] for t in zones["tools"]}
    for name in ANALYSIS:
        err, d = await call(client, "describe_tool", name=name)
        assert not err and d["name"] == name and d["success"] is True
        for p in d["parameters"]:
            assert p["type"] and p["description"], (name, p)
    err, out = await call(client, "describe_tool", name="warp-drive")
    assert err and out["success"] is False and out["error"]["code"] == "TOOL_NOT_FOUND"


async def test_track_stats_on_real_plot_by_reference(client: Client) -> None:
    track = large_sample_tracks()[0]
    err, out = await call(
        client,
        "run_tool",
        tool="track-stats",
        plot={"filename": "large-sample.plot.json", "feature_ids": [track["id"]]},
        parameters={"distance_unit": "km"},
    )
    assert not err and out["success"] is True
    result = out["features"][0]
    assert result["properties"]["kind"] == "analysis-result"
    prov = result["properties"]["provenance"]
    assert prov["tool"] == "track-stats" and prov["sources"] == [{"id": str(track["id"]), "kind": "track"}]
    coords = track["geometry"]["coordinates"]
    expected = sum(Geodesic.WGS84.Inverse(a[1], a[0], b[1], b[0])["s12"] for a, b in itertools.pairwise(coords))
    stats = result["properties"]["statistics"]
    assert stats["distance"] == pytest.approx(expected / 1000, abs=0.001)


async def test_closest_approach_of_the_two_real_ships(client: Client) -> None:
    err, out = await call(
        client, "run_tool", tool="closest-approach", features=boats(), parameters={"distance_unit": "m"}
    )
    assert not err, out
    cpa = out["features"][0]["properties"]
    text = json.dumps(cpa)
    assert "range" in text and "time" in text


async def test_import_rep_through_the_server(client: Client) -> None:
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": "valid_narrative.rep"})
    assert not err and out["success"] is True
    assert out["commands"][0]["command"] == "addFeatures"
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": "invalid_bad_coordinates.rep"})
    assert not err
    assert {e["line"] for e in out["report"]["errors"]} == {2, 3}
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": "../outside.rep"})
    assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE"


async def test_large_results_come_back_as_references(client: Client, calc_ws: Path) -> None:
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": "valid_boat1.rep"})
    assert not err and "stored" in out
    ref = out["commands"][0]["payload"]
    assert ref == {"ref": out["stored"]["ref"]}  # one reference for the one stored thing
    store = ArtifactStore(calc_ws / ".llmem", calc_ws)
    payload = plotstate.resolve_ref(store, ref)
    assert payload["type"] == "FeatureCollection"
    assert len(payload["features"][0]["geometry"]["coordinates"]) == 402
    assert len(json.dumps(out)) < 20_000


async def test_selection_reference(client: Client, calc_ws: Path) -> None:
    store = ArtifactStore(calc_ws / ".llmem", calc_ws)
    err, out = await call(
        client, "run_tool", tool="delete-features", plot={"filename": "large-sample.plot.json", "selection": True}
    )
    assert err and out["error"]["code"] == "INVALID_CONTEXT" and "nothing is selected" in out["error"]["message"]
    ids = [str(t["id"]) for t in large_sample_tracks()[:2]]
    plotstate.update_selection(store, "large-sample.plot.json", ids)
    err, out = await call(
        client, "run_tool", tool="delete-features", plot={"filename": "large-sample.plot.json", "selection": True}
    )
    assert not err and out["commands"] == [{"command": "deleteFeatures", "payload": {"ids": ids}}]


ERROR_CASES: list[tuple[dict[str, Any], str]] = [
    ({"tool": "warp-drive", "features": []}, "TOOL_NOT_FOUND"),
    ({"tool": "track-stats", "features": []}, "INVALID_CONTEXT"),
    (
        {"tool": "track-stats", "plot": {"filename": "large-sample.plot.json", "feature_ids": ["nope"]}},
        "FEATURE_NOT_FOUND",
    ),
    ({"tool": "track-stats", "plot": {"filename": "missing.plot.json"}}, "PLOT_NOT_FOUND"),
    ({"tool": "track-stats", "plot": {"filename": "../x.plot.json"}}, "INVALID_FILENAME"),
    ({"tool": "track-stats", "plot": {"filename": "/etc/passwd"}}, "INVALID_FILENAME"),
    (
        {
            "tool": "track-stats",
            "features": [
                {
                    "type": "Feature",
                    "id": "z",
                    "properties": {"kind": "zone"},
                    "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]},
                }
            ],
        },
        "KIND_MISMATCH",
    ),
    (
        {
            "tool": "track-stats",
            "features": [
                {
                    "type": "Feature",
                    "id": "t",
                    "properties": {"kind": "track"},
                    "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]},
                }
            ],
        },
        "VALIDATION_FAILED",
    ),
    (
        {"tool": "track-stats", "features": large_sample_tracks()[:1], "parameters": {"distance_unit": "furlong"}},
        "VALIDATION_FAILED",
    ),
    ({"tool": "track-stats", "features": large_sample_tracks()[:1], "parameters": {"bogus": 1}}, "VALIDATION_FAILED"),
    (
        {"tool": "speed-filter", "features": large_sample_tracks()[:1], "parameters": {"threshold_kn": -3}},
        "VALIDATION_FAILED",
    ),
    (
        {"tool": "resample-track", "features": large_sample_tracks()[:1], "parameters": {"interval_s": "often"}},
        "VALIDATION_FAILED",
    ),
    ({"tool": "import-rep", "parameters": {}}, "VALIDATION_FAILED"),
    (
        {"tool": "track-stats", "features": large_sample_tracks()[:1], "plot": {"filename": "large-sample.plot.json"}},
        "VALIDATION_FAILED",
    ),
    ({"tool": "track-stats", "features": "not a list"}, "VALIDATION_FAILED"),
    ({"tool": "area-summary", "bounds": [1, 2, 3]}, "VALIDATION_FAILED"),
]


@pytest.mark.parametrize(("args", "code"), ERROR_CASES)
async def test_contract_error_codes(client: Client, calc_ws: Path, args: dict[str, Any], code: str) -> None:
    before = {p: p.read_bytes() for p in calc_ws.glob("*.*")}
    err, out = await call(client, "run_tool", **args)
    assert err, out
    assert out["success"] is False and out["error"]["code"] == code, out
    assert "duration_ms" in out
    assert {p: p.read_bytes() for p in calc_ws.glob("*.*")} == before
    err, _ = await call(client, "list_tools")
    assert not err


async def test_payload_too_large(client: Client) -> None:
    track = large_sample_tracks()[0]
    err, out = await call(client, "run_tool", tool="track-stats", features=[track] * 120)
    assert err and out["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert "plot" in out["error"]["message"] or "reference" in out["error"]["message"]


async def test_narrate_and_summarize_results(client: Client, calc_ws: Path) -> None:
    tracks = large_sample_tracks()
    ids = []
    for t in tracks[:2]:
        _, out = await call(client, "run_tool", tool="track-stats", features=[t])
        ids.append(out["features"][0]["id"])
    err, ready = await call(client, "generate_prompt", target=ids[0], task="narrate-result")
    assert not err and ready["status"] == "prompt_ready" and "track-stats" in ready["promptForHostLLM"]
    assert "coordinates" not in ready["promptForHostLLM"]
    err, ok = await call(client, "store_llm_result", **ready["callbackArgs"], result="The first track ran 152 nm.")
    assert not err and ok["status"] == "success"
    assert ok["data"]["ref"] == f"debrief-calc:results/{ids[0]}/narrative" and "get_result" in ok["nextAction"]
    doc = json.loads(
        (calc_ws / ".llmem" / "artifacts" / "debrief-calc" / "results" / ids[0] / "narrative.json").read_text()
    )
    assert doc["content"] == "The first track ran 152 nm."
    err, ready = await call(client, "generate_prompt", target=ids, task="summarize-analysis")
    assert not err
    store = ArtifactStore(calc_ws / ".llmem", calc_ws)
    changed = plotstate.load_result(store, ids[1])
    changed["properties"]["statistics"]["distance"] = 0
    plotstate.store_result(store, changed, "track-stats")
    err, bad = await call(client, "store_llm_result", **ready["callbackArgs"], result="Summary")
    assert err and bad["error"]["code"] == "SOURCE_CHANGED"
    err, bad = await call(client, "generate_prompt", target="result-unknown", task="narrate-result")
    assert err and bad["error"]["code"] == "FEATURE_NOT_FOUND"
    err, bad = await call(client, "generate_prompt", target=ids, task="narrate-result")
    assert err and bad["success"] is False and "status" not in bad  # the shape every tool here answers
    assert set(bad) == {"success", "error", "nextAction"}


async def test_zone_transits_on_the_real_plot_honour_the_zone_period_and_say_how_to_keep_them(
    client: Client,
) -> None:
    err, out = await call(
        client,
        "run_tool",
        tool="zone-transits",
        plot={"filename": "large-sample.plot.json", "feature_ids": ["f-1", "f-2", "z-1"]},
    )
    assert not err, out
    crossing, missing = out["features"]
    assert crossing["properties"]["zone_active"] == ["2024-11-14T19:10:00Z", "2024-11-15T04:10:00Z"]
    assert crossing["properties"]["transit_count"] == 1 and missing["properties"]["transit_count"] == 0
    # only the result with something to draw is offered for the plot
    assert f'"debrief-calc:results/{crossing["id"]}"' in out["keep"]
    assert f"results/{missing['id']}" not in out["keep"]  # it says why it is left out: nothing to draw
    assert out["keep"].endswith(f"1 result(s) with no geometry (nothing to draw) left out: {missing['id']}")
    err, none = await call(
        client,
        "run_tool",
        tool="zone-transits",
        plot={"filename": "large-sample.plot.json", "feature_ids": ["f-2", "z-1"]},
    )
    assert not err and "keep" not in none  # nothing drawable: no hint


async def test_a_plot_reference_with_a_time_window(client: Client, calc_ws: Path) -> None:
    """ "NELSON to COLLINGWOOD every 10 minutes between 09:00 and 10:00": the plot's tracks cut to
    the window, samples on the round ten minutes, and the results say which window they saw."""
    (calc_ws / "boats.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": boats()}))
    window = {"time_start": "1995-12-12T09:00:00Z", "time_end": "1995-12-12T10:00:00Z"}
    err, out = await call(
        client,
        "run_tool",
        tool="range-bearing",
        plot={"filename": "boats.plot.json", **window},
        parameters={"sample": "interval", "interval_s": 600},
    )
    assert not err, out
    result = out["features"][0]["properties"]
    assert result["series"]["time"] == [f"1995-12-12T09:{m}0:00Z" for m in range(6)] + ["1995-12-12T10:00:00Z"]
    assert (result["overlap_start"], result["overlap_end"]) == (window["time_start"], window["time_end"])
    assert result["provenance"]["window"] == {
        "start": window["time_start"],
        "end": window["time_end"],
        "source": "asked",
    }
    err, stored = await call(client, "get_result", ref=out["features"][0]["id"])
    assert not err and stored["features"][0]["properties"]["provenance"]["window"] == result["provenance"]["window"]
    # an open side; without a window no window is said
    err, out = await call(
        client,
        "run_tool",
        tool="track-stats",
        plot={"filename": "boats.plot.json", "feature_ids": ["rep-nelson"], "time_end": "1995-12-12T06:00:00Z"},
    )
    assert not err and out["features"][0]["properties"]["statistics"]["end"] == "1995-12-12T06:00:00Z"
    assert out["features"][0]["properties"]["provenance"]["window"] == {
        "start": None,
        "end": "1995-12-12T06:00:00Z",
        "source": "asked",
    }
    # without a window (and none saved in the plot) the whole data is read, and the answer says so
    err, out = await call(client, "run_tool", tool="track-stats", plot={"filename": "boats.plot.json"})
    assert not err and out["features"][0]["properties"]["provenance"]["window"]["source"] == "data"
    assert out["window"] == {"start": "1995-12-12T05:00:00Z", "end": "1995-12-12T11:45:00Z", "source": "data"}

    # the real plot: SAP 1-2 (time only) is active in a window the next morning, SAP 1-1 is over by then
    err, out = await call(
        client,
        "run_tool",
        tool="zone-transits",
        plot={
            "filename": "large-sample.plot.json",
            "feature_ids": ["f-3", "z-2", "z-1"],
            "time_start": "2024-11-15T08:00:00Z",
            "time_end": "2024-11-15T10:00:00Z",
        },
    )
    assert not err, out
    (crossing,) = out["features"]
    assert crossing["properties"]["zone_id"] == "z-2" and crossing["properties"]["transit_count"] == 1
    assert out["warnings"] == [
        "1 feature(s) with nothing in the window 2024-11-15T08:00:00Z to 2024-11-15T10:00:00Z left out: z-1"
    ]


@pytest.mark.parametrize(
    ("window", "code", "field"),
    [
        ({"time_start": "tomorrow"}, "VALIDATION_FAILED", "plot.time_start"),
        (
            {"time_start": "1995-12-12T10:00:00Z", "time_end": "1995-12-12T09:00:00Z"},
            "VALIDATION_FAILED",
            "plot.time_end",
        ),
        ({"time_start": "2030-01-01T00:00:00Z"}, "INVALID_CONTEXT", "plot.time_start"),
    ],
)
async def test_a_bad_time_window_is_named(
    client: Client, calc_ws: Path, window: dict[str, str], code: str, field: str
) -> None:
    (calc_ws / "boats.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": boats()}))
    err, out = await call(client, "run_tool", tool="track-stats", plot={"filename": "boats.plot.json", **window})
    assert err and out["error"]["code"] == code and out["error"]["details"]["field"] == field, out


def test_old_stashed_runs_are_pruned(calc_ws: Path) -> None:
    import os
    import time

    store = ArtifactStore(calc_ws / ".llmem", calc_ws)
    old = plotstate.stash_payload(store, "old-run", 0, {"features": []})
    old_dir = store.artifact_file(plotstate.CALC_NS, "runs/old-run", "payload").parent
    week_ago = time.time() - plotstate.RUNS_TTL_S - 60
    os.utime(old_dir, (week_ago, week_ago))
    fresh = plotstate.stash_payload(store, "new-run", 0, {"features": [1]})
    assert plotstate.resolve_ref(store, fresh) == {"features": [1]}
    with pytest.raises(Exception, match="points to nothing"):
        plotstate.resolve_ref(store, old)


# -- the report table: legacy Debrief's copy of a track against the primary ------------------------


async def _rb_refs(client: Client, boats_in: list[dict[str, Any]]) -> tuple[dict[str, Any], str, list[str]]:
    err, out = await call(client, "run_tool", tool="range-bearing", features=boats_in, parameters={"interval_s": 600})
    assert not err, out
    return out, out["stored"]["ref"] if "stored" in out else "", [f["id"] for f in out["features"]]


async def test_get_result_gives_range_bearing_as_the_legacy_report_table(client: Client) -> None:
    import csv as csv_module
    import io

    nelson, collingwood = boats()
    out, _, (rid,) = await _rb_refs(client, [nelson, collingwood])
    series = out["features"][0]["properties"]["series"]  # nm, as range-bearing gave it
    err, page = await call(client, "get_result", ref=f"debrief-calc:results/{rid}", format="csv")
    assert not err, page
    assert page["kind"] == "table" and page["format"] == "csv" and page["next_cursor"] is None
    rows = list(csv_module.reader(io.StringIO(page["text"])))
    assert rows[0] == ["Time", "Depth", "Speed", "Course", "Range (yd)", "Bearing", "Brg Rate"]
    assert len(rows) - 1 == len(series["time"]) == 40
    assert "Range yd" in page["note"] and "Brg Rate deg/min" in page["note"]
    geod = Geodesic.WGS84
    for k, row in enumerate(rows[1:]):
        assert row[0] == series["time"][k]
        assert float(row[1]) == 0.0  # COLLINGWOOD's logged depth
        assert float(row[2]) == pytest.approx(series["secondary_speed"][k], abs=0.005)
        assert float(row[3]) == pytest.approx(series["secondary_course"][k], abs=0.05)
        assert float(row[4]) == pytest.approx(series["range"][k] * 1852 / 0.9144, abs=0.05)
        assert float(row[5]) == pytest.approx(series["bearing"][k], abs=0.05)
        assert float(row[6]) == pytest.approx(series["bearing_rate"][k], abs=0.005)
    # 10:30: the 4,033 yd on 112.7 deg, by GeographicLib from the fixes at that time
    (row,) = [r for r in rows if r[0] == "1995-12-12T10:30:00Z"]
    fix_n = next(
        c
        for c, t in zip(nelson["geometry"]["coordinates"], nelson["properties"]["timestamps"], strict=True)
        if t.startswith("1995-12-12T10:30:00")
    )
    fix_c = next(
        c
        for c, t in zip(collingwood["geometry"]["coordinates"], collingwood["properties"]["timestamps"], strict=True)
        if t.startswith("1995-12-12T10:30:00")
    )
    inv = geod.Inverse(fix_n[1], fix_n[0], fix_c[1], fix_c[0])
    assert float(row[4]) == pytest.approx(inv["s12"] / 0.9144, abs=0.05) and round(float(row[4])) == 4033
    assert float(row[5]) == pytest.approx(inv["azi1"] % 360, abs=0.05)
    # TSV and Markdown: the same cells
    err, tsv = await call(client, "get_result", ref=rid, format="tsv")
    assert not err and [line.split("\t") for line in tsv["text"].splitlines()] == rows
    err, md = await call(client, "get_result", ref=rid, format="markdown")
    assert not err and "| Time | Depth | Speed | Course | Range (yd) | Bearing | Brg Rate |" in md["text"]
    assert f"| {' | '.join(rows[1])} |" in md["text"]


def test_the_report_table_pages_between_rows_and_refuses_what_it_cannot_make(calc_ws: Path) -> None:
    from debrief_calc.calc.results import read_stored
    from debrief_calc.calc.service import CalcService
    from debrief_calc.errors import ValidationFailed
    from debrief_calc.formats.export import series_table
    from llmem.core.config import Limits

    svc = CalcService(ArtifactStore(calc_ws / ".llmem", calc_ws), Limits())
    nelson, collingwood = boats()
    answer = svc.run("range-bearing", [nelson, collingwood], None, None, {"interval_s": 60})
    rid = answer["features"][0]["id"]
    text, cursor = "", None
    while True:  # a small budget: pages end on a row's end and join up to the whole table
        page = read_stored(svc.store, rid, cursor, budget=2_000, fmt="csv")
        assert page["text"].endswith("\n")
        text += page["text"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert "next_cursor" in page["note"]
    whole = read_stored(svc.store, rid, None, budget=10**7, fmt="csv")["text"]
    assert text == whole and len(whole.splitlines()) == 1 + 399  # the header and every minute 05:03-11:41
    # several secondaries: CSV makes one table (it names the results' refs), Markdown all of them
    run = svc.run(
        "range-bearing", [nelson, collingwood, {**collingwood, "id": "copy"}], None, None, {"interval_s": 600}
    )
    with pytest.raises(ValidationFailed) as many:
        series_table(run["features"], "csv", "the run")
    assert many.value.details["rule"] == "one-result" and len(many.value.details["refs"]) == 2
    assert series_table(run["features"], "markdown", "the run").count("| Time |") == 2
    # a result with no series, text, and a format there is not: named, nothing changed
    stats = svc.run("track-stats", [nelson], None, None, None)
    with pytest.raises(ValidationFailed) as none:
        read_stored(svc.store, stats["features"][0]["id"], None, budget=10_000, fmt="csv")
    assert none.value.details == {"field": "format", "rule": "applies-to"}
    with pytest.raises(ValidationFailed) as fmt:
        read_stored(svc.store, rid, None, budget=10_000, fmt="xlsx")
    assert fmt.value.details == {"field": "format", "rule": "choices", "allowed": ["csv", "tsv", "markdown"]}
