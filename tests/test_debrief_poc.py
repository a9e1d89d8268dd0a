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
