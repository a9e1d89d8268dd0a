"""Sensor and plot imports through the real protocol: ``run_tool`` in both eras in process (a
``.dsf`` hung off a track in a plot, by name; a ``.dpf``), and over stdio through the real
``debrief-calc-mcp`` console script."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from debrief_calc.calc.server import build_server
from llmem.core.config import ServerConfig
from tests.conftest import DATA, MODES, call, console_script, subprocess_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def sensor_ws(workspace: Path) -> Path:
    for name in ("BlueTrack.rep", "RedTrack.rep", "L1_OwnshipSensor.dsf", "BlueSensor_sparse.rep"):
        shutil.copy(DATA / "sensors" / name, workspace / name)
    shutil.copy(DATA / "dpf" / "constructed_sensors_shapes.dpf", workspace / "plot.dpf")
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, sensor_ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", sensor_ws)), mode=request.param) as c:
        yield c


def _sensors(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        f for f in answer["features"] if f.get("kind") == "sensor" or f.get("properties", {}).get("kind") == "sensor"
    ]


async def test_a_dsf_hangs_off_a_track_of_a_plot_by_name(client: Client, sensor_ws: Path) -> None:
    import debrief_calc as dc

    ws = dc.Workspace(sensor_ws)
    ref = ws.run_tool("import-rep", parameters={"path": "BlueTrack.rep"}).stored["ref"]
    ws.create_plot("exercise.plot.json", features=[{"ref": ref}])
    failed, answer = await call(
        client,
        "run_tool",
        tool="import-rep",
        plot={"filename": "exercise.plot.json"},
        parameters={"path": "L1_OwnshipSensor.dsf"},
    )
    assert failed and answer["error"]["details"]["field"] == "host"
    assert "SENSOR (rep-sensor)" in answer["error"]["message"]  # the tracks the plot holds
    failed, answer = await call(
        client,
        "run_tool",
        tool="import-rep",
        plot={"filename": "exercise.plot.json"},
        parameters={"path": "L1_OwnshipSensor.dsf", "host": "SENSOR"},
    )
    assert not failed, answer
    (sensor,) = _sensors(answer)
    assert sensor["properties"]["host"] == "rep-sensor" and len(sensor["properties"]["timestamps"]) == 11
    assert answer["report"]["cut_count"] == 11 and answer["commands"][0]["command"] == "addFeatures"
    failed, answer = await call(
        client,
        "run_tool",
        tool="import-rep",
        plot={"filename": "exercise.plot.json"},
        parameters={"path": "L1_OwnshipSensor.dsf", "host": "SENSOR"},
        time_start="2010-01-12T12:20:00Z",
    )
    assert failed and "reads whole files" in answer["error"]["message"]


async def test_two_files_in_one_call_and_a_dpf(client: Client) -> None:
    failed, answer = await call(
        client, "run_tool", tool="import-rep", parameters={"paths": ["BlueTrack.rep", "BlueSensor_sparse.rep"]}
    )
    assert not failed, answer
    assert answer["report"]["sensor_count"] == 1 and answer["report"]["cut_count"] == 38
    assert [f["source"] for f in answer["report"]["files"]] == ["BlueTrack.rep", "BlueSensor_sparse.rep"]
    failed, answer = await call(client, "run_tool", tool="import-dpf", parameters={"path": "plot.dpf"})
    assert not failed, answer
    assert answer["report"]["sensor_count"] == 1 and answer["report"]["not_converted"]
    assert answer["stored"]["ref"].startswith("debrief-calc:runs/")
    failed, answer = await call(client, "describe_tool", name="import-rep")
    assert {p["name"] for p in answer["parameters"]} >= {"path", "paths", "text", "host"}


async def test_the_real_console_script_imports_a_dsf_over_stdio(sensor_ws: Path) -> None:
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(sensor_ws)], env=subprocess_env()
    )
    with anyio.fail_after(60):
        async with Client(params) as c:  # type: ignore[arg-type]
            r = await c.call_tool(
                "run_tool",
                {
                    "tool": "import-rep",
                    "parameters": {"paths": ["BlueTrack.rep", "L1_OwnshipSensor.dsf"], "host": "SENSOR"},
                },
            )
            assert not r.is_error, r.structured_content
            answer = r.structured_content
            assert answer is not None and answer["report"]["cut_count"] == 11
            r = await c.call_tool("run_tool", {"tool": "import-dpf", "parameters": {"path": "plot.dpf"}})
            assert not r.is_error and r.structured_content and r.structured_content["report"]["cut_count"] == 4
