"""debrief-state-mcp as clients launch it: the installed console script over real stdio."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests._stdio import exchange
from tests.conftest import MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent / "data" / "plots"
LARGE = "large-sample.plot.json"
SAMPLE = "sample.plot.json"


@pytest.fixture
def plots(workspace: Path) -> Path:
    for name in (LARGE, SAMPLE):
        shutil.copy(DATA / name, workspace / name)
    shutil.copy(DATA / SAMPLE, workspace / "mission1.plot.json")
    shutil.copy(DATA / SAMPLE, workspace / "mission2.plot.json")
    return workspace


def params(workspace: Path, *, module: bool = False) -> StdioServerParameters:
    if module:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "debrief_calc.state", "--workspace", str(workspace)],
            env=subprocess_env(),
        )
    return StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )


def rpc(id_: int | None, method: str, params_: dict[str, Any] | None = None) -> str:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        msg["id"] = id_
    if params_ is not None:
        msg["params"] = params_
    return json.dumps(msg)


def tool(id_: int, name: str, **arguments: Any) -> str:
    return rpc(id_, "tools/call", {"name": name, "arguments": arguments})


def test_stdout_carries_only_json_rpc(plots: Path) -> None:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    lines = [
        rpc(1, "initialize", init),
        rpc(None, "notifications/initialized"),
        rpc(2, "tools/list"),
        tool(3, "debrief_open_plot", filename=LARGE),
        tool(4, "debrief_get_selection", filename=SAMPLE),  # requests run concurrently: no order between them
        tool(5, "no_such_tool"),
        tool(6, "debrief_get_features", filename="../../etc/passwd.plot.json"),
        rpc(7, "prompts/get", {"name": "tool-descriptions"}),
        "this line is not JSON",
        tool(8, "debrief_render_plot", filename=LARGE, width=320, height=240),
        rpc(9, "resources/read", {"uri": f"plot://{LARGE}/time"}),
        tool(10, "debrief_apply_command", filename=LARGE, command={"command": "explode", "payload": 1}),
        tool(11, "debrief_list_plots"),
    ]
    by_id, stderr = exchange("debrief-state-mcp", plots, lines, set(range(1, 12)))
    assert len(by_id[2]["result"]["tools"]) == 19
    assert by_id[3]["result"]["structuredContent"]["open_plots"] == [LARGE]
    assert by_id[4]["result"]["structuredContent"]["selectedIds"] == []
    assert by_id[5]["error"]["code"] == -32602
    bad = by_id[6]["result"]
    assert bad["isError"] is True and bad["structuredContent"]["error"]["code"] == "INVALID_FILENAME"
    image = next(c for c in by_id[8]["result"]["content"] if c["type"] == "image")
    assert image["mimeType"] == "image/png" and base64.b64decode(image["data"]).startswith(b"\x89PNG")
    assert json.loads(by_id[9]["result"]["contents"][0]["text"])["timeState"]["end"] == "2024-11-15T10:17:00.000Z"
    assert by_id[10]["result"]["structuredContent"]["error"]["code"] == "INVALID_COMMAND"
    assert by_id[11]["result"]["isError"] is False
    assert '"tool": "debrief_get_selection"' in stderr  # one structured log line per call, on stderr


@pytest.mark.parametrize("mode", MODES)
async def test_console_script_round_trip(plots: Path, mode: str) -> None:
    original = (plots / LARGE).read_bytes()
    with anyio.fail_after(60):
        async with Client(params(plots), mode=mode) as c:  # type: ignore[arg-type]
            r = await c.call_tool("debrief_open_plot", {"filename": LARGE})
            rev = r.structured_content["revision"]  # type: ignore[index]
            r = await c.call_tool("debrief_set_selection", {"selectedIds": ["z-1", "z-2"]})
            assert r.structured_content and r.structured_content["selectedIds"] == ["z-1", "z-2"]
            sel = (await c.call_tool("debrief_get_selection", {})).structured_content
            assert sel is not None
            command = {"command": "deleteFeatures", "payload": sel["selectedIds"]}
            r = await c.call_tool("debrief_apply_command", {"command": command, "expected_revision": rev})
            assert not r.is_error and r.structured_content and r.structured_content["deleted_ids"] == ["z-1", "z-2"]
            r = await c.call_tool("debrief_render_plot", {"width": 400, "height": 300})
            assert any(isinstance(b, types.ImageContent) for b in r.content)
            r = await c.call_tool("debrief_undo", {})
            assert r.structured_content and r.structured_content["selectedIds"] == ["z-1", "z-2"]
            r = await c.call_tool("debrief_undo", {})
            assert not r.is_error
            with pytest.raises(MCPError):
                await c.call_tool("missing_tool", {})
    assert (plots / LARGE).read_bytes() == original


async def test_python_dash_m_serves_too(plots: Path) -> None:
    with anyio.fail_after(60):
        async with Client(params(plots, module=True), mode="legacy") as c:
            r = await c.call_tool("debrief_get_time", {"filename": LARGE})
            assert r.structured_content and r.structured_content["timeState"]["start"].startswith("2024-11-14")


async def test_seed_scenarios_2_to_5_over_stdio(plots: Path) -> None:
    async def call(c: Client, name: str, **args: Any) -> tuple[bool, dict[str, Any]]:
        r = await c.call_tool(name, args)
        assert r.structured_content is not None
        return bool(r.is_error), r.structured_content

    with anyio.fail_after(90):
        async with Client(params(plots), mode="legacy") as c:
            await call(c, "debrief_open_plot", filename=SAMPLE)
            # 2: nothing selected — the host sees [] and changes nothing
            before = (plots / SAMPLE).read_bytes()
            err, out = await call(c, "debrief_get_selection")
            assert not err and out["selectedIds"] == []
            assert (plots / SAMPLE).read_bytes() == before
            # 3: several selected — all of them deleted in one command
            await call(c, "debrief_set_selection", selectedIds=["london_city_001", "berlin_city_003"])
            _, out = await call(c, "debrief_get_selection")
            err, done = await call(
                c, "debrief_apply_command", command={"command": "deleteFeatures", "payload": out["selectedIds"]}
            )
            assert not err and len(done["deleted_ids"]) == 2
            # 4: several plots open — MULTIPLE_PLOTS, then the retry with the filename
            await call(c, "debrief_open_plot", filename="mission1.plot.json")
            await call(c, "debrief_open_plot", filename="mission2.plot.json")
            err, out = await call(c, "debrief_get_selection")
            assert err and out["error"]["code"] == "MULTIPLE_PLOTS" and out["error"]["details"]["rpc_code"] == -32001
            choice = out["error"]["details"]["available_plots"][1]["filename"]
            err, out = await call(c, "debrief_get_selection", filename=choice)
            assert not err and out["filename"] == "mission1.plot.json"
            # 5: the plot removed, then corrupted underneath the server — clear errors, still serving
            (plots / "mission2.plot.json").unlink()
            (plots / SAMPLE).write_bytes(b"{ not json")
            err, out = await call(c, "debrief_get_selection", filename=SAMPLE)
            assert err and out["error"]["code"] == "PLOT_UNREADABLE" and SAMPLE in out["error"]["message"]
            err, out = await call(c, "debrief_get_selection", filename="mission2.plot.json")
            assert (
                err
                and out["error"]["code"] == "PLOT_NOT_FOUND"
                and out["error"]["details"]["closed"] == ["mission2.plot.json"]
            )
            _, listing = await call(c, "debrief_list_plots")
            assert [p["filename"] for p in listing["open_plots"]] == [SAMPLE, "mission1.plot.json"]
            err, out = await call(c, "debrief_get_time", filename=LARGE)
            assert not err


async def test_notifications_over_stdio_in_both_eras(plots: Path) -> None:
    seen: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            got.set()

    uri = f"plot://{SAMPLE}/selection"
    with anyio.fail_after(60):
        async with Client(params(plots), mode="legacy", message_handler=on_message) as c:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await c.subscribe_resource(uri)
            await c.call_tool("debrief_set_selection", {"filename": SAMPLE, "selectedIds": ["paris_city_002"]})
            await got.wait()
        assert seen == [uri]
        async with Client(params(plots)) as c:
            assert c.protocol_version == "2026-07-28"
            async with c.listen(resource_subscriptions=[uri]) as sub:
                await c.call_tool("debrief_set_selection", {"filename": SAMPLE, "selectedIds": []})
                async for event in sub:
                    assert getattr(event, "uri", None) == uri
                    break


def test_help_version_and_bad_options() -> None:
    exe = console_script("debrief-state-mcp")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "debrief-state-mcp" in out.stdout
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--workspace" in out.stdout and "plot" in out.stdout
    out = subprocess.run([exe, "--workspace", "/no/such/folder"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == "" and "--workspace" in out.stderr
