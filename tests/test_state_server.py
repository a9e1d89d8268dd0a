"""debrief-state-mcp through the real protocol, in process, in both protocol eras, on real plots."""

from __future__ import annotations

import base64
import io
import json
import shutil
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from debrief_calc.plots.plotstate import stash_payload
from debrief_calc.state.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import MODES
from tests.conftest import call as call_tool

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent / "data" / "plots"
LARGE = "large-sample.plot.json"
SAMPLE = "sample.plot.json"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
TOOLS = {
    "debrief_list_plots",
    "debrief_view_data",
    "debrief_create_plot",
    "debrief_set_properties",
    "debrief_open_plot",
    "debrief_close_plot",
    "debrief_get_features",
    "debrief_get_selection",
    "debrief_set_selection",
    "debrief_get_time",
    "debrief_set_time",
    "debrief_get_viewport",
    "debrief_set_viewport",
    "debrief_zoom_to_selection",
    "debrief_apply_command",
    "debrief_render_plot",
    "debrief_undo",
    "generate_prompt",
    "store_llm_result",
}
READS = {
    "debrief_list_plots",
    "debrief_get_features",
    "debrief_get_selection",
    "debrief_get_time",
    "debrief_get_viewport",
    "debrief_render_plot",
    "debrief_view_data",
    "generate_prompt",
}
TIME = {"current": "2024-11-14T20:00:00Z", "start": "2024-11-14T16:16:53.661Z", "end": "2024-11-15T10:17:00.000Z"}


@pytest.fixture
def plots(workspace: Path) -> Path:
    """Real plots copied into a workspace whose path has a space and a non-ASCII letter."""
    for name in (LARGE, SAMPLE):
        shutil.copy(DATA / name, workspace / name)
    (workspace / "missions").mkdir()
    shutil.copy(DATA / SAMPLE, workspace / "missions" / "mission 1.plot.json")
    shutil.copy(DATA / SAMPLE, workspace / "missions" / "mission2.plot.json")
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, plots: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("debrief-state-mcp", plots, limits=Limits()))
    async with Client(server, mode=request.param) as c:
        yield c


async def call(c: Client, tool_name: str, /, **args: Any) -> tuple[bool, dict[str, Any]]:
    err, out = await call_tool(c, tool_name, **args)
    if err:
        assert isinstance(out["error"]["details"]["rpc_code"], int)
    return err, out


async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    err, out = await call(c, tool, **args)
    assert not err, out
    return out


async def fails(c: Client, tool: str, code: str, rpc: int | None = None, **args: Any) -> dict[str, Any]:
    err, out = await call(c, tool, **args)
    assert err, out
    assert out["error"]["code"] == code, out
    if rpc is not None:
        assert out["error"]["details"]["rpc_code"] == rpc
    return dict(out["error"])


def snapshot(ws: Path) -> dict[str, bytes]:
    files = [p for p in sorted(ws.rglob("*.plot.json")) if ".llmem" not in p.parts and p.is_file()]
    return {str(p.relative_to(ws)): p.read_bytes() for p in files}


def plot_json(ws: Path, name: str = LARGE) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((ws / name).read_bytes())
    return value


def feature(data: dict[str, Any], fid: str) -> dict[str, Any]:
    return next(f for f in data["features"] if str(f.get("id")) == fid)


def point(fid: str | None, lon: float = -4.0, lat: float = 36.0) -> dict[str, Any]:
    f: dict[str, Any] = {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [lon, lat]},
        "properties": {"dataType": "reference-point", "name": f"P {fid}"},
    }
    if fid is not None:
        f["id"] = fid
    return f


# ------------------------------------------------------------------ the surface


async def test_tools_are_listed_lean_with_honest_annotations(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert t.description and len(t.description) < 120
        a = t.annotations
        assert a is not None and a.open_world_hint is False
        assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        assert t.output_schema is not None
    assert {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint} == READS
    for name in ("debrief_apply_command", "debrief_undo", "debrief_set_time"):
        assert tools[name].annotations.destructive_hint is True  # type: ignore[union-attr]
    # a chat host asks the person before destructive tools: creating a plot never overwrites one
    assert tools["debrief_create_plot"].annotations.destructive_hint is False  # type: ignore[union-attr]
    size = sum(len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"))) for t in tools.values())
    assert size / len(tools) <= 700


async def test_guide_and_instructions(client: Client, plots: Path) -> None:
    assert client.instructions and client.instructions.count(". ") == 1
    text = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
    for tool in TOOLS - {"debrief_view_data"}:
        assert f"`{tool}`" in text
    assert "debrief_view_data" not in text  # the live view's own tool (MCP Apps visibility ["app"]): not the model's
    assert str(plots) in text and "MULTIPLE_PLOTS" in text and "SOURCE_CHANGED" in text


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError) as info:
        await client.call_tool("debrief_delete_everything", {})
    assert info.value.error.code == -32602


# ------------------------------------------------------------------ which plot


async def test_which_plot_rules(client: Client, plots: Path) -> None:
    listing = await ok(client, "debrief_list_plots")
    assert listing["open_plots"] == []
    assert set(listing["other_plots"]) == {LARGE, SAMPLE, "missions/mission 1.plot.json", "missions/mission2.plot.json"}
    error = await fails(client, "debrief_get_selection", "PLOT_NOT_FOUND", -32002)
    assert LARGE in error["details"]["plot_files"] and "debrief_open_plot" in error["message"]
    # an explicit filename works whether or not the plot is open
    assert (await ok(client, "debrief_get_selection", filename=SAMPLE))["filename"] == SAMPLE
    opened = await ok(client, "debrief_open_plot", filename=LARGE)
    assert opened["open_plots"] == [LARGE] and opened["revision"]
    assert (await ok(client, "debrief_get_time"))["filename"] == LARGE
    await ok(client, "debrief_open_plot", filename="missions/mission 1.plot.json")
    error = await fails(client, "debrief_get_selection", "MULTIPLE_PLOTS", -32001)
    assert error["details"]["available_plots"] == [
        {"filename": LARGE, "title": "large-sample"},
        {"filename": "missions/mission 1.plot.json", "title": "mission 1"},
    ]
    closed = await ok(client, "debrief_close_plot", filename="missions/mission 1.plot.json")
    assert closed["was_open"] is True and closed["open_plots"] == [LARGE]
    again = await ok(client, "debrief_close_plot", filename="missions/mission 1.plot.json")
    assert again["was_open"] is False
    listing = await ok(client, "debrief_list_plots")
    assert listing["open_plots"] == [{"filename": LARGE, "title": "large-sample"}]
    assert LARGE not in listing["other_plots"]
    await fails(client, "debrief_open_plot", "PLOT_NOT_FOUND", -32002, filename="nope.plot.json")


async def test_opening_a_second_plot_says_every_call_must_now_name_its_plot(client: Client, plots: Path) -> None:
    first = await ok(client, "debrief_open_plot", filename=LARGE)
    assert first["open_plots"] == [LARGE] and "open_note" not in first  # one open: filename may be left out
    created = await ok(client, "debrief_create_plot", filename="second.plot.json", features=[point("p1")])
    assert created["open_plots"] == [LARGE, "second.plot.json"]
    assert created["open_note"].startswith(f"2 plots are open now ({LARGE}, second.plot.json): pass filename")
    assert "MULTIPLE_PLOTS" in created["open_note"]
    again = await ok(client, "debrief_open_plot", filename=SAMPLE)
    assert again["open_note"].startswith("3 plots are open now")
    await fails(client, "debrief_get_time", "MULTIPLE_PLOTS", -32001)  # as the note said
    text = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
    assert "range between two tracks at `time` (default the plot's current time" in text


async def test_the_listing_names_the_rep_files_to_import(plots: Path) -> None:
    (plots / "missions" / "boat1.REP").write_bytes((DATA.parent / "rep" / "valid_boat1.rep").read_bytes())
    shutil.copy(DATA.parent / "rep" / "valid_boat2.rep", plots / "valid_boat2.rep")
    (plots / ".hidden").mkdir()
    (plots / ".hidden" / "x.rep").write_text("")
    (plots / "notes.txt").write_text("not a REP file")
    async with Client(build_server(ServerConfig("debrief-state-mcp", plots))) as client:
        listing = await ok(client, "debrief_list_plots")
    assert listing["rep_files"] == ["missions/boat1.REP", "valid_boat2.rep"] and listing["more_rep_files"] == 0


async def test_the_open_set_is_shared_by_server_instances(plots: Path) -> None:
    a = build_server(ServerConfig("debrief-state-mcp", plots))
    b = build_server(ServerConfig("debrief-state-mcp", plots))
    async with Client(a, mode="legacy") as ca, Client(b) as cb:
        await ok(ca, "debrief_open_plot", filename=SAMPLE)
        await ok(ca, "debrief_set_selection", selectedIds=["paris_city_002"])
        got = await ok(cb, "debrief_get_selection")
        assert got["filename"] == SAMPLE and got["selectedIds"] == ["paris_city_002"]


# ------------------------------------------------------------------ selection


async def test_selection(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    before = snapshot(plots)
    out = await ok(client, "debrief_set_selection", selectedIds=["f-1", "z-1", "f-1"])
    assert out["selectedIds"] == ["f-1", "z-1"] and out["count"] == 2
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == ["f-1", "z-1"]
    error = await fails(client, "debrief_set_selection", "FEATURE_NOT_FOUND", -32003, selectedIds=["f-2", "ghost", 7])
    assert error["details"]["missing_ids"] == ["ghost", "7"]
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == ["f-1", "z-1"]  # unchanged
    assert (await ok(client, "debrief_set_selection", selectedIds=[]))["selectedIds"] == []
    assert snapshot(plots) == before  # the selection lives in the store, not in the file


async def test_scenario_2_nothing_selected_changes_nothing(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    before = snapshot(plots)
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == []
    error = await fails(client, "debrief_zoom_to_selection", "VALIDATION_FAILED", -32602)
    assert "nothing is selected" in error["message"]
    err, out = await call(client, "generate_prompt", task="describe-selection")
    assert err and "status" not in out and out["success"] is False and out["error"]["code"] == "VALIDATION_FAILED"
    assert snapshot(plots) == before


async def test_scenario_3_several_selected_are_all_deleted(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    await ok(client, "debrief_set_selection", selectedIds=["z-1", "z-2", "f-3"])
    ids = (await ok(client, "debrief_get_selection"))["selectedIds"]
    out = await ok(client, "debrief_apply_command", command={"command": "deleteFeatures", "payload": {"ids": ids}})
    assert out["changed"] and out["deleted_ids"] == ids and out["message"] == "deleted 3 features"
    remaining = {str(f.get("id")) for f in plot_json(plots)["features"]}
    assert not remaining & set(ids) and len(remaining) == 14
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == []


async def test_scenario_4_several_plots_open_then_retry_with_filename(client: Client, plots: Path) -> None:
    m1, m2 = "missions/mission 1.plot.json", "missions/mission2.plot.json"
    await ok(client, "debrief_open_plot", filename=m1)
    await ok(client, "debrief_open_plot", filename=m2)
    await ok(client, "debrief_set_selection", filename=m1, selectedIds=["paris_city_002"])
    error = await fails(client, "debrief_get_selection", "MULTIPLE_PLOTS")
    names = [p["filename"] for p in error["details"]["available_plots"]]
    assert names == [m1, m2]
    sel = await ok(client, "debrief_get_selection", filename=names[0])
    await ok(
        client,
        "debrief_apply_command",
        filename=m1,
        command={"command": "deleteFeatures", "payload": sel["selectedIds"]},
    )
    assert "paris_city_002" not in {f["id"] for f in plot_json(plots, m1)["features"]}
    assert "paris_city_002" in {f["id"] for f in plot_json(plots, m2)["features"]}  # the other plot is untouched


async def test_scenario_5_plot_removed_or_corrupted_underneath(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=SAMPLE)
    original = (plots / SAMPLE).read_bytes()
    (plots / SAMPLE).write_text('{"type": "FeatureCollection", "features": [', encoding="utf-8")
    error = await fails(client, "debrief_get_selection", "PLOT_UNREADABLE", -32010)
    assert error["details"]["filename"] == SAMPLE and error["details"]["line"] == 1
    assert (await ok(client, "debrief_get_time", filename=LARGE))["timeState"] is not None  # still serving
    (plots / SAMPLE).write_bytes(original)
    assert (await ok(client, "debrief_get_selection"))["filename"] == SAMPLE  # recovers with the file
    (plots / SAMPLE).unlink()
    error = await fails(client, "debrief_get_selection", "PLOT_NOT_FOUND", -32002)
    assert error["details"]["closed"] == [SAMPLE] and "disappeared" in error["message"]
    assert (await ok(client, "debrief_list_plots"))["open_plots"] == []
    error = await fails(client, "debrief_get_features", "PLOT_NOT_FOUND", filename=SAMPLE)
    assert SAMPLE in error["message"] and LARGE in error["details"]["plot_files"]


async def test_corrupt_plot_beside_good_ones(client: Client, plots: Path) -> None:
    (plots / "broken.plot.json").write_bytes(b'{"type": "FeatureCollection", "features": [}\n')
    (plots / "list.plot.json").write_bytes(b"[1, 2]")
    listing = await ok(client, "debrief_list_plots")
    assert {"broken.plot.json", LARGE} <= set(listing["other_plots"])
    error = await fails(client, "debrief_open_plot", "PLOT_UNREADABLE", filename="broken.plot.json")
    assert "broken.plot.json" in error["message"] and "line 1" in error["message"]
    error = await fails(client, "debrief_get_features", "PLOT_UNREADABLE", filename="list.plot.json")
    assert "FeatureCollection" in error["message"]
    assert (await ok(client, "debrief_get_features", filename=LARGE))["total"] == 17


# ------------------------------------------------------------------ time and viewport


async def test_time_is_read_from_and_written_into_the_real_format(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    got = await ok(client, "debrief_get_time")
    assert got["timeState"] == {
        "current": "2024-11-14T16:16:53.661Z",
        "start": "2024-11-14T16:16:53.661Z",
        "end": "2024-11-15T10:17:00.000Z",
    }
    position = [f.get("id") for f in plot_json(plots)["features"]].index("debrief-time-metadata")
    out = await ok(client, "debrief_set_time", timeState=TIME)
    assert out["timeState"] == TIME and out["revision"] != got["revision"]
    data = plot_json(plots)
    meta = data["features"][position]
    assert meta == {
        "type": "Feature",
        "id": "debrief-time-metadata",
        "geometry": {"type": "Polygon", "coordinates": [[]]},
        "properties": {"dataType": "metadata", "metadataType": "time", **TIME},
    }
    assert (await ok(client, "debrief_get_time"))["timeState"] == TIME
    before = snapshot(plots)
    bad = {**TIME, "current": "2024-11-16T00:00:00Z"}
    error = await fails(client, "debrief_set_time", "VALIDATION_FAILED", -32602, timeState=bad)
    assert "start ≤ current ≤ end" in error["message"]
    error = await fails(client, "debrief_set_time", "VALIDATION_FAILED", timeState={**TIME, "start": "yesterday"})
    assert error["details"]["field"] == "timeState.start"
    await fails(client, "debrief_set_time", "VALIDATION_FAILED", timeState={"current": "soon"})
    await fails(client, "debrief_set_time", "VALIDATION_FAILED", timeState={})
    assert snapshot(plots) == before
    none = await ok(client, "debrief_get_time", filename=SAMPLE)
    assert none["timeState"] is None and "debrief_set_time" in none["message"]


async def test_viewport_and_zoom_to_selection(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    got = await ok(client, "debrief_get_viewport")
    assert got["viewportState"]["bounds"] == pytest.approx([-5.0723195, 35.2227476, -2.2598195, 36.6289976])
    out = await ok(client, "debrief_set_viewport", viewportState={"bounds": [-6, 35, -2, 37]})
    ring = feature(plot_json(plots), "debrief-viewport-metadata")["geometry"]["coordinates"][0]
    assert ring == [[-6, 35], [-2, 35], [-2, 37], [-6, 37], [-6, 35]]
    assert (await ok(client, "debrief_get_viewport"))["viewportState"] == {"bounds": [-6, 35, -2, 37]}
    before = snapshot(plots)
    await fails(client, "debrief_set_viewport", "VALIDATION_FAILED", viewportState={"bounds": [0, 50, 1, 40]})
    await fails(client, "debrief_set_viewport", "VALIDATION_FAILED", viewportState={"bounds": [0, 1]})
    await fails(client, "debrief_set_viewport", "VALIDATION_FAILED", viewportState={"bounds": [-200, 1, 2, 3]})
    assert snapshot(plots) == before
    await ok(client, "debrief_set_selection", selectedIds=["z-1"])
    zoom = await ok(client, "debrief_zoom_to_selection", padding=0.5, expected_revision=out["revision"])
    w, s, e, n = zoom["viewportState"]["bounds"]
    assert zoom["selectedIds"] == ["z-1"]
    assert w < -3.782 < -3.382 < e and s < 35.8 < 36.2 < n
    assert (e - w) == pytest.approx((-3.382 + 3.782) * 2, abs=1e-3)


async def test_lossless_rewrite_of_large_sample(client: Client, plots: Path) -> None:
    original = plot_json(plots)
    raw = (plots / LARGE).read_bytes()
    rev = (await ok(client, "debrief_get_time", filename=LARGE))["revision"]
    # a change to nothing (the same time state) does not write at all
    same = await ok(
        client, "debrief_set_time", filename=LARGE, timeState=feature(original, "debrief-time-metadata")["properties"]
    )
    assert same["revision"] == rev and (plots / LARGE).read_bytes() == raw
    await ok(client, "debrief_set_viewport", filename=LARGE, viewportState={"bounds": [-5.5, 35.0, -2.0, 36.9]})
    after = plot_json(plots)
    assert list(after) == list(original) and after["bbox"] == original["bbox"]
    assert len(after["features"]) == len(original["features"])
    for old, new in zip(original["features"], after["features"], strict=True):
        if old.get("id") == "debrief-viewport-metadata":
            assert new["properties"] == old["properties"] and list(new) == list(old)
            continue
        assert json.dumps(new) == json.dumps(old)  # same value, same key order, same number types
    assert feature(after, "debrief-time-metadata")["geometry"] == {"type": "Polygon", "coordinates": [[]]}


# ------------------------------------------------------------------ features


async def test_features_summary_full_filters_and_pages(client: Client, plots: Path) -> None:
    out = await ok(client, "debrief_get_features", filename=LARGE)
    assert out["total"] == out["count"] == 17 and out["next_cursor"] is None
    track = next(f for f in out["features"] if f["id"] == "f-1")
    assert track == {
        "id": "f-1",
        "kind": "track",
        "name": "VAN GALEN3",
        "point_count": 781,
        "time_start": track["time_start"],
        "time_end": track["time_end"],
        "bounds": track["bounds"],
        "ref": "debrief-state:plots/large-sample.plot.json#f-1",  # where to take it from
    }
    assert all(f["ref"] == f"debrief-state:plots/{LARGE}#{f['id']}" for f in out["features"])
    assert "coordinates" not in json.dumps(out)
    kinds = await ok(client, "debrief_get_features", filename=LARGE, kinds=["zone", "point"])
    assert {f["kind"] for f in kinds["features"]} == {"zone", "point"} and kinds["total"] == 9
    seen: list[str] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"filename": LARGE, "limit": 5} | ({"cursor": cursor} if cursor else {})
        page = await ok(client, "debrief_get_features", **args)
        seen += [str(f["id"]) for f in page["features"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [str(f["id"]) for f in plot_json(plots)["features"]]
    # A feature larger than an answer comes in parts of its points, never left out.
    full = await ok(client, "debrief_get_features", filename=LARGE, detail="full", ids=["f-1", "z-1", "p-2"])
    assert full["features"][0]["id"] == "f-1" and full["features"][0]["part"]["points"][0] == 0
    assert "part.points" in full["note"] and full["next_cursor"]
    error = await fails(
        client, "debrief_get_features", "FEATURE_NOT_FOUND", -32003, filename=LARGE, ids=["z-1", "nope"]
    )
    assert error["details"]["missing_ids"] == ["nope"]
    await fails(client, "debrief_get_features", "VALIDATION_FAILED", filename=LARGE, kinds=["submarine"])
    page = await ok(client, "debrief_get_features", filename=LARGE, limit=2)
    await ok(client, "debrief_set_selection", filename=LARGE, selectedIds=["f-1"])  # not a file change
    await ok(client, "debrief_get_features", filename=LARGE, limit=2, cursor=page["next_cursor"])
    await ok(client, "debrief_set_time", filename=LARGE, timeState=TIME)
    await fails(client, "debrief_get_features", "CONFLICT", filename=LARGE, limit=2, cursor=page["next_cursor"])
    await fails(client, "debrief_get_features", "VALIDATION_FAILED", filename=LARGE, cursor="garbage!")
    await fails(
        client, "debrief_get_features", "VALIDATION_FAILED", filename=LARGE, detail="full", cursor=page["next_cursor"]
    )


# ------------------------------------------------------------------ commands


async def test_every_command_type_and_alias(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    composite = [
        {"command": "addFeatures", "payload": [point("new-1"), point(None, lon=-3.0)]},
        {"command": "updateFeatures", "payload": [point("p-2", lon=-4.5)]},
        {"command": "deleteFeatures", "payload": {"ids": ["z-4"]}},
        {"command": "setViewport", "payload": {"bounds": [-7, 35, -1, 37]}},
        {"command": "updateViewport", "payload": {"bounds": [-7.5, 35, -1, 37]}},
        {"command": "setTimeState", "payload": TIME},
        {"command": "setSelection", "payload": {"selectedIds": ["new-1"]}},
        {"command": "highlightFeatures", "payload": {"featureIds": ["new-1", "f-2"]}},
        {"command": "showText", "payload": "Deleted SIR 1"},
        {"command": "showData", "payload": {"shape": [2], "axes": ["t"], "values": [1, 2]}},
        {"command": "showImage", "payload": {"mediaType": "image/png", "data": PNG_1PX, "title": "dot"}},
        {"command": "logMessage", "payload": {"message": "done", "level": "warn"}},
        {"command": "composite", "payload": [{"command": "showText", "payload": "nested"}]},
    ]
    result = await client.call_tool("debrief_apply_command", {"command": composite})
    assert not result.is_error, result.structured_content
    out = result.structured_content
    assert out is not None
    assert out["added_ids"][0] == "new-1" and len(out["added_ids"]) == 2
    assert out["updated_ids"] == ["p-2"] and out["deleted_ids"] == ["z-4"]
    assert out["selectedIds"] == ["new-1", "f-2"]
    types_ = [d["type"] for d in out["display"]]
    assert types_ == ["text", "data", "image", "log", "text"]
    assert out["display"][2] == {"type": "image", "mediaType": "image/png", "title": "dot", "image": 0}
    images = [b for b in result.content if isinstance(b, types.ImageContent)]
    assert len(images) == 1 and images[0].data == PNG_1PX
    data = plot_json(plots)
    assert feature(data, "p-2")["geometry"]["coordinates"] == [-4.5, 36.0]
    assert feature(data, "debrief-viewport-metadata")["geometry"]["coordinates"][0][0] == [-7.5, 35]
    assert feature(data, "debrief-time-metadata")["properties"]["current"] == TIME["current"]
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == ["new-1", "f-2"]
    replaced = await ok(
        client,
        "debrief_apply_command",
        command={
            "command": "setFeatureCollection",
            "payload": {"type": "FeatureCollection", "features": [point("only")]},
        },
    )
    ids = [f["id"] for f in plot_json(plots)["features"]]
    assert ids == ["only", "debrief-time-metadata", "debrief-viewport-metadata"]
    assert replaced["selectedIds"] == []


BAD_COMMANDS: list[tuple[Any, str]] = [
    ({"command": "explode", "payload": {}}, "INVALID_COMMAND"),
    ({"payload": []}, "INVALID_COMMAND"),
    ({"command": "addFeatures"}, "INVALID_COMMAND"),
    ({"command": "addFeatures", "payload": [{"type": "Blob"}]}, "INVALID_COMMAND"),
    ({"command": "addFeatures", "payload": [point("f-1")]}, "INVALID_COMMAND"),
    ({"command": "setTimeState", "payload": {"current": "x", "start": "y", "end": "z"}}, "VALIDATION_FAILED"),
    ({"command": "showImage", "payload": {"mediaType": "image/png", "data": "bm90IGEgcG5n"}}, "INVALID_COMMAND"),
    # partly failing: the first steps are fine, the last one is not, so none of them happens
    (
        [
            {"command": "addFeatures", "payload": [point("fine")]},
            {"command": "setSelection", "payload": ["fine"]},
            {"command": "deleteFeatures", "payload": ["f-1", "ghost"]},
        ],
        "FEATURE_NOT_FOUND",
    ),
    ({"command": "addFeatures", "payload": {"ref": "debrief-calc:runs/none/0"}}, "VALIDATION_FAILED"),
    ({"ref": "somewhere-else"}, "VALIDATION_FAILED"),
]


@pytest.mark.parametrize(("command", "code"), BAD_COMMANDS)
async def test_bad_commands_change_nothing(client: Client, plots: Path, command: Any, code: str) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    await ok(client, "debrief_set_selection", selectedIds=["f-1"])
    before = snapshot(plots)
    error = await fails(client, "debrief_apply_command", code, command=command)
    assert error["details"]["rpc_code"] in (-32602, -32003)
    assert snapshot(plots) == before
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == ["f-1"]


async def test_composite_depth_is_bounded(client: Client, plots: Path) -> None:
    command: Any = {"command": "showText", "payload": "deep"}
    for _ in range(11):
        command = {"command": "composite", "payload": [command]}
    error = await fails(client, "debrief_apply_command", "INVALID_COMMAND", filename=SAMPLE, command=command)
    assert "10 deep" in error["message"]


async def test_conflict_on_expected_revision(client: Client, plots: Path) -> None:
    rev = (await ok(client, "debrief_get_time", filename=LARGE))["revision"]
    first = await ok(client, "debrief_set_time", filename=LARGE, timeState=TIME, expected_revision=rev)
    before = snapshot(plots)
    error = await fails(
        client,
        "debrief_apply_command",
        "CONFLICT",
        -32009,
        filename=LARGE,
        command={"command": "deleteFeatures", "payload": ["f-1"]},
        expected_revision=rev,
    )
    assert error["details"]["revision"] == first["revision"] and error["details"]["expected_revision"] == rev
    assert snapshot(plots) == before
    await ok(
        client,
        "debrief_apply_command",
        filename=LARGE,
        command={"command": "deleteFeatures", "payload": ["f-1"]},
        expected_revision=first["revision"],
    )


async def test_stored_result_reference_is_resolved(client: Client, plots: Path) -> None:
    store = ArtifactStore(plots / ".llmem", plots)
    ref = stash_payload(store, "run-7", 0, [point("from-calc")])  # as debrief-calc hands one out
    out = await ok(client, "debrief_apply_command", filename=SAMPLE, command={"command": "addFeatures", "payload": ref})
    assert out["added_ids"] == ["from-calc"]
    whole = stash_payload(store, "run-7", 1, {"command": "deleteFeatures", "payload": ["from-calc"]})
    out = await ok(client, "debrief_apply_command", filename=SAMPLE, command=whole)
    assert out["deleted_ids"] == ["from-calc"]


# ------------------------------------------------------------------ undo


async def test_undo_restores_the_file_and_the_selection(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    original = (plots / LARGE).read_bytes()
    await ok(client, "debrief_set_selection", selectedIds=["z-1", "f-2"])
    await ok(client, "debrief_set_time", timeState=TIME)
    await ok(client, "debrief_apply_command", command={"command": "addFeatures", "payload": [point("added")]})
    await ok(client, "debrief_apply_command", command={"command": "deleteFeatures", "payload": ["z-1", "bf-1"]})
    assert (await ok(client, "debrief_get_selection"))["selectedIds"] == ["f-2"]
    undone = await ok(client, "debrief_undo")
    assert undone["undone"] == "deleted 2 features" and undone["selectedIds"] == ["z-1", "f-2"]
    assert feature(plot_json(plots), "bf-1") == feature(json.loads(original), "bf-1")
    assert [f["id"] for f in plot_json(plots)["features"]][-1] == "added"
    assert (await ok(client, "debrief_undo"))["undone"] == "added 1 feature"
    assert (await ok(client, "debrief_undo"))["undone"].startswith("time set to")
    last = await ok(client, "debrief_undo")
    assert last["selectedIds"] == [] and last["remaining"] == 0
    assert (plots / LARGE).read_bytes() == original  # byte for byte
    await fails(client, "debrief_undo", "VALIDATION_FAILED")


async def test_undo_of_a_whole_collection_restores_top_level_members(client: Client, plots: Path) -> None:
    original = (plots / LARGE).read_bytes()
    replacement = {"type": "FeatureCollection", "bbox": [0, 0, 1, 1], "properties": {"name": "Other"}, "features": []}
    out = await ok(
        client,
        "debrief_apply_command",
        filename=LARGE,
        command={"command": "setFeatureCollection", "payload": replacement},
    )
    data = plot_json(plots)
    assert data["bbox"] == [0, 0, 1, 1] and data["properties"] == {"name": "Other"} and len(data["features"]) == 2
    assert (await ok(client, "debrief_list_plots"))["other_plots"]  # titles still readable
    undone = await ok(client, "debrief_undo", filename=LARGE)
    assert undone["revision"] != out["revision"]
    assert (plots / LARGE).read_bytes() == original


async def test_undo_refuses_when_the_plot_changed_since(client: Client, plots: Path) -> None:
    await ok(client, "debrief_set_time", filename=LARGE, timeState=TIME)
    data = plot_json(plots)
    data["features"] = data["features"][1:]  # another program edits the file
    (plots / LARGE).write_text(json.dumps(data), encoding="utf-8")
    before = snapshot(plots)
    error = await fails(client, "debrief_undo", "CONFLICT", -32009, filename=LARGE)
    assert "changed since" in error["message"]
    assert snapshot(plots) == before


async def test_undo_history_is_bounded(client: Client, plots: Path) -> None:
    for i in range(25):
        await ok(
            client,
            "debrief_apply_command",
            filename=SAMPLE,
            command={"command": "addFeatures", "payload": [point(f"n{i}")]},
        )
    undone = 0
    while not (await call(client, "debrief_undo", filename=SAMPLE))[0]:
        undone += 1
    assert undone == 20
    assert len(plot_json(plots, SAMPLE)["features"]) == 7 + 5


# ------------------------------------------------------------------ render


async def test_render_returns_png_image_content(client: Client, plots: Path) -> None:
    from PIL import Image

    await ok(client, "debrief_set_selection", filename=LARGE, selectedIds=["f-1"])
    result = await client.call_tool("debrief_render_plot", {"filename": LARGE, "width": 640, "height": 480})
    assert not result.is_error
    summary = result.structured_content
    assert summary is not None and summary["mediaType"] == "image/png" and summary["selectedIds"] == ["f-1"]
    assert summary["time"] == "2024-11-14T16:16:53.661Z"
    images = [b for b in result.content if isinstance(b, types.ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    png = base64.b64decode(images[0].data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) == summary["bytes"]
    # The image takes the shape of the area shown, within the maxima asked for.
    assert Image.open(io.BytesIO(png)).size == (summary["width"], summary["height"])
    assert summary["width"] == 640 and summary["height"] <= 480 and summary["fit"] == "viewport"
    await fails(client, "debrief_render_plot", "VALIDATION_FAILED", filename=LARGE, time="teatime")
    await fails(client, "debrief_render_plot", "VALIDATION_FAILED", filename=LARGE, width=10)


# ------------------------------------------------------------------ resources and notifications


async def test_resources_are_read(client: Client, plots: Path) -> None:
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert templates == {f"plot://{{+filename}}/{a}" for a in ("features", "selection", "time", "viewport")}
    assert "plots://list" in {str(r.uri) for r in (await client.list_resources()).resources}
    await ok(client, "debrief_open_plot", filename="missions/mission 1.plot.json")

    async def read(uri: str) -> dict[str, Any]:
        result = await client.read_resource(uri)
        content = result.contents[0]
        assert isinstance(content, types.TextResourceContents) and content.mime_type == "application/json"
        value: dict[str, Any] = json.loads(content.text)
        return value

    assert (await read("plots://list"))["open_plots"][0]["filename"] == "missions/mission 1.plot.json"
    assert (await read(f"plot://{LARGE}/time"))["timeState"]["end"] == "2024-11-15T10:17:00.000Z"
    assert (await read(f"plot://{LARGE}/features"))["total"] == 17
    assert (await read(f"plot://{LARGE}/viewport"))["viewportState"]["bounds"][0] == pytest.approx(-5.0723195)
    assert (await read("plot://missions/mission%201.plot.json/selection"))["selectedIds"] == []
    with pytest.raises(MCPError) as info:
        await read("plot://nope.plot.json/selection")
    assert info.value.error.code == -32002
    with pytest.raises(MCPError):
        await read("plot://..%2F..%2Fetc%2Fpasswd/time")


async def test_legacy_subscribers_are_notified_of_writes(plots: Path) -> None:
    seen: list[str] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            if len(seen) >= 3:
                changed.set()

    server = build_server(ServerConfig("debrief-state-mcp", plots))
    async with Client(server, mode="legacy", message_handler=on_message) as c:
        assert c.server_capabilities.resources is not None and c.server_capabilities.resources.subscribe
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for uri in (f"plot://{LARGE}/selection", f"plot://{LARGE}/time", "plots://list"):
                await c.subscribe_resource(uri)
            with pytest.raises(MCPError):
                await c.subscribe_resource("plot://x.plot.json/weather")
        await ok(c, "debrief_set_selection", filename=LARGE, selectedIds=["f-1"])
        await ok(
            c, "debrief_set_viewport", filename=LARGE, viewportState={"bounds": [-6, 35, -2, 37]}
        )  # not subscribed
        await ok(c, "debrief_set_time", filename=LARGE, timeState=TIME)
        await ok(c, "debrief_open_plot", filename=LARGE)
        with anyio.fail_after(10):
            await changed.wait()
    assert seen == [f"plot://{LARGE}/selection", f"plot://{LARGE}/time", "plots://list"]


async def test_listen_streams_get_resource_updates(plots: Path) -> None:
    server = build_server(ServerConfig("debrief-state-mcp", plots))
    uri = "plot://missions/mission%201.plot.json/selection"
    async with Client(server) as c, c.listen(resource_subscriptions=[uri]) as sub:
        await ok(c, "debrief_set_selection", filename="missions/mission 1.plot.json", selectedIds=["london_city_001"])
        with anyio.fail_after(10):
            async for event in sub:
                assert getattr(event, "uri", None) == uri
                break


# ------------------------------------------------------------------ the callback pair


async def test_callback_tasks_store_and_annotate(client: Client, plots: Path) -> None:
    await ok(client, "debrief_open_plot", filename=LARGE)
    await ok(client, "debrief_set_selection", selectedIds=["f-1", "z-1"])
    raw_coordinate = str(plot_json(plots)["features"][0]["geometry"]["coordinates"][5][0])
    for task in ("summarize-plot", "describe-selection", "narrate-timeline"):
        err, out = await call(client, "generate_prompt", task=task)
        assert not err and out["status"] == "prompt_ready" and out["callbackTool"] == "store_llm_result"
        prompt = out["promptForHostLLM"]
        assert "VAN GALEN3" in prompt and raw_coordinate not in prompt and len(prompt) < 16_000
        assert out["callbackArgs"]["target"] == LARGE
    assert "SAP 1-1" in prompt and "2024-11-14" in prompt
    _, out = await call(client, "generate_prompt", task="summarize-plot")
    text = "# Summary\nThree ships off Gibraltar."
    err, stored = await call(
        client, "store_llm_result", **out["callbackArgs"], result=text, model="m", add_annotation=True
    )
    assert not err and stored["status"] == "success" and stored["data"]["annotation"]["added"] is True
    artifact = plots / ".llmem" / "artifacts" / "debrief-state" / LARGE / "summarize-plot.json"
    doc = json.loads(artifact.read_text(encoding="utf-8"))
    assert doc["content"] == text and doc["provenance"]["model"] == "m"
    note = feature(plot_json(plots), stored["data"]["annotation"]["id"])
    assert note["properties"]["text"] == text and note["properties"]["dataType"] == "annotation"
    # about the plot as a whole: no geometry (a point would be drawn like a contact), at the plot's time
    assert note["geometry"] is None
    assert note["properties"]["time"] == feature(plot_json(plots), "debrief-time-metadata")["properties"]["current"]
    # the ticket is used; an answer about an older plot is refused
    err, again = await call(client, "store_llm_result", **out["callbackArgs"], result=text)
    assert err and again["error"]["code"] == "TICKET_UNKNOWN"
    _, out = await call(client, "generate_prompt", task="narrate-timeline")
    await ok(client, "debrief_set_time", timeState=TIME)
    err, changed = await call(client, "store_llm_result", **out["callbackArgs"], result="story")
    assert err and changed["error"]["code"] == "SOURCE_CHANGED" and "generate_prompt" in changed["nextAction"]
    _, out = await call(client, "generate_prompt", task="describe-selection")
    await ok(client, "debrief_set_selection", selectedIds=["f-2"])
    err, changed = await call(client, "store_llm_result", **out["callbackArgs"], result="about f-1")
    assert err and changed["error"]["code"] == "SOURCE_CHANGED"


async def test_callback_errors_use_the_envelope(client: Client) -> None:
    err, out = await call(client, "store_llm_result", ticket="abc", target=LARGE, task="summarize-plot", result="x")
    assert err and "status" not in out and out["error"]["code"] == "TICKET_UNKNOWN"
    assert out["error"]["details"]["rpc_code"] == -32602 and out["nextAction"]
    _, prompt = await call(client, "generate_prompt", task="summarize-plot", target=LARGE)
    err, out = await call(client, "store_llm_result", **prompt["callbackArgs"], result="   ")
    assert err and out["error"]["code"] == "RESULT_INVALID" and out["callbackArgs"] == prompt["callbackArgs"]


# ------------------------------------------------------------------ hostile and malformed input

HOSTILE = [
    "../outside.plot.json",
    "/etc/passwd",
    "sample.plot.json\x00",
    "C:\\x.plot.json",
    "\\\\srv\\share\\a.plot.json",
    "notes.txt",
    ".llmem/x.plot.json",
    "missions/../../x.plot.json",
    "",
    "escape.plot.json",  # a symlink to a plot outside the workspace
]
FILENAME_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("debrief_open_plot", {}),
    ("debrief_close_plot", {}),
    ("debrief_get_features", {}),
    ("debrief_get_selection", {}),
    ("debrief_set_selection", {"selectedIds": []}),
    ("debrief_get_time", {}),
    ("debrief_set_time", {"timeState": TIME}),
    ("debrief_get_viewport", {}),
    ("debrief_set_viewport", {"viewportState": {"bounds": [0, 0, 1, 1]}}),
    ("debrief_zoom_to_selection", {}),
    ("debrief_apply_command", {"command": {"command": "deleteFeatures", "payload": ["x"]}}),
    ("debrief_render_plot", {}),
    ("debrief_undo", {}),
]


@pytest.mark.parametrize("name", HOSTILE)
async def test_hostile_filenames_for_every_tool_change_nothing(
    client: Client, plots: Path, tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside.plot.json"
    shutil.copy(DATA / SAMPLE, outside)
    (plots / "escape.plot.json").symlink_to(outside)
    before = snapshot(plots) | {"outside": outside.read_bytes()}
    for tool, extra in FILENAME_TOOLS:
        await fails(client, tool, "INVALID_FILENAME", -32602, filename=name, **extra)
    for tool, extra in [
        ("generate_prompt", {"task": "summarize-plot"}),
        ("store_llm_result", {"ticket": "abc", "task": "summarize-plot", "result": "x"}),
    ]:
        err, out = await call(client, tool, target=name, **extra)
        assert err and out["error"]["code"] == "INVALID_FILENAME", (tool, out)
    assert snapshot(plots) | {"outside": outside.read_bytes()} == before
    assert not (plots / ".llmem" / "docs" / "debrief-state" / "open.json").exists()


BAD_ARGS: list[tuple[str, dict[str, Any], str]] = [
    ("debrief_open_plot", {}, "filename"),
    ("debrief_set_selection", {"filename": LARGE}, "selectedIds"),
    ("debrief_set_selection", {"filename": LARGE, "selectedIds": "f-1"}, "selectedIds"),
    ("debrief_set_selection", {"filename": LARGE, "selectedIds": [None]}, "selectedIds"),
    ("debrief_set_time", {"filename": LARGE, "timeState": "now"}, "timeState"),
    ("debrief_set_viewport", {"filename": LARGE, "viewportState": {"bounds": ["w", 1, 2, 3]}}, "viewportState"),
    ("debrief_zoom_to_selection", {"filename": LARGE, "padding": -1}, "padding"),
    ("debrief_get_features", {"filename": LARGE, "detail": "everything"}, "detail"),
    ("debrief_get_features", {"filename": LARGE, "limit": 0}, "limit"),
    ("debrief_apply_command", {"filename": LARGE, "command": "deleteFeatures f-1"}, "command"),
    ("debrief_apply_command", {"filename": LARGE}, "command"),
    ("debrief_render_plot", {"filename": LARGE, "height": 100_000}, "height"),
    ("debrief_undo", {"filename": 5}, "filename"),
    ("generate_prompt", {"task": "poem", "target": LARGE}, "task"),
    ("store_llm_result", {"target": LARGE, "task": "summarize-plot", "result": "x"}, "ticket"),
]


@pytest.mark.parametrize(("tool", "args", "field"), BAD_ARGS)
async def test_malformed_arguments_get_clear_errors_and_change_nothing(
    client: Client, plots: Path, tool: str, args: dict[str, Any], field: str
) -> None:
    before = snapshot(plots)
    err, out = await call(client, tool, **args)
    assert err and out["error"]["code"] == "VALIDATION_FAILED" and field in json.dumps(out["error"]), out
    assert out["error"]["details"]["rpc_code"] == -32602
    assert snapshot(plots) == before
    assert not (await call(client, "debrief_list_plots"))[0]  # still serving


async def test_oversized_payload_is_refused(client: Client, plots: Path) -> None:
    before = snapshot(plots)
    big = [point(f"b{i}") | {"properties": {"blob": "x" * 1000}} for i in range(6_000)]
    error = await fails(
        client,
        "debrief_apply_command",
        "PAYLOAD_TOO_LARGE",
        filename=LARGE,
        command={"command": "addFeatures", "payload": big},
    )
    assert "reference" in error["message"]
    assert snapshot(plots) == before
