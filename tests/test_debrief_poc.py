"""The seed's proof of concept, "delete the selected feature", across the two real console scripts.

get the selection (debrief-state-mcp) → run_tool delete-features (debrief-calc-mcp) →
debrief_apply_command with its command (debrief-state-mcp) → the feature is gone from the file
and the selection no longer lists it. Then the same with a large result passed by reference.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import DATA, MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_servers(workspace: Path, mode: str) -> AsyncIterator[tuple[Client, Client]]:
    def params(script: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=console_script(script), args=["--workspace", str(workspace)], env=subprocess_env()
        )

    async with AsyncExitStack() as stack:
        state = await stack.enter_async_context(Client(params("debrief-state-mcp"), mode=mode))  # type: ignore[arg-type]
        calc = await stack.enter_async_context(Client(params("debrief-calc-mcp"), mode=mode))  # type: ignore[arg-type]
        yield state, calc


async def sc(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.structured_content)
    assert result.structured_content is not None
    return result.structured_content


@pytest.fixture
def plot_ws(workspace: Path) -> Path:
    shutil.copy(DATA / "plots" / "large-sample.plot.json", workspace / "exercise.plot.json")
    shutil.copy(DATA / "rep" / "valid_boat1.rep", workspace / "boat1.rep")
    return workspace


@pytest.mark.parametrize("mode", MODES)
async def test_delete_the_selected_feature(plot_ws: Path, mode: str) -> None:
    file = plot_ws / "exercise.plot.json"
    before = json.loads(file.read_text(encoding="utf-8"))
    victim = next(f for f in before["features"] if f["properties"].get("dataType") == "reference-point")
    with anyio.fail_after(90):
        async with two_servers(plot_ws, mode) as (state, calc):
            await sc(state, "debrief_open_plot", {"filename": "exercise.plot.json"})
            await sc(state, "debrief_set_selection", {"selectedIds": [victim["id"]]})
            selection = await sc(state, "debrief_get_selection", {})
            assert selection["selectedIds"] == [str(victim["id"])]
            run = await sc(
                calc,
                "run_tool",
                {"tool": "delete-features", "plot": {"filename": "exercise.plot.json", "selection": True}},
            )
            assert run["success"] is True
            command = run["commands"][0]
            assert command == {"command": "deleteFeatures", "payload": {"ids": [str(victim["id"])]}}
            applied = await sc(state, "debrief_apply_command", {"command": command})
            assert applied["deleted_ids"] == [str(victim["id"])]
            selection = await sc(state, "debrief_get_selection", {})
            assert selection["selectedIds"] == []
    after = json.loads(file.read_text(encoding="utf-8"))
    assert str(victim["id"]) not in {str(f["id"]) for f in after["features"]}
    assert len(after["features"]) == len(before["features"]) - 1
    # nothing else moved: every other feature is value-equal, in order
    assert [f for f in before["features"] if f["id"] != victim["id"]] == after["features"]


async def test_a_large_calc_result_applied_by_reference(plot_ws: Path) -> None:
    with anyio.fail_after(90):
        async with two_servers(plot_ws, "legacy") as (state, calc):
            run = await sc(calc, "run_tool", {"tool": "import-rep", "parameters": {"path": "boat1.rep"}})
            command = run["commands"][0]
            assert "ref" in command["payload"]  # too large to pass through the model's context
            applied = await sc(state, "debrief_apply_command", {"command": command, "filename": "exercise.plot.json"})
            assert applied["added_ids"]
            feats = await sc(
                state, "debrief_get_features", {"filename": "exercise.plot.json", "ids": applied["added_ids"]}
            )
            track = feats["features"][0]
            assert track["kind"] == "track" and track["point_count"] == 402
            # and the calc server can analyse it straight from the plot
            stats = await sc(
                calc,
                "run_tool",
                {"tool": "track-stats", "plot": {"filename": "exercise.plot.json", "feature_ids": [track["id"]]}},
            )
            assert stats["features"][0]["properties"]["statistics"]["point_count"] == 402


async def err_of(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error and result.structured_content is not None, (tool, result)
    return dict(result.structured_content["error"])


async def test_scenarios_2_to_5_across_both_servers(plot_ws: Path) -> None:
    file = plot_ws / "exercise.plot.json"
    shutil.copy(file, plot_ws / "mission2.plot.json")
    doc = json.loads(file.read_text(encoding="utf-8"))
    points = [f for f in doc["features"] if f["properties"].get("dataType") == "reference-point"][:2]
    ids = [str(p["id"]) for p in points]
    with anyio.fail_after(120):
        async with two_servers(plot_ws, "legacy") as (state, calc):
            await sc(state, "debrief_open_plot", {"filename": "exercise.plot.json"})
            by_ref = {"tool": "delete-features", "plot": {"filename": "exercise.plot.json", "selection": True}}

            # 2: nothing selected — a clear error from the calc server, nothing changes
            before = file.read_bytes()
            assert (await sc(state, "debrief_get_selection", {}))["selectedIds"] == []
            error = await err_of(calc, "run_tool", by_ref)
            assert error["code"] == "INVALID_CONTEXT" and "nothing is selected" in error["message"]
            assert file.read_bytes() == before

            # 3: several selected — all of them deleted, the selection emptied
            await sc(state, "debrief_set_selection", {"selectedIds": ids})
            run = await sc(calc, "run_tool", by_ref)
            applied = await sc(state, "debrief_apply_command", {"command": run["commands"][0]})
            assert sorted(applied["deleted_ids"]) == sorted(ids)
            assert (await sc(state, "debrief_get_selection", {}))["selectedIds"] == []

            # 4: several plots open — MULTIPLE_PLOTS, then the retry with the filename works
            await sc(state, "debrief_open_plot", {"filename": "mission2.plot.json"})
            error = await err_of(state, "debrief_get_selection", {})
            assert error["code"] == "MULTIPLE_PLOTS" and error["details"]["rpc_code"] == -32001
            assert {p["filename"] for p in error["details"]["available_plots"]} == {
                "exercise.plot.json",
                "mission2.plot.json",
            }
            await sc(state, "debrief_set_selection", {"selectedIds": [ids[0]], "filename": "mission2.plot.json"})
            run = await sc(calc, "run_tool", {**by_ref, "plot": {"filename": "mission2.plot.json", "selection": True}})
            await sc(state, "debrief_apply_command", {"command": run["commands"][0], "filename": "mission2.plot.json"})
            mission2 = json.loads((plot_ws / "mission2.plot.json").read_text(encoding="utf-8"))
            assert ids[0] not in {str(f["id"]) for f in mission2["features"]}

            # 5: the plot removed, then corrupted, underneath both servers — clear errors, both keep serving
            (plot_ws / "mission2.plot.json").unlink()
            error = await err_of(state, "debrief_get_selection", {"filename": "mission2.plot.json"})
            assert error["code"] == "PLOT_NOT_FOUND" and error["details"]["rpc_code"] == -32002
            error = await err_of(calc, "run_tool", {**by_ref, "plot": {"filename": "mission2.plot.json"}})
            assert error["code"] == "PLOT_NOT_FOUND"
            file.write_text('{"type": "FeatureCollection", "features": [', encoding="utf-8")
            error = await err_of(state, "debrief_get_features", {"filename": "exercise.plot.json"})
            assert error["code"] == "PLOT_UNREADABLE" and "exercise.plot.json" in error["message"]
            error = await err_of(calc, "run_tool", by_ref)
            assert error["code"] == "PLOT_UNREADABLE"
            assert (await sc(state, "debrief_list_plots", {}))["success"] is True
            assert (await sc(calc, "list_tools", {}))["tools"]
