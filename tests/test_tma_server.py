"""``tma-solve``, ``bearing-residuals`` and the stacked dots on debrief-calc-mcp, through the real
protocol in process in both eras, and over stdio through the real ``debrief-calc-mcp`` console
script: the SATC tracks imported from the workspace, the cuts given inline (as import-rep will
give them), the solution kept and read back, the residuals drawn above ownship's course."""

from __future__ import annotations

import base64
import io
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import numpy as np
import pytest
from mcp import Client, StdioServerParameters
from PIL import Image

from debrief_calc.calc.server import build_server
from llmem.core.config import ServerConfig
from tests._sensors import SENSORS, satc_sensor
from tests.conftest import MODES, call, console_script, subprocess_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(workspace: Path) -> Path:
    for name in ("BlueTrack.rep", "RedTrack.rep"):
        shutil.copy(SENSORS / name, workspace / name)
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", ws)), mode=request.param) as c:
        yield c


async def imported(client: Client, name: str) -> dict[str, str]:
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": name})
    assert not err, out
    return {"ref": out["stored"]["ref"]}


def png_of(result: Any) -> Image.Image:
    (image,) = [b for b in result.content if isinstance(b, types.ImageContent)]
    return Image.open(io.BytesIO(base64.b64decode(image.data)))


async def test_tma_solve_answers_and_keeps_its_solution(client: Client) -> None:
    own = await imported(client, "BlueTrack.rep")
    err, out = await call(client, "run_tool", tool="tma-solve", features=[satc_sensor(1, 11), own])
    assert not err, out
    result = out["features"][0]
    p = result["properties"]
    assert p["range_observability"] == "observable"
    assert round(p["target_legs"][0]["course"]) in (269, 270) and round(p["target_legs"][0]["speed_kn"], 1) == 9.0
    assert p["provenance"]["tool"] == "tma-solve"
    (command,) = out["commands"]
    assert command["command"] == "addFeatures" and command["payload"]["ref"].startswith("debrief-calc:runs/")
    err, stored = await call(client, "get_result", ref=command["payload"]["ref"])
    assert not err, stored
    (track,) = stored["features"]
    assert track["properties"]["trackType"] == "tma-solution" and track["id"] == p["solution_track_id"]


async def test_the_unobservable_case_says_so_over_the_protocol(client: Client) -> None:
    own = await imported(client, "BlueTrack.rep")
    err, out = await call(
        client, "run_tool", tool="tma-solve", features=[satc_sensor(), own], parameters={"cuts": ["5-10"]}
    )
    assert not err, out
    p = out["features"][0]["properties"]
    assert p["range_observability"] == "not observable" and "advice" in p and out["commands"] == []
    assert any("not observable" in w for w in out["warnings"])


async def test_a_window_cuts_the_cuts(client: Client) -> None:
    """run_tool's window cuts the sensor with the tracks (the suite's one time module): 12:19-12:28:30
    holds cuts 5-10, all on ownship's 355° leg, so the range is not observable."""
    own = await imported(client, "BlueTrack.rep")
    err, out = await call(
        client,
        "run_tool",
        tool="tma-solve",
        features=[satc_sensor(), own],
        time_start="2010-01-12T12:19:00Z",
        time_end="2010-01-12T12:28:30Z",
    )
    assert not err, out
    p = out["features"][0]["properties"]
    assert p["cut_count"] == 6 and p["period"] == {"start": "2010-01-12T12:19:14Z", "end": "2010-01-12T12:28:14Z"}
    assert p["range_observability"] == "not observable"
    assert out["window"]["start"] == "2010-01-12T12:19:00Z" and out["window"]["source"] == "asked"


async def test_bearing_residuals_against_the_truth(client: Client) -> None:
    own, truth = await imported(client, "BlueTrack.rep"), await imported(client, "RedTrack.rep")
    err, out = await call(client, "run_tool", tool="bearing-residuals", features=[satc_sensor(), truth, own])
    assert not err, out
    p = out["features"][0]["properties"]
    assert p["rms_error"] == pytest.approx(0.1225, abs=5e-4) and p["verdict"].startswith("fits")


async def test_stacked_dots_above_ownships_course(client: Client) -> None:
    own, truth = await imported(client, "BlueTrack.rep"), await imported(client, "RedTrack.rep")
    result = await client.call_tool("render_series", {"features": [satc_sensor(), truth, own]})
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert answer is not None
    assert [p["quantity"] for p in answer["panels"]] == ["error", "ownship_course"]
    assert answer["samples"] == 38 and answer["residuals"]["rms_error"] == pytest.approx(0.1225, abs=5e-4)
    assert answer["source"]["kind"] == "bearing-residuals run"
    picture = png_of(result)
    rgb = np.asarray(picture.convert("RGB")).astype(int)
    top = rgb[40:200, 75:880]  # the error panel: a blue dot per cut
    blue = (top[..., 2] > 150) & (top[..., 0] < 80) & (top[..., 1] < 150)
    assert blue.sum() > 38 * 10
    err, stored = await call(client, "get_result", ref=answer["source"]["ref"])  # the residuals drawn, kept
    assert not err and stored["features"][0]["properties"]["series"]["error"]
    again = await client.call_tool("render_series", {"features": [{"ref": answer["source"]["ref"]}]})
    assert not again.is_error and again.structured_content is not None
    assert again.structured_content["source"]["kind"] == "stored result"
    assert again.structured_content["panels"] == answer["panels"]


async def test_the_tools_are_listed_and_described_for_sensors(client: Client) -> None:
    err, out = await call(client, "list_tools", kinds=["sensor"])
    assert not err
    assert {"tma-solve", "bearing-residuals"} <= {t["name"] for t in out["tools"]}
    err, out = await call(client, "describe_tool", name="tma-solve")
    assert not err
    names = [p["name"] for p in out["parameters"]]
    assert {"cuts", "target_turns", "max_turns", "reference_time", "bearing_sd", "confidence"} <= set(names)


async def test_the_guide_tells_the_submarine_question(client: Client) -> None:
    prompt = await client.get_prompt("tool-descriptions")
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    for words in ("tma-solve", "bearing-residuals", "not observable", "stacked dots"):
        assert words in text


def test_over_stdio_through_the_real_console_script(ws: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(
            command=console_script("debrief-calc-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
        )
        with anyio.fail_after(120):
            async with Client(params) as c:  # type: ignore[arg-type]
                own = await imported(c, "BlueTrack.rep")
                err, out = await call(c, "run_tool", tool="tma-solve", features=[satc_sensor(), own])
                assert not err, out
                p = out["features"][0]["properties"]
                assert len(p["turns"]) == 1 and abs(p["target_legs"][1]["course"] - 224.6) < 0.3
                track = {"ref": out["commands"][0]["payload"]["ref"]}
                result = await c.call_tool("render_series", {"features": [satc_sensor(), track, own]})
                assert not result.is_error, result.structured_content
                assert result.structured_content is not None
                assert result.structured_content["residuals"]["verdict"].startswith("fits")

    anyio.run(main)
