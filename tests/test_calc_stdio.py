"""debrief-calc-mcp as clients launch it: the console script over real stdio."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests._stdio import exchange
from tests.conftest import DATA, MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def calc_ws(workspace: Path) -> Path:
    shutil.copy(DATA / "rep" / "valid_boat1.rep", workspace)
    shutil.copy(DATA / "plots" / "large-sample.plot.json", workspace)
    return workspace


def test_stdout_carries_only_json_rpc(calc_ws: Path) -> None:
    def rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})})

    lines = [
        rpc(
            1,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        ),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        rpc(2, "tools/list"),
        rpc(
            3,
            "tools/call",
            {"name": "run_tool", "arguments": {"tool": "import-rep", "parameters": {"path": "valid_boat1.rep"}}},
        ),
        rpc(4, "tools/call", {"name": "run_tool", "arguments": {"tool": "nope"}}),
        rpc(5, "tools/call", {"name": "missing", "arguments": {}}),
        rpc(6, "prompts/get", {"name": "tool-descriptions"}),
    ]
    by_id, _ = exchange("debrief-calc-mcp", calc_ws, lines, {1, 2, 3, 4, 5, 6})
    assert by_id[3]["result"]["structuredContent"]["success"] is True
    assert by_id[4]["result"]["isError"] is True
    assert by_id[4]["result"]["structuredContent"]["error"]["code"] == "TOOL_NOT_FOUND"
    assert by_id[5]["error"]["code"] == -32602
    assert "run_tool" in by_id[6]["result"]["messages"][0]["content"]["text"]


@pytest.mark.parametrize("mode", MODES)
async def test_console_script_in_both_eras(calc_ws: Path, mode: str) -> None:
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(calc_ws)], env=subprocess_env()
    )
    with anyio.fail_after(60):
        async with Client(params, mode=mode) as c:  # type: ignore[arg-type]
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"list_tools", "describe_tool", "run_tool"} <= names
            r = await c.call_tool("run_tool", {"tool": "area-summary", "bounds": [-6.5, 35.5, -3.0, 36.5]})
            assert not r.is_error, r.structured_content
            assert (
                r.structured_content and r.structured_content["features"][0]["properties"]["kind"] == "analysis-result"
            )
