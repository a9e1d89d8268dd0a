"""The plot-state tools as a model drives them for an analyst: making a plot, its time window,
changing properties, finding every command and its payload, errors in one shape."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from debrief_calc.plots.cmdcheck import ALIASES, COMMANDS, PAYLOAD_SHAPES
from debrief_calc.state.server import build_server
from debrief_calc.tracks.times import parse_iso
from llmem.core.config import Limits, ServerConfig
from tests.conftest import DATA, MODES
from tests.conftest import call as call_tool

pytestmark = pytest.mark.anyio

LARGE = "large-sample.plot.json"


@pytest.fixture
def plots(workspace: Path) -> Path:
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, plots: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("debrief-state-mcp", plots, limits=Limits()))
    async with Client(server, mode=request.param) as c:
        yield c


async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    err, out = await call_tool(c, tool, **args)
    assert not err, out
    assert out["success"] is True
    return out


async def fails(c: Client, tool: str, code: str, **args: Any) -> dict[str, Any]:
    err, out = await call_tool(c, tool, **args)
    assert err, out
    assert out["success"] is False and out["error"]["code"] == code, out
    assert out["nextAction"]
    return out


def plot_json(ws: Path, name: str = LARGE) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((ws / name).read_bytes())
    return value


def feature(data: dict[str, Any], fid: str) -> dict[str, Any]:
    return next(f for f in data["features"] if f.get("id") == fid)


def timed_track(fid: str, hour: int = 8) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": [[-5.0, 50.0], [-4.9, 50.1], [-4.8, 50.2]]},
        "properties": {
            "dataType": "track",
            "name": fid.upper(),
            "timestamps": [
                f"2025-03-14T{hour:02d}:00:00Z",
                f"2025-03-14T{hour:02d}:30:00Z",
                f"2025-03-14T{hour + 1:02d}:00:00Z",
            ],
        },
    }


# -- discoverable ------------------------------------------------------------------------------


async def test_every_command_type_and_alias_is_in_the_schema_and_every_payload_in_the_guide(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = json.dumps(tools["debrief_apply_command"].input_schema)
    for name in (*COMMANDS, *ALIASES):
        assert f'"{name}"' in schema
    guide = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
    for name, shape in PAYLOAD_SHAPES.items():
        assert f"`{name}`: {shape}" in guide
    assert "import-rep" in guide and "debrief_create_plot" in guide
    assert "MAX_STEPS" not in guide and "never coordinates" not in guide
    # tools/list stays lean: at most 700 characters a tool on average
    listed = (await client.list_tools()).tools
    size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]))
    assert size <= 700 * len(listed), size


async def test_a_bad_payload_answers_the_shape_it_needs(client: Client, plots: Path) -> None:
    before = (plots / LARGE).read_bytes()
    out = await fails(
        client,
        "debrief_apply_command",
        "INVALID_COMMAND",
        filename=LARGE,
        command={"command": "deleteFeatures", "payload": {"x": 1}},
    )
    assert out["error"]["details"]["expected"] == PAYLOAD_SHAPES["deleteFeatures"]
    out = await fails(
        client, "debrief_apply_command", "INVALID_COMMAND", filename=LARGE, command={"command": "nope", "payload": 1}
    )
    assert set(out["error"]["details"]["payloads"]) == set(COMMANDS)
    assert (plots / LARGE).read_bytes() == before


# -- properties ---------------------------------------------------------------------------------


async def test_rename_and_recolour_is_one_undoable_call(client: Client, plots: Path) -> None:
    zone = feature(plot_json(plots), "z-4")
    assert zone["properties"]["name"] == "SIR 1"
    out = await ok(
        client,
        "debrief_set_properties",
        filename=LARGE,
        ids=["z-4"],
        properties={"name": "SIR one", "stroke": "#808080", "fill": "#808080"},
    )
    assert out["changed"] is True and out["updated_ids"] == ["z-4"]
    after = feature(plot_json(plots), "z-4")
    assert after["geometry"] == zone["geometry"]
    assert after["properties"] == {**zone["properties"], "name": "SIR one", "stroke": "#808080", "fill": "#808080"}
    assert list(after["properties"])[: len(zone["properties"])] == list(zone["properties"])  # key order kept
    again = await ok(client, "debrief_set_properties", filename=LARGE, ids=["z-4"], properties={"name": "SIR one"})
    assert again["changed"] is False and again["revision"] == out["revision"]
    await ok(client, "debrief_undo", filename=LARGE)
    assert feature(plot_json(plots), "z-4") == zone


async def test_null_deletes_a_property_and_bad_calls_change_nothing(client: Client, plots: Path) -> None:
    await ok(client, "debrief_set_properties", filename=LARGE, ids=["z-4"], properties={"fill-opacity": None})
    assert "fill-opacity" not in feature(plot_json(plots), "z-4")["properties"]
    before = (plots / LARGE).read_bytes()
    out = await fails(
        client,
        "debrief_set_properties",
        "FEATURE_NOT_FOUND",
        filename=LARGE,
        ids=["z-4", "nope"],
        properties={"name": "x"},
    )
    assert out["error"]["details"]["missing_ids"] == ["nope"]
    await fails(client, "debrief_set_properties", "VALIDATION_FAILED", filename=LARGE, ids=["z-4"], properties={})
    await fails(client, "debrief_set_properties", "VALIDATION_FAILED", filename=LARGE, ids=[], properties={"name": "x"})
    assert (plots / LARGE).read_bytes() == before


async def test_a_properties_only_update_is_refused_and_says_what_to_use(client: Client, plots: Path) -> None:
    before = (plots / LARGE).read_bytes()
    command = {
        "command": "updateFeatures",
        "payload": [{"type": "Feature", "id": "z-4", "properties": {"name": "SIR one"}}],
    }
    out = await fails(client, "debrief_apply_command", "VALIDATION_FAILED", filename=LARGE, command=command)
    assert out["error"]["details"]["field"] == "command.payload[0].geometry"
    assert "debrief_set_properties" in out["error"]["message"]
    assert (plots / LARGE).read_bytes() == before


# -- time -----------------------------------------------------------------------------------------


async def test_current_alone_moves_the_time_inside_the_saved_window(client: Client, plots: Path) -> None:
    saved = (await ok(client, "debrief_get_time", filename=LARGE))["timeState"]
    out = await ok(client, "debrief_set_time", filename=LARGE, timeState={"current": "2024-11-14T23:00:00Z"})
    assert out["timeState"] == {**saved, "current": "2024-11-14T23:00:00Z"}
    await fails(
        client, "debrief_set_time", "VALIDATION_FAILED", filename=LARGE, timeState={"current": "2030-01-01T00:00:00Z"}
    )
    await fails(client, "debrief_set_time", "VALIDATION_FAILED", filename=LARGE, timeState={})
    narrowed = await ok(client, "debrief_set_time", filename=LARGE, timeState={"start": "2024-11-15T00:00:00Z"})
    assert narrowed["timeState"]["start"] == "2024-11-15T00:00:00Z"
    assert narrowed["timeState"]["current"] == "2024-11-15T00:00:00Z"  # kept inside the new window


async def test_a_plot_without_a_window_answers_its_features_period(client: Client, plots: Path) -> None:
    data = plot_json(plots)
    data["features"] = [f for f in data["features"] if f["id"] != "debrief-time-metadata"]
    (plots / "untimed.plot.json").write_text(json.dumps(data), encoding="utf-8")
    out = await ok(client, "debrief_get_time", filename="untimed.plot.json")
    assert out["derived"] is True
    assert out["timeState"] == {
        "current": "2024-11-15T10:17:00Z",  # at the end, as a new plot's: every track solid
        "start": "2024-11-14T16:16:53.662Z",
        "end": "2024-11-15T10:17:00Z",
    }
    assert "no saved time window" in out["message"]
    moved = await ok(
        client, "debrief_set_time", filename="untimed.plot.json", timeState={"current": "2024-11-14T23:00:00Z"}
    )
    assert moved["timeState"] == {**out["timeState"], "current": "2024-11-14T23:00:00Z"}
    assert (await ok(client, "debrief_get_time", filename="untimed.plot.json"))["derived"] is False


# -- errors in one shape ---------------------------------------------------------------------------


async def test_callback_tools_answer_errors_like_every_other_tool(client: Client) -> None:
    out = await fails(client, "generate_prompt", "PLOT_NOT_FOUND", task="summarize-plot", target="nope.plot.json")
    assert "status" not in out and set(out) == {"success", "error", "nextAction"}  # one shape for every tool
    out = await fails(
        client, "store_llm_result", "TICKET_UNKNOWN", ticket="0" * 32, target=LARGE, task="summarize-plot", result="x"
    )
    prompt = await ok(client, "generate_prompt", task="summarize-plot", target=LARGE)
    assert prompt["status"] == "prompt_ready"


async def test_no_plot_at_all_says_how_to_make_one(workspace: Path) -> None:
    server = build_server(ServerConfig("debrief-state-mcp", workspace, limits=Limits()))
    async with Client(server) as c:
        out = await fails(c, "debrief_get_features", "PLOT_NOT_FOUND")
        assert "debrief_create_plot" in out["error"]["message"] and "import-rep" in out["error"]["message"]
        assert "debrief_create_plot" in out["nextAction"]
        out = await fails(c, "debrief_get_time", "PLOT_NOT_FOUND", filename="none.plot.json")
        assert "debrief_create_plot" in out["nextAction"]


# -- a new plot -----------------------------------------------------------------------------------


async def test_create_plot_with_features_opens_it_and_fits_its_window(client: Client, plots: Path) -> None:
    from debrief_calc.plots.plotstate import stash_payload
    from llmem.core.store import ArtifactStore

    store = ArtifactStore(plots / ".llmem", plots)
    ref = stash_payload(store, "run1", 0, [timed_track("a", 8)])
    out = await ok(
        client,
        "debrief_create_plot",
        filename="exercises/new one.plot.json",
        title="Exercise ALPHA",
        features=[ref, timed_track("b", 9)],
    )
    assert out["added_ids"] == ["a", "b"]
    assert out["timeState"] == {
        "current": "2025-03-14T10:00:00Z",  # a new plot's current time is its end: every track drawn solid
        "start": "2025-03-14T08:00:00Z",
        "end": "2025-03-14T10:00:00Z",
    }
    assert out["viewportState"]["bounds"][0] < -5.0
    assert "exercises/new one.plot.json" in out["open_plots"]
    data = plot_json(plots, "exercises/new one.plot.json")
    assert data["type"] == "FeatureCollection" and data["properties"]["name"] == "Exercise ALPHA"
    kinds = [(f.get("properties") or {}).get("metadataType") for f in data["features"]]
    assert kinds == [None, None, "time", "viewport"]
    listed = await ok(client, "debrief_list_plots")
    assert {"filename": "exercises/new one.plot.json", "title": "Exercise ALPHA"} in listed["open_plots"]
    features = await ok(client, "debrief_get_features", filename="exercises/new one.plot.json")
    assert [f["id"] for f in features["features"]] == ["a", "b", "debrief-time-metadata", "debrief-viewport-metadata"]


async def test_create_plot_empty_then_tracks_give_it_their_period(client: Client, plots: Path) -> None:
    out = await ok(client, "debrief_create_plot", filename="empty.plot.json")
    assert out["timeState"] is None and out["title"] == "empty"
    assert plot_json(plots, "empty.plot.json")["features"] == []
    added = await ok(
        client,
        "debrief_apply_command",
        filename="empty.plot.json",
        command={"command": "addFeatures", "payload": [timed_track("a", 8)]},
    )
    assert "time window set" in added["message"]
    state = await ok(client, "debrief_get_time", filename="empty.plot.json")
    assert state["derived"] is False and state["timeState"]["start"] == "2025-03-14T08:00:00Z"


async def test_create_plot_refuses_an_existing_file_and_bad_input_changing_nothing(client: Client, plots: Path) -> None:
    before = (plots / LARGE).read_bytes()
    out = await fails(client, "debrief_create_plot", "PLOT_EXISTS", filename=LARGE, features=[timed_track("a")])
    assert out["error"]["details"]["rpc_code"] == -32011
    assert (plots / LARGE).read_bytes() == before
    await fails(client, "debrief_create_plot", "INVALID_FILENAME", filename="../out.plot.json")
    await fails(client, "debrief_create_plot", "INVALID_FILENAME", filename="notes.json")
    await fails(
        client, "debrief_create_plot", "INVALID_COMMAND", filename="bad.plot.json", features=[{"type": "Point"}]
    )
    await fails(
        client,
        "debrief_create_plot",
        "VALIDATION_FAILED",
        filename="bad.plot.json",
        features=[{"ref": "debrief-calc:runs/nope/0"}],
    )
    assert not (plots / "bad.plot.json").exists()
    assert sorted(p.name for p in plots.iterdir() if p.name != ".llmem") == [LARGE]


# -- reading a whole plot ------------------------------------------------------------------------


async def read_all(c: Client, **args: Any) -> list[dict[str, Any]]:
    """Every page of debrief_get_features, each answer within the cap (checked by ``call``)."""
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(500):
        page = await ok(c, "debrief_get_features", **args, **({"cursor": cursor} if cursor else {}))
        items += page["features"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items
    raise AssertionError("no end of pages")


def joined(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from debrief_calc.tracks.paging import join_parts

    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    for item in items:
        if "part" in item:
            run.append(item)
            if item["part"]["points"][1] == item["part"]["of"]:
                out.append(join_parts(run))
                run = []
        else:
            out.append(item)
    assert not run
    return out


async def test_every_feature_of_the_large_sample_is_read_whole_in_pages(client: Client, plots: Path) -> None:
    items = await read_all(client, filename=LARGE, detail="full")
    assert all(i["ref"] == f"debrief-state:plots/{LARGE}#{i['id']}" for i in items)  # every part names its feature
    assert [{k: v for k, v in f.items() if k != "ref"} for f in joined(items)] == plot_json(plots)["features"]
    tracks = [i for i in items if i["id"] == "f-3"]
    assert len(tracks) > 1 and tracks[0]["part"]["of"] == 1081
    assert set(tracks[0]["part"]["arrays"]) == {"timestamps", "courses", "speeds"}


async def test_a_time_window_cuts_tracks_and_keeps_what_is_active(client: Client, plots: Path) -> None:
    window = {"time_start": "2024-11-14T23:00:00Z", "time_end": "2024-11-14T23:30:00Z"}
    summaries = await read_all(client, filename=LARGE, **window)
    by_id = {s["id"]: s for s in summaries}
    # a fix interpolated at each edge, as every path cuts a track: it runs exactly the window
    assert (by_id["f-1"]["time_start"], by_id["f-1"]["time_end"]) == (window["time_start"], window["time_end"])
    assert 0 < by_id["f-1"]["point_count"] < 781
    assert "z-2" in by_id  # a zone with a time alone (18:10) is active from then on
    assert "z-3" in by_id  # no time: always shown
    early = {
        s["id"]
        for s in await read_all(
            client, filename=LARGE, time_start="2024-11-14T16:30:00Z", time_end="2024-11-14T17:00:00Z"
        )
    }
    assert {"bf-1", "z-1", "z-2", "p-2"}.isdisjoint(early) and {"z-3", "f-2", "f-3"} <= early  # not active yet
    full = joined(await read_all(client, filename=LARGE, detail="full", ids=["f-1"], **window))
    stamps = full[0]["properties"]["timestamps"]
    assert len(stamps) == len(full[0]["geometry"]["coordinates"]) == by_id["f-1"]["point_count"]
    assert (stamps[0], stamps[-1]) == (window["time_start"], window["time_end"])
    assert all(parse_iso(window["time_start"]) <= parse_iso(s) <= parse_iso(window["time_end"]) for s in stamps)
    await fails(client, "debrief_get_features", "VALIDATION_FAILED", filename=LARGE, time_start="teatime")
    await fails(
        client,
        "debrief_get_features",
        "VALIDATION_FAILED",
        filename=LARGE,
        time_start="2024-11-15T00:00:00Z",
        time_end="2024-11-14T00:00:00Z",
    )


# -- a narrative that can tell the analyses ---------------------------------------------------


async def test_plot_prompts_carry_the_analyses_of_its_features_and_the_note_has_no_geometry(
    client: Client, plots: Path
) -> None:
    from debrief_calc.calc.service import CalcService
    from llmem.core.store import ArtifactStore

    calc = CalcService(ArtifactStore(plots / ".llmem", plots), Limits())
    cpa = calc.run(
        "closest-approach", None, {"filename": LARGE, "feature_ids": ["f-2", "f-3"]}, None, {"distance_unit": "nm"}
    )
    assert cpa["success"], cpa
    other = [timed_track("elsewhere")]  # a result about features this plot does not hold is left out
    assert calc.run("track-stats", other, None, None, None)["success"]
    prompt = await ok(client, "generate_prompt", task="narrate-timeline", target=LARGE)
    text = prompt["promptForHostLLM"]
    assert "Analyses of these features by debrief-calc" in text
    assert "closest-approach" in text and str(cpa["features"][0]["properties"]["range"])[:5] in text
    assert "ELSEWHERE" not in text
    assert "Features without times" in text and "SIR 1" in text  # untimed zones are part of the story
    assert "metadata" not in text.split("Kinds: ", 1)[1].splitlines()[0]
    stored = await ok(
        client,
        "store_llm_result",
        **prompt["callbackArgs"],
        result="VAN AMSTEL and LEOPOLD I closed to …",
        add_annotation=True,
    )
    note = feature(plot_json(plots), stored["data"]["annotation"]["id"])
    assert note["geometry"] is None and note["properties"]["time"]
    assert "debrief_get_features" in stored["nextAction"]
    moved = await ok(client, "debrief_set_time", filename=LARGE, timeState={"current": "2024-11-14T23:00:00Z"})
    assert "derived" not in moved and "message" not in moved  # only get_time has something to say there


async def test_zoom_to_given_ids_leaves_the_selection_alone(client: Client, plots: Path) -> None:
    await ok(client, "debrief_set_selection", filename=LARGE, selectedIds=["p-3"])
    out = await ok(client, "debrief_zoom_to_selection", filename=LARGE, ids=["f-2", "z-4"], padding=0.1)
    assert out["ids"] == ["f-2", "z-4"] and "selectedIds" not in out
    w, _s, _e, n = out["viewportState"]["bounds"]
    zone = feature(plot_json(plots), "z-4")["geometry"]["coordinates"][0]
    assert w < min(p[0] for p in zone) and n > max(p[1] for p in zone)
    assert (await ok(client, "debrief_get_selection", filename=LARGE))["selectedIds"] == ["p-3"]
    await fails(client, "debrief_zoom_to_selection", "FEATURE_NOT_FOUND", filename=LARGE, ids=["nope"])


async def test_narrative_entries_read_as_time_ship_and_text_in_the_prompt(client: Client, plots: Path) -> None:
    from debrief_calc.formats.rep import parse_rep

    narratives = list(parse_rep((DATA / "rep" / "valid_narrative.rep").read_text(encoding="utf-8")).features)
    await ok(client, "debrief_create_plot", filename="log.plot.json", features=narratives)
    prompt = (await ok(client, "generate_prompt", task="narrate-timeline", target="log.plot.json"))["promptForHostLLM"]
    assert "at 1995-12-12T05:00:00Z, logged by NELSON: COMEX SERIAL 16D" in prompt
    assert "points=1" not in prompt and "..?" not in prompt


async def test_renaming_a_ship_carries_its_narrative_entries_along(client: Client, plots: Path) -> None:
    """Narrative entries find their ship by name: renaming NELSON to F28 re-points them, in the same
    undoable change, so the picture still places them."""
    from debrief_calc.formats.rep import parse_rep

    def rep(name: str) -> list[dict[str, Any]]:
        return list(parse_rep((DATA / "rep" / name).read_text(encoding="utf-8"), source_name=name).features)

    await ok(
        client,
        "debrief_create_plot",
        filename="day1.plot.json",
        features=rep("valid_boat1.rep") + rep("valid_narrative.rep"),
    )
    nelson_entries = [f["id"] for f in rep("valid_narrative.rep") if f["properties"]["track"] == "NELSON"]
    out = await ok(
        client, "debrief_set_properties", filename="day1.plot.json", ids=["rep-nelson"], properties={"name": "F28"}
    )
    assert out["updated_ids"] == ["rep-nelson"] and sorted(out["relinked_ids"]) == sorted(nelson_entries)
    assert "narrative entr" in out["message"]
    data = plot_json(plots, "day1.plot.json")
    tracks = {f["properties"].get("track") for f in data["features"] if f["properties"].get("track")}
    assert tracks == {"F28", "COLLINGWOOD"}  # COLLINGWOOD's entries keep their ship
    await ok(client, "debrief_undo", filename="day1.plot.json")
    assert {f["properties"].get("track") for f in plot_json(plots, "day1.plot.json")["features"]} >= {"NELSON"}


async def test_a_window_keeps_narrative_entries_of_its_period_only(client: Client, plots: Path) -> None:
    from debrief_calc.formats.rep import parse_rep

    log = list(parse_rep((DATA / "rep" / "valid_narrative.rep").read_text(encoding="utf-8")).features)
    await ok(client, "debrief_create_plot", filename="log.plot.json", features=log)
    inside = await ok(
        client,
        "debrief_get_features",
        filename="log.plot.json",
        time_start="1995-12-12T10:00:00Z",
        time_end="1995-12-12T11:00:00Z",
    )
    times = [f["time_start"] for f in inside["features"] if f["kind"] == "annotation"]
    assert times and all("1995-12-12T10:00" <= t <= "1995-12-12T11:00" for t in times)  # events, not zones in force
